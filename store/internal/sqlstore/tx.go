package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// Runner runs the statements of one transaction. Queries come written with
// SQLite's placeholders, ? and ?N; a runner for another dialect rebinds
// them. A runner is also where a store puts what it does around each
// statement (PostgreSQL's per-statement savepoints).
type Runner interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// QueryRow runs a query of one row when the row is scanned; a query
	// that finds none scans an error that matches sql.ErrNoRows (pgx's
	// ErrNoRows does).
	QueryRow(ctx context.Context, query string, args ...any) Scanner
	// Query runs a query of many rows, which the caller closes.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// Defer runs a write whose result nobody reads and that no condition
	// refuses (an audit row, a timer, a queued message). A runner may
	// hold it back and send it with the next statement or the commit,
	// saving a round trip; its failure then fails that statement or the
	// commit, with nextup.ErrTxBroken, and the transaction with it.
	Defer(ctx context.Context, query string, args ...any) error
	// Savepoint runs fn so that the statements it runs are undone, and
	// the transaction goes on, when it returns an error or panics
	// (nextup.Tx.Savepoint). Each store says SAVEPOINT its own way.
	Savepoint(ctx context.Context, fn func() error) error
}

// Dialect is what differs between the SQL of the two stores, in the
// statements that are otherwise the same: each store has one, as a
// package-level value.
type Dialect struct {
	// RowID is the column that orders a table's rows by insertion, to
	// break ties in listings: SQLite's rowid, PostgreSQL's identity
	// column rid.
	RowID string

	// ForUpdate is appended to SlotGet and EntryGet inside a read-write
	// transaction, to lock the row until the transaction ends ("" where a
	// single writer already serialises transactions).
	ForUpdate string

	// Limit turns a Limit field into the LIMIT argument: n <= 0 means no
	// limit.
	Limit func(n int) any

	// In returns the condition "col is one of vals" and its arguments, to
	// stand last in a WHERE clause: an IN list, or a comparison with an
	// array.
	In func(col string, vals []string) (string, []any)

	// IndexedBy returns the hint that makes a query read its table
	// through index, and NoIndex a column compared so that no index
	// serves the comparison (to keep the planner off that index). Nil
	// where the planner takes no hints: no hint, and the bare column.
	IndexedBy func(index string) string
	NoIndex   func(col string) string

	// ErrKind returns the domain's kind of a driver's error, or nil:
	// nextup.ErrConflict for a UNIQUE, CHECK or primary-key violation,
	// nextup.ErrNotFound for a foreign key naming a missing row.
	ErrKind func(err error) error

	// The batch claims, whose SQL differs most (on PostgreSQL the batch
	// is chosen with FOR UPDATE SKIP LOCKED, so concurrent sweepers take
	// disjoint batches; on SQLite the single writer does that). Each
	// returns the changed rows (RETURNING):
	//
	//   - TimerClaimDue leases the timers due at ?1 (not done, lease
	//     free) until ?2 for owner ?3, at most ?4 (a Limit argument),
	//     oldest due first, adding one to attempts; it returns TimerCols.
	//   - MessageClaimDue leases the queued or failed messages due at ?1
	//     (lease free) until ?2, at most ?3, by next_attempt_at,
	//     created_at and insertion; it returns MessageCols.
	//   - EntryExpireBefore expires the waiting entries of business ?2
	//     whose latest is before ?1, at most ?3, by latest and seq,
	//     stamping updated_at ?1; it returns EntryCols.
	TimerClaimDue, MessageClaimDue, EntryExpireBefore string

	// EntryLapseBack counts a lapse of entry ?1 and moves it to the back
	// of its waitlist: joined_at ?2 and a new seq from the sequence
	// entries draw from (Tx.EntryLapse); it returns EntryCols.
	EntryLapseBack string
}

// Err wraps err with the operation's name and maps the driver's errors to
// the domain's kinds: no row is ErrNotFound, and the rest as ErrKind says.
func (d *Dialect) Err(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	switch d.ErrKind(err) {
	case nextup.ErrConflict:
		return fmt.Errorf("%s: %w: %w", op, nextup.ErrConflict, err)
	case nextup.ErrNotFound:
		return fmt.Errorf("%s: a referenced row is missing: %w: %w", op, nextup.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Tx implements nextup.Tx once for both stores: it runs the shared query
// text through a store's Runner and takes the few fragments that differ
// from its Dialect. A store makes one per transaction with NewTx.
type Tx struct {
	r    Runner
	d    *Dialect
	lock string // appended to SlotGet and EntryGet: d.ForUpdate inside InTx
	wake bool   // a timer or message was written (Wake)
}

var _ nextup.Tx = (*Tx)(nil)

// NewTx returns the Tx of one transaction that runs its statements on r.
// write says it is read-write (InTx): lookups by id then lock their row as
// d.ForUpdate says.
func NewTx(r Runner, d *Dialect, write bool) *Tx {
	t := &Tx{r: r, d: d}
	if write {
		t.lock = d.ForUpdate
	}
	return t
}

// Runner returns the runner the transaction's statements go through; a
// store's own tests reach the driver's transaction through it.
func (t *Tx) Runner() Runner { return t.r }

// Wake reports whether the transaction scheduled a timer or queued a
// message, so that a store which tells other instances about new work
// (PostgreSQL's NOTIFY) does so as it commits.
func (t *Tx) Wake() bool { return t.wake }

// err is t's dialect's Err.
func (t *Tx) err(op string, err error) error { return t.d.Err(op, err) }

func (t *Tx) limit(n int) any { return t.d.Limit(n) }

func (d *Dialect) indexedBy(index string) string {
	if d.IndexedBy == nil {
		return ""
	}
	return d.IndexedBy(index)
}

func (d *Dialect) noIndex(col string) string {
	if d.NoIndex == nil {
		return col
	}
	return d.NoIndex(col)
}

// in returns the condition "col is one of vals" in t's dialect.
func in[S ~string](t *Tx, col string, vals []S) (string, []any) {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v)
	}
	return t.d.In(col, s)
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// exists reports whether table has a row with this id; it tells a
// conditional write that matched nothing because the row is missing
// (ErrNotFound) from one whose condition did not hold (ErrConflict).
func (t *Tx) exists(ctx context.Context, table string, id any) (bool, error) {
	var one int
	err := t.r.QueryRow(ctx, Exists(table), id).Scan(&one)
	if isNoRows(err) {
		return false, nil
	}
	return err == nil, err
}

// missOrConflict explains a conditional write on table that changed no row.
func (t *Tx) missOrConflict(ctx context.Context, op, table string, id any) error {
	ok, err := t.exists(ctx, table, id)
	switch {
	case err != nil:
		return t.err(op, err)
	case !ok:
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", op, nextup.ErrConflict)
}

// execOne runs a write that must change exactly the row named by id in
// table; when it changes none, the row is missing or its condition failed.
func (t *Tx) execOne(ctx context.Context, op, table, id, query string, args ...any) error {
	n, err := t.r.Exec(ctx, query, args...)
	if err != nil {
		return t.err(op, err)
	}
	if n == 0 {
		return t.missOrConflict(ctx, op, table, id)
	}
	return nil
}

// touched finishes an UPDATE of one row by id that has no condition
// beyond the id: no row changed means no such row.
func (t *Tx) touched(op string, n int64, err error) error {
	if err != nil {
		return t.err(op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	return nil
}

// returning finishes a conditional write that returns its row: no row
// means the row is missing or its condition failed.
func returning[T any](ctx context.Context, t *Tx, op, table, id string, v T, err error) (T, error) {
	var zero T
	switch {
	case err == nil:
		return v, nil
	case isNoRows(err):
		return zero, t.missOrConflict(ctx, op, table, id)
	}
	return zero, t.err(op, err)
}

// count finishes a statement whose result is the number of rows it
// changed.
func (t *Tx) count(op string, n int64, err error) (int, error) {
	if err != nil {
		return 0, t.err(op, err)
	}
	return int(n), nil
}

// all reads every row of a query with scan.
func all[T any](ctx context.Context, t *Tx, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := t.r.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return Collect(rows, scan)
}

// Savepoint runs fn so that its writes are undone, and the transaction
// goes on, when it returns an error or panics (see nextup.Tx).
func (t *Tx) Savepoint(ctx context.Context, fn func() error) error { return t.r.Savepoint(ctx, fn) }
