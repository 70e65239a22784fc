package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/web/webtest"
)

// instance is one `nextup serve` process of the multi-instance test.
type instance struct {
	name string
	base string
	cmd  *exec.Cmd
	logs *syncBuffer
	dead atomic.Bool
	done chan struct{} // closed when the process has exited
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startInstance runs `nextup serve` on db with a fake clock (unless extra
// says otherwise), sending email through the SMTP server at smtpAddr, and
// waits until it is healthy.
func startInstance(t *testing.T, name, db, smtpAddr string, extra ...string) *instance {
	t.Helper()
	return startInstanceEnv(t, name, db, smtpAddr, nil, extra...)
}

// startInstanceEnv is startInstance with more environment for the process.
func startInstanceEnv(t *testing.T, name, db, smtpAddr string, env []string, extra ...string) *instance {
	t.Helper()
	addr := freeAddr(t)
	in := &instance{name: name, base: "http://" + addr, logs: &syncBuffer{}, done: make(chan struct{})}
	args := append([]string{"serve", "--addr", addr, "--db", db, "--clock", "fake", "--instance", name,
		"--smtp-url", "smtp://" + smtpAddr + "?tls=none", "--mail-from", "Salon <offers@salon.test>"}, extra...)
	in.cmd = exec.Command(os.Args[0], args...)
	in.cmd.Env = append(append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1", "NEXTUP_ADMIN_TOKEN=adm"), env...)
	in.cmd.Stdout, in.cmd.Stderr = in.logs, in.logs
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = in.cmd.Wait(); close(in.done) }()
	t.Cleanup(func() {
		_ = in.cmd.Process.Kill()
		<-in.done
		if t.Failed() {
			t.Logf("--- %s logs:\n%s", name, in.logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(in.base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return in
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became healthy: %v\n%s", name, err, in.logs.String())
		}
		time.Sleep(50 * time.Millisecond) // polling a process start, not waiting for a timer
	}
}

// cluster sends requests to a set of instances, moving on to the next
// live one when an instance does not answer (it was killed): a POST is
// repeated there with the same Idempotency-Key, as a load balancer's
// client would.
type cluster struct {
	t      *testing.T
	all    []*instance
	client *http.Client
	keys   atomic.Int64
}

type reply struct {
	status int
	body   map[string]any
	via    string
}

func (c *cluster) live() []*instance {
	var out []*instance
	for _, in := range c.all {
		if !in.dead.Load() {
			out = append(out, in)
		}
	}
	return out
}

// apiClient is the client of the tests that talk to `nextup serve`: every
// exchange it makes is held to the API contract (web/openapi.json), so a
// response of a real server process that the document does not describe
// fails the test.
func apiClient(t *testing.T) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: webtest.Transport(t, nil)}
}

// newKey returns a fresh Idempotency-Key.
func (c *cluster) newKey() string {
	return fmt.Sprintf("k%d-%d", time.Now().UnixNano(), c.keys.Add(1))
}

// do sends one request, starting with instance i (mod the live ones).
func (c *cluster) do(i int, method, path, bearer, body string) (reply, error) {
	return c.doKey(c.newKey(), i, method, path, bearer, body)
}

// doKey is do with the Idempotency-Key of a POST given.
func (c *cluster) doKey(key string, i int, method, path, bearer, body string) (reply, error) {
	var lastErr error
	for attempt := range 2 * len(c.all) {
		live := c.live()
		if len(live) == 0 {
			return reply{}, errors.New("no live instance")
		}
		in := live[(i+attempt)%len(live)]
		req, err := http.NewRequest(method, in.base+path, strings.NewReader(body))
		if err != nil {
			return reply{}, err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if method == http.MethodPost {
			req.Header.Set("Idempotency-Key", key)
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := c.client.Do(req)
		if err != nil {
			lastErr = fmt.Errorf("%s %s via %s: %w", method, path, in.name, err)
			continue // the instance is gone (or going): try the next one
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			lastErr = err
			continue
		}
		r := reply{status: res.StatusCode, via: in.name}
		_ = json.Unmarshal(b, &r.body)
		if r.body == nil {
			r.body = map[string]any{"raw": string(b)}
		}
		return r, nil
	}
	return reply{}, lastErr
}

// must is do that fails the test unless the status is one of want.
func (c *cluster) must(i int, method, path, bearer, body string, want ...int) map[string]any {
	c.t.Helper()
	r, err := c.do(i, method, path, bearer, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, w := range want {
		if r.status == w {
			return r.body
		}
	}
	c.t.Fatalf("%s %s via %s: %d %v, want %v", method, path, r.via, r.status, r.body, want)
	return nil
}

// setClock moves every live instance's fake clock to at, at once, so that
// their sweepers and relays run concurrently on the shared database.
func (c *cluster) setClock(at time.Time) {
	c.t.Helper()
	var wg sync.WaitGroup
	for _, in := range c.live() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, in.base+"/v1/debug/clock",
				strings.NewReader(fmt.Sprintf(`{"set":%q}`, at.Format(time.RFC3339Nano))))
			req.Header.Set("Authorization", "Bearer adm")
			res, err := c.client.Do(req)
			if err != nil {
				if !in.dead.Load() {
					c.t.Errorf("clock of %s: %v", in.name, err)
				}
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				c.t.Errorf("clock of %s: %d %s", in.name, res.StatusCode, b)
			}
		}()
	}
	wg.Wait()
}

var claimLink = regexp.MustCompile(`/c/([A-Za-z0-9_-]{20,})`)

// TestThreeInstances runs three real `nextup serve` processes on one
// PostgreSQL database with one SMTP server, spreads concurrent releases,
// claims (some tapped on two instances at once) and declines across them,
// kills one with SIGKILL in the middle of sending a mail, and lets the
// others run the clock on. Afterwards: the invariant holds, every offer ended exactly once,
// every due timer fired, every message reached the SMTP server, and a
// message that arrived twice carried one Message-ID (its outbox id).
func TestThreeInstances(t *testing.T) {
	db, schema, admin := pgSchema(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("NEXTUP_INSTANCES_SEED"); s != "" {
		_, _ = fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (replay the choices with NEXTUP_INSTANCES_SEED=%d; timing is the OS's)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	var rngMu sync.Mutex
	roll := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.IntN(n) }

	mail := smtptest.Start(t)
	// The three start at once and migrate the empty schema together.
	ins := make([]*instance, 3)
	var wg sync.WaitGroup
	for i := range ins {
		wg.Add(1)
		go func() { defer wg.Done(); ins[i] = startInstance(t, fmt.Sprintf("n%d", i+1), db, mail.Addr) }()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	c := &cluster{t: t, all: ins, client: apiClient(t)}
	now := time.Now().UTC().Add(time.Minute).Truncate(time.Second)
	c.setClock(now)

	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC","rules":{"quiet_hours":null}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	start := now.Add(48 * time.Hour)
	var chairs, classes []string
	for i := range 16 {
		at := start.Add(time.Duration(i) * time.Hour)
		sl := c.must(i, "POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q}`,
			at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339)), 201)
		chairs = append(chairs, sl["id"].(string))
	}
	for i := range 2 {
		at := start.Add(time.Duration(20+i) * time.Hour)
		sl := c.must(i, "POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"class","seating":"shared","capacity":6,"starts_at":%q,"ends_at":%q}`,
			at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339)), 201)
		classes = append(classes, sl["id"].(string))
	}
	var joinWG sync.WaitGroup
	for i := range 36 {
		joinWG.Add(1)
		go func() {
			defer joinWG.Done()
			svc, party := "cut", 1
			if i%3 == 2 {
				svc, party = "class", 1+i%2
			}
			c.must(i, "POST", "/v1/businesses/"+bid+"/waitlist:join", key,
				fmt.Sprintf(`{"name":"P%d","email":"p%d@example.com","service":%q,"party_size":%d}`, i, i, svc, party), 201)
		}()
	}
	joinWG.Wait()

	// Phase 1: twelve chairs released from two instances at once each (one
	// wins, the other is told not_enough_booked), class seats released
	// from all three, relays pumped on all three while this goes on.
	var ops []func(i int)
	for _, sid := range chairs[:12] {
		for range 2 {
			ops = append(ops, func(i int) {
				c.must(i, "POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200, 409)
			})
		}
	}
	for _, sid := range classes {
		for range 3 {
			ops = append(ops, func(i int) {
				c.must(i, "POST", "/v1/slots/"+sid+":release", key, `{"seats":1,"reason":"cancellation"}`, 200)
			})
		}
	}
	for range 12 {
		ops = append(ops, func(int) { c.setClock(now) })
	}
	rngMu.Lock()
	rng.Shuffle(len(ops), func(a, b int) { ops[a], ops[b] = ops[b], ops[a] })
	rngMu.Unlock()
	work := make(chan int)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				ops[k](w + k)
			}
		}()
	}
	for k := range ops {
		work <- k
	}
	close(work)
	wg.Wait()
	c.setClock(now)

	// Phase 2: customers act on the offers that reach them by mail —
	// claim (a third of the claims tapped on two instances at once),
	// decline, or let the window pass — while the survivors move time on
	// together, past claim windows and leases.
	seen := map[string]bool{}
	var declined atomic.Int64
	var claimedMu sync.Mutex
	claimed := map[string]bool{} // tokens whose claim was confirmed (a double tap confirms twice)
	freshOffers := func() []string {
		var fresh []string
		for _, m := range mail.Mails() {
			if seen[m.MessageID] || !strings.Contains(m.Subject, "claim it until") { // an offer, as its reader sees it
				continue
			}
			seen[m.MessageID] = true
			if sm := claimLink.FindStringSubmatch(m.Text); sm != nil {
				fresh = append(fresh, sm[1])
			}
		}
		return fresh
	}
	// A tap whose instance died while taking it is retried with the same
	// Idempotency-Key on another instance (doKey): the dead request
	// committed everything with its record, or nothing, so the retry
	// replays the answer or claims afresh.
	claim := func(key, tok string, i int) {
		r, err := c.doKey(key, i, "POST", "/v1/claims/"+tok+":accept", "", "")
		if err != nil {
			t.Error(err)
			return
		}
		claimedMu.Lock()
		defer claimedMu.Unlock()
		switch {
		case r.status == 200 && r.body["state"] == "claimed":
			claimed[tok] = true
		case r.status == 409 || r.status == 410:
		default:
			t.Errorf("claim via %s: %d %v", r.via, r.status, r.body)
		}
	}
	act := func(tokens []string) {
		for _, tok := range tokens {
			switch roll(10) {
			case 0, 1, 2, 3, 4: // claim; sometimes a double tap on two instances
				taps := 1 + roll(3)/2
				for k := range taps {
					wg.Add(1)
					go func() {
						defer wg.Done()
						claim(c.newKey(), tok, roll(3)+k)
					}()
				}
			case 5, 6:
				wg.Add(1)
				go func() {
					defer wg.Done()
					if r, err := c.do(roll(3), "POST", "/v1/claims/"+tok+":decline", "", ""); err != nil {
						t.Error(err)
					} else if r.status == 200 {
						declined.Add(1)
					}
				}()
			default: // never answers
			}
		}
	}

	// n3 dies in the middle of sending, while the first customers claim
	// and decline on all three instances: four more chairs are released
	// and their offers queued; the mail server keeps what it is sent but
	// holds back its answer; n3's relay leases the queued offers and
	// sends one; once it has arrived, n3 is killed with SIGKILL — it never
	// learns the send worked. The survivors send all four once n3's lease
	// lapses: one of them arrives twice, with one Message-ID.
	for _, sid := range chairs[12:] {
		c.must(0, "POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200)
	}
	first := freshOffers()
	arrivedBefore := len(mail.Mails())
	release := mail.Hold()
	go func() {
		req, _ := http.NewRequest(http.MethodPost, ins[2].base+"/v1/debug/clock", strings.NewReader(`{"advance_seconds":0}`))
		req.Header.Set("Authorization", "Bearer adm")
		if res, err := c.client.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	act(first)
	held := mail.Wait(t, arrivedBefore+1, 20*time.Second)[arrivedBefore].MessageID
	ins[2].dead.Store(true)
	if err := ins[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill n3: %v", err)
	}
	release()
	wg.Wait()

	for round := 0; round < 40; round++ {
		c.setClock(now)
		fresh := freshOffers()
		if len(fresh) == 0 && openOffers(t, admin, schema) == 0 {
			break
		}
		act(fresh)
		wg.Wait()
		// Past a 10-minute claim window and every lease, a minute at a
		// time: a relay in production sends within a second, so each
		// step lets the survivors' relays run, and what n3 had leased
		// when it died goes out once its lease lapses.
		for range 11 {
			now = now.Add(time.Minute)
			c.setClock(now)
		}
	}
	for range 120 {
		now = now.Add(time.Minute)
		c.setClock(now)
	}
	if t.Failed() {
		t.FailNow()
	}

	q := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := admin.QueryRow(ctx, strings.ReplaceAll(query, "§", schema+"."), args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	if n := q(`SELECT count(*) FROM §slots s WHERE s.booked_seats + s.held_seats > s.capacity
		OR s.held_seats <> (SELECT coalesce(sum(seats), 0) FROM §offers o WHERE o.slot_id = s.id AND o.state IN ('pending', 'offered'))
		OR s.booked_seats < (SELECT coalesce(sum(seats), 0) FROM §bookings b WHERE b.slot_id = s.id AND b.state = 'booked')`); n != 0 {
		t.Errorf("%d slots break the invariant or miscount their seats", n)
	}
	if n := q(`SELECT count(*) FROM §offers WHERE state IN ('pending', 'offered')`); n != 0 {
		t.Errorf("%d offers still live two hours after every window", n)
	}
	if n := q(`SELECT count(*) FROM §offers o WHERE
		(SELECT count(*) FROM §audit_events e WHERE e.subject_type = 'offer' AND e.subject_id = o.id
		   AND e.to_state IN ('claimed', 'declined', 'expired', 'cancelled')) <> 1`); n != 0 {
		t.Errorf("%d offers did not end exactly once", n)
	}
	offers, claimedRows := q(`SELECT count(*) FROM §offers`), q(`SELECT count(*) FROM §offers WHERE state = 'claimed'`)
	if claimedRows != len(claimed) || q(`SELECT count(*) FROM §bookings`) != claimedRows {
		t.Errorf("links told claimed: %d; claimed offers %d; bookings %d", len(claimed), claimedRows, q(`SELECT count(*) FROM §bookings`))
	}
	if n := q(`SELECT count(*) FROM §timers WHERE done_at IS NULL AND due_at <= $1`, now.UnixMicro()); n != 0 {
		t.Errorf("%d due timers never fired", n)
	}
	// No message was lost: every outbox message was sent and reached the
	// SMTP server, except an offer whose offer ended before it could be
	// sent (it is cancelled then: nobody is told of an offer that is
	// over). Every mail that arrived is an outbox message, and copies of
	// one message share its Message-ID.
	rows, err := admin.Query(ctx, `SELECT m.id, m.to_addr, m.subject, m.state, m.attempts, m.last_error,
		coalesce(o.state, '') FROM `+schema+`.messages m LEFT JOIN `+schema+`.offers o ON o.id = m.offer_id`)
	if err != nil {
		t.Fatal(err)
	}
	type message struct {
		id, to, subject, state, lastErr, offerState string
		attempts                                    int
	}
	outbox, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (message, error) {
		var m message
		return m, r.Scan(&m.id, &m.to, &m.subject, &m.state, &m.attempts, &m.lastErr, &m.offerState)
	})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]message{}
	for _, m := range outbox {
		byID[m.id+"@salon.test"] = m
	}
	arrived := map[string]int{}
	for _, m := range mail.Mails() {
		want, ok := byID[m.MessageID]
		switch {
		case !ok:
			t.Errorf("mail %q (%s) is no outbox message", m.MessageID, m.Subject)
		case m.To[0] != want.to || m.Subject != want.subject || m.Header.Get("X-Nextup-Message-Id")+"@salon.test" != m.MessageID:
			t.Errorf("mail %q went to %v with %q; the outbox says %s, %q", m.MessageID, m.To, m.Subject, want.to, want.subject)
		}
		arrived[m.MessageID]++
	}
	twice, cancelled := 0, 0
	for id, m := range byID {
		switch {
		case m.state == "cancelled" && m.offerState != "" && m.offerState != "pending" && m.offerState != "offered":
			cancelled++
		case m.state != "sent":
			t.Errorf("message %s is %s after %d attempts (%s), its offer %q", id, m.state, m.attempts, m.lastErr, m.offerState)
		case arrived[id] == 0:
			t.Errorf("message %s is sent but never arrived", id)
		}
		if arrived[id] > 1 {
			twice++
		}
	}
	t.Logf("%d offers (%d claimed, %d declined by customers), %d messages (%d cancelled unsent), %d mails, %d sent more than once (same Message-ID)",
		offers, claimedRows, declined.Load(), len(byID), cancelled, len(mail.Mails()), twice)
	if claimedRows == 0 || declined.Load() == 0 || q(`SELECT count(*) FROM §offers WHERE state = 'expired'`) == 0 {
		t.Error("the run did not exercise claims, declines and expiries")
	}
	// The mail n3 was sending when it died was sent again by a survivor —
	// unless its customer acted on the copy that did arrive first and the
	// offer ended before n3's lease lapsed.
	if m := byID[held]; arrived[held] < 2 && m.state != "cancelled" {
		t.Errorf("the mail n3 was sending when it died (%s, now %s) arrived %d times", held, m.state, arrived[held])
	}
}

// openOffers counts live offers, straight from the database.
func openOffers(t *testing.T, admin *pgx.Conn, schema string) int {
	t.Helper()
	var n int
	if err := admin.QueryRow(context.Background(), `SELECT count(*) FROM `+schema+`.offers WHERE state IN ('pending', 'offered')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTwoInstancesRealClock runs two `nextup serve` processes on the real
// clock, as in production, with their sweepers, relays and LISTEN running
// in the background: a cancellation released through one instance reaches
// the customer by mail without anyone moving a clock, the claim goes
// through the other, and the confirmation follows.
func TestTwoInstancesRealClock(t *testing.T) {
	db, _, _ := pgSchema(t)
	mail := smtptest.Start(t)
	a := startInstance(t, "a", db, mail.Addr, "--clock", "real", "--db-max-conns", "4", "--db-statement-timeout", "5s")
	b := startInstance(t, "b", db, mail.Addr, "--clock", "real", "--db-max-conns", "4", "--notify", "capture,smtp")
	c := &cluster{t: t, all: []*instance{a, b}, client: apiClient(t)}

	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC","rules":{"quiet_hours":null}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	at := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Hour)
	sl := c.must(1, "POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"cut","starts_at":%q,"ends_at":%q}`,
		at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339)), 201)
	c.must(0, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ann","email":"ann@example.com","service":"cut"}`, 201)
	c.must(0, "POST", "/v1/slots/"+sl["id"].(string)+":release", key, `{"reason":"cancellation"}`, 200)

	offer := mail.Wait(t, 1, 20*time.Second)[0]
	tok := claimLink.FindStringSubmatch(offer.Text)
	if offer.To[0] != "ann@example.com" || tok == nil {
		t.Fatalf("offer mail to %v: %q", offer.To, offer.Text)
	}
	if r := c.must(1, "POST", "/v1/claims/"+tok[1]+":accept", "", "", 200); r["state"] != "claimed" {
		t.Fatalf("claim = %v", r)
	}
	confirm := mail.Wait(t, 2, 20*time.Second)[1]
	if !strings.HasPrefix(confirm.Subject, "Booked:") || confirm.To[0] != "ann@example.com" {
		t.Fatalf("second mail: %q to %v", confirm.Subject, confirm.To)
	}
}
