package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// DB is a nextup.Store kept in a PostgreSQL database (in the schema the
// connection's search_path names first), reached through a pgx pool.
type DB struct {
	dsn  string
	pool *pgxpool.Pool

	// The notifier: a transaction that committed new work for the
	// sweepers and relays (Tx.Wake) pokes kick; one goroutine sends the
	// NOTIFY, outside any transaction, once for all the pokes that came
	// while it was sending the last (see notifier).
	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	closing sync.Once
}

var _ nextup.Store = (*DB)(nil)

// maxTxAttempts bounds how often InTx runs fn when the transaction was
// aborted by something that a second run may not meet (see retryable).
const maxTxAttempts = 5

// Option configures Open. Settings in the DSN (pool_max_conns=…,
// statement_timeout=…) work too; an Option given to Open wins.
type Option func(*pgxpool.Config)

// MaxConns caps the pool; n <= 0 keeps pgx's default (the larger of 4 and
// the number of CPUs). Several instances share the server's
// max_connections: keep instances × MaxConns (+1 each for Listen) below it.
func MaxConns(n int) Option {
	return func(c *pgxpool.Config) {
		if n > 0 {
			c.MaxConns = int32(min(n, 1<<20))
		}
	}
}

// StatementTimeout makes the server abort any statement that runs longer
// than d (statement_timeout), and end a session that sits idle inside a
// transaction longer than twice d (idle_in_transaction_session_timeout),
// so that a client cut off mid-transaction does not hold its row locks.
// d <= 0 keeps the server's settings.
func StatementTimeout(d time.Duration) Option {
	return func(c *pgxpool.Config) {
		if d <= 0 {
			return
		}
		ms := strconv.FormatInt(max(d.Milliseconds(), 1), 10)
		idle := strconv.FormatInt(max(2*d.Milliseconds(), 1), 10)
		c.ConnConfig.RuntimeParams["statement_timeout"] = ms
		c.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = idle
	}
}

// Open connects to the database named by dsn (a URL or key=value string
// that pgxpool accepts, pool_* settings included) and checks that it
// answers. It does not migrate; call (*DB).Migrate.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db := &DB{dsn: dsn, pool: pool, kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go db.notifier()
	return db, nil
}

// notifier sends one NOTIFY on WakeChannel for each run of kicks, until
// Close. A NOTIFY sent inside the transaction that made the work would
// make its commit take the server's one notification lock, held through
// the commit's WAL flush: every transaction that schedules a timer or
// queues a message (nearly every write) would then commit one at a time,
// each with an fsync of its own. Sent after the commit, from here, the
// commits flush together and the listeners are told once per burst. A
// process that dies between a commit and its NOTIFY leaves the other
// instances to find the work at their next poll, as they would a lost
// notification.
func (db *DB) notifier() {
	defer close(db.stopped)
	for {
		select {
		case <-db.stop:
			return
		case <-db.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = db.pool.Exec(ctx, `SELECT pg_notify($1, '')`, WakeChannel)
		cancel()
	}
}

// wake tells the notifier that a transaction committed new work; it never
// blocks (one waiting kick covers any number).
func (db *DB) wake() {
	select {
	case db.kick <- struct{}{}:
	default:
	}
}

// InTx runs fn in one READ COMMITTED read-write transaction: it commits
// when fn returns nil and rolls back when fn returns an error or panics
// (the panic goes on). Per-slot decisions are serialised by the row locks
// SlotGet and EntryGet take, not by the isolation level. When PostgreSQL
// aborts the transaction for a serialization failure or a deadlock, or the
// connection breaks before the commit is sent, the whole transaction is
// run again on another connection, a bounded number of times; fn must
// therefore be safe to run more than once (it is, when all its effects go
// through tx). A connection that breaks while the commit is under way is
// not retried: whether it committed is unknown (ErrCommitUnknown).
func (db *DB) InTx(ctx context.Context, fn func(tx nextup.Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxTxAttempts; attempt++ {
		err = db.run(ctx, beginWrite, true, fn)
		if !retryable(err) || ctx.Err() != nil {
			return err
		}
		// A short, growing pause lets the other transaction finish.
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt*attempt) * time.Millisecond):
		}
	}
	return err
}

// Read runs fn in a REPEATABLE READ, READ ONLY transaction: one
// consistent snapshot of the committed state. Writes through its Tx fail.
func (db *DB) Read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return db.run(ctx, beginRead, false, fn)
}

func (db *DB) run(ctx context.Context, begin string, write bool, fn func(tx nextup.Tx) error) error {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// Release closes a connection left broken or inside a transaction
	// (TxStatus not idle) instead of handing it to the next caller.
	defer pc.Release()
	s := &sqlTx{c: pc.Conn(), write: write, begin: begin}
	done := false
	defer func() {
		if !done {
			// fn panicked: undo, and let the panic go on. The context may
			// be the reason; roll back regardless of it.
			_ = s.rollback(ctx)
		}
	}()
	t := sqlstore.NewTx(s, &dialect, write)
	ferr := fn(t)
	done = true
	if ferr != nil {
		if rerr := s.rollback(ctx); rerr != nil {
			return errors.Join(ferr, fmt.Errorf("rollback: %w", rerr))
		}
		return ferr
	}
	if err := s.commit(ctx); err != nil {
		return err
	}
	if t.Wake() {
		db.wake() // only once it committed
	}
	return nil
}

// ErrCommitUnknown says the connection broke while a commit was under way:
// the transaction may or may not have committed, so it is not run again.
var ErrCommitUnknown = errors.New("connection lost during commit; the outcome is unknown")

// retryable reports an error after which running the whole transaction
// again is safe and may succeed: PostgreSQL aborted it (a serialization
// failure, a deadlock, the server shutting the session down or refusing
// connections for now), or the connection broke before the commit was
// sent, so the server rolled it back.
func retryable(err error) bool {
	if err == nil || errors.Is(err, ErrCommitUnknown) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", // serialization failure, deadlock
			"57P01", "57P02", "57P03": // admin shutdown, crash shutdown, cannot connect now
			return true
		}
		return strings.HasPrefix(pe.Code, "08") // connection exceptions
	}
	var ne net.Error
	return pgconn.SafeToRetry(err) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// WakeChannel is the LISTEN/NOTIFY channel on which an instance announces,
// just after it commits, a transaction that scheduled a timer or queued a
// message.
const WakeChannel = "nextup_wake"

// Listen wakes this instance's sweeper and relay when another instance
// commits work for them, instead of at their next poll: it holds one
// connection of its own (outside the pool) listening on WakeChannel and
// calls wake for every notification, until ctx ends. A broken connection
// is made again after a pause, with one wake for what may have been missed
// meanwhile. It does not work through a transaction-pooling proxy
// (PgBouncer in transaction mode); the pollers alone still do the work
// then, a little later.
func (db *DB) Listen(ctx context.Context, wake func()) error {
	const first, most = 100 * time.Millisecond, 10 * time.Second
	pause := first
	for {
		if db.listen(ctx, wake) {
			pause = first // it worked for a while: start the back-off afresh
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, most)
		wake()
	}
}

// listen is one connection's worth of Listen; it reports whether it got
// as far as listening.
func (db *DB) listen(ctx context.Context, wake func()) (listened bool) {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+WakeChannel); err != nil {
		return false
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true
		}
		wake()
	}
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	return nil
}

// Close stops the notifier and closes the pool; closing twice is
// harmless.
func (db *DB) Close() error {
	db.closing.Do(func() {
		close(db.stop)
		<-db.stopped
		db.pool.Close()
	})
	return nil
}

// dialect is what PostgreSQL's SQL says its own way in the statements the
// two stores share (see sqlstore.Dialect).
var dialect = sqlstore.Dialect{
	RowID: "rid",
	// Inside InTx, SlotGet and EntryGet lock their row until the
	// transaction ends, so decisions about one slot or entry are taken
	// one at a time.
	ForUpdate: ` FOR UPDATE`,
	// LIMIT NULL is no limit.
	Limit: func(n int) any {
		if n <= 0 {
			return nil
		}
		return int64(n)
	},
	// One array argument instead of a list of placeholders: the statement
	// text, and so its prepared statement, is the same for any number of
	// values.
	In: func(col string, vals []string) (string, []any) {
		return col + ` = ANY(?::text[])`, []any{vals}
	},
	// The planner picks among indexes from statistics; no hints are
	// needed (or possible).
	IndexedBy: nil,
	NoIndex:   nil,
	ErrKind:   errKind,

	// TimerClaimDue chooses the batch with FOR UPDATE SKIP LOCKED, so
	// concurrent sweepers take disjoint batches instead of queueing on
	// each other's rows; the outer WHERE repeats the condition so that a
	// row another sweeper leased meanwhile is passed over.
	TimerClaimDue: `WITH due AS MATERIALIZED (
			SELECT id FROM timers
			WHERE done_at IS NULL AND due_at <= ?1 AND (claimed_until IS NULL OR claimed_until <= ?1)
			  AND (renewed_until IS NULL OR renewed_until <= ?1)
			ORDER BY due_at, id
			LIMIT ?4
			FOR UPDATE SKIP LOCKED)
		UPDATE timers
		SET claimed_until = ?2, claimed_by = ?3, attempts = attempts + 1, renewed_until = NULL
		WHERE id IN (SELECT id FROM due)
		  AND done_at IS NULL AND (claimed_until IS NULL OR claimed_until <= ?1)
		  AND (renewed_until IS NULL OR renewed_until <= ?1)
		RETURNING ` + sqlstore.TimerCols,
	// MessageClaimDue: as TimerClaimDue.
	MessageClaimDue: `WITH due AS MATERIALIZED (
			SELECT id FROM messages
			WHERE state IN ('queued', 'failed') AND next_attempt_at <= ?1 AND not_before <= ?1
			  AND (claimed_until IS NULL OR claimed_until <= ?1)
			ORDER BY next_attempt_at, created_at, rid
			LIMIT ?3
			FOR UPDATE SKIP LOCKED)
		UPDATE messages
		SET claimed_until = ?2
		WHERE id IN (SELECT id FROM due)
		  AND state IN ('queued', 'failed') AND (claimed_until IS NULL OR claimed_until <= ?1)
		RETURNING ` + sqlstore.MessageCols,
	// EntryExpireBefore picks the batch with FOR UPDATE SKIP LOCKED, so an
	// entry another transaction holds (EntryGet in an InTx) is left for
	// the next sweep instead of making this one wait; the outer WHERE
	// repeats the state so that an entry that changed meanwhile is not
	// expired.
	EntryExpireBefore: `WITH due AS MATERIALIZED (
			SELECT seq FROM entries WHERE business_id = ?2 AND state = 'waiting' AND latest < ?1
			ORDER BY latest, seq LIMIT ?3 FOR UPDATE SKIP LOCKED)
		UPDATE entries SET state = 'expired', updated_at = ?1
		WHERE seq IN (SELECT seq FROM due)
		  AND state = 'waiting'
		RETURNING ` + sqlstore.EntryCols,
	// EntryLapseBack: an identity column ALWAYS may be set to DEFAULT,
	// which draws the next number of its sequence.
	EntryLapseBack: `UPDATE entries SET lapses = lapses + 1, joined_at = ?2, seq = DEFAULT
		WHERE id = ?1
		RETURNING ` + sqlstore.EntryCols,
}

// rebind turns ? into $1, $2, ... in order, and ?N into $N.
func rebind(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != '?' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		b.WriteByte('$')
		if j > i+1 {
			b.WriteString(q[i+1 : j])
		} else {
			n++
			b.WriteString(strconv.Itoa(n))
		}
		i = j - 1
	}
	return b.String()
}

// errKind maps PostgreSQL's constraint errors to the domain's kinds: a
// unique or check violation (23505, 23514) is ErrConflict, a foreign-key
// violation (23503) ErrNotFound.
func errKind(err error) error {
	var le *leadErr
	if errors.As(err, &le) {
		return nil // not the statement's own (see leadErr)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505", "23514":
			return nextup.ErrConflict
		case "23503":
			return nextup.ErrNotFound
		}
	}
	return nil
}
