package stripepay_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/nextup-dev/nextup/pay/stripepay"
	"github.com/nextup-dev/nextup/pay/stripepay/stripetest"
)

// Webhook tests need no server: the SDK checks the signature locally.
func hookClient(t testing.TB) *stripepay.Client {
	t.Helper()
	c, err := stripepay.New(stripepay.Config{SecretKey: testKey, WebhookSecret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var paid = stripepay.Completed{
	EventID: "evt_1", SessionID: "cs_test_1", OfferID: "off_1", BusinessID: "biz_1", PaymentIntentID: "pi_1",
	AmountTotal: 4500, Currency: "eur", PaymentStatus: "paid",
}

func TestParseWebhook(t *testing.T) {
	t.Parallel()
	c := hookClient(t)
	payload, header := stripetest.SignedCompleted(t, testSecret, paid)
	got, ok, err := c.ParseWebhook(payload, header)
	if err != nil || !ok || got != paid {
		t.Fatalf("ParseWebhook = %+v, %v, %v; want %+v", got, ok, err, paid)
	}
}

// A session whose client_reference_id is empty still names its offer in
// metadata; a session naming none is not nextup's and is ignored.
func TestParseWebhookOfferFromMetadata(t *testing.T) {
	t.Parallel()
	c := hookClient(t)
	for _, tc := range []struct {
		session string
		ok      bool
		offer   string
	}{
		{`{"id":"cs_1","object":"checkout.session","client_reference_id":null,"metadata":{"offer_id":"off_9","business_id":"biz_1"},
			"payment_intent":{"id":"pi_9","object":"payment_intent"},"amount_total":100,"currency":"eur","payment_status":"paid"}`, true, "off_9"},
		{`{"id":"cs_2","object":"checkout.session","client_reference_id":"off_8","metadata":{"offer_id":"off_9"},"payment_status":"paid"}`, true, "off_8"},
		{`{"id":"cs_3","object":"checkout.session","client_reference_id":null,"metadata":{},"payment_status":"paid"}`, false, ""},
	} {
		payload := []byte(`{"id":"evt_2","object":"event","api_version":"2020-08-27","type":"checkout.session.completed","data":{"object":` + tc.session + `}}`)
		got, ok, err := c.ParseWebhook(payload, stripetest.Sign(payload, testSecret))
		if err != nil || ok != tc.ok || got.OfferID != tc.offer {
			t.Errorf("session %s: got %+v, %v, %v", tc.session, got, ok, err)
		}
		if tc.offer == "off_9" && got.PaymentIntentID != "pi_9" {
			t.Errorf("an expanded payment intent gives %q", got.PaymentIntentID)
		}
	}
}

func TestParseWebhookBadSignature(t *testing.T) {
	t.Parallel()
	c := hookClient(t)
	payload, header := stripetest.SignedCompleted(t, testSecret, paid)
	_, wrongSecret := stripetest.SignedCompleted(t, "whsec_someone_else", paid)
	stale := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: payload, Secret: testSecret, Timestamp: time.Now().Add(-10 * time.Minute)}).Header
	ts, sig, _ := strings.Cut(header, ",v1=")
	flipped := ts + ",v1=" + strings.Map(func(r rune) rune {
		if r == '0' {
			return '1'
		}
		return '0'
	}, sig)
	tampered := bytes.Replace(payload, []byte(`"amount_total":4500`), []byte(`"amount_total":1`), 1)
	if bytes.Equal(tampered, payload) {
		t.Fatal("the test's payload has no amount_total to tamper with")
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		header  string
	}{
		{"missing header", payload, ""},
		{"garbage header", payload, "nonsense"},
		{"no v1", payload, ts},
		{"bad signature", payload, flipped},
		{"wrong secret", payload, wrongSecret},
		{"stale", payload, stale},
		{"tampered payload", tampered, header},
		{"garbage payload", []byte("{not json"), header},
	} {
		got, ok, err := c.ParseWebhook(tc.payload, tc.header)
		if !errors.Is(err, stripepay.ErrBadSignature) || ok || got != (stripepay.Completed{}) {
			t.Errorf("%s: got %+v, %v, %v; want ErrBadSignature", tc.name, got, ok, err)
		}
	}
}

// A correctly signed event of another type is acknowledged and ignored.
func TestParseWebhookOtherType(t *testing.T) {
	t.Parallel()
	c := hookClient(t)
	payload := []byte(`{"id":"evt_3","object":"event","api_version":"2025-01-27.acacia","type":"checkout.session.expired",
		"data":{"object":{"id":"cs_1","object":"checkout.session","client_reference_id":"off_1"}}}`)
	got, ok, err := c.ParseWebhook(payload, stripetest.Sign(payload, testSecret))
	if err != nil || ok || got != (stripepay.Completed{}) {
		t.Fatalf("got %+v, %v, %v; want ok false and no error", got, ok, err)
	}
}

// Correctly signed garbage is an error (not a signature error), never a
// panic.
func TestParseWebhookGarbage(t *testing.T) {
	t.Parallel()
	c := hookClient(t)
	for _, payload := range []string{
		``, `null`, `[]`, `{not json`, `{"object":"list"}`,
		`{"object":"event","type":"checkout.session.completed"}`,
		`{"object":"event","type":"checkout.session.completed","data":null}`,
		`{"object":"event","type":"checkout.session.completed","data":{"object":"cs_1"}}`,
		`{"object":"event","type":"checkout.session.completed","data":{"object":{"amount_total":"many"}}}`,
	} {
		got, ok, err := c.ParseWebhook([]byte(payload), stripetest.Sign([]byte(payload), testSecret))
		if err == nil || ok || errors.Is(err, stripepay.ErrBadSignature) || got != (stripepay.Completed{}) {
			t.Errorf("%s: got %+v, %v, %v; want an error", payload, got, ok, err)
		}
	}
}

// FuzzParseWebhook never panics, whatever the payload and header, and
// signs each payload too so that the decoding behind the signature check
// is fuzzed as well. Whatever it accepts names an offer.
func FuzzParseWebhook(f *testing.F) {
	c := hookClient(f)
	good, header := stripetest.SignedCompleted(f, testSecret, paid)
	f.Add(good, header)
	f.Add(good, "")
	f.Add([]byte(`{"object":"event","type":"checkout.session.completed","data":{"object":{"client_reference_id":"off_1","payment_intent":{"id":"pi_1"}}}}`), "t=1,v1=00")
	f.Add([]byte(`{"object":"event","type":"checkout.session.expired","data":{}}`), "t=,v1=zz,v0=1")
	f.Add([]byte(`{not json`), "t=1")
	f.Fuzz(func(t *testing.T, payload []byte, header string) {
		for _, h := range []string{header, stripetest.Sign(payload, testSecret)} {
			got, ok, err := c.ParseWebhook(payload, h)
			if ok && (err != nil || got.OfferID == "") {
				t.Fatalf("accepted %q as %+v (err %v)", payload, got, err)
			}
			if err != nil && ok {
				t.Fatalf("ok with error %v", err)
			}
		}
	})
}
