package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
)

type handBackJSON struct {
	ID         string     `json:"id"`
	SlotID     string     `json:"slot_id"`
	Reason     string     `json:"reason"`
	Note       string     `json:"note"`
	CreatedAt  time.Time  `json:"created_at"`
	State      string     `json:"state"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}

func handBackOut(h nextup.HandBack) handBackJSON {
	return handBackJSON{ID: h.ID, SlotID: h.SlotID, Reason: h.Reason, Note: h.Note, CreatedAt: h.CreatedAt, State: string(h.State), ResolvedAt: h.ResolvedAt}
}

func (s *Server) listHandBacks(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	state := nextup.HandBackState(r.URL.Query().Get("state"))
	switch state {
	case "", nextup.HandBackOpen, nextup.HandBackResolved:
	default:
		s.writeError(w, r, invalidf("state", "must be open or resolved"))
		return
	}
	hbs, err := s.Svc.ListHandBacks(r.Context(), b.ID, state)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		HandBacks []handBackJSON `json:"handbacks"`
	}{HandBacks: []handBackJSON{}}
	for _, h := range hbs {
		out.HandBacks = append(out.HandBacks, handBackOut(h))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) resolveHandBack(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	h, err := s.Svc.ResolveHandBack(r.Context(), b.ID, r.PathValue("hid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, handBackOut(h))
}
