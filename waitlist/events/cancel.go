package events

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// Every confirmation of an event registration carries a self-service
// cancel link: /r/{business}/{token}, the token being the booking's id
// sealed under the business's keys (as the unsubscribe link seals an
// address), so the link needs no row of its own and cannot be forged.
// Opening it shows the registration and a Cancel button; only the POST
// cancels, until the event's cancellation cutoff.

// CancelView is what the cancel link's page shows.
type CancelView struct {
	Business     nextup.Business
	Location     *time.Location
	Event        nextup.Slot
	Registration Registration
	// Closed: the cancellation cutoff has passed.
	Closed bool
}

// cancelTarget opens a cancel link: the event and the registration its
// booking belongs to. An unknown or tampered link is ErrNotFound.
func (w *work) cancelTarget(ctx context.Context, businessID, token string) (CancelView, nextup.Entry, error) {
	var v CancelView
	bi, err := w.Business(ctx, businessID)
	if err != nil {
		return v, nextup.Entry{}, core.NotFound("cancel link", "", nil)
	}
	bookingID, err := core.OpenToken(bi.Business, "cancel", token)
	if err != nil {
		return v, nextup.Entry{}, core.NotFound("cancel link", "", nil)
	}
	b, err := w.Tx.BookingGet(ctx, bookingID)
	if err != nil || b.BusinessID != businessID {
		return v, nextup.Entry{}, core.NotFound("cancel link", "", err)
	}
	sl, e, err := w.registrationEntry(ctx, businessID, b.SlotID, b.EntryID)
	if err != nil {
		return v, e, err
	}
	v = CancelView{Business: bi.Business, Location: bi.Loc, Event: sl, Closed: !w.Now.Before(sl.CancellationClosesAt())}
	return v, e, nil
}

// CancelLinkView reads a cancel link without acting on it.
func (s *Events) CancelLinkView(ctx context.Context, businessID, token string) (CancelView, error) {
	var v CancelView
	err := s.Read(ctx, func(tx nextup.Tx) error {
		w := wrap(s.WorkIn(tx))
		var e nextup.Entry
		var err error
		if v, e, err = w.cancelTarget(ctx, businessID, token); err != nil {
			return err
		}
		v.Registration, err = w.registrationOf(ctx, v.Event, e)
		return err
	})
	return v, err
}

// CancelByLink is the person cancelling from their link: the same rules
// as CancelRegistration.
func (s *Events) CancelByLink(ctx context.Context, businessID, token string) (CancelView, error) {
	var v CancelView
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorCustomer
		var e nextup.Entry
		var err error
		if v, e, err = w.cancelTarget(ctx, businessID, token); err != nil {
			return err
		}
		v.Registration, err = w.cancelRegistration(ctx, v.Event, e)
		return err
	})
	return v, err
}

// CancelByStatus cancels the event registration whose status link this
// is (the status page's Cancel button), as its cancel link does: a
// confirmed registration until the cancellation cutoff
// (cancellation_closed after it, nothing changed), a waitlisted one or a
// live hold at any time. The status link of a slot's waitlist entry is
// not_found here: that person leaves the waitlist instead.
func (s *Events) CancelByStatus(ctx context.Context, statusToken string) (Registration, error) {
	var r Registration
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorCustomer
		e, err := w.Tx.EntryByStatusHash(ctx, nextup.HashToken(statusToken))
		if err != nil {
			return core.NotFound("status link", "", err)
		}
		if e.EventID == "" {
			return core.NotFound("registration", "", nil)
		}
		sl, e, err := w.registrationEntry(ctx, e.BusinessID, e.EventID, e.ID)
		if err != nil {
			return err
		}
		r, err = w.cancelRegistration(ctx, sl, e)
		return err
	})
	return r, err
}
