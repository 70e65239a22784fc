package sim

import (
	"sync"

	"github.com/nextup-dev/nextup"
)

// totals adds up the stats of a test's seeds, which run in parallel.
type totals struct {
	mu sync.Mutex
	s  *stats
}

func (t *totals) add(s *stats, steps int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.s == nil {
		t.s = newStats()
	}
	a := t.s
	a.seeds++
	a.steps += steps
	for k, v := range s.ops {
		a.ops[k] += v
	}
	for k, v := range s.rejections {
		a.rejections[k] += v
	}
	for k, v := range s.ended {
		a.ended[k] += v
	}
	for k, v := range s.handBacks {
		a.handBacks[k] += v
	}
	for k, v := range s.swallowed {
		a.swallowed[k] += v
	}
	for k, v := range s.faultMasked {
		a.faultMasked[k] += v
		if a.faultMaskedSeed[k] == "" {
			a.faultMaskedSeed[k] = s.faultMaskedSeed[k]
		}
	}
	for k, v := range s.sends {
		a.sends[k] += v
	}
	for k, v := range s.requeued {
		a.requeued[k] += v
	}
	a.deadLetters += s.deadLetters
	a.deadAfterRetries += s.deadAfterRetries
	a.offerFallbacks += s.offerFallbacks
	a.bookingFallbacks += s.bookingFallbacks
	a.fallbackCovered += s.fallbackCovered
	a.fallbackSkipped += s.fallbackSkipped
	a.noChannel += s.noChannel
	a.relayFaults += s.relayFaults
	a.relayPanics += s.relayPanics
	a.deadLetterFaults += s.deadLetterFaults
	a.relayRetried += s.relayRetried
	a.smsReports += s.smsReports
	a.offers += s.offers
	a.pending += s.pending
	a.repeats += s.repeats
	a.concurrent += s.concurrent
	a.overrides += s.overrides
	a.faults += s.faults
	a.faultPanics += s.faultPanics
	a.faultsMissed += s.faultsMissed
	a.timerFaults += s.timerFaults
	a.restarts += s.restarts
	a.entriesExpired += s.entriesExpired
	a.deduped += s.deduped
	a.capGaps += s.capGaps
	if a.capGapExample == "" {
		a.capGapExample = s.capGapExample
	}
	a.unauditedUnHandBack += s.unauditedUnHandBack
	a.unauditedResolve += s.unauditedResolve
	a.claimGaps += s.claimGaps
	if a.claimGapExample == "" {
		a.claimGapExample = s.claimGapExample
	}
	if a.unauditedExample == "" {
		a.unauditedExample = s.unauditedExample
	}
}

// coverage lists what a run of many seeds must have exercised.
func (s *stats) coverage() []string {
	var missing []string
	for _, o := range opTable {
		if s.ops[o.name] == 0 {
			missing = append(missing, "operation "+o.name)
		}
	}
	for _, st := range []nextup.OfferState{nextup.OfferClaimed, nextup.OfferExpired, nextup.OfferDeclined, nextup.OfferCancelled} {
		if s.ended[st] == 0 {
			missing = append(missing, "an offer "+string(st))
		}
	}
	for _, m := range []string{requeueKeep, requeueBack, requeueDrop} {
		if s.requeued[m] == 0 {
			missing = append(missing, "a lapse or decline the re-queue rule answered with "+m)
		}
	}
	if s.deduped == 0 {
		missing = append(missing, "an entry a booking of its person withdrew (dedupe)")
	}
	for _, r := range []string{nextup.HandBackTooSoon, nextup.HandBackTryCap, nextup.HandBackListExhausted} {
		if s.handBacks[r] == 0 {
			missing = append(missing, "a hand-back for "+r)
		}
	}
	checks := []struct {
		n    int
		what string
	}{
		{s.pending, "an offer held back by quiet hours"},
		{s.repeats, "a repeated claim"},
		{s.concurrent, "a concurrent claim race"},
		{s.faults, "a use case rolled back by a fault"},
		{s.faultPanics, "a use case killed by a panic"},
		{s.timerFaults, "a fault in a timer sweep"},
		{s.restarts, "a restart"},
		{s.rejections[nextup.CodeNotEnoughBooked], "a not_enough_booked refusal"},
		{s.rejections[nextup.CodeCapacityBelowTaken], "a capacity_below_taken refusal"},
		{s.rejections[nextup.CodeAlreadyWaiting], "an already_waiting refusal"},
		{s.rejections[nextup.CodeAlreadyRegistered], "an already_registered refusal"},
		{s.rejections[nextup.CodeRegistrationClosed], "a registration_closed refusal"},
		{s.rejections[nextup.CodeWaitlistFull], "a waitlist_full refusal"},
		{s.rejections[nextup.CodeCancellationClosed], "a cancellation_closed refusal"},
		{s.overrides, "an offer by an organiser's override"},
		{s.sends[sendOK], "a message sent by the relay"},
		{s.sends[sendTransient], "a send that failed for a while"},
		{s.sends[sendRefused], "an address refused for good"},
		{s.sends[sendRejected], "a send refused by a provider's policy"},
		{s.deadAfterRetries, "a message dead after its last attempt"},
		{s.offerFallbacks, "an offer sent again on the other channel"},
		{s.fallbackSkipped, "a dead offer message with no other channel (fallback_skipped)"},
		{s.noChannel, "an offer ended no_channel"},
		{s.deadLetterFaults, "a fault in a dead letter's transaction"},
		{s.relayRetried, "a message tried again after a faulted round"},
		{s.smsReports, "a carrier's delivery report"},
	}
	for _, c := range checks {
		if c.n == 0 {
			missing = append(missing, c.what)
		}
	}
	return missing
}

func offerState(s string) nextup.OfferState { return nextup.OfferState(s) }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
