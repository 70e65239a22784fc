package stripepay_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/pay/stripepay"
	"github.com/nextup-dev/nextup/pay/stripepay/stripetest"
)

const (
	testKey    = "sk_test_nextup"
	testSecret = "whsec_nextup_test"
)

// request is one request as it went over the wire to stripe-mock.
type request struct {
	Method, Path string
	Header       http.Header
	Form         url.Values
}

// recorder is a reverse proxy between the SDK and stripe-mock that keeps
// every request, so tests check the wire format, not the SDK's structs.
// When fail is set it answers with it instead of forwarding.
type recorder struct {
	mu   sync.Mutex
	reqs []request
	fail *injected
}

type injected struct {
	status int
	header http.Header
	body   string
}

func (rec *recorder) requests() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]request(nil), rec.reqs...)
}

// only returns the only request made, failing the test otherwise.
func (rec *recorder) only(t *testing.T) request {
	t.Helper()
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests reached Stripe, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

type bundle struct {
	client *stripepay.Client
	mock   string // stripe-mock's URL, without the proxy
	rec    *recorder
}

// TestAgainstStripeMock runs the tests that talk to Stripe, in parallel,
// against one stripe-mock (it takes seconds to start); each has a
// recording proxy of its own.
func TestAgainstStripeMock(t *testing.T) {
	t.Parallel()
	mock := stripetest.Start(t)
	for name, test := range map[string]func(*testing.T, string){
		"CreateCheckout":               testCreateCheckout,
		"CreateCheckoutOptionalFields": testCreateCheckoutOptionalFields,
		"CreateCheckoutInvalid":        testCreateCheckoutInvalid,
		"Refund":                       testRefund,
		"StripeRefusesKey":             testStripeRefusesKey,
		"StripeError":                  testStripeError,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, mock)
		})
	}
}

func setup(t *testing.T, mock string) bundle {
	t.Helper()
	target, err := url.Parse(mock)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, err := url.ParseQuery(string(body))
		if err != nil {
			t.Errorf("body is not form-encoded: %v: %q", err, body)
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Form: form})
		fail := rec.fail
		rec.mu.Unlock()
		if fail != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Request-Id", "req_injected")
			for k, v := range fail.header {
				w.Header()[k] = v
			}
			w.WriteHeader(fail.status)
			_, _ = io.WriteString(w, fail.body)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := stripepay.New(stripepay.Config{SecretKey: testKey, WebhookSecret: testSecret, BackendURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return bundle{client: c, mock: mock, rec: rec}
}

var now = time.Date(2031, 3, 10, 18, 0, 0, 0, time.UTC)

func params() stripepay.CheckoutParams {
	return stripepay.CheckoutParams{
		OfferID: "off_1", BusinessID: "biz_1", Title: "Jazz night", AmountCents: 1500, Currency: "EUR", Quantity: 3,
		Email: "ann@example.com", SuccessURL: "https://nextup.example/paid/off_1", CancelURL: "https://nextup.example/claim/off_1",
		Now: now, Deadline: now.Add(2 * time.Hour),
	}
}

// wantForm checks form values of a request, key by key.
func wantForm(t *testing.T, got url.Values, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g := got[k]; len(g) != 1 || g[0] != v {
			t.Errorf("sent %s = %q, want %q", k, g, v)
		}
	}
}

// The session is created in payment mode with one inline-priced line item,
// the offer in client_reference_id and metadata (the session's and the
// payment intent's), and expires at the clamped deadline; the idempotency
// key defaults to checkout-<offer>.
func testCreateCheckout(t *testing.T, mock string) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		key      string
		expires  time.Time
		wantKey  string
	}{
		{"deadline kept", 2 * time.Hour, "", now.Add(2 * time.Hour), "checkout-off_1"},
		{"deadline too soon", 10 * time.Minute, "checkout-off_1-try2", now.Add(31 * time.Minute), "checkout-off_1-try2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, mock)
			p := params()
			p.Deadline, p.IdempotencyKey = now.Add(tc.deadline), tc.key
			co, err := b.client.CreateCheckout(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(co.SessionID, "cs_") || !strings.HasPrefix(co.URL, "https://") || !co.ExpiresAt.Equal(tc.expires) {
				t.Fatalf("checkout = %+v, want a cs_ id, a URL and expiry %s", co, tc.expires)
			}
			r := b.rec.only(t)
			if r.Method != http.MethodPost || r.Path != "/v1/checkout/sessions" {
				t.Fatalf("sent %s %s", r.Method, r.Path)
			}
			if got := r.Header.Get("Idempotency-Key"); got != tc.wantKey {
				t.Errorf("Idempotency-Key = %q, want %q", got, tc.wantKey)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
				t.Errorf("Authorization = %q", got)
			}
			wantForm(t, r.Form, map[string]string{
				"mode":                    "payment",
				"payment_method_types[0]": "card",
				"expires_at":              strconv.FormatInt(tc.expires.Unix(), 10),
				"client_reference_id":     "off_1",
				"metadata[offer_id]":      "off_1",
				"metadata[business_id]":   "biz_1",
				"payment_intent_data[metadata][offer_id]":       "off_1",
				"payment_intent_data[metadata][business_id]":    "biz_1",
				"line_items[0][quantity]":                       "3",
				"line_items[0][price_data][currency]":           "eur",
				"line_items[0][price_data][unit_amount]":        "1500",
				"line_items[0][price_data][product_data][name]": "Jazz night",
				"customer_email":                                "ann@example.com",
				"success_url":                                   "https://nextup.example/paid/off_1",
				"cancel_url":                                    "https://nextup.example/claim/off_1",
			})
		})
	}
}

// Without an email or cancel URL those parameters are not sent at all
// (an empty customer_email would be refused by Stripe).
func testCreateCheckoutOptionalFields(t *testing.T, mock string) {
	b := setup(t, mock)
	p := params()
	p.Email, p.CancelURL = "", ""
	if _, err := b.client.CreateCheckout(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	r := b.rec.only(t)
	for _, k := range []string{"customer_email", "cancel_url"} {
		if _, ok := r.Form[k]; ok {
			t.Errorf("sent %s = %q", k, r.Form[k])
		}
	}
}

// Parameters that cannot make a sensible session are refused before any
// request, as nextup.ErrInvalid.
func testCreateCheckoutInvalid(t *testing.T, mock string) {
	b := setup(t, mock)
	for name, edit := range map[string]func(*stripepay.CheckoutParams){
		"no offer":       func(p *stripepay.CheckoutParams) { p.OfferID = "" },
		"no business":    func(p *stripepay.CheckoutParams) { p.BusinessID = "" },
		"no title":       func(p *stripepay.CheckoutParams) { p.Title = "" },
		"zero amount":    func(p *stripepay.CheckoutParams) { p.AmountCents = 0 },
		"negative":       func(p *stripepay.CheckoutParams) { p.AmountCents = -5 },
		"no seats":       func(p *stripepay.CheckoutParams) { p.Quantity = 0 },
		"currency":       func(p *stripepay.CheckoutParams) { p.Currency = "euro" },
		"currency digit": func(p *stripepay.CheckoutParams) { p.Currency = "e1r" },
		"no success URL": func(p *stripepay.CheckoutParams) { p.SuccessURL = "" },
		"offer ended":    func(p *stripepay.CheckoutParams) { p.Deadline = now },
		"no now":         func(p *stripepay.CheckoutParams) { p.Now = time.Time{} },
	} {
		p := params()
		edit(&p)
		_, err := b.client.CreateCheckout(context.Background(), p)
		if !errors.Is(err, nextup.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if reqs := b.rec.requests(); len(reqs) != 0 {
		t.Fatalf("%d requests reached Stripe", len(reqs))
	}
}

func TestClampExpiry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		deadline, want time.Duration
	}{
		{"10 minutes", 10 * time.Minute, 31 * time.Minute},
		{"already passed", -time.Hour, 31 * time.Minute},
		{"31 minutes", 31 * time.Minute, 31 * time.Minute},
		{"6 hours", 6 * time.Hour, 6 * time.Hour},
		{"23h59m", 23*time.Hour + 59*time.Minute, 23*time.Hour + 59*time.Minute},
		{"24 hours", 24 * time.Hour, 23*time.Hour + 59*time.Minute},
		{"3 days", 72 * time.Hour, 23*time.Hour + 59*time.Minute},
	} {
		if got := stripepay.ClampExpiry(now, now.Add(tc.deadline)); !got.Equal(now.Add(tc.want)) {
			t.Errorf("%s: ClampExpiry = now+%s, want now+%s", tc.name, got.Sub(now), tc.want)
		}
	}
}

// A refund names the payment intent and carries the idempotency key (by
// default refund-<payment intent>).
func testRefund(t *testing.T, mock string) {
	for _, tc := range []struct{ key, want string }{{"refund-off_1", "refund-off_1"}, {"", "refund-pi_123"}} {
		b := setup(t, mock)
		id, err := b.client.Refund(context.Background(), "pi_123", tc.key)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(id, "re_") {
			t.Fatalf("refund id %q", id)
		}
		r := b.rec.only(t)
		if r.Method != http.MethodPost || r.Path != "/v1/refunds" || r.Header.Get("Idempotency-Key") != tc.want {
			t.Fatalf("sent %s %s with Idempotency-Key %q, want %q", r.Method, r.Path, r.Header.Get("Idempotency-Key"), tc.want)
		}
		wantForm(t, r.Form, map[string]string{"payment_intent": "pi_123"})
		if len(r.Form) != 1 {
			t.Errorf("sent %v, want only payment_intent", r.Form)
		}
	}
	b := setup(t, mock)
	if _, err := b.client.Refund(context.Background(), "", ""); !errors.Is(err, nextup.ErrInvalid) {
		t.Fatalf("refund without a payment intent: %v", err)
	}
}

// stripe-mock refuses a key that is not a test key; the error says what
// Stripe said, keeps *stripe.Error, and is ErrUnavailable (nothing the
// caller's input can fix).
func testStripeRefusesKey(t *testing.T, mock string) {
	c, err := stripepay.New(stripepay.Config{SecretKey: "sk_live_not_for_tests", WebhookSecret: testSecret, BackendURL: mock})
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := c.CreateCheckout(context.Background(), params())
	_, err2 := c.Refund(context.Background(), "pi_123", "refund-1")
	for _, err := range []error{err1, err2} {
		var se *stripe.Error
		if err == nil || !strings.Contains(err.Error(), "Please authenticate") || !strings.Contains(err.Error(), "401") ||
			!errors.As(err, &se) || se.HTTPStatusCode != http.StatusUnauthorized || !errors.Is(err, nextup.ErrUnavailable) {
			t.Errorf("err = %v, want Stripe's 401 message", err)
		}
	}
}

// stripe-mock checks a request's shape, not amounts or currencies, so
// Stripe's answer to too small an amount is played by the proxy, in the
// shape Stripe sends it: the error names Stripe's code, parameter and
// message, and is ErrInvalid. A 409 (an idempotency key reused with other
// parameters) is ErrConflict.
func testStripeError(t *testing.T, mock string) {
	b := setup(t, mock)
	b.rec.fail = &injected{http.StatusBadRequest, nil, `{"error":{"code":"amount_too_small","doc_url":"https://stripe.com/docs/error-codes/amount-too-small",
		"message":"The Checkout Session's total amount due must add up to at least €0.50 eur","param":"line_items[0][price_data][unit_amount]",
		"type":"invalid_request_error"}}`}
	_, err := b.client.CreateCheckout(context.Background(), params())
	var se *stripe.Error
	if err == nil || !errors.As(err, &se) || se.Code != "amount_too_small" || !errors.Is(err, nextup.ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"offer off_1", "400", "amount_too_small", "line_items[0][price_data][unit_amount]", "at least €0.50 eur", "req_injected"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// Stripe marks this 409 as not worth retrying; the SDK obeys.
	b = setup(t, mock)
	b.rec.fail = &injected{http.StatusConflict, http.Header{"Stripe-Should-Retry": {"false"}},
		`{"error":{"message":"Keys for idempotent requests can only be used with the same parameters they were first used with.","type":"idempotency_error"}}`}
	_, err = b.client.Refund(context.Background(), "pi_123", "refund-1")
	if !errors.Is(err, nextup.ErrConflict) || !strings.Contains(err.Error(), "idempotency_error") {
		t.Fatalf("err = %v", err)
	}
	b.rec.only(t)
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, cfg := range []stripepay.Config{
		{WebhookSecret: testSecret},
		{SecretKey: testKey},
		{SecretKey: testKey, WebhookSecret: testSecret, BackendURL: "127.0.0.1:12111"},
		{SecretKey: testKey, WebhookSecret: testSecret, BackendURL: "ftp://127.0.0.1"},
	} {
		if _, err := stripepay.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
