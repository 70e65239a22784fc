// Package stripepay is the Stripe adapter for paid events: a Checkout
// Session holds the price of an offered seat until the offer's claim
// deadline, the signed checkout.session.completed webhook says the money
// arrived, and a payment that lands after the offer ended is refunded.
//
// Everything goes through the official SDK (stripe-go): the form encoding,
// the retries with their idempotency keys, and the webhook signature
// check are Stripe's, not ours. Tests point the SDK at stripe-mock
// (package stripetest).
package stripepay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/nextup-dev/nextup"
)

// Config says how to reach Stripe. cmd/nextup fills it from its flags and
// environment.
type Config struct {
	// SecretKey is the account's secret API key (sk_live_… or sk_test_…;
	// stripe-mock accepts any sk_test_ key).
	SecretKey string
	// WebhookSecret is the signing secret (whsec_…) of the webhook
	// endpoint whose events ParseWebhook verifies. It is required: an
	// empty secret would let anyone sign an event.
	WebhookSecret string
	// BackendURL, when set, replaces Stripe's API URL (tests point it at
	// stripe-mock, http://127.0.0.1:PORT). Empty means Stripe itself.
	BackendURL string
	// HTTPClient makes the requests; nil means a client with a 10 s
	// timeout, so a hung connection cannot hold an offer's transaction
	// path forever.
	HTTPClient *http.Client
}

// Client talks to one Stripe account. Create it with New; it is safe for
// concurrent use.
type Client struct {
	sc            *stripe.Client
	webhookSecret string
}

// New returns a Client for cfg. It does not call Stripe.
func New(cfg Config) (*Client, error) {
	if cfg.SecretKey == "" {
		return nil, errors.New("stripepay: no secret key")
	}
	if cfg.WebhookSecret == "" {
		return nil, errors.New("stripepay: no webhook signing secret")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	bc := &stripe.BackendConfig{
		HTTPClient: hc,
		// Failures come back as errors to the caller, who logs them with
		// the offer they belong to; the SDK's own logging would print the
		// same failure a second time, without that context.
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if cfg.BackendURL != "" {
		u, err := url.Parse(cfg.BackendURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("stripepay: backend URL %q is not an http(s) URL", cfg.BackendURL)
		}
		bc.URL = stripe.String(strings.TrimRight(cfg.BackendURL, "/"))
	}
	sc := stripe.NewClient(cfg.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(bc)))
	return &Client{sc: sc, webhookSecret: cfg.WebhookSecret}, nil
}

// CheckoutParams describe the Checkout Session that holds an offered seat
// of a paid event.
type CheckoutParams struct {
	// OfferID is the offer being paid for. It is sent as the session's
	// client_reference_id and as metadata offer_id, and comes back in the
	// webhook.
	OfferID string
	// BusinessID is the business the event belongs to (metadata
	// business_id), so a webhook can be routed without a lookup.
	BusinessID string
	// Title names the line item: the event's title as the payer sees it.
	Title string
	// AmountCents is the price of one seat in the currency's minor unit.
	AmountCents int64
	// Currency is the ISO 4217 code, for example "eur"; it is sent lower
	// case.
	Currency string
	// Quantity is the number of seats paid for (1 plus the guests).
	Quantity int64
	// Email pre-fills the payer's address (customer_email) when known.
	Email string
	// SuccessURL is where Stripe sends the payer after paying.
	SuccessURL string
	// CancelURL is where Stripe sends a payer who goes back; empty means
	// Checkout shows no back link.
	CancelURL string
	// Now is the time of the request, from the caller's clock.
	Now time.Time
	// Deadline is the offer's claim deadline. The session expires at
	// ClampExpiry(Now, Deadline).
	Deadline time.Time
	// IdempotencyKey makes a retried call return the first call's session
	// instead of creating a second one; empty means "checkout-" + OfferID.
	IdempotencyKey string
}

// Checkout is a created Checkout Session.
type Checkout struct {
	// SessionID is Stripe's id of the session (cs_…).
	SessionID string
	// URL is the hosted payment page to send the payer to.
	URL string
	// ExpiresAt is when Stripe closes the session (as Stripe reports it).
	ExpiresAt time.Time
}

// Stripe accepts a Checkout Session's expires_at between 30 minutes and
// 24 hours after the session is created.
const (
	minExpiry = 31 * time.Minute
	maxExpiry = 23*time.Hour + 59*time.Minute
)

// ClampExpiry returns deadline clamped into [now+31m, now+23h59m].
//
// Stripe accepts expires_at between 30 minutes and 24 hours after it
// creates the session, measured on its clock at its moment of creation.
// The minute of margin on each side absorbs the request's time in flight
// (and its retries) and the skew between our clock and Stripe's, so a
// deadline at either edge is not refused. A deadline sooner than 31
// minutes gives a session that outlives the offer: a payment can then
// arrive after the offer ended, and the caller refunds it (Refund).
func ClampExpiry(now, deadline time.Time) time.Time {
	if lo := now.Add(minExpiry); deadline.Before(lo) {
		return lo
	}
	if hi := now.Add(maxExpiry); deadline.After(hi) {
		return hi
	}
	return deadline
}

// CreateCheckout creates the Checkout Session (mode payment, one line item
// priced inline) for an offered seat. Parameters that cannot make a
// session are refused before calling Stripe with a nextup.ErrInvalid
// error; see Refund for how Stripe's own errors come back.
func (c *Client) CreateCheckout(ctx context.Context, p CheckoutParams) (Checkout, error) {
	if err := p.check(); err != nil {
		return Checkout{}, err
	}
	key := p.IdempotencyKey
	if key == "" {
		key = "checkout-" + p.OfferID
	}
	meta := map[string]string{"offer_id": p.OfferID, "business_id": p.BusinessID}
	expires := ClampExpiry(p.Now, p.Deadline)
	params := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String(string(stripe.CheckoutSessionModePayment)),
		// Cards only: they are paid or not when the session completes.
		// Methods that settle days later (SEPA Direct Debit, Bacs, ACH)
		// would complete the checkout unpaid and pay after the hold is
		// long gone.
		PaymentMethodTypes: []*string{stripe.String("card")},
		ClientReferenceID:  stripe.String(p.OfferID),
		Metadata:           meta,
		// The payment intent carries the offer too, so a refund or a
		// dispute seen in the dashboard names it.
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: meta},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(p.Quantity),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(strings.ToLower(p.Currency)),
				UnitAmount:  stripe.Int64(p.AmountCents),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(p.Title)},
			},
		}},
		SuccessURL: stripe.String(p.SuccessURL),
		ExpiresAt:  stripe.Int64(expires.Unix()),
	}
	if p.CancelURL != "" {
		params.CancelURL = stripe.String(p.CancelURL)
	}
	if p.Email != "" {
		params.CustomerEmail = stripe.String(p.Email)
	}
	params.SetIdempotencyKey(key)
	s, err := c.sc.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return Checkout{}, apiErr("create checkout session for offer "+p.OfferID, err)
	}
	out := Checkout{SessionID: s.ID, URL: s.URL, ExpiresAt: expires}
	if s.ExpiresAt != 0 {
		out.ExpiresAt = time.Unix(s.ExpiresAt, 0)
	}
	return out, nil
}

func (p CheckoutParams) check() error {
	bad := func(format string, args ...any) error {
		return nextup.Errorf(nextup.ErrInvalid, "bad_checkout", "stripepay: "+format, args...)
	}
	switch {
	case p.OfferID == "" || p.BusinessID == "":
		return bad("a checkout needs an offer id and a business id")
	case p.Title == "":
		return bad("offer %s: a checkout needs a title", p.OfferID)
	case p.AmountCents <= 0:
		return bad("offer %s: amount %d is not positive", p.OfferID, p.AmountCents)
	case p.Quantity < 1:
		return bad("offer %s: quantity %d is less than 1", p.OfferID, p.Quantity)
	case !isCurrency(p.Currency):
		return bad("offer %s: currency %q is not a three-letter code", p.OfferID, p.Currency)
	case p.SuccessURL == "":
		return bad("offer %s: a checkout needs a success URL", p.OfferID)
	case p.Now.IsZero() || !p.Deadline.After(p.Now):
		// A session for an offer that already ended would take money
		// that must then be refunded.
		return bad("offer %s: deadline %s is not after now %s", p.OfferID, p.Deadline.Format(time.RFC3339), p.Now.Format(time.RFC3339))
	}
	return nil
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range strings.ToLower(s) {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// ExpireCheckout closes an open Checkout Session, so that a hold that has
// ended can no longer be paid for (a payment that slips through anyway is
// refunded by the caller).
func (c *Client) ExpireCheckout(ctx context.Context, sessionID string) error {
	if _, err := c.sc.V1CheckoutSessions.Expire(ctx, sessionID, nil); err != nil {
		return apiErr("expire checkout session "+sessionID, err)
	}
	return nil
}

// Refund refunds the whole of a payment (by its payment intent, pi_…).
// idempotencyKey makes a retry return the first refund rather than fail
// or refund twice; empty means "refund-" + paymentIntentID, one refund
// per payment.
//
// An error from Stripe says what Stripe said (its type, code, parameter
// and message) and keeps Stripe's *stripe.Error for errors.As. It also
// matches one nextup kind with errors.Is: nextup.ErrInvalid for a request
// Stripe refused (400, 402, 404), nextup.ErrConflict for 409 (the same
// idempotency key with other parameters, or a concurrent request), and
// nextup.ErrUnavailable otherwise (Stripe unreachable, 5xx, 429, or our
// key refused: nothing the caller's input can fix, try later). CreateCheckout's
// errors are the same.
func (c *Client) Refund(ctx context.Context, paymentIntentID, idempotencyKey string) (string, error) {
	if paymentIntentID == "" {
		return "", nextup.Errorf(nextup.ErrInvalid, "bad_refund", "stripepay: a refund needs a payment intent id")
	}
	if idempotencyKey == "" {
		idempotencyKey = "refund-" + paymentIntentID
	}
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(paymentIntentID)}
	params.SetIdempotencyKey(idempotencyKey)
	r, err := c.sc.V1Refunds.Create(ctx, params)
	if err != nil {
		return "", apiErr("refund "+paymentIntentID, err)
	}
	return r.ID, nil
}

// apiError is a failed Stripe call: readable text, Stripe's error and a
// nextup kind underneath.
type apiError struct {
	op   string
	kind error
	err  error
}

func (e *apiError) Error() string {
	var se *stripe.Error
	if !errors.As(e.err, &se) {
		return "stripepay: " + e.op + ": " + e.err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stripepay: %s: stripe answered %d %s", e.op, se.HTTPStatusCode, se.Type)
	if se.Code != "" {
		fmt.Fprintf(&b, " (%s)", se.Code)
	}
	if se.Param != "" {
		fmt.Fprintf(&b, " on %s", se.Param)
	}
	fmt.Fprintf(&b, ": %s", se.Msg)
	if se.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", se.RequestID)
	}
	return b.String()
}

func (e *apiError) Unwrap() []error { return []error{e.err, e.kind} }

func apiErr(op string, err error) error {
	kind := nextup.ErrUnavailable
	var se *stripe.Error
	if errors.As(err, &se) {
		switch se.HTTPStatusCode {
		case http.StatusBadRequest, http.StatusPaymentRequired, http.StatusNotFound:
			kind = nextup.ErrInvalid
		case http.StatusConflict:
			kind = nextup.ErrConflict
		}
	}
	return &apiError{op: op, kind: kind, err: err}
}
