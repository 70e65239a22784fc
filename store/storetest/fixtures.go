package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// t0 is the suite's "now". It is fixed, far from the wall clock and carries
// microseconds, so a backend that drops sub-second precision, stores local
// time or reads the wall clock where it was handed a time shows up at once.
var t0 = time.Date(2031, time.March, 10, 9, 0, 0, 0, time.UTC).Add(123456 * time.Microsecond)

// bundle is what every subtest starts from: a fresh store of its own and
// helpers that write fixtures with sensible defaults.
type bundle struct {
	t   *testing.T
	h   Harness
	ctx context.Context
	s   nextup.Store
	now time.Time
	seq atomic.Int64
}

func setup(t *testing.T, h Harness) *bundle {
	t.Helper()
	s := h.Open(t)
	if s == nil {
		t.Fatal("Harness.Open returned a nil store")
	}
	return &bundle{t: t, h: h, ctx: t.Context(), s: s, now: t0}
}

// id returns a new id with a readable prefix, unique within the bundle.
func (b *bundle) id(prefix string) string {
	return fmt.Sprintf("%s_%04d", prefix, b.seq.Add(1))
}

// at returns now plus d.
func (b *bundle) at(d time.Duration) time.Time { return b.now.Add(d) }

// tx runs fn in one read-write transaction and fails the test on error.
func (b *bundle) tx(fn func(tx nextup.Tx) error) {
	b.t.Helper()
	if err := b.s.InTx(b.ctx, fn); err != nil {
		b.t.Fatalf("InTx: %v", err)
	}
}

// read runs fn in one read-only transaction and fails the test on error.
func (b *bundle) read(fn func(tx nextup.Tx) error) {
	b.t.Helper()
	if err := b.s.Read(b.ctx, fn); err != nil {
		b.t.Fatalf("Read: %v", err)
	}
}

func (b *bundle) business(mods ...func(*nextup.Business)) nextup.Business {
	b.t.Helper()
	id := b.id("biz")
	biz := nextup.Business{
		ID:         id,
		Name:       "Business " + id,
		Timezone:   "Europe/London",
		Rules:      nextup.DefaultRules(),
		APIKeyHash: nextup.HashToken("key-" + id),
		CreatedAt:  b.at(-30 * 24 * time.Hour),
	}
	for _, m := range mods {
		m(&biz)
	}
	b.tx(func(tx nextup.Tx) error { return tx.BusinessCreate(b.ctx, biz) })
	return biz
}

// slot creates a unit slot for one person tomorrow, service "cut".
func (b *bundle) slot(businessID string, mods ...func(*nextup.Slot)) nextup.Slot {
	b.t.Helper()
	start := b.at(24 * time.Hour).Truncate(time.Hour)
	s := nextup.Slot{
		ID:         b.id("slot"),
		BusinessID: businessID,
		Kind:       nextup.KindSlot,
		Service:    "cut",
		StartsAt:   start,
		EndsAt:     start.Add(30 * time.Minute),
		Capacity:   1,
		Seating:    nextup.SeatingUnit,
		MinParty:   1,
		CreatedAt:  b.at(-time.Hour),
	}
	for _, m := range mods {
		m(&s)
	}
	b.tx(func(tx nextup.Tx) error { return tx.SlotCreate(b.ctx, s) })
	return s
}

// shared makes a slot shared seating with the given capacity.
func shared(capacity int) func(*nextup.Slot) {
	return func(s *nextup.Slot) {
		s.Seating = nextup.SeatingShared
		s.Capacity = capacity
	}
}

// entry creates a waiting entry for one person, service "cut", and returns
// it as stored (with Seq).
func (b *bundle) entry(businessID string, mods ...func(*nextup.Entry)) nextup.Entry {
	b.t.Helper()
	id := b.id("ent")
	e := nextup.Entry{
		ID:         id,
		BusinessID: businessID,
		Name:       "Person " + id,
		Email:      id + "@example.com",
		Service:    "cut",
		PartySize:  1,
		Source:     "api",
		JoinedAt:   b.at(-time.Hour),
		State:      nextup.EntryWaiting,
		StatusHash: nextup.HashToken("status-" + id),
		UpdatedAt:  b.at(-time.Hour),
	}
	for _, m := range mods {
		m(&e)
	}
	var got nextup.Entry
	b.tx(func(tx nextup.Tx) error {
		var err error
		got, err = tx.EntryCreate(b.ctx, e)
		return err
	})
	return got
}

// offer creates an offer of slot to entry, in state offered with a
// ten-minute deadline by default, and returns it with its claim token. A
// live offer holds its seats on the slot in the same transaction, the way
// the engine makes one; the entry's state is left alone.
func (b *bundle) offer(s nextup.Slot, e nextup.Entry, mods ...func(*nextup.Offer)) (nextup.Offer, string) {
	b.t.Helper()
	id := b.id("off")
	token := "token-" + id
	sent := b.now
	o := nextup.Offer{
		ID:          id,
		BusinessID:  s.BusinessID,
		SlotID:      s.ID,
		EntryID:     e.ID,
		ContactKey:  e.ContactKey(),
		Seats:       e.PartySize,
		PartySize:   e.PartySize,
		State:       nextup.OfferOffered,
		Channel:     nextup.ChannelEmail,
		TokenHash:   nextup.HashToken(token),
		RuleVersion: 1,
		CreatedAt:   b.now,
		SendAt:      b.now,
		SentAt:      &sent,
		ExpiresAt:   b.at(10 * time.Minute),
	}
	if s.Seating == nextup.SeatingUnit {
		o.Seats = s.Capacity
	}
	for _, m := range mods {
		m(&o)
	}
	b.tx(func(tx nextup.Tx) error {
		if err := tx.OfferCreate(b.ctx, o); err != nil {
			return fmt.Errorf("OfferCreate: %w", err)
		}
		if o.State.Live() {
			if _, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Held: o.Seats}); err != nil {
				return fmt.Errorf("SlotSeats(held +%d) for offer fixture: %w", o.Seats, err)
			}
		}
		return nil
	})
	return o, token
}

// getSlot reads a slot in its own read transaction.
func (b *bundle) getSlot(id string) nextup.Slot {
	b.t.Helper()
	var s nextup.Slot
	b.read(func(tx nextup.Tx) error {
		var err error
		s, err = tx.SlotGet(b.ctx, id)
		return err
	})
	return s
}

func (b *bundle) getEntry(id string) nextup.Entry {
	b.t.Helper()
	var e nextup.Entry
	b.read(func(tx nextup.Tx) error {
		var err error
		e, err = tx.EntryGet(b.ctx, id)
		return err
	})
	return e
}

func (b *bundle) getOffer(id string) nextup.Offer {
	b.t.Helper()
	var o nextup.Offer
	b.read(func(tx nextup.Tx) error {
		var err error
		o, err = tx.OfferGet(b.ctx, id)
		return err
	})
	return o
}

func (b *bundle) getMessage(id string) nextup.Message {
	b.t.Helper()
	var m nextup.Message
	b.read(func(tx nextup.Tx) error {
		var err error
		m, err = tx.MessageGet(b.ctx, id)
		return err
	})
	return m
}

func (b *bundle) timers(f nextup.TimerFilter) []nextup.Timer {
	b.t.Helper()
	var ts []nextup.Timer
	b.read(func(tx nextup.Tx) error {
		var err error
		ts, err = tx.TimerList(b.ctx, f)
		return err
	})
	return ts
}

// seats checks a slot's counters.
func (b *bundle) seats(id string, booked, held int) {
	b.t.Helper()
	s := b.getSlot(id)
	if s.BookedSeats != booked || s.HeldSeats != held {
		b.t.Errorf("slot %s: booked=%d held=%d (capacity %d), want booked=%d held=%d",
			id, s.BookedSeats, s.HeldSeats, s.Capacity, booked, held)
	}
}

// wantErr reports whether err wraps kind, and fails the test otherwise.
func wantErr(t *testing.T, err, kind error, format string, args ...any) bool {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Errorf("%s: got error %v, want one wrapping nextup.%s", fmt.Sprintf(format, args...), err, kindName(kind))
		return false
	}
	return true
}

// wantOK fails the test when err is not nil.
func wantOK(t *testing.T, err error, format string, args ...any) bool {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", fmt.Sprintf(format, args...), err)
		return false
	}
	return true
}

func kindName(kind error) string {
	switch kind {
	case nextup.ErrNotFound:
		return "ErrNotFound"
	case nextup.ErrConflict:
		return "ErrConflict"
	case nextup.ErrInvalid:
		return "ErrInvalid"
	case nextup.ErrUnauthorized:
		return "ErrUnauthorized"
	}
	return fmt.Sprint(kind)
}

// newRand returns a seeded source for the randomized subtests. The seed is
// logged on failure; NEXTUP_STORETEST_SEED replays it.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("NEXTUP_STORETEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("NEXTUP_STORETEST_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %d (replay with NEXTUP_STORETEST_SEED=%d)", seed, seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func ptr[T any](v T) *T { return &v }
