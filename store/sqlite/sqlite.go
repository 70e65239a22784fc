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
	w     *writer // group commit (group.go)
	// storage is the last full-disk or read-only failure (storage.go).
	storage storageState
}

var _ nextup.Store = (*DB)(nil)

// Option configures Open.
type Option func(*config)

type config struct {
	readConns   int
	busyTimeout time.Duration
	migrate     bool
	group       int
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
		group:       MaxGroup,
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
	// A file that cannot be written (a read-only mount) is opened
	// read-only: reads are served, writes fail as storage_read_only
	// (storage.go) and /readyz says so.
	dsn, readOnly, roWhy := path, false, ""
	if ro, why := readOnlyFile(path); ro {
		var err error
		if dsn, err = readOnlyDSN(path); err != nil {
			return nil, fmt.Errorf("open sqlite %s: %s, and %w", path, why, err)
		}
		readOnly, roWhy = true, why
	} else {
		wq.Add("_pragma", "journal_mode(WAL)")
	}
	// BEGIN IMMEDIATE takes the write lock when the transaction starts, so
	// a transaction that reads and then writes never fails half-way with
	// SQLITE_BUSY when another process wrote in between.
	wq.Set("_txlock", "immediate")
	write, err := sql.Open("sqlite", joinDSN(dsn, wq))
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
	read, err := sql.Open("sqlite", joinDSN(dsn, rq))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	read.SetMaxOpenConns(cfg.readConns)
	read.SetMaxIdleConns(cfg.readConns)

	db := &DB{path: path, write: write, read: read}
	if readOnly {
		db.storage.set(nextup.CodeStorageReadOnly, "the database was opened read-only: "+roWhy)
		if err := db.checkReadOnlySchema(ctx); err != nil {
			db.Close()
			return nil, err
		}
	} else if cfg.migrate {
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	db.w = newWriter(write, cfg.group)
	db.w.storage = &db.storage
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

// InTx runs fn in one read-write transaction on the writer connection,
// committed together with the other InTx calls waiting at that moment
// (group commit, group.go): its changes are kept when fn returns nil and
// the group's commit succeeds, and undone when fn returns an error or
// panics (the panic goes on, in the caller). fn's error is returned as it
// is, except a full disk or a read-only file, which become the domain's
// storage errors (storage.go). Calling InTx again from inside fn
// deadlocks: there is one writer.
func (db *DB) InTx(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return db.storageError(db.w.do(ctx, fn))
}

// Read runs fn in a read-only transaction on the read pool: one consistent
// snapshot of the committed state. Writes through its Tx fail.
func (db *DB) Read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return run(ctx, db.read, &sql.TxOptions{ReadOnly: true}, false, fn)
}

func run(ctx context.Context, pool *sql.DB, opts *sql.TxOptions, write bool, fn func(tx nextup.Tx) error) (err error) {
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
	// Writes inside Read fail: its connections are query_only.
	ferr := fn(sqlstore.NewTx(&runner{tx: stx}, &dialect, write))
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
	if db.w != nil {
		db.w.close()
	}
	rerr := db.read.Close()
	werr := db.write.Close()
	if err := errors.Join(rerr, werr); err != nil {
		return fmt.Errorf("close sqlite %s: %w", db.path, err)
	}
	return nil
}

// dialect is what SQLite's SQL says its own way in the statements the two
// stores share (see sqlstore.Dialect).
var dialect = sqlstore.Dialect{
	RowID: "rowid",
	// No row lock to take: the single writer connection and BEGIN
	// IMMEDIATE already serialise every read-write transaction.
	ForUpdate: "",
	// A negative LIMIT is no limit.
	Limit: func(n int) any {
		if n <= 0 {
			return -1
		}
		return n
	},
	In: func(col string, vals []string) (string, []any) {
		args := make([]any, len(vals))
		for i, v := range vals {
			args[i] = v
		}
		return col + ` IN (` + sqlstore.Placeholders(len(vals)) + `)`, args
	},
	// Without statistics SQLite's planner may choose a worse index for
	// the queries that walk an index in order; they name theirs.
	IndexedBy: func(index string) string { return ` INDEXED BY ` + index },
	NoIndex:   func(col string) string { return `+` + col },
	ErrKind:   errKind,

	// The single writer is what SKIP LOCKED is on PostgreSQL: nothing else
	// can lease or change the rows between the subquery and the UPDATE.
	TimerClaimDue: `UPDATE timers
		SET claimed_until = ?2, claimed_by = ?3, attempts = attempts + 1, renewed_until = NULL
		WHERE id IN (
			SELECT id FROM timers
			WHERE done_at IS NULL AND due_at <= ?1 AND (claimed_until IS NULL OR claimed_until <= ?1)
			  AND (renewed_until IS NULL OR renewed_until <= ?1)
			ORDER BY due_at, id
			LIMIT ?4)
		RETURNING ` + sqlstore.TimerCols,
	MessageClaimDue: `UPDATE messages
		SET claimed_until = ?2
		WHERE rowid IN (
			SELECT rowid FROM messages
			WHERE state IN ('queued', 'failed') AND next_attempt_at <= ?1 AND not_before <= ?1
			  AND (claimed_until IS NULL OR claimed_until <= ?1)
			ORDER BY next_attempt_at, created_at, rowid
			LIMIT ?3)
		RETURNING ` + sqlstore.MessageCols,
	EntryExpireBefore: `UPDATE entries SET state = 'expired', updated_at = ?1
		WHERE seq IN (SELECT seq FROM entries WHERE business_id = ?2 AND state = 'waiting' AND latest < ?1
			ORDER BY latest, seq LIMIT ?3)
		RETURNING ` + sqlstore.EntryCols,
	// EntryLapseBack takes the number after the highest AUTOINCREMENT has
	// recorded (or any row holds); the trigger entries_seq_moved records
	// it in turn, so it is never handed out again.
	EntryLapseBack: `UPDATE entries SET lapses = lapses + 1, joined_at = ?2,
			seq = (SELECT max(s.seq, (SELECT max(seq) FROM entries)) + 1 FROM sqlite_sequence s WHERE s.name = 'entries')
		WHERE id = ?1
		RETURNING ` + sqlstore.EntryCols,
}

// errKind maps SQLite's constraint errors to the domain's kinds: a CHECK,
// UNIQUE or primary-key violation is ErrConflict, a missing referenced row
// (foreign key) ErrNotFound.
func errKind(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_UNIQUE,
			sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return nextup.ErrConflict
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return nextup.ErrNotFound
		}
	}
	return nil
}

// runner runs the statements of one database/sql transaction for
// sqlstore.Tx.
type runner struct {
	tx    *sql.Tx
	depth int // Savepoints open
	// detach: statements ignore the end of their context (a group
	// commit's transaction: SQLite rolls back the whole transaction when
	// one of its statements is interrupted).
	detach bool
	// stmts are the writer's prepared statements (nil: none), busy the
	// ones whose rows are open in this transaction.
	stmts *stmtCache
	busy  map[string]bool
	// storage turns a full disk or a read-only file into the domain's
	// storage errors as the statement fails, so that the use case, and
	// the response, see them (storage.go); nil in Read.
	storage *storageState
}

func (r *runner) ctx(ctx context.Context) context.Context {
	if r.detach {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// Savepoint runs fn between SAVEPOINT and RELEASE, rolling back to the
// savepoint when fn fails or panics.
func (r *runner) Savepoint(ctx context.Context, fn func() error) (err error) {
	r.depth++
	name := fmt.Sprintf("uc%d", r.depth)
	defer func() { r.depth-- }()
	ctx = r.ctx(ctx)
	if _, err := r.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	done := false
	defer func() {
		if !done || err != nil {
			_, rerr := r.tx.ExecContext(context.WithoutCancel(ctx), "ROLLBACK TO "+name)
			if rerr == nil {
				_, rerr = r.tx.ExecContext(context.WithoutCancel(ctx), "RELEASE "+name)
			}
			if rerr != nil && done {
				// SQLite rolled the whole transaction back itself (a full
				// disk, an I/O error): nothing is left to go on with.
				err = errors.Join(err, fmt.Errorf("roll back to savepoint: %w: %w", nextup.ErrTxBroken, rerr))
			}
		}
	}()
	err = fn()
	done = true
	if err == nil {
		if _, rerr := r.tx.ExecContext(ctx, "RELEASE "+name); rerr != nil {
			return fmt.Errorf("release savepoint: %w", rerr)
		}
	}
	return err
}

// Defer runs the write at once: a statement costs no round trip here.
func (r *runner) Defer(ctx context.Context, q string, args ...any) error {
	_, err := r.Exec(ctx, q, args...)
	return err
}

func (r *runner) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	if st := r.stmt(q); st != nil {
		res, err = st.ExecContext(r.ctx(ctx), args...)
		r.busy[q] = false // an Exec holds no rows
	} else {
		res, err = r.tx.ExecContext(r.ctx(ctx), q, args...)
	}
	if err != nil {
		return 0, r.storage.wrap(err)
	}
	return res.RowsAffected()
}

func (r *runner) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Scanner {
	var row sqlstore.Scanner
	if st := r.stmt(q); st != nil {
		row = &stmtRow{row: st.QueryRowContext(r.ctx(ctx), args...), done: func() { r.busy[q] = false }}
	} else {
		row = r.tx.QueryRowContext(r.ctx(ctx), q, args...)
	}
	if r.storage != nil {
		return storageRow{Scanner: row, st: r.storage}
	}
	return row
}

func (r *runner) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	var rows sqlstore.Rows
	if st := r.stmt(q); st != nil {
		rs, err := st.QueryContext(r.ctx(ctx), args...)
		if err != nil {
			r.busy[q] = false
			return nil, r.storage.wrap(err)
		}
		rows = &stmtRows{Rows: rs, done: func() { r.busy[q] = false }}
	} else {
		rs, err := r.tx.QueryContext(r.ctx(ctx), q, args...)
		if err != nil {
			return nil, r.storage.wrap(err)
		}
		rows = rs
	}
	if r.storage != nil {
		return storageRows{Rows: rows, st: r.storage}, nil
	}
	return rows, nil
}

// stmt is the writer's prepared statement of q bound to this transaction,
// marked busy until its rows are read; nil when there is none (the
// writer prepares it after this group, stmts.go), or when it is busy
// (a query run again while its rows are still open).
func (r *runner) stmt(q string) *sql.Stmt {
	if r.stmts == nil || r.busy[q] {
		return nil
	}
	st := r.stmts.get(q)
	if st == nil {
		return nil
	}
	if r.busy == nil {
		r.busy = map[string]bool{}
	}
	r.busy[q] = true
	return r.tx.Stmt(st)
}

// stmtRow and stmtRows free their statement for the next use once read.
type stmtRow struct {
	row  *sql.Row
	done func()
}

func (s *stmtRow) Scan(dest ...any) error {
	defer s.done()
	return s.row.Scan(dest...)
}

type stmtRows struct {
	*sql.Rows
	done func()
}

func (s *stmtRows) Close() error {
	defer s.done()
	return s.Rows.Close()
}
