package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/booksys/httpbook"
	"github.com/nextup-dev/nextup/web"
)

// withBookingSystem wires the server's booking-system client (short
// timeout) and returns a fake booking system answering status, recording
// the Idempotency-Key of each request.
func withBookingSystem(t *testing.T, status int) (func(*web.Server), *httptest.Server, func() []string) {
	var mu sync.Mutex
	var keys []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(fake.Close)
	opt := func(ws *web.Server) {
		ws.Svc.BookingSystem = &httpbook.Client{Clock: ws.Svc.Clock, Timeout: 5 * time.Second,
			Key: func(ctx context.Context, bid string) ([]byte, error) {
				b, err := ws.Svc.GetBusiness(ctx, bid)
				return []byte(b.APIKeyHash), err
			}}
	}
	return opt, fake, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), keys...)
	}
}

// The booking URL is set with PATCH /v1/businesses/{bid}; the booking
// system's 409 is the claim's 409 slot_taken, its lasting 503 the claim's
// 503 booking_system_unavailable, each as problem+json and on the page.
func TestClaimThroughBookingSystem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer int
		status int
		code   string
		calls  int
		page   string
	}{
		{http.StatusCreated, 200, "", 1, ""},
		{http.StatusConflict, 409, nextup.CodeSlotTaken, 1, "Just filled"},
		{http.StatusServiceUnavailable, 503, nextup.CodeBookingSystemUnavailable, 3, "Not confirmed yet"},
	} {
		t.Run(http.StatusText(tc.answer), func(t *testing.T) {
			t.Parallel()
			opt, fake, keys := withBookingSystem(t, tc.answer)
			a := setup(t, opt)
			a.problem(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"booking_url":"ftp://book.example"}`), 400, nextup.CodeValidation)
			var biz map[string]any
			a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"booking_url":"`+fake.URL+`/book","owner_email":"owner@salon.example"}`), 200, &biz)
			if biz["booking_url"] != fake.URL+"/book" {
				t.Fatalf("business %v", biz)
			}
			sid := a.slot(chair)["id"].(string)
			a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
			oid, tok := a.offerFor(sid)

			r := a.do("POST", "/v1/claims/"+tok+":accept", "", "")
			var bookingID string
			if tc.code == "" {
				var claim map[string]any
				a.must(r, 200, &claim)
				bookingID = claim["booking"].(map[string]any)["id"].(string)
			} else {
				p := a.problem(r, tc.status, tc.code)
				if d, _ := p["detail"].(string); !strings.Contains(d, "you keep your place on the waitlist") {
					t.Errorf("detail %q", d)
				}
				var offer map[string]any
				a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &offer)
				if offer["state"] != "cancelled" {
					t.Errorf("offer %v", offer)
				}
			}
			got := keys()
			if len(got) != tc.calls || got[0] == "" || (bookingID != "" && got[0] != bookingID) {
				t.Fatalf("booking system got keys %v, want %d for booking %q", got, tc.calls, bookingID)
			}
			for _, k := range got {
				if k != got[0] {
					t.Fatalf("keys %v differ", got)
				}
			}
			var slot map[string]any
			a.must(a.do("GET", "/v1/slots/"+sid, a.key, ""), 200, &slot)
			if slot["booked_seats"] != float64(1) || slot["held_seats"] != float64(0) {
				t.Fatalf("slot %v", slot)
			}
			var hbs struct {
				Handbacks []map[string]any `json:"handbacks"`
			}
			a.must(a.do("GET", "/v1/businesses/"+a.bid+"/handbacks", a.key, ""), 200, &hbs)
			if want := tc.answer == http.StatusServiceUnavailable; (len(hbs.Handbacks) == 1) != want ||
				want && hbs.Handbacks[0]["reason"] != "booking_system_unavailable" {
				t.Fatalf("hand-backs %v", hbs.Handbacks)
			}
			if tc.page == "" {
				return
			}
			// The page says the same, with the same status, without asking
			// the booking system again.
			status, _, body := a.page("POST", "/c/"+tok+"/claim")
			if status != tc.status || !strings.Contains(body, tc.page) {
				t.Fatalf("claim page: %d %s", status, body)
			}
			if _, _, body := a.page("GET", "/c/"+tok); !strings.Contains(body, tc.page) {
				t.Fatalf("claim link: %s", body)
			}
			if n := len(keys()); n != tc.calls {
				t.Fatalf("%d requests after the page, want %d", n, tc.calls)
			}
		})
	}
}
