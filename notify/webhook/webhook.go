// Package webhook delivers a business's events to its webhook URL: the
// event's JSON POSTed with its id and type in headers and an HMAC-SHA256
// signature over the timestamp and the body.
//
// The signature header is
//
//	Nextup-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>
//
// where key is the business's signing key (Key returns it; cmd/nextup uses
// the hex SHA-256 of the business's API key, which the integrator can
// compute and nextup already keeps). A receiver recomputes the HMAC, and
// refuses a timestamp far from its clock to stop replays. The event id
// (Nextup-Event-Id, also in the body) is the outbox message id: a delivery
// repeated after a crash carries the same id.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
)

// Sender posts webhook events. Clock and Key are required.
type Sender struct {
	Clock nextup.Clock
	// Key returns the signing key of a business.
	Key func(ctx context.Context, businessID string) ([]byte, error)
	// Client sends the requests; default: 10 s timeout, no redirects.
	Client *http.Client
}

var _ nextup.Sender = (*Sender)(nil)

// Channel is webhook.
func (s *Sender) Channel() nextup.Channel { return nextup.ChannelWebhook }

// Account is "webhook": every business's endpoint is its own, so there is
// no provider's limit to keep, and a rate limit on webhooks is one bucket
// for all the relay's deliveries.
func (s *Sender) Account() string { return "webhook" }

func (s *Sender) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Send POSTs msg.Body to msg.To. A 2xx answer delivers it; 408, 429 and
// 5xx (and no answer) are retried; any other answer is permanent (the URL
// is wrong or refuses the event) and the message goes dead.
func (s *Sender) Send(ctx context.Context, msg nextup.Message) (string, error) {
	if s.Clock == nil || s.Key == nil {
		return "", errors.New("webhook: Sender needs a Clock and a Key")
	}
	key, err := s.Key(ctx, msg.BusinessID)
	if err != nil {
		return "", fmt.Errorf("webhook key of %s: %w", msg.BusinessID, err)
	}
	body := []byte(msg.Body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, msg.To, bytes.NewReader(body))
	if err != nil {
		return "", nextup.Errorf(nextup.ErrInvalid, "bad_webhook_url", "webhook URL %q: %v", msg.To, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "nextup-webhook/1")
	req.Header.Set("Nextup-Event-Id", msg.ID)
	req.Header.Set("Nextup-Event-Type", msg.Subject)
	req.Header.Set("Idempotency-Key", msg.ID)
	req.Header.Set("Nextup-Signature", nextup.Signature(key, s.Clock.Now(), body))
	res, err := s.client().Do(req)
	if err != nil {
		return "", fmt.Errorf("webhook %s: %w", msg.ID, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return fmt.Sprintf("http %d", res.StatusCode), nil
	case res.StatusCode == http.StatusRequestTimeout || res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return "", fmt.Errorf("webhook %s: %s answered %d", msg.ID, msg.To, res.StatusCode)
	}
	return "", nextup.Errorf(nextup.ErrInvalid, "webhook_refused", "webhook %s: %s answered %d", msg.ID, msg.To, res.StatusCode)
}
