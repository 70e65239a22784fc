package insight

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// The replay of a place in line: what support answers "I was next and I
// was skipped" from. It is computed from the business's audit rows alone
// (every state change is an audit row written in its transaction, and the
// rows that start a story carry the facts the fair order and the fit rule
// read: core.EntryFacts, core.SlotFacts, core.RulesFacts), by playing them
// forward oldest first:
//
//   - A place in line is 1 + the waiting entries of the same list (a
//     service's, or an event's) ahead in fair order (nextup.CompareFair):
//     what the store's EntryPosition counts. It moves when someone ahead
//     joins (with priority, or with an earlier joined-at), takes an offer,
//     comes back from one, leaves, expires, goes to the back or is given
//     priority, and when the entry itself does any of these. Fair order
//     does not depend on the rules' version; a rules change is noted
//     while the entry waits, with the version, so support sees it.
//   - A slot the entry could have been offered is one of its list (its
//     service's slots, or its event) decided while it was on the list:
//     offered to someone, found nobody who fits, or handed back. For each,
//     the replay says whether the entry was offered it, and when not, why,
//     with the engine's own fit rule (engine.Fits) over the facts the rows
//     recorded: it did not fit (which criterion), someone earlier in line
//     was offered it, the daily cap, no channel to reach the person, they
//     were holding another offer, they had been offered it already, or
//     the slot went back to staff first.

// Reasons a slot was not offered to an entry, besides the fit rule's
// (engine.FitService, engine.FitParty, engine.FitWindow, …).
const (
	WhyEarlierInLine  = "earlier_in_line"   // someone ahead in fair order was offered it
	WhyAlreadyOffered = "already_offered"   // the entry had been offered it before (never the same slot twice)
	WhyHoldingOffer   = "holding_offer"     // the entry held an offer of another slot (one live offer at a time)
	WhyDailyCap       = engine.SkipDailyCap // the person had the day's offers already
	WhyNoChannel      = engine.SkipNoChannel
	WhyHandedBack     = "handed_back"  // it went back to staff (detail: why)
	WhyNotOnList      = "not_on_list"  // it was never decided while the entry was on the list
	WhyQuietHours     = "quiet_hours"  // it came up in quiet hours, too close to its start for a claim window after them
	WhyStaffChoice    = "staff_choice" // staff offered it to someone of their choosing (an event's "put first in line")
	// WhyUnexplained is a decision the rows do not explain: the entry was
	// ahead in line and fitted, yet someone behind was offered the slot.
	// The engine never does this (a skip is audited); tests insist on it.
	WhyUnexplained = "unexplained"
)

// Causes of a move in place.
const (
	CauseJoined        = "joined"
	CauseOffered       = "offered"
	CauseReturned      = "returned"   // an offer ended and the entry kept its place
	CauseMovedBack     = "moved_back" // an offer lapsed or was declined and the rule moved it to the back
	CauseBooked        = "booked"
	CauseLeft          = "left"
	CauseExpired       = "expired"
	CauseRestored      = "restored" // a booking undone: back on the list
	CausePriority      = "priority" // given or lost priority
	CauseRulesChanged  = "rules_changed"
	CauseAheadJoined   = "ahead_joined"
	CauseAheadOffered  = "ahead_offered"
	CauseAheadReturned = "ahead_returned"
	CauseAheadLeft     = "ahead_left"
	CauseAheadExpired  = "ahead_expired"
	CauseAheadMoved    = "ahead_moved" // someone moved ahead of or behind the entry (priority, back of the line)
)

// History is an entry's story: its place in line over time and every
// slot of its list decided while it was on it.
type History struct {
	EntryID   string          `json:"entry_id"`
	Queue     string          `json:"queue"` // "service:NAME" or "event:ID"
	Positions []PositionPoint `json:"positions"`
	Slots     []SlotOutcome   `json:"slots"`
}

// PositionPoint is one move: at At the entry's place became Position
// (0 while not in line: holding an offer, booked, left or expired).
type PositionPoint struct {
	At          time.Time `json:"at"`
	Position    int       `json:"position"`
	InLine      bool      `json:"in_line"`
	Cause       string    `json:"cause"`
	Detail      string    `json:"detail"` // the move in plain words
	AuditID     int64     `json:"audit_id"`
	RuleVersion int       `json:"rule_version,omitempty"`
}

// SlotOutcome is one slot of the entry's list decided while it was on it.
type SlotOutcome struct {
	SlotID   string    `json:"slot_id"`
	StartsAt time.Time `json:"starts_at"`
	Service  string    `json:"service,omitempty"`
	Staff    string    `json:"staff,omitempty"`
	Outcome  string    `json:"outcome"` // "offered" or "skipped"
	// Why is, for a skipped slot, the reason it was not offered the last
	// time it was decided (a Why* or engine.Fit* code); for an offered
	// one, how the offer ended ("offered" while live, "claimed",
	// "declined", "expired", "cancelled").
	Why         string    `json:"why"`
	Explanation string    `json:"explanation"`
	Reasons     []Reason  `json:"reasons"`
	At          time.Time `json:"at"` // when it was last decided while the entry was on the list
}

// Reason is why a slot was not offered to the entry at one decision.
type Reason struct {
	Code   string    `json:"code"`
	Detail string    `json:"detail"` // the explanation of this decision (the offered person's place, in a why's history)
	At     time.Time `json:"at"`
	Place  int       `json:"place,omitempty"` // the entry's place in line then
}

// Why is the answer to "why was I not offered this slot?".
type Why struct {
	SlotID      string   `json:"slot_id"`
	Offered     bool     `json:"offered"`
	Explanation string   `json:"explanation"`
	Reasons     []Reason `json:"reasons"`
}

// History replays an entry of a business from the business's audit rows.
func (s *Insight) History(ctx context.Context, businessID, entryID string) (History, error) {
	var h History
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		h, _, err = s.replay(ctx, tx, businessID, entryID)
		return err
	})
	return h, err
}

// WhyNot explains why an entry of a business was or was not offered slot.
func (s *Insight) WhyNot(ctx context.Context, businessID, entryID, slotID string) (Why, error) {
	var out Why
	err := s.Read(ctx, func(tx nextup.Tx) error {
		h, rp, err := s.replay(ctx, tx, businessID, entryID)
		if err != nil {
			return err
		}
		for _, so := range h.Slots {
			if so.SlotID == slotID {
				out = Why{SlotID: slotID, Offered: so.Outcome == OutcomeOffered, Explanation: so.Explanation, Reasons: so.Reasons}
				if out.Reasons == nil {
					out.Reasons = []Reason{}
				}
				return nil
			}
		}
		// Not a slot decided while the entry was on its list: say which
		// criterion rules it out, or that it was never free meanwhile.
		sl, err := tx.SlotGet(ctx, slotID)
		if err != nil || sl.BusinessID != rp.target.e.BusinessID {
			return core.NotFound("slot", slotID, err)
		}
		if f, ok := rp.slots[slotID]; ok {
			sl = f.sl
		}
		t := rp.target
		e := t.e
		e.State = nextup.EntryWaiting
		r := Reason{Code: WhyNotOnList, At: rp.now}
		if ok, code := engine.Fits(freeSlot(sl, sl.Capacity), e, rp.rules, rp.loc, time.Time{}); !ok && (code == engine.FitService || code == engine.FitEvent ||
			code == engine.FitStaff || code == engine.FitWindow || code == engine.FitAvailability || code == engine.FitParty) {
			r.Code = code
		}
		words := r
		words.At = time.Time{} // it did not come up for this entry
		r.Detail = explain(words, sl, t, rp.loc)
		out = Why{SlotID: slotID, Explanation: r.Detail, Reasons: []Reason{r}}
		return nil
	})
	return out, err
}

// Outcomes of a slot for an entry.
const (
	OutcomeOffered = "offered"
	OutcomeSkipped = "skipped"
)

// replay reads the entry and its business's whole story and plays it.
// PassedOver is the slots of the entry's list that came up while it
// waited and went to someone else (History's skipped slots), read from
// the rows since the entry joined only: what the person's status page
// says, at a cost that does not grow with the business's whole story.
// Who had a slot is compared by the place the row recorded, as the rows
// of those who joined earlier are not read; the places in line are not
// replayed (the status page shows the live one).
// b and e are the business and the entry as the caller read them.
func (s *Insight) PassedOver(ctx context.Context, b nextup.Business, e nextup.Entry) ([]SlotOutcome, error) {
	var out []SlotOutcome
	err := s.Read(ctx, func(tx nextup.Tx) error {
		h, _, err := s.replayOf(ctx, tx, b, e, true)
		for _, so := range h.Slots {
			if so.Outcome == OutcomeSkipped {
				out = append(out, so)
			}
		}
		return err
	})
	return out, err
}

func (s *Insight) replay(ctx context.Context, tx nextup.Tx, businessID, entryID string) (History, *replayer, error) {
	e, err := tx.EntryGet(ctx, entryID)
	if err != nil || (businessID != "" && e.BusinessID != businessID) {
		return History{}, nil, core.NotFound("entry", entryID, err)
	}
	b, err := tx.BusinessGet(ctx, e.BusinessID)
	if err != nil {
		return History{}, nil, core.NotFound("business", e.BusinessID, err)
	}
	return s.replayOf(ctx, tx, b, e, false)
}

// replayOf replays entry e of business b: from the business's first row,
// or with sinceJoin from e's own first row (PassedOver).
func (s *Insight) replayOf(ctx context.Context, tx nextup.Tx, b nextup.Business, e nextup.Entry, sinceJoin bool) (History, *replayer, error) {
	entryID := e.ID
	loc, err := b.Location()
	if err != nil {
		loc = time.UTC
	}
	var after int64
	if sinceJoin {
		first, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: e.BusinessID, SubjectType: nextup.SubjectEntry, SubjectID: e.ID, Limit: 1})
		if err != nil {
			return History{}, nil, err
		}
		if len(first) == 1 {
			after = first[0].ID - 1
		}
	}
	rows, err := auditRows(ctx, tx, nextup.AuditFilter{BusinessID: e.BusinessID, AfterID: after})
	if err != nil {
		return History{}, nil, err
	}
	// Slots made before their rows carried their facts are read from the
	// store (their start, service and staff do not change).
	lookup := func(id string) (nextup.Slot, bool) {
		sl, err := tx.SlotGet(ctx, id)
		return sl, err == nil
	}
	rp := newReplayer(entryID, loc, b.Rules, lookup)
	rp.noPlaces = sinceJoin // the rows of those who joined before are not read
	h := rp.play(rows)
	rp.now = s.Clock.Now()
	if rp.target == nil {
		return History{}, nil, errNoStory
	}
	return h, rp, nil
}

// errNoStory is the replay of an entry whose rows do not say where it
// joined the line (it joined before they did).
var errNoStory = nextup.Errorf(nextup.ErrConflict, nextup.CodeNoHistory, "this entry joined before nextup recorded where people join the line, so its place cannot be replayed")

type rentry struct {
	e     nextup.Entry
	queue string
}

type rslot struct {
	sl   nextup.Slot
	free int // seats free at the last decision, from the row
}

type replayer struct {
	id      string
	loc     *time.Location
	rules   nextup.Rules
	version int
	lookup  func(string) (nextup.Slot, bool)
	now     time.Time

	entries map[string]*rentry
	slots   map[string]*rslot
	offers  map[string]string // offer → entry

	target   *rentry
	pos      int
	inLine   bool
	offered  map[string]string // slots offered to the target → how the offer ended
	outcomes map[string]*SlotOutcome
	noPlaces bool // the places are not known (PassedOver)
	order    []string
	h        History
}

func newReplayer(entryID string, loc *time.Location, rules nextup.Rules, lookup func(string) (nextup.Slot, bool)) *replayer {
	if loc == nil {
		loc = time.UTC
	}
	return &replayer{id: entryID, loc: loc, rules: rules, version: rules.Version, lookup: lookup,
		entries: map[string]*rentry{}, slots: map[string]*rslot{}, offers: map[string]string{},
		offered: map[string]string{}, outcomes: map[string]*SlotOutcome{}}
}

func (r *replayer) play(rows []nextup.AuditEvent) History {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b nextup.AuditEvent) int { return cmp.Compare(a.ID, b.ID) })
	for _, row := range rows {
		if row.RuleVersion > 0 {
			r.version = row.RuleVersion
		}
		switch row.SubjectType {
		case nextup.SubjectBusiness:
			r.business(row)
		case nextup.SubjectSlot:
			r.slot(row)
		case nextup.SubjectOffer:
			r.offer(row)
		case nextup.SubjectEntry:
			r.entry(row)
		}
	}
	r.h.EntryID = r.id
	if r.target != nil {
		r.h.Queue = r.target.queue
	}
	if r.h.Positions == nil {
		r.h.Positions = []PositionPoint{}
	}
	r.h.Slots = []SlotOutcome{}
	for _, id := range r.order {
		so := *r.outcomes[id]
		if so.Reasons == nil {
			so.Reasons = []Reason{}
		}
		r.h.Slots = append(r.h.Slots, so)
	}
	return r.h
}

func (r *replayer) business(row nextup.AuditEvent) {
	fit, ok := row.Detail["fit"].(map[string]any)
	if !ok || (row.To != "created" && row.Reason != "rules_changed") {
		return
	}
	r.rules.MinLead = time.Duration(intOf(fit["min_lead_seconds"])) * time.Second
	r.rules.DownFit, _ = fit["down_fit"].(bool)
	r.rules.TimeCriticalThroughQuiet, _ = fit["time_critical_through_quiet"].(bool)
	r.rules.QuietHours = nil
	if _, ok := fit["quiet_start_minute"]; ok {
		r.rules.QuietHours = &nextup.QuietHours{Start: nextup.TimeOfDay(intOf(fit["quiet_start_minute"])), End: nextup.TimeOfDay(intOf(fit["quiet_end_minute"]))}
	}
	if row.Reason == "rules_changed" && r.inLine {
		r.point(row, CauseRulesChanged, fmt.Sprintf("The rules changed (%s to %s); fair order does not depend on them.", row.From, row.To))
	}
}

func (r *replayer) slot(row nextup.AuditEvent) {
	if row.To == "created" {
		if sl, ok := slotFacts(row); ok {
			r.slots[row.SubjectID] = &rslot{sl: sl, free: sl.FreeSeats()}
		}
		return
	}
	switch {
	case row.Reason == "resize":
		if s := r.slots[row.SubjectID]; s != nil {
			var c int
			if _, err := fmt.Sscanf(row.To, "capacity=%d", &c); err == nil {
				s.sl.Capacity = c
			}
		}
	case row.Reason == string(nextup.MoveNobodyFits):
		r.decided(row, row.SubjectID, decision{kind: decideNobody, free: freeOf(row)})
	case row.To == string(nextup.SlotHandedBack):
		r.decided(row, row.SubjectID, decision{kind: decideHandBack, free: freeOf(row), handBack: row.Reason})
	case row.Reason == "skipped:many":
		list, _ := row.Detail["skipped"].([]any)
		for _, it := range list {
			m, _ := it.(map[string]any)
			if m["entry_id"] == r.id {
				code, _ := m["reason"].(string)
				r.decided(row, row.SubjectID, decision{kind: decideSkip, skip: code})
			}
		}
	}
}

func freeOf(row nextup.AuditEvent) int {
	if _, ok := row.Detail["free_seats"]; !ok {
		return -1
	}
	return intOf(row.Detail["free_seats"])
}

func (r *replayer) offer(row nextup.AuditEvent) {
	if row.From == "" { // made
		eid, _ := row.Detail["entry_id"].(string)
		r.offers[row.SubjectID] = eid
		if eid == r.id {
			r.offered[row.SlotID] = string(nextup.OfferOffered)
			so := r.outcome(row.SlotID)
			if so != nil {
				so.Outcome, so.Why, so.At = OutcomeOffered, string(nextup.OfferOffered), row.At
				so.Explanation = r.offeredWords(so, "")
			}
			return
		}
		override, _ := row.Detail["override"].(bool)
		r.decided(row, row.SlotID, decision{kind: decideOffer, free: freeOf(row), to: r.entries[eid], toPos: intOf(row.Detail["position"]), override: override})
		return
	}
	if r.offers[row.SubjectID] == r.id && row.To != row.From {
		r.offered[row.SlotID] = row.To
		if so := r.outcomes[row.SlotID]; so != nil && so.Outcome == OutcomeOffered {
			so.Why = row.To
			so.Explanation = r.offeredWords(so, row.To)
		}
	}
}

func (r *replayer) entry(row nextup.AuditEvent) {
	x := r.entries[row.SubjectID]
	if x == nil {
		if row.From != "" || (row.Reason != "joined" && row.Reason != "registered") {
			return
		}
		x = r.join(row)
		if x == nil {
			return
		}
	} else if strings.HasPrefix(row.Reason, "skipped:") {
		if x == r.target {
			r.decided(row, row.SlotID, decision{kind: decideSkip, skip: strings.TrimPrefix(row.Reason, "skipped:")})
		}
		return
	}
	before := x.e
	isNew := before.ID == ""
	x.e.ID = row.SubjectID
	switch st := nextup.EntryState(row.To); st {
	case nextup.EntryWaiting, nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired:
		x.e.State = st
	}
	switch row.Reason {
	case core.ReasonRequeuedBack:
		if t := core.ParseFactTime(row.Detail["joined_at"]); !t.IsZero() {
			x.e.JoinedAt, x.e.Seq = t.Truncate(time.Microsecond), int64(intOf(row.Detail["seq"]))
		}
	case "updated":
		applyChanges(&x.e, row.Detail["changes"])
	case "override":
		if row.To == "next_in_line" {
			x.e.Priority = true
		}
	}
	if x == r.target {
		r.moveTarget(row, before, isNew)
		return
	}
	if r.target == nil || x.queue != r.target.queue || !r.inLine {
		return
	}
	t := r.target.e
	wasAhead := !isNew && before.State == nextup.EntryWaiting && nextup.CompareFair(before, t) < 0
	isAhead := x.e.State == nextup.EntryWaiting && nextup.CompareFair(x.e, t) < 0
	if wasAhead == isAhead {
		return
	}
	var cause, words string
	switch {
	case isAhead && isNew:
		cause, words = CauseAheadJoined, "Someone joined ahead of you"
		if x.e.Priority && !t.Priority {
			words += " with priority"
		} else {
			words += " (an earlier joining time)"
		}
	case isAhead && before.State == nextup.EntryOffered:
		cause, words = CauseAheadReturned, "Someone ahead of you came back to the list after their offer ended, keeping their place"
	case isAhead && before.State == nextup.EntryBooked:
		cause, words = CauseAheadReturned, "Someone ahead of you came back to the list (their booking was undone)"
	case isAhead:
		cause, words = CauseAheadMoved, "Someone moved ahead of you (given priority)"
	case x.e.State == nextup.EntryOffered:
		cause, words = CauseAheadOffered, "Someone ahead of you was offered a slot"
	case x.e.State == nextup.EntryLeft:
		cause, words = CauseAheadLeft, "Someone ahead of you left the list"
	case x.e.State == nextup.EntryExpired:
		cause, words = CauseAheadExpired, "Someone ahead of you reached the end of their dates"
	case x.e.State == nextup.EntryBooked:
		cause, words = CauseAheadLeft, "Someone ahead of you booked"
	default:
		cause, words = CauseAheadMoved, "Someone ahead of you moved behind you"
	}
	if isAhead {
		r.pos++
	} else {
		r.pos--
	}
	r.point(row, cause, words+".")
}

// join reads a "joined" or "registered" row; nil when it lacks the facts.
func (r *replayer) join(row nextup.AuditEvent) *rentry {
	e, ok := joinFacts(row)
	if !ok {
		return nil
	}
	x := &rentry{e: e, queue: e.Queue()}
	r.entries[row.SubjectID] = x
	if row.SubjectID == r.id {
		r.target = x
	}
	return x
}

// joinFacts is the entry a "joined" or "registered" row says joined;
// false when the row lacks the facts (it was written before they were).
func joinFacts(row nextup.AuditEvent) (nextup.Entry, bool) {
	d := row.Detail
	joined := core.ParseFactTime(d["joined_at"]).Truncate(time.Microsecond) // as the stores keep it
	if joined.IsZero() {
		return nextup.Entry{}, false
	}
	e := nextup.Entry{BusinessID: row.BusinessID, PartySize: max(intOf(d["party_size"]), 1),
		JoinedAt: joined, Seq: int64(intOf(d["seq"])), Earliest: core.ParseFactTime(d["earliest"]),
		Latest: core.ParseFactTime(d["latest"]), Availability: core.ParseFactAvailability(d["availability"])}
	e.Priority, _ = d["priority"].(bool)
	e.Staff, _ = d["staff"].(string)
	if row.Reason == "registered" {
		e.EventID = row.SlotID
	} else {
		e.Service, _ = d["service"].(string)
	}
	return e, true
}

// applyChanges applies a staff edit's "changes" to e.
func applyChanges(e *nextup.Entry, v any) {
	ch, _ := v.(map[string]any)
	to := func(field string) (any, bool) {
		c, ok := ch[field].(map[string]any)
		if !ok {
			return nil, false
		}
		return c["to"], true
	}
	if v, ok := to("priority"); ok {
		e.Priority, _ = v.(bool)
	}
	if v, ok := to("earliest"); ok {
		e.Earliest = core.ParseFactTime(v)
	}
	if v, ok := to("latest"); ok {
		e.Latest = core.ParseFactTime(v)
	}
	if v, ok := to("staff"); ok {
		e.Staff, _ = v.(string)
	}
	if v, ok := to("party_size"); ok {
		e.PartySize = intOf(v)
	}
	if v, ok := to("availability"); ok {
		e.Availability = core.ParseFactAvailability(v)
	}
}

// moveTarget notes a row of the target itself.
func (r *replayer) moveTarget(row nextup.AuditEvent, before nextup.Entry, isNew bool) {
	t := r.target.e
	wasIn := r.inLine
	r.inLine = t.State == nextup.EntryWaiting
	if r.inLine {
		r.pos = r.count()
	} else {
		r.pos = 0
	}
	var cause, words string
	switch {
	case isNew && r.inLine:
		cause, words = CauseJoined, fmt.Sprintf("Joined the list at place %d.", r.pos)
		if t.Priority {
			words = fmt.Sprintf("Joined the list with priority, at place %d.", r.pos)
		}
	case isNew:
		cause, words = CauseBooked, "Registered with a seat."
	case row.Reason == core.ReasonRequeuedBack:
		cause, words = CauseMovedBack, fmt.Sprintf("The offer %s; the business's rule moved you to the back of the list, place %d.", endWords(cmp.Or(row.Detail["offer_reason"], any(row.Reason))), r.pos)
	case wasIn && !r.inLine && t.State == nextup.EntryOffered:
		cause, words = CauseOffered, "Offered a slot: off the list while the offer is open."
	case !wasIn && r.inLine && before.State == nextup.EntryOffered:
		cause, words = CauseReturned, fmt.Sprintf("The offer %s; back on the list at your place, %d.", endWords(cmp.Or(row.Detail["offer_reason"], any(row.Reason))), r.pos)
	case !wasIn && r.inLine && before.State == nextup.EntryBooked:
		cause, words = CauseRestored, fmt.Sprintf("The booking was undone; back on the list at place %d.", r.pos)
	case t.State == nextup.EntryBooked && before.State != nextup.EntryBooked:
		cause, words = CauseBooked, "Booked."
	case t.State == nextup.EntryLeft && before.State != nextup.EntryLeft:
		cause, words = CauseLeft, "Left the list."
		if row.Reason == core.ReasonDroppedAfterLapses {
			words = "Taken off the list after the number of missed offers the business allows."
		}
	case t.State == nextup.EntryExpired && before.State != nextup.EntryExpired:
		cause, words = CauseExpired, "The dates asked for passed: off the list."
	case t.Priority != before.Priority:
		cause, words = CausePriority, fmt.Sprintf("Given priority by staff: now at place %d.", r.pos)
		if !t.Priority {
			cause, words = CausePriority, fmt.Sprintf("Priority removed by staff: now at place %d.", r.pos)
		}
	default:
		return // a change that does not move the place (a new link, an edited name)
	}
	r.point(row, cause, words)
}

// offeredWords says that the slot was offered to the entry, and how the
// offer ended (end: "" while live).
func (r *replayer) offeredWords(so *SlotOutcome, end string) string {
	w := fmt.Sprintf("The slot at %s was offered to you on %s", so.StartsAt.In(r.loc).Format("15:04 on Mon 2 Jan"), so.At.In(r.loc).Format("Mon 2 Jan at 15:04"))
	if slices.ContainsFunc(so.Reasons, func(r Reason) bool { return r.Code == WhyEarlierInLine }) {
		w += ", after someone ahead of you had it first"
	}
	switch nextup.OfferState(end) {
	case nextup.OfferClaimed:
		return w + ", and you booked it."
	case nextup.OfferDeclined:
		return w + ", and you declined it."
	case nextup.OfferExpired:
		return w + ", and the offer lapsed unanswered."
	case nextup.OfferCancelled:
		return w + ", and the offer was withdrawn."
	}
	return w + "."
}

func endWords(v any) string {
	switch v {
	case "declined":
		return "was declined"
	case "expired", "lapsed", "claim_window_ended":
		return "lapsed unanswered"
	}
	if s, ok := v.(string); ok && s != "" {
		return "ended (" + strings.ReplaceAll(s, "_", " ") + ")"
	}
	return "ended"
}

// count is the target's place: 1 + the waiting entries of its list ahead.
func (r *replayer) count() int {
	n := 1
	t := r.target
	for _, x := range r.entries {
		if x != t && x.queue == t.queue && x.e.State == nextup.EntryWaiting && nextup.CompareFair(x.e, t.e) < 0 {
			n++
		}
	}
	return n
}

func (r *replayer) point(row nextup.AuditEvent, cause, words string) {
	p := PositionPoint{At: row.At, InLine: r.inLine, Cause: cause, Detail: words, AuditID: row.ID, RuleVersion: r.version}
	if r.inLine {
		p.Position = r.pos
	}
	r.h.Positions = append(r.h.Positions, p)
}

type decideKind int

const (
	decideOffer decideKind = iota
	decideNobody
	decideHandBack
	decideSkip
)

type decision struct {
	kind     decideKind
	free     int     // seats free before it (-1: not recorded)
	to       *rentry // decideOffer: who was offered it
	toPos    int
	handBack string
	skip     string
	override bool // decideOffer: staff chose who
}

// outcome is the target's record of slot id, made on first sight; nil
// when the slot is not of its list (or unknown).
func (r *replayer) outcome(id string) *SlotOutcome {
	if so, ok := r.outcomes[id]; ok {
		return so
	}
	s := r.listSlot(id)
	if s == nil {
		return nil
	}
	so := &SlotOutcome{SlotID: id, StartsAt: s.sl.StartsAt, Service: s.sl.Service, Staff: s.sl.Staff, Outcome: OutcomeSkipped}
	r.outcomes[id] = so
	r.order = append(r.order, id)
	return so
}

// listSlot is slot id when it is of the target's list; nil otherwise.
func (r *replayer) listSlot(id string) *rslot {
	t := r.target
	if t == nil {
		return nil
	}
	s := r.slots[id]
	if s == nil && r.lookup != nil {
		if sl, ok := r.lookup(id); ok {
			s = &rslot{sl: sl, free: -1}
			r.slots[id] = s
		}
	}
	if s == nil {
		return nil
	}
	if t.e.EventID != "" {
		if s.sl.ID != t.e.EventID {
			return nil
		}
	} else if s.sl.Kind == nextup.KindEvent || s.sl.Service != t.e.Service {
		return nil
	}
	return s
}

// decided notes a decision of slot id while the target may have been on
// its list, with the reason the target was not the one offered it.
func (r *replayer) decided(row nextup.AuditEvent, id string, d decision) {
	t := r.target
	if t == nil || (t.e.State != nextup.EntryWaiting && t.e.State != nextup.EntryOffered) {
		return
	}
	s := r.listSlot(id)
	if s == nil {
		return // not of its list
	}
	if so := r.outcomes[id]; so != nil && so.Outcome == OutcomeOffered {
		return // it was offered it: later decisions are about others
	}
	if d.free >= 0 {
		s.free = d.free
	}
	reason, ok := r.why(s, row.At, d)
	if !ok {
		return
	}
	so := r.outcome(id)
	// One reason per decision: a skip audited before the offers of the
	// same decision is the one that applies.
	if n := len(so.Reasons); n > 0 && so.Reasons[n-1].At.Equal(row.At) {
		return
	}
	if r.inLine && !r.noPlaces {
		reason.Place = r.pos
	}
	reason.Detail = explain(reason, s.sl, t, r.loc)
	so.Reasons = append(so.Reasons, reason)
	so.At = row.At
	if so.Outcome == OutcomeSkipped {
		so.Why, so.Explanation = reason.Code, reason.Detail
	}
}

func (r *replayer) why(s *rslot, at time.Time, d decision) (Reason, bool) {
	t := r.target
	reason := Reason{At: at}
	if d.kind == decideSkip {
		reason.Code = d.skip
		return reason, true
	}
	if end, ok := r.offered[s.sl.ID]; ok {
		reason.Code = WhyAlreadyOffered
		reason.Detail = end
		return reason, true
	}
	if t.e.State == nextup.EntryOffered {
		reason.Code = WhyHoldingOffer
		return reason, true
	}
	free := s.free
	if free < 0 {
		free = s.sl.Capacity
	}
	if ok, code := engine.Fits(freeSlot(s.sl, free), t.e, engine.RulesFor(r.rules, s.sl), r.loc, at); !ok {
		reason.Code = code
		return reason, true
	}
	switch d.kind {
	case decideOffer:
		if d.override {
			reason.Code = WhyStaffChoice
			return reason, true
		}
		ahead := d.to != nil && nextup.CompareFair(d.to.e, t.e) < 0
		if d.to == nil {
			// Joined before the rows read (PassedOver) or before they
			// said where: the place the row recorded decides, when known.
			ahead = d.toPos <= 0 || r.noPlaces || d.toPos <= r.pos
		}
		if ahead {
			reason.Code = WhyEarlierInLine
			reason.Detail = fmt.Sprint(d.toPos)
			return reason, true
		}
		reason.Code = WhyUnexplained
		return reason, true
	case decideHandBack:
		reason.Code = WhyHandedBack
		reason.Detail = d.handBack
		rules := engine.RulesFor(r.rules, s.sl)
		if in, _ := engine.InQuietHours(at, rules.QuietHours, r.loc); in && d.handBack == nextup.HandBackTooSoon && !rules.TimeCriticalThroughQuiet {
			reason.Code = WhyQuietHours // no claim window fits between quiet hours' end and the start
		}
		return reason, true
	}
	return reason, false // nobody fits, yet the target fits: not a decision about it
}

// freeSlot is sl as the engine saw it with free seats free: a unit slot
// is offered only when wholly free.
func freeSlot(sl nextup.Slot, free int) nextup.Slot {
	sl.HeldSeats = 0
	if sl.Seating == nextup.SeatingShared {
		sl.BookedSeats = sl.Capacity - free
	} else {
		sl.BookedSeats = 0
	}
	return sl
}

// slotFacts reads a slot's "created" row; false when it lacks them.
func slotFacts(row nextup.AuditEvent) (nextup.Slot, bool) {
	d := row.Detail
	starts := core.ParseFactTime(d["starts_at"])
	if starts.IsZero() {
		return nextup.Slot{}, false
	}
	sl := nextup.Slot{ID: row.SubjectID, BusinessID: row.BusinessID, StartsAt: starts, EndsAt: core.ParseFactTime(d["ends_at"]),
		Capacity: intOf(d["capacity"]), BookedSeats: intOf(d["booked_seats"]), MinParty: intOf(d["min_party"])}
	kind, _ := d["kind"].(string)
	seating, _ := d["seating"].(string)
	sl.Kind, sl.Seating = nextup.SlotKind(kind), nextup.Seating(seating)
	sl.Service, _ = d["service"].(string)
	sl.Staff, _ = d["staff"].(string)
	if sl.Kind == nextup.KindEvent {
		sl.Event = &nextup.EventSettings{}
	}
	return sl, true
}

// explain is a reason in plain words a support agent can paste and the
// person can read: it never names anyone else.
func explain(r Reason, sl nextup.Slot, t *rentry, loc *time.Location) string {
	what := "This slot"
	if !sl.StartsAt.IsZero() {
		what = "The slot at " + sl.StartsAt.In(loc).Format("15:04 on Mon 2 Jan")
		if sl.Kind == nextup.KindEvent {
			what = "A seat at the event on " + sl.StartsAt.In(loc).Format("Mon 2 Jan at 15:04")
		}
	}
	lead := what + " came up"
	if !r.At.IsZero() {
		lead += " on " + r.At.In(loc).Format("Mon 2 Jan at 15:04")
	}
	e := t.e
	switch r.Code {
	case WhyEarlierInLine:
		who := "someone earlier in line"
		switch {
		case r.Detail != "" && r.Detail != "0" && r.Place > 0:
			who += fmt.Sprintf(" (place %s; you were at place %d)", r.Detail, r.Place)
		case r.Place > 0:
			who += fmt.Sprintf(" (you were at place %d)", r.Place)
		}
		return lead + " and went to " + who + ". The list is in the order people joined, with priority first; your place was kept."
	case WhyAlreadyOffered:
		return what + " had already been offered to you."
	case WhyHoldingOffer:
		return lead + " while you were holding an offer of another slot; one offer is open at a time."
	case WhyStaffChoice:
		return lead + " and the staff offered it to someone directly."
	case WhyDailyCap:
		return lead + " after you had already had the most offers a day the business sends; your place was kept for the next one."
	case WhyNoChannel:
		return lead + " but there was no way to reach you (no email or phone we may use); your place was kept."
	case WhyHandedBack:
		why := map[string]string{
			nextup.HandBackTooSoon:         "it was too close to its start time to give anyone a claim window",
			nextup.HandBackTryCap:          "it had been offered to as many people as the business allows",
			nextup.HandBackPromotionCutoff: "seats freed this close to the event stay open for walk-ins",
			nextup.HandBackListExhausted:   "everyone who fitted had been offered it",
		}[r.Detail]
		if why == "" {
			why = "staff took it over"
		}
		return lead + " and went back to the business's staff: " + why + "."
	case WhyQuietHours:
		return lead + " during the business's quiet hours, when no offers go out, and it starts too soon after them to give anyone time to claim it; it went back to the staff."
	case engine.FitService:
		return fmt.Sprintf("%s was for %s, not %s, the service you are waiting for.", what, cmp.Or(sl.Service, "another service"), cmp.Or(e.Service, "the one"))
	case engine.FitEvent:
		return what + " is not for the event (or service) you are waiting for."
	case engine.FitParty:
		return fmt.Sprintf("%s without room for your party of %d.", lead, e.PartySize)
	case engine.FitWindow:
		return fmt.Sprintf("%s starts outside the dates you asked for (%s).", what, windowWords(e, loc))
	case engine.FitAvailability:
		return what + " starts outside the days and times you said you are available."
	case engine.FitStaff:
		return fmt.Sprintf("%s was with %s; you asked for %s.", what, cmp.Or(sl.Staff, "whoever is free"), e.Staff)
	case engine.FitLead:
		return lead + " too close to its start to give you time to claim it."
	case WhyNotOnList:
		return what + " did not come up while you were on the list: it had no free seats then, or it was taken before you joined."
	}
	return fmt.Sprintf("%s and was not offered to you (%s).", lead, strings.ReplaceAll(r.Code, "_", " "))
}

func windowWords(e nextup.Entry, loc *time.Location) string {
	const day = "Mon 2 Jan"
	switch {
	case !e.Earliest.IsZero() && !e.Latest.IsZero():
		return e.Earliest.In(loc).Format(day) + " to " + e.Latest.In(loc).Format(day)
	case !e.Earliest.IsZero():
		return "from " + e.Earliest.In(loc).Format(day)
	case !e.Latest.IsZero():
		return "until " + e.Latest.In(loc).Format(day)
	}
	return "any date"
}
