package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// DB is a nextup.Store kept in one SQLite file. It holds two connection
// pools on that file: a single writer connection, which serialises every
// read-write transaction in this process, and a pool of query-only
// connections for Read, which in WAL mode never wait for the writer.
type DB struct {
	path  string
	write *sql.DB
	read  *sql.DB
}

var _ nextup.Store = (*DB)(nil)

// Option configures Open.
type Option func(*config)

type config struct {
	readConns   int
	busyTimeout time.Duration
	migrate     bool
}

// ReadConns sets the size of the read pool (default: the number of CPUs,
// at least 4).
func ReadConns(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.readConns = n
		}
	}
}

// BusyTimeout sets how long a connection waits for a lock held by another
// process on the same file before failing with SQLITE_BUSY (default 10 s).
// Within one process the single writer connection already queues writers.
func BusyTimeout(d time.Duration) Option {
	return func(c *config) {
		if d >= 0 {
			c.busyTimeout = d
		}
	}
}

// SkipMigrate makes Open leave the schema as it is; the caller runs
// (*DB).Migrate itself, as `nextup migrate` does.
func SkipMigrate() Option {
	return func(c *config) { c.migrate = false }
}

// Open opens (creating if needed) the SQLite database at path and, unless
// SkipMigrate is given, brings its schema up to date.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	cfg := config{
		readConns:   max(4, runtime.NumCPU()),
		busyTimeout: 10 * time.Second,
		migrate:     true,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" || strings.Contains(path, "?") || strings.HasPrefix(path, "file:") || strings.Contains(path, ":memory:") {
		// The writer and the read pool must see the same file; an
		// in-memory database would be a different one per connection.
		return nil, fmt.Errorf("open sqlite %q: want a file path (no URI, no query, not :memory:)", path)
	}

	// Pragmas, applied by the driver on every new connection, busy_timeout
	// first so that none of the others can fail with SQLITE_BUSY:
	//
	//   - journal_mode(WAL): readers never block the writer or each other.
	//   - foreign_keys(ON): references are checked (off by default in SQLite).
	//   - synchronous(FULL): in WAL mode, NORMAL skips the fsync of the WAL
	//     at commit, so a power cut can lose the last transactions that
	//     were reported committed (the database stays consistent, but they
	//     are gone). A confirmed claim is a booking the customer has been
	//     told about; it must survive a power cut. FULL costs one fsync of
	//     the WAL per commit, which a waitlist's write rate easily affords.
	//   - cache_size(-16384): 16 MiB of page cache per connection instead of
	//     2 MiB; on a list of 300,000 entries it made a position count
	//     about twice as fast.
	//   - journal_size_limit: the WAL file shrinks back after a checkpoint
	//     that followed a large transaction (an import).
	//   - temp_store(MEMORY): sorts of small result sets stay off the disk.
	common := url.Values{}
	common.Add("_pragma", "busy_timeout("+strconv.FormatInt(cfg.busyTimeout.Milliseconds(), 10)+")")
	common.Add("_pragma", "foreign_keys(ON)")
	common.Add("_pragma", "synchronous(FULL)")
	common.Add("_pragma", "cache_size(-16384)")
	common.Add("_pragma", "journal_size_limit(67108864)")
	common.Add("_pragma", "temp_store(MEMORY)")

	wq := cloneValues(common)
	wq.Add("_pragma", "journal_mode(WAL)")
	// BEGIN IMMEDIATE takes the write lock when the transaction starts, so
	// a transaction that reads and then writes never fails half-way with
	// SQLITE_BUSY when another process wrote in between.
	wq.Set("_txlock", "immediate")
	write, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	// The writer connection has switched the file to WAL (it persists)
	// before the first reader connects: Ping forces the connection open.
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}

	rq := cloneValues(common)
	rq.Add("_pragma", "query_only(ON)") // a write inside Read fails
	read, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	read.SetMaxOpenConns(cfg.readConns)
	read.SetMaxIdleConns(cfg.readConns)

	db := &DB{path: path, write: write, read: read}
	if cfg.migrate {
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// Path returns the file the database lives in.
func (db *DB) Path() string { return db.path }

// InTx runs fn in one read-write transaction (BEGIN IMMEDIATE on the writer
// connection): it commits when fn returns nil and rolls back when fn returns
// an error or panics (the panic goes on). fn's error is returned as it is.
// Calling InTx again from inside fn deadlocks: there is one writer.
func (db *DB) InTx(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return run(ctx, db.write, nil, fn)
}

// Read runs fn in a read-only transaction on the read pool: one consistent
// snapshot of the committed state. Writes through its Tx fail.
func (db *DB) Read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return run(ctx, db.read, &sql.TxOptions{ReadOnly: true}, fn)
}

func run(ctx context.Context, pool *sql.DB, opts *sql.TxOptions, fn func(tx nextup.Tx) error) (err error) {
	stx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	done := false
	defer func() {
		if !done {
			// fn panicked: undo, and let the panic go on.
			_ = stx.Rollback()
		}
	}()
	ferr := fn(&tx{tx: stx})
	done = true
	if ferr != nil {
		if rerr := stx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			return errors.Join(ferr, fmt.Errorf("rollback: %w", rerr))
		}
		return ferr
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Ping checks that both pools can reach the file.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite writer: %w", err)
	}
	if err := db.read.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite readers: %w", err)
	}
	return nil
}

// Close closes both pools. When the last connection closes, SQLite
// checkpoints the WAL into the main file.
func (db *DB) Close() error {
	rerr := db.read.Close()
	werr := db.write.Close()
	if err := errors.Join(rerr, werr); err != nil {
		return fmt.Errorf("close sqlite %s: %w", db.path, err)
	}
	return nil
}

// tx implements nextup.Tx on one database/sql transaction. Methods that
// write fail inside Read because its connections are query_only.
type tx struct {
	tx    *sql.Tx
	depth int // Savepoints open
}

// Savepoint runs fn so that its writes are undone, and the transaction
// goes on, when it returns an error or panics.
func (t *tx) Savepoint(ctx context.Context, fn func() error) (err error) {
	t.depth++
	name := fmt.Sprintf("uc%d", t.depth)
	defer func() { t.depth-- }()
	if _, err := t.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return dbErr("savepoint", err)
	}
	done := false
	defer func() {
		if !done || err != nil {
			_, rerr := t.tx.ExecContext(context.WithoutCancel(ctx), "ROLLBACK TO "+name)
			if rerr == nil {
				_, rerr = t.tx.ExecContext(context.WithoutCancel(ctx), "RELEASE "+name)
			}
			if rerr != nil && done {
				err = errors.Join(err, dbErr("roll back to savepoint", rerr))
			}
		}
	}()
	err = fn()
	done = true
	if err == nil {
		if _, rerr := t.tx.ExecContext(ctx, "RELEASE "+name); rerr != nil {
			return dbErr("release savepoint", rerr)
		}
	}
	return err
}

var _ nextup.Tx = (*tx)(nil)

// dbErr wraps err with the operation's name and maps the driver's errors to
// the domain's kinds: no row is ErrNotFound, a CHECK or UNIQUE constraint
// is ErrConflict, a missing referenced row (foreign key) is ErrNotFound.
func dbErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_UNIQUE,
			sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%s: %w: %w", op, nextup.ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%s: a referenced row is missing: %w: %w", op, nextup.ErrNotFound, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// limitArg turns a Limit field into SQLite's LIMIT argument: <= 0 means no limit.
func limitArg(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// exists reports whether table has a row with this id; it tells a
// conditional write that matched nothing because the row is missing
// (ErrNotFound) from one whose condition did not hold (ErrConflict).
func (t *tx) exists(ctx context.Context, table, id string) (bool, error) {
	var one int
	err := t.tx.QueryRowContext(ctx, sqlstore.Exists(table), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
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

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// scanAll returns a function that reads every row of a query with scan.
func scanAll[T any](scan func(sqlstore.Scanner) (T, error)) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) {
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return sqlstore.Collect(rows, scan)
	}
}
