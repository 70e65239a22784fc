package timer

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

// ScheduleDaily schedules t (whose BusinessID, Kind, SubjectID and Key the
// caller fills in) for engine.NextDaily(after, at, loc), inside tx, and returns it
// with DueAt set. CreatedAt defaults to after, which is normally now.
//
// It never postpones: when a pending timer with the same Key is already due
// at or before that moment — an overdue run a restarted process has not
// swept yet — it is left alone and returned instead, so calling
// ScheduleDaily at every start-up is safe.
//
// TimerSchedule moves a pending timer with the same Key, and the timer being
// handled is still pending until it is marked done, so a daily handler must
// call tx.TimerDone before it schedules the next run with the same Key.
func ScheduleDaily(ctx context.Context, tx nextup.Tx, t nextup.Timer, after time.Time, at nextup.TimeOfDay, loc *time.Location) (nextup.Timer, error) {
	if t.Key == "" || t.Kind == "" {
		return nextup.Timer{}, fmt.Errorf("timer: schedule daily: %w: kind and key are required", nextup.ErrInvalid)
	}
	due := engine.NextDaily(after, at, loc).UTC()
	pending, err := tx.TimerList(ctx, nextup.TimerFilter{
		BusinessID: t.BusinessID, Kind: t.Kind, SubjectID: t.SubjectID, PendingOnly: true,
	})
	if err != nil {
		return nextup.Timer{}, fmt.Errorf("timer: schedule daily %s: %w", t.Key, err)
	}
	for _, p := range pending {
		if p.Key == t.Key && !p.DueAt.After(due) {
			return p, nil
		}
	}
	t.DueAt = due
	if t.CreatedAt.IsZero() {
		t.CreatedAt = after
	}
	if err := tx.TimerSchedule(ctx, t); err != nil {
		return nextup.Timer{}, fmt.Errorf("timer: schedule daily %s: %w", t.Key, err)
	}
	return t, nil
}
