package waitlist

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Paid events. Nobody is charged while waiting: a checkout exists only
// for seats held for someone (a live offer). When an offer of a paid event
// is made, a checkout session is created after the transaction commits,
// expiring with the offer (the provider's limits clamp it: Stripe takes 30
// minutes to 24 hours, see pay/stripepay.ClampExpiry). The claim link's
// page sends the person to it (making a new one if the first could not be
// made or expired before the offer did). The claim itself happens when the
// provider's signed "completed" event arrives: the same conditional write
// as a tap on Claim. A payment that arrives for an offer that has ended
// (expired, withdrawn, or taken) is refunded in full and the person told;
// an offer that ends unpaid rolls on like any other.

// MessagePaymentRefunds is the message kind of the refund notice.
const MessagePaymentRefunds = "refunded"

// paidHold notes an offer of a paid event made in this transaction, for
// its checkout to be made once the transaction commits.
type paidHold struct {
	offer nextup.Offer
	token string
}

// afterCommit makes the checkouts of the paid holds a committed
// transaction made. A failure is logged and left for the claim page.
func (s *Service) afterCommit(ctx context.Context, w *work) {
	// What committed is done: a client that hangs up does not cancel the
	// provider calls that follow from it (each is bounded by the
	// provider client's own timeout).
	ctx = context.WithoutCancel(ctx)
	for _, id := range w.endedSessions {
		// Best effort: a session left open can still be paid, and that
		// payment is refunded when it arrives.
		if s.Payments != nil {
			if err := s.Payments.ExpireCheckout(ctx, id); err != nil {
				s.log().Warn("checkout of an ended hold not closed; a payment to it will be refunded", "session", id, "err", err)
			}
		}
	}
	for _, h := range w.paidHolds {
		if _, err := s.checkout(ctx, h.offer.ID, s.ClaimURL(h.token)); err != nil {
			s.log().Warn("checkout not made; the claim page will make one", "offer", h.offer.ID, "err", err)
		}
	}
}

// CheckoutForOffer returns where the person pays for an offer's seats: its
// open checkout, or a new one.
func (s *Service) CheckoutForOffer(ctx context.Context, offerID string) (string, error) {
	return s.checkout(ctx, offerID, "")
}

// CheckoutByToken is CheckoutForOffer for the claim link's token (the
// "Pay" button of the claim page).
func (s *Service) CheckoutByToken(ctx context.Context, token string) (string, error) {
	var o nextup.Offer
	err := s.read(ctx, func(tx nextup.Tx) error {
		var err error
		if o, err = tx.OfferByTokenHash(ctx, nextup.HashToken(token)); err != nil {
			return notFound("claim link", "", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return s.checkout(ctx, o.ID, s.ClaimURL(token))
}

// checkout finds or makes the checkout of a live offer of a paid event;
// returnURL is where the provider sends the person back (the claim page
// when its token is known).
func (s *Service) checkout(ctx context.Context, offerID, returnURL string) (string, error) {
	var (
		req  nextup.CheckoutRequest
		open string
	)
	err := s.read(ctx, func(tx nextup.Tx) error {
		now := s.Clock.Now()
		o, err := tx.OfferGet(ctx, offerID)
		if err != nil {
			return notFound("offer", offerID, err)
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
			returnURL = s.url("/pay/" + o.ID)
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
	if err := s.beforeRemote(ctx); err != nil {
		return "", err
	}
	cs, err := s.Payments.CreateCheckout(ctx, req)
	if err != nil {
		return "", nextup.Errorf(nextup.ErrUnavailable, nextup.CodePaymentProviderUnavailable, "the payment provider did not answer: %v", err)
	}
	err = s.tx(ctx, func(w *work) error {
		o, err := w.tx.OfferGet(ctx, req.OfferID)
		if err != nil {
			return err
		}
		p := nextup.Payment{ID: w.s.Random.ID("pay"), BusinessID: o.BusinessID, SlotID: o.SlotID, OfferID: o.ID, EntryID: o.EntryID,
			Provider: s.Payments.Provider(), SessionID: cs.SessionID, URL: cs.URL, AmountCents: req.AmountCents * req.Quantity,
			Currency: req.Currency, State: nextup.PaymentOpen, ExpiresAt: cs.ExpiresAt, CreatedAt: w.now, UpdatedAt: w.now}
		if err := w.tx.PaymentCreate(ctx, p); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return nil // the same session, stored by a concurrent request
			}
			return fmt.Errorf("store checkout of offer %s: %w", o.ID, err)
		}
		bi, err := w.business(ctx, o.BusinessID)
		if err != nil {
			return err
		}
		return w.audit(ctx, bi, nextup.AuditEvent{Actor: nextup.ActorSystem, SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
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
func (s *Service) PaymentCompleted(ctx context.Context, ev nextup.PaymentEvent) (PaymentResult, error) {
	var (
		p     nextup.Payment
		offer nextup.Offer
	)
	err := s.read(ctx, func(tx nextup.Tx) error {
		var err error
		if p, err = tx.PaymentBySession(ctx, ev.SessionID); err != nil {
			return notFound("checkout session", ev.SessionID, err)
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
	cr, err := s.claimPaid(ctx, offer.TokenHash, p, ev.PaymentIntent)
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
func (s *Service) adoptSession(ctx context.Context, ev nextup.PaymentEvent) (nextup.Payment, nextup.Offer, error) {
	var (
		p nextup.Payment
		o nextup.Offer
	)
	err := s.tx(ctx, func(w *work) error {
		var err error
		if o, err = w.tx.OfferGet(ctx, ev.OfferID); err != nil {
			return notFound("offer", ev.OfferID, err)
		}
		sl, err := w.tx.SlotGet(ctx, o.SlotID)
		if err != nil {
			return err
		}
		if !sl.Event.Paid() || s.Payments == nil {
			return notFound("checkout session", ev.SessionID, nil)
		}
		p = nextup.Payment{ID: w.s.Random.ID("pay"), BusinessID: o.BusinessID, SlotID: o.SlotID, OfferID: o.ID, EntryID: o.EntryID,
			Provider: s.Payments.Provider(), SessionID: ev.SessionID, AmountCents: sl.Event.PriceCents * int64(o.Seats),
			Currency: sl.Event.Currency, State: nextup.PaymentOpen, ExpiresAt: o.ExpiresAt, CreatedAt: w.now, UpdatedAt: w.now}
		if err := w.tx.PaymentCreate(ctx, p); err != nil {
			return fmt.Errorf("adopt session %s: %w", ev.SessionID, err)
		}
		return nil
	})
	return p, o, err
}

func (s *Service) paymentBySession(ctx context.Context, sessionID string) (nextup.Payment, error) {
	var p nextup.Payment
	err := s.read(ctx, func(tx nextup.Tx) error {
		var err error
		p, err = tx.PaymentBySession(ctx, sessionID)
		return err
	})
	return p, err
}

func (s *Service) bookingOfOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	var b nextup.Booking
	err := s.read(ctx, func(tx nextup.Tx) error {
		var err error
		b, err = tx.BookingByOffer(ctx, offerID)
		return err
	})
	return b, err
}

// refundLate refunds a payment that arrived after its offer ended, records
// it and tells the person they keep their place.
func (s *Service) refundLate(ctx context.Context, p nextup.Payment, intent, why string) (PaymentResult, error) {
	if s.Payments == nil {
		return PaymentResult{Payment: p}, nextup.Errorf(nextup.ErrUnavailable, nextup.CodePaymentsNotSet, "payments are not set up on this server")
	}
	if err := s.beforeRemote(ctx); err != nil {
		return PaymentResult{Payment: p}, err
	}
	refundID, err := s.Payments.Refund(ctx, intent, "refund-"+p.ID)
	if err != nil {
		return PaymentResult{Payment: p}, nextup.Errorf(nextup.ErrUnavailable, nextup.CodePaymentProviderUnavailable, "refund of %s failed: %v", p.ID, err)
	}
	res := PaymentResult{Refunded: true}
	err = s.tx(ctx, func(w *work) error {
		w.actor = nextup.ActorSystem
		var err error
		res.Payment, err = w.tx.PaymentSetState(ctx, p.ID, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen, nextup.PaymentExpired},
			To: nextup.PaymentRefunded, PaymentIntent: intent, RefundID: refundID, At: w.now})
		if errors.Is(err, nextup.ErrConflict) {
			return nil // refunded by a repeat of this event meanwhile
		}
		if err != nil {
			return err
		}
		bi, err := w.business(ctx, p.BusinessID)
		if err != nil {
			return err
		}
		if err := w.audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: p.OfferID, SlotID: p.SlotID,
			From: "paid_late", To: "refunded", Reason: why,
			Detail: map[string]any{"payment_id": p.ID, "refund_id": refundID, "amount_cents": p.AmountCents, "currency": p.Currency}}); err != nil {
			return err
		}
		return w.queueRefunded(ctx, bi, p)
	})
	return res, err
}

// queueRefunded tells the person their late payment was refunded.
func (w *work) queueRefunded(ctx context.Context, bi *bizInfo, p nextup.Payment) error {
	e, err := w.tx.EntryGet(ctx, p.EntryID)
	if err != nil {
		return err
	}
	sl, err := w.tx.SlotGet(ctx, p.SlotID)
	if err != nil {
		return err
	}
	ch, err := w.channelFor(ctx, e)
	if err != nil || ch == "" {
		return err
	}
	d := templates.SlotData(bi.loc, sl, e, e.PartySize)
	d.Price = templates.FormatPrice(p.AmountCents, p.Currency)
	m := nextup.Message{BusinessID: bi.b.ID, Kind: MessagePaymentRefunds, Channel: ch, To: templates.AddressOf(e, ch), OfferID: p.OfferID, EntryID: e.ID}
	templates.Compose(bi.b, templates.TemplateRefunded, d, &m)
	return w.queue(ctx, m)
}

// expirePayments closes the open checkouts of an offer that ended unpaid.
func (w *work) expirePayments(ctx context.Context, o nextup.Offer) error {
	ps, err := w.tx.PaymentListByOffer(ctx, o.ID)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.State != nextup.PaymentOpen {
			continue
		}
		if _, err := w.tx.PaymentSetState(ctx, p.ID, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen},
			To: nextup.PaymentExpired, At: w.now}); err != nil && !errors.Is(err, nextup.ErrConflict) {
			return fmt.Errorf("expire payment %s: %w", p.ID, err)
		}
		w.endedSessions = append(w.endedSessions, p.SessionID)
	}
	return nil
}

// refusePaid stops a claim of a paid event's offer that does not come
// with its payment (the claim link's button, a YES by text): the person is
// sent to pay. A repeat of a claim that was paid goes through, to answer
// with the booking.
func (w *work) refusePaid(ctx context.Context, hash string) error {
	o, err := w.tx.OfferByTokenHash(ctx, hash)
	if err != nil || o.State == nextup.OfferClaimed {
		return nil // the claim itself says what is wrong
	}
	sl, err := w.tx.SlotGet(ctx, o.SlotID)
	if err != nil {
		return err
	}
	if sl.Event.Paid() && o.State == nextup.OfferOffered {
		return &nextup.Error{Kind: nextup.ErrConflict, Code: nextup.CodePaymentRequired,
			Message: "these seats are confirmed when they are paid for", Data: map[string]any{"offer_id": o.ID}}
	}
	return nil
}

// markPaid records, in the claim's transaction, that its payment arrived.
func (w *work) markPaid(ctx context.Context, bi *bizInfo, o nextup.Offer, pay *paymentMark) error {
	p, err := w.tx.PaymentSetState(ctx, pay.p.ID, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen, nextup.PaymentExpired},
		To: nextup.PaymentPaid, PaymentIntent: pay.intent, At: w.now})
	if err != nil {
		return fmt.Errorf("record payment %s: %w", pay.p.ID, err)
	}
	return w.audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
		From: string(nextup.OfferClaimed), To: string(nextup.OfferClaimed), Reason: "paid",
		Detail: map[string]any{"payment_id": p.ID, "payment_intent": pay.intent, "amount_cents": p.AmountCents, "currency": p.Currency}})
}
