package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nextup-dev/nextup"
)

// stats counts what the simulation did, so that a run shows it exercised
// everything: a simulation that quietly tests nothing passes every check.
type stats struct {
	seeds           int
	steps           int
	ops             map[string]int
	rejections      map[string]int // domain refusals by code
	offers          int
	pending         int // offers held back by quiet hours
	ended           map[nextup.OfferState]int
	handBacks       map[string]int
	repeats         int // repeated claims that returned the same booking
	concurrent      int // concurrent claim races
	overrides       int // offers an organiser's override made out of fair order
	faults          int // use cases whose transaction failed under an injected fault
	faultPanics     int
	faultsMissed    int            // planned faults the transaction never reached
	swallowed       map[string]int // faults a use case swallowed (the commit failed instead), by Tx method
	faultMasked     map[string]int // faults reported under another error, by code
	faultMaskedSeed map[string]string
	timerFaults     int
	restarts        int
	entriesExpired  int
	requeued        map[string]int // lapses and declines by what the re-queue rule did
	deduped         int            // entries a booking of their person withdrew (the dedupe rule)
	capGaps         int
	capGapSeen      map[string]bool
	capGapExample   string
	// slots that came back from staff without a row of their own
	unauditedUnHandBack int
	unauditedExample    string
	unauditedResolve    int // hand-backs resolved without a hand-back audit row
	claimGaps           int // open slots left under the try cap after a claim
	claimGapExample     string

	// The relay (relay.go).
	sends            map[string]int // provider calls by outcome
	deadLetters      int            // sends that left their message dead
	deadAfterRetries int            // of them, after relayAttempts passing failures
	offerFallbacks   int            // dead offer messages sent again on the other channel
	bookingFallbacks int            // dead confirmations and reminders sent again
	fallbackCovered  int            // dead offer messages whose other channel had the offer already
	fallbackSkipped  int            // passing failures with no other channel (fallback_skipped)
	noChannel        int            // offers ended no_channel
	relayFaults      int            // relay rounds with a transaction failed by a fault
	relayPanics      int
	deadLetterFaults int // of them, in the transaction of a dead letter and its fallback
	relayRetried     int // messages claimed again after a faulted round left them leased
	smsReports       int // carrier delivery reports handled
}

func newStats() *stats {
	return &stats{
		ops:             map[string]int{},
		rejections:      map[string]int{},
		ended:           map[nextup.OfferState]int{},
		handBacks:       map[string]int{},
		swallowed:       map[string]int{},
		faultMasked:     map[string]int{},
		faultMaskedSeed: map[string]string{},
		capGapSeen:      map[string]bool{},
		sends:           map[string]int{},
		requeued:        map[string]int{},
	}
}

func sortedCounts[K ~string](m map[K]int) string {
	keys := slices.Sorted(maps.Keys(m))
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func (s *stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d seeds, %d steps\n", s.seeds, s.steps)
	fmt.Fprintf(&b, "operations: %s\n", sortedCounts(s.ops))
	fmt.Fprintf(&b, "offers: %d made (%d held back by quiet hours); ended: %s\n", s.offers, s.pending, sortedCounts(s.ended))
	fmt.Fprintf(&b, "claims: %d repeated, %d concurrent races; %d offers by an organiser's override\n", s.repeats, s.concurrent, s.overrides)
	fmt.Fprintf(&b, "hand-backs: %s\n", sortedCounts(s.handBacks))
	fmt.Fprintf(&b, "refusals: %s\n", sortedCounts(s.rejections))
	fmt.Fprintf(&b, "faults: %d use cases rolled back (%d by panic), %d plans not reached, %d in timer sweeps; restarts: %d\n",
		s.faults, s.faultPanics, s.faultsMissed, s.timerFaults, s.restarts)
	if len(s.swallowed) > 0 {
		fmt.Fprintf(&b, "faults swallowed by a use case (commit failed instead): %s\n", sortedCounts(s.swallowed))
	}
	for _, k := range slices.Sorted(maps.Keys(s.faultMasked)) {
		fmt.Fprintf(&b, "a store fault reported as %s: %d times, first %s\n", k, s.faultMasked[k], s.faultMaskedSeed[k])
	}
	fmt.Fprintf(&b, "relay: sends %s; %d messages dead (%d after %d passing failures); %d carrier reports\n",
		sortedCounts(s.sends), s.deadLetters, s.deadAfterRetries, relayAttempts, s.smsReports)
	fmt.Fprintf(&b, "dead letters: %d offers sent again on the other channel, %d already there, %d skipped (no other channel), %d ended no_channel; %d bookings' messages sent again\n",
		s.offerFallbacks, s.fallbackCovered, s.fallbackSkipped, s.noChannel, s.bookingFallbacks)
	fmt.Fprintf(&b, "relay faults: %d rounds (%d by panic), %d in a dead letter's transaction; %d messages tried again after their lease lapsed\n",
		s.relayFaults, s.relayPanics, s.deadLetterFaults, s.relayRetried)
	fmt.Fprintf(&b, "entries expired by housekeeping: %d; lapses and declines: %s; withdrawn by a booking (dedupe): %d\n", s.entriesExpired,
		sortedCounts(s.requeued), s.deduped)
	if s.capGaps > 0 {
		fmt.Fprintf(&b, "open slots left after a daily-cap skip once the cap reset (excused in check 7): %d, e.g. %s\n", s.capGaps, s.capGapExample)
	}
	if s.claimGaps > 0 {
		fmt.Fprintf(&b, "open slots back under the try cap after a claim, not decided again (excused in check 7): %d, e.g. %s\n", s.claimGaps, s.claimGapExample)
	}
	if s.unauditedResolve > 0 {
		fmt.Fprintf(&b, "hand-backs resolved by fresh seats without a hand-back audit row: %d\n", s.unauditedResolve)
	}
	if s.unauditedUnHandBack > 0 {
		fmt.Fprintf(&b, "slots back from staff without a slot audit row (only the booking's): %d, e.g. %s\n", s.unauditedUnHandBack, s.unauditedExample)
	}
	return b.String()
}
