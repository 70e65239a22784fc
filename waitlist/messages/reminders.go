package messages

import (
	"context"
	"errors"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/offers"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// MessageReminder is the kind of a booking's reminder.
const MessageReminder = "reminder"

// remind sends a booking's reminder on the channel its offer went by, to
// the person's current address, unless the booking has ended (its timers
// are cancelled then; this covers a cancellation racing the sweeper), the
// business's booking system has not confirmed it yet, or the slot has
// started.
func (w *work) remind(ctx context.Context, bookingID string) error {
	b, err := w.Tx.BookingGet(ctx, bookingID)
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if b.State != nextup.BookingBooked {
		return nil
	}
	if waiting, err := offers.AwaitingBookingSystem(ctx, w.Tx, b.ID); err != nil || waiting {
		return err // not confirmed by the business's booking system (yet): no reminder
	}
	sl, err := w.Tx.SlotGet(ctx, b.SlotID)
	if err != nil {
		return err
	}
	if !w.Now.Before(sl.StartsAt) {
		return nil
	}
	bi, err := w.Business(ctx, b.BusinessID)
	if err != nil {
		return err
	}
	e, err := w.Tx.EntryGet(ctx, b.EntryID)
	if err != nil {
		return err
	}
	ch := nextup.ChannelEmail
	if b.OfferID != "" {
		o, err := w.Tx.OfferGet(ctx, b.OfferID)
		if err != nil {
			return err
		}
		ch = o.Channel
	}
	if templates.AddressOf(e, ch) == "" { // the entry changed since: use what is left
		ch = nextup.ChannelEmail
		if e.Phone != "" {
			ch = nextup.ChannelSMS
		}
	}
	d := w.reminderData(bi, sl, e, b)
	m := nextup.Message{BusinessID: b.BusinessID, Kind: MessageReminder, Channel: ch, To: templates.AddressOf(e, ch),
		OfferID: b.OfferID, EntryID: e.ID, BookingID: b.ID}
	if m.To == "" {
		return nil // nobody to remind
	}
	templates.Compose(bi.Business, templates.TemplateReminder, d, &m)
	return w.Queue(ctx, m)
}

// reminderData is what a booking's reminder says: the slot and the
// person, and an event's self-service cancel link until its cancellation
// cutoff. An event's test reminder says the same (TestReminder).
func (w *work) reminderData(bi *core.Biz, sl nextup.Slot, e nextup.Entry, b nextup.Booking) templates.TemplateData {
	d := templates.SlotData(bi.Loc, sl, e, b.Seats)
	if sl.Kind == nextup.KindEvent && w.Now.Before(sl.CancellationClosesAt()) {
		d.CancelLink = w.s.CancelURL(bi.Business, b.ID)
	}
	return d
}

// Remind runs a booking's reminder timer in w (see remind); waitlist's
// timer handler calls it.
func Remind(ctx context.Context, w *core.Work, bookingID string) error {
	return wrap(w).remind(ctx, bookingID)
}
