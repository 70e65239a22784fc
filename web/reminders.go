package web

import (
	"net/http"

	"github.com/nextup-dev/nextup"
)

// testReminder is POST /v1/events/{id}/reminders:test: the event's
// reminder as a guest gets it, sent now to the organiser's own address
// (202: it is in the outbox). Nothing about the event changes.
func (s *Server) testReminder(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	m, err := s.Svc.TestReminder(r.Context(), b.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"message_id": m.ID})
}
