package nextup

import (
	"cmp"
	"strings"
	"time"
)

// EntryState is where an entry is on the waitlist.
type EntryState string

// Entry states.
const (
	EntryWaiting EntryState = "waiting"
	EntryOffered EntryState = "offered" // holds a live offer
	EntryBooked  EntryState = "booked"
	EntryLeft    EntryState = "left"
	EntryExpired EntryState = "expired" // its window ended without a booking
)

// Channel is a way to reach a person.
type Channel string

// Channels.
const (
	ChannelEmail   Channel = "email"
	ChannelSMS     Channel = "sms"
	ChannelWebhook Channel = "webhook"
	ChannelCapture Channel = "capture"
)

// Availability is one weekly window in business local time: the listed days,
// From (inclusive) to To (exclusive).
type Availability struct {
	Days []time.Weekday
	From TimeOfDay
	To   TimeOfDay
}

// Entry is one person on the waitlist.
//
// Earliest and Latest bound the acceptable slot start (inclusive); a
// date-only bound in the API has already been turned into the start or the
// end of that day in the business timezone. Fair order is Priority first,
// then JoinedAt, then Seq (a monotonic sequence assigned by the store).
//
// JoinedAt and Seq are the entry's place in line: when it joined, unless
// the re-queue rule (Requeue) moved it to the back of the line after a
// lapse or decline. Then JoinedAt is that moment and Seq a new number from
// the store's sequence, so it ranks behind every entry already waiting
// (of its priority: a priority entry stays ahead of the others) and ahead
// of everyone who joins later; the audit row of the move keeps the old
// place.
type Entry struct {
	ID           string
	BusinessID   string
	Name         string
	Email        string
	Phone        string
	Channel      Channel // preferred channel; "" lets the engine choose
	Service      string
	EventID      string
	PartySize    int
	Earliest     time.Time
	Latest       time.Time
	Staff        string
	Availability []Availability
	Priority     bool
	Source       string
	JoinedAt     time.Time
	Seq          int64
	State        EntryState
	StatusHash   string // hash of the status-page token
	UpdatedAt    time.Time
	// Lapses counts the offers this entry let lapse or declined (see
	// Requeue); the re-queue rule reads it.
	Lapses int
}

// SourceSheet is the source lane of entries mirrored from a business's
// sheet: the mirror marks their rows booked when they claim, and withdraws
// them when their rows are deleted (package waitlist/intake).
const SourceSheet = "sheet"

// QueueOf names the waitlist of a service or an event, as the stores and
// the replay of a place key it: its event's, or else its service's.
func QueueOf(service, eventID string) string {
	if eventID != "" {
		return "event:" + eventID
	}
	return "service:" + service
}

// Queue is the waitlist e is on (QueueOf).
func (e Entry) Queue() string { return QueueOf(e.Service, e.EventID) }

// ContactKey identifies the person behind an entry within a business, for
// the per-person daily offer cap and duplicate detection: the normalised
// email if there is one, otherwise the phone number.
func (e Entry) ContactKey() string {
	if e.Email != "" {
		return "email:" + strings.ToLower(strings.TrimSpace(e.Email))
	}
	return "phone:" + strings.Map(func(r rune) rune {
		if r == '+' || (r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, e.Phone)
}

// Active reports whether the entry is still on the list (waiting or holding an offer).
func (e Entry) Active() bool { return e.State == EntryWaiting || e.State == EntryOffered }

// CompareFair orders entries by the fair-order policy fcfs-priority/v1:
// priority first, then earlier joined-at, then the smaller sequence number.
// It returns a negative number when a comes before b. The engine and every
// store use this one definition.
func CompareFair(a, b Entry) int {
	if a.Priority != b.Priority {
		if a.Priority {
			return -1
		}
		return 1
	}
	if c := a.JoinedAt.Compare(b.JoinedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}
