package nextup

import "time"

// BookingState is the state of a booking.
type BookingState string

// Booking states. Cancelled and no-show bookings have freed their seats,
// except a booking that the business's booking system did not confirm:
// its seats stay booked, as seats booked outside nextup, until staff
// release them (the slot is taken there, or its fate is theirs to decide).
const (
	BookingBooked    BookingState = "booked"
	BookingCancelled BookingState = "cancelled"
	BookingNoShow    BookingState = "no_show"
)

// Booking is seats of a slot taken by someone.
type Booking struct {
	ID         string
	BusinessID string
	SlotID     string
	EntryID    string // empty for bookings made outside nextup
	OfferID    string
	Name       string
	Seats      int
	State      BookingState
	TokenHash  string // hash of the calendar-link token
	CreatedAt  time.Time
	EndedAt    *time.Time
	// CheckedInAt is when the person was checked in at the door (events).
	CheckedInAt *time.Time
}

// HandBackState is whether staff have dealt with a hand-back.
type HandBackState string

// Hand-back states.
const (
	HandBackOpen     HandBackState = "open"
	HandBackResolved HandBackState = "resolved"
)

// HandBack gives a slot back to staff with a note saying who was offered it
// and what each did.
type HandBack struct {
	ID         string
	BusinessID string
	SlotID     string
	Reason     string // list_exhausted, try_cap, too_soon, promotion_cutoff
	Note       string
	State      HandBackState
	CreatedAt  time.Time
	ResolvedAt *time.Time
}
