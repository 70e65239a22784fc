package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// TestStatementTimeout: the option reaches every session, and the server
// aborts a statement that runs longer.
func TestStatementTimeout(t *testing.T) {
	dsn := openFresh(t, testDSN(t)).dsn
	ctx := context.Background()
	db, err := Open(ctx, dsn, MaxConns(2), StatementTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.pool.Config().MaxConns; got != 2 {
		t.Errorf("MaxConns = %d, want 2", got)
	}
	err = db.Read(ctx, func(x nextup.Tx) error {
		var st, idle string
		if err := pgxTx(x).QueryRow(ctx, `SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')`).Scan(&st, &idle); err != nil {
			return err
		}
		if st != "200ms" || idle != "400ms" {
			t.Errorf("statement_timeout %q, idle_in_transaction_session_timeout %q; want 200ms and 400ms", st, idle)
		}
		_, err := pgxTx(x).Exec(ctx, `SELECT pg_sleep(2)`)
		return err
	})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("a 2 s statement under a 200 ms timeout: %v, want 57014 query_canceled", err)
	}
}

// TestRetryAfterConnectionLoss: the server ends the session in the middle
// of a transaction (an administrator, a failover, a proxy restart); the
// transaction had not committed, so InTx runs it again on a fresh
// connection and it commits once.
func TestRetryAfterConnectionLoss(t *testing.T) {
	db := openFresh(t, testDSN(t))
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	b := nextup.Business{ID: "biz_retry", Name: "Retry", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: time.Unix(1e9, 0).UTC()}
	runs := 0
	err = db.InTx(ctx, func(x nextup.Tx) error {
		runs++
		if err := x.BusinessCreate(ctx, b); err != nil {
			return err
		}
		if runs == 1 {
			var pid uint32
			if err := pgxTx(x).QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				return err
			}
			if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
				return err
			}
			// The next statement finds the session gone.
			_, err := x.BusinessGet(ctx, b.ID)
			return err
		}
		return nil
	})
	if err != nil || runs != 2 {
		t.Fatalf("InTx = %v after %d runs, want success on the second", err, runs)
	}
	var n int
	if err := db.Read(ctx, func(x nextup.Tx) error {
		_, err := x.BusinessGet(ctx, b.ID)
		n++
		return err
	}); err != nil || n != 1 {
		t.Fatalf("the business after the retry: %v", err)
	}

	// An error the transaction itself caused is not retried.
	runs = 0
	err = db.InTx(ctx, func(x nextup.Tx) error {
		runs++
		return x.BusinessCreate(ctx, b) // already there
	})
	if !errors.Is(err, nextup.ErrConflict) || runs != 1 {
		t.Fatalf("duplicate create: %v after %d runs, want one ErrConflict", err, runs)
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "40001"}, true},
		{&pgconn.PgError{Code: "40P01"}, true},
		{&pgconn.PgError{Code: "57P01"}, true},
		{&pgconn.PgError{Code: "08006"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "57014"}, false}, // statement timeout: running it again would time out again
		{errors.Join(ErrCommitUnknown, &pgconn.PgError{Code: "08006"}), false},
		{nextup.ErrConflict, false},
		{nil, false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestListen: a transaction on one instance that schedules a timer wakes
// another instance listening on the same database, once it commits.
func TestListen(t *testing.T) {
	a := openFresh(t, testDSN(t))
	b := openAt(t, a.dsn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woken := make(chan struct{}, 16)
	stopped := make(chan error, 1)
	go func() { stopped <- a.Listen(ctx, func() { woken <- struct{}{} }) }()

	at := time.Unix(2e9, 0).UTC()
	schedule := func() error {
		return b.InTx(context.Background(), func(x nextup.Tx) error {
			return x.TimerSchedule(context.Background(), nextup.Timer{Kind: "test", Key: "k", DueAt: at, CreatedAt: at})
		})
	}
	// The listener may not be listening yet: schedule until a wake-up
	// arrives (each run moves the same timer; that is harmless).
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	if err := schedule(); err != nil {
		t.Fatal(err)
	}
wait:
	for {
		select {
		case <-woken:
			break wait
		case <-tick.C:
			if err := schedule(); err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("no wake-up within 10 s of committing a timer")
		}
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Fatalf("Listen after cancel = %v", err)
	}
}

// pgxTx returns the connection under a Tx of this store, inside its
// transaction (begun, with everything held back sent).
func pgxTx(x nextup.Tx) *pgx.Conn {
	c, err := x.(*sqlstore.Tx).Runner().(*sqlTx).conn(context.Background())
	if err != nil {
		panic(err)
	}
	return c
}
