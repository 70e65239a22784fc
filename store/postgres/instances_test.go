package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestSeveralInstances runs two nextup instances — each with its own pool,
// service and timer sweeper — on one PostgreSQL schema, and races them:
// releases, claims (each link from both instances), declines, and both
// sweepers expiring the rest at once. Afterwards, in SQL: booked + held <=
// capacity with held equal to the live offers' seats, no entry with two
// live offers, one booking and one confirmation per claimed offer, and
// every ended offer ended exactly once in the audit log.
func TestSeveralInstances(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	dbA := openFresh(t, dsn)
	dbB := openAt(t, dbA.dsn)
	loc, _ := time.LoadLocation("Europe/London")
	clock := nextup.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, loc))
	a := waitlist.New(dbA, clock, "https://a.test")
	b := waitlist.New(dbB, clock, "https://b.test")
	a.Random = nextup.NewRandom(rand.NewChaCha8([32]byte{1}))
	b.Random = nextup.NewRandom(rand.NewChaCha8([32]byte{2}))
	rules := nextup.DefaultRules()
	rules.QuietHours, rules.MaxOffersPerPersonPerDay = nil, 0
	biz, _, err := a.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Two", Timezone: "Europe/London", Rules: &rules})
	if err != nil {
		t.Fatal(err)
	}
	var slots []string
	for h := 11; h < 17; h++ {
		s, _, err := a.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "cut", StartsAt: time.Date(2026, 12, 2, h, 0, 0, 0, loc), EndsAt: time.Date(2026, 12, 2, h, 30, 0, 0, loc)})
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s.ID)
	}
	class, _, err := a.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "yoga", Seating: nextup.SeatingShared, Capacity: 6,
		StartsAt: time.Date(2026, 12, 2, 18, 0, 0, 0, loc), EndsAt: time.Date(2026, 12, 2, 19, 0, 0, 0, loc)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		svc, service := a, "cut"
		if i%2 == 1 {
			svc, service = b, "yoga"
		}
		if _, err := svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: fmt.Sprint("P", i), Email: fmt.Sprintf("p%d@example.com", i), Service: service}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	fail := func(err error) {
		if err != nil && nextup.ErrorCode(err) == "" {
			t.Error(err)
		}
	}
	for i, sid := range slots { // every chair released from alternating instances, at once
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := []*waitlist.Service{a, b}[i%2].Release(ctx, biz.ID, sid, 0, waitlist.ReasonCancellation)
			fail(err)
		}()
	}
	for i := range 4 { // four single seats of the class, from both instances
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := []*waitlist.Service{a, b}[i%2].Release(ctx, biz.ID, class.ID, 1, waitlist.ReasonCancellation)
			fail(err)
		}()
	}
	wg.Wait()
	msgs, err := a.ListMessages(ctx, nextup.MessageFilter{BusinessID: biz.ID})
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for _, m := range msgs {
		if m.Kind == nextup.MessageOffer {
			tokens = append(tokens, m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:])
		}
	}
	if len(tokens) < 8 { // six chairs and the class's seats
		t.Fatalf("only %d offers after the releases", len(tokens))
	}
	for i, tok := range tokens {
		switch i % 4 {
		case 3: // left unanswered: the sweepers expire it below
		case 0, 1: // claimed from both instances at once
			for _, svc := range []*waitlist.Service{a, b} {
				wg.Add(1)
				go func() { defer wg.Done(); _, err := svc.Claim(ctx, tok); fail(err) }()
			}
		case 2: // declined on one while the other tries to claim
			wg.Add(2)
			go func() { defer wg.Done(); _, _, err := a.Decline(ctx, tok); fail(err) }()
			go func() { defer wg.Done(); _, err := b.Claim(ctx, tok); fail(err) }()
		}
	}
	wg.Wait()
	// Both sweepers expire what is left, at the same moment.
	clock.Advance(11 * time.Minute)
	for _, sw := range []*timer.Sweeper{{Store: dbA, Clock: clock, Handler: a, Owner: "a"}, {Store: dbB, Clock: clock, Handler: b, Owner: "b"}} {
		wg.Add(1)
		go func() { defer wg.Done(); _, err := sw.RunDue(ctx); fail(err) }()
	}
	wg.Wait()

	q := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := dbA.pool.QueryRow(ctx, rebind(query), args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	if n := q(`SELECT count(*) FROM slots s WHERE s.booked_seats + s.held_seats > s.capacity
		OR s.held_seats <> (SELECT coalesce(sum(seats), 0) FROM offers o WHERE o.slot_id = s.id AND o.state IN ('pending', 'offered'))`); n != 0 {
		t.Errorf("%d slots break the invariant or hold seats without live offers", n)
	}
	if n := q(`SELECT count(*) FROM (SELECT entry_id FROM offers WHERE state IN ('pending', 'offered') GROUP BY entry_id HAVING count(*) > 1) x`); n != 0 {
		t.Errorf("%d entries hold two live offers", n)
	}
	claimed := q(`SELECT count(*) FROM offers WHERE state = 'claimed'`)
	if claimed == 0 || q(`SELECT count(*) FROM bookings`) != claimed ||
		q(`SELECT count(*) FROM messages WHERE kind = 'confirmation'`) != claimed {
		t.Errorf("claimed %d, bookings %d, confirmations %d", claimed, q(`SELECT count(*) FROM bookings`), q(`SELECT count(*) FROM messages WHERE kind = 'confirmation'`))
	}
	if n := q(`SELECT count(*) FROM offers o WHERE o.state NOT IN ('pending', 'offered') AND
		(SELECT count(*) FROM audit_events e WHERE e.subject_type = 'offer' AND e.subject_id = o.id AND e.to_state = o.state) <> 1`); n != 0 {
		t.Errorf("%d ended offers do not have exactly one audit row into their final state", n)
	}
	if n := q(`SELECT count(*) FROM offers WHERE state = 'expired'`); n == 0 {
		t.Error("the sweepers expired nothing: the race did not happen")
	}
}
