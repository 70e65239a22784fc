package sim

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// opDef is one kind of step. run reports false when there is nothing for
// it to act on (no offer to claim, no booking to cancel); it must then have
// changed nothing. faultable operations make exactly one use-case call, so
// the fault operation can run them with a store fault armed.
type opDef struct {
	name      string
	weight    int
	faultable bool
	run       func(w *world) bool
}

var opTable []*opDef

func init() {
	opTable = []*opDef{
		{"create_business", 2, true, (*world).opCreateBusiness},
		{"create_slot", 12, true, (*world).opCreateSlot},
		{"create_event", 3, true, (*world).opCreateEvent},
		{"join", 14, true, (*world).opJoin},
		{"join_event", 4, true, (*world).opJoinEvent},
		{"join_again", 3, true, (*world).opJoinAgain},
		{"update_entry", 4, true, (*world).opUpdateEntry},
		{"release", 10, true, (*world).opRelease},
		{"release_wrong", 2, false, (*world).opReleaseWrong},
		{"resize", 4, true, (*world).opResize},
		{"claim", 12, true, (*world).opClaim},
		{"claim_stale", 3, false, (*world).opClaimStale},
		{"claim_repeat", 2, false, (*world).opClaimRepeat},
		{"claim_garbage", 1, false, (*world).opClaimGarbage},
		{"claim_concurrent", 3, false, (*world).opClaimConcurrent},
		{"decline", 6, true, (*world).opDecline},
		{"leave", 3, true, (*world).opLeave},
		{"withdraw", 3, true, (*world).opWithdraw},
		{"cancel_booking", 4, true, (*world).opCancelBooking},
		{"no_show", 2, true, (*world).opNoShow},
		{"view_claim", 3, true, (*world).opViewClaim},
		{"resolve_handback", 1, true, (*world).opResolveHandBack},
		{"suppress", 1, false, (*world).opSuppress},
		{"create_event_rsvp", 3, true, (*world).opCreateEventRSVP},
		{"register", 8, true, (*world).opRegister},
		{"register_public", 4, true, (*world).opRegisterPublic},
		{"claim_by_status", 4, true, (*world).opClaimByStatus},
		{"decline_by_status", 2, true, (*world).opDeclineByStatus},
		{"cancel_registration", 3, true, (*world).opCancelRegistration},
		{"promote", 2, true, (*world).opPromote},
		{"resize_event", 2, true, (*world).opResizeEvent},
		{"check_in", 1, true, (*world).opCheckIn},
		{"event_no_show", 1, true, (*world).opEventNoShow},
		{"advance", 14, false, (*world).opAdvance},
		{"restart", 1, false, (*world).opRestart},
		{"fault", 5, false, (*world).opFault},
		{"fault_timers", 2, false, (*world).opFaultTimers},
		{"relay", 10, false, (*world).opRelay},
		{"fault_relay", 3, false, (*world).opRelayFault},
		{"sms_undelivered", 3, true, (*world).opSMSUndelivered},
	}
}

func opByName(name string) *opDef {
	for _, o := range opTable {
		if o.name == name {
			return o
		}
	}
	panic("sim: no operation " + name)
}

func weighted(w *world, ops []*opDef) *opDef {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := w.intn(total)
	for _, o := range ops {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	return ops[len(ops)-1]
}

func (w *world) pickOp() *opDef { return weighted(w, opTable) }

var (
	timezones = []string{"Europe/London", "America/New_York", "Asia/Kolkata", "UTC"}
	services  = []string{"cut", "colour", "massage"}
	staffs    = []string{"", "", "", "ana", "ben"}
)

// ---------------------------------------------------------------- targets

func (w *world) pickBiz() *mBiz {
	if len(w.m.bizIDs) == 0 {
		return nil
	}
	return w.m.biz[pick(w, w.m.bizIDs)]
}

func filterSorted[V any](m map[string]V, keep func(V) bool) []V {
	var out []V
	for _, k := range sortedKeys(m) {
		if keep(m[k]) {
			out = append(out, m[k])
		}
	}
	return out
}

// pickOffer draws an offer the model has a token for.
func (w *world) pickOffer(keep func(nextup.Offer) bool) (nextup.Offer, bool) {
	os := filterSorted(w.prev.offers, func(o nextup.Offer) bool {
		mo := w.m.offers[o.ID]
		return mo != nil && mo.token != "" && keep(o)
	})
	if len(os) == 0 {
		return nextup.Offer{}, false
	}
	return pick(w, os), true
}

func (w *world) pickEntry(keep func(nextup.Entry) bool) (nextup.Entry, bool) {
	es := filterSorted(w.prev.entries, keep)
	if len(es) == 0 {
		return nextup.Entry{}, false
	}
	return pick(w, es), true
}

func (w *world) pickSlot(keep func(nextup.Slot) bool) (nextup.Slot, bool) {
	ss := filterSorted(w.prev.slots, keep)
	if len(ss) == 0 {
		return nextup.Slot{}, false
	}
	return pick(w, ss), true
}

func (w *world) future(s nextup.Slot) bool { return s.StartsAt.After(w.clock.Now()) }

func moveNotes(moves []nextup.Move) string {
	if len(moves) == 0 {
		return "no moves"
	}
	var parts []string
	for _, m := range moves {
		switch m.Move {
		case nextup.MoveOffer, nextup.MoveRollOn:
			parts = append(parts, fmt.Sprintf("%s %s→%s", m.Move, m.SlotID, m.EntryID))
		case nextup.MoveHandBack:
			parts = append(parts, fmt.Sprintf("hand_back %s (%s)", m.SlotID, m.Reason))
		default:
			parts = append(parts, fmt.Sprintf("%s %s", m.Move, m.SlotID))
		}
	}
	return strings.Join(parts, ", ")
}

// ---------------------------------------------------------------- businesses

func (w *world) randomRules() nextup.Rules {
	r := nextup.DefaultRules()
	r.ClaimWindow = pick(w, []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, 2 * time.Hour})
	switch w.intn(4) {
	case 0:
		r.QuietHours = nil
	case 1:
		r.QuietHours = &nextup.QuietHours{Start: 21 * 60, End: 8 * 60}
	case 2:
		r.QuietHours = &nextup.QuietHours{Start: 22*60 + 30, End: 7 * 60}
	case 3:
		r.QuietHours = &nextup.QuietHours{Start: 12 * 60, End: 14 * 60}
	}
	r.TimeCriticalThroughQuiet = w.chance(0.5)
	r.MinLead = pick(w, []time.Duration{0, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour})
	r.MaxOffersPerPersonPerDay = pick(w, []int{0, 1, 2, 3})
	r.MaxOffersPerSlot = pick(w, []int{0, 0, 1, 2, 3})
	r.DownFit = w.chance(0.5)
	r.FollowUp.AfterShare = pick(w, []float64{0.5, 0.5, 0.25, 0.75})
	if w.chance(0.4) { // the lead-time ladder: shorter windows for slots starting soon
		r.ClaimWindowLadder = []nextup.LadderStep{{LeadUnder: 2 * time.Hour, Window: pick(w, []time.Duration{time.Minute, 3 * time.Minute})},
			{LeadUnder: 24 * time.Hour, Window: pick(w, []time.Duration{5 * time.Minute, 20 * time.Minute})}}
	}
	// Cross-list dedupe: a booking withdraws the person's entries it makes
	// pointless (checkDedupe).
	r.Dedupe = pick(w, []string{nextup.DedupeOff, nextup.DedupeOff, nextup.DedupeSameService, nextup.DedupeAll})
	r.Requeue = pick(w, []nextup.Requeue{{Policy: nextup.RequeueKeep}, {Policy: nextup.RequeueKeep},
		{Policy: nextup.RequeueBack}, {Policy: nextup.RequeueBack, DropAfter: 2}, {Policy: nextup.RequeueDrop, DropAfter: 1},
		{Policy: nextup.RequeueKeep, DropAfter: 3}})
	return r
}

func (w *world) opCreateBusiness() bool {
	if len(w.m.bizIDs) >= 2 {
		return false
	}
	tz := pick(w, timezones)
	rules := w.randomRules()
	bad := len(w.m.bizIDs) > 0 && w.chance(0.05)
	if bad {
		rules.MaxOffersPerSlot = -1
	}
	name := fmt.Sprintf("Business %d", len(w.m.bizIDs)+1)
	var b nextup.Business
	err := w.invoke(func() error {
		var err error
		b, _, err = w.svc.CreateBusiness(w.ctx, waitlist.CreateBusinessParams{Name: name, Timezone: tz, Rules: &rules})
		return err
	})
	w.note("%s tz=%s rules=%s", name, tz, js(rules))
	var want []string
	if bad {
		want = []string{nextup.CodeValidation}
	}
	if !w.outcome("create business", err, want...) {
		if w.faulted() && b.ID != "" {
			w.mustNotExist(b.ID)
		}
		return true
	}
	rules.Version = 1
	if js(b.Rules) != js(rules) || b.Timezone != tz || b.ID == "" {
		w.fail("check model: created business %s has rules %s tz %s, asked for %s %s", b.ID, js(b.Rules), b.Timezone, js(rules), tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		w.fail("load %s: %v", tz, err)
	}
	svcs := slices.Clone(services[:2])
	if w.chance(0.2) {
		svcs = slices.Clone(services)
	}
	w.m.biz[b.ID] = &mBiz{id: b.ID, tz: tz, loc: loc, rules: rules, services: svcs}
	w.m.bizIDs = append(w.m.bizIDs, b.ID)
	w.newBiz = true
	w.note("→ %s", b.ID)
	return true
}

// mustNotExist checks that a business whose creation failed is not there.
func (w *world) mustNotExist(id string) {
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		_, err := tx.BusinessGet(w.ctx, id)
		return err
	})
	if !errors.Is(err, nextup.ErrNotFound) {
		w.fail("check fault: business %s exists after its creation failed (lookup: %v)", id, err)
	}
}

// ---------------------------------------------------------------- slots

// service draws a business's service, the first one most often, so that
// slots and waiters meet.
func (w *world) service(b *mBiz) string {
	if w.chance(0.6) {
		return b.services[0]
	}
	return pick(w, b.services)
}

func (w *world) slotStart() time.Time {
	now := w.clock.Now()
	var d time.Duration
	switch r := w.intn(100); {
	case r < 10:
		d = w.between(time.Minute, 40*time.Minute) // may be too soon for a claim window
	case r < 75:
		d = w.between(40*time.Minute, 24*time.Hour)
	default:
		d = w.between(24*time.Hour, 4*24*time.Hour)
	}
	return now.Add(d).Truncate(15 * time.Minute).Add(15 * time.Minute)
}

func (w *world) opCreateSlot() bool { return w.createSlot(false) }

func (w *world) opCreateEvent() bool { return w.createSlot(true) }

// bizWithRoom picks a business with fewer than 12 future slots, to add
// one; nil when the pick has no room (or there is no business yet).
func (w *world) bizWithRoom() *mBiz {
	b := w.pickBiz()
	if b == nil {
		return nil
	}
	future := 0
	for _, id := range b.slotIDs {
		if w.m.slots[id].start.After(w.clock.Now()) {
			future++
		}
	}
	if future >= 12 {
		return nil
	}
	return b
}

func (w *world) createSlot(event bool) bool {
	b := w.bizWithRoom()
	if b == nil {
		return false
	}
	start := w.slotStart()
	p := waitlist.SlotParams{StartsAt: start, EndsAt: start.Add(pick(w, []time.Duration{30 * time.Minute, time.Hour}))}
	if event {
		p.Kind, p.Seating, p.Title = nextup.KindEvent, nextup.SeatingShared, fmt.Sprintf("Event %d", len(b.slotIDs)+1)
		p.Capacity = 2 + w.intn(7)
	} else {
		p.Kind, p.Service, p.Staff = nextup.KindSlot, w.service(b), pick(w, staffs)
		if w.chance(0.4) {
			p.Seating, p.Capacity = nextup.SeatingShared, 1+w.intn(6)
		} else {
			p.Seating, p.Capacity = nextup.SeatingUnit, pick(w, []int{1, 1, 1, 1, 2, 4})
			if p.Capacity > 1 && w.chance(0.5) {
				p.MinParty = 1 + w.intn(p.Capacity)
			}
		}
	}
	var booked int
	switch {
	case p.Seating == nextup.SeatingUnit && w.chance(0.5):
		booked = p.Capacity
	case p.Seating == nextup.SeatingUnit:
		booked = 0
	case w.chance(0.3):
		booked = p.Capacity
	default:
		booked = w.intn(p.Capacity + 1)
	}
	p.BookedSeats = &booked
	bad := w.chance(0.03)
	// Two ways to be refused, chosen without a draw of the seed's
	// stream (a refused step changes nothing, so the rest of the run is
	// the same whichever it is).
	switch {
	case bad && start.Minute()%30 == 0:
		p.EndsAt = p.StartsAt
	case bad: // started already: a new slot must be in the future
		p.StartsAt = w.clock.Now().Add(-time.Duration(start.Minute()+1) * time.Minute)
		p.EndsAt = p.StartsAt.Add(time.Hour)
	}
	var sl nextup.Slot
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		sl, moves, err = w.svc.CreateSlot(w.ctx, b.id, p)
		return err
	})
	w.note("%s %s %s cap=%d booked=%d minparty=%d svc=%s staff=%s start=%s", b.id, p.Kind, p.Seating, p.Capacity, booked, p.MinParty, p.Service, p.Staff, start.Format(time.RFC3339))
	var want []string
	if bad {
		want = []string{nextup.CodeValidation}
	}
	if !w.outcome("create slot", err, want...) {
		return true
	}
	minParty := max(p.MinParty, 1)
	if sl.ID == "" || sl.Capacity != p.Capacity || sl.BookedSeats != booked || sl.MinParty != minParty || !sl.StartsAt.Equal(start) || sl.Seating != p.Seating || sl.Kind != p.Kind {
		w.fail("check model: created slot %s is %s, asked for %s", sl.ID, js(sl), js(p))
	}
	w.m.slots[sl.ID] = &mSlot{id: sl.ID, event: sl.Event, biz: b.id, kind: p.Kind, service: p.Service, staff: p.Staff, start: start, end: p.EndsAt,
		capacity: p.Capacity, seating: p.Seating, minParty: minParty, outside: booked}
	b.slotIDs = append(b.slotIDs, sl.ID)
	w.note("→ %s; %s", sl.ID, moveNotes(moves))
	return true
}

func (w *world) opRelease() bool {
	sl, ok := w.pickSlot(func(s nextup.Slot) bool { return s.BookedSeats > 0 })
	if !ok {
		return false
	}
	if !w.future(sl) && w.chance(0.7) {
		if s2, ok := w.pickSlot(func(s nextup.Slot) bool { return s.BookedSeats > 0 && w.future(s) }); ok {
			sl = s2
		}
	}
	n := 0
	if sl.Seating == nextup.SeatingUnit {
		if w.chance(0.5) {
			n = sl.Capacity
		}
	} else if w.chance(0.8) {
		n = 1 + w.intn(sl.BookedSeats)
	}
	eff := n
	if eff == 0 {
		eff = 1
		if sl.Seating == nextup.SeatingUnit {
			eff = sl.Capacity
		}
	}
	reason := pick(w, []string{"", waitlist.ReasonCancellation, waitlist.ReasonNoShow, waitlist.ReasonOpening})
	var out nextup.Slot
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		out, moves, err = w.svc.Release(w.ctx, sl.BusinessID, sl.ID, n, reason)
		return err
	})
	w.note("%s seats=%d (%d) reason=%q booked=%d", sl.ID, n, eff, reason, sl.BookedSeats)
	if !w.outcome("release", err) {
		return true
	}
	freed := sl.BookedSeats - out.BookedSeats
	w.freed[sl.ID] = true
	ms := w.m.slots[sl.ID]
	fromOutside := min(ms.outside, eff)
	ms.outside -= fromOutside
	// Bookings made through nextup go whole, newest first.
	books := w.bookingsOf(sl.ID)
	ended := 0
	endTo := nextup.BookingCancelled
	if reason == waitlist.ReasonNoShow {
		endTo = nextup.BookingNoShow
	}
	var wasBooked []nextup.Booking
	for _, b := range w.prev.slotBook[sl.ID] {
		if b.State == nextup.BookingBooked {
			wasBooked = append(wasBooked, b)
		}
	}
	for _, b := range wasBooked {
		now := books[b.ID]
		if now.State == nextup.BookingBooked {
			if ended > 0 {
				w.fail("check release: booking %s stayed booked while an older one was ended (newest first)", b.ID)
			}
			continue
		}
		if now.State != endTo {
			w.fail("check release: booking %s ended as %s, want %s", b.ID, now.State, endTo)
		}
		ended += b.Seats
	}
	if freed != fromOutside+ended || freed < eff || (ended > 0 && freed-eff >= slices.MaxFunc(wasBooked, func(a, b nextup.Booking) int { return a.Seats - b.Seats }).Seats) {
		w.fail("check release: asked for %d seats, %d freed (%d from outside nextup, %d from bookings)", eff, freed, fromOutside, ended)
	}
	w.note("freed %d; %s", freed, moveNotes(moves))
	return true
}

func (w *world) bookingsOf(slotID string) map[string]nextup.Booking {
	out := map[string]nextup.Booking{}
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		bs, err := tx.BookingListBySlot(w.ctx, slotID)
		for _, b := range bs {
			out[b.ID] = b
		}
		return err
	})
	if err != nil {
		w.fail("read bookings: %v", err)
	}
	return out
}

func (w *world) opReleaseWrong() bool {
	sl, ok := w.pickSlot(func(nextup.Slot) bool { return true })
	if !ok {
		return false
	}
	var n int
	var want string
	switch {
	case sl.Seating == nextup.SeatingUnit && sl.BookedSeats == 0 && w.chance(0.5):
		n, want = sl.Capacity, nextup.CodeNotEnoughBooked
	case sl.Seating == nextup.SeatingUnit:
		n = sl.Capacity + 1
		if sl.Capacity > 1 && w.chance(0.5) {
			n = 1 + w.intn(sl.Capacity-1)
		}
		want = nextup.CodeValidation
	default:
		n, want = sl.BookedSeats+1+w.intn(3), nextup.CodeNotEnoughBooked
	}
	err := w.invoke(func() error {
		_, _, err := w.svc.Release(w.ctx, sl.BusinessID, sl.ID, n, waitlist.ReasonCancellation)
		return err
	})
	w.note("%s %s cap=%d booked=%d seats=%d", sl.ID, sl.Seating, sl.Capacity, sl.BookedSeats, n)
	w.outcome("release wrong seats", err, want)
	return true
}

func (w *world) opResize() bool {
	sl, ok := w.pickSlot(w.future)
	if !ok {
		return false
	}
	c := sl.Capacity + 1 + w.intn(3)
	if w.chance(0.5) {
		c = max(1, sl.Capacity-1-w.intn(3))
		if c == sl.Capacity {
			c++
		}
	}
	var want []string
	switch taken := sl.BookedSeats + sl.HeldSeats; {
	case sl.Seating == nextup.SeatingUnit && taken > 0 && c != sl.Capacity:
		want = []string{nextup.CodeCapacityBelowTaken}
	case c < sl.MinParty:
		want = []string{nextup.CodeValidation}
	case c < taken:
		want = []string{nextup.CodeCapacityBelowTaken}
	}
	var out nextup.Slot
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		out, moves, err = w.svc.Resize(w.ctx, sl.BusinessID, sl.ID, c)
		return err
	})
	w.note("%s %s cap %d→%d booked=%d held=%d", sl.ID, sl.Seating, sl.Capacity, c, sl.BookedSeats, sl.HeldSeats)
	if !w.outcome("resize", err, want...) {
		return true
	}
	if out.Capacity != c {
		w.fail("check model: resized slot %s has capacity %d, want %d", sl.ID, out.Capacity, c)
	}
	w.m.slots[sl.ID].capacity = c
	if c > sl.Capacity || sl.Seating == nextup.SeatingUnit {
		w.freed[sl.ID] = true
	}
	w.note("%s", moveNotes(moves))
	return true
}

// ---------------------------------------------------------------- entries

func (w *world) person(b *mBiz) *person {
	if len(b.people) > 0 && w.chance(0.2) {
		return pick(w, b.people)
	}
	n := len(b.people) + 1
	p := &person{name: fmt.Sprintf("Person %d", n)}
	switch r := w.intn(10); {
	case r < 4:
		p.email = fmt.Sprintf("p%d.%s@example.com", n, b.id[len(b.id)-4:])
	case r < 7:
		p.phone = fmt.Sprintf("+44 7700 9%05d", 10*n+w.intn(10))
	default:
		p.email = fmt.Sprintf("p%d.%s@example.com", n, b.id[len(b.id)-4:])
		p.phone = fmt.Sprintf("+44 7700 9%05d", 10*n+w.intn(10))
	}
	b.people = append(b.people, p)
	w.addAddresses(b.id, p)
	return p
}

// criteria fills a join's party, window, staff, availability, priority,
// channel and joined-at. bad asks for a window that ends in the past.
func (w *world) criteria(jp *waitlist.JoinParams, p *person, event, bad bool) {
	now := w.clock.Now()
	switch r := w.intn(100); {
	case r < 60:
		jp.PartySize = 1
	case r < 85:
		jp.PartySize = 2
	case r < 96:
		jp.PartySize = 3 + w.intn(2)
	default:
		jp.PartySize = 5 + w.intn(2)
	}
	quarter := func(t time.Time) time.Time { return t.Truncate(15 * time.Minute) }
	switch r := w.intn(100); {
	case r < 55:
	case r < 70:
		jp.Earliest = quarter(now.Add(w.between(-2*time.Hour, 48*time.Hour)))
	case r < 80:
		jp.Latest = quarter(now.Add(w.between(2*time.Hour, 4*24*time.Hour)))
	default:
		jp.Earliest = quarter(now.Add(w.between(-2*time.Hour, 48*time.Hour)))
		jp.Latest = jp.Earliest.Add(w.between(time.Hour, 4*24*time.Hour)).Truncate(time.Minute)
	}
	if bad {
		jp.Latest = now.Add(-time.Hour).Truncate(time.Minute)
	}
	if !event && w.chance(0.1) {
		jp.Staff = pick(w, []string{"ana", "ben"})
	}
	if w.chance(0.1) {
		jp.Availability = []nextup.Availability{w.availability()}
	}
	jp.Priority = w.chance(0.1)
	switch r := w.intn(10); {
	case r < 2 && p.email != "":
		jp.Channel = nextup.ChannelEmail
	case r < 4 && p.phone != "":
		jp.Channel = nextup.ChannelSMS
	}
	if w.chance(0.05) {
		jp.JoinedAt = now.Add(-w.between(time.Hour, 48*time.Hour))
	}
}

func (w *world) availability() nextup.Availability {
	var days []time.Weekday
	for d := time.Sunday; d <= time.Saturday; d++ {
		if w.chance(0.5) {
			days = append(days, d)
		}
	}
	if len(days) == 0 {
		days = []time.Weekday{time.Weekday(w.intn(7))}
	}
	from := nextup.TimeOfDay(6*60 + 60*w.intn(8))
	to := min(from+nextup.TimeOfDay(120*(1+w.intn(6))), 24*60)
	return nextup.Availability{Days: days, From: from, To: to}
}

func (w *world) opJoin() bool {
	b := w.pickBiz()
	if b == nil || w.activeEntries(b.id) >= 30 {
		return false
	}
	p := w.person(b)
	return w.join(b, p, w.service(b), "")
}

func (w *world) opJoinEvent() bool {
	b := w.pickBiz()
	if b == nil || w.activeEntries(b.id) >= 30 {
		return false
	}
	var events []string
	for _, id := range b.slotIDs {
		if s := w.m.slots[id]; s.kind == nextup.KindEvent && s.start.After(w.clock.Now()) {
			events = append(events, id)
		}
	}
	if len(events) == 0 {
		return false
	}
	return w.join(b, w.person(b), "", pick(w, events))
}

// opJoinAgain: someone already on a list joins again, for the same thing
// (already_waiting while the first entry is active) or for another
// service (two entries of one person share the daily cap).
func (w *world) opJoinAgain() bool {
	e, ok := w.pickEntry(func(nextup.Entry) bool { return true })
	if !ok {
		return false
	}
	me := w.m.entries[e.ID]
	b := w.m.biz[me.biz]
	svc, ev := me.service, me.eventID
	if ev == "" && w.chance(0.4) {
		svc = w.service(b)
	}
	return w.join(b, me.person, svc, ev)
}

func (w *world) activeEntries(bizID string) int {
	n := 0
	for _, e := range w.prev.entries {
		if e.BusinessID == bizID && e.Active() {
			n++
		}
	}
	return n
}

func (w *world) join(b *mBiz, p *person, service, eventID string) bool {
	jp := waitlist.JoinParams{Name: p.name, Email: p.email, Phone: p.phone, Service: service, EventID: eventID, Source: "sim"}
	bad := w.chance(0.03)
	w.criteria(&jp, p, eventID != "", bad)
	// A window drawn to start up to two hours ago and last an hour or
	// more can, rarely, have ended already: refused like a bad one.
	bad = bad || (!jp.Latest.IsZero() && jp.Latest.Before(w.clock.Now()))
	key := contactKey(p.email, p.phone)
	var want []string
	if bad {
		want = []string{nextup.CodeValidation}
	} else {
		for _, e := range w.prev.entries {
			me := w.m.entries[e.ID]
			if e.BusinessID == b.id && e.Active() && me.key() == key && me.service == service && me.eventID == eventID {
				want = []string{nextup.CodeAlreadyWaiting}
			}
		}
	}
	var res waitlist.JoinResult
	err := w.invoke(func() error {
		var err error
		res, err = w.svc.Join(w.ctx, b.id, jp)
		return err
	})
	what := service
	if eventID != "" {
		what = "event " + eventID
	}
	w.note("%s %s (%s) %s party=%d window=[%s, %s] staff=%q avail=%v prio=%v ch=%q", b.id, p.name, key, what, jp.PartySize,
		fmtT(jp.Earliest), fmtT(jp.Latest), jp.Staff, len(jp.Availability) > 0, jp.Priority, jp.Channel)
	if !w.outcome("join", err, want...) {
		return true
	}
	e := res.Entry
	if e.ID == "" || e.Seq <= 0 || (e.State != nextup.EntryWaiting && e.State != nextup.EntryOffered) || e.PartySize != jp.PartySize ||
		!e.Earliest.Equal(jp.Earliest) || !e.Latest.Equal(jp.Latest) || e.Service != service || e.EventID != eventID {
		w.fail("check model: joined entry is %s, asked for %s", js(e), js(jp))
	}
	if !jp.JoinedAt.IsZero() && !e.JoinedAt.Equal(jp.JoinedAt) || jp.JoinedAt.IsZero() && !e.JoinedAt.Equal(w.clock.Now()) {
		w.fail("check model: entry %s joined at %s, want %s (or now)", e.ID, fmtT(e.JoinedAt), fmtT(jp.JoinedAt))
	}
	w.m.entries[e.ID] = &mEntry{
		id: e.ID, biz: b.id, person: p, email: p.email, phone: p.phone, channel: jp.Channel, service: service, eventID: eventID,
		party: jp.PartySize, earliest: jp.Earliest, latest: jp.Latest, staff: jp.Staff, avail: jp.Availability,
		priority: jp.Priority, joinedAt: e.JoinedAt, seq: e.Seq, statusTok: res.StatusToken,
	}
	b.entryIDs = append(b.entryIDs, e.ID)
	w.touched[e.ID] = true
	w.note("→ %s seq=%d %s; %s", e.ID, e.Seq, e.State, moveNotes(res.Moves))
	return true
}

func fmtT(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("01-02T15:04")
}

func (w *world) opUpdateEntry() bool {
	e, ok := w.pickEntry(func(e nextup.Entry) bool { return e.Active() || w.chance(0.2) })
	if !ok {
		return false
	}
	me := w.m.entries[e.ID]
	w.touched[e.ID] = true
	now := w.clock.Now()
	var p waitlist.EntryPatch
	next := *me
	if w.chance(0.4) {
		v := !me.priority
		p.Priority, next.priority = &v, v
	}
	if w.chance(0.4) {
		var ea, la time.Time
		if w.chance(0.6) {
			ea = now.Add(w.between(-time.Hour, 36*time.Hour)).Truncate(15 * time.Minute)
		}
		if w.chance(0.6) {
			la = now.Add(w.between(-time.Hour, 4*24*time.Hour)).Truncate(15 * time.Minute)
		}
		p.Earliest, p.Latest, next.earliest, next.latest = &ea, &la, ea, la
	}
	if me.eventID == "" && w.chance(0.3) {
		s := pick(w, staffs)
		p.Staff, next.staff = &s, s
	}
	if w.chance(0.3) {
		n := 1 + w.intn(4)
		p.PartySize, next.party = &n, n
	}
	if w.chance(0.2) {
		var av []nextup.Availability
		if w.chance(0.5) {
			av = []nextup.Availability{w.availability()}
		}
		p.Availability, next.avail = &av, av
	}
	var want []string
	criteria := p.Earliest != nil || p.Latest != nil || p.Staff != nil || p.PartySize != nil || p.Availability != nil
	switch {
	case !e.Active():
		want = []string{"entry_not_active"}
	case e.State == nextup.EntryOffered && criteria:
		want = []string{nextup.CodeEntryHasLiveOffer}
	case !next.latest.IsZero() && (next.latest.Before(now) || (!next.earliest.IsZero() && next.latest.Before(next.earliest))):
		want = []string{nextup.CodeValidation}
	}
	var out nextup.Entry
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		out, moves, err = w.svc.UpdateEntry(w.ctx, me.biz, e.ID, p)
		return err
	})
	w.note("%s (%s) prio=%v window=[%s, %s] staff=%q party=%d avail=%d", e.ID, e.State, next.priority, fmtT(next.earliest), fmtT(next.latest), next.staff, next.party, len(next.avail))
	if !w.outcome("update entry", err, want...) {
		return true
	}
	*me = next
	if out.PartySize != me.party || out.Priority != me.priority || !out.Latest.Equal(me.latest) || out.Staff != me.staff {
		w.fail("check model: updated entry is %s", js(out))
	}
	w.note("%s", moveNotes(moves))
	return true
}

func (w *world) opLeave() bool {
	e, ok := w.pickEntry(func(e nextup.Entry) bool { return e.Active() || w.chance(0.15) })
	if !ok {
		return false
	}
	me := w.m.entries[e.ID]
	w.touched[e.ID] = true
	var want []string
	switch e.State {
	case nextup.EntryBooked, nextup.EntryExpired:
		want = []string{"entry_not_active"}
	case nextup.EntryLeft:
		w.unchanged = true
	}
	byToken := w.chance(0.3)
	var out nextup.Entry
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		if byToken {
			out, moves, err = w.svc.LeaveByStatusToken(w.ctx, me.statusTok)
		} else {
			out, moves, err = w.svc.Leave(w.ctx, me.biz, e.ID, pick(w, []string{nextup.ActorStaff, nextup.ActorCustomer}))
		}
		return err
	})
	w.note("%s (%s) by status link=%v", e.ID, e.State, byToken)
	if !w.outcome("leave", err, want...) {
		return true
	}
	if out.State != nextup.EntryLeft {
		w.fail("check model: entry %s is %s after leaving", e.ID, out.State)
	}
	w.note("%s", moveNotes(moves))
	return true
}

// opSuppress records an SMS STOP or an email bounce, as the relay would.
func (w *world) opSuppress() bool {
	e, ok := w.pickEntry(func(e nextup.Entry) bool { return e.Active() })
	if !ok {
		return false
	}
	me := w.m.entries[e.ID]
	s := nextup.Suppression{BusinessID: me.biz, Channel: nextup.ChannelSMS, Address: me.phone, Reason: "STOP", At: w.clock.Now()}
	if me.phone == "" || (me.email != "" && w.chance(0.5)) {
		s.Channel, s.Address, s.Reason = nextup.ChannelEmail, me.email, "bounce"
	}
	s.Address = nextup.AddressKey(s.Channel, s.Address) // as the relay and the SMS webhook write it
	err := w.fs.InTx(w.ctx, func(tx nextup.Tx) error { return tx.SuppressionAdd(w.ctx, s) })
	if err != nil {
		w.fail("add suppression: %v", err)
	}
	if _, ok := w.m.suppress[supKey{s.BusinessID, s.Channel, s.Address}]; !ok {
		w.m.suppress[supKey{s.BusinessID, s.Channel, s.Address}] = 0
	}
	w.note("%s %s %s", me.biz, s.Channel, s.Address)
	return true
}

// ---------------------------------------------------------------- offers

// claimWant is the model's prediction for a claim of o at now.
func (w *world) claimWant(o nextup.Offer) (repeat bool, want []string) {
	sl := w.prev.slots[o.SlotID]
	// "Just filled" means booked: a link whose slot rolled on to someone
	// still deciding is told it expired (or was withdrawn).
	taken := sl.Capacity-sl.BookedSeats < o.Seats
	switch o.State {
	case nextup.OfferOffered:
		if w.clock.Now().Before(o.ExpiresAt) {
			return false, nil
		}
		if taken {
			return false, []string{nextup.CodeSlotTaken}
		}
		return false, []string{nextup.CodeOfferExpired}
	case nextup.OfferPending:
		return false, []string{nextup.CodeOfferPending}
	case nextup.OfferClaimed:
		return true, nil
	case nextup.OfferDeclined:
		return false, []string{nextup.CodeOfferDeclined}
	case nextup.OfferCancelled:
		if taken {
			return false, []string{nextup.CodeSlotTaken}
		}
		return false, []string{nextup.CodeOfferWithdrawn}
	default: // expired
		if taken {
			return false, []string{nextup.CodeSlotTaken}
		}
		return false, []string{nextup.CodeOfferExpired}
	}
}

func (w *world) claim(o nextup.Offer) {
	repeat, want := w.claimWant(o)
	if len(want) > 0 || repeat {
		w.unchanged = true
	}
	tok := w.m.offers[o.ID].token
	var res waitlist.ClaimResult
	err := w.invoke(func() error {
		var err error
		res, err = w.svc.Claim(w.ctx, tok)
		return err
	})
	sl := w.prev.slots[o.SlotID]
	w.note("%s (%s, %d seats) slot %s (%d free) entry %s", o.ID, o.State, o.Seats, o.SlotID, sl.FreeSeats(), o.EntryID)
	if !w.outcome("claim", err, want...) {
		return
	}
	w.checkClaimResult(o, res, repeat)
}

func (w *world) checkClaimResult(o nextup.Offer, res waitlist.ClaimResult, repeat bool) {
	mo := w.m.offers[o.ID]
	b := res.Booking
	if res.Repeat != repeat || b.OfferID != o.ID || b.Seats != o.Seats || b.SlotID != o.SlotID || b.EntryID != o.EntryID || b.ID == "" {
		w.fail("check claim: claim of %s (repeat=%v) returned %s, repeat=%v", o.ID, repeat, js(b), res.Repeat)
	}
	if repeat {
		if b.ID != mo.bookingID {
			w.fail("check claim: a repeated claim of %s returned booking %s, the first claim made %s", o.ID, b.ID, mo.bookingID)
		}
		w.st.repeats++
		return
	}
	mo.bookingID = b.ID
	w.note("→ booking %s", b.ID)
}

func (w *world) opClaim() bool {
	o, ok := w.pickOffer(func(o nextup.Offer) bool {
		return o.State == nextup.OfferOffered || (o.State == nextup.OfferPending && w.chance(0.3))
	})
	if !ok {
		return false
	}
	w.claim(o)
	return true
}

func (w *world) opClaimStale() bool {
	o, ok := w.pickOffer(func(o nextup.Offer) bool { return isFinal(o.State) && o.State != nextup.OfferClaimed })
	if !ok {
		return false
	}
	w.claim(o)
	return true
}

func (w *world) opClaimRepeat() bool {
	o, ok := w.pickOffer(func(o nextup.Offer) bool { return o.State == nextup.OfferClaimed })
	if !ok {
		return false
	}
	w.claim(o)
	return true
}

// opClaimGarbage opens, claims or declines links that were never issued.
func (w *world) opClaimGarbage() bool {
	b := make([]byte, nextup.TokenBytes)
	for i := range b {
		b[i] = byte(w.intn(256))
	}
	tok := base64.RawURLEncoding.EncodeToString(b)
	switch w.intn(4) {
	case 0:
		tok = ""
	case 1:
		if o, ok := w.pickOffer(func(nextup.Offer) bool { return true }); ok {
			t := w.m.offers[o.ID].token
			tok = t[:len(t)-1] + string("AB"[w.intn(2)]) // one character off
			if tok == t {
				tok = t + "x"
			}
		}
	}
	w.unchanged = true
	var err error
	switch w.intn(3) {
	case 0:
		err = w.invoke(func() error { _, err := w.svc.Claim(w.ctx, tok); return err })
		w.note("claim %q", tok)
	case 1:
		err = w.invoke(func() error { _, _, err := w.svc.Decline(w.ctx, tok); return err })
		w.note("decline %q", tok)
	default:
		err = w.invoke(func() error { _, err := w.svc.ViewClaim(w.ctx, tok); return err })
		w.note("view %q", tok)
	}
	w.outcome("garbage token", err, nextup.CodeNotFound)
	return true
}

// opClaimConcurrent: 2-4 taps on one claim link at once. Exactly one
// makes the booking; the others get the same booking back.
func (w *world) opClaimConcurrent() bool {
	now := w.clock.Now()
	o, ok := w.pickOffer(func(o nextup.Offer) bool { return o.State == nextup.OfferOffered && now.Before(o.ExpiresAt) })
	if !ok {
		return false
	}
	k := 2 + w.intn(3)
	tok := w.m.offers[o.ID].token
	type out struct {
		res   waitlist.ClaimResult
		err   error
		panic any
	}
	outs := make([]out, k)
	start := make(chan struct{})
	var wg sync.WaitGroup
	claim := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				outs[i].panic = r
			}
		}()
		outs[i].res, outs[i].err = w.svc.Claim(w.ctx, tok)
	}
	racers := 0
	if w.be.Optimistic {
		claim(0) // see Backend.Optimistic
		racers = 1
	}
	for i := racers; i < k; i++ {
		wg.Go(func() {
			<-start
			claim(i)
		})
	}
	close(start)
	wg.Wait()
	w.note("%s × %d", o.ID, k)
	first := 0
	var booking string
	for i, r := range outs {
		if r.panic != nil {
			w.fail("check no panics: concurrent claim %d panicked: %v", i, r.panic)
		}
		if r.err != nil {
			w.fail("check claim: concurrent claim %d of %s failed: %v", i, o.ID, r.err)
		}
		if !r.res.Repeat {
			first++
		}
		if booking == "" {
			booking = r.res.Booking.ID
		}
		if r.res.Booking.ID != booking || r.res.Booking.OfferID != o.ID {
			w.fail("check claim: concurrent claims of %s returned bookings %s and %s", o.ID, booking, r.res.Booking.ID)
		}
	}
	if first != 1 {
		w.fail("check claim: %d of %d concurrent claims of %s made a booking, want exactly 1", first, k, o.ID)
	}
	w.m.offers[o.ID].bookingID = booking
	w.st.concurrent++
	w.note("→ booking %s", booking)
	return true
}

func (w *world) opDecline() bool {
	o, ok := w.pickOffer(func(o nextup.Offer) bool { return o.State.Live() || w.chance(0.25) })
	if !ok {
		return false
	}
	var want []string
	switch o.State {
	case nextup.OfferDeclined:
		w.unchanged = true
	case nextup.OfferClaimed:
		want = []string{"offer_claimed"}
	case nextup.OfferCancelled:
		want = []string{nextup.CodeOfferWithdrawn}
	case nextup.OfferExpired:
		want = []string{nextup.CodeOfferExpired}
	}
	var out nextup.Offer
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		out, moves, err = w.svc.Decline(w.ctx, w.m.offers[o.ID].token)
		return err
	})
	w.note("%s (%s) slot %s", o.ID, o.State, o.SlotID)
	if !w.outcome("decline", err, want...) {
		return true
	}
	if out.State != nextup.OfferDeclined || out.ID != o.ID {
		w.fail("check model: declined offer %s is %s", o.ID, out.State)
	}
	w.note("%s", moveNotes(moves))
	return true
}

// The status page is a second door to an entry's live offer: Claim and
// Decline there act on whatever offer the entry holds at that moment,
// through the same conditional writes as the offer's own link. An entry
// holding none is told the offer ended (offer_expired) and nothing
// changes.

// statusTarget draws an entry with a status link, most often one that
// holds an offer, and returns its live offer (nil for none).
func (w *world) statusTarget() (nextup.Entry, *mEntry, *nextup.Offer, bool) {
	offered := w.chance(0.8)
	e, ok := w.pickEntry(func(e nextup.Entry) bool {
		me := w.m.entries[e.ID]
		return me != nil && me.statusTok != "" && (!offered || e.State == nextup.EntryOffered)
	})
	if !ok {
		return e, nil, nil, false
	}
	for _, id := range sortedKeys(w.prev.offers) {
		if o := w.prev.offers[id]; o.EntryID == e.ID && o.State.Live() {
			return e, w.m.entries[e.ID], &o, true
		}
	}
	return e, w.m.entries[e.ID], nil, true
}

func (w *world) opClaimByStatus() bool {
	e, me, o, ok := w.statusTarget()
	if !ok {
		return false
	}
	repeat, want := false, []string{nextup.CodeOfferExpired}
	if o != nil {
		repeat, want = w.claimWant(*o)
	}
	if len(want) > 0 || repeat {
		w.unchanged = true
	}
	var res waitlist.ClaimResult
	err := w.invoke(func() error {
		var err error
		res, err = w.svc.ClaimByStatus(w.ctx, me.statusTok)
		return err
	})
	w.note("entry %s (%s) live offer %s", e.ID, e.State, js(o))
	if !w.outcome("claim by status", err, want...) {
		return true
	}
	w.checkClaimResult(*o, res, repeat)
	return true
}

func (w *world) opDeclineByStatus() bool {
	e, me, o, ok := w.statusTarget()
	if !ok {
		return false
	}
	var want []string
	switch {
	case o == nil:
		want = []string{nextup.CodeOfferExpired}
	case o.State == nextup.OfferPending: // not sent: nothing to answer yet
		want = []string{nextup.CodeOfferPending}
	}
	var out nextup.Offer
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		out, moves, err = w.svc.DeclineByStatus(w.ctx, me.statusTok)
		return err
	})
	w.note("entry %s (%s) live offer %s", e.ID, e.State, js(o))
	if !w.outcome("decline by status", err, want...) {
		return true
	}
	if out.State != nextup.OfferDeclined || out.ID != o.ID {
		w.fail("check model: declining %s's live offer %s from the status page gave %s", e.ID, o.ID, js(out))
	}
	w.note("%s", moveNotes(moves))
	return true
}

func (w *world) opWithdraw() bool {
	o, ok := w.pickOffer(func(o nextup.Offer) bool { return o.State.Live() || w.chance(0.2) })
	if !ok {
		return false
	}
	var want []string
	if !o.State.Live() {
		want = []string{"offer_not_live"}
	}
	var out nextup.Offer
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		out, moves, err = w.svc.Withdraw(w.ctx, o.BusinessID, o.ID)
		return err
	})
	w.note("%s (%s) slot %s", o.ID, o.State, o.SlotID)
	if !w.outcome("withdraw", err, want...) {
		return true
	}
	if out.State != nextup.OfferCancelled {
		w.fail("check model: withdrawn offer %s is %s", o.ID, out.State)
	}
	w.note("%s", moveNotes(moves))
	return true
}

func (w *world) opViewClaim() bool {
	o, ok := w.pickOffer(func(o nextup.Offer) bool { return o.State.Live() || w.chance(0.3) })
	if !ok {
		return false
	}
	if isFinal(o.State) || o.SeenAt != nil {
		w.unchanged = true
	}
	var info waitlist.ClaimInfo
	err := w.invoke(func() error {
		var err error
		info, err = w.svc.ViewClaim(w.ctx, w.m.offers[o.ID].token)
		return err
	})
	w.note("%s (%s)", o.ID, o.State)
	if !w.outcome("view claim", err) {
		return true
	}
	got := info.Offer
	if got.ID != o.ID || got.State != o.State || got.SlotID != o.SlotID || info.Slot.ID != o.SlotID || info.Entry.ID != o.EntryID {
		w.fail("check view: viewing %s showed %s", o.ID, js(info.Offer))
	}
	if o.State.Live() && (got.SeenAt == nil || (o.SeenAt == nil && !got.SeenAt.Equal(w.clock.Now()))) {
		w.fail("check view: viewing live offer %s did not record it seen (seen_at %v)", o.ID, got.SeenAt)
	}
	if (o.State == nextup.OfferClaimed) != (info.Booking != nil) || (info.Booking != nil && info.Booking.ID != w.m.offers[o.ID].bookingID) {
		w.fail("check view: viewing %s (%s) showed booking %s", o.ID, o.State, js(info.Booking))
	}
	return true
}

// ---------------------------------------------------------------- bookings

func (w *world) endBooking(noShow bool) bool {
	bk, ok := func() (nextup.Booking, bool) {
		bs := filterSorted(w.prev.bookings, func(b nextup.Booking) bool { return b.State == nextup.BookingBooked || w.chance(0.15) })
		if len(bs) == 0 {
			return nextup.Booking{}, false
		}
		return pick(w, bs), true
	}()
	if !ok {
		return false
	}
	var want []string
	if bk.State != nextup.BookingBooked {
		want = []string{"booking_ended"}
	}
	var out nextup.Booking
	var moves []nextup.Move
	err := w.invoke(func() error {
		var err error
		if noShow {
			out, moves, err = w.svc.NoShow(w.ctx, bk.BusinessID, bk.ID)
		} else {
			out, moves, err = w.svc.CancelBooking(w.ctx, bk.BusinessID, bk.ID, pick(w, []string{"", "customer called"}))
		}
		return err
	})
	w.note("%s (%s) slot %s seats=%d", bk.ID, bk.State, bk.SlotID, bk.Seats)
	if !w.outcome("end booking", err, want...) {
		return true
	}
	wantState := nextup.BookingCancelled
	if noShow {
		wantState = nextup.BookingNoShow
	}
	if out.State != wantState || out.ID != bk.ID {
		w.fail("check model: ended booking %s is %s, want %s", bk.ID, out.State, wantState)
	}
	w.freed[bk.SlotID] = true
	w.note("%s", moveNotes(moves))
	return true
}

func (w *world) opCancelBooking() bool { return w.endBooking(false) }

func (w *world) opNoShow() bool { return w.endBooking(true) }

func (w *world) opResolveHandBack() bool {
	hbs := filterSorted(w.prev.handbacks, func(h nextup.HandBack) bool { return h.State == nextup.HandBackOpen })
	if len(hbs) == 0 {
		return false
	}
	h := pick(w, hbs)
	var out nextup.HandBack
	err := w.invoke(func() error {
		var err error
		out, err = w.svc.ResolveHandBack(w.ctx, h.BusinessID, h.ID)
		return err
	})
	w.note("%s slot %s (%s)", h.ID, h.SlotID, h.Reason)
	if !w.outcome("resolve hand-back", err) {
		return true
	}
	w.hbTouched = true
	if out.State != nextup.HandBackResolved {
		w.fail("check model: resolved hand-back %s is %s", h.ID, out.State)
	}
	return true
}

// ---------------------------------------------------------------- time

func (w *world) advanceBy() time.Duration {
	switch r := w.intn(100); {
	case r < 45:
		return w.between(time.Second, 10*time.Minute)
	case r < 72:
		return w.between(10*time.Minute, 2*time.Hour)
	case r < 90:
		// Just past the next due timer.
		var next time.Time
		err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
			var err error
			next, err = tx.TimerNextDue(w.ctx)
			return err
		})
		if err != nil && !errors.Is(err, nextup.ErrNotFound) {
			w.fail("next due timer: %v", err)
		}
		if now := w.clock.Now(); err == nil && next.After(now) {
			return next.Sub(now) + w.between(0, 3*time.Second)
		}
		return w.between(time.Minute, time.Hour)
	default:
		return w.between(2*time.Hour, 26*time.Hour)
	}
}

func (w *world) opAdvance() bool {
	d := w.advanceBy()
	err := w.invoke(func() error { return timer.Advance(w.ctx, w.clock, w.sweep, d) })
	w.note("by %s", d)
	if err != nil {
		w.fail("check timers: Advance by %s: %v", d, err)
	}
	w.advanced, w.timerDirty = true, false
	return true
}

// opRestart closes the store and opens the same database again, as a
// restarted process would: every row must be as it was, and timers keep
// firing.
func (w *world) opRestart() bool {
	before := w.journal()
	if err := w.db.Close(); err != nil {
		w.fail("close store: %v", err)
	}
	db, err := w.be.Open(w.ctx)
	if err != nil {
		w.fail("reopen %s store: %v", w.be.Name, err)
	}
	w.db = db
	w.fs.setInner(db)
	if d := diffDump(before, w.journal(), "before", "after"); d != "" {
		w.fail("check restart: the state differs after reopening the store: %s", d)
	}
	if d := sameState(w.prev, w.read(nil)); d != "" {
		w.fail("check restart: the state differs after reopening the store: %s", d)
	}
	w.st.restarts++
	w.note("reopened %s", before.digest())
	if w.chance(0.5) {
		d := w.advanceBy()
		err := w.invoke(func() error { return timer.Advance(w.ctx, w.clock, w.sweep, d) })
		if err != nil {
			w.fail("check timers: Advance by %s after restart: %v", d, err)
		}
		w.advanced, w.timerDirty = true, false
		w.note("then advanced by %s", d)
	}
	return true
}

// ---------------------------------------------------------------- faults

// opFault runs one use case with a store fault armed: the Nth Tx call of
// its transaction fails (an error, or a panic standing for the process
// dying there). The use case must fail and nothing it did may be visible.
func (w *world) opFault() bool {
	var ops []*opDef
	for _, o := range opTable {
		if o.faultable {
			ops = append(ops, o)
		}
	}
	o := weighted(w, ops)
	before := w.journal()
	p := &faultPlan{at: 1 + w.intn(pick(w, []int{4, 12, 40})), panic: w.chance(0.3)}
	w.plan = p
	w.fs.arm(p)
	ran := o.run(w)
	w.fs.disarm()
	if !ran {
		return false
	}
	w.op = "fault/" + o.name
	w.st.ops["fault/"+o.name]++
	w.note("fault: %s", p)
	if !p.fired {
		w.st.faultsMissed++
		return true
	}
	w.st.faults++
	if p.panic {
		w.st.faultPanics++
	}
	if p.swallowed {
		w.st.swallowed[p.method]++
	}
	if !w.faultOK {
		w.fail("check fault: the operation did not report the use case's outcome")
	}
	if w.faultErr == nil {
		w.fail("check fault: the use case returned no error after its transaction failed (%s)", p)
	}
	if !errors.Is(w.faultErr, errInjected) && strict {
		w.fail("check errors: a store fault (%s) came back as %q: %v", p, nextup.ErrorCode(w.faultErr), w.faultErr)
	}
	if !errors.Is(w.faultErr, errInjected) {
		k := fmt.Sprintf("%s (%s at %s)", nextup.ErrorCode(w.faultErr), o.name, p.method)
		if w.st.faultMasked[k] == 0 {
			w.st.faultMaskedSeed[k] = fmt.Sprintf("seed %d step %d", w.seed, w.step)
		}
		w.st.faultMasked[k]++
	}
	if d := diffDump(before, w.journal(), "before", "after"); d != "" {
		w.fail("check fault: a failed use case left changes behind: %s", d)
	}
	if d := sameState(w.prev, w.read(nil)); d != "" {
		w.fail("check fault: a failed use case left changes behind: %s", d)
	}
	w.unchanged = true
	return true
}

// opFaultTimers advances the clock with a fault in one of the sweeper's
// transactions: a claim of due timers or a handler fails or dies half-way.
// Other timers' effects commit; the failed timer comes back when its
// lease lapses.
func (w *world) opFaultTimers() bool {
	d := w.advanceBy()
	p := &faultPlan{skipTx: w.intn(3), at: 1 + w.intn(pick(w, []int{3, 10, 25})), panic: w.chance(0.3)}
	w.fs.arm(p)
	err := w.invoke(func() error { return timer.Advance(w.ctx, w.clock, w.sweep, d) })
	w.fs.disarm()
	w.note("by %s, fault: %s", d, p)
	w.advanced = true
	if !p.fired {
		if err != nil {
			w.fail("check timers: Advance by %s: %v", d, err)
		}
		w.timerDirty = false
		return true
	}
	w.timerDirty = true
	w.st.timerFaults++
	if err != nil {
		w.note("advance: %v", err)
	}
	return true
}
