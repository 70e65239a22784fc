package nextup

import (
	"context"
	"time"
)

// Store is where nextup keeps its state. Every backend (store/sqlite,
// store/postgres, ...) passes the conformance suite in store/storetest.
//
// Transactions are owned by the store: InTx runs fn in one read-write
// transaction, commits when fn returns nil and rolls back otherwise. A state
// change, its audit row, its outbox message and its timer row are written
// through one Tx so that they commit together or not at all. Read runs fn on
// a consistent read-only snapshot.
type Store interface {
	InTx(ctx context.Context, fn func(tx Tx) error) error
	Read(ctx context.Context, fn func(tx Tx) error) error
	Ping(ctx context.Context) error
	Close() error
}

// Bounded is a Store whose transactions take a bounded number of writes
// (DynamoDB: 100 items, store/dynamo). The use cases that could write
// without bound in one transaction — a batch promotion offering many
// seats at once, the daily expiry of entries — ask for the bound and
// split their work into several transactions, each of which keeps the
// invariant on its own (waitlist/internal/core, "Bounded stores"). A
// store that is not Bounded takes any number.
type Bounded interface {
	// TxWrites is the most items one transaction may write (checks of
	// items it only read count too).
	TxWrites() int
}

// Sized is a transaction of a Bounded store that says how many items it
// has written (or will check) so far: what a use case that splits its
// work has left of the bound.
type Sized interface {
	// Actions is how many of the store's TxWrites the transaction uses
	// now.
	Actions() int
}

// Tx is the set of operations a transaction offers. Methods are named noun +
// verb; lookups return an error wrapping ErrNotFound when nothing matches,
// and conditional writes return an error wrapping ErrConflict when their
// condition does not hold (nothing is changed then). Methods that change
// rows must only be called inside InTx.
//
// Inside InTx, SlotGet and EntryGet lock the row for the rest of the
// transaction where the backend has row locks, so that per-slot decisions
// are serialised.
//
// Conventions every backend keeps (store/storetest checks them):
//   - A Limit of 0 in a query or filter means no limit.
//   - Writes to a missing id fail with ErrNotFound, except TimerDone and
//     MessageFinish, which may report a lost lease as either kind.
//   - A failed conditional write leaves the transaction usable: later
//     statements in the same InTx still commit.
//   - Orders: OfferListBySlot and AuditList oldest first; MessageList newest
//     first; TimerList and SlotOpenFor soonest first; SlotList by start.
//   - OfferSetState stamps SentAt (to offered) or ResolvedAt (final states)
//     and the reason; EntrySetState stamps UpdatedAt; TimerClaimDue counts
//     an attempt per claim; MessageFinish counts an attempt per send.
//   - At most one live offer per entry is also a uniqueness rule of the
//     backend, not only of the use cases.
type Tx interface {
	// Savepoint runs fn as a part of the transaction that can fail on its
	// own: when fn returns an error (or panics), the writes fn made through
	// the transaction are undone and the transaction goes on; otherwise
	// they stay, to commit or roll back with the rest. Savepoints nest.
	// This is what lets one request run several use cases in one
	// transaction, each keeping the all-or-nothing meaning it had alone.
	Savepoint(ctx context.Context, fn func() error) error

	BusinessCreate(ctx context.Context, b Business) error
	BusinessGet(ctx context.Context, id string) (Business, error)
	BusinessByAPIKey(ctx context.Context, keyHash string) (Business, error)
	// BusinessProfileSet replaces a business's profile; a slug another
	// business already has is ErrConflict.
	BusinessProfileSet(ctx context.Context, id string, p Profile) error
	// BusinessBySlug finds a business by its public slug.
	BusinessBySlug(ctx context.Context, slug string) (Business, error)
	// BusinessRulesSet replaces the rules only if the stored version is
	// rules.Version-1 (optimistic concurrency on the rules version).
	BusinessRulesSet(ctx context.Context, id string, rules Rules) error

	SlotCreate(ctx context.Context, s Slot) error
	SlotGet(ctx context.Context, id string) (Slot, error)
	SlotList(ctx context.Context, f SlotFilter) ([]Slot, error)
	// SlotSeats changes a slot's seat counters by the given deltas in one
	// conditional write: it fails with ErrConflict, changing nothing, when
	// the result would break 0 <= booked, 0 <= held, booked+held <= capacity.
	// This is where the invariant is enforced.
	SlotSeats(ctx context.Context, id string, d SeatDelta) (Slot, error)
	// SlotResize sets a new capacity only if it is at least booked+held.
	SlotResize(ctx context.Context, id string, capacity int) (Slot, error)
	SlotSetHandedBack(ctx context.Context, id string, handedBack bool) error
	// SlotEventSet replaces an event's title and settings (nil cutoffs
	// clear them). Only a slot of kind event has settings: a missing slot
	// and a plain one are both ErrNotFound (no such event), and a plain
	// slot is left as it was.
	SlotEventSet(ctx context.Context, id, title string, ev EventSettings) error
	// SlotOpenFor lists future slots with free seats, not handed back, that
	// could fit the entry by service (or event), staff, start window and
	// party size, soonest first. The engine makes the exact decision.
	SlotOpenFor(ctx context.Context, e Entry, startsAfter time.Time, limit int) ([]Slot, error)

	// EntryCreate stores a new entry and returns it with Seq assigned.
	EntryCreate(ctx context.Context, e Entry) (Entry, error)
	EntryGet(ctx context.Context, id string) (Entry, error)
	EntryByStatusHash(ctx context.Context, hash string) (Entry, error)
	// EntryUpdate rewrites the mutable fields (criteria, priority, party size)
	// of an entry; state changes go through EntrySetState.
	EntryUpdate(ctx context.Context, e Entry) error
	// EntrySetState moves an entry from one of from to to, or fails with ErrConflict.
	EntrySetState(ctx context.Context, id string, from []EntryState, to EntryState, at time.Time) error
	// EntryLapse counts one more lapse or decline of an entry's offer
	// (Lapses+1) and, when back is true, moves it to the back of its
	// waitlist: JoinedAt becomes at and Seq a new number from the
	// sequence EntryCreate draws from, so it ranks after every entry of
	// its priority that joined by then. Nothing else changes (the state
	// goes through EntrySetState). It returns the entry as stored.
	EntryLapse(ctx context.Context, id string, back bool, at time.Time) (Entry, error)
	// EntrySetStatusHash replaces the hash of an entry's status token (a
	// new status link, issued to a person who proved their contact again;
	// the old link stops working). A missing entry is ErrNotFound; a hash
	// another entry has is ErrConflict.
	EntrySetStatusHash(ctx context.Context, id, hash string, at time.Time) error
	// EntryCandidates returns up to Limit waiting entries in fair order that
	// may fit a slot, strictly after the cursor, read through an index: the
	// store filters on business, service or event, state, window and party
	// size; the engine checks the rest.
	EntryCandidates(ctx context.Context, q CandidateQuery) ([]Entry, error)
	// EntryList returns entries in fair order.
	EntryList(ctx context.Context, f EntryFilter) ([]Entry, error)
	// EntryPosition returns the 1-based place of a waiting entry among the
	// waiting entries for the same service (or event) in fair order.
	EntryPosition(ctx context.Context, e Entry) (int, error)
	// EntryActiveByContact finds an active entry of the same person for the
	// same service or event.
	EntryActiveByContact(ctx context.Context, businessID, contactKey, service, eventID string) (Entry, error)
	// EntryActiveListByContact lists every active (waiting or offered)
	// entry of the same person (ContactKey) in a business, across all its
	// lists (services and events), oldest first (by joined_at, then id);
	// at most limit (0: no limit).
	EntryActiveListByContact(ctx context.Context, businessID, contactKey string, limit int) ([]Entry, error)
	// EntryByContact finds the oldest entry of the same person for the
	// same service or event in one of states (an event's registration,
	// whether waiting, holding an offer or booked).
	EntryByContact(ctx context.Context, businessID, contactKey, service, eventID string, states []EntryState) (Entry, error)
	// EntryExpireBefore moves up to limit waiting entries of a business
	// whose Latest is before t to expired and returns them.
	EntryExpireBefore(ctx context.Context, businessID string, t time.Time, limit int) ([]Entry, error)
	// EntryListByContact lists every entry of a business, in any state,
	// that is this person's (Contact.Matches: the email compared
	// lower-cased, the phone as PhoneDigits), oldest first (by joined_at,
	// then id). An empty contact matches nothing.
	EntryListByContact(ctx context.Context, businessID string, c Contact) ([]Entry, error)

	OfferCreate(ctx context.Context, o Offer) error
	OfferGet(ctx context.Context, id string) (Offer, error)
	OfferByTokenHash(ctx context.Context, hash string) (Offer, error)
	// OfferSetState ends or sends an offer: moves it from one of from to to,
	// stamping at (ResolvedAt for a final state, SentAt for offered), or
	// fails with ErrConflict.
	OfferSetState(ctx context.Context, id string, from []OfferState, to OfferState, at time.Time, reason string) (Offer, error)
	// OfferSend sends a pending offer: it moves from pending to offered,
	// stamping SentAt, a new deadline (the claim window starts when the
	// offer is sent, even if the quiet-hours timer fired late) and the hash
	// of the claim token minted for the message that goes out now; or it
	// fails with ErrConflict when the offer is no longer pending.
	OfferSend(ctx context.Context, id string, sentAt, expiresAt time.Time, tokenHash string) (Offer, error)
	// OfferHanded restarts the claim window of an offered offer whose
	// message reached the provider at sentAt, later than the offer was
	// made (a storm's paced sends): SentAt becomes sentAt and the
	// deadline expiresAt, only while the offer is offered, its deadline
	// is still after sentAt and before expiresAt; ErrConflict otherwise,
	// changing nothing.
	OfferHanded(ctx context.Context, id string, sentAt, expiresAt time.Time) (Offer, error)
	// OfferClaim is the claim: one conditional write that moves the offer
	// with this token hash from offered to claimed only while it is still
	// offered and now is before its deadline. ErrConflict otherwise.
	OfferClaim(ctx context.Context, tokenHash string, now time.Time) (Offer, error)
	// OfferSeen records the first time the claim page was opened.
	OfferSeen(ctx context.Context, id string, at time.Time) error
	// OfferListBySlot returns every offer ever made for a slot, oldest first.
	OfferListBySlot(ctx context.Context, slotID string) ([]Offer, error)
	// OfferLiveByEntry returns the entry's live offer, or ErrNotFound.
	OfferLiveByEntry(ctx context.Context, entryID string) (Offer, error)
	// OfferCountSince counts offers made to a person since t (the daily cap).
	OfferCountSince(ctx context.Context, businessID, contactKey string, since time.Time) (int, error)
	// OfferListByContact lists every offer of a business made to a person
	// (by the ContactKey it was made under), oldest first.
	OfferListByContact(ctx context.Context, businessID, contactKey string) ([]Offer, error)

	BookingCreate(ctx context.Context, b Booking) error
	BookingGet(ctx context.Context, id string) (Booking, error)
	BookingByOffer(ctx context.Context, offerID string) (Booking, error)
	BookingSetState(ctx context.Context, id string, from, to BookingState, at time.Time) (Booking, error)
	BookingListBySlot(ctx context.Context, slotID string) ([]Booking, error)
	// BookingCheckIn sets (at non-nil) or clears a booked booking's
	// check-in; a booking that is not booked is ErrConflict.
	BookingCheckIn(ctx context.Context, id string, at *time.Time) (Booking, error)

	// GuestsCreate stores new guests of registrations (a registration's
	// guests are made in one call), in one write: a missing entry, slot
	// or business is ErrNotFound; a guest whose entry and Index exist
	// already, or an Index below 1, is ErrConflict; either way none of
	// gs is stored.
	GuestsCreate(ctx context.Context, gs []Guest) error
	// GuestListByEntry lists a registration's guests by Index.
	GuestListByEntry(ctx context.Context, entryID string) ([]Guest, error)
	// GuestListBySlot lists the guests of every registration of an
	// event, by EntryID, then Index: the guest list in one read.
	GuestListBySlot(ctx context.Context, slotID string) ([]Guest, error)
	// GuestCheckIn sets (at non-nil) or clears the check-in of guest
	// index of a registration and returns the guest; a missing guest is
	// ErrNotFound.
	GuestCheckIn(ctx context.Context, entryID string, index int, at *time.Time) (Guest, error)

	// PaymentCreate stores a new checkout of an offer.
	PaymentCreate(ctx context.Context, p Payment) error
	// PaymentBySession finds a payment by its provider's session id.
	PaymentBySession(ctx context.Context, sessionID string) (Payment, error)
	// PaymentListByOffer lists an offer's payments, newest first.
	PaymentListByOffer(ctx context.Context, offerID string) ([]Payment, error)
	// PaymentSetState applies a conditional change (ErrConflict when the
	// payment is in none of c.From) and returns the payment.
	PaymentSetState(ctx context.Context, id string, c PaymentChange) (Payment, error)

	HandBackCreate(ctx context.Context, h HandBack) error
	HandBackGet(ctx context.Context, id string) (HandBack, error)
	HandBackList(ctx context.Context, businessID string, state HandBackState) ([]HandBack, error)
	// HandBackResolve resolves every open hand-back with this id (or, when
	// id is empty, every open one of the slot).
	HandBackResolve(ctx context.Context, id, slotID string, at time.Time) error

	AuditAppend(ctx context.Context, ev AuditEvent) error
	AuditList(ctx context.Context, f AuditFilter) ([]AuditEvent, error)

	MessageCreate(ctx context.Context, m Message) error
	MessageGet(ctx context.Context, id string) (Message, error)
	MessageList(ctx context.Context, f MessageFilter) ([]Message, error)
	// MessageCounts counts the outbox by channel and state, for one
	// business or, with an empty businessID, for the whole store (the
	// operator's metric). Channels and states without messages are absent.
	MessageCounts(ctx context.Context, businessID string) (map[Channel]map[MessageState]int, error)
	// MessageClaimDue leases up to limit messages that are queued or failed
	// and due (NotBefore and NextAttemptAt <= now, no live lease) until
	// now+lease, and returns them with ClaimedUntil set.
	MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Message, error)
	// MessageClaim leases one message until now+lease exactly when
	// MessageClaimDue would have leased it (queued or failed, NotBefore
	// and NextAttemptAt <= now, no live lease), and returns it with
	// ClaimedUntil set; like MessageClaimDue it counts no attempt. It is
	// for a queue that names each message to send (the Lambda
	// deployment's SQS), which may name one twice: the second claim must
	// find the message sent or leased and change nothing. A missing id is
	// ErrNotFound; a message that may not be claimed now (sent, dead,
	// cancelled, leased, not yet due) is ErrConflict, saying which, and
	// is left as it was.
	MessageClaim(ctx context.Context, id string, now time.Time, lease time.Duration) (Message, error)
	// MessageFinish records the outcome of a send, only while the lease
	// claimedUntil still holds (ErrConflict otherwise).
	MessageFinish(ctx context.Context, id string, claimedUntil time.Time, r MessageResult) error
	// MessageRequeue puts a dead message back in the queue.
	MessageRequeue(ctx context.Context, id string, now time.Time) (Message, error)
	// MessageUndelivered records that the provider could not deliver a
	// sent message after all (a carrier's report): it goes dead with the
	// reason, visible to staff and retryable. Only a sent message can be;
	// another state is ErrConflict.
	MessageUndelivered(ctx context.Context, id, reason string) (Message, error)
	// MessageCancelByOffer cancels the queued messages of an offer (a
	// pending offer that ends before quiet hours are over is never sent).
	MessageCancelByOffer(ctx context.Context, offerID string) error

	// ProposalCreate stores a proposed row. A proposal with the same
	// business, source and SourceRef exists already: ErrConflict.
	ProposalCreate(ctx context.Context, p Proposal) error
	ProposalGet(ctx context.Context, id string) (Proposal, error)
	// ProposalByActionHash finds the proposal of a one-tap link.
	ProposalByActionHash(ctx context.Context, hash string) (Proposal, error)
	// ProposalList lists a business's proposals, newest received first;
	// state "" lists all.
	ProposalList(ctx context.Context, businessID string, state ProposalState) ([]Proposal, error)
	// ProposalDecide moves an open proposal to approved or rejected, only
	// while it is open (ErrConflict otherwise), and returns it.
	ProposalDecide(ctx context.Context, id string, d ProposalDecision) (Proposal, error)

	// PersonErase rewrites a person's rows as e says (see Erasure), all
	// of them or none: a row missing, or of another business, is
	// ErrNotFound; an entry still waiting or offered, or an offer still
	// live, is ErrConflict.
	PersonErase(ctx context.Context, e Erasure) error

	// SheetVersionAdd keeps a mirrored version of a business's sheet.
	SheetVersionAdd(ctx context.Context, v SheetVersion) error
	// SheetVersionList lists a business's mirrored versions, newest first
	// (at most limit; <= 0 for all), without their Content.
	SheetVersionList(ctx context.Context, businessID string, limit int) ([]SheetVersion, error)
	// SheetVersionGet reads one version with its Content (nil for a
	// version kept without). A store with an item limit may keep only the
	// first rows of a large content, saying how many it left out
	// (SheetContent.Cut).
	SheetVersionGet(ctx context.Context, id string) (SheetVersion, error)
	// SheetVersionTrim drops the Content of a business's versions older
	// than its newest keep (each keeps its hash, counts and missing rows)
	// and counts them. A store with bounded transactions may drop a
	// bounded number a call, leaving the rest to the next.
	SheetVersionTrim(ctx context.Context, businessID string, keep int) (int, error)

	// SummaryCreate stores a business's summary of a month; one that
	// exists for the business and month is ErrConflict (the month was
	// summed up already), a missing business ErrNotFound.
	SummaryCreate(ctx context.Context, s Summary) error
	// SummaryGet reads a business's summary of a month (ErrNotFound when
	// there is none).
	SummaryGet(ctx context.Context, businessID, month string) (Summary, error)
	// SummaryList lists a business's summaries, newest month first (at
	// most limit; <= 0 for all).
	SummaryList(ctx context.Context, businessID string, limit int) ([]Summary, error)

	// JobCreate stores a new job; an id that exists is ErrConflict, a
	// missing business ErrNotFound.
	JobCreate(ctx context.Context, j Job) error
	JobGet(ctx context.Context, id string) (Job, error)
	// JobList lists a business's jobs, newest first (at most limit; <= 0
	// for all).
	JobList(ctx context.Context, businessID string, limit int) ([]Job, error)
	// JobAdvance moves a running job from progress from to progress to
	// (UpdatedAt at) only while its stored progress equals from, and
	// returns it; otherwise it is ErrConflict and changes nothing. A
	// missing job is ErrNotFound.
	JobAdvance(ctx context.Context, id string, from, to JobProgress, at time.Time) (Job, error)

	// TimerSchedule creates a timer, or moves the due time of the pending
	// timer with the same Key.
	TimerSchedule(ctx context.Context, t Timer) error
	// TimerCancel removes the pending timer with this key, if any.
	TimerCancel(ctx context.Context, key string) error
	// TimerClaimDue leases up to limit due timers (DueAt <= now, not done,
	// no live lease) to owner until now+lease, oldest due first.
	TimerClaimDue(ctx context.Context, now time.Time, lease time.Duration, owner string, limit int) ([]Timer, error)
	// TimerDone marks a timer done only while the lease claimedUntil still holds.
	TimerDone(ctx context.Context, id int64, claimedUntil time.Time, at time.Time) error
	// TimerRenew extends the lease of the claim claimedUntil to until
	// while that claim still holds the timer (ErrConflict when it was
	// claimed again, moved or done); TimerClaimDue passes over a timer
	// until its renewed lease ends too.
	TimerRenew(ctx context.Context, id int64, claimedUntil, until time.Time) error
	// TimerNextDue returns the earliest due time of a pending timer, or ErrNotFound.
	TimerNextDue(ctx context.Context) (time.Time, error)
	TimerList(ctx context.Context, f TimerFilter) ([]Timer, error)

	// IdempotencyStart stores a new running record (Status 0) or, when one
	// exists for the scope and key and has not expired, returns it with
	// ErrConflict.
	IdempotencyStart(ctx context.Context, r IdempotencyRecord) (IdempotencyRecord, error)
	// IdempotencyFinish stores the response of a running record (Status 0
	// in the store), with r's expiry when r has one. Only a running record
	// is finished: one already finished (Status != 0) is ErrConflict, a
	// missing one ErrNotFound, and neither is changed. Finishing with
	// Status 0 keeps the record running with r's header and body (a
	// running request's recovery state).
	IdempotencyFinish(ctx context.Context, r IdempotencyRecord) error
	// IdempotencyDelete forgets a record (the first request failed before
	// producing a response worth replaying).
	IdempotencyDelete(ctx context.Context, scope, key string) error
	// IdempotencyPurge removes records that expired before t.
	IdempotencyPurge(ctx context.Context, t time.Time) (int, error)

	SuppressionAdd(ctx context.Context, s Suppression) error
	// SuppressionList returns the suppressions of these addresses.
	SuppressionList(ctx context.Context, businessID string, addresses []string) ([]Suppression, error)
	// SuppressionDelete lets an address be contacted on a channel again
	// (an SMS START) and reports whether it was suppressed.
	SuppressionDelete(ctx context.Context, businessID string, ch Channel, address string) (bool, error)

	// StaffCreate stores a staff account; an email another account has
	// (compared lower-cased) is ErrConflict, a missing business ErrNotFound.
	StaffCreate(ctx context.Context, s Staff) error
	StaffGet(ctx context.Context, id string) (Staff, error)
	// StaffByEmail finds an account by email, compared lower-cased.
	StaffByEmail(ctx context.Context, email string) (Staff, error)
	// StaffList lists a business's accounts by email.
	StaffList(ctx context.Context, businessID string) ([]Staff, error)
	// StaffSignIn records the outcome of a sign-in attempt.
	StaffSignIn(ctx context.Context, id string, r SignInResult) error
	// StaffSetPassword replaces the password hash and clears the failed
	// sign-ins and any lock.
	StaffSetPassword(ctx context.Context, id, passwordHash string) error

	SessionCreate(ctx context.Context, s Session) error
	// SessionGet finds a session by the hash of its token, expired or not.
	SessionGet(ctx context.Context, idHash string) (Session, error)
	// SessionDelete ends one session; none is no error.
	SessionDelete(ctx context.Context, idHash string) error
	// SessionDeleteByStaff ends every session of a staff member and
	// returns how many there were.
	SessionDeleteByStaff(ctx context.Context, staffID string) (int, error)
	// SessionPurge removes sessions that expired before t.
	SessionPurge(ctx context.Context, t time.Time) (int, error)

	PasswordResetCreate(ctx context.Context, r PasswordReset) error
	// PasswordResetUse consumes a reset token: it returns the reset and
	// deletes it when it exists and has not expired at now; an unknown or
	// used token is ErrNotFound, an expired one ErrConflict (and is
	// deleted too).
	PasswordResetUse(ctx context.Context, tokenHash string, now time.Time) (PasswordReset, error)
}

// SeatDelta is a change to a slot's seat counters.
type SeatDelta struct {
	Booked int
	Held   int
}

// SlotFilter selects slots of a business; zero times are open bounds.
type SlotFilter struct {
	BusinessID string
	From, To   time.Time // StartsAt in [From, To)
	Limit      int
}

// CandidateQuery asks for waiting entries that may fit a slot. For an
// event, EventID is set and Service is ignored.
type CandidateQuery struct {
	BusinessID string
	Service    string
	EventID    string
	SlotStart  time.Time
	MaxParty   int    // entries with PartySize <= MaxParty
	MinParty   int    // entries with PartySize >= MinParty
	After      *Entry // fair-order cursor: return entries strictly after this one
	Limit      int
}

// EntryFilter selects entries of a business in fair order.
type EntryFilter struct {
	BusinessID string
	Service    string
	EventID    string
	State      EntryState // "" means active (waiting or offered)
	After      *Entry
	Limit      int
}

// AuditFilter selects audit rows, oldest first.
type AuditFilter struct {
	BusinessID  string
	SlotID      string
	SubjectType string
	SubjectID   string
	// Since and Until, when set, keep the rows whose At is in [Since,
	// Until): a month of a business's story for its figures.
	Since, Until time.Time
	// AfterID keeps the rows after that one (ID greater), to page
	// through a long story Limit rows at a time.
	AfterID int64
	Limit   int
}

// MessageFilter selects outbox rows, newest first.
type MessageFilter struct {
	BusinessID string
	To         string
	State      MessageState
	OfferID    string
	// Since and Until, when set, keep the messages made (CreatedAt) in
	// [Since, Until).
	Since, Until time.Time
	Limit        int
}

// MessageResult is the outcome of one send attempt.
type MessageResult struct {
	State         MessageState // sent, failed or dead
	At            time.Time
	NextAttemptAt time.Time // for failed
	Error         string
	ProviderID    string
}

// TimerFilter selects timers, soonest due first.
type TimerFilter struct {
	BusinessID  string
	Kind        string
	SubjectID   string
	PendingOnly bool
	Limit       int
}
