package timer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/timer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the tests' start time: far from the wall clock, with microseconds
// (the store's precision), so a sweeper that reads the wall clock shows.
var t0 = time.Date(2031, time.March, 10, 9, 0, 0, 0, time.UTC).Add(123456 * time.Microsecond)

var errBoom = errors.New("boom")

// bundle is one test's world: a fresh SQLite store, a fake clock, a
// recording handler and a sweeper wired to them.
type bundle struct {
	t     *testing.T
	ctx   context.Context
	st    nextup.Store
	clock *nextup.FakeClock
	h     *recorder
	sw    *timer.Sweeper
	logs  *syncBuffer
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
	h := &recorder{st: db, clock: clock, failures: map[string]int{}}
	logs := &syncBuffer{}
	sw := &timer.Sweeper{
		Store: db, Clock: clock, Handler: h, Owner: "test",
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}
	return &bundle{t: t, ctx: ctx, st: db, clock: clock, h: h, sw: sw, logs: logs}
}

// schedule stores a timer with this key due at due.
func (b *bundle) schedule(key string, due time.Time) {
	b.t.Helper()
	err := b.st.InTx(b.ctx, func(tx nextup.Tx) error {
		return tx.TimerSchedule(b.ctx, nextup.Timer{
			BusinessID: "biz_1", Kind: "test", SubjectID: key, Key: key, DueAt: due, CreatedAt: b.clock.Now(),
		})
	})
	if err != nil {
		b.t.Fatal(err)
	}
}

// fired is the handler's visible effect: one audit row per successful
// firing, in commit order.
type firing struct {
	Key string
	At  time.Time
}

func (b *bundle) fired() []firing {
	b.t.Helper()
	var evs []nextup.AuditEvent
	err := b.st.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		evs, err = tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: "biz_1"})
		return err
	})
	if err != nil {
		b.t.Fatal(err)
	}
	out := make([]firing, len(evs))
	for i, ev := range evs {
		out[i] = firing{ev.SubjectID, ev.At}
	}
	return out
}

func (b *bundle) pending() []nextup.Timer {
	b.t.Helper()
	var ts []nextup.Timer
	err := b.st.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		ts, err = tx.TimerList(b.ctx, nextup.TimerFilter{PendingOnly: true})
		return err
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return ts
}

func (b *bundle) wantFired(want ...firing) {
	b.t.Helper()
	got := b.fired()
	if len(got) != len(want) {
		b.t.Fatalf("fired %d timers, want %d:\n got  %s\n want %s", len(got), len(want), fmtFirings(got), fmtFirings(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key || !got[i].At.Equal(want[i].At) {
			b.t.Fatalf("firings differ at %d:\n got  %s\n want %s", i, fmtFirings(got), fmtFirings(want))
		}
	}
}

func fmtFirings(fs []firing) string {
	var buf bytes.Buffer
	for _, f := range fs {
		fmt.Fprintf(&buf, "%s@%s ", f.Key, f.At.Sub(t0))
	}
	return buf.String()
}

// recorder is the Handler of these tests. Like the real handlers it does
// its effect (an audit row) and marks the timer done in one transaction,
// then runs an optional follow-up in the same transaction. It fails on
// demand, before touching the store.
type recorder struct {
	st    nextup.Store
	clock nextup.Clock

	mu       sync.Mutex
	failures map[string]int // key -> failures left; negative fails forever
	then     func(ctx context.Context, tx nextup.Tx, t nextup.Timer, now time.Time) error
	notify   chan nextup.Timer // when set, receives every finished timer
}

func (r *recorder) failN(key string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures[key] = n
}

func (r *recorder) HandleTimer(ctx context.Context, t nextup.Timer) error {
	r.mu.Lock()
	n := r.failures[t.Key]
	if n > 0 {
		r.failures[t.Key] = n - 1
	}
	then, notify := r.then, r.notify
	r.mu.Unlock()
	if n != 0 {
		return fmt.Errorf("handle %s: %w", t.Key, errBoom)
	}
	now := r.clock.Now()
	err := r.st.InTx(ctx, func(tx nextup.Tx) error {
		err := tx.AuditAppend(ctx, nextup.AuditEvent{
			BusinessID: t.BusinessID, At: now, Actor: nextup.ActorTimer,
			SubjectType: "timer", SubjectID: t.Key, To: "fired", Reason: t.Kind,
		})
		if err != nil {
			return err
		}
		if err := tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, now); err != nil {
			return fmt.Errorf("timer done %d: %w", t.ID, err)
		}
		if then != nil {
			return then(ctx, tx, t, now)
		}
		return nil
	})
	if err == nil && notify != nil {
		notify <- t
	}
	return err
}

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func TestRunDueFiresOnlyDueTimers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.schedule("late", t0.Add(-time.Minute))
	b.schedule("now", t0)
	b.schedule("soon", t0.Add(time.Second))

	n, err := b.sw.RunDue(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("RunDue handled %d, want 2", n)
	}
	b.wantFired(firing{"late", t0}, firing{"now", t0})
	if p := b.pending(); len(p) != 1 || p[0].Key != "soon" {
		t.Errorf("pending = %v, want only soon", p)
	}

	// Nothing new is due: a second sweep does nothing.
	if n, err := b.sw.RunDue(b.ctx); err != nil || n != 0 {
		t.Errorf("second RunDue = %d, %v; want 0, nil", n, err)
	}

	b.clock.Advance(time.Second)
	if n, err := b.sw.RunDue(b.ctx); err != nil || n != 1 {
		t.Errorf("RunDue at the due time = %d, %v; want 1, nil", n, err)
	}
	b.wantFired(firing{"late", t0}, firing{"now", t0}, firing{"soon", t0.Add(time.Second)})
}

func TestRunDueDrainsInBatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sw.Batch = 2
	var want []firing
	for i := range 7 {
		key := fmt.Sprintf("t%d", i)
		b.schedule(key, t0.Add(-time.Duration(7-i)*time.Minute))
		want = append(want, firing{key, t0})
	}
	n, err := b.sw.RunDue(b.ctx)
	if err != nil || n != 7 {
		t.Fatalf("RunDue = %d, %v; want 7, nil", n, err)
	}
	b.wantFired(want...) // oldest due first
}

func TestHandlerFailureIsRetriedWhenTheLeaseLapses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sw.Lease = 30 * time.Second
	b.schedule("flaky", t0)
	b.h.failN("flaky", 1)

	n, err := b.sw.RunDue(b.ctx)
	if err != nil || n != 0 {
		t.Fatalf("RunDue = %d, %v; want 0 handled and no error (failures are logged)", n, err)
	}
	if logs := b.logs.String(); !bytes.Contains([]byte(logs), []byte("boom")) || !bytes.Contains([]byte(logs), []byte("key=flaky")) {
		t.Errorf("the failure was not logged with its key and error: %q", logs)
	}
	// Still leased: a sweep before the lease lapses leaves it alone.
	b.clock.Advance(29 * time.Second)
	if n, err := b.sw.RunDue(b.ctx); err != nil || n != 0 {
		t.Fatalf("RunDue inside the lease = %d, %v; want 0, nil", n, err)
	}
	b.wantFired()

	b.clock.Advance(time.Second)
	if n, err := b.sw.RunDue(b.ctx); err != nil || n != 1 {
		t.Fatalf("RunDue after the lease = %d, %v; want 1, nil", n, err)
	}
	b.wantFired(firing{"flaky", t0.Add(30 * time.Second)})
	if p := b.pending(); len(p) != 0 {
		t.Errorf("pending after success = %v", p)
	}
}

func TestTwoSweepersFireEachTimerOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const timers = 40
	for i := range timers {
		b.schedule(fmt.Sprintf("t%02d", i), t0.Add(-time.Duration(i)*time.Second))
	}
	other := &timer.Sweeper{Store: b.st, Clock: b.clock, Handler: b.h, Owner: "other", Batch: 3}
	b.sw.Batch = 5
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i, s := range []*timer.Sweeper{b.sw, other} {
		wg.Go(func() {
			n, err := s.RunDue(b.ctx)
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	if counts[0]+counts[1] != timers {
		t.Errorf("handled %d + %d, want %d in all", counts[0], counts[1], timers)
	}
	seen := map[string]int{}
	for _, f := range b.fired() {
		seen[f.Key]++
	}
	if len(seen) != timers {
		t.Errorf("%d distinct timers fired, want %d", len(seen), timers)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("timer %s fired %d times", k, n)
		}
	}
}

func TestRunSweepsOnWakeAndStops(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.h.notify = make(chan nextup.Timer, 10)
	b.sw.Poll = time.Hour // only a Wake (or the first sweep) can fire a timer here
	b.schedule("before-start", t0)

	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.sw.Run(ctx) }()

	waitFor := func(key string) {
		t.Helper()
		select {
		case got := <-b.h.notify:
			if got.Key != key {
				t.Fatalf("fired %s, want %s", got.Key, key)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("timer %s did not fire", key)
		}
	}
	waitFor("before-start") // Run sweeps at once when it starts

	b.schedule("woken", t0)
	b.sw.Wake()
	b.sw.Wake() // wake-ups merge and never block
	waitFor("woken")

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v on cancellation, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop after its context was cancelled")
	}
	b.wantFired(firing{"before-start", t0}, firing{"woken", t0})
}

func TestRunPolls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.h.notify = make(chan nextup.Timer, 10)
	b.sw.Poll = 5 * time.Millisecond
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.sw.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	// Due by the fake clock only after it moves: the poll picks it up
	// without a Wake.
	b.schedule("polled", t0.Add(time.Minute))
	b.clock.Advance(time.Minute)
	select {
	case got := <-b.h.notify:
		if got.Key != "polled" {
			t.Fatalf("fired %s", got.Key)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the poll did not fire the due timer")
	}
}

func TestRunNeedsItsParts(t *testing.T) {
	t.Parallel()
	for _, s := range []*timer.Sweeper{{}, {Clock: nextup.NewFakeClock(t0)}} {
		if err := s.Run(t.Context()); err == nil {
			t.Errorf("Run on %+v succeeded", s)
		}
		if _, err := s.RunDue(t.Context()); err == nil {
			t.Errorf("RunDue on %+v succeeded", s)
		}
	}
}

func TestRunDueSkipsTimersWhoseLeaseRanOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sw.Lease = 30 * time.Second
	// The first handler is so slow that the rest of the batch's leases
	// lapse meanwhile; another sweeper may have them now, so this one
	// must leave them.
	b.h.then = func(ctx context.Context, tx nextup.Tx, tm nextup.Timer, now time.Time) error {
		if tm.Key == "slow" {
			b.clock.Advance(time.Minute)
		}
		return nil
	}
	b.schedule("slow", t0.Add(-2*time.Second))
	b.schedule("next", t0.Add(-time.Second))
	n, err := b.sw.RunDue(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The sweep goes on with a fresh claim at the new time, so "next" is
	// still fired, once, by this call.
	if n != 2 {
		t.Errorf("RunDue handled %d, want 2", n)
	}
	b.wantFired(firing{"slow", t0}, firing{"next", t0.Add(time.Minute)})
	var all []nextup.Timer
	err = b.st.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		all, err = tx.TimerList(b.ctx, nextup.TimerFilter{SubjectID: "next"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].DoneAt == nil || all[0].Attempts != 2 {
		t.Errorf("next = %+v; want done after a second claim (attempts 2), not run on the lapsed one", all)
	}
}

// blocker is a Handler whose timers run until released, as a slow handler
// (a claim that asks a booking system) does, or until ctx ends, as a
// handler of a process that dies never finishes.
type blocker struct {
	st      nextup.Store
	clock   nextup.Clock
	started chan nextup.Timer
	release chan struct{}
}

func (h *blocker) HandleTimer(ctx context.Context, t nextup.Timer) error {
	h.started <- t
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-h.release:
	}
	now := h.clock.Now()
	return h.st.InTx(ctx, func(tx nextup.Tx) error { return tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, now) })
}

// manualTicks hands a sweeper renewal ticks the test sends by hand.
func manualTicks(sw *timer.Sweeper) chan time.Time {
	ch := make(chan time.Time)
	timer.SetRenewTicks(sw, func() (<-chan time.Time, func()) { return ch, func() {} })
	return ch
}

func TestLeaseIsRenewedWhileTheHandlerRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := &blocker{st: b.st, clock: b.clock, started: make(chan nextup.Timer, 1), release: make(chan struct{})}
	b.sw.Handler = h
	ticks := manualTicks(b.sw)
	b.schedule("slow", t0)
	done := make(chan error, 1)
	go func() {
		n, err := b.sw.RunDue(b.ctx)
		if err == nil && n != 1 {
			err = fmt.Errorf("RunDue handled %d, want 1", n)
		}
		done <- err
	}()
	<-h.started
	// Long past the lease it was claimed with, the handler still runs;
	// each tick renews the lease from the clock's time. The second send
	// returns only once the first renewal is written.
	lease := timer.DefaultLease
	for range 3 {
		b.clock.Advance(lease - time.Second)
		ticks <- b.clock.Now()
		ticks <- b.clock.Now()
	}
	p := b.pending()
	if len(p) != 1 {
		t.Fatalf("pending timers: %d, want the slow one", len(p))
	}
	if end, _ := p[0].LeasedUntil(); !end.After(b.clock.Now()) {
		t.Fatalf("lease ends at %s, not after now %s: not renewed", end.Sub(t0), b.clock.Now().Sub(t0))
	}
	other := &timer.Sweeper{Store: b.st, Clock: b.clock, Handler: b.h, Owner: "other"}
	if n, err := other.RunDue(b.ctx); err != nil || n != 0 {
		t.Errorf("another sweeper while the lease is renewed: handled %d (%v), want none", n, err)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p := b.pending(); len(p) != 0 {
		t.Errorf("pending after the handler returned: %+v, want none", p)
	}
	if got := b.fired(); len(got) != 0 {
		t.Errorf("the other sweeper fired %v, want nothing", got)
	}
}

// TestTimersOfADeadSweeperComeBackWithinTheLease: a process dies while a
// handler runs (here: its handler never returns and no renewal comes);
// another process fires the timer once the default lease has passed, a
// few seconds after it was due, not half a minute.
func TestTimersOfADeadSweeperComeBackWithinTheLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := &blocker{st: b.st, clock: b.clock, started: make(chan nextup.Timer, 1), release: make(chan struct{})}
	dead := &timer.Sweeper{Store: b.st, Clock: b.clock, Handler: h, Owner: "dead"}
	manualTicks(dead) // a dead process renews nothing
	b.schedule("a", t0)
	b.schedule("b", t0)
	ctx, kill := context.WithCancel(b.ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_, _ = dead.RunDue(ctx)
	}()
	<-h.started
	const takeover = 5 * time.Second // "within a few seconds"
	b.clock.Advance(takeover)
	n, err := b.sw.RunDue(b.ctx)
	if err != nil || n != 2 {
		t.Errorf("the survivor, %v after the crash: handled %d (%v), want both timers", takeover, n, err)
	}
	b.wantFired(firing{"a", t0.Add(takeover)}, firing{"b", t0.Add(takeover)})
	kill()
	<-stopped
}
