package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// Group commit. SQLite has one writer, and a durable commit (an fsync of
// the WAL, synchronous=FULL) costs as much as the rest of a small
// transaction. So InTx does not run its function itself: it hands it to
// the store's writer goroutine and waits. The writer takes every function
// waiting at that moment (up to MaxGroup), runs them one after another in
// one transaction, each inside its own SAVEPOINT — a function that fails
// or panics is rolled back to its savepoint and the next one goes on — and
// commits once; only then is each caller told how its function did.
// Nobody hears "committed" before the fsync: when the commit fails, every
// function of the group that had succeeded gets the commit's error, and
// none of their changes are there.
//
// A group is equivalent to its functions run one after another in
// transactions of their own, in the order they arrived: each sees what
// the ones before it wrote, and a rolled-back one leaves nothing. Callers
// wait in a queue (the relay and the timers take their turn there like a
// request). A function's context can stop it from starting; once it runs,
// its statements are not interrupted by that context, since SQLite rolls
// back the whole transaction — everybody's — when a statement inside it
// is interrupted.

// MaxGroup is the most functions one commit takes by default.
const MaxGroup = 64

// GroupCommit sets the most functions one commit takes (1: each its own).
func GroupCommit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.group = n
		}
	}
}

// ErrClosed is InTx on a closed store.
var ErrClosed = errors.New("sqlite: store closed")

// txCall is one InTx waiting for the writer.
type txCall struct {
	ctx  context.Context
	fn   func(tx nextup.Tx) error
	done chan txDone // buffered: the writer never waits for the caller
}

// txDone is how a call went: its error, or the value it panicked with.
type txDone struct {
	err      error
	panicked bool
	panic    any
}

// writer runs the groups of InTx calls (see above).
type writer struct {
	pool  *sql.DB
	max   int
	stmts *stmtCache // prepared statements (stmts.go)
	calls chan *txCall
	quit  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	// commits and committed count the groups committed and the calls in
	// them (GroupStats).
	commits, committed atomic.Int64
	// storage is the store's record of full-disk and read-only failures
	// (storage.go), given to each transaction's runner.
	storage *storageState
}

// GroupStats reports how many commits the store's writer made and how
// many InTx calls they carried (a call alone is a group of one).
func (db *DB) GroupStats() (commits, calls int64) {
	return db.w.commits.Load(), db.w.committed.Load()
}

func newWriter(pool *sql.DB, max int) *writer {
	w := &writer{pool: pool, max: max, stmts: newStmtCache(pool), calls: make(chan *txCall), quit: make(chan struct{})}
	w.wg.Add(1)
	go w.loop()
	return w
}

// do runs fn in a group and returns its outcome, panicking again with the
// value fn panicked with.
func (w *writer) do(ctx context.Context, fn func(tx nextup.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &txCall{ctx: ctx, fn: fn, done: make(chan txDone, 1)}
	select {
	case w.calls <- c:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.quit:
		return ErrClosed
	}
	// Once the writer has the call, its outcome is waited for whatever
	// the context does: the function may be running, or committed.
	d := <-c.done
	if d.panicked {
		panic(d.panic)
	}
	return d.err
}

// close stops the writer after the group it is running; calls that did
// not get in are refused with ErrClosed.
func (w *writer) close() {
	w.once.Do(func() { close(w.quit) })
	w.wg.Wait()
}

func (w *writer) loop() {
	defer w.wg.Done()
	defer w.stmts.close()
	for {
		var first *txCall
		select {
		case first = <-w.calls:
		case <-w.quit:
			return
		}
		group := []*txCall{first}
	gather:
		for len(group) < w.max {
			select {
			case c := <-w.calls:
				group = append(group, c)
			default:
				break gather
			}
		}
		w.run(group)
		w.stmts.prepare(context.Background())
	}
}

// run commits one group and tells each of its callers.
func (w *writer) run(group []*txCall) {
	var live []*txCall
	for _, c := range group {
		if err := c.ctx.Err(); err != nil {
			c.done <- txDone{err: err} // not started: its context ended while it waited
			continue
		}
		live = append(live, c)
	}
	if len(live) == 1 {
		live[0].done <- w.alone(live[0])
		return
	}
	if len(live) > 1 {
		w.together(live)
	}
}

// alone runs one call in a transaction of its own.
func (w *writer) alone(c *txCall) txDone {
	stx, err := w.pool.BeginTx(context.Background(), nil) // BEGIN IMMEDIATE
	if err != nil {
		return txDone{err: fmt.Errorf("begin: %w", err)}
	}
	d := call(c, sqlstore.NewTx(&runner{tx: stx, detach: true, stmts: w.stmts, storage: w.storage}, &dialect, true))
	if d.panicked || d.err != nil {
		if rerr := stx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) && !d.panicked {
			d.err = errors.Join(d.err, fmt.Errorf("rollback: %w", rerr))
		}
		return d
	}
	if err := stx.Commit(); err != nil {
		return txDone{err: fmt.Errorf("commit: %w", err)}
	}
	w.commits.Add(1)
	w.committed.Add(1)
	return d
}

// together runs calls in one transaction, each in a savepoint, and
// commits once.
func (w *writer) together(calls []*txCall) {
	stx, err := w.pool.BeginTx(context.Background(), nil) // BEGIN IMMEDIATE
	if err != nil {
		for _, c := range calls {
			c.done <- txDone{err: fmt.Errorf("begin: %w", err)}
		}
		return
	}
	r := &runner{tx: stx, detach: true, stmts: w.stmts, storage: w.storage}
	outcomes := make([]txDone, len(calls))
	var ok []int
	for i, c := range calls {
		var broken error
		outcomes[i], broken = callInSavepoint(c, r)
		if broken != nil {
			// SQLite rolled the whole transaction back (a full disk, an
			// I/O error): nothing of the group is left. The call that
			// met it is told; the ones that had succeeded, and the ones
			// not yet run, run again each alone (a store's transaction
			// may run its function more than once), and are told how
			// that went.
			_ = stx.Rollback()
			calls[i].done <- outcomes[i]
			for _, j := range ok {
				calls[j].done <- w.alone(calls[j])
			}
			for _, c := range calls[i+1:] {
				c.done <- w.alone(c)
			}
			return
		}
		if outcomes[i].err == nil && !outcomes[i].panicked {
			ok = append(ok, i)
		}
	}
	if err := stx.Commit(); err != nil {
		for _, i := range ok {
			outcomes[i] = txDone{err: fmt.Errorf("commit: %w", err)}
		}
	} else {
		w.commits.Add(1)
		w.committed.Add(int64(len(calls)))
	}
	for i, c := range calls {
		c.done <- outcomes[i]
	}
}

// call runs c's function on tx, catching a panic.
func call(c *txCall, tx nextup.Tx) (d txDone) {
	defer func() {
		if p := recover(); p != nil {
			d = txDone{panicked: true, panic: p}
		}
	}()
	return txDone{err: c.fn(tx)}
}

// callInSavepoint runs c's function inside a savepoint of the group's
// transaction, rolled back to when it fails or panics. broken is set when
// the transaction itself is gone.
func callInSavepoint(c *txCall, r *runner) (d txDone, broken error) {
	ctx := context.Background()
	if _, err := r.tx.ExecContext(ctx, "SAVEPOINT grp"); err != nil {
		return txDone{err: fmt.Errorf("savepoint: %w: %w", nextup.ErrTxBroken, err)}, err
	}
	d = call(c, sqlstore.NewTx(r, &dialect, true))
	if d.err == nil && !d.panicked {
		if _, err := r.tx.ExecContext(ctx, "RELEASE grp"); err != nil {
			return txDone{err: fmt.Errorf("release savepoint: %w: %w", nextup.ErrTxBroken, err)}, err
		}
		return d, nil
	}
	_, err := r.tx.ExecContext(ctx, "ROLLBACK TO grp")
	if err == nil {
		_, err = r.tx.ExecContext(ctx, "RELEASE grp")
	}
	if err != nil {
		if !d.panicked {
			d.err = errors.Join(d.err, fmt.Errorf("roll back to savepoint: %w: %w", nextup.ErrTxBroken, err))
		}
		return d, err
	}
	return d, nil
}
