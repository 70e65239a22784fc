package waitlist_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/waitlist"
)

// benchClients is how many clients claim at once.
const benchClients = 8

// BenchmarkClaimsPostgres is distinct claims per second by 8 concurrent
// clients on PostgreSQL: b.N people each hold an offer for a slot of their
// own, and the clients claim them all through Service.Claim (the
// conditional write, the booking, the audit rows, the confirmation, the
// timer cancelled — one transaction each).
//
// The baseline is measured on the same server in the same run: pgbench
// with 8 clients running the primitive a claim is built around, the
// conditional UPDATE of a seat count and the INSERT of the booking in one
// transaction (BEGIN; UPDATE … SET booked = booked + 1 WHERE id = :id AND
// booked < capacity; INSERT …; END), as the issue measured it. The
// benchmark reports claims/s, pgbench's tps, and claims/s as a fraction
// of it:
//
//	NEXTUP_TEST_POSTGRES=postgres://… go test ./waitlist -run '^$' -bench ClaimsPostgres -benchtime 2000x
func BenchmarkClaimsPostgres(b *testing.B) {
	schema := pgtest.NewSchema(b, 2*benchClients)
	ctx := context.Background()
	db, err := postgres.Open(ctx, schema.DSN)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	bd := newBundleOn(b, db, func(r *nextup.Rules) { r.QuietHours = nil; r.MaxOffersPerPersonPerDay = 0 })
	bulkEntries(b, bd, "haircut", b.N, 1)
	tokens := make([]string, b.N)
	for i := range b.N {
		sl := bd.slot(b, waitlist.SlotParams{Service: "haircut", StartsAt: bd.at(1, 8, 0).Add(time.Duration(i) * time.Minute)})
		_, moves, err := bd.svc.Release(ctx, bd.biz.ID, sl.ID, 0, "")
		if err != nil || len(moves) != 1 {
			b.Fatalf("release %d: %+v %v", i, moves, err)
		}
		tokens[i] = bd.token(b, moves[0].OfferID)
	}

	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, benchClients)
	b.ResetTimer()
	start := time.Now() // measurement, not logic
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(tokens) {
					return
				}
				if _, err := bd.svc.Claim(ctx, tokens[i]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var booked int
	if err := schema.Admin.QueryRow(ctx, `SELECT count(*) FROM `+schema.Name+`.bookings`).Scan(&booked); err != nil || booked != b.N {
		b.Fatalf("%d bookings after %d claims: %v", booked, b.N, err)
	}
	claims := float64(b.N) / elapsed.Seconds()
	tps := pgbenchUpdateTPS(b, schema)
	b.ReportMetric(claims, "claims/s")
	b.ReportMetric(tps, "pgbench-tps")
	b.ReportMetric(claims/tps, "ratio")
}

var pgbenchTPS = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbenchUpdateTPS runs pgbench's conditional UPDATE + INSERT, one
// transaction each, with 8 clients on tables of their own in schema, for
// three seconds, and returns its transactions per second.
func pgbenchUpdateTPS(b *testing.B, schema pgtest.Schema) float64 {
	b.Helper()
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		b.Fatalf("pgbench (the baseline) is not installed: %v", err)
	}
	const rows = 100_000
	ctx := context.Background()
	table := schema.Name + ".seats"
	if _, err := schema.Admin.Exec(ctx, `CREATE TABLE `+table+` (id integer PRIMARY KEY, booked integer NOT NULL, capacity integer NOT NULL);
		INSERT INTO `+table+` SELECT g, 0, 1000000 FROM generate_series(1, `+strconv.Itoa(rows)+`) g; ANALYZE `+table+`;
		CREATE TABLE `+table+`_booked (id bigserial PRIMARY KEY, seat integer NOT NULL REFERENCES `+table+`, at timestamptz NOT NULL DEFAULT now())`); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(b.TempDir(), "claim.sql")
	if err := os.WriteFile(script, fmt.Appendf(nil, "\\set id random(1, %d)\nBEGIN;\nUPDATE %[2]s SET booked = booked + 1 WHERE id = :id AND booked < capacity;\nINSERT INTO %[2]s_booked (seat) VALUES (:id);\nEND;\n", rows, table), 0o600); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(bin, "--no-vacuum", "--client", strconv.Itoa(benchClients), "--jobs", "2",
		"--time", "3", "--file", script, pgtest.DSN(b)).CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	m := pgbenchTPS.FindSubmatch(out)
	if m == nil {
		b.Fatalf("no tps in pgbench's output:\n%s", out)
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil || tps <= 0 {
		b.Fatalf("pgbench tps %q: %v", m[1], err)
	}
	return tps
}
