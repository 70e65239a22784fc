// Package engine is nextup's pure decision logic: which entries fit a slot,
// the fair order, the four moves, the guardrails that hold between a move
// and a message, and the claim window around quiet hours.
//
// Nothing here does I/O, reads a clock or draws a random number: every
// function takes now and data and returns a decision, so the package is
// table-tested, property-tested and fuzzed on its own. Package waitlist
// reads the data from a store transaction, calls Decide, and applies the
// decision in that same transaction.
package engine

import (
	"iter"
	"time"

	"github.com/nextup-dev/nextup"
)

// Candidate is a waiting entry offered to the engine in fair order, with
// the facts the guardrails need that are not on the entry itself.
type Candidate struct {
	Entry       nextup.Entry
	OffersToday int              // offers already made to this person today (business local day)
	Suppressed  []nextup.Channel // channels this person opted out of or that bounced
}

// Input is everything Decide looks at.
type Input struct {
	Now   time.Time
	Rules nextup.Rules
	Loc   *time.Location // the business timezone
	Slot  nextup.Slot
	// History is every offer ever made for this slot, oldest first.
	History []nextup.Offer
	// Candidates yields waiting entries in fair order. It may be paged
	// lazily from an index; Decide stops pulling as soon as it has decided.
	Candidates iter.Seq[Candidate]
}

// Offer is an offer Decide wants made.
type Offer struct {
	EntryID   string
	Seats     int // seats held: the party size for shared seating, the whole capacity for unit
	PartySize int
	Channel   nextup.Channel
	State     nextup.OfferState // pending (held back by quiet hours) or offered
	SendAt    time.Time         // now, or when quiet hours end
	ExpiresAt time.Time
}

// Skip records a fitting entry passed over by guardrail 4 (contact and
// consent); it keeps its place for the next slot.
type Skip struct {
	EntryID string
	Reason  string // SkipNoChannel or SkipDailyCap
	// Before is how many of the decision's offers come before this entry
	// in fair order: a decision cut after its first n offers passed over
	// the skips with Before < n, and the rest not yet.
	Before int
}

// Guardrail skip reasons.
const (
	SkipNoChannel = "no_channel" // no deliverable channel the person has not opted out of
	SkipDailyCap  = "daily_cap"  // the person already had the maximum offers today
)

// Reasons Decide gives when it decides no move at all (Move == "").
const (
	IdlePast       = "past"        // the slot has started
	IdleHandedBack = "handed_back" // staff have the slot
	IdleNoSeats    = "no_free_seats"
	IdleHeld       = "held"        // a unit slot already has its one live offer
	IdleLiveOffers = "live_offers" // nothing more to offer now, but live offers may still be claimed or end
)

// Decision is what Decide returns. Move is "" when there is nothing to do
// (Reason says why); MoveOffer or MoveRollOn with Offers; MoveHandBack with
// a hand-back reason; MoveNobodyFits.
type Decision struct {
	Move    nextup.MoveKind
	Reason  string
	Offers  []Offer
	Skipped []Skip
}
