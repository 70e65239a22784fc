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

// sleepByClock makes the relay wait by advancing the fake clock: pacing
// in the clock's time, with no real sleeping. It suits tests in which one
// worker at a time waits.
func (b *bundle) sleepByClock() {
	b.r.Sleep = func(ctx context.Context, d time.Duration) error {
		b.clock.Advance(d)
		return ctx.Err()
	}
}

// watchSends records the clock's time of every call to p, and fails the
// test if a message reaches the provider after its lease ran out.
func (b *bundle) watchSends(p *provider) *[]time.Time {
	var mu sync.Mutex
	var at []time.Time
	p.during = func(m nextup.Message) {
		now := b.clock.Now()
		if m.ClaimedUntil == nil || !now.Before(*m.ClaimedUntil) {
			b.t.Errorf("%s sent at +%v, its lease ran out at %v", m.ID, now.Sub(t0), m.ClaimedUntil)
		}
		mu.Lock()
		defer mu.Unlock()
		at = append(at, now)
	}
	return &at
}

// drain runs rounds until n messages have been sent in all, failing on any
// failure; it returns the sent count of every round.
func (b *bundle) drain(n int) []int {
	b.t.Helper()
	var rounds []int
	total := 0
	for total < n {
		sent, failed, err := b.r.RunOnce(b.ctx)
		if err != nil || failed != 0 {
			b.t.Fatalf("round %d: %d sent, %d failed, %v", len(rounds)+1, sent, failed, err)
		}
		if sent == 0 {
			b.t.Fatalf("round %d sent nothing, %d of %d sent", len(rounds)+1, total, n)
		}
		rounds = append(rounds, sent)
		total += sent
	}
	return rounds
}

// tps is the rate of sends from the first to the last.
func tps(at []time.Time) float64 {
	return float64(len(at)-1) / at[len(at)-1].Sub(at[0]).Seconds()
}

// A storm of 500 offers at a 10-a-second limit goes out at 10 a second,
// measured in the clock's time from the first send to the last; none is
// refused, none fails, each is sent once on its first attempt, and none
// after its lease ran out.
func TestStormIsPacedNotThrottled(t *testing.T) {
	t.Parallel()
	for _, burst := range []int{1, 10} {
		t.Run(fmt.Sprintf("burst %d", burst), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			const n, rate = 500, 10.0
			b.r.Limits = map[nextup.Channel]outbox.Limit{nextup.ChannelSMS: {TPS: rate, Burst: burst}}
			b.r.Batch = n
			b.sleepByClock()
			at := b.watchSends(b.sms)
			for range n {
				b.message()
			}
			rounds := b.drain(n)
			got := tps(*at)
			t.Logf("burst %d: %d sends in %v of clock time: %.3f a second; rounds %v", burst, len(*at), (*at)[n-1].Sub((*at)[0]), got, rounds)
			if got < rate*0.95 || got > rate*1.05 {
				t.Errorf("%.3f sends a second, want %.0f ±5%%", got, rate)
			}
			// A round claims what 10/s can send in half the one-minute
			// lease (and the bucket's tokens), not all 500.
			if want := burst + int(rate*outbox.DefaultLease.Seconds()/2); rounds[0] != want {
				t.Errorf("first round sent %d, want %d", rounds[0], want)
			}
			for i := 1; i <= n; i++ {
				id := fmt.Sprintf("msg_%03d", i)
				if got := b.get(id); got.State != nextup.MessageSent || got.Attempts != 1 || b.sms.callsFor(id) != 1 {
					t.Fatalf("%s: %s after %d attempts, %d calls; want sent on the first", id, got.State, got.Attempts, b.sms.callsFor(id))
				}
			}
		})
	}
}

// account is a test provider on a named provider account.
type account struct {
	*provider
	name string
}

func (a account) Account() string { return a.name }

// Channels whose senders share a provider account share its bucket (at
// the lower of their rates); channels on separate accounts each get their
// own.
func TestChannelsSharingAnAccountShareItsBucket(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		email      string // the email sender's account; sms is on acct_1
		emailLimit outbox.Limit
		elapsed    time.Duration // clock time to send 20 texts and 20 emails
	}{
		// 20 tokens in the bucket: 20 at once, then 20 at 10/s.
		{"shared", "acct_1", outbox.Limit{TPS: 10, Burst: 20}, 2 * time.Second},
		// The lower rate and burst: 10 at once, 30 at 5/s.
		{"shared at the lower limit", "acct_1", outbox.Limit{TPS: 5, Burst: 10}, 6 * time.Second},
		// 20 tokens each: all at once.
		{"separate", "acct_2", outbox.Limit{TPS: 10, Burst: 20}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			email := newProvider(nextup.ChannelEmail)
			b.r.Senders = map[nextup.Channel]nextup.Sender{
				nextup.ChannelSMS:   account{b.sms, "acct_1"},
				nextup.ChannelEmail: account{email, tt.email},
			}
			b.r.Limits = map[nextup.Channel]outbox.Limit{
				nextup.ChannelSMS:   {TPS: 10, Burst: 20},
				nextup.ChannelEmail: tt.emailLimit,
			}
			b.r.Batch = 100
			b.sleepByClock()
			for i := range 40 {
				b.message(func(m *nextup.Message) {
					if i%2 == 1 {
						m.Channel, m.To = nextup.ChannelEmail, "ann@example.com"
					}
				})
			}
			b.runOnce(40, 0)
			if b.sms.total() != 20 || email.total() != 20 {
				t.Errorf("calls: %d texts, %d emails; want 20 and 20", b.sms.total(), email.total())
			}
			if got := b.clock.Now().Sub(t0); got < tt.elapsed-time.Millisecond || got > tt.elapsed+time.Millisecond {
				t.Errorf("sending took %v of clock time, want %v", got, tt.elapsed)
			}
		})
	}
}

// A round claims no more of a limited channel's messages than can be sent
// in half the lease, so none waits past its lease; the next round takes
// the next share.
func TestBatchCappedByTheLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const lease = 10 * time.Second
	b.r.Lease = lease
	b.r.Batch = 100
	b.r.Limits = map[nextup.Channel]outbox.Limit{nextup.ChannelSMS: {TPS: 2}}
	b.sleepByClock()
	at := b.watchSends(b.sms)
	for range 50 {
		b.message()
	}
	rounds := b.drain(50)
	// A full bucket's token and 2/s for 5s, then 2/s for 5s a round.
	if want := []int{11, 10, 10, 10, 9}; fmt.Sprint(rounds) != fmt.Sprint(want) {
		t.Errorf("rounds sent %v, want %v", rounds, want)
	}
	if got := tps(*at); got < 1.9 || got > 2.1 {
		t.Errorf("%.3f sends a second, want 2 ±5%%", got)
	}
	// A limit the lease cannot hold is refused: one message every 10s
	// with a 10s lease would wait past it.
	b.r.Limits[nextup.ChannelSMS] = outbox.Limit{TPS: 0.1}
	if _, _, err := b.r.RunOnce(b.ctx); err == nil || !strings.Contains(err.Error(), "two messages a lease") {
		t.Errorf("RunOnce with 0.1/s and a 10s lease = %v, want refused", err)
	}
}

// When another round on the same relay has taken the tokens, a message
// whose token would come late in its lease is not sent: it and the rest
// of its account's batch keep their leases, untouched, and go when the
// leases lapse. Nothing is sent after its lease ran out.
func TestTokenTooLateIsLeftForLater(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const lease = 10 * time.Second
	b.r.Lease = lease
	b.r.Batch = 100
	b.r.Limits = map[nextup.Channel]outbox.Limit{nextup.ChannelSMS: {TPS: 2}}
	b.watchSends(b.sms)
	for range 40 {
		b.message()
	}
	// The first wait of the outer round runs a whole inner round on the
	// same relay (as Run and the debug clock might at once), which
	// spends the tokens the outer round counted on.
	inner := -1
	b.r.Sleep = func(ctx context.Context, d time.Duration) error {
		target := b.clock.Now().Add(d)
		if inner < 0 {
			inner = 0
			var err error
			if inner, _, err = b.r.RunOnce(ctx); err != nil {
				t.Errorf("inner round: %v", err)
			}
		}
		if now := b.clock.Now(); now.Before(target) {
			b.clock.Set(target)
		}
		return ctx.Err()
	}
	outer, failed, err := b.r.RunOnce(b.ctx)
	if err != nil || failed != 0 {
		t.Fatalf("outer round: %d failed, %v", failed, err)
	}
	// Outer claimed 11 (up to +5s at 2/s), the inner round 9 (it found the
	// bucket a token short) and sent them by +5s; the outer's tokens
	// then come every 0.5s from +5s, and it stops at the first later
	// than +7.5s.
	if inner != 9 || outer != 7 {
		t.Fatalf("inner round sent %d, outer %d; want 9 and 7", inner, outer)
	}
	left := 0
	for i := 1; i <= 11; i++ {
		got := b.get(fmt.Sprintf("msg_%03d", i))
		if got.State == nextup.MessageSent {
			continue
		}
		left++
		if got.State != nextup.MessageQueued || got.Attempts != 0 || got.LastError != "" || got.ClaimedUntil == nil || !got.ClaimedUntil.Equal(t0.Add(lease)) {
			t.Errorf("%s left over: %s, %d attempts, %q, leased until %v; want queued and untouched, still leased", got.ID, got.State, got.Attempts, got.LastError, got.ClaimedUntil)
		}
	}
	if left != 4 {
		t.Errorf("%d of the outer round's 11 left, want 4", left)
	}
	// Later rounds send the rest, the left-over ones once their leases
	// lapse, each once.
	b.r.Sleep = nil
	b.sleepByClock()
	b.drain(40 - inner - outer)
	for i := 1; i <= 40; i++ {
		id := fmt.Sprintf("msg_%03d", i)
		if got := b.get(id); got.State != nextup.MessageSent || got.Attempts != 1 || b.sms.callsFor(id) != 1 {
			t.Errorf("%s: %s after %d attempts, %d calls", id, got.State, got.Attempts, b.sms.callsFor(id))
		}
	}
}

// A message waiting for its token stops waiting when the relay is
// stopped: it keeps its lease and its attempts, and the token goes back.
func TestWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.r.Limits = map[nextup.Channel]outbox.Limit{nextup.ChannelSMS: {TPS: 1.0 / 20}} // a text every 20s
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	var waited time.Duration
	b.r.Sleep = func(ctx context.Context, d time.Duration) error {
		waited = d
		cancel() // stopped while waiting
		return ctx.Err()
	}
	first, second := b.message(), b.message()
	sent, failed, err := b.r.RunOnce(ctx)
	if sent != 1 || failed != 0 || !errors.Is(err, context.Canceled) || waited != 20*time.Second {
		t.Fatalf("RunOnce = %d sent, %d failed, %v after waiting %v; want 1, 0, canceled after 20s", sent, failed, err, waited)
	}
	if got := b.get(first.ID); got.State != nextup.MessageSent {
		t.Errorf("first: %s", got.State)
	}
	if got := b.get(second.ID); got.State != nextup.MessageQueued || got.Attempts != 0 || b.sms.callsFor(second.ID) != 0 {
		t.Errorf("second: %s after %d attempts, %d calls; want queued and untouched", got.State, got.Attempts, b.sms.callsFor(second.ID))
	}
	// Its token was handed back: 20s on (not 40s) another text goes
	// without a wait (the second is still leased).
	b.r.Sleep = func(context.Context, time.Duration) error {
		t.Error("waited for a token that was handed back")
		return nil
	}
	third := b.message()
	b.clock.Advance(20 * time.Second)
	b.runOnce(1, 0)
	if b.sms.callsFor(third.ID) != 1 {
		t.Errorf("third: %d calls", b.sms.callsFor(third.ID))
	}
}

// OnAttempt hears of every recorded outcome, with the provider's time
// and how long the message had been waiting in the Clock's time.
func TestOnAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var mu sync.Mutex
	var got []outbox.Attempt
	b.r.OnAttempt = func(a outbox.Attempt) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, a)
	}
	b.r.Backoff = func(string, int) time.Duration { return time.Minute }
	// Written now, due at +10m (quiet hours); fails once, sent at +11m.
	late := b.message(func(m *nextup.Message) { m.NotBefore = t0.Add(10 * time.Minute) })
	stopped := b.message(func(m *nextup.Message) { m.Channel, m.To = nextup.ChannelEmail, "ann@example.com" })
	if err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		return tx.SuppressionAdd(b.ctx, nextup.Suppression{BusinessID: "biz_1", Channel: nextup.ChannelEmail, Address: "ann@example.com", Reason: "bounce", At: t0})
	}); err != nil {
		t.Fatal(err)
	}
	b.runOnce(0, 1) // the opted-out email: dead, no provider called
	b.sms.failNext(1, errProvider)
	b.clock.Advance(10 * time.Minute)
	b.runOnce(0, 1)
	b.clock.Advance(time.Minute)
	b.runOnce(1, 0)

	want := []struct {
		id     string
		ch     nextup.Channel
		state  nextup.MessageState
		at     time.Duration
		queued time.Duration
		called bool
	}{
		{stopped.ID, nextup.ChannelEmail, nextup.MessageDead, 0, 0, false},
		{late.ID, nextup.ChannelSMS, nextup.MessageFailed, 10 * time.Minute, 0, true},
		{late.ID, nextup.ChannelSMS, nextup.MessageSent, 11 * time.Minute, time.Minute, true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d attempts reported, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		a := got[i]
		if a.Message.ID != w.id || a.Message.Channel != w.ch || a.State != w.state || !a.At.Equal(t0.Add(w.at)) || a.Queued() != w.queued || (a.Call == 0) == w.called || a.Call < 0 {
			t.Errorf("attempt %d: %s %s %s at +%v, queued %v, call %v; want %s %s %s at +%v, queued %v, provider called %v",
				i, a.Message.ID, a.Message.Channel, a.State, a.At.Sub(t0), a.Queued(), a.Call, w.id, w.ch, w.state, w.at, w.queued, w.called)
		}
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

// Only an address's own refusal counts as the address's fault.
func TestAddressRefused(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]bool{
		nextup.Errorf(nextup.ErrInvalid, outbox.CodeOptedOut, "x"): true,
		nextup.Errorf(nextup.ErrInvalid, "address_refused", "x"):   true,
		nextup.Errorf(nextup.ErrInvalid, "sms_refused", "x"):       true,
		nextup.Errorf(nextup.ErrInvalid, "bad_address", "x"):       true,
		nextup.Errorf(nextup.ErrInvalid, "mail_refused", "x"):      false,
		nextup.Errorf(nextup.ErrInvalid, "sms_not_allowed", "x"):   false,
		nextup.Errorf(nextup.ErrInvalid, outbox.CodeNoSender, "x"): false,
		nextup.Errorf(nextup.ErrConflict, "address_refused", "x"):  false,
		errors.New("dial tcp: connection refused"):                 false,
	} {
		if got := outbox.AddressRefused(err); got != want {
			t.Errorf("AddressRefused(%v) = %v, want %v", err, got, want)
		}
	}
}

// A dead letter's OnDead runs in the transaction that records it dead: its
// writes commit with it. When OnDead fails, the message is still recorded
// dead (alone, with the failure logged) rather than being sent again at
// every lapse of its lease, and the rest of the batch goes on.
func TestOnDeadCommitsWithTheDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fails := b.message()
	kept := b.message()
	after := b.message()
	calls := map[string]int{}
	b.r.OnDead = func(ctx context.Context, tx nextup.Tx, m nextup.Message, sendErr error) (func(), error) {
		calls[m.ID]++
		if m.ID == fails.ID {
			// A write that must go with the failed fallback.
			if err := tx.MessageCreate(ctx, nextup.Message{ID: m.ID + "_fb", BusinessID: "biz_1", Kind: "fallback", Channel: nextup.ChannelEmail,
				To: "x@example.com", State: nextup.MessageQueued, NotBefore: m.CreatedAt, NextAttemptAt: m.CreatedAt, CreatedAt: m.CreatedAt}); err != nil {
				return nil, err
			}
			return nil, errors.New("fallback bug")
		}
		fb := nextup.Message{ID: m.ID + "_fb", BusinessID: "biz_1", Kind: "fallback", Channel: nextup.ChannelEmail,
			To: "x@example.com", State: nextup.MessageQueued, NotBefore: m.CreatedAt, NextAttemptAt: b.clock.Now().Add(time.Hour), CreatedAt: m.CreatedAt}
		return func() { calls["after:"+m.ID]++ }, tx.MessageCreate(ctx, fb)
	}
	b.r.DeadFallbackTries = 2
	refused := fmt.Errorf("%w: not a mobile number", nextup.ErrInvalid)
	b.sms.failNext(3, refused)
	// The first round: kept and after are dead with their fallbacks;
	// fails's fallback failed, so nothing of it is recorded and the round
	// says so.
	sent, failed, err := b.r.RunOnce(b.ctx)
	if err == nil || !strings.Contains(err.Error(), "fallback bug") || sent != 0 || failed != 2 {
		t.Fatalf("first round: %d sent, %d failed, %v; want 0, 2 and the fallback's error", sent, failed, err)
	}
	if got := b.get(fails.ID); got.State == nextup.MessageDead || got.Attempts != 0 {
		t.Errorf("%s after its failed fallback: %s after %d attempts, want it still leased, nothing recorded", fails.ID, got.State, got.Attempts)
	}
	if !strings.Contains(b.logs.String(), "tried again when its lease lapses") {
		t.Errorf("the failed fallback is not logged:\n%s", b.logs.String())
	}
	// Past the lease: sent again, refused again, its fallback fails a
	// second time in a row, and the message is recorded dead without it.
	b.clock.Advance(2 * time.Minute)
	b.sms.failNext(1, refused)
	b.runOnce(0, 1)
	for _, m := range []nextup.Message{fails, kept, after} {
		if got := b.get(m.ID); got.State != nextup.MessageDead || got.Attempts != 1 {
			t.Errorf("%s: state %s after %d attempts, want dead after 1", m.ID, got.State, got.Attempts)
		}
	}
	err = b.st.Read(b.ctx, func(tx nextup.Tx) error {
		if _, err := tx.MessageGet(b.ctx, fails.ID+"_fb"); !errors.Is(err, nextup.ErrNotFound) {
			t.Errorf("the failed fallback's write: %v, want it rolled back", err)
		}
		for _, m := range []nextup.Message{kept, after} {
			if _, err := tx.MessageGet(b.ctx, m.ID+"_fb"); err != nil {
				t.Errorf("the fallback of %s: %v, want it committed with the dead letter", m.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls[fails.ID] != 2 || calls[kept.ID] != 1 || calls["after:"+kept.ID] != 1 || calls["after:"+after.ID] != 1 {
		t.Errorf("OnDead calls %v", calls)
	}
	if !strings.Contains(b.logs.String(), "recorded dead without it") {
		t.Errorf("giving the fallback up is not logged:\n%s", b.logs.String())
	}
	// Past the lease again: nothing is sent again.
	b.clock.Advance(2 * time.Minute)
	b.runOnce(0, 0)
}

// A fallback that failed once and then works commits with the dead letter
// at the next lease: a store that failed for a moment loses nothing.
func TestOnDeadFailingOnceIsTriedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.message()
	tries := 0
	b.r.OnDead = func(ctx context.Context, tx nextup.Tx, dead nextup.Message, sendErr error) (func(), error) {
		tries++
		if err := tx.MessageCreate(ctx, nextup.Message{ID: dead.ID + "_fb", BusinessID: "biz_1", Kind: "fallback", Channel: nextup.ChannelEmail,
			To: "x@example.com", State: nextup.MessageQueued, NotBefore: dead.CreatedAt, NextAttemptAt: b.clock.Now().Add(time.Hour), CreatedAt: dead.CreatedAt}); err != nil {
			return nil, err
		}
		if tries == 1 {
			return nil, errors.New("connection reset")
		}
		return nil, nil
	}
	refused := fmt.Errorf("%w: not a mobile number", nextup.ErrInvalid)
	b.sms.failNext(1, refused)
	if _, _, err := b.r.RunOnce(b.ctx); err == nil {
		t.Fatal("a round whose fallback failed returned nil")
	}
	b.clock.Advance(2 * time.Minute)
	b.sms.failNext(1, refused)
	b.runOnce(0, 1)
	if got := b.get(m.ID); got.State != nextup.MessageDead || got.Attempts != 1 {
		t.Errorf("state %s after %d attempts, want dead after 1", got.State, got.Attempts)
	}
	err := b.st.Read(b.ctx, func(tx nextup.Tx) error {
		_, err := tx.MessageGet(b.ctx, m.ID+"_fb")
		return err
	})
	if err != nil || tries != 2 {
		t.Errorf("the fallback after %d tries: %v, want it committed at the second", tries, err)
	}
}

// sendOne runs SendOne and fails the test on its error.
func (b *bundle) sendOne(id string) outbox.OneResult {
	b.t.Helper()
	res, err := b.r.SendOne(b.ctx, id)
	if err != nil {
		b.t.Fatalf("SendOne(%s) at +%v: %v", id, b.clock.Now().Sub(t0), err)
	}
	return res
}

// wantSkipped checks that SendOne skipped a message, for a reason of
// this kind.
func wantSkipped(t *testing.T, res outbox.OneResult, kind error, what string) {
	t.Helper()
	if !res.Skipped || res.State != "" || !errors.Is(res.Reason, kind) {
		t.Errorf("%s: %+v, want skipped for a reason wrapping %v", what, res, kind)
	}
}

// A queue may deliver one message's id twice: the first delivery sends
// it, the second finds it sent and sends nothing.
func TestSendOneSendsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var attempts []outbox.Attempt
	b.r.OnAttempt = func(a outbox.Attempt) { attempts = append(attempts, a) }
	m := b.message()
	if res := b.sendOne(m.ID); res != (outbox.OneResult{State: nextup.MessageSent}) {
		t.Errorf("SendOne = %+v, want sent", res)
	}
	got := b.get(m.ID)
	if got.State != nextup.MessageSent || got.Attempts != 1 || got.ProviderID != "sms-"+m.ID+"-1" {
		t.Errorf("stored: %s after %d attempts, provider id %q", got.State, got.Attempts, got.ProviderID)
	}
	if len(attempts) != 1 || attempts[0].State != nextup.MessageSent {
		t.Errorf("OnAttempt told of %+v, want one sent", attempts)
	}
	wantSkipped(t, b.sendOne(m.ID), nextup.ErrConflict, "SendOne of a sent message")
	if n := b.sms.callsFor(m.ID); n != 1 || len(attempts) != 1 {
		t.Errorf("provider called %d times, %d attempts told; want 1, 1", n, len(attempts))
	}
}

func TestSendOneUnknownIDIsSkipped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	wantSkipped(t, b.sendOne("msg_missing"), nextup.ErrNotFound, "SendOne of an id the store does not have")
	if n := b.sms.total(); n != 0 {
		t.Errorf("provider called %d times", n)
	}
}

// A failed send says when it is due again, as the batch would schedule
// it; named before then it is skipped, named then it is sent.
func TestSendOneFailedIsDueAtItsBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.message()
	b.sms.failNext(1, errProvider)
	next := t0.Add(outbox.DefaultBackoff(m.ID, 1))
	if res := b.sendOne(m.ID); res != (outbox.OneResult{State: nextup.MessageFailed, NextAttemptAt: next}) {
		t.Fatalf("SendOne = %+v, want failed, next at +%v", res, next.Sub(t0))
	}
	if got := b.get(m.ID); got.State != nextup.MessageFailed || !got.NextAttemptAt.Equal(next) || got.ClaimedUntil != nil {
		t.Errorf("stored: %s, next at +%v, lease %v; want failed, next at +%v, no lease", got.State, got.NextAttemptAt.Sub(t0), got.ClaimedUntil, next.Sub(t0))
	}
	b.clock.Set(next.Add(-time.Microsecond))
	res := b.sendOne(m.ID)
	wantSkipped(t, res, nextup.ErrConflict, "SendOne before the retry is due")
	if res.Reason != nil && !strings.Contains(res.Reason.Error(), "not due") {
		t.Errorf("the reason %q does not say the message is not due", res.Reason)
	}
	b.clock.Set(next)
	if res := b.sendOne(m.ID); res != (outbox.OneResult{State: nextup.MessageSent}) {
		t.Errorf("SendOne when due = %+v, want sent", res)
	}
	if n := b.sms.callsFor(m.ID); n != 2 {
		t.Errorf("provider called %d times, want 2", n)
	}
}

// A permanent refusal and an opted-out address go dead through SendOne as
// in a batch, with the dead letter's fallback.
func TestSendOneDead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var dead []string
	b.r.OnDead = func(ctx context.Context, tx nextup.Tx, m nextup.Message, sendErr error) (func(), error) {
		dead = append(dead, m.ID)
		return nil, nil
	}
	refused := b.message()
	b.sms.failNext(1, fmt.Errorf("%w: not a mobile number", nextup.ErrInvalid))
	if res := b.sendOne(refused.ID); res != (outbox.OneResult{State: nextup.MessageDead}) {
		t.Errorf("SendOne of a refused message = %+v, want dead", res)
	}

	stopped := b.message(func(m *nextup.Message) { m.To = "+447700900999" })
	if err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		return tx.SuppressionAdd(b.ctx, nextup.Suppression{BusinessID: "biz_1", Channel: nextup.ChannelSMS, Address: stopped.To, Reason: "STOP", At: t0})
	}); err != nil {
		t.Fatal(err)
	}
	if res := b.sendOne(stopped.ID); res != (outbox.OneResult{State: nextup.MessageDead}) {
		t.Errorf("SendOne to an opted-out address = %+v, want dead", res)
	}
	if got := b.get(stopped.ID); got.State != nextup.MessageDead || !strings.Contains(got.LastError, "opted out") || b.sms.callsFor(stopped.ID) != 0 {
		t.Errorf("the opted-out address's message: %s %q after %d sends", got.State, got.LastError, b.sms.callsFor(stopped.ID))
	}
	if len(dead) != 2 || dead[0] != refused.ID || dead[1] != stopped.ID {
		t.Errorf("OnDead ran for %v, want [%s %s]", dead, refused.ID, stopped.ID)
	}
}

// A fallback that fails is SendOne's error: the queue names the message
// again, and once the lease lapses it is sent, fallback and all.
func TestSendOneFallbackFailureIsAnError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tries := 0
	b.r.OnDead = func(ctx context.Context, tx nextup.Tx, m nextup.Message, sendErr error) (func(), error) {
		if tries++; tries == 1 {
			return nil, errors.New("connection reset")
		}
		return nil, nil
	}
	m := b.message()
	refused := fmt.Errorf("%w: not a mobile number", nextup.ErrInvalid)
	b.sms.failNext(1, refused)
	if res, err := b.r.SendOne(b.ctx, m.ID); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("SendOne with a failing fallback = %+v, %v; want the fallback's error", res, err)
	}
	wantSkipped(t, b.sendOne(m.ID), nextup.ErrConflict, "SendOne while the message is still leased")
	b.clock.Advance(outbox.DefaultLease)
	b.sms.failNext(1, refused)
	if res := b.sendOne(m.ID); res != (outbox.OneResult{State: nextup.MessageDead}) || tries != 2 {
		t.Errorf("SendOne after the lease lapsed = %+v after %d fallback tries, want dead after 2", res, tries)
	}
}

// A send whose lease ran out, and was taken over, meanwhile is Lost: the
// other relay's outcome counts.
func TestSendOneLostLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := &outbox.Relay{Store: b.st, Clock: b.clock, Default: capture.New(), Senders: map[nextup.Channel]nextup.Sender{}}
	m := b.message()
	b.sms.during = func(nextup.Message) {
		b.clock.Advance(2 * outbox.DefaultLease)
		if res, err := other.SendOne(b.ctx, m.ID); err != nil || res.State != nextup.MessageSent {
			t.Errorf("the other relay's SendOne = %+v, %v; want sent", res, err)
		}
	}
	if res := b.sendOne(m.ID); res != (outbox.OneResult{Lost: true}) {
		t.Errorf("SendOne = %+v, want lost", res)
	}
	if got := b.get(m.ID); got.State != nextup.MessageSent || got.ProviderID != "capture:"+m.ID {
		t.Errorf("state %s, provider id %q; want the other relay's outcome", got.State, got.ProviderID)
	}
}
