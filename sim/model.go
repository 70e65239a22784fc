package sim

import (
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

// The model is the simulation's own record of what it asked for, in plain
// structs: the businesses and their rules, the slots with the seats booked
// outside nextup, the people and their waitlist criteria, the opt-outs and
// the claim tokens read from the outbox. The checks hold the store's state
// against it with rules written here from DESIGN.md, not with the engine:
// fits, fair order, the channel and the daily cap are re-implemented below.
// Only the claim window around quiet hours (engine.OfferWindow) is borrowed,
// because it is a pure time calculation with its own table tests.
type model struct {
	biz     map[string]*mBiz
	bizIDs  []string // creation order
	slots   map[string]*mSlot
	entries map[string]*mEntry
	offers  map[string]*mOffer
	// suppress holds the opt-outs, each with the id of the audit row that
	// recorded it (0: one that predates every offer it could matter to),
	// so that an offer made in the same relay round before an address was
	// refused is held to the channels open when it was made.
	suppress map[supKey]int64
	// direct maps the bookings of registrations confirmed at once
	// (Register, no offer) to their entries.
	direct map[string]string
	// lapse is what the re-queue rule did after each offer its person
	// declined or let lapse (requeueKeep, requeueBack, requeueDrop).
	lapse map[string]string
	// waitTold holds the registrations made through the public event
	// page that went to the waitlist: each has one waitlist confirmation
	// (a message of no offer), and nobody else has one.
	waitTold map[string]bool
	// deduped holds the entries a booking of their person withdrew
	// (checkDedupe), each told once.
	deduped map[string]bool
}

func newModel() *model {
	return &model{
		biz:      map[string]*mBiz{},
		slots:    map[string]*mSlot{},
		entries:  map[string]*mEntry{},
		offers:   map[string]*mOffer{},
		suppress: map[supKey]int64{},
		direct:   map[string]string{},
		lapse:    map[string]string{},
		waitTold: map[string]bool{},
		deduped:  map[string]bool{},
	}
}

type mBiz struct {
	id       string
	tz       string
	loc      *time.Location
	rules    nextup.Rules
	services []string
	people   []*person
	slotIDs  []string // creation order
	entryIDs []string // creation order
}

// person is someone who may join a business's waitlists, several times.
type person struct {
	name  string
	email string
	phone string
}

type mSlot struct {
	id       string
	event    *nextup.EventSettings // an event's settings as created
	biz      string
	kind     nextup.SlotKind
	service  string
	staff    string
	start    time.Time
	end      time.Time
	capacity int
	seating  nextup.Seating
	minParty int
	// outside is the number of seats booked outside nextup: what the slot
	// was created with, less what releases took from them first.
	outside int
}

type mEntry struct {
	id        string
	biz       string
	person    *person
	email     string
	phone     string
	channel   nextup.Channel
	service   string
	eventID   string
	party     int
	earliest  time.Time
	latest    time.Time
	staff     string
	avail     []nextup.Availability
	priority  bool
	joinedAt  time.Time
	seq       int64
	statusTok string
	// lapses counts the offers the person declined or let lapse; dropped
	// is set when the re-queue rule took them off the list for it.
	lapses  int
	dropped bool
	// moves are the places in line the entry had before each move to the
	// back, with the audit row of the move.
	moves []mPlace
}

// mPlace is an entry's place in line until the audit row row moved it.
type mPlace struct {
	row      int64
	joinedAt time.Time
	seq      int64
}

// at is e as it stood in line when audit row row was written: with the
// place it had then, before any later move to the back.
func (e *mEntry) at(row int64) *mEntry {
	for _, p := range e.moves {
		if row < p.row {
			then := *e
			then.joinedAt, then.seq = p.joinedAt, p.seq
			return &then
		}
	}
	return e
}

// mOffer is what the model learns about an offer when it first appears:
// its claim token (from the outbox) and its place in creation order (the
// id of the audit row that created it).
type mOffer struct {
	token     string
	created   int64 // audit id of the creating row
	bookingID string
}

type supKey struct {
	biz     string
	channel nextup.Channel
	address string
}

// contactKey identifies the person behind an entry for the daily cap and
// duplicate detection: the email, lower-cased, or else the phone digits.
func contactKey(email, phone string) string {
	if e := strings.TrimSpace(email); e != "" {
		return "email:" + strings.ToLower(e)
	}
	var b strings.Builder
	for _, r := range phone {
		if r == '+' || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return "phone:" + b.String()
}

func (e *mEntry) key() string { return contactKey(e.email, e.phone) }

// fairBefore is fair order fcfs-priority/v1: priority first, then joined-at,
// then sequence.
func fairBefore(a, b *mEntry) bool {
	if a.priority != b.priority {
		return a.priority
	}
	if !a.joinedAt.Equal(b.joinedAt) {
		return a.joinedAt.Before(b.joinedAt)
	}
	return a.seq < b.seq
}

// fitsCriteria is the part of "fits" that does not depend on seats or on
// the offer history: same business, the same event or service, the slot
// start inside the window and the weekly availability, the staff
// preference, and the minimum lead time at now.
func (m *model) fitsCriteria(s *mSlot, e *mEntry, now time.Time) bool {
	b := m.biz[s.biz]
	if e.biz != s.biz {
		return false
	}
	if s.kind == nextup.KindEvent {
		if e.eventID != s.id {
			return false
		}
	} else if e.eventID != "" || e.service != s.service {
		return false
	}
	if !e.earliest.IsZero() && s.start.Before(e.earliest) {
		return false
	}
	if !e.latest.IsZero() && s.start.After(e.latest) {
		return false
	}
	if len(e.avail) > 0 && !availableAt(s.start.In(b.loc), e.avail) {
		return false
	}
	if e.staff != "" && e.staff != s.staff {
		return false
	}
	return s.start.Sub(now) >= b.rules.MinLead
}

// availableAt: the local start falls on a listed day, From <= time < To,
// to the second.
func availableAt(local time.Time, windows []nextup.Availability) bool {
	tod := local.Hour()*3600 + local.Minute()*60 + local.Second()
	for _, w := range windows {
		if slices.Contains(w.Days, local.Weekday()) && int(w.From)*60 <= tod && tod < int(w.To)*60 {
			return true
		}
	}
	return false
}

// unitPartyFits: one party takes a whole unit slot: the party is the
// capacity, or, with down-fitting, between the slot's minimum party and it.
func (m *model) unitPartyFits(s *mSlot, party int) bool {
	if party == s.capacity {
		return true
	}
	return m.biz[s.biz].rules.DownFit && max(s.minParty, 1) <= party && party <= s.capacity
}

// channelFor is guardrail 4's channel choice: SMS when there is a phone
// number unless the person chose email, email as the fallback, skipping
// opted-out channels; "" when nothing is left.
func (m *model) channelFor(e *mEntry) nextup.Channel { return m.channelAt(e, 0) }

// suppressed reports whether the business's address on channel c was
// opted out before the audit row before (0: by now).
func (m *model) suppressed(biz string, c nextup.Channel, address string, before int64) bool {
	if address == "" {
		return false
	}
	// Opt-outs are kept by address key: a STOP from +447700900123 stops
	// texts to "+44 7700 900123".
	id, ok := m.suppress[supKey{biz, c, nextup.AddressKey(c, address)}]
	return ok && (before == 0 || id < before)
}

// channelAt is channelFor with the opt-outs recorded before the audit
// row before (0: all).
func (m *model) channelAt(e *mEntry, before int64) nextup.Channel {
	ok := func(c nextup.Channel) bool {
		if m.suppressed(e.biz, c, e.email, before) || m.suppressed(e.biz, c, e.phone, before) {
			return false
		}
		if c == nextup.ChannelSMS {
			return e.phone != ""
		}
		return e.email != ""
	}
	order := []nextup.Channel{nextup.ChannelSMS, nextup.ChannelEmail}
	if e.channel == nextup.ChannelEmail || e.phone == "" {
		order = []nextup.Channel{nextup.ChannelEmail, nextup.ChannelSMS}
	}
	for _, c := range order {
		if ok(c) {
			return c
		}
	}
	return ""
}

// dayStart is the first instant of t's local day. The simulated zones have
// no daylight-saving change at midnight, so local midnight always exists.
func dayStart(t time.Time, loc *time.Location) time.Time {
	y, mo, d := t.In(loc).Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, loc)
}

// offersToday counts the offers made to the person behind key on t's local
// day before the offer whose creating audit row is `before` (0: all so far).
func (m *model) offersToday(s *snapshot, bizID, key string, t time.Time, before int64) int {
	from := dayStart(t, m.biz[bizID].loc)
	n := 0
	for _, o := range s.offers {
		if o.BusinessID != bizID || o.ContactKey != key || o.CreatedAt.Before(from) || o.CreatedAt.After(t) {
			continue
		}
		if mo := m.offers[o.ID]; before > 0 && (mo == nil || mo.created >= before) {
			continue
		}
		n++
	}
	return n
}

// underCap reports whether the person may have one more offer at t.
func (m *model) underCap(s *snapshot, e *mEntry, t time.Time, before int64) bool {
	c := m.biz[e.biz].rules.MaxOffersPerPersonPerDay
	return c <= 0 || m.offersToday(s, e.biz, e.key(), t, before) < c
}

func isFinal(st nextup.OfferState) bool { return !st.Live() }

func entryTerminal(st nextup.EntryState) bool {
	return st == nextup.EntryBooked || st == nextup.EntryLeft || st == nextup.EntryExpired
}

// rules are the business's rules as they apply to slot ms (an event's own
// claim window, no try cap: engine.RulesFor).
func (b *mBiz) rulesFor(ms *mSlot) nextup.Rules {
	return engine.RulesFor(b.rules, nextup.Slot{Kind: ms.kind, Event: ms.event})
}

// The re-queue rule's moves, as the model names them.
const (
	requeueKeep = "keep"
	requeueBack = "back"
	requeueDrop = "drop"
)

// requeueFor is the re-queue rule of slot ms: an event's own, or else
// the events' default, back of the line and off it after the second
// lapse; a slot's is the business's.
func (b *mBiz) requeueFor(ms *mSlot) nextup.Requeue {
	if ms.kind != nextup.KindEvent {
		return b.rules.Requeue
	}
	if ms.event != nil && ms.event.Requeue != nil {
		return *ms.event.Requeue
	}
	return nextup.Requeue{Policy: nextup.RequeueBack, DropAfter: 2}
}

// requeueMove is the re-queue rule for a person's n-th lapse or decline:
// the one reaching DropAfter (when above 0) drops them, whatever the
// policy; before it policy back moves them to the back, and keep and drop
// leave them where they are.
func requeueMove(q nextup.Requeue, n int) string {
	switch {
	case q.DropAfter > 0 && n >= q.DropAfter:
		return requeueDrop
	case q.Policy == nextup.RequeueBack:
		return requeueBack
	}
	return requeueKeep
}

// lapsed reports whether an ended offer was its person's lapse or
// decline, which the re-queue rule counts: declined, or expired because
// its claim window passed (not one never sent in time).
func lapsed(o nextup.Offer) bool {
	return o.State == nextup.OfferDeclined || (o.State == nextup.OfferExpired && o.Reason == "claim_window_ended")
}

// keptFrom: e may not be offered the slot whose offers these are (oldest
// first). DESIGN.md: an entry is never offered the same slot again —
// except, by the re-queue rule, one moved to the back of the line since
// its latest offer of the slot (it joined again, in effect, after that
// offer was made), and then only once someone else was offered the slot
// after that offer ended.
func (m *model) keptFrom(offers []nextup.Offer, e *mEntry) bool {
	var last *nextup.Offer
	for i := range offers {
		if offers[i].EntryID == e.id {
			last = &offers[i]
		}
	}
	switch {
	case last == nil:
		return false
	case !last.CreatedAt.Before(e.joinedAt) || last.ResolvedAt == nil:
		return true
	}
	for _, o := range offers {
		if o.EntryID != e.id && !o.CreatedAt.Before(*last.ResolvedAt) {
			return false
		}
	}
	return true
}
