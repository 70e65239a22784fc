package engine_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

// FuzzDecide builds an Input from the fuzzer's bytes (the same generator
// as the property tests, read from bytes instead of rapid) and checks every
// invariant: no panic, seats never over-allocated, every offer fits and is
// new, at most one offer for a unit slot, the first offer goes to the first
// eligible candidate, the window is sane, and the decision is
// deterministic.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 512))
	full := make([]byte, 512)
	for i := range full {
		full[i] = 0xff
	}
	f.Add(full)
	// Seeded noise: a replayable spread of slots, rules and lists.
	for seed := range uint64(48) {
		r := rand.New(rand.NewPCG(seed, 0x6e657874))
		b := make([]byte, 64+r.IntN(448))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &byteSource{b: data}
		sc := genScenario(src)
		if src.intn(0, 3, "wild") == 3 {
			wilden(&sc, src)
		}
		checkDecide(t, sc)
	})
}

// wilden replaces the numbers of a scenario with values no valid rules or
// store would produce (negative seats and leads, quiet hours out of range,
// claim windows of years), because Decide must stay total and keep its
// promises whatever it is handed.
func wilden(sc *scenario, s source) {
	const big = 1 << 20
	mins := func(label string) time.Duration {
		return time.Duration(s.intn(-big, big, label)) * time.Minute
	}
	sc.in.Rules.MinLead = mins("wild lead")
	sc.in.Rules.ClaimWindow = mins("wild window")
	sc.in.Rules.MaxOffersPerSlot = s.intn(-3, 3, "wild tries")
	sc.in.Rules.MaxOffersPerPersonPerDay = s.intn(-3, 3, "wild daily cap")
	sc.in.Rules.QuietHours = &nextup.QuietHours{
		Start: nextup.TimeOfDay(s.intn(-2000, 2000, "wild quiet start")),
		End:   nextup.TimeOfDay(s.intn(-2000, 2000, "wild quiet end")),
	}
	sl := &sc.in.Slot
	sl.Capacity = s.intn(-big, big, "wild capacity")
	sl.BookedSeats = s.intn(-big, big, "wild booked")
	sl.HeldSeats = s.intn(-big, big, "wild held")
	sl.MinParty = s.intn(-big, big, "wild min party")
	sl.StartsAt = sc.in.Now.Add(mins("wild start"))
	for i := range sc.cands {
		sc.cands[i].Entry.PartySize = s.intn(-8, 16, "wild party")
		sc.cands[i].OffersToday = s.intn(-3, 5, "wild offers today")
		if i > 0 && sc.cands[i].Entry.ID == sc.cands[i-1].Entry.ID {
			sc.cands[i] = sc.cands[i-1] // a repeat stays the same entry
		}
	}
}

// BenchmarkDecide decides a unit slot for a list of 1000 waiting entries
// where only the 990th fits: the cost of walking a long list.
func BenchmarkDecide(b *testing.B) {
	in := setup()
	for i := range 1000 {
		e := entry(fmt.Sprintf("e%04d", i), func(e *nextup.Entry) {
			e.Staff = "bob" // wants another stylist
			e.Phone = "+447700900001"
		})
		if i == 989 {
			e.Staff = ""
		}
		in.Cands = append(in.Cands, engine.Candidate{Entry: e, OffersToday: 1})
	}
	in.History = []nextup.Offer{offer("x1", nextup.OfferExpired), offer("x2", nextup.OfferDeclined)}
	input := in.engine()
	if d := engine.Decide(input); d.Move != nextup.MoveRollOn || len(d.Offers) != 1 || d.Offers[0].EntryID != in.Cands[989].Entry.ID {
		b.Fatalf("Decide = %+v, want a roll-on to the 990th entry", d)
	}
	b.ReportAllocs()
	for b.Loop() {
		engine.Decide(input)
	}
}
