package httpbook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/booksys/httpbook"
)

var key = []byte("signing-key-of-biz_1")

// verified checks a request the way a booking system would, independently
// of the package's signing: the HMAC over "<t>.<body>" and t itself.
func verified(r *http.Request, body []byte, now time.Time) bool {
	ts, sig, ok := strings.Cut(strings.TrimPrefix(r.Header.Get("Nextup-Signature"), "t="), ",v1=")
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts + "." + string(body)))
	return ok && ts == strconv.FormatInt(now.Unix(), 10) && hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac.Sum(nil))))
}

func client(clock nextup.Clock, timeout time.Duration) *httpbook.Client {
	return &httpbook.Client{Clock: clock, Timeout: timeout, Key: func(_ context.Context, bid string) ([]byte, error) {
		if bid != "biz_1" {
			return nil, errors.New("unknown business")
		}
		return key, nil
	}}
}

func request() nextup.BookRequest {
	start := time.Date(2031, 3, 11, 14, 0, 0, 0, time.UTC)
	return nextup.BookRequest{BusinessID: "biz_1", BookingID: "bkg_1", SlotID: "slt_1", Service: "haircut", Staff: "Ana",
		StartsAt: start, EndsAt: start.Add(45 * time.Minute), Seats: 1, PartySize: 1, Name: "Ann",
		Email: "ann@example.com", Phone: "+447700900123", EntryID: "ent_1", OfferID: "off_1"}
}

// The request is the booking as JSON, signed, with the booking id as the
// Idempotency-Key; a 201's reference is kept.
func TestBookSendsSignedJSON(t *testing.T) {
	t.Parallel()
	clock := nextup.NewFakeClock(time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC))
	var got struct {
		header http.Header
		body   []byte
		ok     bool
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.header = r.Header
		got.body, _ = io.ReadAll(r.Body)
		got.ok = r.Method == http.MethodPost && verified(r, got.body, clock.Now())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"reference":"SALON-42"}`)
	}))
	defer srv.Close()
	reply := client(clock, 5*time.Second).Book(context.Background(), srv.URL+"/bookings", request())
	if reply.Outcome != nextup.BookConfirmed || reply.Reference != "SALON-42" || reply.Detail != "http 201" {
		t.Fatalf("reply = %+v", reply)
	}
	if !got.ok || got.header.Get("Idempotency-Key") != "bkg_1" || got.header.Get("Nextup-Booking-Id") != "bkg_1" ||
		got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("request headers %v (signature ok: %v)", got.header, got.ok)
	}
	var raw map[string]any
	if err := json.Unmarshal(got.body, &raw); err != nil {
		t.Fatal(err)
	}
	slot, _ := raw["slot"].(map[string]any)
	if raw["booking_id"] != "bkg_1" || raw["business_id"] != "biz_1" || raw["entry_id"] != "ent_1" || raw["offer_id"] != "off_1" ||
		raw["seats"] != float64(1) || raw["party_size"] != float64(1) || raw["name"] != "Ann" || raw["email"] != "ann@example.com" ||
		raw["phone"] != "+447700900123" || slot["id"] != "slt_1" || slot["service"] != "haircut" || slot["staff"] != "Ana" ||
		slot["starts_at"] != "2031-03-11T14:00:00Z" || slot["ends_at"] != "2031-03-11T14:45:00Z" {
		t.Fatalf("body %s", got.body)
	}
}

// Each answer is classified: 2xx confirms (with or without a reference),
// 409 is a taken slot, 408/429/5xx are worth another try, anything else is
// final.
func TestBookOutcomes(t *testing.T) {
	t.Parallel()
	clock := nextup.NewFakeClock(time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		status int
		body   string
		want   nextup.BookOutcome
		ref    string
	}{
		{200, `{"id":7731}`, nextup.BookConfirmed, "7731"},
		{201, `{"reference":"R1","id":"other"}`, nextup.BookConfirmed, "R1"},
		{204, ``, nextup.BookConfirmed, ""},
		{202, `not json`, nextup.BookConfirmed, ""},
		{409, `{"error":"taken"}`, nextup.BookSlotTaken, ""},
		{503, ``, nextup.BookUnavailable, ""},
		{500, ``, nextup.BookUnavailable, ""},
		{429, ``, nextup.BookUnavailable, ""},
		{408, ``, nextup.BookUnavailable, ""},
		{400, `{"error":"bad"}`, nextup.BookRefused, ""},
		{401, ``, nextup.BookRefused, ""},
		{404, ``, nextup.BookRefused, ""},
		{302, ``, nextup.BookRefused, ""},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.status == 302 {
				w.Header().Set("Location", "/elsewhere")
			}
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		}))
		reply := client(clock, 5*time.Second).Book(context.Background(), srv.URL, request())
		srv.Close()
		if reply.Outcome != tc.want || reply.Reference != tc.ref || reply.Detail != "http "+strconv.Itoa(tc.status) {
			t.Errorf("%d %s: reply %+v, want %s ref %q", tc.status, tc.body, reply, tc.want, tc.ref)
		}
	}
}

// A booking system that does not answer within the timeout, or cannot be
// reached, is worth another try; a URL that cannot be used is not.
func TestBookNoAnswer(t *testing.T) {
	t.Parallel()
	clock := nextup.NewFakeClock(time.Date(2031, 3, 10, 9, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // until the client gives up (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	reply := client(clock, 100*time.Millisecond).Book(context.Background(), hang.URL, request())
	if reply.Outcome != nextup.BookUnavailable || reply.Detail != "no answer within 100ms" {
		t.Fatalf("hanging booking system: %+v", reply)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	if reply := client(clock, time.Second).Book(context.Background(), closed, request()); reply.Outcome != nextup.BookUnavailable ||
		!strings.HasPrefix(reply.Detail, "no answer: ") {
		t.Fatalf("closed port: %+v", reply)
	}
	if reply := client(clock, time.Second).Book(context.Background(), "http://[::1]:namedport", request()); reply.Outcome != nextup.BookRefused {
		t.Fatalf("bad URL: %+v", reply)
	}
	other := request()
	other.BusinessID = "biz_2"
	if reply := client(clock, time.Second).Book(context.Background(), hang.URL, other); reply.Outcome != nextup.BookUnavailable ||
		!strings.Contains(reply.Detail, "signing key") {
		t.Fatalf("no key: %+v", reply)
	}
}
