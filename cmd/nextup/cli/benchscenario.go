package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// The scenarios of `nextup bench -scenario`: each figure comes with a
// baseline measured in the same run, on the same machine and store, and
// their ratio, so that the figures compare across machines (issue 18's
// targets are ratios). One line each as a table, or one JSON object per
// line with -json (API.md, "Command line added").

// scenarioResult is one figure of a scenario.
type scenarioResult struct {
	Scenario      string  `json:"scenario"`
	Store         string  `json:"store"`
	Figure        float64 `json:"figure"`
	Unit          string  `json:"unit"`
	What          string  `json:"what"`
	Baseline      float64 `json:"baseline"`
	BaselineLabel string  `json:"baseline_label"`
	Ratio         float64 `json:"ratio"`
	// Target is the target for the ratio or figure, in words.
	Target string `json:"target,omitempty"`
}

// benchStore is a fresh store for a scenario: a SQLite file in a
// temporary directory, or a schema of its own on a PostgreSQL server.
type benchStore struct {
	name  string
	st    nextup.Store
	close func()
}

func openBenchStore(ctx context.Context, pgDSN string) (*benchStore, error) {
	if pgDSN == "" {
		dir, err := os.MkdirTemp("", "nextup-bench-")
		if err != nil {
			return nil, err
		}
		st, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"))
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		return &benchStore{name: "sqlite", st: st, close: func() { st.Close(); os.RemoveAll(dir) }}, nil
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "nextup_bench_" + hex.EncodeToString(b)
	conn, err := pgx.Connect(ctx, pgDSN)
	if err != nil {
		return nil, fmt.Errorf("bench: postgres: %w", err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("bench: postgres: %w", err)
	}
	drop := func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(context.WithoutCancel(ctx))
	}
	u, err := url.Parse(pgDSN)
	if err != nil {
		drop()
		return nil, fmt.Errorf("bench: postgres DSN: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	st, err := postgres.Open(ctx, u.String())
	if err != nil {
		drop()
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		drop()
		return nil, err
	}
	return &benchStore{name: "postgres", st: st, close: func() { st.Close(); drop() }}, nil
}

// runScenarios runs the scenarios named (comma-separated, or "all").
func runScenarios(ctx context.Context, names, pgDSN string, entries, requests int, asJSON bool, stdout, stderr io.Writer) error {
	all := []string{"claims", "joins", "position", "storm", "flash", "ready"}
	var run []string
	for _, n := range strings.Split(names, ",") {
		switch n = strings.TrimSpace(n); {
		case n == "all":
			run = append(run, all...)
		case slices.Contains(all, n):
			run = append(run, n)
		default:
			return usageError{fmt.Sprintf("bench: no scenario %q (there are: %s, all)", n, strings.Join(all, ", "))}
		}
	}
	var results []scenarioResult
	for _, n := range run {
		var rs []scenarioResult
		var err error
		switch n {
		case "position":
			rs, err = benchPosition(ctx, pgDSN, entries, stderr)
		case "ready":
			if pgDSN != "" {
				return usageError{"bench: -scenario ready runs on SQLite"}
			}
			rs, err = benchReady(ctx, entries, stderr)
		case "storm":
			rs, err = benchStorm(ctx, pgDSN, entries, stderr)
		case "flash":
			rs, err = benchFlash(ctx, pgDSN, cmp.Or(requests, 10000), stderr)
		case "claims", "joins":
			if pgDSN != "" {
				return usageError{"bench: -scenario " + n + " runs on SQLite; PostgreSQL's claims are BenchmarkClaimsPostgres (make bench)"}
			}
			rs, err = benchWrites(ctx, n, cmp.Or(requests, 3000), stderr)
		}
		if err != nil {
			return fmt.Errorf("bench %s: %w", n, err)
		}
		results = append(results, rs...)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tstore\tfigure\tbaseline\tratio\ttarget\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s %s (%s)\t%s %s (%s)\t%.2f×\t%s\t\n", r.Scenario, r.Store, num(r.Figure), r.Unit, r.What,
			num(r.Baseline), r.Unit, r.BaselineLabel, r.Ratio, r.Target)
	}
	return tw.Flush()
}

func num(f float64) string {
	switch {
	case f >= 100:
		return fmt.Sprintf("%.0f", f)
	case f >= 1:
		return fmt.Sprintf("%.2f", f)
	}
	return fmt.Sprintf("%.3f", f)
}

// benchPosition is the long list: entries waiting on one service's list,
// the first and the last of them with a status link. It measures the
// position of the last (the store's EntryPosition, p99 of 2,000 reads)
// against the first's, and the status page over HTTP for each with 8
// concurrent clients: at place 1,000,000 a position within 5 ms and the
// page at half the first's rate or better, whatever the place.
func benchPosition(ctx context.Context, pgDSN string, entries int, log io.Writer) ([]scenarioResult, error) {
	bs, err := openBenchStore(ctx, pgDSN)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	st := bs.st
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	svc := waitlist.New(st, nextup.RealClock{}, base)
	srv := &http.Server{Handler: (&web.Server{Svc: svc, Store: st}).Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	biz, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Bench", Timezone: "UTC"})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "position: seeding %d waiting entries on %s...\n", entries, bs.name)
	now := time.Now()
	first, last := "status-first-"+biz.ID, "status-last-"+biz.ID
	// PostgreSQL in smaller transactions: a row updated again and again
	// in one transaction (the count tree's top nodes) costs more each time
	// (store/postgres migration 0010).
	batch := 20000
	if bs.name == "postgres" {
		batch = 1000
	}
	for start := 0; start < entries; start += batch {
		err := st.InTx(ctx, func(tx nextup.Tx) error {
			for i := start; i < min(start+batch, entries); i++ {
				e := nextup.Entry{ID: fmt.Sprintf("ent_pos%07d", i), BusinessID: biz.ID, Name: "Seed",
					Email: fmt.Sprintf("pos%07d@example.com", i), Service: "haircut", PartySize: 1,
					JoinedAt: now.Add(time.Duration(i-entries) * time.Millisecond), State: nextup.EntryWaiting, Source: "bench", UpdatedAt: now}
				switch i {
				case 0:
					e.StatusHash = nextup.HashToken(first)
				case entries - 1:
					e.StatusHash = nextup.HashToken(last)
				}
				if _, err := tx.EntryCreate(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
	}
	byToken := func(tok string) (nextup.Entry, error) {
		var e nextup.Entry
		err := st.Read(ctx, func(tx nextup.Tx) error {
			var err error
			e, err = tx.EntryByStatusHash(ctx, nextup.HashToken(tok))
			return err
		})
		return e, err
	}
	ef, err := byToken(first)
	if err != nil {
		return nil, err
	}
	el, err := byToken(last)
	if err != nil {
		return nil, err
	}
	// The store's position, 2,000 reads of each place.
	p99 := func(e nextup.Entry, want int) (time.Duration, error) {
		var ds []time.Duration
		for range 2000 {
			t0 := time.Now() // a measurement: the wall clock is the point
			var pos int
			err := st.Read(ctx, func(tx nextup.Tx) error {
				var err error
				pos, err = tx.EntryPosition(ctx, e)
				return err
			})
			if err != nil {
				return 0, err
			}
			if pos != want {
				return 0, fmt.Errorf("position of %s: %d, want %d", e.ID, pos, want)
			}
			ds = append(ds, time.Since(t0))
		}
		return summarize("", ds).p99, nil
	}
	lastP99, err := p99(el, entries)
	if err != nil {
		return nil, err
	}
	firstP99, err := p99(ef, 1)
	if err != nil {
		return nil, err
	}
	// The status page over HTTP, 8 clients, 4,000 requests each place.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	rate := func(tok string) (float64, error) {
		const n, clients = 4000, 8
		var next atomic.Int64
		var firstErr atomic.Value
		var wg sync.WaitGroup
		t0 := time.Now() // a measurement
		for range clients {
			wg.Go(func() {
				for i := next.Add(1); i <= n; i = next.Add(1) {
					res, err := client.Get(base + "/v1/status/" + tok)
					if err == nil {
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode != 200 {
							err = fmt.Errorf("GET /v1/status: %d", res.StatusCode)
						}
					}
					if err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil {
			return 0, err
		}
		return n / time.Since(t0).Seconds(), nil
	}
	lastRate, err := rate(last)
	if err != nil {
		return nil, err
	}
	firstRate, err := rate(first)
	if err != nil {
		return nil, err
	}
	msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	place := fmt.Sprintf("place %d", entries)
	return []scenarioResult{
		{Scenario: "position", Store: bs.name, Figure: msf(lastP99), Unit: "ms", What: "p99 of the store's position at " + place,
			Baseline: msf(firstP99), BaselineLabel: "the same at place 1", Ratio: msf(lastP99) / msf(firstP99), Target: "p99 <= 5 ms"},
		{Scenario: "position", Store: bs.name, Figure: lastRate, Unit: "req/s", What: "GET /v1/status/{token} at " + place + ", 8 clients",
			Baseline: firstRate, BaselineLabel: "the same page at place 1", Ratio: lastRate / firstRate, Target: ">= 0.5×"},
	}, nil
}

// rawWritesPerSec is the baseline of the write scenarios on SQLite: the
// raw primitive a claim is built around, written here against the same
// driver, pragmas and single writer connection as the store (WAL,
// synchronous=FULL, BEGIN IMMEDIATE), with no nextup code in between —
// one transaction each of a conditional UPDATE of a seat count and an
// INSERT, from `clients` goroutines, n transactions in all.
func rawWritesPerSec(ctx context.Context, n, clients int) (float64, error) {
	dir, err := os.MkdirTemp("", "nextup-bench-raw-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", filepath.Join(dir, "raw.db")+"?"+q.Encode())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE seats (id INTEGER PRIMARY KEY, booked INTEGER NOT NULL, capacity INTEGER NOT NULL);
		CREATE TABLE log (id INTEGER PRIMARY KEY, seat INTEGER NOT NULL, at INTEGER NOT NULL);
		WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < `+fmt.Sprint(n-1)+`)
		INSERT INTO seats (id, booked, capacity) SELECT x, 0, 1 FROM c`); err != nil {
		return 0, err
	}
	upd, err := db.PrepareContext(ctx, `UPDATE seats SET booked = booked + 1 WHERE id = ? AND booked < capacity`)
	if err != nil {
		return 0, err
	}
	ins, err := db.PrepareContext(ctx, `INSERT INTO log (seat, at) VALUES (?, ?)`)
	if err != nil {
		return 0, err
	}
	workers := make([]func(i int64) error, clients)
	for c := range workers {
		workers[c] = func(i int64) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			res, err := tx.Stmt(upd).ExecContext(ctx, i)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k != 1 {
				return fmt.Errorf("seat %d: %d rows", i, k)
			}
			if _, err := tx.Stmt(ins).ExecContext(ctx, i, i); err != nil {
				return err
			}
			return tx.Commit()
		}
	}
	return perSec(n, workers)
}

// perSec runs n numbered operations, 0 to n-1, shared out among the
// workers running at once (each takes the next number until none is
// left), and returns operations a second; the first error stops its
// worker and is returned.
func perSec(n int, workers []func(i int64) error) (float64, error) {
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now() // a measurement
	for _, work := range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if err := work(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// benchWrites is the claims and joins scenarios on SQLite over HTTP, 16
// clients, each against the raw primitive measured in the same run.
func benchWrites(ctx context.Context, which string, n int, log io.Writer) ([]scenarioResult, error) {
	const clients = 16
	fmt.Fprintf(log, "%s: %d requests by %d clients over HTTP, and the raw primitive...\n", which, n, clients)
	joins, claims, err := benchJoinsClaims(ctx, n, clients)
	if err != nil {
		return nil, err
	}
	raw, err := rawWritesPerSec(ctx, n, clients)
	if err != nil {
		return nil, fmt.Errorf("raw primitive: %w", err)
	}
	label := "raw conditional UPDATE + INSERT transactions/s, one fsync each, same driver and pragmas"
	fig, what := claims, "POST /v1/claims/{token}:accept, 16 clients"
	if which == "joins" {
		fig, what = joins, "POST /v1/businesses/{bid}/waitlist:join, 16 clients"
	}
	return []scenarioResult{{Scenario: which, Store: "sqlite", Figure: fig, Unit: "/s", What: what, Baseline: raw,
		BaselineLabel: label, Ratio: fig / raw, Target: ">= 0.5×"}}, nil
}

// rawPostgresWritesPerSec is the baseline of the write scenarios on
// PostgreSQL: what pgbench would run as a custom script, written here
// with pgx against the same server — one transaction each of a
// conditional UPDATE of a seat count and an INSERT, from `clients`
// connections, n transactions in all, in a schema of its own.
func rawPostgresWritesPerSec(ctx context.Context, pgDSN string, n, clients int) (float64, error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "nextup_raw_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, pgDSN)
	if err != nil {
		return 0, err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	if _, err := admin.Exec(ctx, `CREATE SCHEMA `+schema+`;
		CREATE TABLE `+schema+`.seats (id bigint PRIMARY KEY, booked int NOT NULL, capacity int NOT NULL);
		CREATE TABLE `+schema+`.log (id bigserial PRIMARY KEY, seat bigint NOT NULL, at bigint NOT NULL);
		INSERT INTO `+schema+`.seats SELECT x, 0, 1 FROM generate_series(0, `+fmt.Sprint(n-1)+`) AS x`); err != nil {
		return 0, err
	}
	defer func() { _, _ = admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE") }()
	conns := make([]*pgx.Conn, clients)
	for i := range conns {
		if conns[i], err = pgx.Connect(ctx, pgDSN); err != nil {
			return 0, err
		}
		defer conns[i].Close(context.WithoutCancel(ctx))
	}
	workers := make([]func(i int64) error, clients)
	for k, c := range conns {
		workers[k] = func(i int64) error {
			return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
				tag, err := tx.Exec(ctx, `UPDATE `+schema+`.seats SET booked = booked + 1 WHERE id = $1 AND booked < capacity`, i)
				if err != nil {
					return err
				}
				if tag.RowsAffected() != 1 {
					return fmt.Errorf("seat %d: %d rows", i, tag.RowsAffected())
				}
				_, err = tx.Exec(ctx, `INSERT INTO `+schema+`.log (seat, at) VALUES ($1, $2)`, i, i)
				return err
			})
		}
	}
	return perSec(n, workers)
}

// rawPerSec is the raw primitive's transactions a second on the store a
// scenario runs on.
func rawPerSec(ctx context.Context, pgDSN string, n, clients int) (float64, string, error) {
	if pgDSN != "" {
		r, err := rawPostgresWritesPerSec(ctx, pgDSN, n, clients)
		return r, "raw conditional UPDATE + INSERT transactions/s on the same PostgreSQL (pgbench's script, by pgx)", err
	}
	r, err := rawWritesPerSec(ctx, n, clients)
	return r, "raw conditional UPDATE + INSERT transactions/s, one fsync each", err
}
