package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// FuzzRouter sends arbitrary requests (method, path and query, headers,
// body, and one of no credentials, the business's key, the admin token or
// another business's key; and, when auth's bit 4 is set, a valid
// Nextup-Signature over the body under the business's booking-events
// secret, so that the booking tool's events are parsed past the
// signature) to the real handler on a real SQLite store that
// holds a business, a booked slot, an event and a waiting entry. Whatever
// comes, the server does not panic, answers no 5xx, and every 4xx of the
// API (/v1/…) is RFC 9457 problem+json with a code.
func FuzzRouter(f *testing.F) {
	w := newFuzzWorld(f)
	seeds := []struct {
		method, target, headers, body string
		auth                          uint8
	}{
		{"GET", "/v1/businesses/{bid}", "", "", 1},
		{"PATCH", "/v1/businesses/{bid}", "Content-Type: application/json", `{"country":"GB","staff":["Ana"]}`, 1},
		{"PATCH", "/v1/businesses/{bid}/rules", "Content-Type: application/json", `{"claim_window_seconds":900}`, 1},
		{"POST", "/v1/businesses/{bid}/slots", "Content-Type: application/json", `{"service":"haircut","starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}`, 1},
		{"POST", "/v1/slots/{sid}:release", "Content-Type: application/json\nIdempotency-Key: k1", `{"reason":"cancellation"}`, 1},
		{"POST", "/v1/slots/{sid}:resize", "Content-Type: application/json", `{"capacity":0}`, 1},
		{"POST", "/v1/businesses/{bid}/waitlist:join", "Content-Type: application/json", `{"name":"Bo","email":"bo@example.com","service":"haircut","party_size":2}`, 1},
		{"GET", "/v1/businesses/{bid}/waitlist?state=waiting&limit=5", "", "", 1},
		{"PATCH", "/v1/waitlist/{eid}", "Content-Type: application/json", `{"priority":true,"latest":"2026-12-24"}`, 1},
		{"POST", "/v1/waitlist/{eid}:withdraw", "", "", 1},
		{"GET", "/v1/status/nope", "", "", 0},
		{"POST", "/v1/claims/nope:accept", "", "", 0},
		{"POST", "/v1/businesses/{bid}/events", "Content-Type: application/json", `{"title":"Class","starts_at":"2026-12-12T18:00:00Z","ends_at":"2026-12-12T19:00:00Z","capacity":5}`, 1},
		{"POST", "/v1/events/{evid}/registrations", "Content-Type: application/json", `{"name":"Cy","email":"cy@example.com","guests":1}`, 1},
		{"GET", "/v1/events/{evid}/registrations", "Accept: text/csv", "", 1},
		{"POST", "/v1/businesses/{bid}/waitlist:import", "Content-Type: text/csv", "name,email,service\nDee,dee@example.com,haircut\n", 1},
		{"POST", "/v1/businesses/{bid}/inbox", "Content-Type: message/rfc822", "From: a@b.c\r\nSubject: x\r\n\r\nhello", 1},
		{"POST", "/v1/businesses/{bid}/booking-events", "Content-Type: application/json\nNextup-Signature: t=1,v1=00", `{"id":"e1","type":"appointment.cancelled"}`, 1},
		{"POST", "/v1/businesses/{bid}/booking-events", "Content-Type: application/json", `{"id":"e2","type":"appointment.cancelled","appointment":{"id":"a1","service":"haircut","staff":"Ana","starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T11:00:00Z"}}`, 4},
		{"POST", "/v1/businesses/{bid}/booking-events", "Content-Type: application/json", `{"id":"e3","type":"appointment.booked","appointment":{"id":"a2","service":"haircut","starts_at":"2026-12-03T12:00:00Z","ends_at":"2026-12-03T13:00:00Z","capacity":2,"customer":{"email":"ann@example.com"}}}`, 4},
		{"POST", "/v1/businesses/{bid}/booking-events", "Content-Type: application/json", `{"id":"e4","type":"opening","appointment":{"id":"a3","service":"haircut","starts_at":"2026-12-01T09:00:00Z","ends_at":"2026-12-20T13:00:00Z"}}`, 4},
		{"POST", "/v1/businesses", "Content-Type: application/json", `{"name":"Other","timezone":"Europe/Paris"}`, 2},
		{"POST", "/v1/debug/clock", "Content-Type: application/json", `{"advance_seconds":60}`, 2},
		{"GET", "/v1/businesses/{bid}", "", "", 3},
		{"GET", "/j/salon", "", "", 0},
		{"POST", "/j/salon", "Content-Type: application/x-www-form-urlencoded", "name=Ed&email=ed%40example.com&service=haircut", 0},
		{"GET", "/dash/login", "", "", 0},
		{"POST", "/dash/login", "Content-Type: application/x-www-form-urlencoded", "email=x&password=y", 0},
		{"GET", "/", "", "", 0},
		{"DELETE", "/v1/businesses/{bid}/%zz", "", "", 1},
		{"BREW", "//v1/../v1/./slots/{sid}", "Content-Length: 5", "{{{{{", 1},
		{"POST", "/v1/slots/{sid}:release", "Content-Type: application/json; charset=utf-16", "\xff\xfe{", 1},
		{"GET", "/v1/businesses/{bid}/analytics?from=2026-13-01&to=x", "", "", 1},
		{"GET", "/metrics", "", "", 0},
		{"GET", "/readyz", "", "", 0},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, s.headers, []byte(s.body), s.auth)
	}
	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte, auth uint8) {
		req := w.request(method, target, headers, body, auth)
		if req == nil {
			return // not a request an HTTP/1.1 server would parse
		}
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		res := rec.Result()
		if res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %q answered %d: %s", req.Method, req.URL.RequestURI(), res.StatusCode, rec.Body.Bytes())
		}
		if res.StatusCode == http.StatusServiceUnavailable {
			t.Fatalf("%s %q answered 503 on a healthy store: %s", req.Method, req.URL.RequestURI(), rec.Body.Bytes())
		}
		if res.StatusCode >= 400 && strings.HasPrefix(req.URL.Path, "/v1/") {
			var p struct {
				Code   string `json:"code"`
				Status int    `json:"status"`
			}
			ct := res.Header.Get("Content-Type")
			if !strings.HasPrefix(ct, "application/problem+json") || json.Unmarshal(rec.Body.Bytes(), &p) != nil || p.Code == "" || p.Status != res.StatusCode {
				t.Fatalf("%s %q answered %d %s, not a problem with a code: %.300s", req.Method, req.URL.RequestURI(), res.StatusCode, ct, rec.Body.Bytes())
			}
		}
	})
}

// fuzzWorld is the store and server FuzzRouter sends its requests to, set
// up once for the whole run.
type fuzzWorld struct {
	handler                   http.Handler
	clock                     *nextup.FakeClock
	bid, key, otherKey        string
	sid, eid, evid, adminAuth string
	bookingSecret             []byte
}

func newFuzzWorld(tb testing.TB) *fuzzWorld {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, tb.TempDir()+"/nextup.db")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	loc, _ := time.LoadLocation("Europe/London")
	clock := nextup.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, loc))
	svc := waitlist.New(st, clock, "https://nextup.test")
	svc.Random = nextup.NewRandom(rand.NewChaCha8([32]byte{9}))
	ws := &web.Server{Svc: svc, Store: st, AdminToken: adminToken, MaxBody: 64 << 10, Metrics: web.NewMetrics(st),
		Debug: &web.DebugClock{Clock: clock, Sweeper: &timer.Sweeper{Store: st, Clock: clock, Handler: svc},
			Relay: &outbox.Relay{Store: st, Clock: clock, Default: capture.New()}}}
	w := &fuzzWorld{handler: ws.Handler(), clock: clock, adminAuth: adminToken}
	call := func(method, path, key, body string, into any) {
		tb.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			tb.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body.Bytes())
		}
		if into != nil {
			if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
				tb.Fatal(err)
			}
		}
	}
	var biz, other, slot, entry, ev, secret map[string]any
	call("POST", "/v1/businesses", adminToken, `{"name":"Salon","timezone":"Europe/London"}`, &biz)
	call("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`, &other)
	w.bid, w.key, w.otherKey = biz["id"].(string), biz["api_key"].(string), other["api_key"].(string)
	call("PATCH", "/v1/businesses/"+w.bid, w.key, `{"slug":"salon","services":[{"name":"haircut"}]}`, nil)
	call("POST", "/v1/businesses/"+w.bid+"/slots", w.key, chair, &slot)
	call("POST", "/v1/businesses/"+w.bid+"/waitlist:join", w.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`, &entry)
	call("POST", "/v1/businesses/"+w.bid+"/events", w.key, `{"title":"Pottery night","starts_at":"2026-12-10T18:00:00Z","ends_at":"2026-12-10T21:00:00Z","capacity":10}`, &ev)
	call("POST", "/v1/businesses/"+w.bid+"/booking-events:secret", w.key, "", &secret)
	w.sid, w.eid, w.evid = slot["id"].(string), entry["id"].(string), ev["id"].(string)
	w.bookingSecret = []byte(secret["secret"].(string))
	return w
}

// request builds the fuzzer's request as a server would after parsing
// it, or nil when no HTTP/1.1 server would: placeholders in the target
// ({bid}, {sid}, {eid}, {evid}) name the world's objects.
func (w *fuzzWorld) request(method, target, headers string, body []byte, auth uint8) *http.Request {
	target = strings.NewReplacer("{bid}", w.bid, "{sid}", w.sid, "{eid}", w.eid, "{evid}", w.evid).Replace(target)
	if method == "" || strings.ContainsAny(method, " \t\r\n") || !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \t\r\n") {
		return nil
	}
	// As net/http's server reads a request line: the whole head is
	// parsed by the same code a real client's would be.
	var head bytes.Buffer
	head.WriteString(method + " " + target + " HTTP/1.1\r\nHost: nextup.test\r\n")
	tp := textproto.NewReader(bufio.NewReader(strings.NewReader(strings.ReplaceAll(headers, "\r", "") + "\n\n")))
	hdr, err := tp.ReadMIMEHeader()
	if err != nil && len(hdr) == 0 && headers != "" {
		return nil
	}
	for k, vs := range hdr {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Authorization":
			continue // the server sets these from the connection; credentials come from auth
		case "Nextup-Signature":
			if auth&4 != 0 {
				continue // signed below
			}
		}
		for _, v := range vs {
			head.WriteString(k + ": " + v + "\r\n")
		}
	}
	switch auth % 4 {
	case 1:
		head.WriteString("Authorization: Bearer " + w.key + "\r\n")
	case 2:
		head.WriteString("Authorization: Bearer " + w.adminAuth + "\r\n")
	case 3:
		head.WriteString("Authorization: Bearer " + w.otherKey + "\r\n")
	}
	if auth&4 != 0 {
		head.WriteString("Nextup-Signature: " + nextup.Signature(w.bookingSecret, w.clock.Now(), body) + "\r\n")
	}
	head.WriteString("Content-Length: " + itoa(len(body)) + "\r\n\r\n")
	head.Write(body)
	req, err := http.ReadRequest(bufio.NewReader(&head))
	if err != nil {
		return nil
	}
	if _, err := url.ParseRequestURI(req.RequestURI); err != nil {
		return nil
	}
	req.RemoteAddr = "192.0.2.1:1234"
	return req
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestFuzzWorldSignsBookingEvents shows that FuzzRouter's signed requests
// reach the booking-event parser: a signed cancellation is taken (200),
// the same body with the signature bit off is refused (401).
func TestFuzzWorldSignsBookingEvents(t *testing.T) {
	w := newFuzzWorld(t)
	body := []byte(`{"id":"e9","type":"appointment.cancelled","appointment":{"id":"a9","service":"haircut","starts_at":"2026-12-03T10:00:00Z","ends_at":"2026-12-03T11:00:00Z"}}`)
	for auth, want := range map[uint8]int{0: http.StatusUnauthorized, 4: http.StatusOK} {
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, w.request("POST", "/v1/businesses/{bid}/booking-events", "Content-Type: application/json", body, auth))
		if rec.Code != want {
			t.Errorf("auth %d: %d %s, want %d", auth, rec.Code, rec.Body.Bytes(), want)
		}
	}
}
