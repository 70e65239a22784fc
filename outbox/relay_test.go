package outbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/time/rate"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the tests' start time: far from the wall clock, with microseconds
// (the store's precision).
var t0 = time.Date(2031, time.March, 10, 9, 0, 0, 0, time.UTC).Add(123456 * time.Microsecond)

var errProvider = errors.New("provider unavailable")

// provider is a test double of an SMS or email provider behind the Sender
// seam: it fails as scripted and counts deliveries per message.
type provider struct {
	ch nextup.Channel

	mu     sync.Mutex
	fails  int   // calls left that fail with err
	err    error // what they fail with
	calls  map[string]int
	during func(m nextup.Message) // runs inside every call, unlocked: time passing at the provider
}

func newProvider(ch nextup.Channel) *provider {
	return &provider{ch: ch, calls: map[string]int{}, err: errProvider}
}

func (p *provider) failNext(n int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fails, p.err = n, err
}

func (p *provider) Channel() nextup.Channel { return p.ch }

func (p *provider) Send(ctx context.Context, m nextup.Message) (string, error) {
	p.mu.Lock()
	during := p.during
	p.mu.Unlock()
	if during != nil {
		during(m)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[m.ID]++
	if p.fails != 0 {
		if p.fails > 0 {
			p.fails--
		}
		return "", fmt.Errorf("send %s: %w", m.ID, p.err)
	}
	return fmt.Sprintf("%s-%s-%d", p.ch, m.ID, p.calls[m.ID]), nil
}

func (p *provider) callsFor(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[id]
}

func (p *provider) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		n += c
	}
	return n
}

type bundle struct {
	t     *testing.T
	ctx   context.Context
	st    nextup.Store
	clock *nextup.FakeClock
	sms   *provider
	r     *outbox.Relay
	logs  *bytes.Buffer
	n     int
}

func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "nextup.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := nextup.NewFakeClock(t0)
	sms := newProvider(nextup.ChannelSMS)
	logs := &bytes.Buffer{}
	r := &outbox.Relay{
		Store:   db,
		Clock:   clock,
		Senders: map[nextup.Channel]nextup.Sender{nextup.ChannelSMS: sms},
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
	}
	return &bundle{t: t, ctx: ctx, st: db, clock: clock, sms: sms, r: r, logs: logs}
}

// message writes a queued message, due now unless mods say otherwise.
func (b *bundle) message(mods ...func(*nextup.Message)) nextup.Message {
	b.t.Helper()
	b.n++
	now := b.clock.Now()
	m := nextup.Message{
		ID: fmt.Sprintf("msg_%03d", b.n), BusinessID: "biz_1", Kind: nextup.MessageOffer,
		Channel: nextup.ChannelSMS, To: "+447700900123", Body: "A slot opened. Claim by 4:10 pm: https://x.test/c/t",
		ClaimURL: "https://x.test/c/t", State: nextup.MessageQueued,
		NotBefore: now, NextAttemptAt: now, CreatedAt: now,
	}
	for _, mod := range mods {
		mod(&m)
	}
	if err := b.st.InTx(b.ctx, func(tx nextup.Tx) error { return tx.MessageCreate(b.ctx, m) }); err != nil {
		b.t.Fatal(err)
	}
	return m
}

func (b *bundle) get(id string) nextup.Message {
	b.t.Helper()
	var m nextup.Message
	err := b.st.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		m, err = tx.MessageGet(b.ctx, id)
		return err
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return m
}

// runOnce runs one round and checks its counts.
func (b *bundle) runOnce(wantSent, wantFailed int) {
	b.t.Helper()
	sent, failed, err := b.r.RunOnce(b.ctx)
	if err != nil {
		b.t.Fatalf("RunOnce: %v", err)
	}
	if sent != wantSent || failed != wantFailed {
		b.t.Fatalf("RunOnce at +%v = %d sent, %d failed; want %d, %d", b.clock.Now().Sub(t0), sent, failed, wantSent, wantFailed)
	}
}

func TestSendsADueMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.message()
	b.runOnce(1, 0)
	got := b.get(m.ID)
	if got.State != nextup.MessageSent {
		t.Errorf("state = %s, want sent", got.State)
	}
	if got.ProviderID != "sms-"+m.ID+"-1" {
		t.Errorf("provider id = %q", got.ProviderID)
	}
	if got.SentAt == nil || !got.SentAt.Equal(t0) {
		t.Errorf("sent at %v, want %v (the fake clock)", got.SentAt, t0)
	}
	if got.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", got.Attempts)
	}
	// Sent once: later rounds leave it alone.
	b.clock.Advance(time.Hour)
	b.runOnce(0, 0)
	if n := b.sms.callsFor(m.ID); n != 1 {
		t.Errorf("provider called %d times, want 1", n)
	}
}

func TestDefaultSenderAndMissingSender(t *testing.T) {
	t.Parallel()
	b := setup(t)
	email := b.message(func(m *nextup.Message) { m.Channel = nextup.ChannelEmail; m.To = "ann@example.com" })

	// No sender for email and no default: dead at once, saying why.
	b.runOnce(0, 1)
	got := b.get(email.ID)
	if got.State != nextup.MessageDead || !strings.Contains(got.LastError, `no sender for channel "email"`) {
		t.Fatalf("without a sender: state %s, error %q; want dead with a clear error", got.State, got.LastError)
	}

	// With a capture default, a requeued message goes through it.
	c := capture.New()
	b.r.Default = c
	requeue(t, b, email.ID)
	b.runOnce(1, 0)
	if got := b.get(email.ID); got.State != nextup.MessageSent || got.ProviderID != "capture:"+email.ID {
		t.Errorf("with a default: state %s, provider id %q", got.State, got.ProviderID)
	}
	rec, ok := c.Last("ann@example.com")
	if !ok || rec.ID != email.ID || rec.Body != email.Body || rec.ClaimURL != email.ClaimURL || rec.Channel != nextup.ChannelEmail {
		t.Errorf("capture recorded %+v, %v", rec, ok)
	}
	// A channel with its own sender does not use the default.
	sms := b.message()
	b.runOnce(1, 0)
	if b.sms.callsFor(sms.ID) != 1 || c.Len() != 1 {
		t.Errorf("sms went to the default (capture has %d, provider %d)", c.Len(), b.sms.callsFor(sms.ID))
	}
}

func requeue(t *testing.T, b *bundle, id string) {
	t.Helper()
	err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		_, err := tx.MessageRequeue(b.ctx, id, b.clock.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.message()
	b.sms.failNext(2, errProvider)
	// msg_001's schedule: 30s and 1m, moved by its own jitter.
	first, second := 26850*time.Millisecond, 64278*time.Millisecond
	if outbox.DefaultBackoff(m.ID, 1) != first || outbox.DefaultBackoff(m.ID, 2) != second {
		t.Fatalf("DefaultBackoff(%s) = %v, %v; want %v, %v", m.ID, outbox.DefaultBackoff(m.ID, 1), outbox.DefaultBackoff(m.ID, 2), first, second)
	}

	b.runOnce(0, 1) // attempt 1 fails: next in 26.85s
	got := b.get(m.ID)
	if got.State != nextup.MessageFailed || got.Attempts != 1 || !got.NextAttemptAt.Equal(t0.Add(first)) {
		t.Fatalf("after attempt 1: state %s, attempts %d, next %v; want failed, 1, +%v", got.State, got.Attempts, got.NextAttemptAt.Sub(t0), first)
	}
	if !strings.Contains(got.LastError, errProvider.Error()) {
		t.Errorf("last error = %q", got.LastError)
	}
	if !strings.Contains(b.logs.String(), "outbox send failed") {
		t.Errorf("failure not logged: %q", b.logs.String())
	}

	b.clock.Advance(first - time.Microsecond)
	b.runOnce(0, 0) // not yet due

	b.clock.Advance(time.Microsecond)
	b.runOnce(0, 1) // attempt 2 fails: next in 64.278s
	got = b.get(m.ID)
	if want := t0.Add(first + second); got.Attempts != 2 || !got.NextAttemptAt.Equal(want) {
		t.Fatalf("after attempt 2: attempts %d, next %v; want 2, %v", got.Attempts, got.NextAttemptAt.Sub(t0), want.Sub(t0))
	}

	b.clock.Advance(second - time.Microsecond)
	b.runOnce(0, 0)
	b.clock.Advance(time.Microsecond)
	b.runOnce(1, 0) // attempt 3 succeeds
	got = b.get(m.ID)
	if got.State != nextup.MessageSent || got.Attempts != 3 || got.ProviderID != "sms-"+m.ID+"-3" {
		t.Errorf("after attempt 3: %+v", got)
	}
}

func TestDeadAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.r.MaxAttempts = 3
	b.r.Backoff = func(_ string, attempt int) time.Duration { return time.Duration(attempt) * time.Minute }
	m := b.message()
	b.sms.failNext(-1, errProvider)

	b.runOnce(0, 1)
	b.clock.Advance(time.Minute)
	b.runOnce(0, 1)
	b.clock.Advance(2 * time.Minute)
	b.runOnce(0, 1)
	got := b.get(m.ID)
	if got.State != nextup.MessageDead || got.Attempts != 3 {
		t.Fatalf("after 3 attempts: state %s, attempts %d; want dead, 3", got.State, got.Attempts)
	}
	// Dead stays dead.
	b.clock.Advance(24 * time.Hour)
	b.runOnce(0, 0)
	if n := b.sms.callsFor(m.ID); n != 3 {
		t.Errorf("provider called %d times, want 3", n)
	}

	// Staff requeue it once the provider is back: it is sent.
	b.sms.failNext(0, nil)
	requeue(t, b, m.ID)
	b.runOnce(1, 0)
	if got := b.get(m.ID); got.State != nextup.MessageSent {
		t.Errorf("after requeue: state %s, want sent", got.State)
	}
}

// The default schedule end to end with the fake clock: eight attempts,
// each exactly when DefaultBackoff says, then dead; staff retry it (as
// POST /v1/messages/{id}:retry does) and it is sent.
func TestDefaultScheduleToDeadAndRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.message()
	b.sms.failNext(-1, errProvider)
	for attempt := 1; attempt <= outbox.DefaultMaxAttempts; attempt++ {
		b.runOnce(0, 1)
		got := b.get(m.ID)
		if got.Attempts != attempt {
			t.Fatalf("attempt %d: attempts = %d", attempt, got.Attempts)
		}
		if attempt == outbox.DefaultMaxAttempts {
			if got.State != nextup.MessageDead {
				t.Fatalf("after %d attempts: state %s, want dead", attempt, got.State)
			}
			break
		}
		wait := outbox.DefaultBackoff(m.ID, attempt)
		if want := b.clock.Now().Add(wait); got.State != nextup.MessageFailed || !got.NextAttemptAt.Equal(want) {
			t.Fatalf("attempt %d: state %s, next in %v; want failed, next in %v", attempt, got.State, got.NextAttemptAt.Sub(b.clock.Now()), wait)
		}
		b.clock.Advance(wait - time.Microsecond)
		b.runOnce(0, 0) // a microsecond early: not due
		b.clock.Advance(time.Microsecond)
	}
	b.clock.Advance(48 * time.Hour)
	b.runOnce(0, 0) // dead stays dead
	if n := b.sms.callsFor(m.ID); n != outbox.DefaultMaxAttempts {
		t.Fatalf("provider called %d times, want %d", n, outbox.DefaultMaxAttempts)
	}

	b.sms.failNext(0, nil)
	requeue(t, b, m.ID)
	b.runOnce(1, 0)
	if got := b.get(m.ID); got.State != nextup.MessageSent || got.SentAt == nil || !got.SentAt.Equal(b.clock.Now()) {
		t.Errorf("after the retry: state %s, sent at %v", got.State, got.SentAt)
	}
}

func TestPermanentErrorIsDeadAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.message()
	b.sms.failNext(1, fmt.Errorf("%w: not a mobile number", nextup.ErrInvalid))
	b.runOnce(0, 1)
	got := b.get(m.ID)
	if got.State != nextup.MessageDead || got.Attempts != 1 || !strings.Contains(got.LastError, "not a mobile number") {
		t.Errorf("state %s, attempts %d, error %q; want dead after 1 with the reason", got.State, got.Attempts, got.LastError)
	}
}

func TestNotBeforeIsRespected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	later := b.message(func(m *nextup.Message) { m.NotBefore = t0.Add(time.Hour) }) // end of quiet hours
	now := b.message()
	b.runOnce(1, 0)
	if b.sms.callsFor(later.ID) != 0 || b.sms.callsFor(now.ID) != 1 {
		t.Fatalf("before NotBefore: calls later=%d now=%d", b.sms.callsFor(later.ID), b.sms.callsFor(now.ID))
	}
	b.clock.Advance(time.Hour - time.Microsecond)
	b.runOnce(0, 0)
	b.clock.Advance(time.Microsecond)
	b.runOnce(1, 0)
	if got := b.get(later.ID); got.State != nextup.MessageSent || !got.SentAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("later: state %s, sent at %v", got.State, got.SentAt)
	}
}

func TestTwoRelaysSendEachMessageOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 60
	for range n {
		b.message()
	}
	b.r.Batch = 7
	other := &outbox.Relay{Store: b.st, Clock: b.clock, Senders: b.r.Senders, Batch: 5}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for _, r := range []*outbox.Relay{b.r, other} {
		wg.Go(func() {
			for {
				sent, failed, err := r.RunOnce(b.ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if failed != 0 {
					t.Errorf("%d failed", failed)
				}
				if sent == 0 {
					return
				}
				mu.Lock()
				total += sent
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if total != n {
		t.Errorf("sent %d in all, want %d", total, n)
	}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("msg_%03d", i)
		if c := b.sms.callsFor(id); c != 1 {
			t.Errorf("%s delivered %d times", id, c)
		}
	}
}

func TestRateLimitLeavesMessagesForLater(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Two SMS allowed and no refill: deterministic whatever the wall clock.
	b.r.Limits = map[nextup.Channel]*rate.Limiter{nextup.ChannelSMS: rate.NewLimiter(0, 2)}
	c := capture.New()
	b.r.Default = c
	var sms []nextup.Message
	for range 5 {
		sms = append(sms, b.message())
	}
	email := b.message(func(m *nextup.Message) { m.Channel = nextup.ChannelEmail; m.To = "ann@example.com" })

	b.runOnce(3, 0) // two SMS and the unlimited email
	for i, m := range sms {
		got := b.get(m.ID)
		switch {
		case i < 2 && got.State != nextup.MessageSent:
			t.Errorf("sms %d: state %s, want sent (oldest first)", i, got.State)
		case i >= 2 && (got.State != nextup.MessageQueued || got.Attempts != 0 || got.LastError != ""):
			t.Errorf("sms %d over the limit: state %s, attempts %d, error %q; want untouched", i, got.State, got.Attempts, got.LastError)
		}
	}
	if got := b.get(email.ID); got.State != nextup.MessageSent {
		t.Errorf("email: state %s; another channel's limit must not hold it", got.State)
	}

	// They are still leased: the next round does not claim them again.
	b.r.Limits[nextup.ChannelSMS] = rate.NewLimiter(rate.Inf, 0)
	b.runOnce(0, 0)
	// When the lease lapses they go.
	b.clock.Advance(outbox.DefaultLease)
	b.runOnce(3, 0)
	if n := b.sms.total(); n != 5 {
		t.Errorf("provider called %d times, want 5", n)
	}
}

func TestExpiredLeaseIsNotSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A provider so slow that the batch's leases run out during the first
	// send: the rest of the batch is left for a later round.
	b.sms.during = func(nextup.Message) { b.clock.Advance(2 * outbox.DefaultLease) }
	first, second := b.message(), b.message()
	b.runOnce(1, 0)
	if b.sms.callsFor(first.ID) != 1 || b.sms.callsFor(second.ID) != 0 {
		t.Fatalf("calls: first %d, second %d; want 1, 0", b.sms.callsFor(first.ID), b.sms.callsFor(second.ID))
	}
	b.sms.during = nil
	b.runOnce(1, 0)
	if got := b.get(second.ID); got.State != nextup.MessageSent || b.sms.callsFor(second.ID) != 1 {
		t.Errorf("second: %s after %d calls", got.State, b.sms.callsFor(second.ID))
	}
}

func TestLostLeaseKeepsTheOtherRelaysOutcome(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := capture.New()
	other := &outbox.Relay{Store: b.st, Clock: b.clock, Default: c, Senders: map[nextup.Channel]nextup.Sender{}}
	// While this relay's provider hangs past the lease, another relay
	// claims the message again and sends it.
	b.sms.during = func(nextup.Message) {
		b.clock.Advance(2 * outbox.DefaultLease)
		if sent, _, err := other.RunOnce(b.ctx); err != nil || sent != 1 {
			t.Errorf("other relay: %d sent, %v", sent, err)
		}
	}
	m := b.message()
	b.runOnce(0, 0) // its outcome no longer counts
	got := b.get(m.ID)
	if got.State != nextup.MessageSent || got.ProviderID != "capture:"+m.ID {
		t.Errorf("state %s, provider id %q; want the other relay's outcome", got.State, got.ProviderID)
	}
	if !strings.Contains(b.logs.String(), "lease lost") {
		t.Errorf("the lost lease was not logged: %q", b.logs.String())
	}
}

func TestDefaultBackoff(t *testing.T) {
	t.Parallel()
	// The schedule without jitter: 30s doubling to an hour.
	base := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour, time.Hour}
	for i := range 200 {
		id := fmt.Sprintf("msg_%03d", i)
		for a, want := range base {
			attempt := a + 1
			got := outbox.DefaultBackoff(id, attempt)
			if lo, hi := want*8/10, want*12/10; got < lo || got > hi {
				t.Errorf("DefaultBackoff(%s, %d) = %v, want %v ±20%%", id, attempt, got, want)
			}
			if got != got.Round(time.Millisecond) {
				t.Errorf("DefaultBackoff(%s, %d) = %v, not whole milliseconds", id, attempt, got)
			}
			if again := outbox.DefaultBackoff(id, attempt); again != got {
				t.Errorf("DefaultBackoff(%s, %d) = %v, then %v", id, attempt, got, again)
			}
		}
	}
	// One message's schedule, exactly: the jitter is a function of the id
	// and the attempt, so it can be written down.
	for _, tt := range []struct {
		attempt int
		want    time.Duration
	}{
		{0, 26850 * time.Millisecond}, // as attempt 1
		{1, 26850 * time.Millisecond},
		{2, 64278 * time.Millisecond},
		{3, 142205 * time.Millisecond},
		{7, 35*time.Minute + 7790*time.Millisecond},
		{8, 48*time.Minute + 54328*time.Millisecond},
		{10, time.Hour + 58222*time.Millisecond},
	} {
		if got := outbox.DefaultBackoff("msg_001", tt.attempt); got != tt.want {
			t.Errorf("DefaultBackoff(msg_001, %d) = %v, want %v", tt.attempt, got, tt.want)
		}
	}
}

// Messages that failed together come back spread over the jitter's
// range, not as one second storm.
func TestBackoffSpreadsRetries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.r.Batch = 100
	const n = 100
	for range n {
		b.message()
	}
	b.sms.failNext(n, errProvider)
	b.runOnce(0, n)
	at := map[time.Time]bool{}
	lo, hi := t0.Add(time.Hour), t0
	for i := 1; i <= n; i++ {
		got := b.get(fmt.Sprintf("msg_%03d", i))
		next := got.NextAttemptAt
		if want := t0.Add(outbox.DefaultBackoff(got.ID, 1)); !next.Equal(want) {
			t.Errorf("%s next at %v, want %v", got.ID, next.Sub(t0), want.Sub(t0))
		}
		at[next] = true
		if next.Before(lo) {
			lo = next
		}
		if next.After(hi) {
			hi = next
		}
	}
	// Deterministic, and spread like 100 draws from 24s..36s: (nearly) all
	// at different milliseconds, over most of the range.
	if len(at) < n-2 || hi.Sub(lo) < 10*time.Second {
		t.Errorf("retries at %d distinct times over %v; want them spread over most of 24s..36s", len(at), hi.Sub(lo))
	}
}

func TestRunSendsOnWakeAndStops(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := capture.New()
	notify := make(chan string, 10)
	b.r.Senders = map[nextup.Channel]nextup.Sender{nextup.ChannelSMS: notifying{c, notify}}
	b.r.Poll = time.Hour // only the first round or a Wake sends here

	first := b.message()
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.r.Run(ctx) }()
	wait := func(id string) {
		t.Helper()
		select {
		case got := <-notify:
			if got != id {
				t.Fatalf("sent %s, want %s", got, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not sent", id)
		}
	}
	wait(first.ID)
	second := b.message()
	b.r.Wake()
	b.r.Wake()
	wait(second.ID)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v on cancellation, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
}

// notifying tells the test when a message has been delivered.
type notifying struct {
	*capture.Sender
	sent chan<- string
}

func (n notifying) Send(ctx context.Context, m nextup.Message) (string, error) {
	id, err := n.Sender.Send(ctx, m)
	if err == nil {
		n.sent <- m.ID
	}
	return id, err
}

func TestRunNeedsAStore(t *testing.T) {
	t.Parallel()
	r := &outbox.Relay{Clock: nextup.NewFakeClock(t0)}
	if err := r.Run(t.Context()); err == nil {
		t.Error("Run without a store succeeded")
	}
}

// An opt-out is honoured before the next message, even one queued before
// it: the message goes dead saying why, and the provider never sees it.
// Other channels and other businesses are not affected.
func TestOptedOutAddressIsNotSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	stopped := b.message(func(m *nextup.Message) { m.To = "+44 7700 900123" }) // the same number, written otherwise
	email := b.message(func(m *nextup.Message) { m.Channel = nextup.ChannelEmail; m.To = "+447700900123" })
	elsewhere := b.message(func(m *nextup.Message) { m.BusinessID = "biz_2" })
	b.r.Default = newProvider(nextup.ChannelEmail)
	if err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		return tx.SuppressionAdd(b.ctx, nextup.Suppression{BusinessID: "biz_1", Channel: nextup.ChannelSMS, Address: "+447700900123", Reason: "STOP", At: b.clock.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	b.runOnce(2, 1)
	got := b.get(stopped.ID)
	if got.State != nextup.MessageDead || !strings.Contains(got.LastError, "opted out") || b.sms.callsFor(stopped.ID) != 0 {
		t.Errorf("the stopped number's text: %s %q, %d sends", got.State, got.LastError, b.sms.callsFor(stopped.ID))
	}
	for _, m := range []nextup.Message{email, elsewhere} {
		if got := b.get(m.ID); got.State != nextup.MessageSent {
			t.Errorf("message %s (%s, %s) is %s, want sent", m.ID, m.Channel, m.BusinessID, got.State)
		}
	}
}
