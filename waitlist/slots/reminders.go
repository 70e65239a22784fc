package slots

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// A booking's reminders are timers scheduled with it and cancelled when
// it ends; sending one is package messages' (the booking_remind timer).

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

// ScheduleReminders schedules the reminders of a booking just made, in w
// (see scheduleReminders): claims and event registrations make bookings.
func ScheduleReminders(ctx context.Context, w *core.Work, bi *core.Biz, sl nextup.Slot, b nextup.Booking) error {
	return wrap(w).scheduleReminders(ctx, bi, sl, b)
}
