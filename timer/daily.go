package timer

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

// NextDaily returns the first moment strictly after after at which the wall
// clock in loc reads at, counting one moment per local day:
//
//   - when at falls in a daylight-saving gap (02:30 on a spring-forward
//     night), that day's moment is at moved forward by the gap (03:30 in
//     the new offset), the same instant the clock would have shown had it
//     not jumped;
//   - when at occurs twice (01:30 on a fall-back night), only the first
//     occurrence counts, so a daily timer never fires twice in one day.
//
// An at of 24:00 means midnight at the end of the day.
func NextDaily(after time.Time, at nextup.TimeOfDay, loc *time.Location) time.Time {
	local := after.In(loc)
	y, m, d := local.Date()
	// The moment of the local day before after's can still lie after it
	// (at = 24:00, or a day whose moment was pushed through a gap), so
	// start one day early.
	for k := -1; ; k++ {
		if t := dailyAt(y, m, d+k, at, loc); t.After(after) {
			return t
		}
	}
}

// dailyAt returns the moment of local day y-m-d at which the wall clock in
// loc reads at, resolved as NextDaily describes.
func dailyAt(y int, m time.Month, d int, at nextup.TimeOfDay, loc *time.Location) time.Time {
	// The wall-clock reading we want, as if it were UTC. time.Date
	// normalises d out of range and hour 24.
	wall := time.Date(y, m, d, at.Hour(), at.Minute(), 0, 0, time.UTC)
	// Every offset loc uses around that day; a day has at most one
	// transition in any real zone, so the offsets a day and a half either
	// side cover it. (time.Date with loc picks an arbitrary side of a
	// transition, which is why we do not use it.)
	offsets := make([]int, 0, 3)
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		offsets = append(offsets, off)
	}
	var best time.Time
	for _, off := range offsets {
		t := wall.Add(-time.Duration(off) * time.Second)
		if !sameWall(t.In(loc), wall) {
			continue
		}
		if best.IsZero() || t.Before(best) {
			best = t
		}
	}
	if !best.IsZero() {
		return best.In(loc)
	}
	// A gap: read the wall clock with the offset in force before it.
	return wall.Add(-time.Duration(offsets[0]) * time.Second).In(loc)
}

func sameWall(t, wall time.Time) bool {
	y1, m1, d1 := t.Date()
	y2, m2, d2 := wall.Date()
	return y1 == y2 && m1 == m2 && d1 == d2 && t.Hour() == wall.Hour() && t.Minute() == wall.Minute() &&
		t.Second() == wall.Second() && t.Nanosecond() == wall.Nanosecond()
}

// ScheduleDaily schedules t (whose BusinessID, Kind, SubjectID and Key the
// caller fills in) for NextDaily(after, at, loc), inside tx, and returns it
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
	due := NextDaily(after, at, loc).UTC()
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
