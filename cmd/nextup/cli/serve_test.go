package cli

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/notify/twilio/twiliotest"
	"github.com/nextup-dev/nextup/outbox"
)

// TestMain lets a test run this binary as the real nextup process.
func TestMain(m *testing.M) {
	if os.Getenv("NEXTUP_TEST_RUN_MAIN") == "1" {
		armCrashes()
		Main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeProcess starts `nextup serve --clock=fake` as a process, waits
// for /healthz, drives a cancellation through an expiry (moved on by the
// debug clock) to a booking, and stops it with SIGTERM.
func TestServeProcess(t *testing.T) {
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--clock", "fake", "--db", filepath.Join(t.TempDir(), "n.db"))
	cmd.Env = append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1", "NEXTUP_ADMIN_TOKEN=adm")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil && res.StatusCode == 200 {
			res.Body.Close()
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("serve never became healthy")
		case <-time.After(50 * time.Millisecond): // polling a process start, not waiting for a timer
		}
	}
	api := apiClient(t)
	call := func(method, path, key, body string, want int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := api.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, b, want)
		}
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return out
	}
	now := time.Now().UTC()
	start := now.Add(48 * time.Hour).Truncate(time.Hour)
	biz := call("POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC","rules":{"quiet_hours":null}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	sl := call("POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)), 201)
	sid := sl["id"].(string)
	ann := call("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ann","email":"ann@example.com","service":"cut"}`, 201)
	bob := call("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Bob","email":"bob@example.com","service":"cut"}`, 201)
	rel := call("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200)
	if m := rel["moves"].([]any)[0].(map[string]any); m["entry_id"] != ann["id"] {
		t.Fatalf("release moves %v", rel["moves"])
	}
	// Ann does not answer: eleven minutes later the slot has rolled on to Bob.
	call("POST", "/v1/debug/clock", "adm", `{"advance_seconds":660}`, 200)
	got := call("GET", "/v1/slots/"+sid, key, "", 200)
	offers := got["offers"].([]any)
	if len(offers) != 2 || offers[0].(map[string]any)["state"] != "expired" || offers[1].(map[string]any)["entry_id"] != bob["id"] {
		t.Fatalf("after the window: %v", offers)
	}
	if st := call("GET", "/v1/waitlist/"+ann["id"].(string), key, "", 200); st["state"] != "waiting" {
		t.Fatalf("Ann = %v", st)
	}
	// Bob's offer went out through the relay; his link books the slot.
	msgs := call("GET", "/v1/businesses/"+bid+"/messages?to=bob@example.com", key, "", 200)["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["state"] != "sent" {
		t.Fatalf("Bob's messages = %v", msgs)
	}
	link := msgs[0].(map[string]any)["claim_url"].(string)
	if !strings.HasPrefix(link, "http://"+addr+"/c/") {
		t.Fatalf("claim link %q does not use the base URL", link)
	}
	tok := link[strings.LastIndex(link, "/")+1:]
	claim := call("POST", "/v1/claims/"+tok+":accept", "", "", 200)
	if claim["state"] != "claimed" {
		t.Fatalf("claim = %v", claim)
	}
	if got := call("GET", "/v1/slots/"+sid, key, "", 200); got["state"] != "full" || got["booked_seats"] != float64(1) {
		t.Fatalf("slot after Bob's claim = %v", got)
	}
	res, err := api.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`nextup_timer_lateness_seconds_count{kind="offer_expire"} 1`, `nextup_claims_total{outcome="booked"} 1`,
		// The debug clock relayed Bob's offer and Ann's "your hold lapsed"
		// through capture; Ann's offer was cancelled with it before it
		// ran, the confirmation waits.
		`nextup_outbox_sent_total{channel="email"} 2`, `nextup_outbox_queue_latency_seconds_count{channel="email"} 2`,
		`nextup_outbox_send_duration_seconds_count{channel="email"} 2`, `nextup_outbox_messages{channel="email",state="sent"} 2`,
		`nextup_outbox_messages{channel="email",state="cancelled"} 1`, `nextup_outbox_messages{channel="email",state="queued"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(string(metrics))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM", err)
		}
	case <-ctx.Done():
		t.Fatal("serve did not stop after SIGTERM")
	}
	if !strings.Contains(logs.String(), "nextup stopped") {
		t.Fatalf("no clean stop in the logs:\n%s", logs.String())
	}
}

// TestServeTextsThroughTwilio runs `nextup serve` with Twilio configured by
// environment (pointed at a local fake of the Messages API): a person who
// asked for texts gets the offer by SMS through the official SDK, claims
// with its link, and is texted the confirmation.
func TestServeTextsThroughTwilio(t *testing.T) {
	fake := twiliotest.Start(t)
	mail := smtptest.Start(t)
	t.Setenv("NEXTUP_TWILIO_ACCOUNT_SID", twiliotest.AccountSID)
	t.Setenv("NEXTUP_TWILIO_AUTH_TOKEN", twiliotest.AuthToken)
	t.Setenv("NEXTUP_TWILIO_FROM", "+15005550006")
	t.Setenv("NEXTUP_TWILIO_API_BASE", fake.URL)
	in := startInstance(t, "solo", filepath.Join(t.TempDir(), "n.db"), mail.Addr, "--notify", "capture,smtp,twilio")
	c := &cluster{t: t, all: []*instance{in}, client: apiClient(t)}

	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Corner Cuts","timezone":"UTC","rules":{"quiet_hours":null}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	at := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)
	sl := c.must(0, "POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q}`,
		at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339)), 201)
	c.must(0, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Tom","phone":"+447700900123","channel":"sms","service":"cut"}`, 201)
	c.must(0, "POST", "/v1/slots/"+sl["id"].(string)+":release", key, `{"reason":"cancellation"}`, 200)
	c.setClock(time.Now().UTC().Add(time.Minute)) // the relay runs with the fake clock's moves

	offer := fake.Wait(t, 1, 20*time.Second)[0]
	tok := claimLink.FindStringSubmatch(offer.Body)
	if offer.To != "+447700900123" || offer.From != "+15005550006" || tok == nil {
		t.Fatalf("offer text %+v", offer)
	}
	if r := c.must(0, "POST", "/v1/claims/"+tok[1]+":accept", "", "", 200); r["state"] != "claimed" {
		t.Fatalf("claim = %v", r)
	}
	c.setClock(time.Now().UTC().Add(2 * time.Minute))
	if got := fake.Wait(t, 2, 20*time.Second)[1]; got.To != "+447700900123" || !strings.Contains(got.Body, "cut") {
		t.Fatalf("confirmation text %+v", got)
	}
	if n := len(mail.Mails()); n != 0 {
		t.Fatalf("%d mails for a person who asked for texts", n)
	}
	msgs := c.must(0, "GET", "/v1/businesses/"+bid+"/messages", key, "", 200)["messages"].([]any)
	for _, m := range msgs {
		if mm := m.(map[string]any); mm["state"] != "sent" || mm["channel"] != "sms" {
			t.Errorf("message %v", mm)
		}
	}
}

// TestServeWebhookEvents: a business that sets a webhook URL receives its
// events from a running `nextup serve` — the offer, the claim, the
// booking — as JSON POSTs signed with the hex SHA-256 of its API key.
func TestServeWebhookEvents(t *testing.T) {
	type delivery struct {
		typ, id string
		ok      bool
	}
	got := make(chan delivery, 16)
	var key []byte
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts, sig, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Nextup-Signature"), "t="), ",v1=")
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(ts + "." + string(body)))
		var ev struct {
			ID, Type string
		}
		_ = json.Unmarshal(body, &ev)
		got <- delivery{typ: ev.Type, id: ev.ID, ok: hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac.Sum(nil)))) && ev.ID == r.Header.Get("Nextup-Event-Id")}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	in := startInstance(t, "solo", filepath.Join(t.TempDir(), "n.db"), smtptest.Start(t).Addr)
	c := &cluster{t: t, all: []*instance{in}, client: apiClient(t)}
	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Corner Cuts","timezone":"UTC","rules":{"quiet_hours":null}}`, 201)
	bid, apiKey := biz["id"].(string), biz["api_key"].(string)
	sum := sha256.Sum256([]byte(apiKey))
	key = []byte(hex.EncodeToString(sum[:]))
	c.must(0, "PATCH", "/v1/businesses/"+bid, apiKey, fmt.Sprintf(`{"webhook_url":%q}`, receiver.URL+"/hooks"), 200)
	at := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)
	sl := c.must(0, "POST", "/v1/businesses/"+bid+"/slots", apiKey, fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q}`,
		at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339)), 201)
	c.must(0, "POST", "/v1/businesses/"+bid+"/waitlist:join", apiKey, `{"name":"Ann","email":"ann@example.com","service":"cut"}`, 201)
	rel := c.must(0, "POST", "/v1/slots/"+sl["id"].(string)+":release", apiKey, `{"reason":"cancellation"}`, 200)
	oid := rel["moves"].([]any)[0].(map[string]any)["offer_id"].(string)
	msgs := c.must(0, "GET", "/v1/businesses/"+bid+"/messages?to=ann@example.com", apiKey, "", 200)["messages"].([]any)
	link := msgs[0].(map[string]any)["claim_url"].(string)
	c.must(0, "POST", "/v1/claims/"+link[strings.LastIndex(link, "/")+1:]+":accept", "", "", 200)
	c.setClock(time.Now().UTC().Add(time.Minute))

	seen := map[string]bool{}
	ids := map[string]bool{}
	for len(seen) < 3 {
		select {
		case d := <-got:
			if !d.ok {
				t.Fatalf("delivery %+v has a bad signature", d)
			}
			seen[d.typ], ids[d.id] = true, true
		case <-time.After(20 * time.Second):
			t.Fatalf("events received: %v", seen)
		}
	}
	for _, want := range []string{"offer.created", "offer.claimed", "booking.created"} {
		if !seen[want] {
			t.Errorf("no %s event (got %v)", want, seen)
		}
	}
	if len(ids) != len(seen) {
		t.Errorf("event ids %v for types %v", ids, seen)
	}
	offer := c.must(0, "GET", "/v1/offers/"+oid, apiKey, "", 200)
	if offer["state"] != "claimed" {
		t.Fatalf("offer %v", offer)
	}
}

// TestServeBookingSystem: a business with a booking_url has each claim
// booked in its booking system by a running `nextup serve`: signed with
// the hex SHA-256 of its API key, the booking id as Idempotency-Key; the
// 201 confirms it and the confirmation goes out.
func TestServeBookingSystem(t *testing.T) {
	type request struct {
		key, bookingID string
		signed         bool
	}
	got := make(chan request, 4)
	var key []byte
	booking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts, sig, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Nextup-Signature"), "t="), ",v1=")
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(ts + "." + string(body)))
		var b struct {
			BookingID string `json:"booking_id"`
		}
		_ = json.Unmarshal(body, &b)
		got <- request{key: r.Header.Get("Idempotency-Key"), bookingID: b.BookingID,
			signed: hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac.Sum(nil))))}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"reference":"CC-1"}`)
	}))
	defer booking.Close()
	in := startInstance(t, "solo", filepath.Join(t.TempDir(), "n.db"), smtptest.Start(t).Addr, "--booking-timeout", "5s")
	c := &cluster{t: t, all: []*instance{in}, client: apiClient(t)}
	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Corner Cuts","timezone":"UTC","rules":{"quiet_hours":null}}`, 201)
	bid, apiKey := biz["id"].(string), biz["api_key"].(string)
	sum := sha256.Sum256([]byte(apiKey))
	key = []byte(hex.EncodeToString(sum[:]))
	c.must(0, "PATCH", "/v1/businesses/"+bid, apiKey, fmt.Sprintf(`{"booking_url":%q}`, booking.URL+"/bookings"), 200)
	at := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)
	sl := c.must(0, "POST", "/v1/businesses/"+bid+"/slots", apiKey, fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q}`,
		at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339)), 201)
	c.must(0, "POST", "/v1/businesses/"+bid+"/waitlist:join", apiKey, `{"name":"Ann","email":"ann@example.com","service":"cut"}`, 201)
	c.must(0, "POST", "/v1/slots/"+sl["id"].(string)+":release", apiKey, `{"reason":"cancellation"}`, 200)
	msgs := c.must(0, "GET", "/v1/businesses/"+bid+"/messages?to=ann@example.com", apiKey, "", 200)["messages"].([]any)
	link := msgs[0].(map[string]any)["claim_url"].(string)
	claim := c.must(0, "POST", "/v1/claims/"+link[strings.LastIndex(link, "/")+1:]+":accept", "", "", 200)
	id := claim["booking"].(map[string]any)["id"].(string)
	select {
	case r := <-got:
		if !r.signed || r.key != id || r.bookingID != id {
			t.Fatalf("booking system got %+v for booking %s", r, id)
		}
	default:
		t.Fatal("the booking system was not asked before the claim answered")
	}
	found := false
	for _, m := range c.must(0, "GET", "/v1/businesses/"+bid+"/messages?to=ann@example.com", apiKey, "", 200)["messages"].([]any) {
		found = found || strings.HasPrefix(m.(map[string]any)["subject"].(string), "Booked: cut")
	}
	if !found {
		t.Fatal("no confirmation for Ann")
	}
}

// The rate flags become the relay's limits, by channel; 0 is no limit.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	c := serveConfig{SMSTPS: 1, WebhookTPS: 25}
	want := map[nextup.Channel]outbox.Limit{nextup.ChannelSMS: {TPS: 1, Burst: 1}, nextup.ChannelWebhook: {TPS: 25, Burst: 1}}
	if got := c.limits(); !maps.Equal(got, want) {
		t.Errorf("limits() = %v, want %v", got, want)
	}
	if got := (serveConfig{}).limits(); len(got) != 0 {
		t.Errorf("no flags: limits() = %v", got)
	}
}
