package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

const baseURL = "https://nextup.test"

// world is one seed's run: a fake clock, a fresh store (a SQLite file or
// a PostgreSQL schema), the waitlist service, the timer sweeper and the
// outbox relay on top of it (through the fault injecting wrapper), the
// model, and the log of steps taken.
type world struct {
	seed  uint64
	steps int // the run's length, for the replay hint
	rng   *rand.Rand
	src   *rngReader
	ctx   context.Context
	be    Backend
	clock *nextup.FakeClock
	db    nextup.Store
	fs    *faultStore
	svc   *waitlist.Service
	sweep *timer.Sweeper
	relay *outbox.Relay
	m     *model
	prev  *snapshot
	st    *stats

	step  int
	op    string
	notes []string
	log   []string
	trace func(string)

	// The relay's world (relay.go).
	addrs     map[supKey]string // how each address answers the simulated providers
	sendMu    sync.Mutex
	sends     []sendRec            // the current relay round's sends
	claimed   int                  // messages the current relay round claimed
	leased    map[string]time.Time // messages a faulted round left under lease, and until when
	deadSince map[string]int       // the step each dead message was first seen dead
	deadOK    map[string]bool      // dead messages check 9 found handled for good

	// Per step.
	plan       *faultPlan // the fault armed for this step's use case
	faultErr   error      // what the use case returned under it
	faultOK    bool       // the use case ran under a plan (fired or not)
	unchanged  bool       // the step must not change any row
	advanced   bool       // the clock moved this step
	timerDirty bool       // a faulted Advance may have left due timers behind
	newHB      map[string]bool
	auditSeen  map[string]int  // audit rows read so far per subject
	touched    map[string]bool // entries this step named or changed the offers of
	newBiz     bool            // the step created a business
	hbTouched  bool            // the step resolved a hand-back
	freed      map[string]bool // slots the step gave fresh seats (release, resize, cancelled booking)
	rebook     map[string]bool // slots whose bookings changed without their row (a check-in)
}

// simFailure unwinds a run from a failed check to runSeed.
type simFailure struct{ msg string }

// rngReader turns the seed's PRNG into the byte stream behind
// nextup.Random, so ids and tokens replay exactly.
type rngReader struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (r *rngReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 0; i < len(p); i += 8 {
		v := r.r.Uint64()
		for j := 0; j < 8 && i+j < len(p); j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return len(p), nil
}

// Draws of the simulation itself go through the same lock as the
// service's, so that nothing races even while claims run concurrently.
func (w *world) intn(n int) int {
	w.src.mu.Lock()
	defer w.src.mu.Unlock()
	return w.rng.IntN(n)
}

func (w *world) chance(p float64) bool {
	w.src.mu.Lock()
	defer w.src.mu.Unlock()
	return w.rng.Float64() < p
}

func (w *world) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	w.src.mu.Lock()
	defer w.src.mu.Unlock()
	// Whole seconds: the store keeps microseconds, and a clock that only
	// ever reads whole seconds keeps every derived time exact.
	d := lo + time.Duration(w.rng.Int64N(int64(hi-lo)))
	return max(d.Truncate(time.Second), lo)
}

func pick[T any](w *world, xs []T) T { return xs[w.intn(len(xs))] }

func (w *world) open() {
	// A start time anywhere in a year, so that daylight-saving changes,
	// weekdays and quiet hours all come round.
	start := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).
		Add(time.Duration(w.intn(365*24*60)) * time.Minute).Add(time.Duration(w.intn(60)) * time.Second)
	w.clock = nextup.NewFakeClock(start)
	db, err := w.be.Open(w.ctx)
	if err != nil {
		w.fail("open %s store: %v", w.be.Name, err)
	}
	w.db = db
	w.fs = &faultStore{inner: db}
	quiet := slog.New(slog.DiscardHandler)
	w.svc = waitlist.New(w.fs, w.clock, baseURL)
	w.svc.Random = nextup.NewRandom(w.src)
	w.svc.Logger = quiet
	w.sweep = &timer.Sweeper{Store: w.fs, Clock: w.clock, Handler: w.svc, Owner: "sim", Logger: quiet}
	w.relay = w.newRelay()
	w.prev = w.read(nil)
}

func (w *world) run(steps int) {
	w.runStep(opByName("create_business"))
	for w.step < steps {
		// An operation whose target does not exist yet (no offer to
		// claim, no booking to cancel) declines and another is drawn.
		for tries := 0; ; tries++ {
			o := w.pickOp()
			if tries > 50 {
				o = opByName("advance")
			}
			if w.runStep(o) {
				break
			}
		}
		if w.step%40 == 0 {
			w.deepCheck()
		}
	}
	w.deepCheck()
}

// runStep runs one operation and then every check. It reports false when
// the operation had nothing to act on and did nothing.
func (w *world) runStep(o *opDef) bool {
	w.step++
	w.op = o.name
	w.notes = w.notes[:0]
	w.plan, w.faultErr, w.faultOK, w.unchanged, w.advanced = nil, nil, false, false, false
	w.newHB = map[string]bool{}
	w.touched, w.newBiz, w.hbTouched, w.freed = map[string]bool{}, false, false, map[string]bool{}
	w.rebook = map[string]bool{}
	if !o.run(w) {
		w.step--
		return false
	}
	w.st.ops[o.name]++
	line := fmt.Sprintf("#%d %s %s: %s", w.step, w.clock.Now().Format("2006-01-02T15:04:05Z"), w.op, strings.Join(w.notes, "; "))
	w.log = append(w.log, line)
	if w.trace != nil {
		w.trace(line)
	}
	cur := w.read(w.prev)
	if w.unchanged {
		if d := sameState(w.prev, cur); d != "" {
			w.fail("check rejected: the operation was refused but changed state: %s", d)
		}
	}
	w.checkStep(w.prev, cur)
	w.prev = cur
	return true
}

func (w *world) note(format string, args ...any) {
	w.notes = append(w.notes, fmt.Sprintf(format, args...))
}

// fail stops the run with a failed check.
func (w *world) fail(format string, args ...any) {
	panic(simFailure{fmt.Sprintf(format, args...)})
}

func (w *world) report(msg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed at step %d (%s): %s\n", w.seed, w.step, w.op, msg)
	if len(w.notes) > 0 {
		fmt.Fprintf(&b, "this step so far: %s\n", strings.Join(w.notes, "; "))
	}
	fmt.Fprintf(&b, "replay: %s\n", replayHint(w.seed, w.steps))
	log := w.log
	const keep = 60
	if len(log) > keep {
		fmt.Fprintf(&b, "step log (last %d of %d; -sim.trace prints all):\n", keep, len(log))
		log = log[len(log)-keep:]
	} else {
		b.WriteString("step log:\n")
	}
	for _, l := range log {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// invoke runs one use case. An injected panic comes back as an error
// wrapping errInjected; any other panic fails the run with its stack.
func (w *world) invoke(fn func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if ip, ok := r.(injectedPanic); ok {
			err = fmt.Errorf("panic at call %d (%s): %w", ip.call, ip.method, errInjected)
			return
		}
		w.fail("check no panics: the use case panicked: %v\n%s", r, debug.Stack())
	}()
	return fn()
}

// faulted reports whether this step's fault fired; the fault runner then
// owns the checks of the use case's outcome.
func (w *world) faulted() bool { return w.plan != nil && w.plan.fired }

// outcome holds a use case's error against the model's prediction: want
// empty means success. It reports whether the use case succeeded (and was
// meant to), so the caller goes on to check its effects. A refusal must
// leave the state as it was.
func (w *world) outcome(what string, err error, want ...string) bool {
	if w.plan != nil {
		w.faultOK, w.faultErr = true, err
		if w.plan.fired {
			return false
		}
	}
	if errors.Is(err, errInjected) {
		w.fail("%s: an injected fault leaked out of a transaction it was not planned for: %v", what, err)
	}
	okAllowed := len(want) == 0 || slices.Contains(want, "")
	if err == nil {
		if !okAllowed {
			w.fail("check model: %s succeeded, the model expected %s", what, strings.Join(want, " or "))
		}
		return true
	}
	if len(want) == 0 {
		w.fail("check errors: %s: unexpected error (code %q): %v", what, nextup.ErrorCode(err), err)
	}
	code := nextup.ErrorCode(err)
	if code == "" {
		w.fail("check errors: %s: error without a domain code: %v", what, err)
	}
	if !slices.Contains(want, code) {
		w.fail("check model: %s failed with %q (%v), the model expected %s", what, code, err, strings.Join(want, " or "))
	}
	w.st.rejections[code]++
	w.note("refused %s", code)
	w.unchanged = true
	return false
}
