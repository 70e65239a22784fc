// Package httpbook books claims in a business's own booking system over
// HTTP: the booking is POSTed as JSON to the business's booking URL, signed
// the way webhook events are.
//
// The request carries
//
//	Content-Type: application/json
//	Idempotency-Key: <booking id>
//	Nextup-Booking-Id: <booking id>
//	Nextup-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>
//
// with the same key as webhooks (Key returns it; cmd/nextup uses the hex
// SHA-256 of the business's API key). The same booking is always sent with
// the same Idempotency-Key, so a request repeated after a timeout or a crash
// books once. The body is
//
//	{"booking_id","business_id","entry_id","offer_id",
//	 "slot":{"id","service","staff","starts_at","ends_at"},
//	 "seats","party_size","name","email","phone"}
//
// The answer decides: 2xx confirms (a JSON body's "reference", or else its
// "id", is kept as the booking system's reference); 409 means the slot is
// gone there; 408, 429, 5xx, a timeout and no connection are worth another
// try; any other answer (a wrong URL, a refused signature) is final.
package httpbook

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
)

// DefaultTimeout bounds one request when Client.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Client books claims over HTTP. Clock and Key are required.
type Client struct {
	Clock nextup.Clock
	// Key returns the signing key of a business.
	Key func(ctx context.Context, businessID string) ([]byte, error)
	// Timeout bounds one request, answer included. Default DefaultTimeout.
	Timeout time.Duration
	// HTTP sends the requests; default: a client that follows no redirects.
	HTTP *http.Client
}

var _ nextup.BookingSystem = (*Client)(nil)

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// request is the JSON body of a booking request.
type request struct {
	BookingID  string `json:"booking_id"`
	BusinessID string `json:"business_id"`
	EntryID    string `json:"entry_id,omitempty"`
	OfferID    string `json:"offer_id,omitempty"`
	Slot       struct {
		ID       string    `json:"id"`
		Service  string    `json:"service"`
		Staff    string    `json:"staff,omitempty"`
		StartsAt time.Time `json:"starts_at"`
		EndsAt   time.Time `json:"ends_at"`
	} `json:"slot"`
	Seats     int    `json:"seats"`
	PartySize int    `json:"party_size"`
	Name      string `json:"name"`
	Email     string `json:"email,omitempty"`
	Phone     string `json:"phone,omitempty"`
}

// encode is the JSON body sent for r.
func encode(r nextup.BookRequest) ([]byte, error) {
	var in request
	in.BookingID, in.BusinessID, in.EntryID, in.OfferID = r.BookingID, r.BusinessID, r.EntryID, r.OfferID
	in.Slot.ID, in.Slot.Service, in.Slot.Staff = r.SlotID, r.Service, r.Staff
	in.Slot.StartsAt, in.Slot.EndsAt = r.StartsAt.UTC(), r.EndsAt.UTC()
	in.Seats, in.PartySize, in.Name, in.Email, in.Phone = r.Seats, r.PartySize, r.Name, r.Email, r.Phone
	return json.Marshal(in)
}

// Book POSTs the booking to url once and classifies the answer.
func (c *Client) Book(ctx context.Context, url string, r nextup.BookRequest) nextup.BookReply {
	if c.Clock == nil || c.Key == nil {
		return nextup.BookReply{Outcome: nextup.BookRefused, Detail: "httpbook: Client needs a Clock and a Key"}
	}
	key, err := c.Key(ctx, r.BusinessID)
	if err != nil {
		// The key comes from nextup's own store: a passing failure there.
		return nextup.BookReply{Outcome: nextup.BookUnavailable, Detail: fmt.Sprintf("signing key: %v", err)}
	}
	body, err := encode(r)
	if err != nil {
		return nextup.BookReply{Outcome: nextup.BookRefused, Detail: fmt.Sprintf("encode booking: %v", err)}
	}
	timeout := cmp.Or(c.Timeout, DefaultTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nextup.BookReply{Outcome: nextup.BookRefused, Detail: fmt.Sprintf("booking URL: %v", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "nextup-booking/1")
	req.Header.Set("Idempotency-Key", r.BookingID)
	req.Header.Set("Nextup-Booking-Id", r.BookingID)
	req.Header.Set("Nextup-Signature", nextup.Signature(key, c.Clock.Now(), body))
	res, err := c.httpClient().Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nextup.BookReply{Outcome: nextup.BookUnavailable, Detail: fmt.Sprintf("no answer within %s", timeout)}
		}
		return nextup.BookReply{Outcome: nextup.BookUnavailable, Detail: fmt.Sprintf("no answer: %v", err)}
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	status := fmt.Sprintf("http %d", res.StatusCode)
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		// The booking is recorded even if the body was cut short; keep
		// whatever reference came through.
		var ref struct {
			Reference any `json:"reference"`
			ID        any `json:"id"`
		}
		reply := nextup.BookReply{Outcome: nextup.BookConfirmed, Detail: status}
		if err == nil && json.Unmarshal(answer, &ref) == nil {
			reply.Reference = reference(ref.Reference, ref.ID)
		}
		return reply
	case res.StatusCode == http.StatusConflict:
		return nextup.BookReply{Outcome: nextup.BookSlotTaken, Detail: status}
	case res.StatusCode == http.StatusRequestTimeout || res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return nextup.BookReply{Outcome: nextup.BookUnavailable, Detail: status}
	}
	return nextup.BookReply{Outcome: nextup.BookRefused, Detail: status}
}

// reference is the first of the candidate JSON values that is a non-empty
// string or a number, as text (at most 200 characters).
func reference(vs ...any) string {
	for _, v := range vs {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case float64:
			s = fmt.Sprint(v)
			if v == float64(int64(v)) {
				s = fmt.Sprint(int64(v))
			}
		}
		if s != "" {
			if len(s) > 200 {
				s = s[:200]
			}
			return s
		}
	}
	return ""
}
