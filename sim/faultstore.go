package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nextup-dev/nextup"
)

// errInjected is the error a faulty Tx call returns: what a full disk, a
// dropped connection or a killed process looks like from inside a
// transaction.
var errInjected = errors.New("sim: injected store fault")

// injectedPanic is what a faulty Tx call panics with when the plan says so:
// the process dying at that line. The transaction must roll back.
type injectedPanic struct {
	call   int
	method string
}

// faultPlan says which Tx method call of which InTx fails. The store
// lets skipTx transactions through untouched, then fails call number at
// (1-based) of the next one, returning errInjected or panicking. Once it
// has failed, every later call of that transaction fails too (the
// connection is gone), and if the use case swallows the error and returns
// nil the commit fails instead, so a fault always means a rollback.
type faultPlan struct {
	skipTx int
	at     int
	panic  bool
	// deadOnly binds the plan, instead of to transaction skipTx+1, to the
	// first transaction that records a message dead (the relay's
	// MessageFinish and its OnDead fallback): call 1 is that MessageFinish.
	deadOnly bool
	// contain turns the planned panic into an error once the store has
	// rolled the transaction back: the relay runs its transactions on
	// goroutines of its own, where a panic would end the test binary
	// instead of the use case. To the store it is the same crash.
	contain bool

	used      bool   // the plan has been given to a transaction
	calls     int    // Tx method calls seen in that transaction
	fired     bool   // the fault happened
	method    string // the Tx method it hit
	swallowed bool   // the use case returned nil after the fault

	// Of a planned relay transaction that records a send's outcome: the
	// message and the lease it was finished under.
	finishID    string
	finishLease time.Time
}

func (p *faultPlan) String() string {
	kind := "error"
	if p.panic {
		kind = "panic"
	}
	if !p.fired {
		if p.deadOnly {
			return fmt.Sprintf("%s at call %d of a dead letter's tx (not reached: %d calls)", kind, p.at, p.calls)
		}
		return fmt.Sprintf("%s at call %d of tx #%d (not reached: %d calls)", kind, p.at, p.skipTx+1, p.calls)
	}
	s := fmt.Sprintf("%s at call %d (%s) of tx #%d", kind, p.at, p.method, p.skipTx+1)
	if p.deadOnly {
		s = fmt.Sprintf("%s at call %d (%s) of the dead letter of %s", kind, p.at, p.method, p.finishID)
	}
	if p.swallowed {
		s += ", swallowed by the use case"
	}
	return s
}

// faultStore is the real store with faults injected on demand. It is not a
// mock: every call goes to the real SQLite store; a plan only makes one
// call of one transaction fail, so that the store rolls the transaction
// back, as it would after a crash at that line.
type faultStore struct {
	mu    sync.Mutex
	inner nextup.Store
	plan  *faultPlan
	skip  int
}

var _ nextup.Store = (*faultStore)(nil)

func (s *faultStore) setInner(inner nextup.Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inner = inner
}

// arm makes a later transaction fail as p says.
func (s *faultStore) arm(p *faultPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plan = p
	s.skip = p.skipTx
}

// disarm removes the plan, fired or not.
func (s *faultStore) disarm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plan = nil
}

func (s *faultStore) take() (nextup.Store, *faultPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.plan
	if p == nil || p.used {
		return s.inner, nil
	}
	if s.skip > 0 {
		s.skip--
		return s.inner, nil
	}
	if p.deadOnly {
		// Every transaction watches for the dead letter until one binds
		// the plan (faultTx.MessageFinish).
		return s.inner, p
	}
	p.used = true
	return s.inner, p
}

func (s *faultStore) InTx(ctx context.Context, fn func(tx nextup.Tx) error) (err error) {
	inner, p := s.take()
	if p == nil {
		return inner.InTx(ctx, fn)
	}
	if p.contain {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			ip, ok := r.(injectedPanic)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("died at call %d (%s): %w", ip.call, ip.method, errInjected)
		}()
	}
	return inner.InTx(ctx, func(tx nextup.Tx) error {
		ft := &faultTx{Tx: tx, p: p, bound: !p.deadOnly}
		err := fn(ft)
		if ft.bound && p.fired && err == nil {
			p.swallowed = true
			return fmt.Errorf("commit: %w", errInjected)
		}
		return err
	})
}

func (s *faultStore) Read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	s.mu.Lock()
	inner := s.inner
	s.mu.Unlock()
	return inner.Read(ctx, fn)
}

func (s *faultStore) Ping(ctx context.Context) error {
	s.mu.Lock()
	inner := s.inner
	s.mu.Unlock()
	return inner.Ping(ctx)
}

// Close is never called through the wrapper: the world closes the real
// store itself when it simulates a restart.
func (s *faultStore) Close() error { return nil }

// TxWrites passes on the bound of the store inside (nextup.Bounded), so
// that the use cases split their work on a bounded store as they would
// without the fault layer; 0 (no bound) for one that is not bounded.
func (s *faultStore) TxWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.inner.(nextup.Bounded); ok {
		return b.TxWrites()
	}
	return 0
}

// faultTx counts the Tx calls of one transaction and fails the planned one.
// It embeds the real Tx and overrides every method, so each call counts.
type faultTx struct {
	nextup.Tx
	p     *faultPlan
	bound bool // the plan is this transaction's (see faultPlan.deadOnly)
}

func (t *faultTx) hit(method string) error {
	p := t.p
	if !t.bound {
		return nil
	}
	p.calls++
	if p.fired {
		return fmt.Errorf("%s after an earlier fault: %w", method, errInjected)
	}
	if p.calls != p.at {
		return nil
	}
	p.fired, p.method = true, method
	if p.panic {
		panic(injectedPanic{call: p.calls, method: method})
	}
	return fmt.Errorf("%s: %w", method, errInjected)
}

// Actions passes on the size of the transaction inside (nextup.Sized), or
// -1 when it does not say.
func (t *faultTx) Actions() int {
	if s, ok := t.Tx.(nextup.Sized); ok {
		return s.Actions()
	}
	return -1
}

func (t *faultTx) Savepoint(ctx context.Context, fn func() error) error {
	if err := t.hit("Savepoint"); err != nil {
		return err
	}
	return t.Tx.Savepoint(ctx, fn)
}

func (t *faultTx) BusinessCreate(ctx context.Context, b nextup.Business) error {
	if err := t.hit("BusinessCreate"); err != nil {
		return err
	}
	return t.Tx.BusinessCreate(ctx, b)
}

func (t *faultTx) BusinessGet(ctx context.Context, id string) (nextup.Business, error) {
	if err := t.hit("BusinessGet"); err != nil {
		return nextup.Business{}, err
	}
	return t.Tx.BusinessGet(ctx, id)
}

func (t *faultTx) BusinessByAPIKey(ctx context.Context, keyHash string) (nextup.Business, error) {
	if err := t.hit("BusinessByAPIKey"); err != nil {
		return nextup.Business{}, err
	}
	return t.Tx.BusinessByAPIKey(ctx, keyHash)
}

func (t *faultTx) BusinessRulesSet(ctx context.Context, id string, rules nextup.Rules) error {
	if err := t.hit("BusinessRulesSet"); err != nil {
		return err
	}
	return t.Tx.BusinessRulesSet(ctx, id, rules)
}

func (t *faultTx) SlotCreate(ctx context.Context, s nextup.Slot) error {
	if err := t.hit("SlotCreate"); err != nil {
		return err
	}
	return t.Tx.SlotCreate(ctx, s)
}

func (t *faultTx) SlotGet(ctx context.Context, id string) (nextup.Slot, error) {
	if err := t.hit("SlotGet"); err != nil {
		return nextup.Slot{}, err
	}
	return t.Tx.SlotGet(ctx, id)
}

func (t *faultTx) SlotList(ctx context.Context, f nextup.SlotFilter) ([]nextup.Slot, error) {
	if err := t.hit("SlotList"); err != nil {
		return nil, err
	}
	return t.Tx.SlotList(ctx, f)
}

func (t *faultTx) SlotSeats(ctx context.Context, id string, d nextup.SeatDelta) (nextup.Slot, error) {
	if err := t.hit("SlotSeats"); err != nil {
		return nextup.Slot{}, err
	}
	return t.Tx.SlotSeats(ctx, id, d)
}

func (t *faultTx) SlotResize(ctx context.Context, id string, capacity int) (nextup.Slot, error) {
	if err := t.hit("SlotResize"); err != nil {
		return nextup.Slot{}, err
	}
	return t.Tx.SlotResize(ctx, id, capacity)
}

func (t *faultTx) SlotSetHandedBack(ctx context.Context, id string, handedBack bool) error {
	if err := t.hit("SlotSetHandedBack"); err != nil {
		return err
	}
	return t.Tx.SlotSetHandedBack(ctx, id, handedBack)
}

func (t *faultTx) SlotOpenFor(ctx context.Context, e nextup.Entry, startsAfter time.Time, limit int) ([]nextup.Slot, error) {
	if err := t.hit("SlotOpenFor"); err != nil {
		return nil, err
	}
	return t.Tx.SlotOpenFor(ctx, e, startsAfter, limit)
}

func (t *faultTx) EntryCreate(ctx context.Context, e nextup.Entry) (nextup.Entry, error) {
	if err := t.hit("EntryCreate"); err != nil {
		return nextup.Entry{}, err
	}
	return t.Tx.EntryCreate(ctx, e)
}

func (t *faultTx) EntryGet(ctx context.Context, id string) (nextup.Entry, error) {
	if err := t.hit("EntryGet"); err != nil {
		return nextup.Entry{}, err
	}
	return t.Tx.EntryGet(ctx, id)
}

func (t *faultTx) EntryByStatusHash(ctx context.Context, hash string) (nextup.Entry, error) {
	if err := t.hit("EntryByStatusHash"); err != nil {
		return nextup.Entry{}, err
	}
	return t.Tx.EntryByStatusHash(ctx, hash)
}

func (t *faultTx) EntryUpdate(ctx context.Context, e nextup.Entry) error {
	if err := t.hit("EntryUpdate"); err != nil {
		return err
	}
	return t.Tx.EntryUpdate(ctx, e)
}

func (t *faultTx) EntrySetState(ctx context.Context, id string, from []nextup.EntryState, to nextup.EntryState, at time.Time) error {
	if err := t.hit("EntrySetState"); err != nil {
		return err
	}
	return t.Tx.EntrySetState(ctx, id, from, to, at)
}

func (t *faultTx) EntrySetStatusHash(ctx context.Context, id, hash string, at time.Time) error {
	if err := t.hit("EntrySetStatusHash"); err != nil {
		return err
	}
	return t.Tx.EntrySetStatusHash(ctx, id, hash, at)
}

func (t *faultTx) EntryLapse(ctx context.Context, id string, back bool, at time.Time) (nextup.Entry, error) {
	if err := t.hit("EntryLapse"); err != nil {
		return nextup.Entry{}, err
	}
	return t.Tx.EntryLapse(ctx, id, back, at)
}

func (t *faultTx) EntryCandidates(ctx context.Context, q nextup.CandidateQuery) ([]nextup.Entry, error) {
	if err := t.hit("EntryCandidates"); err != nil {
		return nil, err
	}
	return t.Tx.EntryCandidates(ctx, q)
}

func (t *faultTx) EntryList(ctx context.Context, f nextup.EntryFilter) ([]nextup.Entry, error) {
	if err := t.hit("EntryList"); err != nil {
		return nil, err
	}
	return t.Tx.EntryList(ctx, f)
}

func (t *faultTx) EntryListByContact(ctx context.Context, businessID string, c nextup.Contact) ([]nextup.Entry, error) {
	if err := t.hit("EntryListByContact"); err != nil {
		return nil, err
	}
	return t.Tx.EntryListByContact(ctx, businessID, c)
}

func (t *faultTx) OfferListByContact(ctx context.Context, businessID, contactKey string) ([]nextup.Offer, error) {
	if err := t.hit("OfferListByContact"); err != nil {
		return nil, err
	}
	return t.Tx.OfferListByContact(ctx, businessID, contactKey)
}

func (t *faultTx) PersonErase(ctx context.Context, e nextup.Erasure) error {
	if err := t.hit("PersonErase"); err != nil {
		return err
	}
	return t.Tx.PersonErase(ctx, e)
}

func (t *faultTx) EntryPosition(ctx context.Context, e nextup.Entry) (int, error) {
	if err := t.hit("EntryPosition"); err != nil {
		return 0, err
	}
	return t.Tx.EntryPosition(ctx, e)
}

func (t *faultTx) EntryActiveByContact(ctx context.Context, businessID, contactKey, service, eventID string) (nextup.Entry, error) {
	if err := t.hit("EntryActiveByContact"); err != nil {
		return nextup.Entry{}, err
	}
	return t.Tx.EntryActiveByContact(ctx, businessID, contactKey, service, eventID)
}

func (t *faultTx) EntryActiveListByContact(ctx context.Context, businessID, contactKey string, limit int) ([]nextup.Entry, error) {
	if err := t.hit("EntryActiveListByContact"); err != nil {
		return nil, err
	}
	return t.Tx.EntryActiveListByContact(ctx, businessID, contactKey, limit)
}

func (t *faultTx) EntryExpireBefore(ctx context.Context, businessID string, at time.Time, limit int) ([]nextup.Entry, error) {
	if err := t.hit("EntryExpireBefore"); err != nil {
		return nil, err
	}
	return t.Tx.EntryExpireBefore(ctx, businessID, at, limit)
}

func (t *faultTx) OfferCreate(ctx context.Context, o nextup.Offer) error {
	if err := t.hit("OfferCreate"); err != nil {
		return err
	}
	return t.Tx.OfferCreate(ctx, o)
}

func (t *faultTx) OfferGet(ctx context.Context, id string) (nextup.Offer, error) {
	if err := t.hit("OfferGet"); err != nil {
		return nextup.Offer{}, err
	}
	return t.Tx.OfferGet(ctx, id)
}

func (t *faultTx) OfferByTokenHash(ctx context.Context, hash string) (nextup.Offer, error) {
	if err := t.hit("OfferByTokenHash"); err != nil {
		return nextup.Offer{}, err
	}
	return t.Tx.OfferByTokenHash(ctx, hash)
}

func (t *faultTx) OfferSetState(ctx context.Context, id string, from []nextup.OfferState, to nextup.OfferState, at time.Time, reason string) (nextup.Offer, error) {
	if err := t.hit("OfferSetState"); err != nil {
		return nextup.Offer{}, err
	}
	return t.Tx.OfferSetState(ctx, id, from, to, at, reason)
}

func (t *faultTx) OfferSend(ctx context.Context, id string, sentAt, expiresAt time.Time, tokenHash string) (nextup.Offer, error) {
	if err := t.hit("OfferSend"); err != nil {
		return nextup.Offer{}, err
	}
	return t.Tx.OfferSend(ctx, id, sentAt, expiresAt, tokenHash)
}

func (t *faultTx) OfferHanded(ctx context.Context, id string, sentAt, expiresAt time.Time) (nextup.Offer, error) {
	if err := t.hit("OfferHanded"); err != nil {
		return nextup.Offer{}, err
	}
	return t.Tx.OfferHanded(ctx, id, sentAt, expiresAt)
}

func (t *faultTx) OfferClaim(ctx context.Context, tokenHash string, now time.Time) (nextup.Offer, error) {
	if err := t.hit("OfferClaim"); err != nil {
		return nextup.Offer{}, err
	}
	return t.Tx.OfferClaim(ctx, tokenHash, now)
}

func (t *faultTx) OfferSeen(ctx context.Context, id string, at time.Time) error {
	if err := t.hit("OfferSeen"); err != nil {
		return err
	}
	return t.Tx.OfferSeen(ctx, id, at)
}

func (t *faultTx) OfferListBySlot(ctx context.Context, slotID string) ([]nextup.Offer, error) {
	if err := t.hit("OfferListBySlot"); err != nil {
		return nil, err
	}
	return t.Tx.OfferListBySlot(ctx, slotID)
}

func (t *faultTx) OfferLiveByEntry(ctx context.Context, entryID string) (nextup.Offer, error) {
	if err := t.hit("OfferLiveByEntry"); err != nil {
		return nextup.Offer{}, err
	}
	return t.Tx.OfferLiveByEntry(ctx, entryID)
}

func (t *faultTx) OfferCountSince(ctx context.Context, businessID, contactKey string, since time.Time) (int, error) {
	if err := t.hit("OfferCountSince"); err != nil {
		return 0, err
	}
	return t.Tx.OfferCountSince(ctx, businessID, contactKey, since)
}

func (t *faultTx) BookingCreate(ctx context.Context, b nextup.Booking) error {
	if err := t.hit("BookingCreate"); err != nil {
		return err
	}
	return t.Tx.BookingCreate(ctx, b)
}

func (t *faultTx) BookingGet(ctx context.Context, id string) (nextup.Booking, error) {
	if err := t.hit("BookingGet"); err != nil {
		return nextup.Booking{}, err
	}
	return t.Tx.BookingGet(ctx, id)
}

func (t *faultTx) BookingByOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	if err := t.hit("BookingByOffer"); err != nil {
		return nextup.Booking{}, err
	}
	return t.Tx.BookingByOffer(ctx, offerID)
}

func (t *faultTx) BookingSetState(ctx context.Context, id string, from, to nextup.BookingState, at time.Time) (nextup.Booking, error) {
	if err := t.hit("BookingSetState"); err != nil {
		return nextup.Booking{}, err
	}
	return t.Tx.BookingSetState(ctx, id, from, to, at)
}

func (t *faultTx) BookingListBySlot(ctx context.Context, slotID string) ([]nextup.Booking, error) {
	if err := t.hit("BookingListBySlot"); err != nil {
		return nil, err
	}
	return t.Tx.BookingListBySlot(ctx, slotID)
}

func (t *faultTx) HandBackCreate(ctx context.Context, h nextup.HandBack) error {
	if err := t.hit("HandBackCreate"); err != nil {
		return err
	}
	return t.Tx.HandBackCreate(ctx, h)
}

func (t *faultTx) HandBackGet(ctx context.Context, id string) (nextup.HandBack, error) {
	if err := t.hit("HandBackGet"); err != nil {
		return nextup.HandBack{}, err
	}
	return t.Tx.HandBackGet(ctx, id)
}

func (t *faultTx) HandBackList(ctx context.Context, businessID string, state nextup.HandBackState) ([]nextup.HandBack, error) {
	if err := t.hit("HandBackList"); err != nil {
		return nil, err
	}
	return t.Tx.HandBackList(ctx, businessID, state)
}

func (t *faultTx) HandBackResolve(ctx context.Context, id, slotID string, at time.Time) error {
	if err := t.hit("HandBackResolve"); err != nil {
		return err
	}
	return t.Tx.HandBackResolve(ctx, id, slotID, at)
}

func (t *faultTx) AuditAppend(ctx context.Context, ev nextup.AuditEvent) error {
	if err := t.hit("AuditAppend"); err != nil {
		return err
	}
	return t.Tx.AuditAppend(ctx, ev)
}

func (t *faultTx) AuditList(ctx context.Context, f nextup.AuditFilter) ([]nextup.AuditEvent, error) {
	if err := t.hit("AuditList"); err != nil {
		return nil, err
	}
	return t.Tx.AuditList(ctx, f)
}

func (t *faultTx) MessageCreate(ctx context.Context, m nextup.Message) error {
	if err := t.hit("MessageCreate"); err != nil {
		return err
	}
	return t.Tx.MessageCreate(ctx, m)
}

func (t *faultTx) MessageGet(ctx context.Context, id string) (nextup.Message, error) {
	if err := t.hit("MessageGet"); err != nil {
		return nextup.Message{}, err
	}
	return t.Tx.MessageGet(ctx, id)
}

func (t *faultTx) BusinessProfileSet(ctx context.Context, id string, p nextup.Profile) error {
	if err := t.hit("BusinessProfileSet"); err != nil {
		return err
	}
	return t.Tx.BusinessProfileSet(ctx, id, p)
}

func (t *faultTx) BusinessBySlug(ctx context.Context, slug string) (nextup.Business, error) {
	if err := t.hit("BusinessBySlug"); err != nil {
		return nextup.Business{}, err
	}
	return t.Tx.BusinessBySlug(ctx, slug)
}

func (t *faultTx) MessageCounts(ctx context.Context, businessID string) (map[nextup.Channel]map[nextup.MessageState]int, error) {
	if err := t.hit("MessageCounts"); err != nil {
		return nil, err
	}
	return t.Tx.MessageCounts(ctx, businessID)
}

func (t *faultTx) MessageList(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	if err := t.hit("MessageList"); err != nil {
		return nil, err
	}
	return t.Tx.MessageList(ctx, f)
}

func (t *faultTx) MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]nextup.Message, error) {
	if err := t.hit("MessageClaimDue"); err != nil {
		return nil, err
	}
	return t.Tx.MessageClaimDue(ctx, now, lease, limit)
}

func (t *faultTx) MessageClaim(ctx context.Context, id string, now time.Time, lease time.Duration) (nextup.Message, error) {
	if err := t.hit("MessageClaim"); err != nil {
		return nextup.Message{}, err
	}
	return t.Tx.MessageClaim(ctx, id, now, lease)
}

func (t *faultTx) MessageFinish(ctx context.Context, id string, claimedUntil time.Time, r nextup.MessageResult) error {
	if t.p.deadOnly && !t.bound && !t.p.used && r.State == nextup.MessageDead {
		t.p.used, t.bound = true, true
	}
	if t.bound {
		t.p.finishID, t.p.finishLease = id, claimedUntil
	}
	if err := t.hit("MessageFinish"); err != nil {
		return err
	}
	return t.Tx.MessageFinish(ctx, id, claimedUntil, r)
}

func (t *faultTx) MessageRequeue(ctx context.Context, id string, now time.Time) (nextup.Message, error) {
	if err := t.hit("MessageRequeue"); err != nil {
		return nextup.Message{}, err
	}
	return t.Tx.MessageRequeue(ctx, id, now)
}

func (t *faultTx) MessageCancelByOffer(ctx context.Context, offerID string) error {
	if err := t.hit("MessageCancelByOffer"); err != nil {
		return err
	}
	return t.Tx.MessageCancelByOffer(ctx, offerID)
}

func (t *faultTx) TimerSchedule(ctx context.Context, tm nextup.Timer) error {
	if err := t.hit("TimerSchedule"); err != nil {
		return err
	}
	return t.Tx.TimerSchedule(ctx, tm)
}

func (t *faultTx) TimerCancel(ctx context.Context, key string) error {
	if err := t.hit("TimerCancel"); err != nil {
		return err
	}
	return t.Tx.TimerCancel(ctx, key)
}

func (t *faultTx) TimerClaimDue(ctx context.Context, now time.Time, lease time.Duration, owner string, limit int) ([]nextup.Timer, error) {
	if err := t.hit("TimerClaimDue"); err != nil {
		return nil, err
	}
	return t.Tx.TimerClaimDue(ctx, now, lease, owner, limit)
}

func (t *faultTx) TimerDone(ctx context.Context, id int64, claimedUntil time.Time, at time.Time) error {
	if err := t.hit("TimerDone"); err != nil {
		return err
	}
	return t.Tx.TimerDone(ctx, id, claimedUntil, at)
}

func (t *faultTx) TimerRenew(ctx context.Context, id int64, claimedUntil, until time.Time) error {
	if err := t.hit("TimerRenew"); err != nil {
		return err
	}
	return t.Tx.TimerRenew(ctx, id, claimedUntil, until)
}

func (t *faultTx) TimerNextDue(ctx context.Context) (time.Time, error) {
	if err := t.hit("TimerNextDue"); err != nil {
		return time.Time{}, err
	}
	return t.Tx.TimerNextDue(ctx)
}

func (t *faultTx) TimerList(ctx context.Context, f nextup.TimerFilter) ([]nextup.Timer, error) {
	if err := t.hit("TimerList"); err != nil {
		return nil, err
	}
	return t.Tx.TimerList(ctx, f)
}

func (t *faultTx) IdempotencyStart(ctx context.Context, r nextup.IdempotencyRecord) (nextup.IdempotencyRecord, error) {
	if err := t.hit("IdempotencyStart"); err != nil {
		return nextup.IdempotencyRecord{}, err
	}
	return t.Tx.IdempotencyStart(ctx, r)
}

func (t *faultTx) IdempotencyFinish(ctx context.Context, r nextup.IdempotencyRecord) error {
	if err := t.hit("IdempotencyFinish"); err != nil {
		return err
	}
	return t.Tx.IdempotencyFinish(ctx, r)
}

func (t *faultTx) IdempotencyDelete(ctx context.Context, scope, key string) error {
	if err := t.hit("IdempotencyDelete"); err != nil {
		return err
	}
	return t.Tx.IdempotencyDelete(ctx, scope, key)
}

func (t *faultTx) IdempotencyPurge(ctx context.Context, at time.Time) (int, error) {
	if err := t.hit("IdempotencyPurge"); err != nil {
		return 0, err
	}
	return t.Tx.IdempotencyPurge(ctx, at)
}

func (t *faultTx) SuppressionAdd(ctx context.Context, s nextup.Suppression) error {
	if err := t.hit("SuppressionAdd"); err != nil {
		return err
	}
	return t.Tx.SuppressionAdd(ctx, s)
}

func (t *faultTx) MessageUndelivered(ctx context.Context, id, reason string) (nextup.Message, error) {
	if err := t.hit("MessageUndelivered"); err != nil {
		return nextup.Message{}, err
	}
	return t.Tx.MessageUndelivered(ctx, id, reason)
}

func (t *faultTx) SuppressionDelete(ctx context.Context, businessID string, ch nextup.Channel, address string) (bool, error) {
	if err := t.hit("SuppressionDelete"); err != nil {
		return false, err
	}
	return t.Tx.SuppressionDelete(ctx, businessID, ch, address)
}

func (t *faultTx) SuppressionList(ctx context.Context, businessID string, addresses []string) ([]nextup.Suppression, error) {
	if err := t.hit("SuppressionList"); err != nil {
		return nil, err
	}
	return t.Tx.SuppressionList(ctx, businessID, addresses)
}

func (t *faultTx) ProposalCreate(ctx context.Context, p nextup.Proposal) error {
	if err := t.hit("ProposalCreate"); err != nil {
		return err
	}
	return t.Tx.ProposalCreate(ctx, p)
}

func (t *faultTx) ProposalGet(ctx context.Context, id string) (nextup.Proposal, error) {
	if err := t.hit("ProposalGet"); err != nil {
		return nextup.Proposal{}, err
	}
	return t.Tx.ProposalGet(ctx, id)
}

func (t *faultTx) ProposalByActionHash(ctx context.Context, hash string) (nextup.Proposal, error) {
	if err := t.hit("ProposalByActionHash"); err != nil {
		return nextup.Proposal{}, err
	}
	return t.Tx.ProposalByActionHash(ctx, hash)
}

func (t *faultTx) ProposalList(ctx context.Context, businessID string, state nextup.ProposalState) ([]nextup.Proposal, error) {
	if err := t.hit("ProposalList"); err != nil {
		return nil, err
	}
	return t.Tx.ProposalList(ctx, businessID, state)
}

func (t *faultTx) ProposalDecide(ctx context.Context, id string, d nextup.ProposalDecision) (nextup.Proposal, error) {
	if err := t.hit("ProposalDecide"); err != nil {
		return nextup.Proposal{}, err
	}
	return t.Tx.ProposalDecide(ctx, id, d)
}

func (t *faultTx) SheetVersionAdd(ctx context.Context, v nextup.SheetVersion) error {
	if err := t.hit("SheetVersionAdd"); err != nil {
		return err
	}
	return t.Tx.SheetVersionAdd(ctx, v)
}

func (t *faultTx) JobCreate(ctx context.Context, j nextup.Job) error {
	if err := t.hit("JobCreate"); err != nil {
		return err
	}
	return t.Tx.JobCreate(ctx, j)
}

func (t *faultTx) JobGet(ctx context.Context, id string) (nextup.Job, error) {
	if err := t.hit("JobGet"); err != nil {
		return nextup.Job{}, err
	}
	return t.Tx.JobGet(ctx, id)
}

func (t *faultTx) JobList(ctx context.Context, businessID string, limit int) ([]nextup.Job, error) {
	if err := t.hit("JobList"); err != nil {
		return nil, err
	}
	return t.Tx.JobList(ctx, businessID, limit)
}

func (t *faultTx) JobAdvance(ctx context.Context, id string, from, to nextup.JobProgress, at time.Time) (nextup.Job, error) {
	if err := t.hit("JobAdvance"); err != nil {
		return nextup.Job{}, err
	}
	return t.Tx.JobAdvance(ctx, id, from, to, at)
}

func (t *faultTx) SheetVersionList(ctx context.Context, businessID string, limit int) ([]nextup.SheetVersion, error) {
	if err := t.hit("SheetVersionList"); err != nil {
		return nil, err
	}
	return t.Tx.SheetVersionList(ctx, businessID, limit)
}

func (t *faultTx) SheetVersionTrim(ctx context.Context, businessID string, keep int) (int, error) {
	if err := t.hit("SheetVersionTrim"); err != nil {
		return 0, err
	}
	return t.Tx.SheetVersionTrim(ctx, businessID, keep)
}

func (t *faultTx) SheetVersionGet(ctx context.Context, id string) (nextup.SheetVersion, error) {
	if err := t.hit("SheetVersionGet"); err != nil {
		return nextup.SheetVersion{}, err
	}
	return t.Tx.SheetVersionGet(ctx, id)
}

func (t *faultTx) SummaryCreate(ctx context.Context, s nextup.Summary) error {
	if err := t.hit("SummaryCreate"); err != nil {
		return err
	}
	return t.Tx.SummaryCreate(ctx, s)
}

func (t *faultTx) SummaryGet(ctx context.Context, businessID, month string) (nextup.Summary, error) {
	if err := t.hit("SummaryGet"); err != nil {
		return nextup.Summary{}, err
	}
	return t.Tx.SummaryGet(ctx, businessID, month)
}

func (t *faultTx) SummaryList(ctx context.Context, businessID string, limit int) ([]nextup.Summary, error) {
	if err := t.hit("SummaryList"); err != nil {
		return nil, err
	}
	return t.Tx.SummaryList(ctx, businessID, limit)
}

func (t *faultTx) StaffCreate(ctx context.Context, s nextup.Staff) error {
	if err := t.hit("StaffCreate"); err != nil {
		return err
	}
	return t.Tx.StaffCreate(ctx, s)
}

func (t *faultTx) StaffGet(ctx context.Context, id string) (nextup.Staff, error) {
	if err := t.hit("StaffGet"); err != nil {
		return nextup.Staff{}, err
	}
	return t.Tx.StaffGet(ctx, id)
}

func (t *faultTx) StaffByEmail(ctx context.Context, email string) (nextup.Staff, error) {
	if err := t.hit("StaffByEmail"); err != nil {
		return nextup.Staff{}, err
	}
	return t.Tx.StaffByEmail(ctx, email)
}

func (t *faultTx) StaffList(ctx context.Context, businessID string) ([]nextup.Staff, error) {
	if err := t.hit("StaffList"); err != nil {
		return nil, err
	}
	return t.Tx.StaffList(ctx, businessID)
}

func (t *faultTx) StaffSignIn(ctx context.Context, id string, r nextup.SignInResult) error {
	if err := t.hit("StaffSignIn"); err != nil {
		return err
	}
	return t.Tx.StaffSignIn(ctx, id, r)
}

func (t *faultTx) StaffSetPassword(ctx context.Context, id, passwordHash string) error {
	if err := t.hit("StaffSetPassword"); err != nil {
		return err
	}
	return t.Tx.StaffSetPassword(ctx, id, passwordHash)
}

func (t *faultTx) SessionCreate(ctx context.Context, s nextup.Session) error {
	if err := t.hit("SessionCreate"); err != nil {
		return err
	}
	return t.Tx.SessionCreate(ctx, s)
}

func (t *faultTx) SessionGet(ctx context.Context, idHash string) (nextup.Session, error) {
	if err := t.hit("SessionGet"); err != nil {
		return nextup.Session{}, err
	}
	return t.Tx.SessionGet(ctx, idHash)
}

func (t *faultTx) SessionDelete(ctx context.Context, idHash string) error {
	if err := t.hit("SessionDelete"); err != nil {
		return err
	}
	return t.Tx.SessionDelete(ctx, idHash)
}

func (t *faultTx) SessionDeleteByStaff(ctx context.Context, staffID string) (int, error) {
	if err := t.hit("SessionDeleteByStaff"); err != nil {
		return 0, err
	}
	return t.Tx.SessionDeleteByStaff(ctx, staffID)
}

func (t *faultTx) SessionPurge(ctx context.Context, at time.Time) (int, error) {
	if err := t.hit("SessionPurge"); err != nil {
		return 0, err
	}
	return t.Tx.SessionPurge(ctx, at)
}

func (t *faultTx) PasswordResetCreate(ctx context.Context, r nextup.PasswordReset) error {
	if err := t.hit("PasswordResetCreate"); err != nil {
		return err
	}
	return t.Tx.PasswordResetCreate(ctx, r)
}

func (t *faultTx) PasswordResetUse(ctx context.Context, tokenHash string, now time.Time) (nextup.PasswordReset, error) {
	if err := t.hit("PasswordResetUse"); err != nil {
		return nextup.PasswordReset{}, err
	}
	return t.Tx.PasswordResetUse(ctx, tokenHash, now)
}

func (t *faultTx) SlotEventSet(ctx context.Context, id, title string, ev nextup.EventSettings) error {
	if err := t.hit("SlotEventSet"); err != nil {
		return err
	}
	return t.Tx.SlotEventSet(ctx, id, title, ev)
}

func (t *faultTx) EntryByContact(ctx context.Context, businessID, contactKey, service, eventID string, states []nextup.EntryState) (nextup.Entry, error) {
	if err := t.hit("EntryByContact"); err != nil {
		return nextup.Entry{}, err
	}
	return t.Tx.EntryByContact(ctx, businessID, contactKey, service, eventID, states)
}

func (t *faultTx) BookingCheckIn(ctx context.Context, id string, at *time.Time) (nextup.Booking, error) {
	if err := t.hit("BookingCheckIn"); err != nil {
		return nextup.Booking{}, err
	}
	return t.Tx.BookingCheckIn(ctx, id, at)
}

func (t *faultTx) PaymentCreate(ctx context.Context, p nextup.Payment) error {
	if err := t.hit("PaymentCreate"); err != nil {
		return err
	}
	return t.Tx.PaymentCreate(ctx, p)
}

func (t *faultTx) PaymentBySession(ctx context.Context, sessionID string) (nextup.Payment, error) {
	if err := t.hit("PaymentBySession"); err != nil {
		return nextup.Payment{}, err
	}
	return t.Tx.PaymentBySession(ctx, sessionID)
}

func (t *faultTx) PaymentListByOffer(ctx context.Context, offerID string) ([]nextup.Payment, error) {
	if err := t.hit("PaymentListByOffer"); err != nil {
		return nil, err
	}
	return t.Tx.PaymentListByOffer(ctx, offerID)
}

func (t *faultTx) PaymentSetState(ctx context.Context, id string, c nextup.PaymentChange) (nextup.Payment, error) {
	if err := t.hit("PaymentSetState"); err != nil {
		return nextup.Payment{}, err
	}
	return t.Tx.PaymentSetState(ctx, id, c)
}

func (t *faultTx) GuestsCreate(ctx context.Context, gs []nextup.Guest) error {
	if err := t.hit("GuestsCreate"); err != nil {
		return err
	}
	return t.Tx.GuestsCreate(ctx, gs)
}

func (t *faultTx) GuestListByEntry(ctx context.Context, entryID string) ([]nextup.Guest, error) {
	if err := t.hit("GuestListByEntry"); err != nil {
		return nil, err
	}
	return t.Tx.GuestListByEntry(ctx, entryID)
}

func (t *faultTx) GuestListBySlot(ctx context.Context, slotID string) ([]nextup.Guest, error) {
	if err := t.hit("GuestListBySlot"); err != nil {
		return nil, err
	}
	return t.Tx.GuestListBySlot(ctx, slotID)
}

func (t *faultTx) GuestCheckIn(ctx context.Context, entryID string, index int, at *time.Time) (nextup.Guest, error) {
	if err := t.hit("GuestCheckIn"); err != nil {
		return nextup.Guest{}, err
	}
	return t.Tx.GuestCheckIn(ctx, entryID, index, at)
}
