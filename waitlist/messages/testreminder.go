package messages

import (
	"context"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// MessageReminderTest is the kind of an event's test reminder, sent to the
// organiser: a kind of its own, so that it is never taken for a reminder
// a guest was sent.
const MessageReminderTest = "reminder_test"

// SampleGuest is the name a test reminder greets, in place of a guest's.
const SampleGuest = "Sam Sample"

// sampleToken stands in for the secret of every link a test reminder
// carries: a guest's links are their own, and this one opens nothing.
const sampleToken = "test-reminder"

// TestReminder sends an event's reminder now to the organiser's own
// address (the business profile's owner email), in the words a guest's
// reminder of the event has (the business's reminder template, filled by
// the same code, for a sample guest with one seat). Only the links differ:
// each keeps its shape with a placeholder secret. The subject is marked
// as a test. Nothing but the message is written: no registration,
// booking or timer, and the message has a kind of its own
// (MessageReminderTest). Without an owner email it is no_owner_email.
func (s *Messages) TestReminder(ctx context.Context, businessID, eventID string) (nextup.Message, error) {
	var out nextup.Message
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		sl, err := w.SlotOf(ctx, businessID, eventID)
		if err != nil {
			return err
		}
		if sl.Kind != nextup.KindEvent {
			return core.NotFound("event", eventID, nil)
		}
		bi, err := w.Business(ctx, sl.BusinessID)
		if err != nil {
			return err
		}
		to := bi.Profile.OwnerEmail
		if to == "" {
			return nextup.Errorf(nextup.ErrInvalid, nextup.CodeNoOwnerEmail,
				"the business has no owner email to send the test reminder to: set owner_email with PATCH /v1/businesses/%s", bi.ID)
		}
		e := nextup.Entry{BusinessID: bi.ID, Name: SampleGuest, Email: to, PartySize: 1, EventID: sl.ID}
		d := w.reminderData(bi, sl, e, nextup.Booking{BusinessID: bi.ID, SlotID: sl.ID, Seats: 1})
		for _, link := range []struct {
			field  *string
			sample string
		}{
			{&d.CancelLink, w.s.URL("/r/" + bi.ID + "/" + sampleToken)},
			{&d.CalendarLink, w.s.CalendarURL(sampleToken, sampleToken)},
			{&d.StatusLink, w.s.StatusURL(sampleToken)},
			{&d.Link, w.s.ClaimURL(sampleToken)},
		} {
			if *link.field != "" {
				*link.field = link.sample
			}
		}
		out = nextup.Message{ID: w.s.Random.ID("msg"), BusinessID: bi.ID, Kind: MessageReminderTest, Channel: nextup.ChannelEmail, To: to}
		templates.Compose(bi.Business, templates.TemplateReminder, d, &out)
		templates.MarkTest(&out)
		return w.QueueWithID(ctx, out)
	})
	return out, err
}
