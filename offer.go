package nextup

import "time"

// OfferState is the life of an offer. pending and offered are live (they
// hold seats); the other four are final, and an offer ends exactly once.
// The one exception is a claim that a business's own booking system turns
// down: its claimed offer is undone, once, as cancelled (with the reason
// slot_taken or booking_system_*; see package waitlist/offers, booksys.go).
type OfferState string

// Offer states.
const (
	OfferPending   OfferState = "pending" // held back by quiet hours, not yet sent
	OfferOffered   OfferState = "offered"
	OfferClaimed   OfferState = "claimed"
	OfferDeclined  OfferState = "declined"
	OfferExpired   OfferState = "expired"
	OfferCancelled OfferState = "cancelled" // entry left, staff withdrew or slot removed
)

// Live reports whether an offer in state s holds seats.
func (s OfferState) Live() bool { return s == OfferPending || s == OfferOffered }

// Offer is seats of one slot held for one entry until a deadline, reachable
// through a secret claim link whose token is stored only as a hash.
type Offer struct {
	ID          string
	BusinessID  string
	SlotID      string
	EntryID     string
	ContactKey  string // the entry's ContactKey, for the daily cap
	Seats       int    // seats held (the whole slot for unit seating)
	PartySize   int
	State       OfferState
	Channel     Channel
	TokenHash   string
	RuleVersion int
	CreatedAt   time.Time
	SendAt      time.Time  // when it is (or was) sent: CreatedAt, or the end of quiet hours
	SentAt      *time.Time // set when it moved to offered
	ExpiresAt   time.Time
	SeenAt      *time.Time // first time the claim page was opened
	ResolvedAt  *time.Time
	Reason      string // why it ended (cancelled: entry_left, withdrawn, slot_removed, ...)
}
