package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
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
	return &DB{dsn: dsn, pool: pool}, nil
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
		err = db.run(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite}, true, fn)
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
	return db.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
}

func (db *DB) run(ctx context.Context, opts pgx.TxOptions, write bool, fn func(tx nextup.Tx) error) error {
	ptx, err := db.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	done := false
	defer func() {
		if !done {
			// fn panicked: undo, and let the panic go on. The context may
			// be the reason; roll back regardless of it.
			_ = ptx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	t := sqlstore.NewTx(&sqlTx{tx: ptx, write: write}, &dialect, write)
	ferr := fn(t)
	done = true
	if ferr == nil && t.Wake() {
		// Delivered to listeners only if the transaction commits.
		_, ferr = ptx.Exec(ctx, `SELECT pg_notify($1, '')`, WakeChannel)
	}
	if ferr != nil {
		if rerr := ptx.Rollback(context.WithoutCancel(ctx)); rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
			return errors.Join(ferr, fmt.Errorf("rollback: %w", rerr))
		}
		return ferr
	}
	if err := ptx.Commit(ctx); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) && ctx.Err() == nil {
			// The connection broke during the commit: the server may or
			// may not have committed.
			return fmt.Errorf("commit: %w: %w", ErrCommitUnknown, err)
		}
		return fmt.Errorf("commit: %w", err)
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

// WakeChannel is the LISTEN/NOTIFY channel a transaction that scheduled a
// timer or queued a message notifies when it commits.
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

// Close closes the pool; closing twice is harmless.
func (db *DB) Close() error {
	db.pool.Close()
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
			ORDER BY due_at, id
			LIMIT ?4
			FOR UPDATE SKIP LOCKED)
		UPDATE timers
		SET claimed_until = ?2, claimed_by = ?3, attempts = attempts + 1
		WHERE id IN (SELECT id FROM due)
		  AND done_at IS NULL AND (claimed_until IS NULL OR claimed_until <= ?1)
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

// sqlTx is the sqlstore.Runner of one pgx transaction: it runs the query
// text the two stores share, written with ? and ?N placeholders and
// rebound to $N.
//
// A failed statement aborts a PostgreSQL transaction, while the contract
// says a failed conditional write leaves it usable. So inside InTx every
// statement that changes rows runs inside its own SAVEPOINT, rolled back
// to when the statement fails (a constraint refused it).
type sqlTx struct {
	tx    pgx.Tx
	write bool
	// frames are the open Savepoints, innermost last. A savepoint is sent
	// to the server only with the first statement run inside it (a read
	// or a write), pipelined with that statement, so it costs no round
	// trip of its own; it is never released (COMMIT releases it), only
	// rolled back to when its function fails. Names are never reused in
	// one transaction (uc1, uc2, …), so a rollback reaches its own.
	frames []savepoint
	named  int
}

type savepoint struct {
	name string
	sent bool
}

// Savepoint runs fn so that its statements are undone, and the
// transaction goes on, when it returns an error or panics.
func (s *sqlTx) Savepoint(ctx context.Context, fn func() error) (err error) {
	s.named++
	s.frames = append(s.frames, savepoint{name: fmt.Sprintf("uc%d", s.named)})
	mine := len(s.frames) - 1
	done := false
	defer func() {
		f := s.frames[mine]
		s.frames = s.frames[:mine]
		if (done && err == nil) || !f.sent {
			return // kept, or nothing of fn reached the server
		}
		b := &pgx.Batch{}
		b.Queue("ROLLBACK TO SAVEPOINT " + f.name)
		if rerr := s.tx.SendBatch(context.WithoutCancel(ctx), b).Close(); rerr != nil && done {
			err = errors.Join(err, fmt.Errorf("roll back to savepoint: %w: %w", nextup.ErrTxBroken, rerr))
		}
	}()
	err = fn()
	done = true
	return err
}

// unsent queues the savepoints the server does not have yet on b and
// returns how many. One that fails means the transaction had failed
// already (SAVEPOINT refuses nothing else).
func (s *sqlTx) unsent(b *pgx.Batch) int {
	n := 0
	for i := range s.frames {
		if !s.frames[i].sent {
			b.Queue("SAVEPOINT " + s.frames[i].name)
			s.frames[i].sent = true
			n++
		}
	}
	return n
}

func isWrite(q string) bool {
	s := strings.TrimSpace(q)
	return len(s) >= 6 && !strings.EqualFold(s[:6], "SELECT")
}

// protect runs statement q with args. Inside InTx a statement that writes
// runs in a savepoint of its own, and SAVEPOINT, the statement and RELEASE
// travel to the server together, pipelined in one pgx batch: one round trip,
// as for the bare statement. Only when the statement fails does a second
// one roll back to the savepoint, leaving the transaction usable. use reads
// the statement's result.
func (s *sqlTx) protect(ctx context.Context, q string, args []any, use func(pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	savepoint := s.write && isWrite(q)
	outer := 0
	if s.write {
		outer = s.unsent(b)
	}
	if savepoint {
		b.Queue("SAVEPOINT nx")
	}
	b.Queue(rebind(q), args...)
	if savepoint {
		b.Queue("RELEASE SAVEPOINT nx")
	}
	br := s.tx.SendBatch(ctx, b)
	var err error
	for range outer {
		if _, err = br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("savepoint: %w: %w", nextup.ErrTxBroken, err)
		}
	}
	established := false // the savepoint is still there: roll back to it
	if !savepoint {
		err = use(br)
	} else if _, err = br.Exec(); err == nil {
		err = use(br)
		// RELEASE fails (and the savepoint stays) exactly when the
		// statement failed on the server; use may also fail on this
		// side only (no row to scan), and then RELEASE went through.
		_, rerr := br.Exec()
		established = rerr != nil
		if err == nil {
			err = rerr
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil && established {
		for _, undo := range []string{"ROLLBACK TO SAVEPOINT nx", "RELEASE SAVEPOINT nx"} {
			if _, rerr := s.tx.Exec(ctx, undo); rerr != nil {
				return errors.Join(err, rerr)
			}
		}
	}
	return err
}

// Exec runs a statement that changes rows and returns how many it changed.
func (s *sqlTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := s.protect(ctx, q, args, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// row runs its query when it is scanned.
type row struct {
	ctx  context.Context
	s    *sqlTx
	q    string
	args []any
}

func (r *row) Scan(dest ...any) error {
	return r.s.protect(r.ctx, r.q, r.args, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(dest...)
	})
}

// QueryRow runs a query of one row when the row is scanned.
func (s *sqlTx) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Scanner {
	return &row{ctx: ctx, s: s, q: q, args: args}
}

// Query runs a query of many rows, without a savepoint: the ones that
// write (claims, expiry) cannot break a constraint.
func (s *sqlTx) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	if b := (&pgx.Batch{}); s.write && s.unsent(b) > 0 {
		if err := s.tx.SendBatch(ctx, b).Close(); err != nil {
			return nil, fmt.Errorf("savepoint: %w: %w", nextup.ErrTxBroken, err)
		}
	}
	rows, err := s.tx.Query(ctx, rebind(q), args...)
	if err != nil {
		return nil, err
	}
	return closer{rows}, nil
}

// closer gives pgx.Rows the Close that sqlstore.Rows has.
type closer struct{ pgx.Rows }

func (c closer) Close() error {
	c.Rows.Close()
	return c.Rows.Err()
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
