package core

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

// Paid holds. A live offer of a paid event is paid for through a checkout
// of the payment provider (Payments), made once the transaction that sent
// the offer commits and closed once one that ended it commits; see package
// payments for the whole story. The core makes and closes them because a
// commit of any use case may call for it.

// paidHold notes an offer of a paid event made in this transaction, for
// its checkout to be made once the transaction commits.
type paidHold struct {
	offer nextup.Offer
	token string
}

// NotePaidHold keeps a sent offer of a paid event for its checkout.
func (w *Work) NotePaidHold(slot nextup.Slot, o nextup.Offer, token string) {
	if slot.Event.Paid() {
		w.paidHolds = append(w.paidHolds, paidHold{offer: o, token: token})
	}
}

// expirePayments closes the open checkouts of an offer that ended unpaid.
func (w *Work) expirePayments(ctx context.Context, o nextup.Offer) error {
	ps, err := w.Tx.PaymentListByOffer(ctx, o.ID)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.State != nextup.PaymentOpen {
			continue
		}
		if _, err := w.Tx.PaymentSetState(ctx, p.ID, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen},
			To: nextup.PaymentExpired, At: w.Now}); err != nil && !errors.Is(err, nextup.ErrConflict) {
			return fmt.Errorf("expire payment %s: %w", p.ID, err)
		}
		w.endedSessions = append(w.endedSessions, p.SessionID)
	}
	return nil
}

// AfterCommit does what waits for the commit of w, a Work from WorkIn:
// it wakes the sweeper and relay and makes the checkouts of its paid
// holds (Tx does this itself).
func (s *Service) AfterCommit(ctx context.Context, w *Work) {
	if w.wake && s.Wake != nil {
		s.Wake()
	}
	if len(w.paidHolds)+len(w.endedSessions) > 0 {
		s.afterCommit(ctx, w)
	}
}

// Within runs a use case inside a transaction someone else owns and will
// commit (the outbox relay's, recording a dead letter), in a savepoint of
// its own, again when the state changed under its decision. after, run
// once tx has committed, does what waits for the commit (AfterCommit).
func (s *Service) Within(ctx context.Context, tx nextup.Tx, fn func(w *Work) error) (after func(), err error) {
	for attempt := 0; attempt < MaxAttempts; attempt++ {
		var w *Work
		err = tx.Savepoint(ctx, func() error {
			w = s.WorkIn(tx)
			return fn(w)
		})
		if errors.Is(err, ErrRedecide) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return func() { s.AfterCommit(ctx, w) }, nil
	}
	return nil, fmt.Errorf("gave up after %d attempts: %w", MaxAttempts, err)
}

// afterCommit makes the checkouts of the paid holds a committed
// transaction made. A failure is logged and left for the claim page.
func (s *Service) afterCommit(ctx context.Context, w *Work) {
	// What committed is done: a client that hangs up does not cancel the
	// provider calls that follow from it (each is bounded by the
	// provider client's own timeout).
	ctx = context.WithoutCancel(ctx)
	for _, id := range w.endedSessions {
		// Best effort: a session left open can still be paid, and that
		// payment is refunded when it arrives.
		if s.Payments != nil {
			if err := s.Payments.ExpireCheckout(ctx, id); err != nil {
				s.Log().Warn("checkout of an ended hold not closed; a payment to it will be refunded", "session", id, "err", err)
			}
		}
	}
	for _, h := range w.paidHolds {
		if _, err := s.Checkout(ctx, h.offer.ID, s.ClaimURL(h.token)); err != nil {
			s.Log().Warn("checkout not made; the claim page will make one", "offer", h.offer.ID, "err", err)
		}
	}
}

// Checkout finds or makes the checkout of a live offer of a paid event;
// returnURL is where the provider sends the person back (the claim page
// when its token is known).
func (s *Service) Checkout(ctx context.Context, offerID, returnURL string) (string, error) {
	var (
		req  nextup.CheckoutRequest
		open string
	)
	err := s.Read(ctx, func(tx nextup.Tx) error {
		now := s.Clock.Now()
		o, err := tx.OfferGet(ctx, offerID)
		if err != nil {
			return NotFound("offer", offerID, err)
		}
		if o.State != nextup.OfferOffered || !o.ExpiresAt.After(now) {
			return explainEnded(o)
		}
		sl, err := tx.SlotGet(ctx, o.SlotID)
		if err != nil {
			return err
		}
		if !sl.Event.Paid() {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeNotPaid, "this event is free: claim it with the link")
		}
		ps, err := tx.PaymentListByOffer(ctx, o.ID)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.State == nextup.PaymentOpen && p.ExpiresAt.After(now.Add(time.Minute)) {
				open = p.URL
				return nil
			}
		}
		e, err := tx.EntryGet(ctx, o.EntryID)
		if err != nil {
			return err
		}
		if returnURL == "" {
			returnURL = s.URL("/pay/" + o.ID)
		}
		req = nextup.CheckoutRequest{OfferID: o.ID, BusinessID: o.BusinessID, Title: sl.Title, AmountCents: sl.Event.PriceCents,
			Currency: sl.Event.Currency, Quantity: int64(o.Seats), Email: e.Email, SuccessURL: returnURL + "?paid=1",
			CancelURL: returnURL, Now: now, Deadline: o.ExpiresAt,
			// Stripe refuses a key reused with other parameters: the
			// key names what varies (the return page, and the minute the
			// clamped expiry is worked out from).
			IdempotencyKey: fmt.Sprintf("checkout-%s-%d-%x-%d", o.ID, len(ps), sha256.Sum256([]byte(returnURL)), now.Unix()/60)}
		return nil
	})
	if err != nil || open != "" {
		return open, err
	}
	if s.Payments == nil {
		return "", nextup.Errorf(nextup.ErrUnavailable, nextup.CodePaymentsNotSet, "payments are not set up on this server")
	}
	if err := s.BeforeRemote(ctx); err != nil {
		return "", err
	}
	cs, err := s.Payments.CreateCheckout(ctx, req)
	if err != nil {
		return "", nextup.Errorf(nextup.ErrUnavailable, nextup.CodePaymentProviderUnavailable, "the payment provider did not answer: %v", err)
	}
	err = s.Tx(ctx, func(w *Work) error {
		o, err := w.Tx.OfferGet(ctx, req.OfferID)
		if err != nil {
			return err
		}
		p := nextup.Payment{ID: w.s.Random.ID("pay"), BusinessID: o.BusinessID, SlotID: o.SlotID, OfferID: o.ID, EntryID: o.EntryID,
			Provider: s.Payments.Provider(), SessionID: cs.SessionID, URL: cs.URL, AmountCents: req.AmountCents * req.Quantity,
			Currency: req.Currency, State: nextup.PaymentOpen, ExpiresAt: cs.ExpiresAt, CreatedAt: w.Now, UpdatedAt: w.Now}
		if err := w.Tx.PaymentCreate(ctx, p); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return nil // the same session, stored by a concurrent request
			}
			return fmt.Errorf("store checkout of offer %s: %w", o.ID, err)
		}
		bi, err := w.Business(ctx, o.BusinessID)
		if err != nil {
			return err
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{Actor: nextup.ActorSystem, SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
			From: string(o.State), To: string(o.State), Reason: "checkout_created",
			Detail: map[string]any{"payment_id": p.ID, "session_id": p.SessionID, "expires_at": p.ExpiresAt, "amount_cents": p.AmountCents}})
	})
	return cs.URL, err
}

// explainEnded says why an offer can no longer be paid for.
func explainEnded(o nextup.Offer) error {
	switch o.State {
	case nextup.OfferClaimed:
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeAlreadyPaid, "these seats are already yours")
	case nextup.OfferPending:
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferPending, "this offer has not been sent yet")
	case nextup.OfferDeclined:
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferDeclined, "this offer was declined")
	case nextup.OfferCancelled:
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferWithdrawn, "this offer was withdrawn")
	}
	return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferExpired, "this offer has expired")
}
