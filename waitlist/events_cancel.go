package waitlist

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
)

// Every confirmation of an event registration carries a self-service
// cancel link: /r/{business}/{token}, the token being the booking's id
// sealed under the business's keys (as the unsubscribe link seals an
// address), so the link needs no row of its own and cannot be forged.
// Opening it shows the registration and a Cancel button; only the POST
// cancels, until the event's cancellation cutoff.

// CancelURL is an event booking's self-service cancel link.
func (s *Service) CancelURL(b nextup.Business, bookingID string) string {
	return s.url("/r/" + b.ID + "/" + sealToken(b, "cancel", bookingID))
}

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
	bi, err := w.business(ctx, businessID)
	if err != nil {
		return v, nextup.Entry{}, notFound("cancel link", "", nil)
	}
	bookingID, err := openToken(bi.b, "cancel", token)
	if err != nil {
		return v, nextup.Entry{}, notFound("cancel link", "", nil)
	}
	b, err := w.tx.BookingGet(ctx, bookingID)
	if err != nil || b.BusinessID != businessID {
		return v, nextup.Entry{}, notFound("cancel link", "", err)
	}
	sl, e, err := w.registrationEntry(ctx, businessID, b.SlotID, b.EntryID)
	if err != nil {
		return v, e, err
	}
	v = CancelView{Business: bi.b, Location: bi.loc, Event: sl, Closed: !w.now.Before(sl.CancellationClosesAt())}
	return v, e, nil
}

// CancelLinkView reads a cancel link without acting on it.
func (s *Service) CancelLinkView(ctx context.Context, businessID, token string) (CancelView, error) {
	var v CancelView
	err := s.read(ctx, func(tx nextup.Tx) error {
		w := &work{s: s, tx: tx, now: s.Clock.Now(), businesses: map[string]*bizInfo{}}
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
func (s *Service) CancelByLink(ctx context.Context, businessID, token string) (CancelView, error) {
	var v CancelView
	err := s.tx(ctx, func(w *work) error {
		w.actor = nextup.ActorCustomer
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
