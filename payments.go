package nextup

import (
	"context"
	"time"
)

// Checkouts is a payment provider for paid events. Nobody is charged while
// waiting: a checkout exists only for seats held for someone (a live
// offer), and package waitlist makes, expires and refunds them.
// Implementations live in their own packages (pay/stripepay).
type Checkouts interface {
	// Provider names it on payment rows ("stripe").
	Provider() string
	// CreateCheckout makes the provider's checkout for an offer's held
	// seats.
	CreateCheckout(ctx context.Context, r CheckoutRequest) (CheckoutSession, error)
	// Refund gives back a whole payment; a retry with the same
	// idempotency key refunds once.
	Refund(ctx context.Context, paymentIntentID, idempotencyKey string) (refundID string, err error)
	// ExpireCheckout closes an open session whose hold has ended.
	ExpireCheckout(ctx context.Context, sessionID string) error
}

// CheckoutRequest is a checkout for an offer's held seats.
type CheckoutRequest struct {
	OfferID, BusinessID   string
	Title                 string
	AmountCents           int64 // per seat
	Currency              string
	Quantity              int64
	Email                 string
	SuccessURL, CancelURL string
	Now, Deadline         time.Time
	IdempotencyKey        string
}

// CheckoutSession is what the provider made.
type CheckoutSession struct {
	SessionID string
	URL       string
	ExpiresAt time.Time
}

// PaymentEvent is a provider's signed report that a checkout completed.
type PaymentEvent struct {
	SessionID     string
	OfferID       string // from the session's reference, when the row is missing
	PaymentIntent string
	Paid          bool // money arrived (payment_status "paid")
}
