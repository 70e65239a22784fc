package waitlist

import (
	"context"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/business"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/events"
	"github.com/nextup-dev/nextup/waitlist/insight"
	"github.com/nextup-dev/nextup/waitlist/intake"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/messages"
	"github.com/nextup-dev/nextup/waitlist/offers"
	"github.com/nextup-dev/nextup/waitlist/payments"
	"github.com/nextup-dev/nextup/waitlist/people"
	"github.com/nextup-dev/nextup/waitlist/slots"
	"github.com/nextup-dev/nextup/waitlist/staff"
)

// Service runs the use cases against a store. Its methods are the
// use-case packages', promoted from the fields below, so that callers see
// one Service; its fields are the configuration they share (core.Config:
// Store, Clock, Random, BaseURL, Wake, Logger and the seams to other
// systems), which cmd/ and tests may set after New.
type Service struct {
	*core.Config
	core *core.Service

	*business.Businesses
	*staff.Accounts
	*slots.Slots
	*entries.Entries
	*offers.Offers
	*events.Events
	*payments.Checkouts
	*messages.Messages
	*intake.Intake
	*insight.Insight
	*people.People
}

// New returns a Service with production defaults for anything left nil.
func New(store nextup.Store, clock nextup.Clock, baseURL string) *Service {
	cfg := &core.Config{Store: store, Clock: clock, Random: nextup.NewRandom(nil), BaseURL: strings.TrimRight(baseURL, "/")}
	if b, ok := store.(nextup.Bounded); ok {
		cfg.TxWrites = b.TxWrites()
	}
	c := &core.Service{Config: cfg}
	sl := &slots.Slots{Service: c}
	en := &entries.Entries{Service: c}
	of := &offers.Offers{Service: c}
	return &Service{
		Config:     cfg,
		core:       c,
		Businesses: &business.Businesses{Service: c},
		Accounts:   &staff.Accounts{Service: c},
		Slots:      sl,
		Entries:    en,
		Offers:     of,
		Events:     &events.Events{Service: c, Slots: sl},
		Checkouts:  &payments.Checkouts{Service: c, Offers: of},
		Messages:   &messages.Messages{Service: c, Offers: of, Entries: en},
		Insight:    &insight.Insight{Service: c},
		Intake:     &intake.Intake{Service: c},
		People:     &people.People{Service: c},
	}
}

// The core's own use cases. Every use-case package embeds the core, so
// its methods reach Service only as these: the transaction helpers stay
// the use cases' own.

// Begin starts a request's unit of work: every use case called with the
// returned context joins it; End (or Abort, on a panic) must be called
// (see core.Service.Begin). A nil Service begins one too, as it always
// could: a server without use cases (a test of the admin routes) still
// answers through a Request.
func (s *Service) Begin(ctx context.Context, idem *Idempotency) (context.Context, *Request, *Response, error) {
	var c *core.Service
	if s != nil {
		c = s.core
	}
	return c.Begin(ctx, idem)
}

// GetBusiness returns a business.
func (s *Service) GetBusiness(ctx context.Context, id string) (nextup.Business, error) {
	return s.core.GetBusiness(ctx, id)
}

// ClaimURL is the public link for a claim token.
func (s *Service) ClaimURL(token string) string { return s.core.ClaimURL(token) }

// StatusURL is the public link for an entry's status token.
func (s *Service) StatusURL(token string) string { return s.core.StatusURL(token) }

// CancelURL is an event booking's self-service cancel link.
func (s *Service) CancelURL(b nextup.Business, bookingID string) string {
	return s.core.CancelURL(b, bookingID)
}

// JoinURL is where a person joins sl's waitlist: an event's public page,
// or the business's join form; "" while the business has no slug.
func (s *Service) JoinURL(b nextup.Business, sl nextup.Slot) string { return s.core.JoinURL(b, sl) }

// ProposalURL is the page behind an owner's one-tap link; do is
// "approve" or "reject".
func (s *Service) ProposalURL(token, do string) string { return s.core.ProposalURL(token, do) }

// CheckContact checks a person's name, email and phone as registering and
// joining do, normalising them (the phone to E.164), before anything is
// sent to them (the public forms).
func (s *Service) CheckContact(name, email, phone *string) []nextup.FieldError {
	p := entries.JoinParams{Name: *name, Email: *email, Phone: *phone}
	f := entries.ValidateContact(&p)
	*name, *email, *phone = p.Name, p.Email, p.Phone
	return f
}
