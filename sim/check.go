package sim

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/insight"
	"github.com/nextup-dev/nextup/waitlist/offers"
)

// checkStep holds the state after a step against the state before it and
// the model. The numbered checks are the simulation's contract:
//
//  1. seats: 0 <= booked, booked + held <= capacity; held is the seats of
//     the slot's live offers; booked is the seats booked outside nextup
//     (model) plus the seats of active bookings.
//  2. an offer ends exactly once: a final offer has one audit row into its
//     final state and never changes again; a live one has none; fixed
//     fields never change (deadline and link only when a held-back offer
//     is sent).
//  3. no entry holds two live offers; an entry is offered iff it holds one.
//  4. every new offer went to an entry that fits by the model's rules, with
//     the model's channel, daily cap and claim window (engine.OfferWindow),
//     and nobody who waited through the step, fits, was never offered the
//     slot and passes the guardrails comes earlier in fair order.
//  5. every state change of an offer, entry or booking has its audit row,
//     and every subject's rows chain from its first state to its current one.
//  6. every claimed offer has one booking and one confirmation; every offer
//     that was sent has one offer message whose claim link hashes to the
//     offer's token (one held back by quiet hours has none until sent).
//  7. matching runs both ways: no open slot is left with a waiting entry
//     that would be offered it.
//  8. timers: every live offer has its expiry timer (pending: its release
//     timer), every business its housekeeping, and after a clean Advance
//     nothing due is left unfired.
//  9. messages and their fallbacks (relay.go): every send the relay
//     makes leaves its message sent, failed and due after the backoff, or
//     dead (at its last attempt, or at once when refused), and never goes
//     to an opted-out address; the opt-outs are exactly those staff made
//     and the addresses refused for good, each with its audit row; a dead
//     message of a live offer has, in the same committed state, its one
//     fallback on the other channel (<id>_fb), or the offer on the other
//     channel already, or a fallback_skipped row (a passing failure and no
//     other channel); an offer ends no_channel only after a refusal for
//     good left no channel; a dead confirmation or reminder of a booking
//     has its fallback when the other channel is open; a fallback never
//     falls back; a faulted dead letter leaves its message leased, with no
//     fallback, and it is tried again once the lease lapses.
//
// Hand-backs are checked too: made only for their reason (too soon, try
// cap, list exhausted with nobody fitting), never over live offers, ended
// exactly when fresh seats come.
func (w *world) checkStep(prev, cur *snapshot) {
	w.checkKnown(cur)
	w.learnLapses(prev, cur)
	w.checkSeats(cur)
	fresh, changed := w.checkOffers(prev, cur)
	w.checkEntries(prev, cur)
	w.checkBookings(prev, cur)
	w.checkDedupe(prev, cur)
	w.checkHandBacks(prev, cur, changed)
	w.checkFairness(prev, cur, fresh, changed)
	w.checkMatching(cur)
	w.checkTimers(cur)
	w.checkDeadLetters(cur)
	w.count(prev, cur, fresh)
}

// learnLapses is the re-queue rule in the model (keptFrom has the rest).
// Every offer that ended
// in the step as its person's lapse or decline counts on the entry, in the
// order they ended: the count reaching the rule's DropAfter takes the
// person off the list (checkEntries holds the entry to left), and before
// that policy back moves them to the back of the line, as if they joined
// at that moment, with a Seq above every one handed out before the step
// (the store's number, read back). The entry's audit row of the lapse
// must say what was done.
func (w *world) learnLapses(prev, cur *snapshot) {
	var ended []nextup.Offer
	for _, id := range sortedKeys(cur.offers) {
		o := cur.offers[id]
		if p, existed := prev.offers[id]; (!existed || !isFinal(p.State)) && lapsed(o) {
			ended = append(ended, o)
		}
	}
	slices.SortStableFunc(ended, func(a, b nextup.Offer) int { return a.ResolvedAt.Compare(*b.ResolvedAt) })
	var maxSeq int64
	for _, e := range prev.entries {
		maxSeq = max(maxSeq, e.Seq)
	}
	for _, o := range ended {
		me, ms := w.m.entries[o.EntryID], w.m.slots[o.SlotID]
		me.lapses++
		move := requeueMove(w.m.biz[ms.biz].requeueFor(ms), me.lapses)
		w.m.lapse[o.ID] = move
		w.st.requeued[move]++
		reason := map[string]string{requeueKeep: o.Reason, requeueBack: "requeued_back", requeueDrop: "dropped_after_lapses"}[move]
		rows := w.auditOf(o.BusinessID, nextup.SubjectEntry, o.EntryID)
		i := slices.IndexFunc(rows, func(r nextup.AuditEvent) bool {
			return r.From == string(nextup.EntryOffered) && r.Reason == reason && r.Detail["offer_id"] == o.ID && r.At.Equal(*o.ResolvedAt)
		})
		if i < 0 {
			w.fail("check requeue: entry %s's %d-th lapse (offer %s %s) has no audit row %q; the rule is %s",
				o.EntryID, me.lapses, o.ID, o.State, reason, js(w.m.biz[ms.biz].requeueFor(ms)))
		}
		switch move {
		case requeueBack:
			e := cur.entries[o.EntryID]
			if e.Seq <= maxSeq {
				w.fail("check requeue: entry %s went to the back of the line with Seq %d, not above %d, the highest before", e.ID, e.Seq, maxSeq)
			}
			// The moment of the lapse, but after the offer was made (one
			// declined the instant it was made: the fake clock).
			joined := *o.ResolvedAt
			if !o.CreatedAt.Before(joined) {
				joined = o.CreatedAt.Add(time.Microsecond)
			}
			me.moves = append(me.moves, mPlace{row: rows[i].ID, joinedAt: me.joinedAt, seq: me.seq})
			me.joinedAt, me.seq = joined, e.Seq
		case requeueDrop:
			me.dropped = true
		}
	}
}

// checkKnown: every row hangs off something the model created.
func (w *world) checkKnown(cur *snapshot) {
	for _, id := range sortedKeys(cur.slots) {
		if w.m.slots[id] == nil {
			w.fail("check model: slot %s exists but no successful operation created it", id)
		}
	}
	for _, id := range sortedKeys(cur.entries) {
		if w.m.entries[id] == nil {
			w.fail("check model: entry %s exists but no successful join created it", id)
		}
	}
	for _, id := range sortedKeys(cur.offers) {
		o := cur.offers[id]
		if w.m.entries[o.EntryID] == nil || w.m.slots[o.SlotID] == nil || o.BusinessID != w.m.slots[o.SlotID].biz || o.BusinessID != w.m.entries[o.EntryID].biz {
			w.fail("check model: offer %s is for unknown (or another business's) slot %s / entry %s", id, o.SlotID, o.EntryID)
		}
	}
}

// checkSeats is check 1, and the per-slot rules that go with it.
func (w *world) checkSeats(cur *snapshot) {
	for _, id := range sortedKeys(cur.slots) {
		s, ms := cur.slots[id], w.m.slots[id]
		if s.BusinessID != ms.biz || s.Kind != ms.kind || s.Service != ms.service || s.Staff != ms.staff || !s.StartsAt.Equal(ms.start) ||
			s.Capacity != ms.capacity || s.Seating != ms.seating || s.MinParty != ms.minParty {
			w.fail("check model: slot %s is %s, the model has %+v", id, js(s), *ms)
		}
		if s.BookedSeats < 0 || s.HeldSeats < 0 || s.BookedSeats+s.HeldSeats > s.Capacity {
			w.fail("check 1 seats: slot %s has booked %d + held %d > capacity %d (or a negative count)", id, s.BookedSeats, s.HeldSeats, s.Capacity)
		}
		held, live := 0, 0
		seen := map[string]nextup.Offer{} // each entry's offer before
		for _, o := range cur.slotOffer[id] {
			if p, ok := seen[o.EntryID]; ok && !w.overrideOffer(o) && !w.offeredAgain(cur.slotOffer[id], p, o) {
				// Only the organiser's override offers an entry a slot
				// again, or the re-queue rule after a move to the back.
				w.fail("check 4 order: entry %s was offered slot %s twice", o.EntryID, id)
			}
			seen[o.EntryID] = o
			if o.State.Live() {
				held += o.Seats
				live++
			}
		}
		if held != s.HeldSeats {
			w.fail("check 1 seats: slot %s holds %d seats, its live offers hold %d", id, s.HeldSeats, held)
		}
		active := 0
		for _, b := range cur.slotBook[id] {
			if b.State == nextup.BookingBooked {
				active += b.Seats
			}
		}
		if s.BookedSeats != ms.outside+active {
			w.fail("check 1 seats: slot %s has %d booked seats, want %d booked outside nextup + %d in active bookings", id, s.BookedSeats, ms.outside, active)
		}
		if s.Seating == nextup.SeatingUnit && live > 1 {
			w.fail("check 1 seats: unit slot %s has %d live offers", id, live)
		}
		if s.HandedBack && live > 0 && slices.ContainsFunc(cur.slotOffer[id], func(o nextup.Offer) bool { return o.State.Live() && !w.overrideOffer(o) }) {
			// Staff may promote someone on an event that is with them
			// (Promote's hold is theirs); the engine never offers over them.
			w.fail("check hand-back: slot %s is with staff while %d live offers hold its seats", id, live)
		}
		if max := w.m.biz[ms.biz].rulesFor(ms).MaxOffersPerSlot; max > 0 && tried(cur.slotOffer[id]) > max {
			w.fail("check try cap: slot %s was tried on %d people, the cap is %d", id, tried(cur.slotOffer[id]), max)
		}
	}
}

// offerFixed is what an offer may never change after it is made.
func offerFixed(o nextup.Offer) nextup.Offer {
	return nextup.Offer{ID: o.ID, BusinessID: o.BusinessID, SlotID: o.SlotID, EntryID: o.EntryID, ContactKey: o.ContactKey,
		Seats: o.Seats, PartySize: o.PartySize, Channel: o.Channel, TokenHash: o.TokenHash, RuleVersion: o.RuleVersion,
		CreatedAt: o.CreatedAt, SendAt: o.SendAt, ExpiresAt: o.ExpiresAt}
}

// checkOffers is checks 2, 5 and 6 for offers. It learns the claim token
// and creation order of new offers, and returns them in creation order with
// the set of entries whose offers were made or ended in this step.
func (w *world) checkOffers(prev, cur *snapshot) (fresh []nextup.Offer, changed map[string]bool) {
	changed = map[string]bool{}
	for _, id := range sortedKeys(cur.offers) {
		o := cur.offers[id]
		p, existed := prev.offers[id]
		if existed && isFinal(p.State) {
			if !reflect.DeepEqual(p, o) {
				w.fail("check 2 ends once: final offer %s changed:\n\tbefore %s\n\tafter  %s", id, js(p), js(o))
			}
			continue
		}
		pf, of := offerFixed(p), offerFixed(o)
		if existed && p.State == nextup.OfferPending && o.SentAt != nil {
			// Sent: the claim link is minted now, and the claim window
			// starts now (a release that fired late moves the deadline).
			pf.ExpiresAt, of.ExpiresAt, pf.TokenHash, of.TokenHash = time.Time{}, time.Time{}, "", ""
			w.checkSentWindow(o)
		}
		if existed && p.State == nextup.OfferOffered && p.SentAt != nil && o.SentAt != nil && !o.SentAt.Equal(*p.SentAt) {
			// Its message reached the provider late: the claim window
			// starts again from then (offers.Handed).
			pf.ExpiresAt, of.ExpiresAt = time.Time{}, time.Time{}
			w.checkHandedWindow(p, o)
		}
		if existed && !reflect.DeepEqual(pf, of) {
			w.fail("check 2 offer: offer %s changed a fixed field:\n\tbefore %s\n\tafter  %s", id, js(p), js(o))
		}
		if isFinal(o.State) != (o.ResolvedAt != nil) || (o.State != nextup.OfferPending && o.SentAt == nil && o.State != nextup.OfferDeclined &&
			o.State != nextup.OfferExpired && o.State != nextup.OfferCancelled) {
			w.fail("check 2 offer: offer %s is %s with sent_at %v resolved_at %v", id, o.State, o.SentAt, o.ResolvedAt)
		}
		if existed && p.State != o.State {
			ok := (p.State == nextup.OfferPending && o.State != nextup.OfferClaimed) || p.State == nextup.OfferOffered && o.State != nextup.OfferPending
			if !ok {
				w.fail("check 2 offer: offer %s went from %s to %s", id, p.State, o.State)
			}
		}
		stateChanged := !existed || p.State != o.State
		if !stateChanged && reflect.DeepEqual(p.SeenAt, o.SeenAt) {
			continue
		}
		if stateChanged {
			changed[o.EntryID] = true
		}
		rows := w.checkOfferAudit(o, stateChanged)
		if !existed {
			fresh = append(fresh, o)
		}
		if stateChanged {
			w.checkOfferMessages(o, cur)
			if o.State == nextup.OfferCancelled && rows[len(rows)-1].Reason == "no_channel" {
				w.checkNoChannel(o)
			}
		}
	}
	slices.SortFunc(fresh, func(a, b nextup.Offer) int { return int(w.m.offers[a.ID].created - w.m.offers[b.ID].created) })
	return fresh, changed
}

// slotStory reads every audit row that names a slot, oldest first.
func (w *world) slotStory(biz, slotID string) []nextup.AuditEvent {
	var evs []nextup.AuditEvent
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		var err error
		evs, err = tx.AuditList(w.ctx, nextup.AuditFilter{BusinessID: biz, SlotID: slotID})
		return err
	})
	if err != nil {
		w.fail("read the story of slot %s: %v", slotID, err)
	}
	return evs
}

// checkSentWindow: an offer held back by quiet hours keeps the deadline
// worked out when it was made if it goes out on time; if its release fired
// late, the window counts from when it was actually sent.
func (w *world) checkSentWindow(o nextup.Offer) {
	var want time.Time
	ms := w.m.slots[o.SlotID]
	b := w.m.biz[ms.biz]
	if o.SentAt.After(o.SendAt) {
		_, _, want, _ = engine.OfferWindow(*o.SentAt, ms.start, b.rulesFor(ms), b.loc)
	} else {
		_, _, want, _ = engine.OfferWindow(o.CreatedAt, ms.start, b.rulesFor(ms), b.loc)
	}
	if !o.ExpiresAt.Equal(want) {
		w.fail("check 2 offer: offer %s made at %s for %s, sent at %s, expires %s; want %s",
			o.ID, fmtT(o.CreatedAt), fmtT(o.SendAt), fmtT(*o.SentAt), fmtT(o.ExpiresAt), fmtT(want))
	}
}

// checkHandedWindow: an offer whose message was handed to the provider
// more than offers.HandOffSlack after it was made has its whole window
// from that moment, and only a longer one.
func (w *world) checkHandedWindow(p, o nextup.Offer) {
	ms := w.m.slots[o.SlotID]
	b := w.m.biz[ms.biz]
	rules := b.rulesFor(ms)
	want := engine.AddAwake(*o.SentAt, rules.WindowFor(ms.start.Sub(*o.SentAt)), rules.QuietHours, b.loc)
	if limit := ms.start.Add(-rules.MinLead); want.After(limit) {
		want = limit
	}
	if o.SentAt.Sub(*p.SentAt) <= offers.HandOffSlack || !o.ExpiresAt.After(p.ExpiresAt) || !o.ExpiresAt.Equal(want) {
		w.fail("check 2 offer: offer %s sent at %s, then handed at %s: deadline %s → %s; want %s",
			o.ID, fmtT(*p.SentAt), fmtT(*o.SentAt), fmtT(p.ExpiresAt), fmtT(o.ExpiresAt), fmtT(want))
	}
}

// tried counts the offers of a slot that did not end in a booking: what the
// try cap and "list exhausted" count (claimed offers filled seats in an
// earlier round).
func tried(offers []nextup.Offer) int {
	n := 0
	for _, o := range offers {
		if o.State != nextup.OfferClaimed {
			n++
		}
	}
	return n
}

// auditOf reads the audit rows of one subject, oldest first.
func (w *world) auditOf(biz, typ, id string) []nextup.AuditEvent {
	var evs []nextup.AuditEvent
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		var err error
		evs, err = tx.AuditList(w.ctx, nextup.AuditFilter{BusinessID: biz, SubjectType: typ, SubjectID: id})
		return err
	})
	if err != nil {
		w.fail("read audit of %s %s: %v", typ, id, err)
	}
	return evs
}

// chainProblem checks a subject's audit rows as a state machine: the first
// row creates it (from "" to one of first), each row starts where the one
// before ended, the last ends in the subject's state, and a final state
// (if finals is given) is entered exactly once and only at the end.
func chainProblem(rows []nextup.AuditEvent, first []string, state string, finals func(string) bool) string {
	if len(rows) == 0 {
		return "no audit rows"
	}
	if rows[0].From != "" || !slices.Contains(first, rows[0].To) {
		return fmt.Sprintf("first audit row is %q→%q, want \"\"→%s", rows[0].From, rows[0].To, strings.Join(first, "|"))
	}
	nFinal := 0
	for i, r := range rows {
		if i > 0 && r.From != rows[i-1].To {
			return fmt.Sprintf("audit row %d is %q→%q but the row before ended in %q", r.ID, r.From, r.To, rows[i-1].To)
		}
		if finals != nil && finals(r.To) && r.From != r.To {
			nFinal++
		}
	}
	if last := rows[len(rows)-1]; last.To != state {
		return fmt.Sprintf("the last audit row ends in %q, the subject is %s", last.To, state)
	}
	if finals != nil && finals(state) != (nFinal == 1) || nFinal > 1 {
		return fmt.Sprintf("%d audit rows end it (state %s)", nFinal, state)
	}
	return ""
}

func rowsString(rows []nextup.AuditEvent) string {
	var parts []string
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("#%d %s→%s (%s, %s)", r.ID, r.From, r.To, r.Reason, r.At.Format("01-02T15:04:05")))
	}
	return strings.Join(parts, ", ")
}

// stateRows drops the audit rows that record no state change of their
// subject: the organiser's override of a registration (Promote: reason
// "override", waiting → next_in_line, or waiting → offered beside the
// offer's own rows), an address opted out because it refused a message
// for good ("" → sms_undeliverable or email_undeliverable) and a check-in
// at the door (reason "check_in", not_checked_in ↔ checked_in). Each dropped row is held to its shape;
// bad describes the first that is not.
func stateRows(rows []nextup.AuditEvent) (out []nextup.AuditEvent, bad string) {
	for _, r := range rows {
		switch {
		case r.SubjectType == nextup.SubjectEntry && r.Reason == "override":
			if r.From != string(nextup.EntryWaiting) || (r.To != "next_in_line" && r.To != string(nextup.EntryOffered)) {
				bad = fmt.Sprintf("override row %d is %q→%q", r.ID, r.From, r.To)
			}
		case r.SubjectType == nextup.SubjectEntry && strings.HasSuffix(r.To, "_undeliverable"):
			// The fallback opting an address out that refused for good
			// (waitlist.Undeliverable): a note on the person, not a state.
			if r.From != "" || (r.To != "sms_undeliverable" && r.To != "email_undeliverable") {
				bad = fmt.Sprintf("undeliverable row %d is %q→%q", r.ID, r.From, r.To)
			}
		case r.SubjectType == nextup.SubjectBooking && r.Reason == "check_in":
			in, out := "checked_in", "not_checked_in"
			if !(r.From == in && r.To == out) && !(r.From == out && r.To == in) {
				bad = fmt.Sprintf("check-in row %d is %q→%q", r.ID, r.From, r.To)
			}
		default:
			out = append(out, r)
		}
		if bad != "" {
			return out, bad
		}
	}
	return out, ""
}

// entryFirst are the states an entry is created in: waiting, or booked
// for a registration confirmed at once.
var entryFirst = []string{string(nextup.EntryWaiting), string(nextup.EntryBooked)}

func finalOffer(s string) bool { return isFinal(nextup.OfferState(s)) }

func (w *world) checkOfferAudit(o nextup.Offer, stateChanged bool) []nextup.AuditEvent {
	rows := w.auditOf(o.BusinessID, nextup.SubjectOffer, o.ID)
	key := "offer:" + o.ID
	initial := string(nextup.OfferOffered)
	if o.SendAt.After(o.CreatedAt) {
		initial = string(nextup.OfferPending)
	}
	if p := chainProblem(rows, []string{initial}, string(o.State), finalOffer); p != "" {
		w.fail("check 2/5 audit: offer %s (%s): %s: %s", o.ID, o.State, p, rowsString(rows))
	}
	if len(rows) <= w.auditSeen[key] {
		w.fail("check 5 audit: offer %s changed (now %s) without a new audit row: %s", o.ID, o.State, rowsString(rows))
	}
	for _, r := range rows {
		if r.SlotID != o.SlotID {
			w.fail("check 5 audit: audit row %d of offer %s names slot %s, the offer is for %s", r.ID, o.ID, r.SlotID, o.SlotID)
		}
	}
	w.auditSeen[key] = len(rows)
	if w.m.offers[o.ID] == nil {
		w.m.offers[o.ID] = &mOffer{created: rows[0].ID}
	}
	return rows
}

// claimToken is the last path segment after /c/ of a claim link.
func claimToken(url string) string {
	i := strings.LastIndex(url, "/c/")
	if i < 0 {
		return ""
	}
	return url[i+3:]
}

func (w *world) messagesOf(biz, offerID string) []nextup.Message {
	var ms []nextup.Message
	err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		var err error
		ms, err = tx.MessageList(w.ctx, nextup.MessageFilter{BusinessID: biz, OfferID: offerID})
		return err
	})
	if err != nil {
		w.fail("read messages of offer %s: %v", offerID, err)
	}
	return ms
}

// checkOfferMessages is check 6: one offer message carrying the claim link
// (whose token hashes to the offer's), cancelled when the offer ended
// unclaimed; one confirmation once claimed, with the offer's booking.
func (w *world) checkOfferMessages(o nextup.Offer, cur *snapshot) {
	me := w.m.entries[o.EntryID]
	var offerMsgs, confirms, followUps []nextup.Message
	for _, m := range w.messagesOf(o.BusinessID, o.ID) {
		switch m.Kind {
		case nextup.MessageOffer:
			offerMsgs = append(offerMsgs, m)
		case nextup.MessageConfirmation:
			confirms = append(confirms, m)
		case waitlist.MessageEscalation:
			followUps = append(followUps, m)
		case waitlist.MessageReminder:
			// A booking's reminder: checked with the booking below.
		case waitlist.MessageFallback:
			// The offer (or its booking's message) sent again on the other
			// channel after one could not be delivered: check 9.
		case waitlist.MessageExpired, waitlist.MessageRequeued, waitlist.MessageDropped:
			// The lapsed or declined hold's notice, saying what the
			// re-queue rule did: to the offer's address. A decline that
			// kept the place needs none.
			want := map[string]string{requeueKeep: waitlist.MessageExpired, requeueBack: waitlist.MessageRequeued,
				requeueDrop: waitlist.MessageDropped}[w.m.lapse[o.ID]]
			if !lapsed(o) || m.Kind != want || (o.State == nextup.OfferDeclined && want == waitlist.MessageExpired) ||
				m.Channel != o.Channel || m.To != map[bool]string{true: me.phone, false: me.email}[o.Channel == nextup.ChannelSMS] {
				w.fail("check 6 messages: %s offer %s (re-queue: %q) has a notice %s", o.State, o.ID, w.m.lapse[o.ID], js(m))
			}
		default:
			w.fail("check 6 messages: offer %s has a %q message", o.ID, m.Kind)
		}
	}
	// A follow-up of an offer not seen: at most one, on the other channel,
	// with the same link, and only for a window of 30 minutes or more.
	if len(followUps) > 1 {
		w.fail("check 6 messages: offer %s has %d follow-ups", o.ID, len(followUps))
	}
	if len(followUps) == 1 {
		f := followUps[0]
		if o.SentAt == nil || o.ExpiresAt.Sub(*o.SentAt) < 30*time.Minute || len(offerMsgs) != 1 ||
			f.Channel == offerMsgs[0].Channel || f.ClaimURL != offerMsgs[0].ClaimURL || f.CreatedAt.Before(o.SendAt) {
			w.fail("check 6 messages: offer %s has a follow-up %s that does not fit the offer %s", o.ID, js(f), js(o))
		}
	}
	if o.SentAt == nil {
		// Held back by quiet hours: no message and no link until it is sent.
		if len(offerMsgs)+len(confirms) != 0 {
			w.fail("check 6 messages: offer %s was never sent but has %d messages", o.ID, len(offerMsgs)+len(confirms))
		}
		return
	}
	if len(offerMsgs) != 1 {
		w.fail("check 6 messages: offer %s has %d offer messages, want 1", o.ID, len(offerMsgs))
	}
	m := offerMsgs[0]
	tok := claimToken(m.ClaimURL)
	if tok == "" || !strings.HasPrefix(m.ClaimURL, baseURL+"/c/") || nextup.HashToken(tok) != o.TokenHash {
		w.fail("check 6 messages: the claim link %q of offer %s does not carry its token", m.ClaimURL, o.ID)
	}
	mo := w.m.offers[o.ID]
	if mo.token != "" && mo.token != tok {
		w.fail("check 6 messages: offer %s's claim link changed", o.ID)
	}
	mo.token = tok
	to := me.phone
	if o.Channel == nextup.ChannelEmail {
		to = me.email
	}
	if m.EntryID != o.EntryID || m.Channel != o.Channel || m.To != to || m.NotBefore.After(*o.SentAt) {
		w.fail("check 6 messages: offer message %s of %s goes to %s %q (entry %s) not before %s; want %s %q, not before %s",
			m.ID, o.ID, m.Channel, m.To, m.EntryID, fmtT(m.NotBefore), o.Channel, to, fmtT(*o.SentAt))
	}
	// The relay moves the message on (sent; failed and tried again;
	// dead). An offer that ends unclaimed cancels it unless it went out
	// or died already; one being sent at that moment stays cancelled
	// unless the send went through.
	wantStates := []nextup.MessageState{nextup.MessageQueued, nextup.MessageFailed, nextup.MessageSent, nextup.MessageDead}
	if isFinal(o.State) && o.State != nextup.OfferClaimed {
		wantStates = []nextup.MessageState{nextup.MessageCancelled, nextup.MessageSent, nextup.MessageDead}
	}
	if !slices.Contains(wantStates, m.State) {
		w.fail("check 6 messages: offer message of %s offer %s is %s, want one of %v", o.State, o.ID, m.State, wantStates)
	}
	if o.State != nextup.OfferClaimed {
		if len(confirms) != 0 {
			w.fail("check 6 messages: %s offer %s has %d confirmations", o.State, o.ID, len(confirms))
		}
		return
	}
	var books []nextup.Booking
	for _, b := range cur.slotBook[o.SlotID] {
		if b.OfferID == o.ID {
			books = append(books, b)
		}
	}
	if len(books) != 1 {
		w.fail("check 6 booking: claimed offer %s has %d bookings, want 1", o.ID, len(books))
	}
	if len(confirms) != 1 || confirms[0].BookingID != books[0].ID || confirms[0].OfferID != o.ID || confirms[0].EntryID != o.EntryID {
		w.fail("check 6 messages: claimed offer %s has confirmations %s, want one for booking %s", o.ID, js(confirms), books[0].ID)
	}
	if mo.bookingID != "" && mo.bookingID != books[0].ID {
		w.fail("check 6 booking: claimed offer %s has booking %s, the claim returned %s", o.ID, books[0].ID, mo.bookingID)
	}
	mo.bookingID = books[0].ID
}

// checkEntries is check 3, check 5 for entries and the model's criteria.
func (w *world) checkEntries(prev, cur *snapshot) {
	live := map[string]int{}
	for _, o := range cur.offers {
		if o.State.Live() {
			live[o.EntryID]++
		}
	}
	for _, id := range sortedKeys(cur.entries) {
		e, me := cur.entries[id], w.m.entries[id]
		if e.BusinessID != me.biz || e.Email != me.email || e.Phone != me.phone || e.Channel != me.channel || e.Service != me.service ||
			e.EventID != me.eventID || e.PartySize != me.party || !e.Earliest.Equal(me.earliest) || !e.Latest.Equal(me.latest) ||
			e.Staff != me.staff || e.Priority != me.priority || !e.JoinedAt.Equal(me.joinedAt) || e.Seq != me.seq ||
			!sameAvailability(e.Availability, me.avail) {
			w.fail("check model: entry %s is %s, the model has %+v", id, js(e), *me)
		}
		if e.Lapses != me.lapses || (me.dropped && e.State != nextup.EntryLeft) {
			w.fail("check requeue: entry %s is %s with %d lapses; the model counts %d (dropped: %v)", id, e.State, e.Lapses, me.lapses, me.dropped)
		}
		if n := live[id]; n > 1 || (e.State == nextup.EntryOffered) != (n == 1) {
			w.fail("check 3 entries: entry %s is %s and holds %d live offers", id, e.State, n)
		}
		p, existed := prev.entries[id]
		if existed && entryTerminal(p.State) && p.State != e.State && !w.cancelledRegistration(p, e, cur) {
			w.fail("check 3 entries: entry %s went from %s to %s", id, p.State, e.State)
		}
		if !existed && e.State == nextup.EntryBooked && !slices.ContainsFunc(cur.slotBook[e.EventID], func(b nextup.Booking) bool {
			return b.EntryID == id && b.OfferID == "" && w.m.direct[b.ID] == id
		}) {
			w.fail("check 3 entries: entry %s was created booked without a direct booking of its event", id)
		}
		if existed && p.State == e.State {
			continue
		}
		rows, bad := stateRows(w.auditOf(e.BusinessID, nextup.SubjectEntry, id))
		if bad != "" {
			w.fail("check 5 audit: entry %s: %s", id, bad)
		}
		if p := chainProblem(rows, entryFirst, string(e.State), nil); p != "" {
			w.fail("check 5 audit: entry %s (%s): %s: %s", id, e.State, p, rowsString(rows))
		}
		key := "entry:" + id
		if len(rows) <= w.auditSeen[key] {
			w.fail("check 5 audit: entry %s changed to %s without a new audit row", id, e.State)
		}
		w.auditSeen[key] = len(rows)
	}
}

// checkDedupe is the rules' dedupe: a booking made in the step (a claim,
// an event's direct registration) withdraws exactly the other active
// entries of its person that it makes pointless under the business's
// rule — with same_service those for the booked slot's service whose
// dates take in its day, with all every one — each leaving with the audit
// reason deduped and its person told; no other entry leaves so.
func (w *world) checkDedupe(prev, cur *snapshot) {
	want := map[string]string{} // entry → the booking that makes it pointless
	for _, id := range sortedKeys(cur.bookings) {
		b := cur.bookings[id]
		booked := w.m.entries[b.EntryID]
		if _, old := prev.bookings[id]; old || booked == nil || b.State != nextup.BookingBooked {
			continue
		}
		mb, sl := w.m.biz[booked.biz], cur.slots[b.SlotID]
		for _, oid := range sortedKeys(prev.entries) {
			x, mx := prev.entries[oid], w.m.entries[oid]
			if oid == b.EntryID || mx == nil || mx.person != booked.person || (x.State != nextup.EntryWaiting && x.State != nextup.EntryOffered) {
				continue
			}
			if dedupes(mb, x, sl) {
				want[oid] = id
			}
		}
	}
	for _, id := range sortedKeys(cur.entries) {
		e := cur.entries[id]
		p, existed := prev.entries[id]
		deduped := false
		if existed && p.State != e.State && e.State == nextup.EntryLeft {
			rows := w.auditOf(e.BusinessID, nextup.SubjectEntry, id)
			deduped = len(rows) > 0 && rows[len(rows)-1].Reason == "deduped"
		}
		switch {
		case want[id] != "" && !deduped:
			w.fail("check dedupe: booking %s makes entry %s (%s, %s) pointless under %q, but it is %s", want[id], id, p.Service, p.State,
				w.m.biz[e.BusinessID].rules.Dedupe, e.State)
		case want[id] == "" && deduped:
			w.fail("check dedupe: entry %s left as deduped without a booking of its person that makes it pointless (rule %q)", id,
				w.m.biz[e.BusinessID].rules.Dedupe)
		case deduped:
			w.st.deduped++
			w.m.deduped[id] = true
			if !w.hasMessage(e, waitlist.MessageDeduped) && w.reachable(e) {
				w.fail("check dedupe: entry %s was withdrawn by booking %s and its person not told", id, want[id])
			}
		}
	}
}

// dedupes is the model of the dedupe rule: does booking slot sl make
// entry x pointless under b's rules?
func dedupes(b *mBiz, x nextup.Entry, sl nextup.Slot) bool {
	switch b.rules.Dedupe {
	case nextup.DedupeAll:
		return true
	case nextup.DedupeSameService:
		if x.EventID != "" || sl.Kind == nextup.KindEvent || x.Service != sl.Service {
			return false
		}
		y, m, d := sl.StartsAt.In(b.loc).Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, b.loc)
		next := time.Date(y, m, d+1, 0, 0, 0, 0, b.loc)
		return (x.Earliest.IsZero() || x.Earliest.Before(next)) && (x.Latest.IsZero() || !x.Latest.Before(day))
	}
	return false
}

// reachable reports whether any address of e is not suppressed.
func (w *world) reachable(e nextup.Entry) bool {
	var addrs []string
	if e.Email != "" {
		addrs = append(addrs, nextup.AddressKey(nextup.ChannelEmail, e.Email))
	}
	if e.Phone != "" {
		addrs = append(addrs, nextup.AddressKey(nextup.ChannelSMS, e.Phone))
	}
	var sup []nextup.Suppression
	if err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
		var err error
		sup, err = tx.SuppressionList(w.ctx, e.BusinessID, addrs)
		return err
	}); err != nil {
		w.fail("read suppressions of entry %s: %v", e.ID, err)
	}
	return len(sup) < len(addrs)
}

// hasMessage reports whether a message of kind was queued for entry e,
// on either of its addresses.
func (w *world) hasMessage(e nextup.Entry, kind string) bool {
	for _, to := range []string{e.Email, e.Phone} {
		if to == "" {
			continue
		}
		var ms []nextup.Message
		if err := w.fs.Read(w.ctx, func(tx nextup.Tx) error {
			var err error
			ms, err = tx.MessageList(w.ctx, nextup.MessageFilter{BusinessID: e.BusinessID, To: to})
			return err
		}); err != nil {
			w.fail("read messages of entry %s: %v", e.ID, err)
		}
		if slices.ContainsFunc(ms, func(m nextup.Message) bool { return m.Kind == kind && m.EntryID == e.ID }) {
			return true
		}
	}
	return false
}

// cancelledRegistration: a booked registration leaves only when its
// booking ends in this step (its person cancels it, staff cancel the
// booking, release its seats or mark a no-show).
func (w *world) cancelledRegistration(p, e nextup.Entry, cur *snapshot) bool {
	if p.State != nextup.EntryBooked || e.State != nextup.EntryLeft || e.EventID == "" {
		return false
	}
	for _, b := range cur.slotBook[e.EventID] {
		if b.EntryID == e.ID && b.State != nextup.BookingBooked {
			if pb, ok := w.prev.bookings[b.ID]; ok && pb.State == nextup.BookingBooked {
				return true
			}
		}
	}
	return false
}

func sameAvailability(a, b []nextup.Availability) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// checkBookings is check 5 and 6 for bookings.
func (w *world) checkBookings(prev, cur *snapshot) {
	perOffer := map[string]int{}
	for _, id := range sortedKeys(cur.bookings) {
		b := cur.bookings[id]
		if b.OfferID == "" {
			// A registration confirmed at once: no offer, the entry's party.
			me := w.m.entries[b.EntryID]
			if w.m.direct[id] != b.EntryID || me == nil || me.eventID != b.SlotID || b.Seats != me.party {
				w.fail("check 6 booking: booking %s (entry %s, %d seats, slot %s) has no offer and is no direct registration the model made", id, b.EntryID, b.Seats, b.SlotID)
			}
		} else if o, ok := cur.offers[b.OfferID]; !ok || o.State != nextup.OfferClaimed || b.Seats != o.Seats || b.EntryID != o.EntryID || b.SlotID != o.SlotID {
			w.fail("check 6 booking: booking %s (offer %s, %d seats) does not match a claimed offer: %s", id, b.OfferID, b.Seats, js(o))
		}
		perOffer[b.OfferID]++
		p, existed := prev.bookings[id]
		if existed && p.State != nextup.BookingBooked && !reflect.DeepEqual(p, b) {
			w.fail("check 5 booking: ended booking %s changed:\n\tbefore %s\n\tafter  %s", id, js(p), js(b))
		}
		if existed && p.State == b.State {
			continue
		}
		rows, bad := stateRows(w.auditOf(b.BusinessID, nextup.SubjectBooking, id))
		if bad != "" {
			w.fail("check 5 audit: booking %s: %s", id, bad)
		}
		ended := func(s string) bool { return s != string(nextup.BookingBooked) }
		if p := chainProblem(rows, []string{string(nextup.BookingBooked)}, string(b.State), ended); p != "" {
			w.fail("check 5 audit: booking %s (%s): %s: %s", id, b.State, p, rowsString(rows))
		}
	}
	for _, id := range sortedKeys(cur.offers) {
		if cur.offers[id].State == nextup.OfferClaimed && perOffer[id] != 1 {
			w.fail("check 6 booking: claimed offer %s has %d bookings, want 1", id, perOffer[id])
		}
	}
}

// checkHandBacks: a slot is with staff iff it has an open hand-back (or a
// resolved one it has not had seats freed since); each hand-back had its
// reason; the hand-back is audited.
func (w *world) checkHandBacks(prev, cur *snapshot, changed map[string]bool) {
	open := map[string]int{}
	any := map[string]bool{}
	for _, id := range sortedKeys(cur.handbacks) {
		h := cur.handbacks[id]
		if w.m.slots[h.SlotID] == nil {
			w.fail("check hand-back: hand-back %s is for unknown slot %s", id, h.SlotID)
		}
		any[h.SlotID] = true
		if h.State == nextup.HandBackOpen {
			open[h.SlotID]++
		}
		p, existed := prev.handbacks[id]
		if existed && p.State == nextup.HandBackResolved && !reflect.DeepEqual(p, h) {
			w.fail("check hand-back: resolved hand-back %s changed", id)
		}
		if !existed {
			w.newHB[id] = true
			w.checkNewHandBack(prev, cur, h, changed)
		}
		if existed && p.State == nextup.HandBackOpen && h.State == nextup.HandBackResolved {
			// Staff resolving it writes a hand-back row; fresh seats taking
			// the slot back from staff (release, resize, a cancelled
			// booking) resolve it without one. Counted and reported.
			rows := w.auditOf(h.BusinessID, nextup.SubjectHandBack, id)
			if !slices.ContainsFunc(rows, func(r nextup.AuditEvent) bool { return r.To == string(nextup.HandBackResolved) }) {
				w.st.unauditedResolve++
			}
		}
	}
	for _, id := range sortedKeys(cur.slots) {
		s := cur.slots[id]
		if open[id] > 1 || (open[id] == 1 && !s.HandedBack) || (s.HandedBack && !any[id]) {
			w.fail("check hand-back: slot %s handed_back=%v with %d open hand-backs", id, s.HandedBack, open[id])
		}
		p, existed := prev.slots[id]
		was := existed && p.HandedBack
		// Fresh seats end a hand-back: the engine decides the slot again
		// (and may hand it back anew); nothing else takes it from staff.
		if w.freed[id] && s.HandedBack && !slices.ContainsFunc(sortedKeys(w.newHB), func(h string) bool { return cur.handbacks[h].SlotID == id }) {
			w.fail("check hand-back: slot %s got fresh seats but stays with staff under its old hand-back", id)
		}
		if was && !s.HandedBack && !w.freed[id] {
			w.fail("check hand-back: slot %s came back from staff without fresh seats", id)
		}
		if was == s.HandedBack {
			continue
		}
		// The slot's story: every row naming the slot, of any subject.
		rows := w.slotStory(s.BusinessID, id)
		key := "story:" + id
		newRows := rows[min(w.auditSeen[key], len(rows)):]
		w.auditSeen[key] = len(rows)
		if s.HandedBack && !slices.ContainsFunc(newRows, func(r nextup.AuditEvent) bool {
			return r.SubjectType == nextup.SubjectSlot && r.SubjectID == id && r.To == string(nextup.SlotHandedBack)
		}) {
			w.fail("check 5 audit: slot %s was handed back without an audit row: %s", id, rowsString(rows))
		}
		if !s.HandedBack {
			if len(newRows) == 0 {
				w.fail("check 5 audit: slot %s came back from staff (handed_back true→false) with nothing in its story: %s", id, rowsString(rows))
			}
			// DESIGN.md asks for a row per state change of a slot; the
			// way back from staff through a cancelled booking or a no-show
			// writes only the booking's row. Counted and reported.
			if !slices.ContainsFunc(newRows, func(r nextup.AuditEvent) bool {
				return r.SubjectType == nextup.SubjectSlot && r.SubjectID == id
			}) {
				w.st.unauditedUnHandBack++
				if w.st.unauditedExample == "" {
					w.st.unauditedExample = fmt.Sprintf("seed %d step %d (%s): slot %s", w.seed, w.step, w.op, id)
				}
			}
		}
	}
}

// checkNewHandBack: the engine hands a slot back only for its reason: too
// soon for a claim window, the try cap reached, or the list exhausted
// after at least one offer, with nobody waiting who fits.
func (w *world) checkNewHandBack(prev, cur *snapshot, h nextup.HandBack, changed map[string]bool) {
	s, ms := cur.slots[h.SlotID], w.m.slots[h.SlotID]
	b := w.m.biz[ms.biz]
	t := h.CreatedAt
	var offers []nextup.Offer
	for _, o := range cur.slotOffer[s.ID] {
		if !o.CreatedAt.After(t) {
			offers = append(offers, o)
		}
	}
	rules := b.rulesFor(ms)
	_, _, _, ok := engine.OfferWindow(t, s.StartsAt, rules, b.loc)
	switch h.Reason {
	case nextup.HandBackTooSoon:
		if s.StartsAt.Sub(t) >= b.rules.MinLead && ok {
			w.fail("check hand-back: slot %s handed back as too soon at %s, but it starts %s later with a claim window possible", s.ID, fmtT(t), s.StartsAt.Sub(t))
		}
	case nextup.HandBackPromotionCutoff:
		if !s.PromotionClosed(t) {
			w.fail("check hand-back: slot %s handed back for its promotion cutoff at %s, which had not passed (start %s, settings %s)", s.ID, fmtT(t), fmtT(s.StartsAt), js(s.Event))
		}
	case nextup.HandBackTryCap:
		if rules.MaxOffersPerSlot <= 0 || tried(offers) < rules.MaxOffersPerSlot {
			w.fail("check hand-back: slot %s handed back for the try cap after %d tries (cap %d)", s.ID, tried(offers), rules.MaxOffersPerSlot)
		}
	case nextup.HandBackListExhausted:
		if tried(offers) == 0 {
			w.fail("check hand-back: slot %s handed back as list exhausted without anyone tried", s.ID)
		}
		if s.HandedBack {
			free := s.Capacity - s.BookedSeats - s.HeldSeats
			for _, eid := range b.entryIDs {
				if w.waitedThrough(prev, cur, eid, changed) && w.wouldOffer(cur, s, w.m.entries[eid], free, t, 0) {
					w.fail("check hand-back: slot %s handed back as list exhausted while entry %s waits and fits", s.ID, eid)
				}
			}
		}
	default:
		w.fail("check hand-back: slot %s handed back for unknown reason %q", s.ID, h.Reason)
	}
	w.st.handBacks[h.Reason]++
}

// waitedThrough: the entry was waiting before the step and after it, and
// no offer of its was made or ended in between.
func (w *world) waitedThrough(prev, cur *snapshot, id string, changed map[string]bool) bool {
	p, ok1 := prev.entries[id]
	c, ok2 := cur.entries[id]
	return ok1 && ok2 && p.State == nextup.EntryWaiting && c.State == nextup.EntryWaiting && !changed[id]
}

// wouldOffer: the model's answer to "must e be offered slot s at t", with
// free seats free: it fits by criteria and lead time, the party fits the
// seating, it is not kept from s (keptFrom), it has a channel and is under the daily
// cap (counting the offers created before audit row before; 0: all).
func (w *world) wouldOffer(cur *snapshot, s nextup.Slot, e *mEntry, free int, t time.Time, before int64) bool {
	ms := w.m.slots[s.ID]
	if !w.m.fitsCriteria(ms, e, t) {
		return false
	}
	if ms.seating == nextup.SeatingUnit {
		if free != s.Capacity || !w.m.unitPartyFits(ms, e.party) {
			return false
		}
	} else if e.party > free {
		return false
	}
	offers := cur.slotOffer[s.ID]
	if before > 0 {
		// The slot's offers as they were when the offer at audit row
		// before was made.
		offers = slices.DeleteFunc(slices.Clone(offers), func(o nextup.Offer) bool {
			mo := w.m.offers[o.ID]
			return mo == nil || mo.created >= before
		})
	}
	if w.m.keptFrom(offers, e) {
		return false
	}
	return w.m.channelAt(e, before) != "" && w.m.underCap(cur, e, t, before)
}

// checkFairness is check 4. Each new offer, in creation order, must have
// gone to an entry that fits by the model's rules, with the channel, the
// claim window and the daily cap the model expects; and nobody who waited
// through the step, fits, was never offered the slot, passes the
// guardrails and comes earlier in fair order may have been passed over.
// For a shared slot "fits" uses the new offer's party as the free seats:
// whoever needs no more seats than it would have fitted when it was made.
func (w *world) checkFairness(prev, cur *snapshot, fresh []nextup.Offer, changed map[string]bool) {
	for _, o := range fresh {
		s, ms, e := cur.slots[o.SlotID], w.m.slots[o.SlotID], w.m.entries[o.EntryID]
		b := w.m.biz[ms.biz]
		t := o.CreatedAt
		created := w.m.offers[o.ID].created
		// An organiser's override (Promote) offers out of fair order, on
		// the record: the entry's "override" row for this slot.
		override := w.overrideOffer(o)
		if !override && s.PromotionClosed(t) {
			w.fail("check 4 promotion cutoff: offer %s of event %s made at %s, after its promotion cutoff (start %s, cutoff %s)",
				o.ID, s.ID, fmtT(t), fmtT(s.StartsAt), s.Event.PromotionCutoff)
		}
		if override && (e.eventID != s.ID || e.biz != ms.biz) || !override && !w.m.fitsCriteria(ms, e, t) {
			// The override picks its person: their place and their stated
			// window do not stand in its way; the event does.
			w.fail("check 4 fits: offer %s of slot %s went to entry %s, which does not fit it (criteria %+v, slot %s)", o.ID, s.ID, e.id, *e, js(s))
		}
		seatsOK := o.PartySize == e.party && o.Seats == o.PartySize
		if ms.seating == nextup.SeatingUnit {
			seatsOK = o.PartySize == e.party && o.Seats == ms.capacity && w.m.unitPartyFits(ms, e.party)
		}
		if !seatsOK {
			w.fail("check 4 fits: offer %s holds %d seats for a party of %d (entry party %d) of %s slot %s (capacity %d, min party %d, down-fit %v)",
				o.ID, o.Seats, o.PartySize, e.party, ms.seating, s.ID, ms.capacity, ms.minParty, b.rules.DownFit)
		}
		if ch := w.m.channelAt(e, created); ch == "" || ch != o.Channel {
			w.fail("check 4 guardrails: offer %s goes by %q, the model's channel for entry %s is %q", o.ID, o.Channel, e.id, ch)
		}
		if o.ContactKey != e.key() {
			w.fail("check 4 guardrails: offer %s has contact key %q, want %q", o.ID, o.ContactKey, e.key())
		}
		if !override && !w.m.underCap(cur, e, t, created) {
			w.fail("check 4 guardrails: offer %s to %s breaks the daily cap of %d (%d offers today before it)",
				o.ID, e.key(), b.rules.MaxOffersPerPersonPerDay, w.m.offersToday(cur, e.biz, e.key(), t, created))
		}
		state, sendAt, expires, ok := engine.OfferWindow(t, ms.start, b.rulesFor(ms), b.loc)
		initial := nextup.OfferOffered
		if o.SendAt.After(o.CreatedAt) {
			initial = nextup.OfferPending
		}
		if initial == nextup.OfferPending && o.SentAt != nil {
			w.checkSentWindow(o) // made and sent within this step
			expires = o.ExpiresAt
		}
		if initial == nextup.OfferOffered && o.SentAt != nil && !o.SentAt.Equal(o.CreatedAt) {
			// Made and handed to the provider late within this step:
			// the window counts from the hand-off.
			w.checkHandedWindow(nextup.Offer{SentAt: &o.CreatedAt, ExpiresAt: expires}, o)
			expires = o.ExpiresAt
		}
		if !ok || initial != state || !o.SendAt.Equal(sendAt) || !o.ExpiresAt.Equal(expires) {
			w.fail("check 4 window: offer %s made at %s is %s, sent %s, expires %s; OfferWindow says %s, %s, %s (ok=%v)",
				o.ID, fmtT(t), initial, o.SendAt.Format("01-02T15:04:05"), o.ExpiresAt.Format("01-02T15:04:05"), state,
				sendAt.Format("01-02T15:04:05"), expires.Format("01-02T15:04:05"), ok)
		}
		if o.RuleVersion != b.rules.Version {
			w.fail("check 4 rules: offer %s decided under rules v%d, the business is at v%d", o.ID, o.RuleVersion, b.rules.Version)
		}
		free := ms.capacity
		if ms.seating == nextup.SeatingShared {
			free = o.PartySize
		}
		for _, eid := range b.entryIDs {
			if override {
				w.st.overrides++
				break
			}
			if eid == e.id || !w.waitedThrough(prev, cur, eid, changed) {
				continue
			}
			other, then := w.m.entries[eid], e.at(created)
			if fairBefore(other, then) && w.wouldOffer(cur, s, other, free, t, created) {
				w.fail("check 4 fair order: offer %s of slot %s went to %s (prio=%v joined %s seq %d), passing over %s "+
					"(prio=%v joined %s seq %d), who waited, fits, was never offered it and passes the guardrails",
					o.ID, s.ID, e.id, e.priority, fmtT(then.joinedAt), then.seq, eid, other.priority, fmtT(other.joinedAt), other.seq)
			}
		}
	}
}

// offeredAgain: offer o of a slot went to the entry of its offer p before
// it as the re-queue rule allows: p's lapse moved the entry to the back of
// the line, and someone else was offered the slot (offers) after p ended
// and before o.
func (w *world) offeredAgain(offers []nextup.Offer, p, o nextup.Offer) bool {
	if w.m.lapse[p.ID] != requeueBack {
		return false
	}
	return slices.ContainsFunc(offers, func(x nextup.Offer) bool {
		return x.EntryID != o.EntryID && !x.CreatedAt.Before(*p.ResolvedAt) && !x.CreatedAt.After(o.CreatedAt)
	})
}

// overrideOffer reports whether offer o was made by the organiser's
// override: its entry has an audit row "override" into offered, for o's
// slot, at o's creation (an entry is offered a slot at most once).
func (w *world) overrideOffer(o nextup.Offer) bool {
	for _, r := range w.auditOf(o.BusinessID, nextup.SubjectEntry, o.EntryID) {
		if r.Reason == "override" && r.To == string(nextup.EntryOffered) && r.SlotID == o.SlotID && r.At.Equal(o.CreatedAt) {
			return true
		}
	}
	return false
}

// checkMatching is check 7: after every step, an open slot (future, free
// seats, not with staff, not too soon for a claim window, no live offer if
// unit, try cap not reached) has nobody waiting who would be offered it.
func (w *world) checkMatching(cur *snapshot) {
	now := cur.now
	for _, bid := range w.m.bizIDs {
		b := w.m.biz[bid]
		for _, sid := range b.slotIDs {
			s := cur.slots[sid]
			free := s.Capacity - s.BookedSeats - s.HeldSeats
			if !s.StartsAt.After(now) || s.HandedBack || free <= 0 || s.StartsAt.Sub(now) < b.rules.MinLead {
				continue
			}
			if s.Seating == nextup.SeatingUnit && s.HeldSeats > 0 {
				continue
			}
			if s.PromotionClosed(now) {
				continue // an event's freed seats stay open for walk-ins and registrations
			}
			rules := b.rulesFor(w.m.slots[sid])
			if max := rules.MaxOffersPerSlot; max > 0 && tried(cur.slotOffer[sid]) >= max {
				continue
			}
			if _, _, _, ok := engine.OfferWindow(now, s.StartsAt, rules, b.loc); !ok {
				continue
			}
			for _, eid := range b.entryIDs {
				e := w.m.entries[eid]
				if ce, ok := cur.entries[eid]; !ok || ce.State != nextup.EntryWaiting || !w.wouldOffer(cur, s, e, free, now, 0) {
					continue
				}
				if t, ok := cur.timers[nextup.TimerEntryRematch+":"+eid]; ok && !t.DueAt.After(now) {
					// Its midnight re-match is due but a faulted sweep has not
					// fired it yet; the next sweep will (check 8 sees to that
					// after a clean advance).
					continue
				}
				if !strict && w.capRolledOver(e, s, now) {
					continue
				}
				if max := rules.MaxOffersPerSlot; !strict && max > 0 && len(cur.slotOffer[sid]) >= max {
					// Claimed offers do not count as tries, so a claim can
					// bring a slot back under its try cap; but a claim does
					// not decide the slot again. Counted and reported.
					w.st.claimGaps++
					if w.st.claimGapExample == "" {
						w.st.claimGapExample = fmt.Sprintf("seed %d step %d (%s): slot %s (%s, %d free, %d offers of which %d unclaimed, cap %d) and entry %s",
							w.seed, w.step, w.op, sid, s.Seating, free, len(cur.slotOffer[sid]), tried(cur.slotOffer[sid]), max, eid)
					}
					continue
				}
				w.fail("check 7 matching: slot %s (%s, %d free of %d, starts %s) is open and entry %s waits, fits and was never offered it",
					sid, s.Seating, free, s.Capacity, fmtT(s.StartsAt), eid)
			}
		}
	}
}

// capRolledOver excuses check 7 in one known case: the entry was skipped
// for this slot because of the daily cap on an earlier local day, and
// nothing has decided the slot again since the cap reset at midnight. That
// is a liveness gap of the engine (nothing re-runs matching when the cap
// resets), counted and reported rather than failed.
func (w *world) capRolledOver(e *mEntry, s nextup.Slot, now time.Time) bool {
	rows := w.auditOf(e.biz, nextup.SubjectEntry, e.id)
	var last *nextup.AuditEvent
	for i := range rows {
		if rows[i].SlotID == s.ID && rows[i].Reason == "skipped:"+engine.SkipDailyCap {
			last = &rows[i]
		}
	}
	loc := w.m.biz[e.biz].loc
	if last == nil || !dayStart(last.At, loc).Before(dayStart(now, loc)) {
		return false
	}
	if !w.st.capGapSeen[s.ID+"/"+e.id] {
		w.st.capGapSeen[s.ID+"/"+e.id] = true
		w.st.capGaps++
		if w.st.capGapExample == "" {
			w.st.capGapExample = fmt.Sprintf("seed %d step %d: slot %s stays open at %s; entry %s was skipped for it (daily cap) at %s and is under the cap since midnight",
				w.seed, w.step, s.ID, fmtT(now), e.id, fmtT(last.At))
		}
	}
	return true
}

// checkTimers is check 8: the durable timers match the live offers, every
// business has its daily housekeeping, and after a clean Advance nothing
// due is left unfired.
func (w *world) checkTimers(cur *snapshot) {
	now := cur.now
	for _, id := range sortedKeys(cur.offers) {
		o := cur.offers[id]
		exp, hasExp := cur.timers[nextup.TimerOfferExpire+":"+id]
		rel, hasRel := cur.timers[nextup.TimerOfferRelease+":"+id]
		esc, hasEsc := cur.timers[nextup.TimerOfferEscalate+":"+id]
		// An offer sent with a window of 30 minutes or more is followed up
		// after the rules' share of it (half by default), if it was not
		// seen by then.
		if o.State == nextup.OfferOffered && o.SentAt != nil && o.ExpiresAt.Sub(*o.SentAt) >= 30*time.Minute {
			share := 0.5
			if b := w.m.biz[o.BusinessID]; b != nil && b.rules.FollowUp.AfterShare != 0 {
				share = b.rules.FollowUp.AfterShare
			}
			half := o.SentAt.Add(time.Duration(float64(o.ExpiresAt.Sub(*o.SentAt)) * share))
			if now.Before(half) && (!hasEsc || !esc.DueAt.Equal(half)) {
				w.fail("check 8 timers: offer %s (sent %s, expires %s) has follow-up timer %s, want one due %s", id, fmtT(*o.SentAt), fmtT(o.ExpiresAt), js(esc), fmtT(half))
			}
		} else if hasEsc {
			w.fail("check 8 timers: %s offer %s has a follow-up timer %s", o.State, id, js(esc))
		}
		switch {
		case o.State == nextup.OfferOffered && (!hasExp || !exp.DueAt.Equal(o.ExpiresAt) || exp.SubjectID != id):
			w.fail("check 8 timers: offer %s (expires %s) has expiry timer %s", id, fmtT(o.ExpiresAt), js(exp))
		case o.State == nextup.OfferPending && (!hasRel || rel.DueAt.Before(o.SendAt) || rel.SubjectID != id):
			// A release that fired late into the next quiet hours waits for
			// them to end again: its timer may be due after SendAt.
			w.fail("check 8 timers: pending offer %s (to be sent at %s) has release timer %s", id, fmtT(o.SendAt), js(rel))
		case o.State != nextup.OfferPending && hasRel, !o.State.Live() && hasExp:
			w.fail("check 8 timers: %s offer %s still has pending timers (expire %v, release %v)", o.State, id, hasExp, hasRel)
		}
	}
	house, summary := map[string]int{}, map[string]int{}
	for _, key := range sortedKeys(cur.timers) {
		t := cur.timers[key]
		switch t.Kind {
		case nextup.TimerOfferExpire, nextup.TimerOfferRelease, nextup.TimerOfferEscalate:
			if _, ok := cur.offers[t.SubjectID]; !ok {
				w.fail("check 8 timers: timer %s is for unknown offer %s", key, t.SubjectID)
			}
		case nextup.TimerHousekeeping:
			house[t.BusinessID]++
		case nextup.TimerMonthlySummary:
			// Due on the first Monday of a month at 09:00 local.
			summary[t.BusinessID]++
			if loc := w.m.biz[t.BusinessID].loc; !t.DueAt.Equal(insight.SummaryAt(t.DueAt, loc)) {
				w.fail("check 8 timers: summary timer %s is due %s, not a first Monday at 09:00", key, t.DueAt.In(loc))
			}
		case nextup.TimerSheetSync:
			w.fail("check 8 timers: sheet sync timer %s, but no simulated business mirrors a sheet", key)
		case nextup.TimerBookingRemind:
			// Pending only for a booked booking, due before its slot
			// starts and after it was made.
			b, ok := cur.bookings[t.SubjectID]
			if !ok || b.State != nextup.BookingBooked || b.BusinessID != t.BusinessID {
				w.fail("check 8 timers: reminder %s is for booking %s, which is not booked: %s", key, t.SubjectID, js(b))
			} else if sl := cur.slots[b.SlotID]; !t.DueAt.Before(sl.StartsAt) || !t.DueAt.After(b.CreatedAt) {
				w.fail("check 8 timers: reminder %s is due %s, outside booking %s (made %s) and its start %s", key, fmtT(t.DueAt), b.ID, fmtT(b.CreatedAt), fmtT(sl.StartsAt))
			}
		case nextup.TimerEntryRematch:
			// Set when an entry was skipped for the daily cap: due at the
			// next local midnight of its business, for an entry it knows.
			e, ok := cur.entries[t.SubjectID]
			if !ok || e.BusinessID != t.BusinessID {
				w.fail("check 8 timers: rematch timer %s is for unknown entry %s", key, t.SubjectID)
			} else if loc := w.m.biz[t.BusinessID].loc; !t.DueAt.Equal(dayStart(t.DueAt, loc)) {
				w.fail("check 8 timers: rematch timer %s is not due at local midnight: %s", key, t.DueAt.In(loc))
			}
		default:
			w.fail("check 8 timers: unknown timer %s", js(t))
		}
		if end, leased := t.LeasedUntil(); !w.timerDirty && !t.DueAt.After(now) && (!leased || !end.After(now)) {
			w.fail("check 8 timers: timer %s was due at %s and has not fired by %s", key, fmtT(t.DueAt), fmtT(now))
		}
	}
	for _, bid := range w.m.bizIDs {
		if house[bid] != 1 {
			w.fail("check 8 timers: business %s has %d pending housekeeping timers, want 1", bid, house[bid])
		}
		// This month's, and next month's once the day's housekeeping has
		// run past this month's time before it fired.
		if summary[bid] < 1 || summary[bid] > 2 {
			w.fail("check 8 timers: business %s has %d pending summary timers, want 1 (or 2 on its day)", bid, summary[bid])
		}
	}
}

// count adds what the step did to the statistics.
func (w *world) count(prev, cur *snapshot, fresh []nextup.Offer) {
	for _, o := range fresh {
		w.st.offers++
		if o.SendAt.After(o.CreatedAt) {
			w.st.pending++
		}
	}
	for _, id := range sortedKeys(cur.offers) {
		o := cur.offers[id]
		p, existed := prev.offers[id]
		if isFinal(o.State) && (!existed || !isFinal(p.State)) {
			w.st.ended[o.State]++
		}
	}
	for _, id := range sortedKeys(cur.entries) {
		if e := cur.entries[id]; e.State == nextup.EntryExpired && prev.entries[id].State != nextup.EntryExpired {
			w.st.entriesExpired++
		}
	}
}

// deepCheck reads everything and checks it as a whole: every audit trail
// of an offer, entry and booking is a complete state machine ending in its
// state, no audit row or message names a subject that does not exist (a
// rolled-back transaction leaves none), and each offer has its messages.
func (w *world) deepCheck() {
	d := w.dump(w.ctx)
	full := &snapshot{slots: map[string]nextup.Slot{}, entries: map[string]nextup.Entry{}, offers: map[string]nextup.Offer{},
		bookings: map[string]nextup.Booking{}, handbacks: map[string]nextup.HandBack{}, timers: map[string]nextup.Timer{}}
	for _, x := range d.Timers {
		if x.DoneAt == nil {
			full.timers[x.Key] = x
		}
	}
	for _, x := range d.Slots {
		full.slots[x.ID] = x
	}
	for _, x := range d.Entries {
		full.entries[x.ID] = x
	}
	for _, x := range d.Offers {
		full.offers[x.ID] = x
	}
	for _, x := range d.Bookings {
		full.bookings[x.ID] = x
	}
	for _, x := range d.HandBacks {
		full.handbacks[x.ID] = x
	}
	if diff := sameState(w.prev, full); diff != "" {
		w.fail("check snapshot: the state carried over between steps differs from the store: %s", diff)
	}
	rows := map[string][]nextup.AuditEvent{}
	lastID := map[string]int64{}
	for _, r := range d.Audit {
		if r.ID <= lastID[r.BusinessID] {
			w.fail("check audit: audit ids of business %s not increasing: %d after %d", r.BusinessID, r.ID, lastID[r.BusinessID])
		}
		lastID[r.BusinessID] = r.ID
		rows[r.SubjectType+":"+r.SubjectID] = append(rows[r.SubjectType+":"+r.SubjectID], r)
		if r.At.After(w.clock.Now()) {
			w.fail("check audit: audit row %d is in the future (%s)", r.ID, fmtT(r.At))
		}
	}
	offers := map[string]nextup.Offer{}
	for _, o := range d.Offers {
		offers[o.ID] = o
		key := nextup.SubjectOffer + ":" + o.ID
		initial := string(nextup.OfferOffered)
		if o.SendAt.After(o.CreatedAt) {
			initial = string(nextup.OfferPending)
		}
		if p := chainProblem(rows[key], []string{initial}, string(o.State), finalOffer); p != "" {
			w.fail("check 2/5 audit (whole log): offer %s: %s: %s", o.ID, p, rowsString(rows[key]))
		}
		delete(rows, key)
	}
	for _, e := range d.Entries {
		key := nextup.SubjectEntry + ":" + e.ID
		st, bad := stateRows(rows[key])
		if p := chainProblem(st, entryFirst, string(e.State), nil); p != "" || bad != "" {
			w.fail("check 5 audit (whole log): entry %s: %s%s: %s", e.ID, p, bad, rowsString(rows[key]))
		}
		delete(rows, key)
	}
	for _, b := range d.Bookings {
		key := nextup.SubjectBooking + ":" + b.ID
		ended := func(s string) bool { return s != string(nextup.BookingBooked) }
		st, bad := stateRows(rows[key])
		if p := chainProblem(st, []string{string(nextup.BookingBooked)}, string(b.State), ended); p != "" || bad != "" {
			w.fail("check 5 audit (whole log): booking %s: %s%s: %s", b.ID, p, bad, rowsString(rows[key]))
		}
		delete(rows, key)
	}
	known := map[string]bool{}
	for _, s := range d.Slots {
		known[nextup.SubjectSlot+":"+s.ID] = true
	}
	for _, b := range d.Businesses {
		known[nextup.SubjectBusiness+":"+b.ID] = true
	}
	for _, h := range d.HandBacks {
		known[nextup.SubjectHandBack+":"+h.ID] = true
	}
	for _, key := range sortedKeys(rows) {
		if !known[key] {
			w.fail("check audit (whole log): audit rows for %s, which does not exist: %s", key, rowsString(rows[key]))
		}
	}
	perOffer := map[string]map[string]int{}
	perDirect := map[string]map[string]int{}
	waitTold, dedupeTold := map[string]bool{}, map[string]bool{}
	for _, m := range d.Messages {
		if m.OfferID == "" && m.BookingID == "" && w.m.deduped[m.EntryID] && (m.Kind == waitlist.MessageDeduped || m.Kind == waitlist.MessageFallback) {
			// A booking withdrew the entry (checkDedupe): told once, or
			// on the other channel when that failed.
			if m.Kind == waitlist.MessageDeduped && dedupeTold[m.EntryID] {
				w.fail("check 6 messages: entry %s was told twice that a booking withdrew it", m.EntryID)
			}
			dedupeTold[m.EntryID] = m.Kind == waitlist.MessageDeduped
			continue
		}
		if m.OfferID == "" && m.Kind == waitlist.MessageWaitlisted {
			// A public RSVP that went to the waitlist is told so once.
			if !w.m.waitTold[m.EntryID] || m.BookingID != "" || waitTold[m.EntryID] {
				w.fail("check 6 messages: waitlist confirmation %s of entry %s (registered from the page and waitlisted: %v, told before: %v)",
					m.ID, m.EntryID, w.m.waitTold[m.EntryID], waitTold[m.EntryID])
			}
			waitTold[m.EntryID] = true
			continue
		}
		if m.OfferID == "" {
			// Only a registration confirmed at once has messages of no
			// offer: its confirmation and its reminders (and their
			// fallbacks).
			if w.m.direct[m.BookingID] == "" || (m.Kind != nextup.MessageConfirmation && m.Kind != waitlist.MessageReminder && m.Kind != waitlist.MessageFallback) {
				w.fail("check 6 messages: message %s (%s, booking %q) names no offer", m.ID, m.Kind, m.BookingID)
			}
			if perDirect[m.BookingID] == nil {
				perDirect[m.BookingID] = map[string]int{}
			}
			perDirect[m.BookingID][m.Kind]++
			continue
		}
		if _, ok := offers[m.OfferID]; !ok {
			w.fail("check 6 messages: message %s is for offer %s, which does not exist", m.ID, m.OfferID)
		}
		if perOffer[m.OfferID] == nil {
			perOffer[m.OfferID] = map[string]int{}
		}
		perOffer[m.OfferID][m.Kind]++
	}
	w.checkFallbacks(d.Messages)
	for _, id := range sortedKeys(perDirect) {
		// Reminders: at most the event's offsets plus the morning of.
		got := perDirect[id]
		ms := w.m.slots[full.bookings[id].SlotID]
		if got[nextup.MessageConfirmation] > 1 || ms == nil || ms.event == nil || got[waitlist.MessageReminder] > len(ms.event.ReminderOffsets)+1 {
			w.fail("check 6 messages (whole outbox): directly confirmed booking %s has messages %v", id, got)
		}
	}
	for _, o := range d.Offers {
		want := map[string]int{nextup.MessageOffer: 1}
		if o.SentAt == nil {
			want = nil
		}
		if o.State == nextup.OfferClaimed {
			want[nextup.MessageConfirmation] = 1
		}
		if n := perOffer[o.ID][waitlist.MessageFallback]; n > 0 && want != nil {
			want[waitlist.MessageFallback] = n // each the fallback of a dead message of the offer: check 9 below
		}
		if got := perOffer[o.ID]; got[waitlist.MessageEscalation] == 1 && want != nil {
			want[waitlist.MessageEscalation] = 1 // a follow-up: its fit is checked per offer
		}
		if lapsed(o) && want != nil {
			// Its person declined it or let it lapse: they are told what
			// the re-queue rule did (nothing after a decline that kept
			// their place).
			switch w.m.lapse[o.ID] {
			case requeueKeep:
				if o.State == nextup.OfferExpired {
					want[waitlist.MessageExpired] = 1
				}
			case requeueBack:
				want[waitlist.MessageRequeued] = 1
			case requeueDrop:
				want[waitlist.MessageDropped] = 1
			}
		}
		// A claimed offer's booking gets a reminder at each offset of the
		// rules (two by default) that was still ahead when it was booked.
		if n := perOffer[o.ID][waitlist.MessageReminder]; n > 0 && o.State == nextup.OfferClaimed && n <= 2 {
			want[waitlist.MessageReminder] = n
		}
		if got := perOffer[o.ID]; len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			w.fail("check 6 messages (whole outbox): offer %s (%s) has messages %v, want %v", o.ID, o.State, got, want)
		}
	}
}
