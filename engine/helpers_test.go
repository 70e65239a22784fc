package engine_test

import (
	"iter"
	"slices"
	"time"
	_ "time/tzdata" // the DST tests must not depend on the host's zoneinfo

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

var (
	london   = mustLoad("Europe/London")
	newYork  = mustLoad("America/New_York")
	santiago = mustLoad("America/Santiago") // clocks jump over midnight in spring
	lordHowe = mustLoad("Australia/Lord_Howe")
)

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// at is a wall-clock time in loc.
func at(loc *time.Location, y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

// utc is an instant written in UTC, to pin down what a wall time in a
// zone with clock changes really is.
func utc(y int, m time.Month, d, h, min int) time.Time { return at(time.UTC, y, m, d, h, min) }

// quiet builds quiet hours from wall-clock hours and minutes.
func quiet(sh, sm, eh, em int) *nextup.QuietHours {
	return &nextup.QuietHours{Start: nextup.TimeOfDay(sh*60 + sm), End: nextup.TimeOfDay(eh*60 + em)}
}

// testNow is a Wednesday morning in London, far from quiet hours and
// clock changes, so that a test only meets those when it asks to.
var testNow = at(london, 2026, time.June, 10, 10, 0)

// Input is engine.Input with the candidates as a slice, which is what a
// test wants to write; seq turns it into the engine's sequence.
type Input struct {
	engine.Input
	Cands []engine.Candidate
}

func (in Input) engine() engine.Input {
	e := in.Input
	if in.Cands != nil {
		e.Candidates = slices.Values(in.Cands)
	}
	return e
}

// setup is the starting point of an engine test (the test bundle): a unit
// chair at 14:00 for a haircut with Ann, the default rules, and nobody
// waiting. Each test changes what it is about.
func setup() Input {
	return Input{Input: engine.Input{
		Now:   testNow,
		Rules: nextup.DefaultRules(),
		Loc:   london,
		Slot:  slotAt(testNow.Add(4 * time.Hour)),
	}}
}

func slotAt(start time.Time) nextup.Slot {
	return nextup.Slot{
		ID:         "slot1",
		BusinessID: "biz1",
		Kind:       nextup.KindSlot,
		Service:    "cut",
		Staff:      "ann",
		StartsAt:   start,
		EndsAt:     start.Add(time.Hour),
		Capacity:   1,
		Seating:    nextup.SeatingUnit,
	}
}

// entry is a waiting entry for a haircut, party of one, reachable by email
// at an address of its own.
func entry(id string, mods ...func(*nextup.Entry)) nextup.Entry {
	e := nextup.Entry{
		ID:         id,
		BusinessID: "biz1",
		Email:      id + "@example.com",
		Service:    "cut",
		PartySize:  1,
		JoinedAt:   testNow.Add(-24 * time.Hour),
		State:      nextup.EntryWaiting,
	}
	for _, m := range mods {
		m(&e)
	}
	return e
}

func cand(e nextup.Entry) engine.Candidate { return engine.Candidate{Entry: e} }

func party(n int) func(*nextup.Entry) { return func(e *nextup.Entry) { e.PartySize = n } }

// offer is an offer of slot1 to entryID made an hour before testNow
// (after every entry joined, unless a test moves one to the back later).
func offer(entryID string, state nextup.OfferState) nextup.Offer {
	return nextup.Offer{ID: "off_" + entryID, SlotID: "slot1", EntryID: entryID, Seats: 1, PartySize: 1, State: state,
		CreatedAt: testNow.Add(-time.Hour)}
}

// lapsedAt ends offer o (made an hour before testNow) at testNow+d.
func lapsedAt(o nextup.Offer, d time.Duration) nextup.Offer {
	at := testNow.Add(d)
	o.ResolvedAt = &at
	return o
}

// movedBack puts an entry at the back of the line at testNow+d, as a
// lapse then does (engine.BackOfLine).
func movedBack(d time.Duration) func(*nextup.Entry) {
	return func(e *nextup.Entry) { e.JoinedAt = testNow.Add(d) }
}

// counted wraps a candidate sequence and counts how many were pulled, to
// check that Decide stops reading a list that may be paged from a database.
func counted(cs []engine.Candidate, pulled *int) iter.Seq[engine.Candidate] {
	return func(yield func(engine.Candidate) bool) {
		for _, c := range cs {
			*pulled++
			if !yield(c) {
				return
			}
		}
	}
}
