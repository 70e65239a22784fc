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
	// ErrTxBroken means a store transaction can no longer go on: a part
	// of it (a Savepoint) failed and could not be undone on its own (a
	// broken connection, a full disk). Only rolling the whole back is
	// left.
	ErrTxBroken = errors.New("transaction broken")
)

// Error is a domain error with a stable machine-readable code (the `code` of
// the API's problem+json, one of the Code* constants of codes.go) and a kind
// (one of the Err* sentinels).
type Error struct {
	Kind    error          // ErrNotFound, ErrConflict, ErrInvalid, ErrUnauthorized, ErrRateLimited or ErrUnavailable
	Code    string         // stable code, one of the Code* constants, e.g. CodeSlotTaken
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
		return CodeNotFound
	case errors.Is(err, ErrInvalid):
		return CodeValidation
	case errors.Is(err, ErrUnauthorized):
		return CodeUnauthorized
	case errors.Is(err, ErrConflict):
		return CodeConflict
	}
	return ""
}
