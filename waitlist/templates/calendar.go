package templates

import (
	ics "github.com/arran4/golang-ical"

	"github.com/nextup-dev/nextup"
)

// CalendarICS is a booking as an iCalendar (RFC 5545) object: one event
// with the slot's times, confirmed, or cancelled once the booking is. Its
// UID is the booking's, so a later copy (a cancellation) updates the same
// event in the person's calendar.
func CalendarICS(b nextup.Booking, sl nextup.Slot, businessName string) string {
	cal := ics.NewCalendar()
	cal.SetMethod(ics.MethodPublish)
	cal.SetProductId("-//nextup//booking//EN")
	ev := cal.AddEvent(b.ID + "@nextup")
	ev.SetDtStampTime(b.CreatedAt)
	ev.SetStartAt(sl.StartsAt)
	ev.SetEndAt(sl.EndsAt)
	summary := SlotService(sl)
	if sl.Staff != "" {
		summary += " with " + sl.Staff
	}
	ev.SetSummary(summary + " — " + businessName)
	if b.State != nextup.BookingBooked {
		ev.SetStatus(ics.ObjectStatusCancelled)
	} else {
		ev.SetStatus(ics.ObjectStatusConfirmed)
	}
	return cal.Serialize()
}
