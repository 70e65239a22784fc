package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestDailyWorkRunsOnceAcrossInstances runs three instances — each its own
// pool, service and sweeper, their clocks moved together an hour at a time
// over three days — on one schema. Work that must happen once per period
// (the daily housekeeping: expiring entries whose window has passed,
// purging old idempotency records) is a keyed timer: the pending key is
// unique, the row is claimed with SKIP LOCKED under a lease, and its effect
// commits only together with TimerDone under that lease. So each day's
// housekeeping runs exactly once, and each entry expires once.
func TestDailyWorkRunsOnceAcrossInstances(t *testing.T) {
	schema := pgtest.NewSchema(t, 6)
	ctx := context.Background()
	t0 := time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC)
	type instance struct {
		clock *nextup.FakeClock
		svc   *waitlist.Service
		sweep *timer.Sweeper
	}
	var ins []instance
	for i := range 3 {
		db, err := postgres.Open(ctx, schema.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		clock := nextup.NewFakeClock(t0)
		svc := waitlist.New(db, clock, "https://nextup.test")
		ins = append(ins, instance{clock, svc, &timer.Sweeper{Store: db, Clock: clock, Handler: svc,
			Owner: fmt.Sprintf("n%d", i+1), Lease: 30 * time.Second}})
	}
	biz, _, err := ins[0].svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Salon", Timezone: "Europe/Dublin"})
	if err != nil {
		t.Fatal(err)
	}
	// Twelve people whose windows close one after another over the days.
	for i := range 12 {
		if _, err := ins[i%3].svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: fmt.Sprint("P", i),
			Email: fmt.Sprintf("p%d@example.com", i), Service: "cut",
			Latest: t0.Add(time.Duration(6*i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 * 24 {
		var wg sync.WaitGroup
		for _, in := range ins {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := timer.Advance(ctx, in.clock, in.sweep, time.Hour); err != nil {
					t.Errorf("advance: %v", err)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}

	q := func(query string) int {
		t.Helper()
		var n int
		if err := schema.Admin.QueryRow(ctx, query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	s := schema.Name + "."
	if n := q(`SELECT count(*) FROM ` + s + `timers WHERE kind = 'housekeeping' AND done_at IS NOT NULL`); n != 3 {
		t.Errorf("housekeeping ran %d times in three days, want 3", n)
	}
	if n := q(`SELECT count(DISTINCT to_char(to_timestamp(done_at / 1e6), 'YYYY-MM-DD')) FROM ` + s + `timers WHERE kind = 'housekeeping' AND done_at IS NOT NULL`); n != 3 {
		t.Errorf("housekeeping ran on %d distinct days, want 3", n)
	}
	if n := q(`SELECT count(*) FROM ` + s + `timers WHERE kind = 'housekeeping' AND done_at IS NULL`); n != 1 {
		t.Errorf("%d housekeeping timers pending, want tomorrow's", n)
	}
	expired := q(`SELECT count(*) FROM ` + s + `entries WHERE state = 'expired'`)
	if expired == 0 || expired == 12 {
		t.Errorf("%d of 12 entries expired; the windows close over six days, so some but not all", expired)
	}
	if n := q(`SELECT count(*) FROM ` + s + `audit_events WHERE subject_type = 'entry' AND to_state = 'expired'`); n != expired {
		t.Errorf("%d expiry audit rows for %d expired entries: an entry expired twice", n, expired)
	}
	if n := q(`SELECT count(DISTINCT claimed_by) FROM ` + s + `timers WHERE kind = 'housekeeping' AND done_at IS NOT NULL`); n < 1 {
		t.Errorf("no instance recorded as running housekeeping")
	}
}
