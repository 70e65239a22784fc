package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// The statements that open InTx's and Read's transactions.
const (
	beginWrite = "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE"
	beginRead  = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
)

// maxDeferred bounds the statements a transaction holds back (Defer)
// before it sends them on their own, so that a transaction of many
// thousand rows does not build one batch of them all.
const maxDeferred = 64

// sqlTx is the sqlstore.Runner of one transaction on one connection: it
// runs the query text the two stores share, written with ? and ?N
// placeholders and rebound to $N.
//
// It spends as few round trips as the protocol allows. Nothing goes to the
// server on its own that can travel with something else in one pipelined
// batch:
//
//   - BEGIN is sent with the transaction's first statement, and a
//     transaction that runs none costs nothing;
//   - a write whose result nobody reads (Defer: an audit row, a timer, a
//     queued message) is held back and sent in front of the next
//     statement, or with COMMIT;
//   - a Savepoint is sent with the first statement run inside it.
//
// A failed statement aborts a PostgreSQL transaction, while the contract
// says a failed conditional write leaves it usable. So inside InTx every
// statement that changes rows and whose result is read runs inside its own
// SAVEPOINT, rolled back to when the statement fails (a constraint refused
// it). A held-back write has none: it can fail only when something is
// wrong beyond a refused condition, and its failure fails the statement it
// travelled with, or the commit, as ErrTxBroken, and the transaction is
// rolled back whole.
type sqlTx struct {
	c     *pgx.Conn
	write bool
	// begin is the BEGIN statement while it has not been sent, "" after.
	begin string
	// deferred are the held-back writes, in order, with any SAVEPOINT
	// they were written inside of.
	deferred []deferred
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
	sent bool // sent, or queued in deferred
}

type deferred struct {
	q    string // rebound
	args []any
}

// leadErr is the failure of something sent in front of a statement: the
// BEGIN, a held-back write, a savepoint. It is ErrTxBroken, and it hides
// the driver's error from errKind, so that the statement it travelled
// with is not taken for the one refused (a foreign key missing under an
// audit row is not "slot not found"); retryable still sees it, through
// Unwrap, so a deadlock met by a held-back write runs the transaction
// again.
type leadErr struct {
	what string
	err  error
}

func (e *leadErr) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.what, nextup.ErrTxBroken, e.err)
}

func (e *leadErr) Unwrap() []error { return []error{nextup.ErrTxBroken, e.err} }

// lead queues on b, in order, what the server must run before the next
// statement: the BEGIN, the held-back writes, the savepoints not sent.
// It returns what each queued item is, for readLead.
func (s *sqlTx) lead(b *pgx.Batch) []string {
	var what []string
	if s.begin != "" {
		b.Queue(s.begin)
		what = append(what, "begin")
		s.begin = ""
	}
	for _, d := range s.deferred {
		b.Queue(d.q, d.args...)
		what = append(what, "held-back write")
	}
	s.deferred = s.deferred[:0]
	if s.write {
		for i := range s.frames {
			if !s.frames[i].sent {
				b.Queue("SAVEPOINT " + s.frames[i].name)
				s.frames[i].sent = true
				what = append(what, "savepoint")
			}
		}
	}
	return what
}

// readLead reads the results of what lead queued. A BEGIN that fails
// before the server had it is the caller's to retry (retryable); anything
// else failing leaves the transaction aborted.
func readLead(br pgx.BatchResults, what []string) error {
	for _, w := range what {
		if _, err := br.Exec(); err != nil {
			if w == "begin" {
				return fmt.Errorf("begin: %w", err)
			}
			return &leadErr{what: w, err: err}
		}
	}
	return nil
}

// flush sends what lead holds, on its own.
func (s *sqlTx) flush(ctx context.Context) error {
	b := &pgx.Batch{}
	what := s.lead(b)
	if len(what) == 0 {
		return nil
	}
	br := s.c.SendBatch(ctx, b)
	err := readLead(br, what)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = &leadErr{what: "batch", err: cerr}
	}
	return err
}

// commit sends the held-back writes and COMMIT in one batch: one round
// trip, none at all for a transaction that ran nothing. A connection that
// breaks once the batch may have reached the server leaves the outcome
// unknown (ErrCommitUnknown).
func (s *sqlTx) commit(ctx context.Context) error {
	if s.begin != "" && len(s.deferred) == 0 {
		return nil // nothing reached the server
	}
	b := &pgx.Batch{}
	what := s.lead(b)
	b.Queue("COMMIT")
	br := s.c.SendBatch(ctx, b)
	err := readLead(br, what)
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pe *pgconn.PgError
	switch {
	case err == nil && tag.String() != "COMMIT":
		// COMMIT of a transaction that had failed rolls it back.
		return fmt.Errorf("commit: %w: the transaction had failed and was rolled back", nextup.ErrTxBroken)
	case err == nil:
		return nil
	case errors.As(err, &pe):
		// The server refused something (a held-back write, a deferred
		// constraint): the transaction is aborted, not committed.
		_, _ = s.c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("commit: %w", err)
	case pgconn.SafeToRetry(err):
		return fmt.Errorf("commit: %w", err) // nothing was sent
	case ctx.Err() == nil:
		// The connection broke during the commit: the server may or may
		// not have committed.
		return fmt.Errorf("commit: %w: %w", ErrCommitUnknown, err)
	}
	return fmt.Errorf("commit: %w", err)
}

// rollback ends the transaction without keeping anything. A connection
// that fails here is closed by the pool on release.
func (s *sqlTx) rollback(ctx context.Context) error {
	s.deferred = nil
	if s.begin != "" {
		return nil // nothing reached the server
	}
	if s.c.IsClosed() {
		return nil // the server rolled it back when the connection went
	}
	_, err := s.c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	return err
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
		if (done && err == nil) || !f.sent {
			s.frames = s.frames[:mine]
			return // kept, or nothing of fn reached the server
		}
		// What fn held back goes first (it is undone with the rest);
		// the frames inside this one are gone already.
		b := &pgx.Batch{}
		what := s.lead(b)
		s.frames = s.frames[:mine]
		b.Queue("ROLLBACK TO SAVEPOINT " + f.name)
		br := s.c.SendBatch(context.WithoutCancel(ctx), b)
		rerr := readLead(br, what)
		if rerr == nil {
			_, rerr = br.Exec()
		}
		if cerr := br.Close(); rerr == nil {
			rerr = cerr
		}
		if rerr != nil && done {
			err = errors.Join(err, fmt.Errorf("roll back to savepoint: %w: %w", nextup.ErrTxBroken, rerr))
		}
	}()
	err = fn()
	done = true
	return err
}

func isWrite(q string) bool {
	s := strings.TrimSpace(q)
	return len(s) >= 6 && !strings.EqualFold(s[:6], "SELECT")
}

// protect runs statement q with args. Inside InTx a statement that writes
// runs in a savepoint of its own, and SAVEPOINT, the statement and RELEASE
// travel to the server together, pipelined in one pgx batch behind what
// lead holds: one round trip, as for the bare statement. Only when the
// statement fails does a second one roll back to the savepoint, leaving
// the transaction usable. use reads the statement's result.
func (s *sqlTx) protect(ctx context.Context, q string, args []any, use func(pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	what := s.lead(b)
	savepoint := s.write && isWrite(q)
	if savepoint {
		b.Queue("SAVEPOINT nx")
	}
	b.Queue(rebind(q), args...)
	if savepoint {
		b.Queue("RELEASE SAVEPOINT nx")
	}
	br := s.c.SendBatch(ctx, b)
	if err := readLead(br, what); err != nil {
		br.Close()
		return err
	}
	var err error
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
			if _, rerr := s.c.Exec(ctx, undo); rerr != nil {
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

// Defer holds a write back, to go with the next statement or the commit
// (see sqlTx). Outside InTx it runs at once (and fails: the transaction is
// read-only).
func (s *sqlTx) Defer(ctx context.Context, q string, args ...any) error {
	if !s.write {
		_, err := s.Exec(ctx, q, args...)
		return err
	}
	// The savepoints it is written inside of go first, in order.
	for i := range s.frames {
		if !s.frames[i].sent {
			s.deferred = append(s.deferred, deferred{q: "SAVEPOINT " + s.frames[i].name})
			s.frames[i].sent = true
		}
	}
	s.deferred = append(s.deferred, deferred{q: rebind(q), args: args})
	if len(s.deferred) >= maxDeferred {
		return s.flush(ctx)
	}
	return nil
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

// Query runs a query of many rows, without a savepoint (the ones that
// write, claims and expiry, cannot break a constraint), behind what lead
// holds in the same batch.
func (s *sqlTx) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	b := &pgx.Batch{}
	what := s.lead(b)
	if len(what) == 0 {
		rows, err := s.c.Query(ctx, rebind(q), args...)
		if err != nil {
			return nil, err
		}
		return batchRows{Rows: rows}, nil
	}
	b.Queue(rebind(q), args...)
	br := s.c.SendBatch(ctx, b)
	if err := readLead(br, what); err != nil {
		br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return batchRows{Rows: rows, br: br}, nil
}

// batchRows gives pgx.Rows the Close that sqlstore.Rows has, closing the
// batch they came in, if any, after them.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r batchRows) Close() error {
	r.Rows.Close()
	err := r.Rows.Err()
	if r.br != nil {
		if cerr := r.br.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// conn returns the connection with everything held back sent, for a
// store's own tests to run statements of their own inside the transaction.
func (s *sqlTx) conn(ctx context.Context) (*pgx.Conn, error) {
	return s.c, s.flush(ctx)
}
