// Package waitlist holds nextup's use cases: join, release, resize, claim,
// decline, expire, withdraw, leave, cancel, no-show and the timer handlers.
// Each opens one store transaction, asks the engine for a decision and
// applies it there — offers, seat holds, audit rows, outbox messages and
// timers — so that everything a decision changes commits together or not at
// all. It is the one place the web layer, the timer sweeper and the CLI call.
package waitlist

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// Service runs the use cases against a store.
type Service struct {
	Store  nextup.Store
	Clock  nextup.Clock
	Random *nextup.Random
	// BaseURL prefixes the claim, status and calendar links in messages,
	// e.g. "https://nextup.example.com". No trailing slash.
	BaseURL string
	// Wake is called after a commit that scheduled timers or queued
	// messages, so the sweeper and relay can act before their next poll.
	Wake   func()
	Logger *slog.Logger
	// Sheets reads mirrored sheets (CSV URLs without more; Google Sheets
	// with its Sheets client). Nil: the mirror is off.
	Sheets SheetReader
	// MailParser, when set, reads forwarded booking requests instead of
	// the deterministic parser (which stays the fallback).
	MailParser MailParser
	// PasswordCost is the bcrypt cost of staff passwords; 0 means
	// bcrypt.DefaultCost (tests lower it).
	PasswordCost int
	// BookingSystem books the claims of a business with a booking URL in
	// the business's own booking system (see booksys.go). Nil leaves
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
}

// New returns a Service with production defaults for anything left nil.
func New(store nextup.Store, clock nextup.Clock, baseURL string) *Service {
	return &Service{Store: store, Clock: clock, Random: nextup.NewRandom(nil), BaseURL: strings.TrimRight(baseURL, "/")}
}

// errRedecide is returned from inside a transaction when guardrail 1 (still
// true) fails while applying a decision: the transaction rolls back and the
// whole use case runs again on fresh data.
var errRedecide = errors.New("state changed under the decision; re-deciding")

const maxAttempts = 4

// tx runs fn in one store transaction, retrying a bounded number of times
// when fn reports that the state changed under its decision.
func (s *Service) tx(ctx context.Context, fn func(w *work) error) error {
	if r := s.request(ctx); r != nil {
		return r.run(ctx, fn)
	}
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		var w *work
		err = s.Store.InTx(ctx, func(tx nextup.Tx) error {
			w = &work{s: s, tx: tx, now: s.Clock.Now(), businesses: map[string]*bizInfo{}}
			return fn(w)
		})
		if errors.Is(err, errRedecide) {
			continue
		}
		if err == nil && w.wake && s.Wake != nil {
			s.Wake()
		}
		if err == nil && len(w.paidHolds)+len(w.endedSessions) > 0 {
			s.afterCommit(ctx, w)
		}
		return err
	}
	return fmt.Errorf("gave up after %d attempts: %w", maxAttempts, err)
}

// read runs fn on a consistent snapshot; inside a request that has
// written, on the request's transaction, which sees those writes.
func (s *Service) read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	if r := s.request(ctx); r != nil && r.ph != nil {
		return r.read(ctx, fn)
	}
	return s.Store.Read(ctx, fn)
}

func (s *Service) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// work is the state of one transaction of a use case.
type work struct {
	s          *Service
	tx         nextup.Tx
	now        time.Time
	actor      string
	businesses map[string]*bizInfo
	moves      []nextup.Move
	wake       bool
	// offerPos is each chosen entry's place on an event's waitlist as the
	// decision found it, recorded on the offer's audit row (acceptance by
	// position).
	offerPos map[string]int
	// paidHolds are the offers of paid events sent in this transaction:
	// their checkouts are made once it commits.
	paidHolds []paidHold
	// endedSessions are the checkout sessions of paid holds that ended in
	// this transaction: closed at the provider once it commits.
	endedSessions []string
	// registering is the entry registering for an event in this
	// transaction: an offer made to it at once says so.
	registering string
}

type bizInfo struct {
	b   nextup.Business
	loc *time.Location
}

func (w *work) business(ctx context.Context, id string) (*bizInfo, error) {
	if bi, ok := w.businesses[id]; ok {
		return bi, nil
	}
	b, err := w.tx.BusinessGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("business %s: %w", id, err)
	}
	loc, err := b.Location()
	if err != nil {
		return nil, fmt.Errorf("business %s timezone %q: %w", id, b.Timezone, err)
	}
	bi := &bizInfo{b: b, loc: loc}
	w.businesses[id] = bi
	return bi, nil
}

// audit writes one audit row in the transaction.
func (w *work) audit(ctx context.Context, bi *bizInfo, ev nextup.AuditEvent) error {
	ev.BusinessID = bi.b.ID
	ev.At = w.now
	if ev.Actor == "" {
		ev.Actor = w.actor
	}
	if ev.Actor == "" {
		ev.Actor = nextup.ActorSystem
	}
	ev.RuleVersion = bi.b.Rules.Version
	if err := w.tx.AuditAppend(ctx, ev); err != nil {
		return fmt.Errorf("audit %s %s: %w", ev.SubjectType, ev.SubjectID, err)
	}
	return w.webhook(ctx, bi, ev)
}

func (w *work) schedule(ctx context.Context, t nextup.Timer) error {
	t.CreatedAt = w.now
	if err := w.tx.TimerSchedule(ctx, t); err != nil {
		return fmt.Errorf("schedule %s: %w", t.Key, err)
	}
	w.wake = true
	return nil
}

func (w *work) queue(ctx context.Context, m nextup.Message) error {
	m.ID = w.s.Random.ID("msg")
	return w.queueWithID(ctx, m)
}

// queueWithID is queue for a message whose id is already chosen (a
// webhook event names its delivery id in its body).
func (w *work) queueWithID(ctx context.Context, m nextup.Message) error {
	m.State = nextup.MessageQueued
	m.CreatedAt = w.now
	if m.NotBefore.IsZero() {
		m.NotBefore = w.now
	}
	m.NextAttemptAt = m.NotBefore
	if err := w.tx.MessageCreate(ctx, m); err != nil {
		return fmt.Errorf("queue %s message: %w", m.Kind, err)
	}
	w.wake = true
	return nil
}

func (s *Service) url(path string) string { return s.BaseURL + path }

// ClaimURL is the public link for a claim token.
func (s *Service) ClaimURL(token string) string { return s.url("/c/" + token) }

// StatusURL is the public link for an entry's status token.
func (s *Service) StatusURL(token string) string { return s.url("/s/" + token) }

func expireKey(offerID string) string   { return nextup.TimerOfferExpire + ":" + offerID }
func releaseKey(offerID string) string  { return nextup.TimerOfferRelease + ":" + offerID }
func housekeepingKey(bid string) string { return nextup.TimerHousekeeping + ":" + bid }

func invalid(fields ...nextup.FieldError) error {
	msg := "the request has invalid fields"
	if len(fields) == 1 {
		msg = fields[0].Field + ": " + fields[0].Message
	}
	return &nextup.Error{Kind: nextup.ErrInvalid, Code: nextup.CodeValidation, Message: msg, Fields: fields}
}
