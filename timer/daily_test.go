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

func TestNextDaily(t *testing.T) {
	t.Parallel()
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name  string
		zone  string
		after string // RFC 3339
		at    string
		want  string // RFC 3339, compared as an instant
	}{
		{"later today", "UTC", "2031-03-10T02:00:00Z", "03:00", "2031-03-10T03:00:00Z"},
		{"earlier today is tomorrow", "UTC", "2031-03-10T09:00:00Z", "03:00", "2031-03-11T03:00:00Z"},
		{"exactly at is tomorrow", "UTC", "2031-03-10T03:00:00Z", "03:00", "2031-03-11T03:00:00Z"},
		{"local day, not UTC day", "America/Los_Angeles", "2031-03-10T07:00:00Z", "03:00", "2031-03-10T10:00:00Z"},
		{"midnight as 24:00", "Europe/London", "2031-03-10T09:00:00Z", "24:00", "2031-03-11T00:00:00Z"},
		{"24:00 a minute away", "Europe/London", "2031-03-10T23:59:00Z", "24:00", "2031-03-11T00:00:00Z"},
		{"00:00 is the same as 24:00 of the day before", "Europe/London", "2031-03-10T23:59:00Z", "00:00", "2031-03-11T00:00:00Z"},

		// New York springs forward at 02:00 on 9 March 2025: 02:30 never
		// happens, and the run moves on by the gap.
		{"spring gap", "America/New_York", "2025-03-09T05:00:00Z", "02:30", "2025-03-09T07:30:00Z"}, // 03:30 EDT
		{"after the gap day", "America/New_York", "2025-03-09T07:30:00Z", "02:30", "2025-03-10T06:30:00Z"},
		// New York falls back at 02:00 on 2 November 2025: 01:30 happens
		// twice; only the first counts.
		{"fall overlap, first", "America/New_York", "2025-11-02T04:00:00Z", "01:30", "2025-11-02T05:30:00Z"}, // 01:30 EDT
		{"fall overlap, not twice", "America/New_York", "2025-11-02T05:30:00Z", "01:30", "2025-11-03T06:30:00Z"},
		// Berlin, east of Greenwich, where time.Date picks the second
		// occurrence.
		{"berlin spring gap", "Europe/Berlin", "2025-03-29T23:00:00Z", "02:30", "2025-03-30T01:30:00Z"},     // 03:30 CEST
		{"berlin overlap, first", "Europe/Berlin", "2025-10-25T22:00:00Z", "02:30", "2025-10-26T00:30:00Z"}, // 02:30 CEST
		{"berlin overlap, not twice", "Europe/Berlin", "2025-10-26T00:30:00Z", "02:30", "2025-10-27T01:30:00Z"},
		// Lord Howe Island moves by half an hour: 01:45 happens twice on
		// 6 April 2025 (+11 then +10:30).
		{"half-hour overlap", "Australia/Lord_Howe", "2025-04-05T13:00:00Z", "01:45", "2025-04-05T14:45:00Z"},
		{"half-hour overlap, not twice", "Australia/Lord_Howe", "2025-04-05T14:45:00Z", "01:45", "2025-04-06T15:15:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoad(t, tt.zone)
			got := timer.NextDaily(utc(tt.after), tod(t, tt.at), loc)
			if want := utc(tt.want); !got.Equal(want) {
				t.Errorf("NextDaily(%s, %s, %s) = %s (%s), want %s (%s)",
					tt.after, tt.at, tt.zone, got.UTC(), got.In(loc), want, want.In(loc))
			}
			if got.Location() != loc {
				t.Errorf("result is in %v, want %v", got.Location(), loc)
			}
		})
	}
}

// TestNextDailyOncePerLocalDay chains NextDaily through two years in zones
// with and without daylight saving: every local day gets exactly one run,
// at the asked wall-clock time except on a day it does not exist.
func TestNextDailyOncePerLocalDay(t *testing.T) {
	t.Parallel()
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Chatham", "America/Santiago"}
	times := []string{"00:00", "00:30", "01:30", "02:00", "02:30", "03:00", "12:00", "23:59"}
	for _, zone := range zones {
		loc := mustLoad(t, zone)
		for _, s := range times {
			at := tod(t, s)
			start := time.Date(2025, 1, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
			prev := start
			wantDay := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC) // calendar date only
			for range 730 {
				next := timer.NextDaily(prev, at, loc)
				if !next.After(prev) {
					t.Fatalf("%s %s: NextDaily(%v) = %v, not after", zone, s, prev, next)
				}
				y, m, d := next.In(loc).Date()
				wy, wm, wd := wantDay.Date()
				if y != wy || m != wm || d != wd {
					t.Fatalf("%s %s: after %v came %v; want a run on %d-%02d-%02d", zone, s, prev.In(loc), next.In(loc), wy, wm, wd)
				}
				local := next.In(loc)
				if local.Hour() != at.Hour() || local.Minute() != at.Minute() {
					// Only a day whose at is skipped by a jump may differ,
					// and then only by that jump, forwards.
					wall := time.Date(y, m, d, at.Hour(), at.Minute(), 0, 0, time.UTC)
					got := time.Date(y, m, d, local.Hour(), local.Minute(), 0, 0, time.UTC)
					if shift := got.Sub(wall); shift <= 0 || shift > time.Hour {
						t.Fatalf("%s %s: run on %v is %v from the asked time", zone, s, local, shift)
					}
					if _, off1 := next.Add(-time.Hour).In(loc).Zone(); func() bool { _, off2 := next.In(loc).Zone(); return off1 == off2 }() {
						t.Fatalf("%s %s: run on %v is off the asked time on a day without a jump", zone, s, local)
					}
				}
				prev = next
				wantDay = wantDay.AddDate(0, 0, 1)
			}
		}
	}
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
