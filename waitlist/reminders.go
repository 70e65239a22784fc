package waitlist

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// MessageReminder is the kind of a booking's reminder.
const MessageReminder = "reminder"

func remindKey(bookingID string, offset time.Duration) string {
	return fmt.Sprintf("%s:%s:%d", nextup.TimerBookingRemind, bookingID, int64(offset/time.Second))
}

// scheduleReminders arranges a new booking's reminders: one per offset of
// the business's rules (an event's own offsets, and the morning of the
// event) before the slot starts, moved out of quiet hours
// (engine.ReminderAt); offsets that have already passed, or that land on
// the same moment as an earlier one, are left out.
func (w *work) scheduleReminders(ctx context.Context, bi *core.Biz, sl nextup.Slot, b nextup.Booking) error {
	seen := map[time.Time]bool{}
	for _, off := range reminderOffsets(bi, sl) {
		at, ok := engine.ReminderAt(sl.StartsAt.Add(-off), sl.StartsAt, w.Now, bi.Rules.QuietHours, bi.Loc)
		if !ok || seen[at] {
			continue
		}
		seen[at] = true
		if err := w.Schedule(ctx, nextup.Timer{BusinessID: b.BusinessID, Kind: nextup.TimerBookingRemind,
			SubjectID: b.ID, Key: remindKey(b.ID, off), DueAt: at}); err != nil {
			return err
		}
	}
	return nil
}

// cancelReminders removes a booking's pending reminders (it was cancelled,
// or its person did not come).
func (w *work) cancelReminders(ctx context.Context, bookingID string) error {
	ts, err := w.Tx.TimerList(ctx, nextup.TimerFilter{Kind: nextup.TimerBookingRemind, SubjectID: bookingID, PendingOnly: true})
	if err != nil {
		return fmt.Errorf("reminders of booking %s: %w", bookingID, err)
	}
	for _, t := range ts {
		if err := w.Tx.TimerCancel(ctx, t.Key); err != nil {
			return fmt.Errorf("cancel reminder %s: %w", t.Key, err)
		}
	}
	return nil
}

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
	if waiting, err := awaitingBookingSystem(ctx, w.Tx, b.ID); err != nil || waiting {
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
	d := templates.SlotData(bi.Loc, sl, e, b.Seats)
	if sl.Kind == nextup.KindEvent && w.Now.Before(sl.CancellationClosesAt()) {
		d.CancelLink = w.s.CancelURL(bi.Business, b.ID)
	}
	m := nextup.Message{BusinessID: b.BusinessID, Kind: MessageReminder, Channel: ch, To: templates.AddressOf(e, ch),
		OfferID: b.OfferID, EntryID: e.ID, BookingID: b.ID}
	if m.To == "" {
		return nil // nobody to remind
	}
	templates.Compose(bi.Business, templates.TemplateReminder, d, &m)
	return w.Queue(ctx, m)
}

// reminderOffsets are the durations before a slot's start at which its
// bookings are reminded: the business's rules, or for an event its own
// offsets and the morning of the event (at ReminderMorningOf, business
// local time, when that is before the start).
func reminderOffsets(bi *core.Biz, sl nextup.Slot) []time.Duration {
	if sl.Kind != nextup.KindEvent || sl.Event == nil {
		return bi.Rules.ReminderOffsets
	}
	offs := slices.Clone(sl.Event.ReminderOffsets)
	if tod, err := nextup.ParseTimeOfDay(sl.Event.ReminderMorningOf); err == nil && sl.Event.ReminderMorningOf != "" {
		start := sl.StartsAt.In(bi.Loc)
		morning := time.Date(start.Year(), start.Month(), start.Day(), tod.Hour(), tod.Minute(), 0, 0, bi.Loc)
		if morning.Before(sl.StartsAt) {
			offs = append(offs, sl.StartsAt.Sub(morning))
		}
	}
	return offs
}
