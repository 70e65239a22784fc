package nextup

import (
	"strings"
	"time"
)

// Timer kinds.
const (
	TimerOfferExpire    = "offer_expire"    // an offer's claim window ends: expire it and roll on
	TimerOfferRelease   = "offer_release"   // quiet hours end: send a pending offer
	TimerHousekeeping   = "housekeeping"    // daily: expire entries past their window, purge old idempotency records
	TimerEntryRematch   = "entry_rematch"   // local midnight after an entry hit the daily offer cap: match it again
	TimerOfferEscalate  = "offer_escalate"  // half an offer's window (of 30 min or more), not seen: follow up on the other channel
	TimerBookingRemind  = "booking_remind"  // a reminder of a booked slot, at one of the business's offsets before it
	TimerSheetSync      = "sheet_sync"      // read the business's mirrored sheet again
	TimerSheetMark      = "sheet_mark"      // a claim of an entry from a Google Sheet: mark its row booked there (again, after an outage)
	TimerBookingSync    = "booking_sync"    // a claim the business's booking system has not confirmed yet: ask it again
	TimerSlotDecide     = "slot_decide"     // a batch promotion split to fit a bounded store's transactions: decide the slot again
	TimerJobRun         = "job_run"         // a job's next wave (and, until it ends, the guard that resumes it after a crash)
	TimerMonthlySummary = "monthly_summary" // the first Monday of a month, 09:00 local: sum up the month before for the owner
	TimerDedupe         = "dedupe"          // a booking made more of its person's entries pointless than one bounded transaction withdraws: the rest
	TimerRetention      = "retention"       // daily, after housekeeping, when the business keeps personal data for N months: erase those whose entries all ended before
)

// Timer is a durable deadline. The sweeper claims due timers with a lease
// and finishes one only while its claim still holds; every handler is a
// conditional write, so a timer that fires twice does no harm.
type Timer struct {
	ID           int64
	BusinessID   string
	Kind         string
	SubjectID    string
	Key          string // unique among pending timers, e.g. "offer_expire:<offer id>"
	DueAt        time.Time
	ClaimedUntil *time.Time // the claim's lease as taken; TimerDone names the claim by it
	ClaimedBy    string
	// RenewedUntil, when set, is when the claim's lease ends now: the
	// sweeper renews the lease of a timer while its handler runs, so
	// leases can be short and a crashed process's timers come back soon.
	RenewedUntil *time.Time
	Attempts     int
	DoneAt       *time.Time
	CreatedAt    time.Time
}

// LeasedUntil is when the timer's current lease ends (the later of its
// claim and its renewal), and false when it was never claimed.
func (t Timer) LeasedUntil() (time.Time, bool) {
	if t.ClaimedUntil == nil {
		return time.Time{}, false
	}
	if t.RenewedUntil != nil && t.RenewedUntil.After(*t.ClaimedUntil) {
		return *t.RenewedUntil, true
	}
	return *t.ClaimedUntil, true
}

// IdempotencyRecord remembers the response to a POST with an
// Idempotency-Key, scoped to a caller (a business id, or "admin").
type IdempotencyRecord struct {
	Scope       string
	Key         string
	Fingerprint string // hash of method, path and body
	Status      int    // 0 while the first request is still running
	Header      map[string]string
	Body        []byte
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Suppression records that a person may not be contacted on a channel (SMS
// STOP, an email bounce).
// AddressKey is the form in which an address is kept and compared for
// opt-outs: an email address trimmed and lower-cased, a phone number as its
// digits with a leading + ("+44 7700 900123" and "+447700900123" are one
// number). Suppressions are written and looked up by it.
func AddressKey(ch Channel, address string) string {
	address = strings.TrimSpace(address)
	if ch == ChannelSMS {
		return strings.Map(func(r rune) rune {
			if r == '+' || (r >= '0' && r <= '9') {
				return r
			}
			return -1
		}, address)
	}
	return strings.ToLower(address)
}

// Suppression is an address that may not be contacted on a channel (an
// SMS STOP, an email bounce); Address is its AddressKey.
type Suppression struct {
	BusinessID string
	Channel    Channel
	Address    string
	Reason     string
	At         time.Time
}

// IdempotencyTTL is how long an Idempotency-Key record is kept: at least a
// claim window plus a day, so a client retrying a claim or a join after a
// long outage still gets the first response back.
func IdempotencyTTL(r Rules) time.Duration {
	return r.ClaimWindow + 24*time.Hour
}
