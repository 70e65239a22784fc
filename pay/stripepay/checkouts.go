package stripepay

import (
	"context"

	"github.com/nextup-dev/nextup"
)

// Checkouts is the client as the payment provider of paid events
// (nextup.Checkouts).
type Checkouts struct{ *Client }

var _ nextup.Checkouts = Checkouts{}

// Provider names Stripe on payment rows.
func (Checkouts) Provider() string { return "stripe" }

// CreateCheckout makes the Checkout Session of an offer's held seats.
func (c Checkouts) CreateCheckout(ctx context.Context, r nextup.CheckoutRequest) (nextup.CheckoutSession, error) {
	cs, err := c.Client.CreateCheckout(ctx, CheckoutParams{OfferID: r.OfferID, BusinessID: r.BusinessID, Title: r.Title,
		AmountCents: r.AmountCents, Currency: r.Currency, Quantity: r.Quantity, Email: r.Email, SuccessURL: r.SuccessURL,
		CancelURL: r.CancelURL, Now: r.Now, Deadline: r.Deadline, IdempotencyKey: r.IdempotencyKey})
	return nextup.CheckoutSession{SessionID: cs.SessionID, URL: cs.URL, ExpiresAt: cs.ExpiresAt}, err
}

// ExpireCheckout closes a session whose hold ended.
func (c Checkouts) ExpireCheckout(ctx context.Context, sessionID string) error {
	return c.Client.ExpireCheckout(ctx, sessionID)
}

// Webhook verifies and reads a signed event for the web server: a
// completed checkout as a nextup.PaymentEvent, ok false for other kinds.
func (c Checkouts) Webhook(payload []byte, signature string) (nextup.PaymentEvent, bool, error) {
	done, ok, err := c.ParseWebhook(payload, signature)
	if err != nil || !ok {
		return nextup.PaymentEvent{}, ok, err
	}
	return nextup.PaymentEvent{SessionID: done.SessionID, OfferID: done.OfferID, PaymentIntent: done.PaymentIntentID,
		Paid: done.PaymentStatus == "paid"}, true, nil
}
