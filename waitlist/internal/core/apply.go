package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

// candidatePage is how many waiting entries are read from the index at a
// time while the engine walks the list in fair order.
const candidatePage = 32

// DecideSlot asks the engine what to do with a slot's free seats and applies
// the decision. It is called whenever capacity frees up and whenever a slot
// may be matched again (reverse matching). The slot row is read (and, where
// the backend has row locks, locked) first, so decisions for one slot are
// serialised.
//
// On a backend with row locks, several transactions may choose the same
// first entry in fair order for different slots at once; one gets it, the
// others find it taken once they hold its lock. Those decide their slot
// again within the same transaction — the slot is still theirs, and the
// candidates they read now include what the winner committed — instead of
// starting the whole use case over, which under a burst of releases would
// go around once per competitor.
func (w *Work) DecideSlot(ctx context.Context, slotID string) error {
	// What the engine does is recorded as the system's doing, whoever freed
	// the seats; the freeing itself was audited under its own actor.
	actor := w.Actor
	w.Actor = nextup.ActorSystem
	defer func() { w.Actor = actor }()
	for range maxRedecideInTx {
		if err := w.decideSlotOnce(ctx, slotID); !errors.Is(err, errEntryTaken) {
			return err
		}
	}
	return ErrRedecide
}

// maxRedecideInTx bounds how often one transaction decides a slot again
// because the entry it chose was taken; every round sees at least one more
// entry taken, so it is reached only under an extreme burst.
const maxRedecideInTx = 64

// errEntryTaken says the entry the engine chose is no longer waiting: a
// concurrent transaction offered it something else (or it left). Nothing
// has been written for the decision when it is returned.
var errEntryTaken = fmt.Errorf("%w: the chosen entry was taken meanwhile", ErrRedecide)

func (w *Work) decideSlotOnce(ctx context.Context, slotID string) error {
	slot, err := w.Tx.SlotGet(ctx, slotID)
	if err != nil {
		return fmt.Errorf("decide slot %s: %w", slotID, err)
	}
	bi, err := w.Business(ctx, slot.BusinessID)
	if err != nil {
		return err
	}
	history, err := w.Tx.OfferListBySlot(ctx, slot.ID)
	if err != nil {
		return fmt.Errorf("offers of slot %s: %w", slot.ID, err)
	}
	var readErr error
	d := engine.Decide(engine.Input{
		Now:        w.Now,
		Rules:      bi.Rules,
		Loc:        bi.Loc,
		Slot:       slot,
		History:    history,
		Candidates: w.Candidates(ctx, bi, slot, &readErr),
	})
	if readErr != nil {
		return fmt.Errorf("candidates for slot %s: %w", slot.ID, readErr)
	}
	return w.apply(ctx, bi, slot, history, d)
}

// Candidates pages waiting entries that may fit slot out of the store's
// fair-order index, adding what the guardrails need (today's offers to the
// person, their opt-outs). The engine stops pulling as soon as it has
// decided, so a list of a million entries costs a page or two.
func (w *Work) Candidates(ctx context.Context, bi *Biz, slot nextup.Slot, errp *error) iter.Seq[engine.Candidate] {
	q := nextup.CandidateQuery{
		BusinessID: slot.BusinessID,
		SlotStart:  slot.StartsAt,
		MinParty:   1,
		MaxParty:   slot.FreeSeats(),
		Limit:      candidatePage,
	}
	if slot.Kind == nextup.KindEvent {
		q.EventID = slot.ID
	} else {
		q.Service = slot.Service
	}
	if slot.Seating == nextup.SeatingUnit {
		q.MinParty, q.MaxParty = slot.Capacity, slot.Capacity
		if bi.Rules.DownFit {
			q.MinParty = max(slot.MinParty, 1)
		}
	}
	dayStart := engine.DayStart(w.Now, bi.Loc)
	return func(yield func(engine.Candidate) bool) {
		for {
			page, err := w.Tx.EntryCandidates(ctx, q)
			if err != nil {
				*errp = err
				return
			}
			for _, e := range page {
				// The engine decides; this pre-check only spares the
				// guardrail look-ups for entries that cannot fit the slot
				// as it stands (the engine's working copy only has fewer
				// free seats, so nothing that could fit is dropped).
				if ok, _ := engine.Fits(slot, e, bi.Rules, bi.Loc, w.Now); !ok {
					continue
				}
				c := engine.Candidate{Entry: e}
				if c.OffersToday, err = w.Tx.OfferCountSince(ctx, e.BusinessID, e.ContactKey(), dayStart); err != nil {
					*errp = err
					return
				}
				if c.Suppressed, err = w.suppressed(ctx, e); err != nil {
					*errp = err
					return
				}
				if !yield(c) {
					return
				}
			}
			if len(page) < q.Limit {
				return
			}
			last := page[len(page)-1]
			q.After = &last
		}
	}
}

// suppressed lists the channels the person behind e opted out of (or
// that bounced): the contact guardrail's input.
func (w *Work) suppressed(ctx context.Context, e nextup.Entry) ([]nextup.Channel, error) {
	var addrs []string
	if e.Email != "" {
		addrs = append(addrs, nextup.AddressKey(nextup.ChannelEmail, e.Email))
	}
	if e.Phone != "" {
		addrs = append(addrs, nextup.AddressKey(nextup.ChannelSMS, e.Phone))
	}
	sups, err := w.Tx.SuppressionList(ctx, e.BusinessID, addrs)
	if err != nil {
		return nil, err
	}
	var out []nextup.Channel
	for _, s := range sups {
		out = append(out, s.Channel)
	}
	return out, nil
}

// apply carries out a decision inside the transaction. Guardrail 1 (still
// true) and 2 (one live offer per entry, never more seats held than free)
// are the store's conditional writes: if one fails, the state changed under
// the decision and the whole use case is re-run.
func (w *Work) apply(ctx context.Context, bi *Biz, slot nextup.Slot, history []nextup.Offer, d engine.Decision) error {
	var overflow []engine.Skip
	if room := w.Room(1); room >= 0 {
		// Bounded stores: a decision larger than what is left of one
		// transaction is split. The first people in fair order are
		// offered now, with the skips that come before them (none, when
		// what freed the seats used the room); the seats left over stay
		// free and the slot is decided again at once in a transaction of
		// its own (a slot_decide timer committed with these offers),
		// which offers the next ones, and so on. Each transaction holds
		// only seats that are free, so each keeps the invariant on its
		// own; the order is the same as in one go, because the people
		// offered now are no longer waiting.
		var cut bool
		d, overflow, cut = fit(d, room)
		if cut {
			if err := w.Schedule(ctx, nextup.Timer{BusinessID: bi.ID, Kind: nextup.TimerSlotDecide, SubjectID: slot.ID,
				Key: nextup.TimerSlotDecide + ":" + slot.ID, DueAt: w.Now}); err != nil {
				return err
			}
		}
	}
	// Lock the chosen entries before writing anything: one that a
	// concurrent transaction took is found here, after waiting for its
	// lock, and the slot is decided again with nothing to undo.
	chosen := make(map[string]nextup.Entry, len(d.Offers))
	for _, o := range d.Offers {
		e, err := w.Tx.EntryGet(ctx, o.EntryID)
		if err != nil {
			return fmt.Errorf("entry %s: %w", o.EntryID, err)
		}
		if e.State != nextup.EntryWaiting {
			return errEntryTaken
		}
		chosen[e.ID] = e
	}
	if len(d.Offers) > 0 {
		// Places before anyone is offered, kept on each offer's audit row
		// (the owner's acceptance by place in line, insight): a batch
		// promotion of three offers places 1, 2 and 3, not 1 three times.
		w.OfferPos = make(map[string]int, len(d.Offers))
		for id, e := range chosen {
			pos, err := w.Tx.EntryPosition(ctx, e)
			if err != nil {
				return fmt.Errorf("place of entry %s: %w", id, err)
			}
			w.OfferPos[id] = pos
		}
	}
	for _, sk := range d.Skipped {
		if err := w.Audit(ctx, bi, nextup.AuditEvent{
			SubjectType: nextup.SubjectEntry, SubjectID: sk.EntryID, SlotID: slot.ID,
			From: string(nextup.EntryWaiting), To: string(nextup.EntryWaiting), Reason: "skipped:" + sk.Reason,
		}); err != nil {
			return err
		}
		if sk.Reason == engine.SkipDailyCap {
			// The cap resets at local midnight: match the person again then,
			// so an open slot does not wait for some other event.
			if err := w.Schedule(ctx, nextup.Timer{BusinessID: bi.ID, Kind: nextup.TimerEntryRematch, SubjectID: sk.EntryID,
				Key: nextup.TimerEntryRematch + ":" + sk.EntryID, DueAt: engine.NextDaily(w.Now, 0, bi.Loc)}); err != nil {
				return err
			}
		}
	}
	if len(overflow) > 0 {
		// More people passed over than the transaction has room to
		// audit one by one: one row names them all.
		skipped := make([]map[string]string, 0, len(overflow))
		for _, sk := range overflow {
			skipped = append(skipped, map[string]string{"entry_id": sk.EntryID, "reason": sk.Reason})
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: slot.ID, SlotID: slot.ID,
			From: string(nextup.SlotOpen), To: string(nextup.SlotOpen), Reason: "skipped:many",
			Detail: map[string]any{"skipped": skipped}}); err != nil {
			return err
		}
	}
	switch d.Move {
	case "":
		return nil
	case nextup.MoveNobodyFits:
		w.Moves = append(w.Moves, nextup.Move{Move: d.Move, SlotID: slot.ID})
		return w.Audit(ctx, bi, nextup.AuditEvent{
			SubjectType: nextup.SubjectSlot, SubjectID: slot.ID, SlotID: slot.ID,
			From: string(nextup.SlotOpen), To: string(nextup.SlotOpen), Reason: string(nextup.MoveNobodyFits),
			Detail: map[string]any{"free_seats": slot.FreeSeats()},
		})
	case nextup.MoveHandBack:
		return w.handBack(ctx, bi, slot, history, d.Reason)
	case nextup.MoveOffer, nextup.MoveRollOn:
		for _, o := range d.Offers {
			if err := w.MakeOffer(ctx, bi, slot, d.Move, o, chosen[o.EntryID]); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("engine returned unknown move %q", d.Move)
}

// fit cuts decision d to what room actions take (a bounded store's
// transaction), walking it in fair order: each skip costs its audit row
// (and a daily-cap skip its rematch timer and key), each offer
// writesPerOffer. Skips there is no room for go to overflow, audited in
// one row; room for the first offer is kept from them, so that a round
// that has room for one makes one (else the next round would meet the
// same skips again and again). Offers there is no room for are cut (cut
// reports it), with the skips after them, which they have not yet passed
// over: the slot is decided again, and meets them then.
func fit(d engine.Decision, room int) (out engine.Decision, overflow []engine.Skip, cut bool) {
	budget := room - 3 // a slot_decide timer and its key, the overflow's row
	out = d
	out.Offers, out.Skipped = nil, nil
	si := 0
	for i := 0; i <= len(d.Offers); i++ {
		for ; si < len(d.Skipped) && d.Skipped[si].Before <= i; si++ {
			sk := d.Skipped[si]
			cost := 1
			if sk.Reason == engine.SkipDailyCap {
				cost = 3
			}
			keep := 0 // kept for the first offer: every round offers one at least
			if len(out.Offers) == 0 && i < len(d.Offers) {
				keep = writesPerOffer
			}
			if budget-keep < cost {
				overflow = append(overflow, sk)
				continue
			}
			budget -= cost
			out.Skipped = append(out.Skipped, sk)
		}
		if i == len(d.Offers) {
			break
		}
		if budget < writesPerOffer {
			return out, overflow, true
		}
		budget -= writesPerOffer
		out.Offers = append(out.Offers, d.Offers[i])
	}
	return out, overflow, false
}

// MakeOffer holds seats of slot for entry (read and locked by apply).
func (w *Work) MakeOffer(ctx context.Context, bi *Biz, slot nextup.Slot, move nextup.MoveKind, o engine.Offer, entry nextup.Entry) error {
	if err := w.Tx.EntrySetState(ctx, entry.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryOffered, w.Now); err != nil {
		if errors.Is(err, nextup.ErrConflict) {
			return ErrRedecide
		}
		return fmt.Errorf("entry %s to offered: %w", entry.ID, err)
	}
	held, err := w.Tx.SlotSeats(ctx, slot.ID, nextup.SeatDelta{Held: o.Seats})
	if err != nil {
		if errors.Is(err, nextup.ErrConflict) {
			return ErrRedecide
		}
		return fmt.Errorf("hold %d seats of slot %s: %w", o.Seats, slot.ID, err)
	}
	token, hash := w.s.Random.Token()
	offer := nextup.Offer{
		ID:          w.s.Random.ID("off"),
		BusinessID:  slot.BusinessID,
		SlotID:      slot.ID,
		EntryID:     entry.ID,
		ContactKey:  entry.ContactKey(),
		Seats:       o.Seats,
		PartySize:   o.PartySize,
		State:       o.State,
		Channel:     o.Channel,
		TokenHash:   hash,
		RuleVersion: bi.Rules.Version,
		CreatedAt:   w.Now,
		SendAt:      o.SendAt,
		ExpiresAt:   o.ExpiresAt,
	}
	if o.State == nextup.OfferOffered {
		sent := w.Now
		offer.SentAt = &sent
	}
	if err := w.Tx.OfferCreate(ctx, offer); err != nil {
		return fmt.Errorf("create offer: %w", err)
	}
	w.Moves = append(w.Moves, nextup.Move{Move: move, SlotID: slot.ID, OfferID: offer.ID, EntryID: entry.ID})
	if err := w.Audit(ctx, bi, nextup.AuditEvent{
		SubjectType: nextup.SubjectOffer, SubjectID: offer.ID, SlotID: slot.ID,
		To: string(offer.State), Reason: string(move),
		Detail: offerDetail(offer, w.OfferPos[entry.ID], held.FreeSeats()+o.Seats, w.Override),
	}); err != nil {
		return err
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{
		SubjectType: nextup.SubjectEntry, SubjectID: entry.ID, SlotID: slot.ID,
		From: string(nextup.EntryWaiting), To: string(nextup.EntryOffered), Reason: string(move),
		Detail: map[string]any{"offer_id": offer.ID},
	}); err != nil {
		return err
	}
	if offer.State == nextup.OfferPending {
		// Held back by quiet hours: no message and no usable link exist
		// until the offer is sent; the release timer mints both then, with
		// the deadline counted from that moment.
		if err := w.Schedule(ctx, nextup.Timer{BusinessID: slot.BusinessID, Kind: nextup.TimerOfferRelease,
			SubjectID: offer.ID, Key: ReleaseKey(offer.ID), DueAt: offer.SendAt}); err != nil {
			return err
		}
	} else {
		if err := w.Queue(ctx, OfferMessage(w.s, bi, slot, entry, offer, token, w.Registering == entry.ID)); err != nil {
			return err
		}
		if err := w.ScheduleEscalation(ctx, offer); err != nil {
			return err
		}
		w.NotePaidHold(slot, offer, token)
	}
	return w.Schedule(ctx, nextup.Timer{BusinessID: slot.BusinessID, Kind: nextup.TimerOfferExpire,
		SubjectID: offer.ID, Key: ExpireKey(offer.ID), DueAt: offer.ExpiresAt})
}

// offerDetail is an offer row's detail: what was offered, to whom, at
// which place in line, and the seats free before it (what the engine saw:
// the replay of a place asks whether another party fitted them).
func offerDetail(o nextup.Offer, position, free int, override bool) map[string]any {
	d := map[string]any{"entry_id": o.EntryID, "seats": o.Seats, "channel": string(o.Channel),
		"send_at": o.SendAt, "expires_at": o.ExpiresAt, "free_seats": free}
	if override {
		d["override"] = true
	}
	if position > 0 {
		d["position"] = position
	}
	return d
}

// handBack gives the slot back to staff with a note saying who was tried
// and what each did.
func (w *Work) handBack(ctx context.Context, bi *Biz, slot nextup.Slot, history []nextup.Offer, reason string) error {
	var parts []string
	for _, o := range history {
		name := o.EntryID
		e, err := w.Tx.EntryGet(ctx, o.EntryID)
		switch {
		case err == nil:
			name = e.Name
		case !errors.Is(err, nextup.ErrNotFound):
			// Not swallowed: on PostgreSQL a failed statement (a deadlock
			// on the row lock) aborts the transaction, and only the error
			// reaching InTx gets it retried.
			return fmt.Errorf("entry %s of the hand-back note: %w", o.EntryID, err)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", name, o.State))
	}
	note := fmt.Sprintf("Handed back (%s): nobody was offered this slot.", strings.ReplaceAll(reason, "_", " "))
	if len(parts) > 0 {
		note = fmt.Sprintf("Handed back (%s) after trying %d: %s.", strings.ReplaceAll(reason, "_", " "), len(parts), strings.Join(parts, ", "))
	}
	h := nextup.HandBack{
		ID: w.s.Random.ID("hb"), BusinessID: slot.BusinessID, SlotID: slot.ID,
		Reason: reason, Note: note, State: nextup.HandBackOpen, CreatedAt: w.Now,
	}
	if err := w.Tx.HandBackCreate(ctx, h); err != nil {
		return fmt.Errorf("hand back slot %s: %w", slot.ID, err)
	}
	if err := w.Tx.SlotSetHandedBack(ctx, slot.ID, true); err != nil {
		return fmt.Errorf("hand back slot %s: %w", slot.ID, err)
	}
	if err := w.queueHandback(ctx, bi, slot, h); err != nil {
		return err
	}
	w.Moves = append(w.Moves, nextup.Move{Move: nextup.MoveHandBack, SlotID: slot.ID, Reason: reason})
	return w.Audit(ctx, bi, nextup.AuditEvent{
		SubjectType: nextup.SubjectSlot, SubjectID: slot.ID, SlotID: slot.ID,
		From: string(nextup.SlotOpen), To: string(nextup.SlotHandedBack), Reason: reason,
		Detail: map[string]any{"handback_id": h.ID, "note": note, "tried": len(history), "free_seats": slot.FreeSeats()},
	})
}

// MatchEntry is reverse matching: an entry that just joined or became free
// again is matched against the open slots it may fit, soonest first, each
// decided in full (so fair order among other waiters still holds), until
// the entry holds an offer.
func (w *Work) MatchEntry(ctx context.Context, entryID string) error {
	e, err := w.Tx.EntryGet(ctx, entryID)
	if err != nil {
		return fmt.Errorf("match entry %s: %w", entryID, err)
	}
	if e.State != nextup.EntryWaiting {
		return nil
	}
	bi, err := w.Business(ctx, e.BusinessID)
	if err != nil {
		return err
	}
	slots, err := w.Tx.SlotOpenFor(ctx, e, w.Now.Add(bi.Rules.MinLead), 16)
	if err != nil {
		return fmt.Errorf("open slots for entry %s: %w", e.ID, err)
	}
	for _, sl := range slots {
		// The store's filter is coarse; decide only slots this entry
		// really fits and may be offered (engine.Offered: never offered,
		// or moved to the back since), so a joiner who does not fit
		// never triggers a decision (or a hand-back) on someone else's slot.
		if ok, _ := engine.Fits(sl, e, bi.Rules, bi.Loc, w.Now); !ok {
			continue
		}
		history, err := w.Tx.OfferListBySlot(ctx, sl.ID)
		if err != nil {
			return err
		}
		if engine.NewOffered(history).Excludes(e) {
			continue
		}
		if err := w.DecideSlot(ctx, sl.ID); err != nil {
			return err
		}
		cur, err := w.Tx.EntryGet(ctx, e.ID)
		if err != nil {
			return err
		}
		if cur.State != nextup.EntryWaiting {
			return nil
		}
	}
	return nil
}

// EndOffer ends a live offer that was not claimed: the offer moves to its
// final state, the held seats are freed, the timers and any unsent message
// are cancelled, and the entry moves to entryTo (waiting, with its place
// kept, or left). Then the slot rolls on and, when the entry is waiting
// again, it is matched against other open slots.
//
// An offer the person declined or let lapse ends through LapseOffer
// instead, which applies the re-queue rule.
func (w *Work) EndOffer(ctx context.Context, o nextup.Offer, to nextup.OfferState, reason string, entryTo nextup.EntryState) (nextup.Offer, error) {
	ended, _, err := w.endOffer(ctx, o, to, reason, entryTo, false)
	return ended, err
}

// LapseOffer ends a live offer the person declined (to declined) or let
// lapse (to expired: its claim window passed) as EndOffer does, and
// applies the re-queue rule of the slot (engine.RulesFor: the business's
// for a slot, the event's own for an event) to the person in the same
// transaction: the lapse is counted on the entry, which then keeps its
// place, goes to the back of the line, or leaves the waitlist. The entry's
// audit row says which (reason requeued_back or dropped_after_lapses; the
// offer's reason when the place is kept), with the rule and the count;
// telling the person is the caller's, by the move returned.
func (w *Work) LapseOffer(ctx context.Context, o nextup.Offer, to nextup.OfferState, reason string) (nextup.Offer, engine.RequeueMove, error) {
	return w.endOffer(ctx, o, to, reason, nextup.EntryWaiting, true)
}

// Audit reasons of the entry row of a lapse that moved the person (the
// re-queue rule).
const (
	ReasonRequeuedBack       = "requeued_back"
	ReasonDroppedAfterLapses = "dropped_after_lapses"
)

func (w *Work) endOffer(ctx context.Context, o nextup.Offer, to nextup.OfferState, reason string, entryTo nextup.EntryState, lapsed bool) (nextup.Offer, engine.RequeueMove, error) {
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return o, "", err
	}
	from := o.State
	ended, err := w.Tx.OfferSetState(ctx, o.ID, []nextup.OfferState{nextup.OfferPending, nextup.OfferOffered}, to, w.Now, reason)
	if err != nil {
		if errors.Is(err, nextup.ErrConflict) {
			return o, "", ErrRedecide
		}
		return o, "", fmt.Errorf("offer %s to %s: %w", o.ID, to, err)
	}
	sl, err := w.Tx.SlotSeats(ctx, o.SlotID, nextup.SeatDelta{Held: -o.Seats})
	if err != nil {
		return o, "", fmt.Errorf("free %d held seats of slot %s: %w", o.Seats, o.SlotID, err)
	}
	if sl.Event.Paid() {
		if err := w.expirePayments(ctx, o); err != nil {
			return o, "", err
		}
	}
	for _, key := range []string{ExpireKey(o.ID), ReleaseKey(o.ID), EscalateKey(o.ID)} {
		if err := w.Tx.TimerCancel(ctx, key); err != nil {
			return o, "", fmt.Errorf("cancel timer %s: %w", key, err)
		}
	}
	if err := w.Tx.MessageCancelByOffer(ctx, o.ID); err != nil {
		return o, "", fmt.Errorf("cancel messages of offer %s: %w", o.ID, err)
	}
	entryReason, detail := reason, map[string]any{"offer_id": o.ID}
	var move engine.RequeueMove
	if lapsed {
		detail["offer_reason"] = reason
		if move, err = w.requeue(ctx, sl, o, detail); err != nil {
			return o, "", err
		}
		switch move {
		case engine.RequeueBack:
			entryReason = ReasonRequeuedBack
		case engine.RequeueDrop:
			entryTo, entryReason = nextup.EntryLeft, ReasonDroppedAfterLapses
		}
	}
	if err := w.Tx.EntrySetState(ctx, o.EntryID, []nextup.EntryState{nextup.EntryOffered}, entryTo, w.Now); err != nil {
		return o, "", fmt.Errorf("entry %s to %s: %w", o.EntryID, entryTo, err)
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
		From: string(from), To: string(to), Reason: reason}); err != nil {
		return o, "", err
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: o.EntryID, SlotID: o.SlotID,
		From: string(nextup.EntryOffered), To: string(entryTo), Reason: entryReason, Detail: detail}); err != nil {
		return o, "", err
	}
	if err := w.DecideSlot(ctx, o.SlotID); err != nil {
		return o, "", err
	}
	if entryTo == nextup.EntryWaiting {
		if err := w.MatchEntry(ctx, o.EntryID); err != nil {
			return o, "", err
		}
	}
	return ended, move, nil
}

// requeue counts the lapse or decline of offer o (of slot sl) on its
// entry and applies the slot's re-queue rule: to the back of the line it
// moves the entry in the same write. It notes the rule, the count and,
// for a move, the place left behind in detail, for the entry's audit row.
func (w *Work) requeue(ctx context.Context, sl nextup.Slot, o nextup.Offer, detail map[string]any) (engine.RequeueMove, error) {
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return "", err
	}
	e, err := w.Tx.EntryGet(ctx, o.EntryID)
	if err != nil {
		return "", fmt.Errorf("entry %s of offer %s: %w", o.EntryID, o.ID, err)
	}
	rule := engine.RulesFor(bi.Rules, sl).Requeue
	move := engine.Requeue(rule, e.Lapses+1)
	moved, err := w.Tx.EntryLapse(ctx, e.ID, move == engine.RequeueBack, engine.BackOfLine(o, w.Now))
	if err != nil {
		return "", fmt.Errorf("count the lapse of entry %s: %w", e.ID, err)
	}
	detail["lapses"] = moved.Lapses
	detail["requeue"] = map[string]any{"policy": cmp.Or(rule.Policy, nextup.RequeueKeep), "drop_after": rule.DropAfter}
	if move == engine.RequeueBack {
		detail["joined_at_before"], detail["seq_before"] = e.JoinedAt, e.Seq
		detail["joined_at"], detail["seq"] = moved.JoinedAt, moved.Seq
	}
	return move, nil
}

// ChannelFor is the channel a message to e goes by: the engine's choice
// among the channels the person has not opted out of ("" for none).
func (w *Work) ChannelFor(ctx context.Context, e nextup.Entry) (nextup.Channel, error) {
	suppressed, err := w.suppressed(ctx, e)
	if err != nil {
		return "", err
	}
	ch, ok := engine.ChooseChannel(e, suppressed)
	if !ok {
		return "", nil
	}
	return ch, nil
}

// SlotOf reads (and locks) a slot of a business; another business's is
// not found.
func (w *Work) SlotOf(ctx context.Context, businessID, slotID string) (nextup.Slot, error) {
	sl, err := w.Tx.SlotGet(ctx, slotID)
	if err != nil || (businessID != "" && sl.BusinessID != businessID) {
		return sl, NotFound("slot", slotID, err)
	}
	return sl, nil
}
