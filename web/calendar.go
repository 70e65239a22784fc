package web

import (
	"net/http"

	ics "github.com/arran4/golang-ical"

	"github.com/nextup-dev/nextup"
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
	cal := ics.NewCalendar()
	cal.SetMethod(ics.MethodPublish)
	cal.SetProductId("-//nextup//booking//EN")
	ev := cal.AddEvent(b.ID + "@nextup")
	ev.SetDtStampTime(b.CreatedAt)
	ev.SetStartAt(sl.StartsAt)
	ev.SetEndAt(sl.EndsAt)
	summary := sl.Service
	if sl.Kind == nextup.KindEvent && sl.Title != "" {
		summary = sl.Title
	}
	if sl.Staff != "" {
		summary += " with " + sl.Staff
	}
	ev.SetSummary(summary + " — " + biz.Name)
	if b.State != nextup.BookingBooked {
		ev.SetStatus(ics.ObjectStatusCancelled)
	} else {
		ev.SetStatus(ics.ObjectStatusConfirmed)
	}
	w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="booking.ics"`)
	_, _ = w.Write([]byte(cal.Serialize()))
}
