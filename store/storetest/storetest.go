package storetest

import (
	"testing"

	"github.com/nextup-dev/nextup"
)

// Harness tells the suite how to get stores of one backend.
type Harness struct {
	// Open returns a store on a new, empty database that no other store
	// shares, ready to use (migrated). It fails t when it cannot, and
	// registers the store's Close with t.Cleanup. The suite closes some
	// stores itself, so that cleanup must tolerate a store that is
	// already closed.
	Open func(t *testing.T) nextup.Store

	// Reopen opens the database behind s again and returns a new store on
	// it. The suite has closed s before it calls Reopen. Like Open, it
	// registers the new store's Close with t.Cleanup. A nil Reopen skips
	// the subtests that need it, saying so.
	Reopen func(t *testing.T, s nextup.Store) nextup.Store

	// Gaps declares the subtests this backend does not pass, by name
	// ("Store/ReadSnapshot"), each with the reason; they skip, saying it.
	// A name that is not a subtest fails the run, so a gap cannot outlive
	// a rename unnoticed.
	Gaps map[string]string
}

// Run runs the conformance suite against the stores that open returns,
// without the subtests that reopen a database (they skip). Each call of
// open must return a store on a new, empty database of its own.
func Run(t *testing.T, open func(t *testing.T) nextup.Store) {
	t.Helper()
	RunHarness(t, Harness{Open: open})
}

// RunHarness runs the whole conformance suite against h. Every subtest
// calls t.Parallel and opens its own store.
func RunHarness(t *testing.T, h Harness) {
	t.Helper()
	if h.Open == nil {
		t.Fatal("storetest: Harness.Open is nil")
	}
	known := map[string]bool{}
	for _, g := range groups {
		for _, c := range g.tests {
			known[g.name+"/"+c.name] = true
		}
	}
	for name := range h.Gaps {
		if !known[name] {
			t.Errorf("storetest: Harness.Gaps names %q, which is not a subtest", name)
		}
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range g.tests {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					if why, ok := h.Gaps[g.name+"/"+c.name]; ok {
						t.Skipf("declared gap of this backend: %s", why)
					}
					c.fn(t, setup(t, h))
				})
			}
		})
	}
}

type group struct {
	name  string
	tests []test
}

type test struct {
	name string
	fn   func(t *testing.T, b *bundle)
}

// groups is the suite, one group per part of the Tx interface.
var groups = []group{
	{"Store", []test{
		{"Ping", testPing},
		{"ReadSeesCommitted", testReadSeesCommitted},
		{"ReadIsolation", testReadIsolation},
		{"ReadSnapshot", testReadSnapshot},
		{"RollbackOnError", testRollbackOnError},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"ConflictLeavesTxUsable", testConflictLeavesTxUsable},
		{"Savepoint", testSavepoint},
		{"Reopen", testReopen},
	}},
	{"Business", []test{
		{"RoundTrip", testBusinessRoundTrip},
		{"NotFound", testBusinessNotFound},
		{"DuplicateID", testBusinessDuplicateID},
		{"RulesSetVersion", testBusinessRulesSetVersion},
		{"Profile", testBusinessProfile},
	}},
	{"Slot", []test{
		{"RoundTrip", testSlotRoundTrip},
		{"NotFound", testSlotNotFound},
		{"CreateOverCapacity", testSlotCreateOverCapacity},
		{"Seats", testSlotSeats},
		{"Resize", testSlotResize},
		{"SetHandedBack", testSlotSetHandedBack},
		{"List", testSlotList},
		{"OpenFor", testSlotOpenFor},
		{"OpenForEvent", testSlotOpenForEvent},
		{"EventRoundTrip", testSlotEventRoundTrip},
	}},
	{"Entry", []test{
		{"RoundTrip", testEntryRoundTrip},
		{"NotFound", testEntryNotFound},
		{"Seq", testEntrySeq},
		{"Update", testEntryUpdate},
		{"SetState", testEntrySetState},
		{"Lapse", testEntryLapse},
		{"SetStatusHash", testEntrySetStatusHash},
		{"Candidates", testEntryCandidates},
		{"CandidatesBruteForce", testEntryCandidatesBruteForce},
		{"PositionBruteForce", testEntryPositionBruteForce},
		{"PositionChurn", testEntryPositionChurn},
		{"ListBruteForce", testEntryListBruteForce},
		{"ActiveByContact", testEntryActiveByContact},
		{"ActiveListByContact", testEntryActiveListByContact},
		{"ByContact", testEntryByContact},
		{"ExpireBefore", testEntryExpireBefore},
	}},
	{"Offer", []test{
		{"RoundTrip", testOfferRoundTrip},
		{"NotFound", testOfferNotFound},
		{"SetState", testOfferSetState},
		{"Claim", testOfferClaim},
		{"ClaimRefused", testOfferClaimRefused},
		{"Seen", testOfferSeen},
		{"Send", testOfferSend},
		{"Handed", testOfferHanded},
		{"ListBySlot", testOfferListBySlot},
		{"LiveByEntry", testOfferLiveByEntry},
		{"CountSince", testOfferCountSince},
	}},
	{"Booking", []test{
		{"RoundTrip", testBookingRoundTrip},
		{"NotFound", testBookingNotFound},
		{"SetState", testBookingSetState},
		{"CheckIn", testBookingCheckIn},
	}},
	{"Guest", []test{
		{"RoundTrip", testGuestRoundTrip},
		{"CreateRefused", testGuestCreateRefused},
		{"CheckIn", testGuestCheckIn},
	}},
	{"Payment", []test{
		{"RoundTrip", testPaymentRoundTrip},
		{"SetState", testPaymentSetState},
		{"DuplicateSession", testPaymentDuplicateSession},
	}},
	{"HandBack", []test{
		{"RoundTrip", testHandBackRoundTrip},
		{"Resolve", testHandBackResolve},
	}},
	{"Audit", []test{
		{"AppendList", testAuditAppendList},
	}},
	{"Message", []test{
		{"RoundTrip", testMessageRoundTrip},
		{"List", testMessageList},
		{"Counts", testMessageCounts},
		{"ClaimDue", testMessageClaimDue},
		{"Claim", testMessageClaim},
		{"ClaimRefused", testMessageClaimRefused},
		{"Finish", testMessageFinish},
		{"Requeue", testMessageRequeue},
		{"Undelivered", testMessageUndelivered},
		{"CancelByOffer", testMessageCancelByOffer},
	}},
	{"Timer", []test{
		{"RoundTrip", testTimerRoundTrip},
		{"ScheduleUpsert", testTimerScheduleUpsert},
		{"Cancel", testTimerCancel},
		{"ClaimDue", testTimerClaimDue},
		{"DueTwice", testTimerDueTwice},
		{"Done", testTimerDone},
		{"Renew", testTimerRenew},
		{"NextDue", testTimerNextDue},
		{"List", testTimerList},
	}},
	{"Idempotency", []test{
		{"StartFinishReplay", testIdempotencyStartFinishReplay},
		{"FinishOnlyRunning", testIdempotencyFinishOnlyRunning},
		{"ExpiredReplaced", testIdempotencyExpiredReplaced},
		{"Delete", testIdempotencyDelete},
		{"Purge", testIdempotencyPurge},
	}},
	{"Suppression", []test{
		{"AddList", testSuppressionAddList},
	}},
	{"Staff", []test{
		{"RoundTrip", testStaffRoundTrip},
		{"NotFound", testStaffNotFound},
		{"DuplicateEmail", testStaffDuplicateEmail},
		{"List", testStaffList},
		{"SignIn", testStaffSignIn},
	}},
	{"Proposal", []test{
		{"RoundTrip", testProposalRoundTrip},
		{"OnePerRequest", testProposalOnePerRequest},
		{"Decide", testProposalDecide},
		{"List", testProposalList},
		{"SheetVersions", testSheetVersions},
		{"SheetVersionContent", testSheetVersionContent},
		{"SheetVersionTrim", testSheetVersionTrim},
	}},
	{"Person", []test{
		{"EntryListByContact", testPersonEntryListByContact},
		{"OfferListByContact", testPersonOfferListByContact},
		{"Erase", testPersonErase},
	}},
	{"Job", []test{
		{"RoundTrip", testJobRoundTrip},
		{"Advance", testJobAdvance},
	}},
	{"Summary", []test{
		{"RoundTrip", testSummaryRoundTrip},
		{"List", testSummaryList},
	}},
	{"Session", []test{
		{"RoundTrip", testSessionRoundTrip},
		{"Delete", testSessionDelete},
		{"Purge", testSessionPurge},
	}},
	{"PasswordReset", []test{
		{"UseOnce", testPasswordResetUseOnce},
		{"Expired", testPasswordResetExpired},
	}},
	{"Concurrency", []test{
		{"ClaimRace", testConcurrentClaimRace},
		{"ClaimVersusExpiry", testConcurrentClaimVersusExpiry},
		{"ClaimRaceSharedSlot", testConcurrentClaimRaceSharedSlot},
		{"Releases", testConcurrentReleases},
		{"HoldsOverCapacity", testConcurrentHoldsOverCapacity},
		{"SlotGetLocksRow", testConcurrentSlotGetLocksRow},
		{"EntryGetLocksRow", testConcurrentEntryGetLocksRow},
		{"EntryCreateSeq", testConcurrentEntryCreateSeq},
		{"TimerClaim", testConcurrentTimerClaim},
		{"MessageClaim", testConcurrentMessageClaim},
		{"MessageClaimOne", testConcurrentMessageClaimOne},
		{"JobAdvance", testConcurrentJobAdvance},
	}},
}
