package waitlist_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/insight"
)

// TestReplayMatchesTheLivePlace: random histories — people joining two
// services' lists (some with priority, a staff member, dates or a party),
// slots made free or booked and released, offers claimed, declined and
// left to lapse, people leaving, staff giving and taking priority, under
// a re-queue rule and a daily cap drawn from the seed — and after every
// step the replay of every entry, from the audit rows alone, says the
// place the store reports (EntryPosition) for each waiting entry and
// "not in line" for the rest; every slot it says an entry was skipped
// for names a reason, and a fit criterion it names is the one the
// engine's fit rule gives for the live slot and entry.
func TestReplayMatchesTheLivePlace(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("sqlite/seed=", seed), func(t *testing.T) {
			t.Parallel()
			replayProperty(t, seed, func(rules func(*nextup.Rules)) *bundle { return setupTB(t, rules) })
		})
	}
}

func TestReplayMatchesTheLivePlacePostgres(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			replayProperty(t, seed, func(rules func(*nextup.Rules)) *bundle {
				b := postgresBundle(t, 4)
				r := nextup.DefaultRules()
				rules(&r)
				biz, _, err := b.svc.CreateBusiness(b.ctx, waitlist.CreateBusinessParams{Name: "Salon 2", Timezone: "Europe/London", Rules: &r})
				if err != nil {
					t.Fatal(err)
				}
				b.biz = biz
				return b
			})
		})
	}
}

func replayProperty(t *testing.T, seed uint64, open func(func(*nextup.Rules)) *bundle) {
	rng := rand.New(rand.NewPCG(seed, 19))
	policies := []string{nextup.RequeueKeep, nextup.RequeueBack}
	policy := policies[rng.IntN(len(policies))]
	dailyCap := rng.IntN(2) // 0 (none) or 1
	downFit := rng.IntN(2) == 0
	var rules nextup.Rules
	b := open(func(r *nextup.Rules) {
		r.QuietHours = nil
		r.MaxOffersPerPersonPerDay = dailyCap
		r.Requeue = nextup.Requeue{Policy: policy}
		r.DownFit = downFit
		rules = *r
	})
	services := []string{"haircut", "colour"}
	staff := []string{"", "Ann", "Bo"}
	var entries []string
	var slots []nextup.Slot
	var booked []nextup.Slot // slots made booked, to release
	names := 0
	step := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (policy %s, daily cap %d, down-fit %v) step %d: %s", seed, policy, dailyCap, downFit, step, fmt.Sprintf(format, args...))
	}
	liveOffers := func() []nextup.Offer {
		var out []nextup.Offer
		for _, sl := range slots {
			for _, o := range b.getSlot(t, sl.ID).Offers {
				if o.State == nextup.OfferOffered && o.ExpiresAt.After(b.clock.Now()) {
					out = append(out, o)
				}
			}
		}
		return out
	}
	for step = 0; step < 45; step++ {
		switch x := rng.IntN(100); {
		case x < 30 || len(entries) < 3:
			names++
			p := waitlist.JoinParams{Service: services[rng.IntN(2)], PartySize: 1 + rng.IntN(3)/2}
			if rng.IntN(6) == 0 {
				p.Priority = true
			}
			if rng.IntN(5) == 0 {
				p.Staff = staff[1+rng.IntN(2)]
			}
			if rng.IntN(5) == 0 {
				p.Earliest = b.clock.Now().Add(time.Duration(2+rng.IntN(4)) * 24 * time.Hour)
			}
			if rng.IntN(5) == 0 {
				p.Latest = b.clock.Now().Add(time.Duration(3+rng.IntN(5)) * 24 * time.Hour)
			}
			if rng.IntN(8) == 0 {
				p.Availability = []nextup.Availability{{Days: []time.Weekday{time.Monday, time.Wednesday, time.Friday}, From: 9 * 60, To: 13 * 60}}
			}
			entries = append(entries, b.join(t, fmt.Sprintf("P%02d", names), p).ID)
		case x < 52:
			p := waitlist.SlotParams{Service: services[rng.IntN(2)], Staff: staff[rng.IntN(3)],
				StartsAt: b.clock.Now().Truncate(time.Hour).Add(time.Duration(24+rng.IntN(24*8)) * time.Hour)}
			if rng.IntN(3) == 0 {
				p.Seating, p.Capacity = nextup.SeatingShared, 2+rng.IntN(3)
			} else if rng.IntN(3) == 0 {
				p.Capacity = 2 // a table for two: a party of one fits only by down-fitting
			}
			zero := 0
			if rng.IntN(2) == 0 {
				p.BookedSeats = &zero
			}
			sl := b.slot(t, p)
			slots = append(slots, sl)
			if sl.BookedSeats > 0 {
				booked = append(booked, sl)
			}
		case x < 62 && len(booked) > 0:
			i := rng.IntN(len(booked))
			sl := booked[i]
			if sl.Seating != nextup.SeatingShared || sl.BookedSeats == 1 {
				booked = slices.Delete(booked, i, i+1)
			} else {
				booked[i].BookedSeats--
			}
			seats := sl.Capacity // a unit slot is released whole
			if sl.Seating == nextup.SeatingShared {
				seats = 1
			}
			if _, _, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, seats, "cancellation"); err != nil {
				fail("release %s: %v", sl.ID, err)
			}
		case x < 77:
			if live := liveOffers(); len(live) > 0 {
				o := live[rng.IntN(len(live))]
				if _, err := b.svc.Claim(b.ctx, b.token(t, o.ID)); err != nil {
					fail("claim %s: %v", o.ID, err)
				}
			}
		case x < 85:
			if live := liveOffers(); len(live) > 0 {
				o := live[rng.IntN(len(live))]
				if _, _, err := b.svc.Decline(b.ctx, b.token(t, o.ID)); err != nil {
					fail("decline %s: %v", o.ID, err)
				}
			}
		case x < 92:
			// Let every live offer lapse (and a new day begin, for the cap).
			b.clock.Advance(rules.ClaimWindow + time.Duration(rng.IntN(20))*time.Hour)
			if _, err := b.sweeper.RunDue(b.ctx); err != nil {
				fail("timers: %v", err)
			}
		case x < 94 && len(slots) > 0:
			// A shared slot grows or shrinks by a seat (refused below
			// what is taken: that changes nothing).
			sl := slots[rng.IntN(len(slots))]
			if sl.Seating == nextup.SeatingShared {
				live := b.getSlot(t, sl.ID).Slot
				if _, _, err := b.svc.Resize(b.ctx, b.biz.ID, sl.ID, max(1, live.Capacity-1+2*rng.IntN(2))); err != nil && nextup.ErrorCode(err) != nextup.CodeCapacityBelowTaken {
					fail("resize %s: %v", sl.ID, err)
				}
			}
		case x < 96:
			id := entries[rng.IntN(len(entries))]
			if b.entry(t, id).Entry.State == nextup.EntryWaiting {
				if _, _, err := b.svc.Leave(b.ctx, b.biz.ID, id, nextup.ActorStaff); err != nil {
					fail("leave %s: %v", id, err)
				}
			}
		default:
			id := entries[rng.IntN(len(entries))]
			if e := b.entry(t, id).Entry; e.State == nextup.EntryWaiting {
				prio := !e.Priority
				if _, _, err := b.svc.UpdateEntry(b.ctx, b.biz.ID, id, waitlist.EntryPatch{Priority: &prio}); err != nil {
					fail("priority of %s: %v", id, err)
				}
			}
		}
		b.clock.Advance(time.Duration(1+rng.IntN(90)) * time.Minute)
		for _, id := range entries {
			checkReplay(t, b, rules, id, fail)
		}
	}
}

// checkReplay compares the replay of entry id with the live entry.
func checkReplay(t *testing.T, b *bundle, rules nextup.Rules, id string, fail func(string, ...any)) {
	t.Helper()
	h, err := b.svc.History(b.ctx, b.biz.ID, id)
	if err != nil {
		fail("history of %s: %v", id, err)
	}
	e := b.entry(t, id).Entry
	var live int
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		live, err = tx.EntryPosition(b.ctx, e)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(h.Positions) == 0 {
		fail("entry %s: no positions", id)
	}
	last := h.Positions[len(h.Positions)-1]
	switch {
	case e.State == nextup.EntryWaiting && (!last.InLine || last.Position != live):
		fail("entry %s (waiting): replayed place %d (in line %v, %s), the store says %d\n%+v", id, last.Position, last.InLine, last.Cause, live, h.Positions)
	case e.State != nextup.EntryWaiting && last.InLine:
		fail("entry %s is %s, the replay has it in line at %d (%s)", id, e.State, last.Position, last.Cause)
	}
	// The status page's cheaper replay, from the entry's join on, says
	// the same of the slots it was passed over for.
	biz, err := b.svc.GetBusiness(b.ctx, b.biz.ID)
	if err != nil {
		t.Fatal(err)
	}
	passed, err := b.svc.PassedOver(b.ctx, biz, e)
	if err != nil {
		fail("passed over of %s: %v", id, err)
	}
	var full, cheap []string
	for _, so := range h.Slots {
		if so.Outcome == insight.OutcomeSkipped {
			full = append(full, so.SlotID+":"+so.Why)
		}
	}
	for _, so := range passed {
		cheap = append(cheap, so.SlotID+":"+so.Why)
	}
	if !slices.Equal(full, cheap) {
		fail("entry %s: passed over, from its join on: %v; from the whole story: %v", id, cheap, full)
	}
	for _, so := range h.Slots {
		if so.Outcome == insight.OutcomeOffered {
			continue
		}
		if so.Why == "" || so.Why == insight.WhyUnexplained || so.Explanation == "" {
			fail("entry %s, slot %s: skipped without a reason: %+v", id, so.SlotID, so)
		}
		sl := b.getSlot(t, so.SlotID).Slot
		for _, r := range so.Reasons {
			fitCode := slices.Contains([]string{engine.FitWindow, engine.FitAvailability, engine.FitStaff, engine.FitLead, engine.FitParty}, r.Code)
			if !fitCode && r.Code != insight.WhyEarlierInLine {
				continue
			}
			if r.Code == engine.FitParty && sl.Seating == nextup.SeatingShared {
				continue // the seats free then are the row's, not the live slot's
			}
			free := sl
			free.BookedSeats, free.HeldSeats = 0, 0
			w := e
			w.State = nextup.EntryWaiting
			ok, code := engine.Fits(free, w, rules, b.loc, r.At)
			if fitCode && (ok || code != r.Code) {
				fail("entry %s, slot %s: the replay says %q at %v, the fit rule says ok=%v %q", id, sl.ID, r.Code, r.At, ok, code)
			}
			if r.Code == insight.WhyEarlierInLine && !ok {
				fail("entry %s, slot %s: the replay says someone earlier in line had it, but the entry did not fit (%s)", id, sl.ID, code)
			}
		}
	}
}

// TestEstimatedWait: people who joined the haircut list and booked from
// it after 1, 2, … days make the estimate, a range from the lower to the
// upper quartile of their waits; with fewer than five there is none, and
// an estimate is kept for an hour before it is read again.
func TestEstimatedWait(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil; r.MaxOffersPerPersonPerDay = 0 })
	book := func(days int) {
		t.Helper()
		e := b.join(t, fmt.Sprintf("W%d", days), waitlist.JoinParams{})
		b.clock.Advance(time.Duration(days) * 24 * time.Hour)
		sl := b.slot(t, waitlist.SlotParams{StartsAt: b.clock.Now().Add(48 * time.Hour)})
		_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 1, "cancellation")
		if err != nil || len(moves) != 1 || moves[0].EntryID != e.ID {
			t.Fatalf("release for %s: %+v %v", e.Name, moves, err)
		}
		if _, err := b.svc.Claim(b.ctx, b.token(t, moves[0].OfferID)); err != nil {
			t.Fatal(err)
		}
	}
	probe := b.join(t, "Probe", waitlist.JoinParams{Service: "colour"}) // another list: its own estimate
	haircut := nextup.Entry{BusinessID: b.biz.ID, Service: "haircut"}
	for _, d := range []int{1, 2, 3, 4} {
		book(d)
	}
	if _, ok, err := b.svc.EstimateWait(b.ctx, b.biz, haircut); err != nil || ok {
		t.Fatalf("four bookings: estimate %v %v, want none", ok, err)
	}
	b.clock.Advance(insight.EstimateTTL)
	for _, d := range []int{5, 6, 7, 8} {
		book(d)
	}
	w, ok, err := b.svc.EstimateWait(b.ctx, b.biz, haircut)
	// Waits of 1…8 days: the quartiles by nearest rank are the 2nd and 6th.
	if err != nil || !ok || w.Samples != 8 || w.Low != 2*24*time.Hour || w.High != 6*24*time.Hour ||
		w.Words != "A rough guide, from the last 8 bookings: people waiting for haircut booked 2–6 days after joining." {
		t.Fatalf("estimate = %+v %v %v", w, ok, err)
	}
	book(0) // the clock stays within the hour
	if again, _, _ := b.svc.EstimateWait(b.ctx, b.biz, haircut); again.Samples != 8 {
		t.Errorf("within the hour the estimate was read again: %+v", again)
	}
	b.clock.Advance(insight.EstimateTTL)
	if again, _, _ := b.svc.EstimateWait(b.ctx, b.biz, haircut); again.Samples != 9 {
		t.Errorf("after the hour: %+v, want 9 bookings", again)
	}
	if _, ok, _ := b.svc.EstimateWait(b.ctx, b.biz, b.entry(t, probe.ID).Entry); ok {
		t.Error("the colour list, where nobody booked, has an estimate")
	}
}

// TestWhyNamesTheEnginesReason: one slot each, passed over one person
// for a reason the engine has — the daily cap, quiet hours, another offer
// held, dates, party size, too close to the start — and the replay and
// "why" name that reason, in words that name nobody else.
func TestWhyNamesTheEnginesReason(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.MaxOffersPerPersonPerDay = 1 }) // quiet 21:00–08:00, lead 15 min
	release := func(p waitlist.SlotParams) (nextup.Slot, []nextup.Move) {
		t.Helper()
		sl := b.slot(t, p)
		_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "cancellation")
		if err != nil {
			t.Fatal(err)
		}
		return sl, moves
	}
	why := func(e nextup.Entry, sl nextup.Slot, code, words string) {
		t.Helper()
		w, err := b.svc.WhyNot(b.ctx, b.biz.ID, e.ID, sl.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Offered || len(w.Reasons) == 0 || w.Reasons[len(w.Reasons)-1].Code != code || !strings.Contains(w.Explanation, words) {
			t.Errorf("why not %s for %s: %+v, want %s (%q)", e.Name, sl.ID, w, code, words)
		}
		for _, n := range []string{"Cap", "Abe", "Big"} {
			if n != e.Name && strings.Contains(w.Explanation, n) {
				t.Errorf("the explanation for %s names %s: %s", e.Name, n, w.Explanation)
			}
		}
	}
	dee := b.join(t, "Dee", waitlist.JoinParams{})
	// The daily cap: Dee declines one, the next goes to Abe.
	_, moves := release(waitlist.SlotParams{StartsAt: b.at(1, 11, 0)})
	if len(moves) != 1 || moves[0].EntryID != dee.ID {
		t.Fatalf("first release: %+v", moves)
	}
	if _, _, err := b.svc.Decline(b.ctx, b.token(t, moves[0].OfferID)); err != nil {
		t.Fatal(err)
	}
	abe := b.join(t, "Abe", waitlist.JoinParams{})
	capped, moves := release(waitlist.SlotParams{StartsAt: b.at(1, 12, 0)})
	if len(moves) != 1 || moves[0].EntryID != abe.ID {
		t.Fatalf("capped release: %+v", moves)
	}
	why(dee, capped, insight.WhyDailyCap, "the most offers a day")
	// Holding an offer: Abe holds the 12:00, a 13:00 frees up and goes
	// to Big.
	big := b.join(t, "Big", waitlist.JoinParams{PartySize: 2})
	held, moves := release(waitlist.SlotParams{StartsAt: b.at(1, 13, 0), Capacity: 2})
	if len(moves) != 1 || moves[0].EntryID != big.ID {
		t.Fatalf("third release: %+v", moves)
	}
	why(abe, held, insight.WhyHoldingOffer, "holding an offer of another slot")
	// Dates and party: Cat wants next week only, and a party of one
	// does not take a table for two without down-fitting.
	cat := b.join(t, "Cat", waitlist.JoinParams{Earliest: b.at(7, 0, 0)})
	why(dee, held, engine.FitParty, "without room for your party of 1")
	why(cat, held, engine.FitParty, "without room for your party of 1") // joined after: the criterion that rules it out
	// Too close to its start: 10 minutes away, under the 15 min lead.
	b.clock.Set(b.at(0, 15, 0))
	soon, _ := release(waitlist.SlotParams{StartsAt: b.at(0, 15, 10)})
	why(cat, soon, engine.FitWindow, "outside the dates you asked for")
	// Quiet hours: at 22:00 a slot at 08:05 tomorrow frees up; no claim
	// window fits between 08:00 and its start, so it goes to the staff.
	b.clock.Set(b.at(0, 22, 0))
	night, moves := release(waitlist.SlotParams{StartsAt: b.at(1, 8, 5), Staff: "Ana"})
	if len(moves) != 1 || moves[0].Move != nextup.MoveHandBack {
		t.Fatalf("night release: %+v", moves)
	}
	why(dee, night, insight.WhyQuietHours, "during the business's quiet hours")
	h, err := b.svc.History(b.ctx, b.biz.ID, dee.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, so := range h.Slots {
		got = append(got, so.Outcome+":"+so.Why)
	}
	if want := "offered:declined skipped:daily_cap skipped:party skipped:lead skipped:quiet_hours"; strings.Join(got, " ") != want {
		t.Errorf("Dee's slots = %s, want %s", strings.Join(got, " "), want)
	}
}

// TestWhyStaffChoseSomeoneElse: seats an event frees after its promotion
// cutoff go to the staff, who put Cy, behind Bea, first in line: Bea's
// "why" says the staff chose, not that the record cannot explain it.
func TestWhyStaffChoseSomeoneElse(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Supper", b.at(1, 19, 0), b.at(1, 22, 0), 1
	p.Settings.PromotionCutoff = 48 * time.Hour
	ev, err := b.svc.CreateEvent(b.ctx, b.biz.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	var regs []waitlist.Registration
	for _, name := range []string{"Ann", "Bea", "Cy"} {
		b.clock.Advance(time.Minute)
		r, _, err := b.svc.Register(b.ctx, b.biz.ID, ev.ID, waitlist.RegisterParams{Name: name, Email: strings.ToLower(name) + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, r)
	}
	if _, _, err := b.svc.CancelRegistration(b.ctx, b.biz.ID, ev.ID, regs[0].Entry.ID, nextup.ActorCustomer); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(5 * time.Minute)
	if _, _, err := b.svc.Promote(b.ctx, b.biz.ID, ev.ID, regs[2].Entry.ID, "olive", "a regular"); err != nil {
		t.Fatal(err)
	}
	w, err := b.svc.WhyNot(b.ctx, b.biz.ID, regs[1].Entry.ID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, r := range w.Reasons {
		codes = append(codes, r.Code)
	}
	if got := strings.Join(codes, " "); got != insight.WhyHandedBack+" "+insight.WhyStaffChoice || !strings.Contains(w.Explanation, "the staff offered it to someone directly") {
		t.Errorf("why not Bea: %s: %s", got, w.Explanation)
	}
}

// TestWhyAfterAResize: a table for two nobody fits is made a table for
// one, and goes to Bo, ahead of Dee: Dee's reason is that someone earlier
// in line had it, read with the capacity the resize gave, not the table
// for two it was made as.
func TestWhyAfterAResize(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	b.join(t, "Bo", waitlist.JoinParams{})
	dee := b.join(t, "Dee", waitlist.JoinParams{})
	zero := 0
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 11, 0), Capacity: 2, BookedSeats: &zero})
	b.clock.Advance(time.Minute)
	if _, moves, err := b.svc.Resize(b.ctx, b.biz.ID, sl.ID, 1); err != nil || len(moves) != 1 || moves[0].EntryID == dee.ID {
		t.Fatalf("resize: %+v %v", moves, err)
	}
	w, err := b.svc.WhyNot(b.ctx, b.biz.ID, dee.ID, sl.ID)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, r := range w.Reasons {
		codes = append(codes, r.Code)
	}
	if got := strings.Join(codes, " "); got != engine.FitParty+" "+insight.WhyEarlierInLine {
		t.Errorf("why not Dee: %s (%s)", got, w.Explanation)
	}
}
