package engine

import (
	"time"

	"github.com/nextup-dev/nextup"
)

// Decide chooses the engine's move for one slot: nobody fits, make an
// offer, roll on, or hand back to staff (DESIGN.md, "The engine: four
// moves"), with the guardrails that can be checked without I/O already
// applied. Move is "" when there is nothing to do right now; Reason says
// why.
//
// The gates come first, cheapest first: a slot that has started, is with
// staff, has no free seats or (unit seating) already has its one live offer
// is left alone. A slot starting too soon for a claim window, or one that
// has used up its try cap, goes back to staff, unless a live offer may
// still be claimed, in which case the engine waits for it to end.
//
// Then candidates are pulled in the order given (fair order, from the
// store) and offered while they fit: one offer for unit seating, one per
// fitting entry while seats remain for shared seating (batch promotion),
// never to an entry already offered this slot in its place in line (see
// Offered: one a lapse moved to the back waits for it again), never
// more seats than are free, never beyond the try cap. An entry that fits
// but has no deliverable channel or has had its offers for the day is
// skipped with a reason and keeps its place. Decide stops pulling
// candidates the moment it has decided, because the sequence may be paged
// from a very long list.
//
// Decide is pure and total: no I/O, no clock, no randomness, and no panic
// on any input. A nil Loc means UTC and nil Candidates means nobody waits.
func Decide(in Input) Decision {
	loc := in.Loc
	if loc == nil {
		loc = time.UTC
	}
	slot, rules, now := in.Slot, RulesFor(in.Rules, in.Slot), in.Now

	switch {
	case !slot.StartsAt.After(now):
		return Decision{Reason: IdlePast}
	case slot.HandedBack:
		return Decision{Reason: IdleHandedBack}
	case slot.FreeSeats() <= 0:
		return Decision{Reason: IdleNoSeats}
	case !shared(slot) && slot.HeldSeats > 0:
		return Decision{Reason: IdleHeld}
	}

	// tried counts the people this slot was offered to without it ending
	// in a booking (live, declined, expired or cancelled offers). Offers
	// that were claimed filled seats in an earlier round: they do not count
	// towards the try cap, and when a later cancellation meets an empty
	// list the move is nobody_fits, not a hand-back.
	live, endedUnclaimed, tried := false, false, 0
	for _, o := range in.History {
		if o.State != nextup.OfferClaimed {
			tried++
		}
		switch o.State {
		case nextup.OfferDeclined, nextup.OfferExpired, nextup.OfferCancelled:
			endedUnclaimed = true
		}
		if o.State.Live() {
			live = true
		}
	}
	// wait leaves the slot alone while a live offer may still be claimed:
	// handing it back now would put staff and that person in the same seats.
	wait := func(handBack string) Decision {
		if live {
			return Decision{Reason: IdleLiveOffers}
		}
		return Decision{Move: nextup.MoveHandBack, Reason: handBack}
	}

	if slot.PromotionClosed(now) {
		// Seats an event frees after its promotion cutoff are not
		// offered: they stay open for walk-ins and direct registration.
		return wait(nextup.HandBackPromotionCutoff)
	}
	if slot.StartsAt.Sub(now) < rules.MinLead {
		return wait(nextup.HandBackTooSoon)
	}
	tries, maxTries := tried, rules.MaxOffersPerSlot
	if maxTries > 0 && tries >= maxTries {
		return wait(nextup.HandBackTryCap)
	}
	state, sendAt, expiresAt, ok := OfferWindow(now, slot.StartsAt, rules, loc)
	if !ok {
		return wait(nextup.HandBackTooSoon)
	}

	var dec Decision
	if in.Candidates != nil {
		// work.HeldSeats grows with each offer made here, so shared seats
		// are never promised twice; madeTo counts this decision's offers per
		// person, so two entries of one person share the daily cap.
		work := slot
		madeTo := map[string]int{}
		// dealt: entries this decision dealt with (offered, skipped or
		// waiting for another to be offered first); a repeat of one in
		// the sequence is ignored.
		dealt := map[string]bool{}
		// consider offers the slot to c if it fits and passes the
		// guardrails, and reports whether the decision is complete.
		consider := func(c Candidate) (done bool) {
			e := c.Entry
			if fits, _ := Fits(work, e, rules, loc, now); !fits {
				return false
			}
			dealt[e.ID] = true
			channel, ok := ChooseChannel(e, c.Suppressed)
			if !ok {
				dec.Skipped = append(dec.Skipped, Skip{EntryID: e.ID, Reason: SkipNoChannel, Before: len(dec.Offers)})
				return false
			}
			key := e.ContactKey()
			if capDay := rules.MaxOffersPerPersonPerDay; capDay > 0 && c.OffersToday+madeTo[key] >= capDay {
				dec.Skipped = append(dec.Skipped, Skip{EntryID: e.ID, Reason: SkipDailyCap, Before: len(dec.Offers)})
				return false
			}
			seats := e.PartySize
			if !shared(slot) {
				seats = slot.Capacity
			}
			dec.Offers = append(dec.Offers, Offer{
				EntryID:   e.ID,
				Seats:     seats,
				PartySize: e.PartySize,
				Channel:   channel,
				State:     state,
				SendAt:    sendAt,
				ExpiresAt: expiresAt,
			})
			madeTo[key]++
			work.HeldSeats += seats
			tries++
			return !shared(slot) || work.FreeSeats() <= 0 || (maxTries > 0 && tries >= maxTries)
		}
		// waiting: those moved to the back of the line since their offer
		// of this slot ended, who wait until someone else has been
		// offered it (Offered), in fair order. Once someone is, they have
		// their turn, ahead of the rest of the list.
		offered := NewOffered(in.History)
		var waiting []Candidate
		for c := range in.Candidates {
			e := c.Entry
			if dealt[e.ID] {
				continue
			}
			if kept, untilOther := offered.excludes(e); kept && (!untilOther || len(dec.Offers) == 0) {
				if untilOther {
					dealt[e.ID] = true
					waiting = append(waiting, c)
				}
				continue
			}
			first := len(dec.Offers) == 0
			done := consider(c)
			if first && len(dec.Offers) > 0 {
				for _, w := range waiting {
					if done {
						break
					}
					done = consider(w)
				}
				waiting = nil
			}
			if done {
				break
			}
		}
	}

	switch {
	case len(dec.Offers) > 0 && endedUnclaimed:
		dec.Move = nextup.MoveRollOn
	case len(dec.Offers) > 0:
		dec.Move = nextup.MoveOffer
	case live:
		dec.Reason = IdleLiveOffers
	case tried > 0:
		dec.Move, dec.Reason = nextup.MoveHandBack, nextup.HandBackListExhausted
	default:
		dec.Move = nextup.MoveNobodyFits
	}
	return dec
}

// RulesFor is the business's rules as they apply to slot: an event's own
// claim window replaces the business's, an event tries its whole
// waitlist (no per-slot try cap) before it is handed back, and an event
// follows its own re-queue rule (nextup.DefaultEventRequeue unless its
// organiser chose another).
func RulesFor(r nextup.Rules, slot nextup.Slot) nextup.Rules {
	if slot.Kind != nextup.KindEvent {
		return r
	}
	r.Requeue = nextup.DefaultEventRequeue()
	if slot.Event == nil {
		return r
	}
	if slot.Event.Requeue != nil {
		r.Requeue = *slot.Event.Requeue
	}
	if slot.Event.ClaimWindow > 0 {
		r.ClaimWindow = slot.Event.ClaimWindow
		r.ClaimWindowLadder = nil // the organiser's own window, whatever the lead
	}
	if tc := slot.Event.TimeCriticalThroughQuiet; tc != nil {
		r.TimeCriticalThroughQuiet = *tc
	}
	r.MaxOffersPerSlot = 0
	return r
}
