package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/webhook"
	"github.com/nextup-dev/nextup/outbox"
)

var key = []byte("signing-key-of-biz_1")

// verify checks a delivery the way an integrator would, independently of
// nextup.Signature.
func verify(r *http.Request, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(r.Header.Get("Nextup-Signature"), ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts + "." + string(body)))
	want := hex.EncodeToString(mac.Sum(nil))
	return ts != "" && hmac.Equal([]byte(sig), []byte(want))
}

func sender(clock nextup.Clock) *webhook.Sender {
	return &webhook.Sender{Clock: clock, Key: func(_ context.Context, bid string) ([]byte, error) {
		if bid != "biz_1" {
			return nil, errors.New("unknown business")
		}
		return key, nil
	}}
}

// Webhooks are one account: a limit on them is the relay's own rate.
func TestAccount(t *testing.T) {
	t.Parallel()
	var _ outbox.Accounter = (*webhook.Sender)(nil)
	if got := sender(nextup.NewFakeClock(time.Unix(0, 0))).Account(); got != "webhook" {
		t.Errorf("Account() = %q, want webhook", got)
	}
}

func TestDeliversSigned(t *testing.T) {
	t.Parallel()
	clock := nextup.NewFakeClock(time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC))
	got := make(chan *http.Request, 1)
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		if !verify(r, body) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		got <- r
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	msg := nextup.Message{ID: "msg_1", BusinessID: "biz_1", Channel: nextup.ChannelWebhook, To: srv.URL + "/hooks/nextup",
		Subject: "offer.claimed", Body: `{"id":"msg_1","type":"offer.claimed"}`}
	if _, err := sender(clock).Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.Header.Get("Nextup-Event-Id") != "msg_1" || r.Header.Get("Nextup-Event-Type") != "offer.claimed" ||
		r.Header.Get("Idempotency-Key") != "msg_1" || r.Header.Get("Content-Type") != "application/json" || r.URL.Path != "/hooks/nextup" ||
		!strings.HasPrefix(r.Header.Get("Nextup-Signature"), "t=1930899600,v1=") || string(body) != msg.Body {
		t.Fatalf("delivery %v %s", r.Header, body)
	}
	// A tampered body fails the receiver's check.
	if sig := nextup.Signature(key, clock.Now(), []byte(msg.Body+" ")); sig == r.Header.Get("Nextup-Signature") {
		t.Fatal("the signature does not cover the body")
	}
}

func TestAnswers(t *testing.T) {
	t.Parallel()
	clock := nextup.NewFakeClock(time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC))
	for status, permanent := range map[int]bool{200: false, 201: false, 404: true, 410: true, 400: true, 408: false, 429: false, 500: false, 503: false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
		_, err := sender(clock).Send(context.Background(), nextup.Message{ID: "m", BusinessID: "biz_1", To: srv.URL, Body: "{}"})
		srv.Close()
		switch {
		case status < 300 && err != nil:
			t.Errorf("%d: %v, want delivered", status, err)
		case status >= 300 && (err == nil || errors.Is(err, nextup.ErrInvalid) != permanent):
			t.Errorf("%d: %v, want permanent=%v", status, err, permanent)
		}
	}
	// A receiver that does not answer in time is retried.
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hold }))
	defer srv.Close()
	defer close(hold)
	s := sender(clock)
	s.Client = &http.Client{Timeout: 50 * time.Millisecond}
	if _, err := s.Send(context.Background(), nextup.Message{ID: "m", BusinessID: "biz_1", To: srv.URL, Body: "{}"}); err == nil || errors.Is(err, nextup.ErrInvalid) {
		t.Fatalf("timeout: %v, want a retry", err)
	}
}
