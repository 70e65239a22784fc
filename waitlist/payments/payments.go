package payments

import (
	"context"
	"errors"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/offers"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Checkouts are the use cases of paying for a paid event's held seats:
// the checkout a claim page sends the person to, the provider's completed
// event that claims the offer, and refunds of payments that came late.
type Checkouts struct {
	*core.Service
	// Offers claims an offer its payment completed.
	Offers *offers.Offers
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Checkouts) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// MessagePaymentRefunds is the message kind of the refund notice.
const MessagePaymentRefunds = "refunded"

// CheckoutForOffer returns where the person pays for an offer's seats: its
// open checkout, or a new one.
func (s *Checkouts) CheckoutForOffer(ctx context.Context, offerID string) (string, error) {
	return s.Checkout(ctx, offerID, "")
}

// CheckoutByToken is CheckoutForOffer for the claim link's token (the
// "Pay" button of the claim page).
func (s *Checkouts) CheckoutByToken(ctx context.Context, token string) (string, error) {
	var o nextup.Offer
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		if o, err = tx.OfferByTokenHash(ctx, nextup.HashToken(token)); err != nil {
			return core.NotFound("claim link", "", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return s.Checkout(ctx, o.ID, s.ClaimURL(token))
}

// CheckoutByStatus is CheckoutForOffer for the live offer of the entry
// whose status link this is (the "Pay" button of the status page, the
// second door to the offer): the person comes back to their status page.
// No live offer is offer_expired, an unknown link not_found.
func (s *Checkouts) CheckoutByStatus(ctx context.Context, statusToken string) (string, error) {
	var o nextup.Offer
	err := s.Read(ctx, func(tx nextup.Tx) error {
		e, err := tx.EntryByStatusHash(ctx, nextup.HashToken(statusToken))
		if err != nil {
			return core.NotFound("status link", "", err)
		}
		if o, err = tx.OfferLiveByEntry(ctx, e.ID); errors.Is(err, nextup.ErrNotFound) {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeOfferExpired, "there is no offer to pay for now")
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return s.Checkout(ctx, o.ID, s.StatusURL(statusToken))
}

// PaymentResult is what a completed checkout came to.
type PaymentResult struct {
	Payment nextup.Payment
	Booking *nextup.Booking // the claim it completed
	// Refunded: the payment arrived for an offer that had ended.
	Refunded bool
}

// PaymentCompleted handles a provider's signed "checkout completed"
// event. Paid in time, it claims the offer through the same conditional
// write as the claim link, and records the payment in that transaction;
// paid after the offer ended, it refunds the payment and tells the
// person. Receiving the same event again changes nothing.
func (s *Checkouts) PaymentCompleted(ctx context.Context, ev nextup.PaymentEvent) (PaymentResult, error) {
	var (
		p     nextup.Payment
		offer nextup.Offer
	)
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		if p, err = tx.PaymentBySession(ctx, ev.SessionID); err != nil {
			return core.NotFound("checkout session", ev.SessionID, err)
		}
		offer, err = tx.OfferGet(ctx, p.OfferID)
		return err
	})
	if errors.Is(err, nextup.ErrNotFound) && ev.OfferID != "" {
		// A session made for one of our offers whose row was never
		// stored (the process stopped between Stripe's answer and the
		// write): the money is real, so the row is made now.
		p, offer, err = s.adoptSession(ctx, ev)
	}
	if err != nil {
		return PaymentResult{}, err
	}
	res := PaymentResult{Payment: p}
	switch {
	case p.State == nextup.PaymentPaid:
		b, err := s.bookingOfOffer(ctx, p.OfferID)
		res.Booking = &b
		return res, err
	case p.State == nextup.PaymentRefunded:
		res.Refunded = true
		return res, nil
	case !ev.Paid:
		return res, nil // an asynchronous method still on its way: its own event follows
	}
	cr, err := offers.ClaimPaid(ctx, s.Offers, offer.TokenHash, p, ev.PaymentIntent)
	if err == nil {
		res.Booking = &cr.Booking
		if res.Payment, err = s.paymentBySession(ctx, p.SessionID); err != nil || res.Payment.State == nextup.PaymentPaid {
			return res, err
		}
		// The offer was claimed already, and not with this payment (a
		// second session of the hold, or a claim made while the event
		// was free): the seats are theirs once, so this money goes back.
		return s.refundLate(ctx, res.Payment, ev.PaymentIntent, "already_claimed")
	}
	var ne *nextup.Error
	if !errors.As(err, &ne) || ne.Kind != nextup.ErrConflict {
		return res, err
	}
	// The offer ended before the money arrived: give it back.
	return s.refundLate(ctx, p, ev.PaymentIntent, ne.Code)
}

// adoptSession stores the payment row of a completed session that names
// an offer of a paid event of this server but has no row.
func (s *Checkouts) adoptSession(ctx context.Context, ev nextup.PaymentEvent) (nextup.Payment, nextup.Offer, error) {
	var (
		p nextup.Payment
		o nextup.Offer
	)
	err := s.tx(ctx, func(w *work) error {
		var err error
		if o, err = w.Tx.OfferGet(ctx, ev.OfferID); err != nil {
			return core.NotFound("offer", ev.OfferID, err)
		}
		sl, err := w.Tx.SlotGet(ctx, o.SlotID)
		if err != nil {
			return err
		}
		if !sl.Event.Paid() || s.Payments == nil {
			return core.NotFound("checkout session", ev.SessionID, nil)
		}
		p = nextup.Payment{ID: w.s.Random.ID("pay"), BusinessID: o.BusinessID, SlotID: o.SlotID, OfferID: o.ID, EntryID: o.EntryID,
			Provider: s.Payments.Provider(), SessionID: ev.SessionID, AmountCents: sl.Event.PriceCents * int64(o.Seats),
			Currency: sl.Event.Currency, State: nextup.PaymentOpen, ExpiresAt: o.ExpiresAt, CreatedAt: w.Now, UpdatedAt: w.Now}
		if err := w.Tx.PaymentCreate(ctx, p); err != nil {
			return fmt.Errorf("adopt session %s: %w", ev.SessionID, err)
		}
		return nil
	})
	return p, o, err
}

func (s *Checkouts) paymentBySession(ctx context.Context, sessionID string) (nextup.Payment, error) {
	var p nextup.Payment
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		p, err = tx.PaymentBySession(ctx, sessionID)
		return err
	})
	return p, err
}

func (s *Checkouts) bookingOfOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	var b nextup.Booking
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		b, err = tx.BookingByOffer(ctx, offerID)
		return err
	})
	return b, err
}

// refundLate refunds a payment that arrived after its offer ended, records
// it and tells the person they keep their place.
func (s *Checkouts) refundLate(ctx context.Context, p nextup.Payment, intent, why string) (PaymentResult, error) {
	if s.Payments == nil {
		return PaymentResult{Payment: p}, nextup.Errorf(nextup.ErrUnavailable, nextup.CodePaymentsNotSet, "payments are not set up on this server")
	}
	if err := s.BeforeRemote(ctx); err != nil {
		return PaymentResult{Payment: p}, err
	}
	refundID, err := s.Payments.Refund(ctx, intent, "refund-"+p.ID)
	if err != nil {
		return PaymentResult{Payment: p}, nextup.Errorf(nextup.ErrUnavailable, nextup.CodePaymentProviderUnavailable, "refund of %s failed: %v", p.ID, err)
	}
	res := PaymentResult{Refunded: true}
	err = s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorSystem
		var err error
		res.Payment, err = w.Tx.PaymentSetState(ctx, p.ID, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen, nextup.PaymentExpired},
			To: nextup.PaymentRefunded, PaymentIntent: intent, RefundID: refundID, At: w.Now})
		if errors.Is(err, nextup.ErrConflict) {
			return nil // refunded by a repeat of this event meanwhile
		}
		if err != nil {
			return err
		}
		bi, err := w.Business(ctx, p.BusinessID)
		if err != nil {
			return err
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: p.OfferID, SlotID: p.SlotID,
			From: "paid_late", To: "refunded", Reason: why,
			Detail: map[string]any{"payment_id": p.ID, "refund_id": refundID, "amount_cents": p.AmountCents, "currency": p.Currency}}); err != nil {
			return err
		}
		return w.queueRefunded(ctx, bi, p)
	})
	return res, err
}

// queueRefunded tells the person their late payment was refunded.
func (w *work) queueRefunded(ctx context.Context, bi *core.Biz, p nextup.Payment) error {
	e, err := w.Tx.EntryGet(ctx, p.EntryID)
	if err != nil {
		return err
	}
	sl, err := w.Tx.SlotGet(ctx, p.SlotID)
	if err != nil {
		return err
	}
	ch, err := w.ChannelFor(ctx, e)
	if err != nil || ch == "" {
		return err
	}
	d := templates.SlotData(bi.Loc, sl, e, e.PartySize)
	d.Price = templates.FormatPrice(p.AmountCents, p.Currency)
	m := nextup.Message{BusinessID: bi.ID, Kind: MessagePaymentRefunds, Channel: ch, To: templates.AddressOf(e, ch), OfferID: p.OfferID, EntryID: e.ID}
	templates.Compose(bi.Business, templates.TemplateRefunded, d, &m)
	return w.Queue(ctx, m)
}
