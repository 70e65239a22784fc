package timer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// maxAdvanceSteps bounds one Advance. Every step claims a batch of timers
// or moves the clock forward, so only a handler that keeps scheduling
// timers inside the window without end (or one that fails at every retry of
// a very long window) can reach it.
const maxAdvanceSteps = 10_000

// Advance moves clock forward by d, firing every timer that falls due on the
// way with the clock reading that timer's due time, in due order. Timers that
// handlers schedule inside the window fire too, each at its own due time.
// When it returns, clock reads its start plus d and every timer due by then
// has been handed to s.Handler (its effects committed).
//
// A handler failure behaves as in production: the timer is claimed again
// when its lease lapses, so inside a window longer than s.Lease the clock
// also stops at that moment and the timer is retried. Timers still failing
// at the end are reported in the returned error (errors.Join of their
// handler errors, so errors.Is works), after the clock has been moved to
// the end of the window. A timer whose lease was lost (its handler failed
// with ErrConflict: another process sharing the store claimed it) is that
// process's to finish and is not reported.
//
// Advance holds the sweeper for its whole run, so a Run loop sharing s (as
// under `--clock=fake`) sweeps again only after it. It is meant for a
// FakeClock that only Advance moves; s.Clock must be clock.
func Advance(ctx context.Context, clock *nextup.FakeClock, s *Sweeper, d time.Duration) error {
	if err := s.check(); err != nil {
		return err
	}
	if c, ok := s.Clock.(*nextup.FakeClock); !ok || c != clock {
		return errors.New("timer: Advance needs the sweeper's own FakeClock")
	}
	if d < 0 {
		return fmt.Errorf("timer: Advance by %v: the clock only moves forward", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	target := clock.Now().Add(d)
	failed := map[int64]error{}
	record := func(r sweepResult) {
		for id := range r.done {
			delete(failed, id)
		}
		for id, err := range r.failed {
			if errors.Is(err, nextup.ErrConflict) {
				// The lease was lost to another process sharing the
				// store: that claim decides the timer, not this one.
				delete(failed, id)
				continue
			}
			failed[id] = err
		}
	}

	limit := maxAdvanceSteps
	if s.maxSteps > 0 {
		limit = s.maxSteps
	}
	for step := 0; ; step++ {
		if step == limit {
			return fmt.Errorf("timer: Advance gave up after %d steps at %s, before %s: a handler keeps scheduling or failing timers",
				limit, clock.Now().Format(time.RFC3339Nano), target.Format(time.RFC3339Nano))
		}
		next, err := nextDue(ctx, s.Store)
		if err != nil {
			return err
		}
		if next.IsZero() || next.After(target) {
			break
		}
		if next.After(clock.Now()) {
			clock.Set(next)
		}
		r, err := s.sweep(ctx, 1)
		if err != nil {
			return err
		}
		record(r)
		if r.claimed > 0 {
			continue
		}
		// Every timer due by now is leased: by a handler that failed,
		// or by another process. It comes back when its lease lapses.
		retry, err := nextLeaseEnd(ctx, s.Store, clock.Now(), s.batch())
		if err != nil {
			return err
		}
		if retry.IsZero() || retry.After(target) {
			break
		}
		clock.Set(retry)
	}

	if target.After(clock.Now()) {
		clock.Set(target)
	}
	r, err := s.sweep(ctx, maxBatchesPerSweep)
	if err != nil {
		return err
	}
	record(r)
	return failures(failed)
}

// nextDue returns the earliest due time of a pending timer, or zero when
// there is none.
func nextDue(ctx context.Context, st nextup.Store) (time.Time, error) {
	var next time.Time
	err := st.Read(ctx, func(tx nextup.Tx) error {
		var err error
		next, err = tx.TimerNextDue(ctx)
		return err
	})
	if errors.Is(err, nextup.ErrNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("timer: next due time: %w", err)
	}
	return next, nil
}

// nextLeaseEnd returns the earliest moment after now at which a pending
// timer that is already due comes free, or zero when it finds none. The
// store has no query for it, so it reads the soonest-due pending timers;
// limit of them is plenty, because the caller only asks when every due
// timer is leased, which in practice means a few failing handlers.
func nextLeaseEnd(ctx context.Context, st nextup.Store, now time.Time, limit int) (time.Time, error) {
	var pending []nextup.Timer
	err := st.Read(ctx, func(tx nextup.Tx) error {
		var err error
		pending, err = tx.TimerList(ctx, nextup.TimerFilter{PendingOnly: true, Limit: limit})
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("timer: list pending timers: %w", err)
	}
	var end time.Time
	for _, t := range pending {
		until, leased := t.LeasedUntil()
		if t.DueAt.After(now) || !leased || !until.After(now) {
			continue
		}
		if end.IsZero() || until.Before(end) {
			end = until
		}
	}
	return end, nil
}

// failures joins the handler errors of timers that never succeeded, in
// timer order so that the message is stable.
func failures(failed map[int64]error) error {
	if len(failed) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(failed))
	for id := range failed {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, cmp.Compare)
	errs := make([]error, len(ids))
	for i, id := range ids {
		errs[i] = fmt.Errorf("timer %d: %w", id, failed[id])
	}
	return fmt.Errorf("timer: %d timer(s) failed and will be retried: %w", len(ids), errors.Join(errs...))
}
