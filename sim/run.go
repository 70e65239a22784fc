package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/nextup-dev/nextup"
)

// DefaultSteps is how many steps a seed takes unless told otherwise
// (-sim.steps in this package's tests).
const DefaultSteps = 150

// strict is -sim.strict (sim_test.go): when false, the known gaps (a claim
// leaving seats un-offered, the daily-cap rollover, masked store faults) are
// counted and excused instead of failing the seed. A run from outside this
// package's tests is always strict.
var strict = true

// Backend opens the store of one seed's run. Open is called at the start
// and again for every restart, after the previous store was closed, and
// must give the same database each time: a restart checks that nothing
// committed was lost. Name says which store a failure happened on.
type Backend struct {
	Name string
	Open func(ctx context.Context) (nextup.Store, error)
	// Optimistic says the store runs a transaction's function again when
	// its commit loses to another (DynamoDB), so that of several racing
	// claims the winner is whichever commits first, holding whichever
	// booking id it drew: the run stays correct but takes other ids than
	// on SQLite. For a step-by-step comparison with SQLite the concurrent
	// claim step then lets its first claimer in alone, and races the rest
	// (which find the offer claimed). Races proper are the store's
	// conformance suite's (store/storetest, Concurrency), and a run
	// without Optimistic, compared with nothing, still has them.
	Optimistic bool
}

// Result is what one seed's run leaves behind.
type Result struct {
	backend string
	seed    uint64
	stats   *stats
	digest  string // of the raw rows: only runs on one backend compare it
	dump    dump
	log     []string
	fail    string
}

// Failure is "" when the seed passed every check; otherwise it is the
// report of the failure: the seed, the check that failed, how to replay
// it and the step log.
func (r Result) Failure() string { return r.fail }

// Digest is a short hash of the state the seed ended in, every row of every
// business it created, with the numbers a store draws from a sequence
// replaced by their rank: two backends that took the same steps to the same
// state give the same digest. It is "" when the seed failed.
func (r Result) Digest() string {
	if r.fail != "" {
		return ""
	}
	return r.dump.renumbered().digest()
}

// RunSeed runs one seed for steps steps on be's store, every check after
// every step, and reports how it went. The seed alone decides the steps, the
// clock, the ids and the faults, so a seed replays exactly. trace, when not
// nil, is given each step's log line as it is taken.
func RunSeed(ctx context.Context, be Backend, seed uint64, steps int, trace func(string)) (res Result) {
	w := &world{seed: seed, ctx: ctx, be: be, steps: steps, st: newStats(), trace: trace, auditSeen: map[string]int{},
		addrs: map[supKey]string{}, leased: map[string]time.Time{}, deadSince: map[string]int{}, deadOK: map[string]bool{}}
	w.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w.src = &rngReader{r: w.rng}
	w.m = newModel()
	defer func() {
		if w.db != nil {
			w.db.Close()
		}
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(simFailure)
		if !ok {
			f = simFailure{fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
		res = Result{backend: be.Name, seed: seed, stats: w.st, log: w.log, fail: w.report(f.msg)}
	}()
	w.open()
	w.run(steps)
	d := w.dump(ctx)
	return Result{backend: be.Name, seed: seed, stats: w.st, digest: d.digest(), dump: d, log: w.log}
}

// seqNumber matches what a step log says that differs between backends
// taking the same steps: entry sequence numbers (see dump.renumbered), and
// the journal digest a restart logs, which is of the raw rows.
var seqNumber = regexp.MustCompile(`seq=\d+|reopened [0-9a-f]{16}`)

// Compare compares two passing runs of one seed, on different backends: it
// returns "" when both took the same steps and ended in the same state (up
// to the numbers a store draws from a sequence), and otherwise describes the
// first difference: the first step the two logs differ at, or the first
// table whose rows differ.
func Compare(a, b Result) string {
	if a.seed != b.seed {
		return fmt.Sprintf("seed %d on %s is compared with seed %d on %s", a.seed, a.backend, b.seed, b.backend)
	}
	pad := max(len(a.backend), len(b.backend))
	for i := range min(len(a.log), len(b.log)) {
		if x, y := seqNumber.ReplaceAllString(a.log[i], "#"), seqNumber.ReplaceAllString(b.log[i], "#"); x != y {
			return fmt.Sprintf("seed %d diverged at step %d:\n%*s: %s\n%*s: %s", a.seed, i+1, pad, a.backend, x, pad, b.backend, y)
		}
	}
	if len(a.log) != len(b.log) {
		return fmt.Sprintf("seed %d took %d steps on %s, %d on %s", a.seed, len(a.log), a.backend, len(b.log), b.backend)
	}
	x, y := a.dump.renumbered(), b.dump.renumbered()
	if dx, dy := x.digest(), y.digest(); dx != dy {
		return fmt.Sprintf("seed %d ended in state %s on %s, %s on %s: %s", a.seed, dx, a.backend, dy, b.backend, diffDump(x, y, "on "+a.backend, "on "+b.backend))
	}
	return ""
}

// replayHint is the command that replays a seed of steps steps in this
// package's tests.
func replayHint(seed uint64, steps int) string {
	s := fmt.Sprintf("go test ./sim -run TestSim -sim.seed=%d", seed)
	if steps != DefaultSteps {
		s += fmt.Sprintf(" -sim.steps=%d", steps)
	}
	return s + " -sim.trace"
}
