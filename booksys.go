package nextup

import (
	"context"
	"time"
)

// BookingSystem is a business's own booking system, for a business whose
// truth about its slots lives there (Profile.BookingURL). Every claim of
// such a business is booked there too: nextup first takes the seats in its
// own store, then asks the booking system, then confirms the booking or
// undoes it (package waitlist runs this saga). Implementations live in
// their own packages (booksys/httpbook).
type BookingSystem interface {
	// Book asks the booking system at url to record the booking. It is
	// safe to call again for the same booking: BookingID is the
	// idempotency key, so asking twice books once.
	Book(ctx context.Context, url string, r BookRequest) BookReply
}

// BookRequest is one booking as nextup asks a booking system to record it.
type BookRequest struct {
	BusinessID string
	BookingID  string // nextup's booking id, also the idempotency key
	SlotID     string
	Service    string
	Staff      string
	StartsAt   time.Time
	EndsAt     time.Time
	Seats      int
	PartySize  int
	Name       string
	Email      string
	Phone      string
	EntryID    string
	OfferID    string
}

// BookOutcome is what a booking system made of a booking request.
type BookOutcome string

// Booking-system outcomes.
const (
	// BookConfirmed: the booking system recorded the booking (HTTP 2xx).
	BookConfirmed BookOutcome = "confirmed"
	// BookSlotTaken: the slot is gone in the booking system (HTTP 409).
	BookSlotTaken BookOutcome = "slot_taken"
	// BookUnavailable: no answer worth keeping (5xx, 408, 429, a timeout,
	// no connection); asking again may succeed.
	BookUnavailable BookOutcome = "unavailable"
	// BookRefused: the booking system refused the request for good (any
	// other answer: a wrong URL, a rejected signature); asking again will
	// not help.
	BookRefused BookOutcome = "refused"
)

// BookReply is a booking system's answer to one request.
type BookReply struct {
	Outcome BookOutcome
	// Reference is the booking system's own id of the booking, when it
	// gave one.
	Reference string
	// Detail says what happened in a few words ("http 503", "no answer
	// within 5s"), for the audit log and staff; never shown to customers.
	Detail string
}
