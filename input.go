package nextup

import (
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of what nextup takes in. Every use case checks its inputs against
// these before it changes anything, so that a value that makes no sense is
// refused with a clear field error (400 validation_failed) instead of being
// acted on.
const (
	// MaxNameLen bounds a person's, service's, staff member's or
	// business's name, in characters.
	MaxNameLen = 200
	// MaxTextLen bounds free text (an event's notes, a reason), in
	// characters.
	MaxTextLen = 2000
	// MaxSlotLength is the longest a slot or event may last.
	MaxSlotLength = 7 * 24 * time.Hour
	// MaxYearsAhead is how far ahead a slot or event may start.
	MaxYearsAhead = 5
	// MinYear is the earliest year nextup takes a date in.
	MinYear = 2000
)

// Lengths RFC 5321 allows an email address (section 4.5.3.1): 64 octets of
// local part, 254 of address (a 256-octet path less its angle brackets).
const (
	maxEmailLocal = 64
	maxEmail      = 254
)

// CheckName checks a one-line name (a person's, a service's): not longer
// than max characters (MaxNameLen when max is 0), valid UTF-8, and no
// control or text-direction characters. It returns nil when s is fine; an
// empty s is fine here (whether it is required is the caller's to say).
func CheckName(field, s string, max int) *FieldError {
	return checkText(field, s, max, false)
}

// CheckText checks free text as CheckName does a name, allowing line
// breaks and tabs; max 0 means MaxTextLen.
func CheckText(field, s string, max int) *FieldError {
	return checkText(field, s, max, true)
}

func checkText(field, s string, max int, multiline bool) *FieldError {
	if max == 0 {
		max = MaxNameLen
		if multiline {
			max = MaxTextLen
		}
	}
	if !utf8.ValidString(s) {
		return &FieldError{Field: field, Message: "is not valid UTF-8"}
	}
	if n := utf8.RuneCountInString(s); n > max {
		return &FieldError{Field: field, Message: fmt.Sprintf("is %d characters long, at most %d", n, max)}
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\r' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || bidiControl(r) || r == '\u2028' || r == '\u2029' {
			return &FieldError{Field: field, Message: fmt.Sprintf("must not hold control characters (found %U)", r)}
		}
	}
	return nil
}

// bidiControl reports the characters that reorder text around them (the
// embeddings, overrides and isolates of Unicode's bidirectional
// algorithm): in a name they can make a message read other than it is.
func bidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// ValidEmail reports whether s is a bare email address (no display name,
// no angle brackets) within RFC 5321's lengths.
func ValidEmail(s string) bool {
	if len(s) > maxEmail || s == "" {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at <= maxEmailLocal && strings.IndexFunc(s, unicode.IsControl) < 0
}

// CheckSlotTimes checks when a new slot or event is: it has not started
// by now, it ends after it starts, it lasts at most MaxSlotLength, and it
// starts between MinYear and MaxYearsAhead years from now.
func CheckSlotTimes(starts, ends, now time.Time) []FieldError {
	var f []FieldError
	add := func(field, msg string) { f = append(f, FieldError{Field: field, Message: msg}) }
	switch {
	case starts.IsZero():
		add("starts_at", "is required")
	case starts.Year() < MinYear:
		add("starts_at", fmt.Sprintf("must be in %d or later", MinYear))
	case starts.After(now.AddDate(MaxYearsAhead, 0, 0)):
		add("starts_at", fmt.Sprintf("must be at most %d years ahead", MaxYearsAhead))
	case starts.Before(now):
		add("starts_at", "has already passed: a new slot must start in the future")
	}
	switch {
	case starts.IsZero() && !ends.IsZero():
	case !ends.After(starts):
		add("ends_at", "must be after starts_at")
	case ends.Sub(starts) > MaxSlotLength:
		add("ends_at", fmt.Sprintf("must be at most %d days after starts_at", MaxSlotLength/(24*time.Hour)))
	}
	return f
}
