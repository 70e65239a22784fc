// Package waitlist holds nextup's use cases: join, release, resize, claim,
// decline, expire, withdraw, leave, cancel, no-show and the timer handlers.
// Each opens one store transaction, asks the engine for a decision and
// applies it there — offers, seat holds, audit rows, outbox messages and
// timers — so that everything a decision changes commits together or not at
// all. It is the one place the web layer, the timer sweeper and the CLI call.
package waitlist

import (
	"context"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/business"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/events"
	"github.com/nextup-dev/nextup/waitlist/intake"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/messages"
	"github.com/nextup-dev/nextup/waitlist/offers"
	"github.com/nextup-dev/nextup/waitlist/payments"
	"github.com/nextup-dev/nextup/waitlist/slots"
	"github.com/nextup-dev/nextup/waitlist/staff"
)

// Service runs the use cases against a store.
type Service struct {
	*core.Service
	*business.Businesses
	*staff.Accounts
	*slots.Slots
	*entries.Entries
	*offers.Offers
	*events.Events
	*payments.Checkouts
	*messages.Messages
	*intake.Intake
}

// New returns a Service with production defaults for anything left nil.
func New(store nextup.Store, clock nextup.Clock, baseURL string) *Service {
	c := &core.Service{Config: &core.Config{Store: store, Clock: clock, Random: nextup.NewRandom(nil),
		BaseURL: strings.TrimRight(baseURL, "/")}}
	sl := &slots.Slots{Service: c}
	of := &offers.Offers{Service: c}
	en := &entries.Entries{Service: c}
	return &Service{Service: c, Businesses: &business.Businesses{Service: c}, Accounts: &staff.Accounts{Service: c},
		Slots: sl, Entries: en,
		Offers: of, Events: &events.Events{Service: c, Slots: sl},
		Checkouts: &payments.Checkouts{Service: c, Offers: of}, Messages: &messages.Messages{Service: c, Offers: of, Entries: en},
		Intake: &intake.Intake{Service: c}}
}

// Begin starts a request's unit of work: every use case called with the
// returned context joins it (see core.Service.Begin). A nil Service begins
// one too, as it always could: a server without use cases (a test of the
// admin routes) still answers through a Request.
func (s *Service) Begin(ctx context.Context, idem *Idempotency) (context.Context, *Request, *Response, error) {
	var c *core.Service
	if s != nil {
		c = s.Service
	}
	return c.Begin(ctx, idem)
}

// work is one transaction of these use cases: the core's Work, with the
// steps below as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx is core.Service.Tx for the steps of this package.
func (s *Service) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}
