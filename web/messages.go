package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
)

type messageJSON struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Channel   string     `json:"channel"`
	To        string     `json:"to"`
	Subject   string     `json:"subject"`
	Body      string     `json:"body"`
	ClaimURL  string     `json:"claim_url,omitempty"`
	State     string     `json:"state"`
	Attempts  int        `json:"attempts"`
	LastError string     `json:"last_error,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	SentAt    *time.Time `json:"sent_at"`
	OfferID   string     `json:"offer_id,omitempty"`
	// TemplateVersion is the version of the business's wording the
	// message was written with (0: nextup's own).
	TemplateVersion int `json:"template_version"`
}

func messageOut(m nextup.Message) messageJSON {
	return messageJSON{ID: m.ID, Kind: m.Kind, Channel: string(m.Channel), To: m.To, Subject: m.Subject, Body: m.Body,
		ClaimURL: m.ClaimURL, State: string(m.State), Attempts: m.Attempts, LastError: m.LastError,
		CreatedAt: m.CreatedAt, SentAt: m.SentAt, OfferID: m.OfferID, TemplateVersion: m.TemplateVersion}
}

// listMessages is the outbox as staff see it: what was sent to whom, and
// what is stuck.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	q := r.URL.Query()
	f := nextup.MessageFilter{BusinessID: b.ID, To: q.Get("to"), State: nextup.MessageState(q.Get("state")), OfferID: q.Get("offer_id")}
	switch f.State {
	case "", nextup.MessageQueued, nextup.MessageSent, nextup.MessageFailed, nextup.MessageDead, nextup.MessageCancelled:
	default:
		s.writeError(w, r, invalidf("state", "must be queued, sent, failed, dead or cancelled"))
		return
	}
	msgs, err := s.Svc.ListMessages(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Messages []messageJSON `json:"messages"`
	}{Messages: []messageJSON{}}
	for _, m := range msgs {
		out.Messages = append(out.Messages, messageOut(m))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) retryMessage(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	m, err := s.Svc.RetryMessage(r.Context(), b.ID, r.PathValue("mid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, messageOut(m))
}
