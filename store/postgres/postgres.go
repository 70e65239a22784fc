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
	t := &tx{tx: &sqlTx{tx: ptx, write: write}, write: write}
	ferr := fn(t)
	done = true
	if ferr == nil && t.wake {
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

// tx implements nextup.Tx on one pgx transaction.
type tx struct {
	tx    *sqlTx
	write bool // inside InTx: lookups by id lock the row
	wake  bool // a timer or message was written: notify WakeChannel on commit
}

var _ nextup.Tx = (*tx)(nil)

// forUpdate is appended to SlotGet and EntryGet inside InTx.
func (t *tx) forUpdate() string {
	if t.write {
		return ` FOR UPDATE`
	}
	return ``
}

// sqlTx runs statements on a pgx.Tx with database/sql-shaped methods, so
// that this package runs the same query text as the SQLite store, much of
// it from store/internal/sqlstore. Queries are written with ? and ?N
// placeholders and rebound to $N.
//
// A failed statement aborts a PostgreSQL transaction, while the contract
// says a failed conditional write leaves it usable. So inside InTx every
// statement that changes rows runs inside its own SAVEPOINT, rolled back
// to when the statement fails (a constraint refused it).
type sqlTx struct {
	tx    pgx.Tx
	write bool
	// depth is how many Savepoints are open; sent is how many of them the
	// server has been told of. A savepoint is sent only just before the
	// first statement that writes inside it, pipelined with it, so a
	// Savepoint costs no round trip of its own; and it is never released
	// (COMMIT releases it), only rolled back to when its function fails.
	depth, sent int
}

// Savepoint runs fn so that its writes are undone, and the transaction
// goes on, when it returns an error or panics.
func (t *tx) Savepoint(ctx context.Context, fn func() error) (err error) {
	s := t.tx
	s.depth++
	mine := s.depth
	done := false
	defer func() {
		if !done || err != nil {
			if s.sent >= mine {
				// Back to before fn; the savepoint itself goes too, so a
				// later one of the same name is the one rolled back to.
				b := &pgx.Batch{}
				b.Queue(fmt.Sprintf("ROLLBACK TO SAVEPOINT uc%d", mine))
				b.Queue(fmt.Sprintf("RELEASE SAVEPOINT uc%d", mine))
				rerr := s.tx.SendBatch(context.WithoutCancel(ctx), b).Close()
				if rerr != nil && done {
					err = errors.Join(err, fmt.Errorf("roll back to savepoint: %w", rerr))
				}
			}
		}
		s.depth = mine - 1
		s.sent = min(s.sent, s.depth)
	}()
	err = fn()
	done = true
	return err
}

// unsent queues the savepoints the server does not have yet on b.
func (s *sqlTx) unsent(b *pgx.Batch) int {
	n := 0
	for ; s.sent < s.depth; s.sent++ {
		b.Queue(fmt.Sprintf("SAVEPOINT uc%d", s.sent+1))
		n++
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
	if savepoint {
		outer = s.unsent(b)
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
			return fmt.Errorf("savepoint: %w", err)
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

type result int64

func (r result) RowsAffected() (int64, error) { return int64(r), nil }

func (s *sqlTx) ExecContext(ctx context.Context, q string, args ...any) (result, error) {
	var n int64
	err := s.protect(ctx, q, args, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		n = tag.RowsAffected()
		return err
	})
	return result(n), err
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

func (s *sqlTx) QueryRowContext(ctx context.Context, q string, args ...any) *row {
	return &row{ctx: ctx, s: s, q: q, args: args}
}

// QueryContext runs a query of many rows, without a savepoint: the ones
// that write (claims, expiry) cannot break a constraint.
func (s *sqlTx) QueryContext(ctx context.Context, q string, args ...any) (pgx.Rows, error) {
	if s.write && isWrite(q) && s.sent < s.depth {
		b := &pgx.Batch{}
		n := s.unsent(b)
		br := s.tx.SendBatch(ctx, b)
		for range n {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return nil, fmt.Errorf("savepoint: %w", err)
			}
		}
		if err := br.Close(); err != nil {
			return nil, fmt.Errorf("savepoint: %w", err)
		}
	}
	return s.tx.Query(ctx, rebind(q), args...)
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

// dbErr wraps err with the operation's name and maps the driver's errors to
// the domain's kinds: no row is ErrNotFound, a CHECK or UNIQUE constraint
// is ErrConflict, a missing referenced row (foreign key) is ErrNotFound.
func dbErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505", "23514":
			return fmt.Errorf("%s: %w: %w", op, nextup.ErrConflict, err)
		case "23503":
			return fmt.Errorf("%s: a referenced row is missing: %w: %w", op, nextup.ErrNotFound, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// limitArg turns a Limit field into a LIMIT argument: <= 0 means no limit
// (LIMIT NULL).
func limitArg(n int) any {
	if n <= 0 {
		return nil
	}
	return int64(n)
}

// strs turns a list of states into a text[] argument.
func strs[S ~string](v []S) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	return out
}

// exists reports whether table has a row with this id; it tells a
// conditional write that matched nothing because the row is missing
// (ErrNotFound) from one whose condition did not hold (ErrConflict).
func (t *tx) exists(ctx context.Context, table, id string) (bool, error) {
	var one int
	err := t.tx.QueryRowContext(ctx, sqlstore.Exists(table), id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// missOrConflict explains a conditional write on table that changed no row.
func (t *tx) missOrConflict(ctx context.Context, op, table, id string) error {
	ok, err := t.exists(ctx, table, id)
	switch {
	case err != nil:
		return dbErr(op, err)
	case !ok:
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", op, nextup.ErrConflict)
}

// execOne runs a write that must change exactly the row named by id in
// table; when it changes none, the row is missing or its condition failed.
func (t *tx) execOne(ctx context.Context, op, table, id, query string, args ...any) error {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return dbErr(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return dbErr(op, err)
	}
	if n == 0 {
		return t.missOrConflict(ctx, op, table, id)
	}
	return nil
}

// touched finishes an UPDATE of one row by id that has no condition
// beyond the id: no row changed means no such row.
func (t *tx) touched(ctx context.Context, op string, res interface{ RowsAffected() (int64, error) }, err error) error {
	if err != nil {
		return dbErr(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return dbErr(op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	return nil
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// scanAll returns a function that reads every row of a query with scan.
func scanAll[T any](scan func(sqlstore.Scanner) (T, error)) func(pgx.Rows, error) ([]T, error) {
	return func(rows pgx.Rows, err error) ([]T, error) {
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return sqlstore.Collect(rows, scan)
	}
}
