package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

func (s *Server) join(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Name         string             `json:"name"`
		Email        string             `json:"email"`
		Phone        string             `json:"phone"`
		Channel      string             `json:"channel"`
		Service      string             `json:"service"`
		EventID      string             `json:"event_id"`
		PartySize    *int               `json:"party_size"`
		Earliest     string             `json:"earliest"`
		Latest       string             `json:"latest"`
		Staff        string             `json:"staff"`
		Availability []availabilityJSON `json:"availability"`
		Priority     bool               `json:"priority"`
		Source       string             `json:"source"`
		Notify       bool               `json:"notify"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Omitted is a party of one; zero is not a party (the use case reads
	// 0 as "omitted", so it is refused here).
	if in.PartySize != nil && *in.PartySize < 1 {
		s.writeError(w, r, invalidf("party_size", "must be between 1 and 1000"))
		return
	}
	loc, err := b.Location()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := waitlist.JoinParams{Name: in.Name, Email: in.Email, Phone: in.Phone, Channel: nextup.Channel(in.Channel),
		Service: in.Service, EventID: in.EventID, PartySize: deref(in.PartySize), Staff: in.Staff, Priority: in.Priority, Source: in.Source,
		Notify: in.Notify}
	if p.Earliest, err = nextup.ParseBound(in.Earliest, loc, false); err != nil {
		s.writeError(w, r, invalidf("earliest", err.Error()))
		return
	}
	if p.Latest, err = nextup.ParseBound(in.Latest, loc, true); err != nil {
		s.writeError(w, r, invalidf("latest", err.Error()))
		return
	}
	if p.Availability, err = availabilityIn(in.Availability); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.Svc.Join(r.Context(), b.ID, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.Svc.GetEntry(r.Context(), b.ID, res.Entry.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := map[string]any{"id": res.Entry.ID, "state": res.Entry.State, "joined_at": res.Entry.JoinedAt,
		"status_url": s.Svc.StatusURL(res.StatusToken)}
	addPosition(out, b.Rules, v.Position)
	writeJSON(w, http.StatusCreated, out)
}

// addPosition tells a customer their place as the business's rules allow:
// exact, a band, or nothing.
func addPosition(out map[string]any, rules nextup.Rules, position int) {
	if position <= 0 {
		return
	}
	switch rules.PositionVisibility {
	case nextup.PositionExact:
		out["position"] = position
	case nextup.PositionBand:
		out["band"] = band(position)
	}
}

func band(position int) string {
	switch {
	case position <= 3:
		return "next few"
	case position <= 10:
		return "top 10"
	case position <= 25:
		return "top 25"
	}
	return "further back"
}

func (s *Server) listEntries(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	q := r.URL.Query()
	f := nextup.EntryFilter{BusinessID: b.ID, Service: q.Get("service"), EventID: q.Get("event_id"), State: nextup.EntryState(q.Get("state"))}
	switch f.State {
	case "", nextup.EntryWaiting, nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired:
	default:
		s.writeError(w, r, invalidf("state", "must be waiting, offered, booked, left or expired"))
		return
	}
	entries, err := s.Svc.ListEntries(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The list is in fair order; a waiting entry's position is its place
	// among the waiting entries of its own service or event.
	next := map[string]int{}
	out := struct {
		Entries []entryJSON `json:"entries"`
	}{Entries: []entryJSON{}}
	for _, e := range entries {
		pos := 0
		if e.State == nextup.EntryWaiting {
			queue := "service:" + e.Service
			if e.EventID != "" {
				queue = "event:" + e.EventID
			}
			next[queue]++
			pos = next[queue]
		}
		out.Entries = append(out.Entries, entryOut(e, pos, nil))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getEntry(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	v, err := s.Svc.GetEntry(r.Context(), b.ID, r.PathValue("eid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, entryOut(v.Entry, v.Position, v.Offer))
}

func (s *Server) patchEntry(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Priority     *bool               `json:"priority"`
		Earliest     *string             `json:"earliest"`
		Latest       *string             `json:"latest"`
		Staff        *string             `json:"staff"`
		PartySize    *int                `json:"party_size"`
		Availability *[]availabilityJSON `json:"availability"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	loc, err := b.Location()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := waitlist.EntryPatch{Priority: in.Priority, Staff: in.Staff, PartySize: in.PartySize}
	for _, f := range []struct {
		name   string
		in     *string
		out    **time.Time
		latest bool
	}{{"earliest", in.Earliest, &p.Earliest, false}, {"latest", in.Latest, &p.Latest, true}} {
		if f.in == nil {
			continue
		}
		t, err := nextup.ParseBound(*f.in, loc, f.latest)
		if err != nil {
			s.writeError(w, r, invalidf(f.name, err.Error()))
			return
		}
		*f.out = &t
	}
	if in.Availability != nil {
		av, err := availabilityIn(*in.Availability)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		p.Availability = &av
	}
	if _, _, err := s.Svc.UpdateEntry(r.Context(), b.ID, r.PathValue("eid"), p); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.getEntry(w, r, b)
}

func (s *Server) leaveEntry(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	if _, _, err := s.Svc.Leave(r.Context(), b.ID, r.PathValue("eid"), nextup.ActorStaff); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"state": string(nextup.EntryLeft)})
}

// statusView is the customer's own view by the secret in their status link.
func (s *Server) statusView(w http.ResponseWriter, r *http.Request) {
	v, err := s.Svc.EntryByStatusToken(r.Context(), r.PathValue("token"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b, err := s.Svc.GetBusiness(r.Context(), v.Entry.BusinessID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := map[string]any{"state": v.Entry.State}
	addPosition(out, b.Rules, v.Position)
	if o := v.Offer; o != nil {
		// API.md: {"id","expires_at","seconds_left","claim_url"}, and the
		// offer's state and slot. The claim link is the one its message
		// carries; an offer quiet hours hold back has none yet.
		left := int64(0) // the claim link's countdown: pending offers have not started theirs
		if o.State == nextup.OfferOffered {
			left = max(0, int64(o.ExpiresAt.Sub(s.now())/time.Second))
		}
		offer := map[string]any{"id": o.ID, "state": o.State, "slot_id": o.SlotID, "expires_at": o.ExpiresAt, "seconds_left": left}
		msgs, err := s.Svc.ListMessages(r.Context(), nextup.MessageFilter{BusinessID: b.ID, OfferID: o.ID})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		for _, m := range msgs {
			if m.Kind == nextup.MessageOffer && m.ClaimURL != "" {
				offer["claim_url"] = m.ClaimURL
			}
		}
		out["offer"] = offer
	}
	w.Header().Set("Referrer-Policy", "no-referrer")
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) statusLeave(w http.ResponseWriter, r *http.Request) {
	if _, _, err := s.Svc.LeaveByStatusToken(r.Context(), r.PathValue("token")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Referrer-Policy", "no-referrer")
	writeJSON(w, http.StatusOK, map[string]string{"state": string(nextup.EntryLeft)})
}
