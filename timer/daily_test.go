package timer_test

import (
	"context"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the machine has installed

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func tod(t *testing.T, s string) nextup.TimeOfDay {
	t.Helper()
	v, err := nextup.ParseTimeOfDay(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func housekeeping(businessID string) nextup.Timer {
	return nextup.Timer{BusinessID: businessID, Kind: nextup.TimerHousekeeping, Key: "housekeeping:" + businessID}
}

func TestScheduleDailyNeverPostpones(t *testing.T) {
	t.Parallel()
	b := setup(t)
	berlin := mustLoad(t, "Europe/Berlin")
	at := tod(t, "03:00")
	after := time.Date(2025, 10, 24, 12, 0, 0, 0, time.UTC)
	first := time.Date(2025, 10, 25, 3, 0, 0, 0, berlin)

	schedule := func(after time.Time) nextup.Timer {
		t.Helper()
		var got nextup.Timer
		err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
			var err error
			got, err = timer.ScheduleDaily(b.ctx, tx, housekeeping("biz_1"), after, at, berlin)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := schedule(after); !got.DueAt.Equal(first) {
		t.Fatalf("ScheduleDaily due %v, want %v", got.DueAt, first)
	}
	// At every start-up again, including one after the run was missed
	// (the process was down at 03:00): the pending run stays where it is.
	for _, again := range []time.Time{after, after.Add(time.Hour), first.Add(2 * time.Hour)} {
		if got := schedule(again); !got.DueAt.Equal(first) {
			t.Errorf("ScheduleDaily(after %v) moved the run to %v, want it left at %v", again, got.DueAt, first)
		}
	}
	p := b.pending()
	if len(p) != 1 || !p[0].DueAt.Equal(first) || p[0].Key != "housekeeping:biz_1" || p[0].Kind != nextup.TimerHousekeeping {
		t.Fatalf("pending = %+v, want one housekeeping timer at %v", p, first)
	}
	// Another business gets its own.
	var other nextup.Timer
	err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		var err error
		other, err = timer.ScheduleDaily(b.ctx, tx, housekeeping("biz_2"), after, at, berlin)
		return err
	})
	if err != nil || !other.DueAt.Equal(first) {
		t.Fatalf("second business: %+v, %v", other, err)
	}
	if n := len(b.pending()); n != 2 {
		t.Errorf("%d pending timers, want 2", n)
	}
	err = b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		_, err := timer.ScheduleDaily(b.ctx, tx, nextup.Timer{Kind: nextup.TimerHousekeeping}, after, at, berlin)
		return err
	})
	if err == nil {
		t.Error("ScheduleDaily without a key succeeded")
	}
}

// TestDailyTimerAcrossDST runs a daily timer that reschedules itself, as
// housekeeping does, through Berlin's autumn change with Advance: one run a
// day at 02:30 local, never two in the doubled hour.
func TestDailyTimerAcrossDST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	berlin := mustLoad(t, "Europe/Berlin")
	at := tod(t, "02:30")
	b.h.then = func(ctx context.Context, tx nextup.Tx, tm nextup.Timer, now time.Time) error {
		// The recorder has already marked tm done, so this creates the
		// next run rather than moving the one being handled.
		_, err := timer.ScheduleDaily(ctx, tx, housekeeping(tm.BusinessID), now, at, berlin)
		return err
	}
	start := time.Date(2025, 10, 24, 12, 0, 0, 0, time.UTC)
	b.clock.Set(start)
	err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		_, err := timer.ScheduleDaily(b.ctx, tx, housekeeping("biz_1"), start, at, berlin)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sw, 4*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	key := "housekeeping:biz_1"
	b.wantFired(
		firing{key, time.Date(2025, 10, 25, 0, 30, 0, 0, time.UTC)}, // 02:30 CEST
		firing{key, time.Date(2025, 10, 26, 0, 30, 0, 0, time.UTC)}, // 02:30 CEST, the first of two
		firing{key, time.Date(2025, 10, 27, 1, 30, 0, 0, time.UTC)}, // 02:30 CET
		firing{key, time.Date(2025, 10, 28, 1, 30, 0, 0, time.UTC)},
	)
	if p := b.pending(); len(p) != 1 || !p[0].DueAt.Equal(time.Date(2025, 10, 29, 1, 30, 0, 0, time.UTC)) {
		t.Errorf("pending = %+v, want the run of the 29th", p)
	}
}
