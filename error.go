package nextup

import (
	"errors"
	"fmt"
)

// Error kinds. They map to HTTP statuses in one place (package web) and are
// matched with errors.Is.
var (
	// ErrNotFound means the object does not exist, or belongs to another business.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a conditional write found the object in another state.
	ErrConflict = errors.New("conflict")
	// ErrInvalid means the input was rejected before anything changed.
	ErrInvalid = errors.New("invalid")
	// ErrUnauthorized means the caller did not prove who it is.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrRateLimited means the caller tried too often; Error.Data may say
	// "retry_after_seconds".
	ErrRateLimited = errors.New("rate limited")
	// ErrUnavailable means a system nextup depends on (a business's
	// booking system) did not answer, and the request could not be done.
	ErrUnavailable = errors.New("unavailable")
)

// Error is a domain error with a stable machine-readable code (the `code` of
// the API's problem+json) and a kind (one of the Err* sentinels).
type Error struct {
	Kind    error          // ErrNotFound, ErrConflict, ErrInvalid, ErrUnauthorized, ErrRateLimited or ErrUnavailable
	Code    string         // stable code, e.g. "slot_taken"
	Message string         // human-readable detail, safe to show
	Fields  []FieldError   // validation failures, for ErrInvalid
	Data    map[string]any // extra members for the problem body (e.g. the existing entry)
}

// FieldError names one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Code + ": " + e.Message
	}
	return e.Code
}

// Unwrap lets errors.Is(err, ErrConflict) match an *Error of that kind.
func (e *Error) Unwrap() error { return e.Kind }

// Errorf returns an *Error of the given kind and code.
func Errorf(kind error, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the stable code of err, or "" when err carries none.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrInvalid):
		return "validation_failed"
	case errors.Is(err, ErrUnauthorized):
		return "unauthorized"
	case errors.Is(err, ErrConflict):
		return "conflict"
	}
	return ""
}

// Stable conflict codes of the API.
const (
	CodeSlotTaken          = "slot_taken"
	CodeOfferExpired       = "offer_expired"
	CodeOfferWithdrawn     = "offer_withdrawn"
	CodeOfferDeclined      = "offer_declined"
	CodeNotEnoughBooked    = "not_enough_booked"
	CodeCapacityBelowTaken = "capacity_below_taken"
	CodeAlreadyWaiting     = "already_waiting"
	CodeValidation         = "validation_failed"
	CodeNotFound           = "not_found"
	CodeUnauthorized       = "unauthorized"
	CodeRateLimited        = "rate_limited"
	CodeBadCredentials     = "bad_credentials"
	CodeAccountLocked      = "account_locked"
	CodeIdempotencyReuse   = "idempotency_key_reuse"
	CodeIdempotencyRunning = "idempotency_in_progress"
	// Events (RSVP).
	CodeRegistrationClosed = "registration_closed"
	CodeWaitlistFull       = "waitlist_full"
	CodeAlreadyRegistered  = "already_registered"
	CodeCancellationClosed = "cancellation_closed"
	// CodeBookingSystemUnavailable: the business's booking system did not
	// confirm a claim (kind ErrUnavailable).
	CodeBookingSystemUnavailable = "booking_system_unavailable"
)
