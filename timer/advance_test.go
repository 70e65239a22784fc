package timer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
)

func TestAdvanceFiresEachTimerAtItsDueTimeInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.schedule("c", t0.Add(60*time.Minute))
	b.schedule("a", t0.Add(5*time.Minute))
	b.schedule("b", t0.Add(10*time.Minute+time.Microsecond))
	b.schedule("edge", t0.Add(90*time.Minute)) // due exactly at the end of the window
	b.schedule("after", t0.Add(90*time.Minute+time.Microsecond))

	if err := timer.Advance(b.ctx, b.clock, b.sw, 90*time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, want := b.clock.Now(), t0.Add(90*time.Minute); !got.Equal(want) {
		t.Errorf("clock after Advance = %v, want %v", got, want)
	}
	b.wantFired(
		firing{"a", t0.Add(5 * time.Minute)},
		firing{"b", t0.Add(10*time.Minute + time.Microsecond)},
		firing{"c", t0.Add(60 * time.Minute)},
		firing{"edge", t0.Add(90 * time.Minute)},
	)
	if p := b.pending(); len(p) != 1 || p[0].Key != "after" {
		t.Errorf("pending = %v, want only after", p)
	}
}

func TestAdvanceFiresOverdueTimersAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.schedule("overdue", t0.Add(-time.Hour))
	if err := timer.Advance(b.ctx, b.clock, b.sw, 0); err != nil {
		t.Fatal(err)
	}
	b.wantFired(firing{"overdue", t0})
}

func TestAdvanceFiresTimersScheduledInsideTheWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Each firing schedules the next one ten minutes on, as an offer
	// expiry that rolls on to the next person does; the fourth stops.
	b.h.then = func(ctx context.Context, tx nextup.Tx, tm nextup.Timer, now time.Time) error {
		var n int
		fmt.Sscanf(tm.Key, "roll%d", &n)
		if n == 4 {
			return nil
		}
		return tx.TimerSchedule(ctx, nextup.Timer{
			BusinessID: tm.BusinessID, Kind: "test", Key: fmt.Sprintf("roll%d", n+1),
			DueAt: now.Add(10 * time.Minute), CreatedAt: now,
		})
	}
	b.schedule("roll1", t0.Add(10*time.Minute))
	if err := timer.Advance(b.ctx, b.clock, b.sw, 35*time.Minute); err != nil {
		t.Fatal(err)
	}
	b.wantFired(
		firing{"roll1", t0.Add(10 * time.Minute)},
		firing{"roll2", t0.Add(20 * time.Minute)},
		firing{"roll3", t0.Add(30 * time.Minute)},
	)
	if err := timer.Advance(b.ctx, b.clock, b.sw, time.Hour); err != nil {
		t.Fatal(err)
	}
	b.wantFired(
		firing{"roll1", t0.Add(10 * time.Minute)},
		firing{"roll2", t0.Add(20 * time.Minute)},
		firing{"roll3", t0.Add(30 * time.Minute)},
		firing{"roll4", t0.Add(40 * time.Minute)},
	)
}

func TestAdvanceRetriesAFailedHandlerWhenItsLeaseLapses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sw.Lease = 30 * time.Second
	b.schedule("flaky", t0.Add(time.Minute))
	b.schedule("fine", t0.Add(2*time.Minute))
	b.h.failN("flaky", 2)

	if err := timer.Advance(b.ctx, b.clock, b.sw, 5*time.Minute); err != nil {
		t.Fatalf("Advance = %v; the failures were retried and succeeded, want nil", err)
	}
	b.wantFired(
		firing{"flaky", t0.Add(time.Minute + 2*30*time.Second)}, // due, +lease, +lease
		firing{"fine", t0.Add(2 * time.Minute)},
	)
}

func TestAdvanceReportsAHandlerThatKeepsFailing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sw.Lease = time.Minute
	b.schedule("broken", t0.Add(time.Minute))
	b.schedule("fine", t0.Add(10*time.Minute))
	b.h.failN("broken", -1)

	err := timer.Advance(b.ctx, b.clock, b.sw, 15*time.Minute)
	if !errors.Is(err, errBoom) {
		t.Fatalf("Advance = %v, want an error wrapping the handler's", err)
	}
	if !strings.Contains(err.Error(), "1 timer(s) failed") {
		t.Errorf("error %q does not say how many timers failed", err)
	}
	// The window is still travelled and the other timer still fires.
	if got, want := b.clock.Now(), t0.Add(15*time.Minute); !got.Equal(want) {
		t.Errorf("clock = %v, want %v", got, want)
	}
	b.wantFired(firing{"fine", t0.Add(10 * time.Minute)})
	if p := b.pending(); len(p) != 1 || p[0].Key != "broken" || p[0].Attempts < 2 {
		t.Errorf("pending = %+v, want broken, claimed again after each lease", p)
	}
}

func TestAdvanceGivesUpOnAnEndlessChain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	timer.SetMaxSteps(b.sw, 25)
	// A broken handler that schedules its successor due at once, forever.
	b.h.then = func(ctx context.Context, tx nextup.Tx, tm nextup.Timer, now time.Time) error {
		return tx.TimerSchedule(ctx, nextup.Timer{
			BusinessID: tm.BusinessID, Kind: "test", Key: tm.Key, DueAt: now, CreatedAt: now,
		})
	}
	b.schedule("again", t0.Add(time.Minute))
	done := make(chan error, 1)
	go func() { done <- timer.Advance(b.ctx, b.clock, b.sw, time.Hour) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "gave up after 25 steps") {
			t.Fatalf("Advance = %v, want it to give up", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Advance did not return")
	}
	if n := len(b.fired()); n != 25 {
		t.Errorf("fired %d times, want one per step (25)", n)
	}
}

func TestAdvanceChecksItsArguments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := timer.Advance(b.ctx, nextup.NewFakeClock(t0), b.sw, time.Minute); err == nil {
		t.Error("Advance with a clock that is not the sweeper's succeeded")
	}
	if err := timer.Advance(b.ctx, b.clock, b.sw, -time.Minute); err == nil {
		t.Error("Advance backwards succeeded")
	}
	if !b.clock.Now().Equal(t0) {
		t.Errorf("a refused Advance moved the clock to %v", b.clock.Now())
	}
}

// TestAdvanceBesideRun is `--clock=fake`: the server's Run loop polls the
// same sweeper while the debug endpoint advances the clock. Every timer
// still fires once, at its own due time.
func TestAdvanceBesideRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sw.Poll = time.Millisecond
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.sw.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	var want []firing
	for i := range 20 {
		key := fmt.Sprintf("t%02d", i)
		due := t0.Add(time.Duration(i+1) * 7 * time.Second)
		b.schedule(key, due)
		want = append(want, firing{key, due})
	}
	for range 4 {
		b.sw.Wake()
		if err := timer.Advance(b.ctx, b.clock, b.sw, 40*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	b.wantFired(want...)
}

// stealer is a handler that, before finishing its timer, lets another
// process (a sweeper whose clock is past this one's lease) claim and finish
// it: this handler's lease is lost when it tries.
type stealer struct {
	other *timer.Sweeper
	st    nextup.Store
	clock nextup.Clock
}

func (h stealer) HandleTimer(ctx context.Context, t nextup.Timer) error {
	if _, err := h.other.RunDue(ctx); err != nil {
		return err
	}
	return h.st.InTx(ctx, func(tx nextup.Tx) error {
		return tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, h.clock.Now())
	})
}

// A timer whose lease another process took over is that process's to
// finish: Advance does not report it as a failure.
func TestAdvanceLeavesALostLeaseToItsNewHolder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	otherClock := nextup.NewFakeClock(t0.Add(time.Hour))
	other := &timer.Sweeper{Store: b.st, Clock: otherClock, Owner: "other",
		Handler: &recorder{st: b.st, clock: otherClock, failures: map[string]int{}}}
	b.sw.Handler = stealer{other: other, st: b.st, clock: b.clock}
	b.schedule("contested", t0.Add(time.Minute))

	if err := timer.Advance(b.ctx, b.clock, b.sw, 5*time.Minute); err != nil {
		t.Fatalf("Advance = %v, want nil: the other process finished the timer", err)
	}
	if p := b.pending(); len(p) != 0 {
		t.Errorf("pending = %+v, want none", p)
	}
	if !strings.Contains(b.logs.String(), "lease lost") {
		t.Errorf("the lost lease was not logged:\n%s", b.logs.String())
	}
}
