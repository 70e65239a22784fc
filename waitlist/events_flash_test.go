package waitlist_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/waitlist"
)

// postgresBundle opens a fresh PostgreSQL schema (pgtest: NEXTUP_TEST_POSTGRES,
// failing under NEXTUP_REQUIRE_ALL=1 when the server is missing) with a
// business, like setup does on SQLite.
func postgresBundle(tb testing.TB, maxConns int) *bundle {
	tb.Helper()
	schema := pgtest.NewSchema(tb, maxConns)
	db, err := postgres.Open(context.Background(), schema.DSN)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return newBundleOn(tb, db, nil)
}

func flashEvent(tb testing.TB, bd *bundle, capacity int) nextup.Slot {
	tb.Helper()
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Concert", bd.at(30, 19, 0), bd.at(30, 23, 0), capacity
	ev, err := bd.svc.CreateEvent(bd.ctx, bd.biz.ID, p)
	if err != nil {
		tb.Fatal(err)
	}
	return ev
}

// A flash crowd: 1,000 people register at once for 100 seats. Exactly 100
// are confirmed and 900 waitlisted, and the order is the order they
// arrived in (the order their registrations took the event's lock, which
// is the order of their sequence numbers): the first 100 to arrive have
// the seats, and the waitlist runs 1 to 900 in arrival order. The seats
// are never oversold.
func TestFlashCrowd(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			var bd *bundle
			if store == "sqlite" {
				bd = setup(t, nil)
			} else {
				bd = postgresBundle(t, 16)
			}
			const people, seats = 1000, 100
			ev := flashEvent(t, bd, seats)
			regs := make([]waitlist.Registration, people)
			errs := make([]error, people)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range people {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					regs[i], _, errs[i] = bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{
						Name: fmt.Sprintf("Fan %d", i), Email: fmt.Sprintf("fan%d@example.com", i)})
				}()
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("registration %d: %v", i, err)
				}
			}
			// In arrival order: by the sequence number the store assigned.
			slices.SortFunc(regs, func(a, b waitlist.Registration) int { return int(a.Entry.Seq - b.Entry.Seq) })
			for i, r := range regs {
				switch {
				case i < seats && r.State != waitlist.RegConfirmed:
					t.Fatalf("arrival %d is %s, want confirmed (one of the first %d)", i+1, r.State, seats)
				case i >= seats && (r.State != waitlist.RegWaitlisted || r.Position != i-seats+1):
					t.Fatalf("arrival %d is %s at position %d, want waitlisted at %d", i+1, r.State, r.Position, i-seats+1)
				}
			}
			got, err := bd.svc.GetEvent(bd.ctx, bd.biz.ID, ev.ID)
			if err != nil || got.BookedSeats != seats || got.HeldSeats != 0 {
				t.Fatalf("event after the crowd: booked %d held %d (%v), want %d booked", got.BookedSeats, got.HeldSeats, err, seats)
			}
			// The stored guest list agrees: 100 confirmed, 900 waiting in
			// arrival order, one booking each.
			_, list, err := bd.svc.Registrations(bd.ctx, bd.biz.ID, ev.ID, "")
			if err != nil {
				t.Fatal(err)
			}
			confirmed, waiting := 0, 0
			for _, r := range list {
				switch r.State {
				case waitlist.RegConfirmed:
					confirmed++
					if r.Booking == nil || r.Booking.Seats != 1 {
						t.Fatalf("confirmed without its booking: %+v", r)
					}
				case waitlist.RegWaitlisted:
					waiting++
				}
			}
			wl, err := bd.svc.EventWaitlist(bd.ctx, bd.biz.ID, ev.ID)
			if err != nil || confirmed != seats || waiting != people-seats || len(wl) != people-seats {
				t.Fatalf("guest list: %d confirmed, %d waitlisted, waitlist of %d (%v)", confirmed, waiting, len(wl), err)
			}
			for i, r := range wl {
				if r.Entry.ID != regs[seats+i].Entry.ID {
					t.Fatalf("waitlist place %d is %s, want %s (arrival %d)", i+1, r.Entry.Name, regs[seats+i].Entry.Name, seats+i+1)
				}
			}
		})
	}
}

// BenchmarkRegistrations is registrations per second by 8 concurrent
// clients to one event of the SQLite and PostgreSQL stores, a tenth of
// them confirmed and the rest waitlisted (each takes the event's lock,
// checks the person is not registered, reads the waitlist, writes the
// registration, its audit row and, for the confirmed, the booking, the
// confirmation and the reminders). The baseline, measured in the same run
// on the same store, is the bare write a registration is built around:
// one transaction inserting one entry. Reported: registrations/s,
// baseline/s and their ratio.
//
//	NEXTUP_TEST_POSTGRES=postgres://… go test ./waitlist -run '^$' -bench Registrations -benchtime 2000x
func BenchmarkRegistrations(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		b.Run(store, func(b *testing.B) {
			open := func() *bundle {
				if store == "sqlite" {
					return setupTB(b, nil)
				}
				return postgresBundle(b, 2*benchClients)
			}
			bd := open()
			ev := flashEvent(b, bd, max(b.N/10, 1))
			regs := concurrently(b, b.N, func(i int) error {
				_, _, err := bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{
					Name: "Fan", Email: fmt.Sprintf("fan%d@example.com", i)})
				return err
			})
			base := open()
			inserts := concurrently(b, b.N, func(i int) error {
				return base.store.InTx(base.ctx, func(tx nextup.Tx) error {
					_, err := tx.EntryCreate(base.ctx, nextup.Entry{ID: fmt.Sprintf("ent_base%07d", i), BusinessID: base.biz.ID,
						Name: "Fan", Email: fmt.Sprintf("fan%d@example.com", i), EventID: ev.ID, PartySize: 1,
						JoinedAt: base.clock.Now(), State: nextup.EntryWaiting, Source: "bench", UpdatedAt: base.clock.Now()})
					return err
				})
			})
			b.ReportMetric(regs, "registrations/s")
			b.ReportMetric(inserts, "baseline-inserts/s")
			b.ReportMetric(regs/inserts, "ratio")
		})
	}
}

// concurrently runs do(0..n-1) on benchClients goroutines and returns the
// rate per second.
func concurrently(b *testing.B, n int, do func(i int) error) float64 {
	b.Helper()
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
		fail error
	)
	start := time.Now() // measurement, not logic
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					mu.Lock()
					fail = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if fail != nil {
		b.Fatal(fail)
	}
	return float64(n) / time.Since(start).Seconds()
}

// Two cancellations at the same instant, on both stores, promote two
// different people: each cancellation's transaction locks the event, so
// the second sees the first's offer and offers the next person in line.
func TestTwoCancellationsAtOnce(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			var bd *bundle
			if store == "sqlite" {
				bd = setup(t, nil)
			} else {
				bd = postgresBundle(t, 8)
			}
			for round := range 10 { // a race that goes one way only now and then is still caught
				ev := flashEvent(t, bd, 2)
				var regs []waitlist.Registration
				for i := range 4 {
					r, _, err := bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{
						Name: fmt.Sprintf("P%d", i), Email: fmt.Sprintf("p%d-%d@example.com", round, i)})
					if err != nil {
						t.Fatal(err)
					}
					regs = append(regs, r)
				}
				start := make(chan struct{})
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						_, _, errs[i] = bd.svc.CancelRegistration(bd.ctx, bd.biz.ID, ev.ID, regs[i].Entry.ID, nextup.ActorCustomer)
					}()
				}
				close(start)
				wg.Wait()
				if errs[0] != nil || errs[1] != nil {
					t.Fatalf("round %d: cancellations: %v, %v", round, errs[0], errs[1])
				}
				for _, r := range regs[2:] {
					got, err := bd.svc.GetRegistration(bd.ctx, bd.biz.ID, ev.ID, r.Entry.ID)
					if err != nil || got.State != waitlist.RegOffered {
						t.Fatalf("round %d: %s is %s (%v), want offered", round, r.Entry.Name, got.State, err)
					}
				}
				sl, err := bd.svc.GetEvent(bd.ctx, bd.biz.ID, ev.ID)
				if err != nil || sl.HeldSeats != 2 || sl.BookedSeats != 0 {
					t.Fatalf("round %d: event booked %d held %d (%v)", round, sl.BookedSeats, sl.HeldSeats, err)
				}
			}
		})
	}
}
