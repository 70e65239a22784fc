package nextup

import "time"

// SlotKind tells a plain bookable slot from an event (an event is a shared
// slot with its own waitlist).
type SlotKind string

// Slot kinds.
const (
	KindSlot  SlotKind = "slot"
	KindEvent SlotKind = "event"
)

// Seating says how parties use a slot's seats.
type Seating string

// Seatings.
const (
	// SeatingUnit: one party takes the whole slot (a chair: capacity 1; a table for four: capacity 4).
	SeatingUnit Seating = "unit"
	// SeatingShared: several parties share the seats until they run out (a class, an event).
	SeatingShared Seating = "shared"
)

// SlotState is the state of a slot as staff see it.
type SlotState string

// Slot states.
const (
	SlotOpen       SlotState = "open"
	SlotOffered    SlotState = "offered"
	SlotFull       SlotState = "full"
	SlotHandedBack SlotState = "handed_back"
	SlotPast       SlotState = "past"
)

// Slot is a bookable unit with a start, an end, a service, an optional staff
// member and a capacity in seats.
//
// BookedSeats counts every booked seat, whether booked through nextup (a
// Booking row) or elsewhere (seats the slot was created with). HeldSeats
// counts the seats held by live (pending or offered) offers. The store keeps
// BookedSeats+HeldSeats <= Capacity in every committed state.
type Slot struct {
	ID          string
	BusinessID  string
	Kind        SlotKind
	Title       string // events
	Service     string
	Staff       string
	StartsAt    time.Time
	EndsAt      time.Time
	Capacity    int
	Seating     Seating
	MinParty    int
	BookedSeats int
	HeldSeats   int
	HandedBack  bool           // an open hand-back: the engine leaves the slot to staff until seats are freed again
	Event       *EventSettings // set for kind event
	CreatedAt   time.Time
}

// FreeSeats is the number of seats neither booked nor held.
func (s Slot) FreeSeats() int { return s.Capacity - s.BookedSeats - s.HeldSeats }

// State derives the slot state at now.
func (s Slot) State(now time.Time) SlotState {
	switch {
	case !s.StartsAt.After(now):
		return SlotPast
	case s.FreeSeats() <= 0 && s.HeldSeats == 0:
		return SlotFull
	case s.HeldSeats > 0:
		return SlotOffered
	case s.HandedBack:
		return SlotHandedBack
	}
	return SlotOpen
}
