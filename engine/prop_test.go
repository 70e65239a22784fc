package engine_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

// source draws the integers a random Input is built from. The property
// tests draw them from rapid (which shrinks a failure to a small case), the
// fuzz target from the fuzzer's bytes, so both explore the same space.
type source interface {
	// intn returns an integer in [lo, hi].
	intn(lo, hi int, label string) int
}

type rapidSource struct{ t *rapid.T }

func (s rapidSource) intn(lo, hi int, label string) int {
	return rapid.IntRange(lo, hi).Draw(s.t, label)
}

// byteSource reads integers from fuzz bytes; when they run out every draw
// is lo, which is always a valid (small) choice.
type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) intn(lo, hi int, _ string) int {
	if hi <= lo {
		return lo
	}
	span := uint64(hi-lo) + 1
	var v uint64
	for n := span - 1; n > 0; n >>= 8 {
		v <<= 8
		if s.i < len(s.b) {
			v |= uint64(s.b[s.i])
			s.i++
		}
	}
	return lo + int(v%span)
}

func pick[T any](s source, label string, xs ...T) T { return xs[s.intn(0, len(xs)-1, label)] }

// rare is true about one draw in ten. Draws lean towards lo (rapid leans
// that way and shrinks that way; an exhausted fuzz input reads lo), so the
// common, interesting case is lo and the odd one is the high end.
func rare(s source, label string) bool { return s.intn(0, 9, label) == 9 }

var (
	genLocs = []*time.Location{time.UTC, london, newYork, santiago, lordHowe}
	// genDays are days around clock changes, and one ordinary day.
	genDays = []time.Time{
		utc(2026, 6, 10, 12, 0),
		utc(2026, 3, 28, 12, 0),  // London springs forward the next night
		utc(2026, 10, 24, 12, 0), // London falls back the next night
		utc(2026, 3, 7, 12, 0),   // New York springs forward the next night
		utc(2026, 10, 31, 12, 0), // New York falls back the next night
		utc(2026, 9, 5, 12, 0),   // Santiago skips midnight the next night
		utc(2026, 4, 4, 12, 0),   // Lord Howe goes back half an hour the next night
	}
)

// scenario is a random Input with its candidates kept as a slice, so that
// the checks can replay them.
type scenario struct {
	in    engine.Input
	cands []engine.Candidate
}

func (sc scenario) input() engine.Input {
	in := sc.in
	in.Candidates = slices.Values(sc.cands)
	return in
}

func (sc scenario) String() string {
	return fmt.Sprintf("now %v loc %v\nrules %+v quiet %+v\nslot %+v\nhistory %+v\ncands %+v",
		sc.in.Now, sc.in.Loc, sc.in.Rules, sc.in.Rules.QuietHours, sc.in.Slot, sc.in.History, sc.cands)
}

func genScenario(s source) scenario {
	const m = time.Minute
	var sc scenario
	in := &sc.in
	in.Loc = pick(s, "loc", genLocs...)
	in.Now = pick(s, "day", genDays...).Add(time.Duration(s.intn(0, 36*60, "now")) * m)

	r := &in.Rules
	r.ClaimWindow = time.Duration(1+s.intn(0, 24*60, "window")) * m
	switch s.intn(0, 3, "quiet") {
	case 1:
		r.QuietHours = quiet(21, 0, 8, 0)
	case 2, 3: // any start and end on a quarter hour, 24:00 included
		r.QuietHours = &nextup.QuietHours{
			Start: nextup.TimeOfDay(15 * s.intn(0, 96, "quiet start")),
			End:   nextup.TimeOfDay(15 * s.intn(0, 96, "quiet end")),
		}
	}
	r.TimeCriticalThroughQuiet = s.intn(0, 1, "time critical") == 1
	r.MinLead = time.Duration(15*s.intn(0, 8, "lead")) * m
	r.MaxOffersPerPersonPerDay = s.intn(0, 3, "daily cap")
	if s.intn(0, 2, "try cap") == 2 {
		r.MaxOffersPerSlot = 1 + s.intn(0, 3, "tries")
	}
	r.DownFit = s.intn(0, 1, "down-fit") == 1

	sl := &in.Slot
	sl.ID, sl.BusinessID = "slot1", "biz1"
	sl.Kind = pick(s, "kind", nextup.KindSlot, nextup.KindEvent)
	sl.Seating = pick(s, "seating", nextup.SeatingUnit, nextup.SeatingShared, "")
	sl.Service = pick(s, "service", "cut", "colour")
	sl.Staff = pick(s, "staff", "", "ann", "bob")
	// Composed from small draws: rapid leans hard towards small values
	// over a wide range, and most slots should be hours away.
	startsIn := 24*60*s.intn(0, 2, "days away") + 60*s.intn(0, 23, "hours away") + 5*s.intn(1, 12, "minutes away")
	if rare(s, "started") {
		startsIn = -s.intn(0, 60, "started ago")
	}
	sl.StartsAt = in.Now.Add(time.Duration(startsIn) * m)
	sl.Capacity = 1 + s.intn(0, 7, "capacity")
	if rare(s, "no capacity") {
		sl.Capacity = 0
	}
	if s.intn(0, 2, "some booked") == 2 {
		sl.BookedSeats = s.intn(0, sl.Capacity, "booked")
	}
	if rare(s, "some held") {
		sl.HeldSeats = s.intn(0, sl.Capacity-sl.BookedSeats, "held")
	}
	sl.MinParty = s.intn(0, 4, "min party")
	sl.HandedBack = rare(s, "handed back")

	for range s.intn(0, 4, "history") {
		in.History = append(in.History, nextup.Offer{
			EntryID:   fmt.Sprintf("e%d", s.intn(0, 11, "history entry")),
			State:     pick(s, "history state", nextup.OfferDeclined, nextup.OfferExpired, nextup.OfferCancelled, nextup.OfferClaimed),
			CreatedAt: in.Now.Add(-time.Duration(s.intn(0, 120, "history minutes ago")) * m),
		})
		if rare(s, "live") {
			in.History[len(in.History)-1].State = pick(s, "live state", nextup.OfferOffered, nextup.OfferPending)
		} else {
			o := &in.History[len(in.History)-1]
			ended := o.CreatedAt.Add(time.Duration(s.intn(0, 60, "ended minutes after")) * m)
			o.ResolvedAt = &ended
		}
	}

	for i := range s.intn(0, 12, "candidates") {
		e := nextup.Entry{
			ID:         fmt.Sprintf("e%d", i),
			BusinessID: "biz1",
			State:      nextup.EntryWaiting,
			Service:    sl.Service,
			PartySize:  1 + s.intn(0, 4, "party"),
			Staff:      pick(s, "entry staff", "", "", "ann", "bob"),
			Email:      pick(s, "email", "pat@example.com", "sam@example.com", "Pat@Example.com ", "kim@example.com", ""),
			Phone:      pick(s, "phone", "", "+44 7700 900001", "+447700900002"),
			Channel:    pick(s, "channel", "", nextup.ChannelSMS, nextup.ChannelEmail),
			JoinedAt:   in.Now.Add(-time.Duration(s.intn(0, 24*60, "joined minutes ago")) * m),
		}
		if rare(s, "moved back") {
			// A lapse moved it to the back of the line lately: offers of
			// this slot made before then no longer keep it away.
			e.JoinedAt = in.Now.Add(-time.Duration(s.intn(0, 60, "moved back minutes ago")) * m)
		}
		if sl.Seating != nextup.SeatingShared && s.intn(0, 1, "whole unit") == 0 {
			e.PartySize = sl.Capacity
		}
		if rare(s, "no party") {
			e.PartySize = 0
		}
		if rare(s, "business") {
			e.BusinessID = "biz2"
		}
		if rare(s, "state") {
			e.State = pick(s, "other state", nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft)
		}
		if rare(s, "other service") {
			e.Service = "colour"
		}
		if sl.Kind == nextup.KindEvent || rare(s, "event entry") {
			e.EventID = pick(s, "event", sl.ID, sl.ID, "ev2")
		}
		if s.intn(0, 3, "earliest") == 3 {
			e.Earliest = sl.StartsAt.Add(time.Duration(s.intn(-120, 120, "earliest off")) * m)
		}
		if s.intn(0, 3, "latest") == 3 {
			e.Latest = sl.StartsAt.Add(time.Duration(s.intn(-120, 120, "latest off")) * m)
		}
		if s.intn(0, 3, "availability") == 3 {
			var days []time.Weekday
			for d := time.Sunday; d <= time.Saturday; d++ {
				if s.intn(0, 1, "day") == 1 {
					days = append(days, d)
				}
			}
			e.Availability = []nextup.Availability{{
				Days: days,
				From: nextup.TimeOfDay(30 * s.intn(0, 48, "from")),
				To:   nextup.TimeOfDay(30 * s.intn(0, 48, "to")),
			}}
		}
		c := engine.Candidate{Entry: e, OffersToday: s.intn(0, 3, "offers today")}
		for _, ch := range []nextup.Channel{nextup.ChannelSMS, nextup.ChannelEmail} {
			if rare(s, "suppressed") {
				c.Suppressed = append(c.Suppressed, ch)
			}
		}
		if rare(s, "repeat") && i > 0 {
			c = sc.cands[i-1] // the same entry twice in the sequence (a page boundary read twice)
		}
		sc.cands = append(sc.cands, c)
	}
	return sc
}

// fataler is what the checks need from *testing.T and *rapid.T alike.
type fataler interface {
	Fatalf(format string, args ...any)
}

// checkDecide runs Decide on sc and checks every invariant the engine
// promises, recomputing the expected first offer by brute force.
func checkDecide(t fataler, sc scenario) {
	in := sc.in
	loc := in.Loc
	if loc == nil {
		loc = time.UTC
	}
	pulled := 0
	run := in
	run.Candidates = counted(sc.cands, &pulled)
	dec := engine.Decide(run)
	fail := func(format string, args ...any) {
		t.Fatalf("%s\ndecision %+v\n%v", fmt.Sprintf(format, args...), dec, sc)
	}

	// Deterministic: the same input gives the same decision.
	if again := engine.Decide(sc.input()); !reflect.DeepEqual(dec, again) {
		fail("not deterministic: second run %+v", again)
	}

	slot, rules := in.Slot, in.Rules
	unit := slot.Seating != nextup.SeatingShared
	// kept: e may not be offered this slot (again): its latest offer of
	// it was made in its place in line, or is live (for good), or nobody
	// else was offered the slot after it ended (untilOther: until someone
	// else is, this decision's offers counted) (engine.Offered).
	kept := func(e nextup.Entry) (kept, untilOther bool) {
		var last *nextup.Offer
		for i, o := range in.History {
			if o.EntryID == e.ID && (last == nil || !o.CreatedAt.Before(last.CreatedAt)) {
				last = &in.History[i]
			}
		}
		switch {
		case last == nil:
			return false, false
		case !last.CreatedAt.Before(e.JoinedAt) || last.ResolvedAt == nil:
			return true, false
		}
		other := slices.ContainsFunc(in.History, func(o nextup.Offer) bool {
			return o.EntryID != e.ID && !o.CreatedAt.Before(*last.ResolvedAt)
		})
		return !other, !other
	}
	offeredHere := func(e nextup.Entry) bool { k, _ := kept(e); return k }
	live := false
	for _, o := range in.History {
		live = live || o.State.Live()
	}
	byID := map[string]engine.Candidate{}
	for _, c := range sc.cands {
		if _, ok := byID[c.Entry.ID]; !ok {
			byID[c.Entry.ID] = c
		}
	}

	// The move agrees with the offers.
	switch dec.Move {
	case nextup.MoveOffer, nextup.MoveRollOn:
		if len(dec.Offers) == 0 {
			fail("move %s without offers", dec.Move)
		}
	default:
		if len(dec.Offers) != 0 {
			fail("move %q with offers", dec.Move)
		}
	}
	if dec.Move == nextup.MoveNobodyFits && tried(in.History) > 0 {
		fail("nobody_fits after earlier offers")
	}
	if dec.Move == nextup.MoveHandBack && live {
		fail("hand-back while a live offer may still be claimed")
	}

	// Every offer fits, is new, is sent in the right window and by the
	// right channel; seats are never over-allocated; the daily cap holds.
	if unit && len(dec.Offers) > 1 {
		fail("unit slot with %d offers", len(dec.Offers))
	}
	if rules.MaxOffersPerSlot > 0 && len(dec.Offers) > 0 && tried(in.History)+len(dec.Offers) > rules.MaxOffersPerSlot {
		fail("try cap %d exceeded", rules.MaxOffersPerSlot)
	}
	work, seats := slot, 0
	seen := map[string]bool{}
	perPerson := map[string]int{}
	limit := slot.StartsAt.Add(-rules.MinLead)
	for i, o := range dec.Offers {
		c, ok := byID[o.EntryID]
		if !ok {
			fail("offer to %s, who is not a candidate", o.EntryID)
		}
		e := c.Entry
		if k, untilOther := kept(e); (k && !(untilOther && i > 0)) || seen[o.EntryID] {
			fail("%s offered this slot twice", o.EntryID)
		}
		seen[o.EntryID] = true
		if ok, why := engine.Fits(work, e, rules, loc, in.Now); !ok {
			fail("offer to %s, who does not fit: %s", o.EntryID, why)
		}
		wantSeats := e.PartySize
		if unit {
			wantSeats = slot.Capacity
		}
		if o.Seats != wantSeats || o.PartySize != e.PartySize {
			fail("offer to %s holds %d seats for a party of %d", o.EntryID, o.Seats, o.PartySize)
		}
		work.HeldSeats += o.Seats
		seats += o.Seats
		if ch, ok := engine.ChooseChannel(e, c.Suppressed); !ok || ch != o.Channel {
			fail("offer to %s by %q, want %q", o.EntryID, o.Channel, ch)
		}
		key := e.ContactKey()
		if rules.MaxOffersPerPersonPerDay > 0 && c.OffersToday+perPerson[key] >= rules.MaxOffersPerPersonPerDay {
			fail("offer to %s breaks the daily cap", o.EntryID)
		}
		perPerson[key]++
		if o.SendAt.Before(in.Now) || !o.ExpiresAt.After(o.SendAt) || o.ExpiresAt.After(limit) {
			fail("offer to %s: send %v expires %v, now %v, limit %v", o.EntryID, o.SendAt, o.ExpiresAt, in.Now, limit)
		}
		state, sendAt, expiresAt, _ := engine.OfferWindow(in.Now, slot.StartsAt, rules, loc)
		if o.State != state || !o.SendAt.Equal(sendAt) || !o.ExpiresAt.Equal(expiresAt) {
			fail("offer to %s not in the offer window (%s, %v, %v)", o.EntryID, state, sendAt, expiresAt)
		}
		if o.State == nextup.OfferPending && !o.SendAt.After(in.Now) {
			fail("pending offer sent now")
		}
	}
	if len(dec.Offers) > 0 && seats > slot.FreeSeats() {
		fail("%d seats offered, %d free", seats, slot.FreeSeats())
	}

	// Brute force: were the gates open, and who is the first candidate
	// that fits and passes the guardrails?
	_, _, _, windowOK := engine.OfferWindow(in.Now, slot.StartsAt, rules, loc)
	open := slot.StartsAt.After(in.Now) && !slot.HandedBack && slot.FreeSeats() > 0 &&
		!(unit && slot.HeldSeats > 0) && slot.StartsAt.Sub(in.Now) >= rules.MinLead &&
		!(rules.MaxOffersPerSlot > 0 && tried(in.History) >= rules.MaxOffersPerSlot) && windowOK
	first := ""
	for _, c := range sc.cands {
		if offeredHere(c.Entry) {
			continue
		}
		if ok, _ := engine.Fits(slot, c.Entry, rules, loc, in.Now); !ok {
			continue
		}
		if _, ok := engine.ChooseChannel(c.Entry, c.Suppressed); !ok {
			continue
		}
		if rules.MaxOffersPerPersonPerDay > 0 && c.OffersToday >= rules.MaxOffersPerPersonPerDay {
			continue
		}
		first = c.Entry.ID
		break
	}
	switch {
	case !open && (len(dec.Offers) > 0 || pulled > 0):
		fail("gates closed, yet %d offers and %d candidates pulled", len(dec.Offers), pulled)
	case open && first == "" && len(dec.Offers) > 0:
		fail("offers, but nobody should get one")
	case open && first != "" && (len(dec.Offers) == 0 || dec.Offers[0].EntryID != first):
		fail("first offer should go to %s", first)
	}

	// Decide stopped pulling as soon as it was done.
	if n := len(dec.Offers); n > 0 {
		done := unit || seats >= slot.FreeSeats() ||
			(rules.MaxOffersPerSlot > 0 && tried(in.History)+n >= rules.MaxOffersPerSlot)
		last := -1
		for i, c := range sc.cands {
			if c.Entry.ID == dec.Offers[n-1].EntryID {
				last = i
				break
			}
		}
		// (One who waited for someone else to be offered the slot first
		// is offered after the whole list was read.)
		if _, untilOther := kept(byID[dec.Offers[n-1].EntryID].Entry); done && !untilOther && pulled != last+1 {
			fail("done after candidate %d but pulled %d", last, pulled)
		}
	}
}

func TestDecideProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		checkDecide(t, genScenario(rapidSource{t}))
	})
}

// TestAddAwakeProperties checks AddAwake against its meaning: the awake
// time between t and the result is d (measured minute by minute), and the
// result is never inside quiet hours unless d is zero.
func TestAddAwakeProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := rapidSource{t}
		loc := pick(s, "loc", genLocs...)
		start := pick(s, "day", genDays...).Add(time.Duration(s.intn(0, 48*60, "t")) * time.Minute)
		q := &nextup.QuietHours{
			Start: nextup.TimeOfDay(15 * s.intn(0, 96, "quiet start")),
			End:   nextup.TimeOfDay(15 * s.intn(0, 96, "quiet end")),
		}
		if q.Start == q.End || (q.Start == 24*60 && q.End == 0) || (q.Start == 0 && q.End == 24*60) {
			return // no quiet hours, or quiet all day: covered by table tests
		}
		d := time.Duration(s.intn(1, 36*60, "d")) * time.Minute
		got := engine.AddAwake(start, d, q, loc)
		var awake time.Duration
		for c := start; c.Before(got); c = c.Add(time.Minute) {
			if in, _ := engine.InQuietHours(c, q, loc); !in {
				awake += time.Minute
			}
		}
		if awake != d {
			t.Fatalf("AddAwake(%v, %v, %v-%v, %v) = %v: %v awake, want %v", start, d, q.Start, q.End, loc, got, awake, d)
		}
		if in, _ := engine.InQuietHours(got.Add(-time.Nanosecond), q, loc); in {
			t.Fatalf("AddAwake = %v ends just after quiet time", got)
		}
	})
}

// TestQuietHoursProperties checks that InQuietHours and NextQuietStart
// agree: the end of a quiet period is awake (or the start of the next) and
// every minute before it is quiet; outside, nothing is quiet until the next
// start.
func TestQuietHoursProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := rapidSource{t}
		loc := pick(s, "loc", genLocs...)
		at := pick(s, "day", genDays...).Add(time.Duration(s.intn(0, 48*60, "t")) * time.Minute)
		q := &nextup.QuietHours{
			Start: nextup.TimeOfDay(15 * s.intn(0, 96, "quiet start")),
			End:   nextup.TimeOfDay(15 * s.intn(0, 96, "quiet end")),
		}
		if q.Start == q.End || (q.Start == 24*60 && q.End == 0) {
			return // no quiet hours
		}
		in, end := engine.InQuietHours(at, q, loc)
		if in {
			if !end.After(at) {
				t.Fatalf("quiet at %v ends at %v", at, end)
			}
			for c := at; c.Before(end); c = c.Add(time.Minute) {
				if in, _ := engine.InQuietHours(c, q, loc); !in {
					t.Fatalf("quiet at %v until %v, but not at %v", at, end, c)
				}
			}
			return
		}
		next := engine.NextQuietStart(at, q, loc)
		if next.Before(at) || next.Sub(at) > 49*time.Hour {
			t.Fatalf("next quiet start after %v is %v", at, next)
		}
		for c := at; c.Before(next); c = c.Add(time.Minute) {
			if in, _ := engine.InQuietHours(c, q, loc); in {
				t.Fatalf("awake at %v until %v, but quiet at %v", at, next, c)
			}
		}
		if in, _ := engine.InQuietHours(next, q, loc); !in {
			t.Fatalf("next quiet start %v is not quiet", next)
		}
	})
}

// tried counts the offers of a slot's history that did not end in a claim:
// the people tried for it, as the try cap and the hand-back rule count them.
func tried(history []nextup.Offer) int {
	n := 0
	for _, o := range history {
		if o.State != nextup.OfferClaimed {
			n++
		}
	}
	return n
}

// TestClaimWindowLadderProperties: for any ladder, lead and rules without
// quiet hours, an offer is sent at once and its window is the step with
// the smallest lead above the time to the start (the claim window when
// none is), cut at the start minus the minimum lead; it is never longer
// than the longest window the rules name.
func TestClaimWindowLadderProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		r := nextup.DefaultRules()
		r.QuietHours = nil
		r.ClaimWindow = time.Duration(rapid.IntRange(1, 600).Draw(t, "window_min")) * time.Minute
		r.MinLead = time.Duration(rapid.IntRange(0, 120).Draw(t, "lead_min")) * time.Minute
		longest := r.ClaimWindow
		n := rapid.IntRange(0, 4).Draw(t, "steps")
		used := map[time.Duration]bool{}
		for i := range n {
			lead := time.Duration(rapid.IntRange(1, 72).Draw(t, fmt.Sprint("under_h", i))) * time.Hour
			if used[lead] {
				continue
			}
			used[lead] = true
			w := time.Duration(rapid.IntRange(1, 240).Draw(t, fmt.Sprint("w_min", i))) * time.Minute
			longest = max(longest, w)
			r.ClaimWindowLadder = append(r.ClaimWindowLadder, nextup.LadderStep{LeadUnder: lead, Window: w})
		}
		// As UnmarshalJSON keeps it: in order of lead.
		slices.SortFunc(r.ClaimWindowLadder, func(a, b nextup.LadderStep) int { return int(a.LeadUnder - b.LeadUnder) })
		if errs := r.Validate(); len(errs) > 0 {
			t.Fatalf("rules drawn are invalid: %v", errs)
		}
		now := time.Date(2026, 6, 10, 10, 0, 0, 0, time.UTC)
		start := now.Add(time.Duration(rapid.IntRange(1, 96*60).Draw(t, "start_in_min")) * time.Minute)
		state, sendAt, expiresAt, ok := engine.OfferWindow(now, start, r, time.UTC)
		// The oracle: the smallest LeadUnder above the lead, found by
		// looking at every step.
		want, best := r.ClaimWindow, time.Duration(-1)
		for _, s := range r.ClaimWindowLadder {
			if start.Sub(now) < s.LeadUnder && (best < 0 || s.LeadUnder < best) {
				want, best = s.Window, s.LeadUnder
			}
		}
		end := now.Add(want)
		if limit := start.Add(-r.MinLead); end.After(limit) {
			end = limit
		}
		if state != nextup.OfferOffered || !sendAt.Equal(now) || !expiresAt.Equal(end) || ok != end.After(now) {
			t.Fatalf("OfferWindow = %s %v %v %v; want offered now, expiring %v (window %v)", state, sendAt, expiresAt, ok, end, want)
		}
		if expiresAt.Sub(sendAt) > longest {
			t.Fatalf("window %v is longer than any the rules name (%v)", expiresAt.Sub(sendAt), longest)
		}
	})
}
