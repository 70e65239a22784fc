// Package stripetest gives tests a stripe-mock server of their own and
// signed webhook payloads.
//
// stripe-mock is Stripe's mock of its API, driven by the OpenAPI spec:
// it checks a request's shape (parameters, types, required fields, the
// key) but not business rules (amounts, currencies), and answers with
// fixtures. Install it with
//
//	go install github.com/stripe/stripe-mock@v0.203.0
//
// Without it a test skips loudly; with NEXTUP_REQUIRE_ALL=1 (as CI sets
// it) it fails instead.
package stripetest

import (
	"bytes"
	"encoding/json"
	"go/build"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/nextup-dev/nextup/internal/missing"
	"github.com/nextup-dev/nextup/pay/stripepay"
)

// Binary returns the path of the stripe-mock binary: on PATH, else in
// GOPATH's bin (by default $HOME/go/bin, where go install puts it), else
// "".
func Binary() string {
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p
	}
	for _, dir := range filepath.SplitList(build.Default.GOPATH) {
		p := filepath.Join(dir, "bin", "stripe-mock")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// output collects stripe-mock's output and tells when it has printed the
// address it listens on.
type output struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	addr  string
	ready chan struct{}
}

var listening = regexp.MustCompile(`Listening for HTTP at address: (\S+)`)

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if o.addr == "" {
		if m := listening.FindSubmatch(o.buf.Bytes()); m != nil {
			o.addr = string(m[1])
			close(o.ready)
		}
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Start runs stripe-mock for the test and returns its base URL
// (http://127.0.0.1:PORT). It listens on loopback only, on a port the
// system chooses (no race for a "free" port), waits until it answers,
// and is stopped when the test ends.
func Start(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if bin == "" {
		missing.Skip(t, "stripe-mock", "not on PATH nor in $(go env GOPATH)/bin", "go install github.com/stripe/stripe-mock@v0.203.0")
	}
	// stripe-mock also starts HTTPS on all interfaces (port 12112) unless
	// told otherwise, even when -http-addr is given: keep that on loopback
	// too, on a port of its own so parallel tests do not collide.
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	out := &output{ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("stripetest: start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	select {
	case <-out.ready:
	case <-exited:
		t.Fatalf("stripetest: stripe-mock exited at start:\n%s", out)
	case <-timeout.C:
		t.Fatalf("stripetest: stripe-mock did not say where it listens within 30 s:\n%s", out)
	}
	base := "http://" + out.addr
	// It prints the address once it listens; poll until it also answers
	// (any status: without a key it answers 401).
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := hc.Get(base + "/")
		if err == nil {
			res.Body.Close()
			return base
		}
		select {
		case <-tick.C:
		case <-exited:
			t.Fatalf("stripetest: stripe-mock exited at start:\n%s", out)
		case <-timeout.C:
			t.Fatalf("stripetest: stripe-mock at %s did not answer within 30 s: %v\n%s", base, err, out)
		}
	}
}

// Sign signs payload with secret as Stripe signs a webhook, timestamped
// now, and returns the Stripe-Signature header value.
func Sign(payload []byte, secret string) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret}).Header
}

// SignedCompleted builds a checkout.session.completed event carrying c
// (the offer id both as client_reference_id and as metadata offer_id) and
// signs it with secret. It returns the payload and its Stripe-Signature
// header value.
func SignedCompleted(t testing.TB, secret string, c stripepay.Completed) (payload []byte, header string) {
	t.Helper()
	session := map[string]any{
		"id":                  c.SessionID,
		"object":              "checkout.session",
		"mode":                "payment",
		"status":              "complete",
		"client_reference_id": c.OfferID,
		"metadata":            map[string]string{"offer_id": c.OfferID, "business_id": c.BusinessID},
		"payment_intent":      c.PaymentIntentID,
		"amount_total":        c.AmountTotal,
		"currency":            c.Currency,
		"payment_status":      c.PaymentStatus,
		"livemode":            false,
	}
	event := map[string]any{
		"id":               c.EventID,
		"object":           "event",
		"api_version":      stripe.APIVersion,
		"created":          time.Now().Unix(),
		"type":             stripepay.EventCompleted,
		"livemode":         false,
		"pending_webhooks": 1,
		"data":             map[string]any{"object": session},
	}
	payload, err := json.Marshal(event)
	if err != nil {
		t.Fatalf("stripetest: %v", err)
	}
	return payload, Sign(payload, secret)
}
