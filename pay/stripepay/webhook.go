package stripepay

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/nextup-dev/nextup"
)

// ErrBadSignature means a webhook's Stripe-Signature header is missing,
// malformed, does not match the payload under the endpoint's secret, or
// is older than the SDK's tolerance (5 minutes, against replays). The
// caller answers 400 and does nothing else. It is a nextup error of kind
// ErrInvalid with code nextup.CodeBadSignature, so the web layer maps it
// without importing this package.
var ErrBadSignature error = nextup.Errorf(nextup.ErrInvalid, nextup.CodeBadSignature, "stripepay: bad webhook signature")

// EventCompleted is the only event type ParseWebhook decodes.
const EventCompleted = "checkout.session.completed"

// Completed is a verified checkout.session.completed event.
type Completed struct {
	// EventID is Stripe's id of the event (evt_…). Stripe delivers an
	// event at least once: record it to ignore a redelivery.
	EventID string
	// SessionID is the Checkout Session's id (cs_…).
	SessionID string
	// OfferID is the session's client_reference_id, or else its metadata
	// offer_id.
	OfferID string
	// BusinessID is the session's metadata business_id.
	BusinessID string
	// PaymentIntentID is the payment to refund if it came too late (pi_…).
	PaymentIntentID string
	// AmountTotal is what the payer was charged, in the minor unit.
	AmountTotal int64
	// Currency is the charge's currency, lower case.
	Currency string
	// PaymentStatus is "paid" when the money arrived; "unpaid" for a
	// payment method that settles later (Stripe then sends
	// checkout.session.async_payment_succeeded, which this package does
	// not decode), "no_payment_required" for a free session.
	PaymentStatus string
}

// ParseWebhook verifies payload against sigHeader (the Stripe-Signature
// header) and decodes a checkout.session.completed event. A missing, bad
// or stale signature is ErrBadSignature. A correctly signed event of
// another type, or a completed session that names no offer (one nextup
// did not create), gives ok false and a nil error: the caller answers 200
// and ignores it. An event whose API version differs from the SDK's is
// accepted (the fields read here are the same in every version, and
// stripe-mock and test payloads carry other versions).
func (c *Client) ParseWebhook(payload []byte, sigHeader string) (Completed, bool, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, sigHeader, c.webhookSecret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	switch {
	case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader),
		errors.Is(err, webhook.ErrNoValidSignature), errors.Is(err, webhook.ErrTooOld):
		return Completed{}, false, fmt.Errorf("%w: %w", ErrBadSignature, err)
	case err != nil:
		// Correctly signed, yet not an event: Stripe would never send it.
		return Completed{}, false, fmt.Errorf("stripepay: webhook: %w", err)
	}
	if ev.Type != stripe.EventType(EventCompleted) {
		return Completed{}, false, nil
	}
	if ev.Data == nil || len(ev.Data.Raw) == 0 {
		return Completed{}, false, fmt.Errorf("stripepay: webhook %s: %s without a session", ev.ID, ev.Type)
	}
	var s stripe.CheckoutSession
	if err := json.Unmarshal(ev.Data.Raw, &s); err != nil {
		return Completed{}, false, fmt.Errorf("stripepay: webhook %s: the session: %w", ev.ID, err)
	}
	out := Completed{
		EventID:       ev.ID,
		SessionID:     s.ID,
		OfferID:       s.ClientReferenceID,
		BusinessID:    s.Metadata["business_id"],
		AmountTotal:   s.AmountTotal,
		Currency:      string(s.Currency),
		PaymentStatus: string(s.PaymentStatus),
	}
	if out.OfferID == "" {
		out.OfferID = s.Metadata["offer_id"]
	}
	if s.PaymentIntent != nil {
		out.PaymentIntentID = s.PaymentIntent.ID
	}
	if out.OfferID == "" {
		// A session nextup did not create (a payment link, another
		// integration on the same account): not ours to act on, and an
		// error would only make Stripe deliver it again for days.
		return Completed{}, false, nil
	}
	return out, true, nil
}
