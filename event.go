package nextup

import "time"

// EventSettings are what makes a shared slot an event: the organiser's
// limits and cutoffs. A slot of kind event always has them (Slot.Event).
//
// The cutoffs are instants; a nil cutoff means the event's start. The
// promotion cutoff is a duration before the start: from then on seats
// freed by a cancellation are not offered to the waitlist, they stay open
// for walk-ins and direct registration, and the engine hands the event
// back to staff with reason promotion_cutoff.
type EventSettings struct {
	MaxGuests          int // guests one registration may bring (seats used = 1 + guests)
	WaitlistLimit      *int
	RegistrationCutoff *time.Time
	CancellationCutoff *time.Time
	PromotionCutoff    time.Duration
	ClaimWindow        time.Duration   // the hold of a promoted registrant (default 6 h)
	ReminderOffsets    []time.Duration // before the start (default a week and a day)
	ReminderMorningOf  string          // "HH:MM" in the business timezone on the day; "" for none
	PriceCents         int64           // 0: free
	Currency           string          // ISO 4217, lower case; "eur" by default
	// Requeue is the event's re-queue rule after a lapse or decline;
	// nil: DefaultEventRequeue (the business's rules are for slots).
	Requeue *Requeue
	// Slug names the event in its public page's address,
	// /e/{business slug}/{slug} (unique within the business; "" for
	// none: the page is then at the event's id).
	Slug string
	// Public is what the public event page shows.
	Public EventPublic
	// TimeCriticalThroughQuiet, when set, is the event's own choice of the
	// rules' time-critical exception to quiet hours (an offer for a seat
	// that starts before quiet hours end is sent anyway); nil: the
	// business's rule.
	TimeCriticalThroughQuiet *bool
}

// EventPublic is what an event's public page shows.
type EventPublic struct {
	// ShowSeats is how much the page says of the seats left: "exact"
	// (the number), "few" ("Few seats left" under five, else nothing),
	// or "none". "" is "exact".
	ShowSeats string
	// Place and Notes are shown under the title (where, what to bring).
	Place, Notes string
	// NoIndex asks search engines not to list the page.
	NoIndex bool
}

// The choices of EventPublic.ShowSeats.
const (
	ShowSeatsExact = "exact"
	ShowSeatsFew   = "few"
	ShowSeatsNone  = "none"
)

// Event defaults (API.md, "Events (RSVP)").
const (
	DefaultEventClaimWindow = 6 * time.Hour
	DefaultEventMorningOf   = "09:00"
	DefaultEventCurrency    = "eur"
)

// DefaultEventReminderOffsets are a week and a day before the start.
func DefaultEventReminderOffsets() []time.Duration {
	return []time.Duration{7 * 24 * time.Hour, 24 * time.Hour}
}

// Paid reports whether registering takes a payment.
func (e *EventSettings) Paid() bool { return e != nil && e.PriceCents > 0 }

// RegistrationClosesAt is when registration ends: the cutoff, or the start.
func (s Slot) RegistrationClosesAt() time.Time {
	if s.Event != nil && s.Event.RegistrationCutoff != nil {
		return *s.Event.RegistrationCutoff
	}
	return s.StartsAt
}

// CancellationClosesAt is when a confirmed registration can no longer be
// cancelled by its person: the cutoff, or the start.
func (s Slot) CancellationClosesAt() time.Time {
	if s.Event != nil && s.Event.CancellationCutoff != nil {
		return *s.Event.CancellationCutoff
	}
	return s.StartsAt
}

// PromotionClosed reports whether, at now, freed seats of an event are no
// longer offered to its waitlist (its promotion cutoff has passed).
func (s Slot) PromotionClosed(now time.Time) bool {
	return s.Kind == KindEvent && s.Event != nil && s.Event.PromotionCutoff > 0 &&
		s.StartsAt.Sub(now) < s.Event.PromotionCutoff
}

// PaymentState is where a paid event's checkout stands.
type PaymentState string

// Payment states. A session is open until it is paid or expires; a
// payment that arrived for an offer that had ended is refunded.
const (
	PaymentOpen     PaymentState = "open"
	PaymentPaid     PaymentState = "paid"     // paid, and the claim went through
	PaymentRefunded PaymentState = "refunded" // paid after the offer ended: refunded
	PaymentExpired  PaymentState = "expired"  // the offer ended unpaid
)

// Payment is a checkout for a paid event's held seats: one per checkout
// session made for an offer (a session that expired before the offer did
// is replaced by a new one when the person opens the link again).
type Payment struct {
	ID            string
	BusinessID    string
	SlotID        string
	OfferID       string
	EntryID       string
	Provider      string // "stripe"
	SessionID     string // the provider's checkout session
	URL           string // where the person pays
	AmountCents   int64
	Currency      string
	State         PaymentState
	PaymentIntent string // set when paid
	RefundID      string // set when refunded
	ExpiresAt     time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// PaymentChange is a conditional change to a payment: from one of From to
// To, recording the payment intent and refund when given.
type PaymentChange struct {
	From          []PaymentState
	To            PaymentState
	PaymentIntent string
	RefundID      string
	At            time.Time
}
