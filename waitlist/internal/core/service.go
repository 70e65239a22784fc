package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/parse"
)

// Config is what every use case shares: the store, the clock, the links'
// base and the seams to other systems. There is one per server; waitlist.New
// makes it, and cmd/ and tests set its fields after (a booking system, a
// payment provider, the wake-up of the sweeper and relay), so every use
// case holds a pointer to it rather than a copy.
type Config struct {
	Store  nextup.Store
	Clock  nextup.Clock
	Random *nextup.Random
	// BaseURL prefixes the claim, status and calendar links in messages,
	// e.g. "https://nextup.example.com". No trailing slash.
	BaseURL string
	// Wake is called after a commit that scheduled timers or queued
	// messages, so the sweeper and relay can act before their next poll.
	Wake func()
	// Promoted, when set, is told of the moves of each part of a job
	// once it commits, with when the job began (a bulk release's
	// promotion lag, per offer, for the metrics).
	Promoted func(moves []nextup.Move, since time.Time)
	Logger   *slog.Logger
	// Sheets reads mirrored sheets (CSV URLs without more; Google Sheets
	// with its Sheets client). Nil: the mirror is off.
	Sheets SheetReader
	// MailParser, when set, reads forwarded booking requests instead of
	// the deterministic parser (which stays the fallback).
	MailParser MailParser
	// Narrator, when set, rewrites the monthly summary's narrative from
	// its figures (a model); the text is checked against the figures
	// and the template's is sent when it fails (package insight).
	Narrator Narrator
	// PasswordCost is the bcrypt cost of staff passwords; 0 means
	// bcrypt.DefaultCost (tests lower it).
	PasswordCost int
	// BookingSystem books the claims of a business with a booking URL in
	// the business's own booking system (see package offers). Nil leaves
	// booking URLs unused: nextup's own bookings are the truth.
	BookingSystem nextup.BookingSystem
	// BookingAttempts is how many times a claim asks the booking system
	// in a row when it does not answer, before the claim fails; 0 means 3.
	BookingAttempts int
	// Payments takes the payments of paid events (pay/stripepay). Nil: a
	// paid event's holds cannot be paid for (the claim page says so).
	Payments nextup.Checkouts
	// Crash, when set (only in builds for crash tests), is called at named
	// points of a request so that a test can kill the process there.
	Crash func(point string)
	// TxWrites is the most items one transaction of the store may write
	// (nextup.Bounded; waitlist.New asks the store), or 0 for no bound.
	TxWrites int
}

// Narrator writes a short paragraph from a system prompt and the facts
// it may use (the monthly summary's narrative).
type Narrator interface {
	Narrate(ctx context.Context, system, facts string) (string, error)
}

// MailParser reads a booking request into a proposed row: the
// model-based adapter (intake/anthropic) when one is configured. The
// deterministic parser (intake/parse) is the default and the fallback.
type MailParser interface {
	Propose(ctx context.Context, in parse.Input, b parse.Business) (parse.Proposal, error)
}

// SheetReader reads the rows of a mirrored sheet, the header first, every
// cell as the sheet shows it (intake/sheet: Google Sheets through its
// client, published CSV URLs over HTTPS). It is an interface so that the
// Google SDK stays out of the use cases: only cmd/ wires the adapter in.
type SheetReader interface {
	Read(ctx context.Context, src nextup.SheetSource) ([][]string, error)
}

// SheetWriter writes back to a mirrored Google Sheet: Update reads the
// sheet, asks edit which cells to set by their place among the rows read,
// and writes them (intake/sheet's Reader is one). Config.Sheets is asked
// for it; a reader that is not one (a test's, a CSV-only server's) leaves
// the sheet as it is and the write-back says so.
type SheetWriter interface {
	Update(ctx context.Context, src nextup.SheetSource, edit func(rows [][]string) ([]nextup.SheetCell, error)) error
}

// Service is what every use case builds on: the configuration, and the
// transactions of the use cases (Tx, Read, and the Request a caller's
// request runs in) with what a transaction does through its Work.
type Service struct {
	*Config
}

// Bounded stores (nextup.Bounded) take a bounded number of writes per
// transaction. These are the shares of it the splitting use cases plan
// with: a request's own writes (its Idempotency-Key record, the release or
// claim that frees the seats, their audit rows) and what one offer writes
// (the entry, the offer and its live-offer marker, an audit row, the
// message, the expiry and follow-up timers with their keys, the slot, and
// the counts of its place in line, RankWrites).
const (
	txReserve      = 30
	writesPerOffer = 10 + RankWrites
)

// RankWrites is what a move of a waiting entry (a join, an offer, a
// leave, an expiry) may write beyond the entry itself on a bounded store:
// the counts of its place in line, a node at each of six levels of the
// DynamoDB store's rank tree (fewer when entries of one waitlist share
// them). Use cases that size their batches by writes count it per entry.
const RankWrites = 6

// Batch is n, or on a bounded store the most items of perItem writes each
// that one transaction takes (at least 1): the size of the batches a use
// case that works through a list (the daily expiry) takes per transaction.
func (s *Service) Batch(n, perItem int) int {
	if s.TxWrites <= 0 {
		return n
	}
	return max(1, min(n, (s.TxWrites-txReserve)/perItem))
}

// Batch is Service.Batch of w's service.
func (w *Work) Batch(n, perItem int) int { return w.s.Batch(n, perItem) }

// txMargin is what a transaction keeps of a bounded store's writes for
// what comes after a split use case's items: its own audit rows, a
// slot_decide timer and its key, the end of a request's Idempotency-Key
// record.
const txMargin = 10

// Room is how many more items of perItem writes each w's transaction
// takes on a bounded store, from what it has written so far (a
// nextup.Sized transaction says; otherwise a request's share, txReserve,
// is assumed), or -1 when the store takes any number.
func (w *Work) Room(perItem int) int {
	if w.s.TxWrites <= 0 {
		return -1
	}
	used := txReserve
	if s, ok := w.Tx.(nextup.Sized); ok && s.Actions() >= 0 {
		used = s.Actions()
	}
	return max(0, (w.s.TxWrites-used-txMargin)/perItem)
}

// ErrRedecide is returned from inside a transaction when guardrail 1 (still
// true) fails while applying a decision: the transaction rolls back and the
// whole use case runs again on fresh data.
var ErrRedecide = errors.New("state changed under the decision; re-deciding")

// MaxAttempts bounds how often a use case runs again after ErrRedecide.
const MaxAttempts = 4

// Tx runs fn in one store transaction, retrying a bounded number of times
// when fn reports that the state changed under its decision. Inside a
// caller's request (see Begin) it joins the request's transaction instead.
func (s *Service) Tx(ctx context.Context, fn func(w *Work) error) error {
	if r := s.request(ctx); r != nil {
		return r.run(ctx, fn)
	}
	var err error
	for attempt := 0; attempt < MaxAttempts; attempt++ {
		var w *Work
		err = s.Store.InTx(ctx, func(tx nextup.Tx) error {
			w = &Work{s: s, Tx: tx, Now: s.Clock.Now(), businesses: map[string]*Biz{}}
			return fn(w)
		})
		if errors.Is(err, ErrRedecide) {
			continue
		}
		if err == nil {
			s.AfterCommit(ctx, w)
		}
		return err
	}
	return fmt.Errorf("gave up after %d attempts: %w", MaxAttempts, err)
}

// Read runs fn on a consistent snapshot; inside a request that has
// written, on the request's transaction, which sees those writes.
func (s *Service) Read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	if r := s.request(ctx); r != nil && r.ph != nil {
		return r.read(ctx, fn)
	}
	return s.Store.Read(ctx, fn)
}

// Log is the logger of the use cases: Logger, or slog's default.
func (s *Service) Log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Work is the state of one transaction of a use case, and what the use
// cases do through it: look a business up (once per transaction), write
// audit rows (each with its webhook event), queue messages, schedule
// timers, and apply the engine's decisions (apply.go). The use cases set
// Actor and read Moves; the rest is the core's bookkeeping of what waits
// for the commit (waking the sweeper and relay, checkouts of paid holds).
type Work struct {
	s *Service
	// Tx is the transaction: a store transaction of its own, a savepoint
	// of the caller's request, or a snapshot for a use case that reads.
	Tx nextup.Tx
	// Now is the clock's time when the transaction began: one instant for
	// everything it writes.
	Now time.Time
	// Actor is whose doing the audit rows are (nextup.ActorStaff, ...);
	// empty means the system.
	Actor      string
	businesses map[string]*Biz
	// Moves are what the engine did in the transaction, for the caller's
	// answer.
	Moves []nextup.Move
	wake  bool
	// OfferPos is each chosen entry's place in line as the
	// decision found it, recorded on the offer's audit row (acceptance by
	// position).
	OfferPos map[string]int
	// Override marks the offers made as staff's own choice (an event's
	// "put first in line"), on their audit rows: the replay of others'
	// places says so rather than look for the engine's reason.
	Override bool
	// paidHolds are the offers of paid events sent in this transaction:
	// their checkouts are made once it commits.
	paidHolds []paidHold
	// endedSessions are the checkout sessions of paid holds that ended in
	// this transaction: closed at the provider once it commits.
	endedSessions []string
	// Registering is the entry registering for an event in this
	// transaction: an offer made to it at once says so.
	Registering string
}

// WorkIn is a Work in tx, a transaction or snapshot the caller already
// holds: for use cases that read with the steps of a Work, and for a
// dead letter's fallback, which runs in the relay's transaction. What
// waits for its commit is the caller's to do (AfterCommit).
func (s *Service) WorkIn(tx nextup.Tx) *Work {
	return &Work{s: s, Tx: tx, Now: s.Clock.Now(), businesses: map[string]*Biz{}}
}

// Service is the Service the Work belongs to.
func (w *Work) Service() *Service { return w.s }

// Wake asks for the sweeper and relay to be woken once the transaction
// commits (Queue and Schedule do so themselves).
func (w *Work) Wake() { w.wake = true }

// Biz is a business as a transaction read it, with its timezone loaded.
type Biz struct {
	nextup.Business
	Loc *time.Location
}

// Business returns a business, read once per transaction.
func (w *Work) Business(ctx context.Context, id string) (*Biz, error) {
	if bi, ok := w.businesses[id]; ok {
		return bi, nil
	}
	b, err := w.Tx.BusinessGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("business %s: %w", id, err)
	}
	loc, err := b.Location()
	if err != nil {
		return nil, fmt.Errorf("business %s timezone %q: %w", id, b.Timezone, err)
	}
	bi := &Biz{Business: b, Loc: loc}
	w.businesses[id] = bi
	return bi, nil
}

// KeepBusiness makes bi, a business this transaction created, what
// Business returns for it.
func (w *Work) KeepBusiness(bi *Biz) { w.businesses[bi.ID] = bi }

// Audit writes one audit row in the transaction.
func (w *Work) Audit(ctx context.Context, bi *Biz, ev nextup.AuditEvent) error {
	ev.BusinessID = bi.ID
	ev.At = w.Now
	if ev.Actor == "" {
		ev.Actor = w.Actor
	}
	if ev.Actor == "" {
		ev.Actor = nextup.ActorSystem
	}
	ev.RuleVersion = bi.Rules.Version
	if err := w.Tx.AuditAppend(ctx, ev); err != nil {
		return fmt.Errorf("audit %s %s: %w", ev.SubjectType, ev.SubjectID, err)
	}
	return w.webhook(ctx, bi, ev)
}

// Schedule schedules a timer in the transaction.
func (w *Work) Schedule(ctx context.Context, t nextup.Timer) error {
	t.CreatedAt = w.Now
	if err := w.Tx.TimerSchedule(ctx, t); err != nil {
		return fmt.Errorf("schedule %s: %w", t.Key, err)
	}
	w.wake = true
	return nil
}

// Queue puts a message in the outbox in the transaction.
func (w *Work) Queue(ctx context.Context, m nextup.Message) error {
	m.ID = w.s.Random.ID("msg")
	return w.QueueWithID(ctx, m)
}

// QueueWithID is Queue for a message whose id is already chosen (a
// webhook event names its delivery id in its body).
func (w *Work) QueueWithID(ctx context.Context, m nextup.Message) error {
	m.State = nextup.MessageQueued
	m.CreatedAt = w.Now
	if m.NotBefore.IsZero() {
		m.NotBefore = w.Now
	}
	m.NextAttemptAt = m.NotBefore
	if err := w.Tx.MessageCreate(ctx, m); err != nil {
		return fmt.Errorf("queue %s message: %w", m.Kind, err)
	}
	w.wake = true
	return nil
}

// Timer keys: one pending timer of a kind per subject.

// ExpireKey is the key of an offer's expiry timer.
func ExpireKey(offerID string) string { return nextup.TimerOfferExpire + ":" + offerID }

// ReleaseKey is the key of the timer that sends an offer held back by
// quiet hours.
func ReleaseKey(offerID string) string { return nextup.TimerOfferRelease + ":" + offerID }

// BookingSyncKey is the key of the timer that asks a business's booking
// system about a claimed booking again (see package offers).
func BookingSyncKey(bookingID string) string { return nextup.TimerBookingSync + ":" + bookingID }

// SheetMarkKey is the key of the timer that marks a claimed booking's row
// in the business's sheet (package intake, sheetmark.go).
func SheetMarkKey(bookingID string) string { return nextup.TimerSheetMark + ":" + bookingID }

// MarkSheetRow schedules, in w's transaction, the write-back of booking b
// to the business's Google Sheet: a sheet_mark timer due at once, which
// marks the row of entry e booked off the claim's path and tries again
// later while the sheet cannot be written, so that a Sheets outage never
// holds up or fails a claim (package intake, sheetmark.go). Only an entry
// that came from the sheet, of a business whose sheet can be written (a
// Google Sheet, not a published CSV), has a row to mark.
func (w *Work) MarkSheetRow(ctx context.Context, bi *Biz, e nextup.Entry, b nextup.Booking) error {
	if e.Source != nextup.SourceSheet || !bi.Profile.Sheet.Writable() {
		return nil
	}
	return w.Schedule(ctx, nextup.Timer{BusinessID: bi.ID, Kind: nextup.TimerSheetMark, SubjectID: b.ID,
		Key: SheetMarkKey(b.ID), DueAt: w.Now})
}

// Invalid is the validation error naming fields.
func Invalid(fields ...nextup.FieldError) error {
	msg := "the request has invalid fields"
	if len(fields) == 1 {
		msg = fields[0].Field + ": " + fields[0].Message
	}
	return &nextup.Error{Kind: nextup.ErrInvalid, Code: nextup.CodeValidation, Message: msg, Fields: fields}
}

// GetBusiness returns a business.
func (s *Service) GetBusiness(ctx context.Context, id string) (nextup.Business, error) {
	var b nextup.Business
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		b, err = tx.BusinessGet(ctx, id)
		if err != nil {
			return NotFound("business", id, err)
		}
		return nil
	})
	return b, err
}

// NotFound is the not_found error of what id, unless err says the store
// failed otherwise (then err).
func NotFound(what, id string, err error) error {
	if err != nil && !errors.Is(err, nextup.ErrNotFound) {
		return err
	}
	return nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "%s %s not found", what, id)
}
