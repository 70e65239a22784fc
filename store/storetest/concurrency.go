package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// racers is how many goroutines race in the concurrency subtests.
const racers = 16

// race runs fn in n goroutines at once, each in its own InTx, and returns
// each one's error. It fails the test if they have not all finished within
// a minute (a deadlock, or a writer held forever).
func (b *bundle) race(n int, fn func(i int, tx nextup.Tx) error) []error {
	b.t.Helper()
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = b.s.InTx(b.ctx, func(tx nextup.Tx) error { return fn(i, tx) })
		})
	}
	close(start)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.t.Fatalf("%d concurrent transactions did not all finish within a minute", n)
	}
	return errs
}

// tally counts the successes among errs and reports every error that is
// neither nil nor ErrConflict: under contention a transaction either wins
// or loses cleanly, it never fails with "database is locked" or a
// serialization error the caller would have to retry.
func tally(t *testing.T, what string, errs []error) (wins int) {
	t.Helper()
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, nextup.ErrConflict):
		default:
			t.Errorf("%s, racer %d: %v (want success or ErrConflict)", what, i, err)
		}
	}
	return wins
}

// claim is what the claim use case does in one transaction: the
// conditional write on the offer, then seats, entry, booking.
func claim(b *bundle, tx nextup.Tx, tokenHash string, now time.Time, bookingID string) error {
	o, err := tx.OfferClaim(b.ctx, tokenHash, now)
	if err != nil {
		return err
	}
	if _, err := tx.SlotSeats(b.ctx, o.SlotID, nextup.SeatDelta{Held: -o.Seats, Booked: o.Seats}); err != nil {
		return fmt.Errorf("SlotSeats after a successful claim: %w", err)
	}
	if err := tx.EntrySetState(b.ctx, o.EntryID, []nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered}, nextup.EntryBooked, now); err != nil {
		return fmt.Errorf("EntrySetState after a successful claim: %w", err)
	}
	return tx.BookingCreate(b.ctx, nextup.Booking{ID: bookingID, BusinessID: o.BusinessID, SlotID: o.SlotID, EntryID: o.EntryID,
		OfferID: o.ID, Name: "winner", Seats: o.Seats, State: nextup.BookingBooked, TokenHash: nextup.HashToken(bookingID), CreatedAt: now})
}

func (b *bundle) bookings(slotID string) []nextup.Booking {
	b.t.Helper()
	var bs []nextup.Booking
	b.read(func(tx nextup.Tx) error {
		var err error
		bs, err = tx.BookingListBySlot(b.ctx, slotID)
		return err
	})
	return bs
}

func testConcurrentClaimRace(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID)
	e := b.entry(biz.ID)
	o, _ := b.offer(s, e)
	now := b.at(time.Minute)
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		return claim(b, tx, o.TokenHash, now, fmt.Sprintf("bkg_%02d", i))
	})
	if wins := tally(t, "concurrent claims of one offer", errs); wins != 1 {
		t.Errorf("%d of %d concurrent claims of one offer succeeded, want exactly 1", wins, racers)
	}
	b.seats(s.ID, 1, 0)
	if got := b.getOffer(o.ID); got.State != nextup.OfferClaimed {
		t.Errorf("offer state %s, want claimed", got.State)
	}
	if got := b.getEntry(e.ID); got.State != nextup.EntryBooked {
		t.Errorf("entry state %s, want booked", got.State)
	}
	if bs := b.bookings(s.ID); len(bs) != 1 {
		t.Errorf("%d bookings for the slot, want 1: %v", len(bs), ids(bs, bookingID))
	}
}

// testConcurrentClaimVersusExpiry: the claim and the expiry timer race;
// the offer ends exactly once and the seats follow whichever won.
func testConcurrentClaimVersusExpiry(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(3))
	e := b.entry(biz.ID, func(e *nextup.Entry) { e.PartySize = 3 })
	o, _ := b.offer(s, e)
	now := b.at(time.Minute)
	// Racers 0, 4, 8, … expire, the rest claim. Who won is read from
	// the results, not set inside the function: a store may run a
	// function again when its commit loses (an optimistic one does), so
	// a function that returned nil has not necessarily committed.
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		if i%4 == 0 {
			got, err := tx.OfferSetState(b.ctx, o.ID, []nextup.OfferState{nextup.OfferOffered}, nextup.OfferExpired, now, "deadline")
			if err != nil {
				return err
			}
			if _, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Held: -got.Seats}); err != nil {
				return fmt.Errorf("SlotSeats after expiring: %w", err)
			}
			return nil
		}
		return claim(b, tx, o.TokenHash, now, fmt.Sprintf("bkg_%02d", i))
	})
	winner := ""
	for i, err := range errs {
		if err == nil {
			winner = map[bool]string{true: "expiry", false: "claim"}[i%4 == 0]
		}
	}
	if wins := tally(t, "claims racing the expiry", errs); wins != 1 {
		t.Fatalf("%d of %d racing claims and expiries succeeded, want exactly 1: an offer ends exactly once", wins, racers)
	}
	got := b.getOffer(o.ID)
	switch winner {
	case "claim":
		b.seats(s.ID, 3, 0)
		if got.State != nextup.OfferClaimed {
			t.Errorf("claim won but the offer is %s", got.State)
		}
	case "expiry":
		b.seats(s.ID, 0, 0)
		if got.State != nextup.OfferExpired {
			t.Errorf("expiry won but the offer is %s", got.State)
		}
	}
}

func testConcurrentClaimRaceSharedSlot(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4))
	o1, _ := b.offer(s, b.entry(biz.ID, func(e *nextup.Entry) { e.PartySize = 2 }))
	o2, _ := b.offer(s, b.entry(biz.ID, func(e *nextup.Entry) { e.PartySize = 2 }))
	b.seats(s.ID, 0, 4)
	now := b.at(time.Minute)
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		o := []nextup.Offer{o1, o2}[i%2]
		return claim(b, tx, o.TokenHash, now, fmt.Sprintf("bkg_%02d", i))
	})
	var wins [2]int
	for i, err := range errs {
		if err == nil {
			wins[i%2]++
		}
	}
	tally(t, "concurrent claims of two offers of one slot", errs)
	if wins != [2]int{1, 1} {
		t.Errorf("successful claims per offer: %v, want [1 1]", wins)
	}
	b.seats(s.ID, 4, 0)
	if bs := b.bookings(s.ID); len(bs) != 2 {
		t.Errorf("%d bookings for the slot, want 2: %v", len(bs), ids(bs, bookingID))
	}
}

// testConcurrentReleases: two cancellations of different bookings of one
// shared slot at the same instant both free their seats (and a double
// click frees them once); then a storm of releases stops at zero.
func testConcurrentReleases(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(10), func(s *nextup.Slot) { s.BookedSeats = 10 })
	bk := []nextup.Booking{
		{ID: "bkg_a", BusinessID: biz.ID, SlotID: s.ID, Name: "A", Seats: 2, State: nextup.BookingBooked, TokenHash: nextup.HashToken("a"), CreatedAt: b.now},
		{ID: "bkg_b", BusinessID: biz.ID, SlotID: s.ID, Name: "B", Seats: 3, State: nextup.BookingBooked, TokenHash: nextup.HashToken("b"), CreatedAt: b.now},
	}
	b.tx(func(tx nextup.Tx) error {
		for _, x := range bk {
			if err := tx.BookingCreate(b.ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
	now := b.at(time.Minute)
	errs := b.race(8, func(i int, tx nextup.Tx) error {
		x := bk[i%2]
		if _, err := tx.BookingSetState(b.ctx, x.ID, nextup.BookingBooked, nextup.BookingCancelled, now); err != nil {
			return err
		}
		_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Booked: -x.Seats})
		return err
	})
	var wins [2]int
	for i, err := range errs {
		if err == nil {
			wins[i%2]++
		}
	}
	tally(t, "concurrent cancellations", errs)
	if wins != [2]int{1, 1} {
		t.Errorf("successful cancellations per booking: %v, want [1 1]", wins)
	}
	b.seats(s.ID, 5, 0)

	errs = b.race(racers, func(i int, tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Booked: -1})
		return err
	})
	if wins := tally(t, "concurrent releases of one seat", errs); wins != 5 {
		t.Errorf("%d of %d concurrent releases of one seat succeeded with 5 booked, want 5", wins, racers)
	}
	b.seats(s.ID, 0, 0)
}

func testConcurrentHoldsOverCapacity(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(5), func(s *nextup.Slot) { s.BookedSeats = 1 })
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Held: 1})
		return err
	})
	if wins := tally(t, "concurrent holds of one seat", errs); wins != 4 {
		t.Errorf("%d of %d concurrent holds of one seat succeeded with 4 free, want 4", wins, racers)
	}
	b.seats(s.ID, 1, 4)

	pairs := b.slot(biz.ID, shared(5))
	errs = b.race(racers, func(i int, tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, pairs.ID, nextup.SeatDelta{Held: 2})
		return err
	})
	if wins := tally(t, "concurrent holds of two seats", errs); wins != 2 {
		t.Errorf("%d of %d concurrent holds of two seats succeeded with 5 free, want 2", wins, racers)
	}
	b.seats(pairs.ID, 0, 4)
}

// testConcurrentSlotGetLocksRow: inside InTx, SlotGet serialises the
// transactions that read a slot and then write it (no lost update).
func testConcurrentSlotGetLocksRow(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(10))
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		got, err := tx.SlotGet(b.ctx, s.ID)
		if err != nil {
			return err
		}
		_, err = tx.SlotResize(b.ctx, s.ID, got.Capacity+1)
		return err
	})
	for i, err := range errs {
		wantOK(t, err, "racer %d: SlotGet then SlotResize(capacity+1)", i)
	}
	if got := b.getSlot(s.ID); got.Capacity != 10+racers {
		t.Errorf("after %d concurrent read-then-grow transactions: capacity %d, want %d (lost updates: SlotGet inside InTx must lock the row)",
			racers, got.Capacity, 10+racers)
	}
}

func testConcurrentEntryGetLocksRow(t *testing.T, b *bundle) {
	biz := b.business()
	e := b.entry(biz.ID)
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		got, err := tx.EntryGet(b.ctx, e.ID)
		if err != nil {
			return err
		}
		got.PartySize++
		return tx.EntryUpdate(b.ctx, got)
	})
	for i, err := range errs {
		wantOK(t, err, "racer %d: EntryGet then EntryUpdate(party+1)", i)
	}
	if got := b.getEntry(e.ID); got.PartySize != 1+racers {
		t.Errorf("after %d concurrent read-then-update transactions: party size %d, want %d (lost updates: EntryGet inside InTx must lock the row)",
			racers, got.PartySize, 1+racers)
	}
}

func testConcurrentEntryCreateSeq(t *testing.T, b *bundle) {
	biz := b.business()
	const per = 4
	var mu sync.Mutex
	var all []nextup.Entry
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		var mine []nextup.Entry
		for j := range per {
			id := fmt.Sprintf("ent_%02d_%d", i, j)
			e, err := tx.EntryCreate(b.ctx, nextup.Entry{ID: id, BusinessID: biz.ID, Name: id, Email: id + "@example.com",
				Service: "cut", PartySize: 1, JoinedAt: b.now, State: nextup.EntryWaiting, StatusHash: nextup.HashToken(id), UpdatedAt: b.now})
			if err != nil {
				return err
			}
			if len(mine) > 0 && e.Seq <= mine[len(mine)-1].Seq {
				return fmt.Errorf("entry seq %d after %d in one transaction", e.Seq, mine[len(mine)-1].Seq)
			}
			mine = append(mine, e)
		}
		mu.Lock()
		all = append(all, mine...)
		mu.Unlock()
		return nil
	})
	for i, err := range errs {
		wantOK(t, err, "racer %d: EntryCreate x%d", i, per)
	}
	seen := map[int64]string{}
	for _, e := range all {
		if other, dup := seen[e.Seq]; dup {
			t.Errorf("entries %s and %s both got Seq %d", other, e.ID, e.Seq)
		}
		seen[e.Seq] = e.ID
	}
	// Everyone joined at the same instant: the order is by Seq.
	var list []nextup.Entry
	b.read(func(tx nextup.Tx) error {
		var err error
		list, err = tx.EntryList(b.ctx, nextup.EntryFilter{BusinessID: biz.ID, Limit: racers*per + 1})
		return err
	})
	if len(list) != racers*per {
		t.Fatalf("EntryList: %d entries, want %d", len(list), racers*per)
	}
	if !slices.IsSortedFunc(list, func(a, b nextup.Entry) int { return int(a.Seq - b.Seq) }) {
		t.Errorf("EntryList of entries joined at one instant is not in Seq order")
	}
}

func testConcurrentTimerClaim(t *testing.T, b *bundle) {
	biz := b.business()
	const n = 40
	var ts []nextup.Timer
	for i := range n {
		ts = append(ts, b.timer(biz.ID, -time.Duration(i)*time.Second))
	}
	b.schedule(ts...)
	var mu sync.Mutex
	claimedBy := map[int64]int{}
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for round := 0; round < n; round++ {
				var got []nextup.Timer
				err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
					var err error
					got, err = tx.TimerClaimDue(b.ctx, b.now, time.Hour, fmt.Sprintf("w%d", w), 3)
					return err
				})
				if err != nil {
					errs[w] = fmt.Errorf("TimerClaimDue: %w", err)
					return
				}
				if len(got) == 0 {
					return
				}
				for _, tm := range got {
					mu.Lock()
					claimedBy[tm.ID]++
					mu.Unlock()
					if err := b.timerDone(tm.ID, *tm.ClaimedUntil, b.now); err != nil {
						errs[w] = fmt.Errorf("TimerDone(%d): %w", tm.ID, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		wantOK(t, err, "worker %d", w)
	}
	if len(claimedBy) != n {
		t.Errorf("%d timers claimed, want %d", len(claimedBy), n)
	}
	for id, c := range claimedBy {
		if c != 1 {
			t.Errorf("timer %d claimed %d times by concurrent workers under one lease, want once", id, c)
		}
	}
	if p := b.timers(nextup.TimerFilter{PendingOnly: true}); len(p) != 0 {
		t.Errorf("%d timers still pending", len(p))
	}
}

func testConcurrentMessageClaim(t *testing.T, b *bundle) {
	biz := b.business()
	const n = 40
	var ms []nextup.Message
	for i := range n {
		ms = append(ms, b.message(biz.ID, func(m *nextup.Message) { m.CreatedAt = b.at(-time.Duration(i) * time.Second) }))
	}
	b.messages(ms...)
	var mu sync.Mutex
	claimed := map[string]int{}
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for round := 0; round < n; round++ {
				var got []nextup.Message
				err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
					var err error
					got, err = tx.MessageClaimDue(b.ctx, b.now, time.Hour, 3)
					return err
				})
				if err != nil {
					errs[w] = fmt.Errorf("MessageClaimDue: %w", err)
					return
				}
				if len(got) == 0 {
					return
				}
				for _, m := range got {
					mu.Lock()
					claimed[m.ID]++
					mu.Unlock()
					err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
						return tx.MessageFinish(b.ctx, m.ID, *m.ClaimedUntil, nextup.MessageResult{State: nextup.MessageSent, At: b.now})
					})
					if err != nil {
						errs[w] = fmt.Errorf("MessageFinish(%s): %w", m.ID, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		wantOK(t, err, "worker %d", w)
	}
	if len(claimed) != n {
		t.Errorf("%d messages claimed, want %d", len(claimed), n)
	}
	for id, c := range claimed {
		if c != 1 {
			t.Errorf("message %s claimed %d times by concurrent relays under one lease, want once", id, c)
		}
	}
}

// testConcurrentMessageClaimOne: racers claim one message by id (a queue
// that delivered its id several times at once). One lease wins; the rest
// are ErrConflict. Each racer asks for a lease of its own length, so the
// stored lease says whose it is.
func testConcurrentMessageClaimOne(t *testing.T, b *bundle) {
	biz := b.business()
	m := b.message(biz.ID)
	b.messages(m)
	lease := func(i int) time.Duration { return time.Minute + time.Duration(i)*time.Second }
	errs := b.race(racers, func(i int, tx nextup.Tx) error {
		_, err := tx.MessageClaim(b.ctx, m.ID, b.now, lease(i))
		return err
	})
	if wins := tally(t, "concurrent claims of one message", errs); wins != 1 {
		t.Fatalf("%d of %d concurrent claims of one message succeeded, want exactly 1", wins, racers)
	}
	winner := slices.IndexFunc(errs, func(err error) bool { return err == nil })
	got := b.getMessage(m.ID)
	if want := b.now.Add(lease(winner)); got.ClaimedUntil == nil || !got.ClaimedUntil.Equal(want) {
		t.Errorf("stored lease %s, want racer %d's, %s", fmtTimePtr(got.ClaimedUntil), winner, want.Format(time.RFC3339Nano))
	}
	if got.Attempts != 0 || got.State != nextup.MessageQueued {
		t.Errorf("after the race: %s after %d attempts, want queued after 0", got.State, got.Attempts)
	}
}
