package timer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nextup-dev/nextup"
)

// Handler does what a due timer stands for.
//
// HandleTimer must do the timer's effect and mark it done, with
// tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, now), in one store transaction of
// its own, and must be idempotent: the same timer may be handed over again
// after a crash or a lapsed lease. A timer whose effect no longer applies
// (the offer was claimed in the meantime) is not a failure: the handler
// marks it done and returns nil. When it returns an error the sweeper logs
// it and leaves the timer alone; its lease lapses and it is retried later.
// TimerDone failing with ErrConflict means the lease was lost (another
// sweeper took the timer, or it was rescheduled): the handler's transaction
// rolls back and the other claim decides.
type Handler interface {
	HandleTimer(ctx context.Context, t nextup.Timer) error
}

// Defaults of the Sweeper's optional fields.
//
// The lease is short, and renewed every third of it while a handler runs,
// so that when a process dies its timers come back within DefaultLease:
// a survivor fires them a few seconds late, not half a minute. A handler
// may still run far longer than the lease (a claim that asks a booking
// system three times): its lease is renewed until it returns.
const (
	DefaultLease = 5 * time.Second
	DefaultBatch = 64
	DefaultPoll  = 500 * time.Millisecond
	DefaultOwner = "timer"
)

// maxBatchesPerSweep bounds one RunDue call, so that a handler that keeps
// scheduling timers due at once cannot keep a sweep going forever (Run then
// sweeps again at once, checking its context in between).
const maxBatchesPerSweep = 100

// Sweeper claims due timers and hands them to a Handler. Store, Clock and
// Handler are required; the other fields have defaults. A Sweeper must not
// be copied after first use. Its methods are safe for concurrent use: sweeps
// of one Sweeper never overlap, so a timer is not handed over twice by one
// process while its handler is still running.
type Sweeper struct {
	Store   nextup.Store
	Clock   nextup.Clock
	Handler Handler
	// Owner is recorded on the timers this sweeper claims; give each
	// instance its own (a host name) to tell them apart. Default "timer".
	Owner string
	// Lease is how long a claimed timer is reserved for this sweeper
	// before another sweep may claim it again; the lease of a timer whose
	// handler is running is renewed every third of it. Default 5s.
	Lease time.Duration
	// Batch is how many timers are claimed at once. Default 64.
	Batch int
	// OnHandled, if set, is told of every timer handled and how late it
	// ran (the timer-lateness metric).
	OnHandled func(t nextup.Timer, late time.Duration)
	// Poll is how often Run sweeps when not woken. Default 500ms.
	Poll time.Duration
	// Logger receives handler failures. Default slog.Default().
	Logger *slog.Logger

	mu       sync.Mutex // serialises sweeps
	maxSteps int        // Advance's step limit; 0 means maxAdvanceSteps (tests lower it)
	// renewTicks, when set, replaces the wall-clock ticker that paces
	// lease renewals (tests tick it by hand).
	renewTicks func() (<-chan time.Time, func())
	wakeOnce   sync.Once
	wake       chan struct{}
}

func (s *Sweeper) lease() time.Duration {
	return cmp.Or(s.Lease, DefaultLease)
}

func (s *Sweeper) batch() int {
	return cmp.Or(s.Batch, DefaultBatch)
}

func (s *Sweeper) poll() time.Duration {
	return cmp.Or(s.Poll, DefaultPoll)
}

func (s *Sweeper) owner() string {
	return cmp.Or(s.Owner, DefaultOwner)
}

func (s *Sweeper) logger() *slog.Logger {
	return cmp.Or(s.Logger, slog.Default())
}

func (s *Sweeper) wakeCh() chan struct{} {
	s.wakeOnce.Do(func() { s.wake = make(chan struct{}, 1) })
	return s.wake
}

func (s *Sweeper) check() error {
	if s.Store == nil || s.Clock == nil || s.Handler == nil {
		return errors.New("timer: Sweeper needs a Store, a Clock and a Handler")
	}
	return nil
}

// Wake makes a running Run sweep now instead of at its next poll. It never
// blocks; wake-ups that arrive while one is already pending are merged.
// A use case calls it after committing a timer due sooner than Poll.
func (s *Sweeper) Wake() {
	select {
	case s.wakeCh() <- struct{}{}:
	default:
	}
}

// RunDue claims the timers that are due by s.Clock, in batches, and hands
// each to the Handler until none are left (or, so that one call stays
// bounded, after 100 batches). It returns how many the Handler finished
// without error. Handler failures are logged, not returned: the error is a
// store failure or ctx ending.
func (s *Sweeper) RunDue(ctx context.Context) (handled int, err error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.sweep(ctx, maxBatchesPerSweep)
	return res.handled, err
}

// sweepResult is what one sweep did.
type sweepResult struct {
	handled int
	claimed int
	more    bool            // stopped after maxBatches with timers still due
	failed  map[int64]error // last handler error per timer
	done    map[int64]bool  // timers whose handler succeeded
}

// sweep is RunDue with s.mu held, claiming at most maxBatches batches.
func (s *Sweeper) sweep(ctx context.Context, maxBatches int) (sweepResult, error) {
	res := sweepResult{failed: map[int64]error{}, done: map[int64]bool{}}
	log := s.logger()
	for range maxBatches {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		now := s.Clock.Now()
		var due []nextup.Timer
		err := s.Store.InTx(ctx, func(tx nextup.Tx) error {
			var err error
			due, err = tx.TimerClaimDue(ctx, now, s.lease(), s.owner(), s.batch())
			return err
		})
		if err != nil {
			return res, fmt.Errorf("timer: claim due timers: %w", err)
		}
		if len(due) == 0 {
			return res, nil
		}
		res.claimed += len(due)
		for _, t := range due {
			if err := ctx.Err(); err != nil {
				// The unhandled timers keep their lease and are
				// claimed again when it lapses.
				return res, err
			}
			// A handler slower than the lease lets another sweeper
			// claim the rest of the batch; leave those timers to it
			// rather than run them twice at once.
			if t.ClaimedUntil == nil || !s.Clock.Now().Before(*t.ClaimedUntil) {
				continue
			}
			if err := s.handle(ctx, t); err != nil {
				res.failed[t.ID] = err
				level := slog.LevelError
				if errors.Is(err, nextup.ErrConflict) {
					// Most likely the lease was lost and another
					// sweeper finished the timer: nothing is wrong.
					level = slog.LevelWarn
				}
				log.LogAttrs(ctx, level, "timer handler failed; it will be retried when its lease lapses",
					slog.Int64("timer_id", t.ID),
					slog.String("kind", t.Kind),
					slog.String("key", t.Key),
					slog.String("business_id", t.BusinessID),
					slog.Time("due_at", t.DueAt),
					slog.Int("attempts", t.Attempts),
					slog.Any("error", err))
				continue
			}
			delete(res.failed, t.ID)
			if s.OnHandled != nil {
				s.OnHandled(t, s.Clock.Now().Sub(t.DueAt))
			}
			res.done[t.ID] = true
			res.handled++
		}
	}
	res.more = true
	return res, nil
}

// handle runs the handler of t with its lease renewed until it returns.
func (s *Sweeper) handle(ctx context.Context, t nextup.Timer) error {
	stop := s.keepLease(ctx, t)
	defer stop()
	return s.Handler.HandleTimer(ctx, t)
}

// keepLease renews the lease of t, every third of the lease, until stop is
// called; stop returns once no renewal is in flight. A renewal that fails
// because the lease was lost (the timer was moved, or done by another
// sweeper after this one's lease lapsed) ends the renewals: the handler's
// TimerDone then fails and the other claim decides. Other failures are
// logged and tried again at the next tick, while the lease may still hold.
func (s *Sweeper) keepLease(ctx context.Context, t nextup.Timer) (stop func()) {
	if t.ClaimedUntil == nil {
		return func() {}
	}
	claim := *t.ClaimedUntil
	ticks, stopTicks := s.ticks()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stopTicks()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticks:
			}
			until := s.Clock.Now().Add(s.lease())
			err := s.Store.InTx(ctx, func(tx nextup.Tx) error {
				return tx.TimerRenew(ctx, t.ID, claim, until)
			})
			switch {
			case err == nil, ctx.Err() != nil:
			case errors.Is(err, nextup.ErrConflict), errors.Is(err, nextup.ErrNotFound):
				s.logger().LogAttrs(ctx, slog.LevelWarn, "timer lease lost while its handler runs",
					slog.Int64("timer_id", t.ID), slog.String("kind", t.Kind), slog.Any("error", err))
				return
			default:
				s.logger().LogAttrs(ctx, slog.LevelError, "timer lease renewal failed; trying again",
					slog.Int64("timer_id", t.ID), slog.String("kind", t.Kind), slog.Any("error", err))
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// ticks paces lease renewals: a wall-clock ticker every third of the
// lease, which only sets the cadence (the new lease end comes from Clock).
func (s *Sweeper) ticks() (<-chan time.Time, func()) {
	if s.renewTicks != nil {
		return s.renewTicks()
	}
	tk := time.NewTicker(s.lease() / 3)
	return tk.C, tk.Stop
}

// Run sweeps until ctx is done: RunDue, then wait for the next poll or a
// Wake. It returns nil when ctx is cancelled. Store errors are logged and
// the sweep is tried again at the next poll, so a database that is briefly
// unavailable does not stop the timers. The wall-clock ticker only sets the
// cadence; which timers are due is decided by s.Clock.
func (s *Sweeper) Run(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	ticker := time.NewTicker(s.poll())
	defer ticker.Stop()
	wake := s.wakeCh()
	for {
		s.mu.Lock()
		res, err := s.sweep(ctx, maxBatchesPerSweep)
		s.mu.Unlock()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			s.logger().LogAttrs(ctx, slog.LevelError, "timer sweep failed", slog.Any("error", err))
		}
		if res.more {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-wake:
		}
	}
}
