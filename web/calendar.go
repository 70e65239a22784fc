package web

import (
	"net/http"

	"github.com/nextup-dev/nextup/waitlist"
)

// calendar is GET /v1/bookings/{id}/calendar.ics?token=…: the booking as an
// iCalendar event, public by the secret token of the calendar link.
func (s *Server) calendar(w http.ResponseWriter, r *http.Request) {
	b, sl, biz, err := s.Svc.BookingCalendar(r.Context(), r.PathValue("id"), r.URL.Query().Get("token"))
	w.Header().Set("Referrer-Policy", "no-referrer")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="booking.ics"`)
	_, _ = w.Write([]byte(waitlist.CalendarICS(b, sl, biz.Name)))
}
