package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/pay/stripepay/stripetest"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
	"github.com/nextup-dev/nextup/web/webtest"
)

// The crash tests kill a real `nextup serve` at a named point of a request
// (or of a send), start it again on the same database, and retry as a
// client would, with the same Idempotency-Key. Each case must end with
// exactly one effect, and the retry's answer must be the one a run without
// a crash gives.
//
// The points are armed by TestMain, in this test binary only, from
// NEXTUP_TEST_CRASH_AT ("web:<point>", "relay:<point>" or
// "service:<point>") and NEXTUP_TEST_CRASH_MATCH (the Idempotency-Key, or
// the address of the message, that trips it). The process kills itself
// with SIGKILL: no deferred function, no graceful shutdown.

// armCrashes sets crashHooks from the environment (a serve process started
// by a crash test).
func armCrashes() {
	at, match := os.Getenv("NEXTUP_TEST_CRASH_AT"), os.Getenv("NEXTUP_TEST_CRASH_MATCH")
	if at == "" {
		return
	}
	die := func(where string) {
		fmt.Fprintf(os.Stderr, "CRASH %s\n", where)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	crashHooks = func(svc *waitlist.Service, api *web.Server, relay *outbox.Relay) {
		api.Crash = func(point string, r *http.Request) {
			if "web:"+point == at && r.Header.Get("Idempotency-Key") == match {
				die(at)
			}
		}
		relay.Crash = func(point string, m nextup.Message) {
			if "relay:"+point == at && m.To == match {
				die(at)
			}
		}
		svc.Crash = func(point string) {
			if "service:"+point == at {
				die(at)
			}
		}
	}
}

// proc is one `nextup serve` process of a crash test.
type proc struct {
	*instance
	client *http.Client // checks every exchange against the API contract
}

// startProc runs `nextup serve --clock=fake` on db, sending email through
// the SMTP server at smtpAddr, with the given extra environment, and waits
// until it is healthy.
func startProc(t *testing.T, db, smtpAddr string, env ...string) *proc {
	t.Helper()
	return startProcArgs(t, db, smtpAddr, env)
}

// startProcArgs is startProc with more flags for serve.
func startProcArgs(t *testing.T, db, smtpAddr string, env []string, extra ...string) *proc {
	t.Helper()
	in := startInstanceEnv(t, "crash", db, smtpAddr, env, append([]string{"--notify", "capture,smtp"}, extra...)...)
	return &proc{instance: in, client: &http.Client{Timeout: 30 * time.Second, Transport: webtest.Transport(t, nil)}}
}

// stop kills the process and waits for it to be gone.
func (p *proc) stop() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// died waits for the process to have killed itself at point.
func (p *proc) died(t *testing.T, point string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the process did not crash at %s", point)
	}
	if !strings.Contains(p.logs.String(), "CRASH "+point) {
		t.Fatalf("the process died, but not at %s:\n%s", point, p.logs.String())
	}
}

type answer struct {
	status   int
	header   http.Header
	body     []byte
	replayed bool
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("answer %d %s: %v", a.status, a.body, err)
	}
	return m
}

// send sends one request; err is the transport's (a process that died).
func (p *proc) send(method, path, bearer, idemKey, body string) (answer, error) {
	req, err := http.NewRequest(method, p.base+path, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := p.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: b, replayed: res.Header.Get("Idempotent-Replayed") == "true"}, err
}

// call sends a request that must answer want.
func (p *proc) call(t *testing.T, method, path, bearer, body string, want int) map[string]any {
	t.Helper()
	a, err := p.send(method, path, bearer, "", body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if a.status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, a.status, a.body, want)
	}
	return a.json(t)
}

// shape is a JSON answer with its values that differ from run to run (ids,
// tokens, links, times) replaced by their type, so that the answers of two
// runs can be compared.
func shape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if _, ok := e.(string); ok && !slices.Contains([]string{"state", "code", "offer_state", "reason", "channel"}, k) {
				out[k] = "<string>"
				continue
			}
			out[k] = shape(e)
		}
		return out
	case float64:
		return "<number>"
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = shape(e)
		}
		return out
	}
	return v
}

// crashScenario is a keyed POST whose effect must happen exactly once.
type crashScenario struct {
	name string
	// prepare makes what the request acts on, on a running process, and
	// returns the request's path, bearer and body.
	prepare func(t *testing.T, p *proc, n int) (path, bearer, body string)
	want    int
	// effects counts the request's effect, on a running process.
	effects func(t *testing.T, p *proc, path string) int
}

// crashWorld is the business the scenarios share.
type crashWorld struct {
	bid, key string
	start    time.Time
}

func (w *crashWorld) setUp(t *testing.T, p *proc) {
	biz := p.call(t, "POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC","rules":{"quiet_hours":null}}`, 201)
	w.bid, w.key = biz["id"].(string), biz["api_key"].(string)
	w.start = time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)
}

// offerToken opens a slot with one person waiting for it and returns the
// token of their offer's claim link.
func (w *crashWorld) offerToken(t *testing.T, p *proc, n int) string {
	t.Helper()
	start := w.start.Add(time.Duration(n) * time.Hour)
	email := fmt.Sprintf("claimer%d@example.com", n)
	service := fmt.Sprintf("cut%d", n)
	p.call(t, "POST", "/v1/businesses/"+w.bid+"/waitlist:join", w.key,
		fmt.Sprintf(`{"name":"Claimer %d","email":%q,"service":%q}`, n, email, service), 201)
	p.call(t, "POST", "/v1/businesses/"+w.bid+"/slots", w.key, fmt.Sprintf(`{"service":%q,"starts_at":%q,"ends_at":%q,"booked_seats":0}`,
		service, start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)), 201)
	msgs := p.call(t, "GET", "/v1/businesses/"+w.bid+"/messages?to="+email, w.key, "", 200)["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages to %s: %v", email, msgs)
	}
	link := msgs[0].(map[string]any)["claim_url"].(string)
	return link[strings.LastIndex(link, "/")+1:]
}

func crashScenarios(w *crashWorld) []crashScenario {
	return []crashScenario{
		{
			name: "join",
			prepare: func(t *testing.T, p *proc, n int) (string, string, string) {
				return "/v1/businesses/" + w.bid + "/waitlist:join", w.key,
					fmt.Sprintf(`{"name":"Joiner %d","email":"joiner%d@example.com","service":"colour"}`, n, n)
			},
			want: 201,
			effects: func(t *testing.T, p *proc, path string) int {
				entries := p.call(t, "GET", "/v1/businesses/"+w.bid+"/waitlist?service=colour", w.key, "", 200)["entries"].([]any)
				return len(entries)
			},
		},
		{
			name: "claim",
			prepare: func(t *testing.T, p *proc, n int) (string, string, string) {
				return "/v1/claims/" + w.offerToken(t, p, n) + ":accept", "", ""
			},
			want: 200,
			effects: func(t *testing.T, p *proc, path string) int {
				tok := strings.TrimSuffix(strings.TrimPrefix(path, "/v1/claims/"), ":accept")
				c := p.call(t, "GET", "/v1/claims/"+tok, "", "", 200)
				if c["offer_state"] != "claimed" {
					return 0
				}
				service := c["slot"].(map[string]any)["service"]
				slots := p.call(t, "GET", "/v1/businesses/"+w.bid+"/slots", w.key, "", 200)["slots"].([]any)
				booked := 0
				for _, s := range slots {
					if s := s.(map[string]any); s["service"] == service {
						booked += int(s["booked_seats"].(float64))
					}
				}
				return booked
			},
		},
		{
			name: "registration",
			prepare: func(t *testing.T, p *proc, n int) (string, string, string) {
				start := w.start.Add(time.Duration(24+n) * time.Hour)
				ev := p.call(t, "POST", "/v1/businesses/"+w.bid+"/events", w.key, fmt.Sprintf(`{"title":"Supper %d","starts_at":%q,"ends_at":%q,"capacity":10,"max_guests_per_rsvp":2}`,
					n, start.Format(time.RFC3339), start.Add(2*time.Hour).Format(time.RFC3339)), 201)
				return "/v1/events/" + ev["id"].(string) + "/registrations", w.key,
					fmt.Sprintf(`{"name":"Guest %d","email":"guest%d@example.com","guests":1}`, n, n)
			},
			want: 201,
			effects: func(t *testing.T, p *proc, path string) int {
				regs := p.call(t, "GET", path, w.key, "", 200)["registrations"].([]any)
				return len(regs)
			},
		},
	}
}

// TestCrashDuringKeyedRequest: for a join, a claim and a registration,
// `nextup serve` dies before the action, after the action's commit, and
// before the response is written; the client retries with the same
// Idempotency-Key on the restarted server. Each case ends with exactly
// one effect, and the retry answers as a run without a crash does (after
// the commit, with the very response the dead process made).
func TestCrashDuringKeyedRequest(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t)
	db := filepath.Join(t.TempDir(), "n.db")
	w := &crashWorld{}
	p := startProc(t, db, mail.Addr)
	w.setUp(t, p)
	n := 0
	for _, sc := range crashScenarios(w) {
		// The answer of a run without a crash, for comparison.
		n++
		path, bearer, body := sc.prepare(t, p, n)
		plain, err := p.send("POST", path, bearer, fmt.Sprintf("plain-%d", n), body)
		if err != nil || plain.status != sc.want {
			t.Fatalf("%s without a crash: %d %s %v", sc.name, plain.status, plain.body, err)
		}
		want := shape(plain.json(t))
		if got := sc.effects(t, p, path); got != 1 {
			t.Fatalf("%s without a crash: %d effects", sc.name, got)
		}
		base := sc.effects

		for _, point := range []string{"before_action", "after_commit", "before_response"} {
			func() {
				t.Logf("%s, crashing at %s", sc.name, point)
				n++
				path, bearer, body := sc.prepare(t, p, n)
				before := 0
				if sc.name == "join" {
					before = base(t, p, path)
				}
				key := fmt.Sprintf("crash-%s-%d", point, n)
				// A process armed to die at this point, on this key.
				p.stop()
				p = startProc(t, db, mail.Addr, "NEXTUP_TEST_CRASH_AT=web:"+point, "NEXTUP_TEST_CRASH_MATCH="+key)
				if a, err := p.send("POST", path, bearer, key, body); err == nil {
					t.Fatalf("%s/%s: the request answered %d %s; want the process to die", sc.name, point, a.status, a.body)
				}
				p.died(t, "web:"+point)
				p = startProc(t, db, mail.Addr)

				retry, err := p.send("POST", path, bearer, key, body)
				if err != nil {
					t.Fatal(err)
				}
				again, err := p.send("POST", path, bearer, key, body)
				if err != nil {
					t.Fatal(err)
				}
				if retry.status != sc.want {
					t.Fatalf("%s/%s: retry: %d %s, want %d", sc.name, point, retry.status, retry.body, sc.want)
				}
				if got := shape(retry.json(t)); !equalJSON(got, want) {
					t.Errorf("%s/%s: retry answered %s; a run without a crash answers like %s", sc.name, point, retry.body, plain.body)
				}
				// Before the action nothing was done: the retry runs it. After
				// the commit the action is done and its answer stored: the
				// retry is that answer, replayed.
				if wantReplay := point != "before_action"; retry.replayed != wantReplay {
					t.Errorf("%s/%s: retry replayed = %v, want %v", sc.name, point, retry.replayed, wantReplay)
				}
				if !again.replayed || again.status != retry.status || !bytes.Equal(again.body, retry.body) {
					t.Errorf("%s/%s: a second retry: %d %s (replayed %v), want the first retry's answer replayed", sc.name, point, again.status, again.body, again.replayed)
				}
				if got := sc.effects(t, p, path) - before; got != 1 {
					t.Errorf("%s/%s: %d effects after the crash and the retries, want exactly 1", sc.name, point, got)
				}
			}()
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestCrashDuringFallback: Ann's only address refuses mail for good, so
// her offer's dead letter ends the offer (no channel left) and the slot
// rolls on to Bob. `nextup serve` dies after the refused send, before its
// outcome is recorded, and, in a second run, just after the dead letter
// and its fallback committed. After a restart each case ends with the
// fallback done exactly once: Ann's offer cancelled once, one offer (and
// one mail) to Bob.
func TestCrashDuringFallback(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"before_finish", "after_finish"} {
		mail := smtptest.Start(t)
		mail.Reject = func(rcpt string) error {
			if strings.HasPrefix(rcpt, "ann") {
				return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
			}
			return nil
		}
		db := filepath.Join(t.TempDir(), "n.db")
		p := startProc(t, db, mail.Addr, "NEXTUP_TEST_CRASH_AT=relay:"+point, "NEXTUP_TEST_CRASH_MATCH=ann@example.com")
		w := &crashWorld{}
		w.setUp(t, p)
		p.call(t, "POST", "/v1/businesses/"+w.bid+"/waitlist:join", w.key, `{"name":"Ann","email":"ann@example.com","service":"cut"}`, 201)
		p.call(t, "POST", "/v1/businesses/"+w.bid+"/waitlist:join", w.key, `{"name":"Bob","email":"bob@example.com","service":"cut"}`, 201)
		sl := p.call(t, "POST", "/v1/businesses/"+w.bid+"/slots", w.key, fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q,"booked_seats":0}`,
			w.start.Format(time.RFC3339), w.start.Add(time.Hour).Format(time.RFC3339)), 201)
		// Under the fake clock the relay runs when the clock is moved: it
		// sends Ann's offer, and the process dies.
		if a, err := p.send("POST", "/v1/debug/clock", "adm", "", `{"advance_seconds":1}`); err == nil {
			t.Fatalf("%s: the relay's round answered %d %s; want the process to die", point, a.status, a.body)
		}
		p.died(t, "relay:"+point)
		p = startProc(t, db, mail.Addr)
		// Past the dead process's lease on the message (a minute): the
		// relay takes it again if its outcome was never recorded.
		p.call(t, "POST", "/v1/debug/clock", "adm", `{"advance_seconds":120}`, 200)

		offers := p.call(t, "GET", "/v1/slots/"+sl["id"].(string), w.key, "", 200)["offers"].([]any)
		if len(offers) != 2 {
			t.Fatalf("%s: offers of the slot: %v, want Ann's ended and Bob's", point, offers)
		}
		ann, bob := offers[0].(map[string]any), offers[1].(map[string]any)
		if ann["state"] != "cancelled" || bob["state"] != "offered" {
			t.Errorf("%s: Ann's offer %v, Bob's %v; want cancelled (no channel) and offered", point, ann["state"], bob["state"])
		}
		audit := p.call(t, "GET", "/v1/slots/"+sl["id"].(string)+"/audit", w.key, "", 200)["events"].([]any)
		ended := 0
		for _, e := range audit {
			if e := e.(map[string]any); e["subject_id"] == ann["id"] && e["to"] == "cancelled" {
				ended++
			}
		}
		if ended != 1 {
			t.Errorf("%s: Ann's offer ended %d times in the audit, want once", point, ended)
		}
		msgs := p.call(t, "GET", "/v1/businesses/"+w.bid+"/messages?to=ann@example.com", w.key, "", 200)["messages"].([]any)
		if len(msgs) != 1 || msgs[0].(map[string]any)["state"] != "dead" {
			t.Errorf("%s: Ann's messages %v, want her offer, dead", point, msgs)
		}
		toBob := 0
		for _, m := range mail.Mails() {
			if slices.Contains(m.To, "bob@example.com") {
				toBob++
			}
		}
		if toBob != 1 {
			t.Errorf("%s: %d mails to Bob, want his one offer", point, toBob)
		}
		p.stop()
	}
}

// TestCrashDuringBookingSystemClaim: for a business whose own booking
// system must confirm each claim, a keyed claim commits the claim before
// it calls that system (no transaction is held across the call), keeping
// its Idempotency-Key's record running with the calendar link's token,
// sealed. `nextup serve` dies right after that commit; the retry with the
// same key on the restarted server resumes the claim: the booking system
// is asked (with the booking's id as its key), the booking confirmed once,
// and the answer carries the calendar link the first run made.
func TestCrashDuringBookingSystemClaim(t *testing.T) {
	t.Parallel()
	var asked []string
	var mu sync.Mutex
	booksys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(booksys.Close)
	mail := smtptest.Start(t)
	db := filepath.Join(t.TempDir(), "n.db")
	p := startProc(t, db, mail.Addr, "NEXTUP_TEST_CRASH_AT=service:after_phase_commit")
	w := &crashWorld{}
	w.setUp(t, p)
	p.call(t, "PATCH", "/v1/businesses/"+w.bid, w.key, `{"booking_url":"`+booksys.URL+`/book"}`, 200)
	tok := w.offerToken(t, p, 1)
	path := "/v1/claims/" + tok + ":accept"
	if a, err := p.send("POST", path, "", "claim-1", ""); err == nil {
		t.Fatalf("the claim answered %d %s; want the process to die", a.status, a.body)
	}
	p.died(t, "service:after_phase_commit")
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("the booking system was asked %d times before the crash, want none", len(asked))
	}
	mu.Unlock()

	p = startProc(t, db, mail.Addr)
	retry, err := p.send("POST", path, "", "claim-1", "")
	if err != nil {
		t.Fatal(err)
	}
	res := retry.json(t)
	if retry.status != 200 || res["state"] != "claimed" || retry.replayed {
		t.Fatalf("resumed claim: %d %s (replayed %v), want 200 claimed, run again", retry.status, retry.body, retry.replayed)
	}
	cal, _ := res["calendar_url"].(string)
	if cal == "" {
		t.Fatalf("resumed claim answered without the calendar link the first run made: %s", retry.body)
	}
	if r, err := http.Get(cal); err != nil || r.StatusCode != 200 {
		t.Errorf("calendar link %s: %v %v", cal, r, err)
	} else {
		r.Body.Close()
	}
	again, err := p.send("POST", path, "", "claim-1", "")
	if err != nil || !again.replayed || !bytes.Equal(again.body, retry.body) {
		t.Errorf("a second retry: %d %s (replayed %v), want the first retry's answer replayed", again.status, again.body, again.replayed)
	}
	mu.Lock()
	defer mu.Unlock()
	booking := res["booking"].(map[string]any)["id"].(string)
	if len(asked) != 1 || asked[0] != booking {
		t.Errorf("the booking system was asked with keys %v, want once with the booking's id %s", asked, booking)
	}
}

// TestCrashDuringPaidRegistration: a keyed registration for a paid event
// commits the registration before it calls Stripe for the checkout (no
// transaction is held across the call) and dies right after that commit.
// The retry with the same key resumes it: one registration, answered with
// its status link and a checkout, not already_registered; a second retry
// replays that answer.
func TestCrashDuringPaidRegistration(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t)
	stripeURL := stripetest.Start(t)
	stripe := []string{"--stripe-secret-key", "sk_test_crash", "--stripe-webhook-secret", "whsec_crash", "--stripe-api-base", stripeURL}
	db := filepath.Join(t.TempDir(), "n.db")
	p := startProcArgs(t, db, mail.Addr, []string{"NEXTUP_TEST_CRASH_AT=service:after_phase_commit"}, stripe...)
	w := &crashWorld{}
	w.setUp(t, p)
	start := w.start.Add(24 * time.Hour)
	ev := p.call(t, "POST", "/v1/businesses/"+w.bid+"/events", w.key, fmt.Sprintf(`{"title":"Supper","starts_at":%q,"ends_at":%q,"capacity":4,"price_cents":2500}`,
		start.Format(time.RFC3339), start.Add(2*time.Hour).Format(time.RFC3339)), 201)
	path := "/v1/events/" + ev["id"].(string) + "/registrations"
	body := `{"name":"Ann","email":"ann@example.com"}`
	if a, err := p.send("POST", path, w.key, "reg-1", body); err == nil {
		t.Fatalf("the registration answered %d %s; want the process to die", a.status, a.body)
	}
	p.died(t, "service:after_phase_commit")

	p = startProcArgs(t, db, mail.Addr, nil, stripe...)
	retry, err := p.send("POST", path, w.key, "reg-1", body)
	if err != nil {
		t.Fatal(err)
	}
	res := retry.json(t)
	if retry.status != 201 || res["state"] != "offered" || retry.replayed ||
		!strings.HasPrefix(fmt.Sprint(res["checkout_url"]), "https://checkout.stripe.com/") || fmt.Sprint(res["status_url"]) == "" {
		t.Fatalf("resumed registration: %d %s (replayed %v), want 201 offered with its status link and checkout, run again", retry.status, retry.body, retry.replayed)
	}
	status := fmt.Sprint(res["status_url"])
	tok := status[strings.LastIndex(status, "/")+1:]
	if st := p.call(t, "GET", "/v1/status/"+tok, "", "", 200); st["state"] != "offered" {
		t.Errorf("the status link of the resumed registration: %v", st)
	}
	again, err := p.send("POST", path, w.key, "reg-1", body)
	if err != nil || !again.replayed || !bytes.Equal(again.body, retry.body) {
		t.Errorf("a second retry: %d %s (replayed %v), want the first retry's answer replayed", again.status, again.body, again.replayed)
	}
	if regs := p.call(t, "GET", path, w.key, "", 200)["registrations"].([]any); len(regs) != 1 {
		t.Errorf("%d registrations, want Ann once", len(regs))
	}
}
