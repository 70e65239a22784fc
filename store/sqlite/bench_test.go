package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// BenchmarkEntryCandidates1M measures the candidate query the engine runs
// for every freed slot, against one waitlist of 1,000,000 waiting entries.
// Loading them takes a while (one transaction, one prepared statement);
// it is done once, before the sub-benchmarks.
//
//	go test ./store/sqlite -run '^$' -bench EntryCandidates1M -benchtime 2000x
func BenchmarkEntryCandidates1M(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("NEXTUP_BENCH_ENTRIES")); err == nil && v > 0 {
		n = v // a smaller list for a quick look
	}
	ctx := context.Background()
	db := open(b)
	biz := nextup.Business{ID: "biz_bench", Name: "Bench", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: t0}
	if err := db.InTx(ctx, func(tx nextup.Tx) error { return tx.BusinessCreate(ctx, biz) }); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	mid := loadEntries(b, db, biz.ID, n)
	b.Logf("loaded %d waiting entries in %v", n, time.Since(start).Round(time.Millisecond))
	if os.Getenv("NEXTUP_BENCH_PLAN") != "" {
		query, args := dialect.CandidatesQuery(nextup.CandidateQuery{BusinessID: biz.ID, Service: "cut", SlotStart: t0.Add(10 * 24 * time.Hour), MinParty: 1, MaxParty: 2, Limit: 32})
		rows, _ := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		for rows.Next() {
			var a, bb, c int
			var d string
			rows.Scan(&a, &bb, &c, &d)
			b.Log(d)
		}
		rows.Close()
	}

	slotStart := t0.Add(10 * 24 * time.Hour)
	q := nextup.CandidateQuery{BusinessID: biz.ID, Service: "cut", SlotStart: slotStart, MinParty: 1, MaxParty: 2, Limit: 32}
	run := func(name string, q nextup.CandidateQuery) {
		b.Run(name, func(b *testing.B) {
			err := db.Read(ctx, func(tx nextup.Tx) error {
				for b.Loop() {
					got, err := tx.EntryCandidates(ctx, q)
					if err != nil {
						return err
					}
					if len(got) != q.Limit {
						return fmt.Errorf("%d candidates, want %d", len(got), q.Limit)
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
	run("first-page", q)
	deep := q
	deep.After = &mid
	run("after-500k", deep)

	b.Run("position-500k", func(b *testing.B) {
		err := db.Read(ctx, func(tx nextup.Tx) error {
			for b.Loop() {
				if _, err := tx.EntryPosition(ctx, mid); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

// loadEntries inserts n waiting entries for service "cut" with a realistic
// spread: 5% priority, joined over a year, parties of 1 to 4, 30% with a
// window of a few days somewhere in the next month. It returns the entry
// at the middle of fair order.
func loadEntries(b *testing.B, db *DB, businessID string, n int) nextup.Entry {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	// A bulk load wants more than the default 2 MB page cache: the indexes
	// are written in random order. (The writer has one connection, so the
	// setting sticks to the one the load runs on.)
	if _, err := db.write.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
		b.Fatal(err)
	}
	stx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer stx.Rollback()
	stmt, err := stx.PrepareContext(ctx, `INSERT INTO entries (id, business_id, name, email, contact_key, service,
			party_size, earliest, latest, priority, source, joined_at, state, updated_at, queue, fair_rank)
		VALUES (?, ?, ?, ?, ?, 'cut', ?, ?, ?, ?, 'api', ?, 'waiting', ?, 'service:cut', ?)`)
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	type row struct {
		priority         bool
		joined           time.Time
		earliest, latest time.Time
		party            int
	}
	rows := make([]row, n)
	for i := range rows {
		e := row{
			priority: rng.IntN(20) == 0,
			joined:   t0.Add(-time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))),
			party:    1 + rng.IntN(4),
		}
		if rng.IntN(10) < 3 {
			e.earliest = t0.Add(time.Duration(rng.IntN(30*24)) * time.Hour)
			e.latest = e.earliest.Add(time.Duration(1+rng.IntN(5)) * 24 * time.Hour)
		}
		rows[i] = e
	}
	// Inserted in fair order, every index grows at its end: the load is
	// several times faster than in random order, and the result the same.
	slices.SortFunc(rows, func(a, b row) int {
		if a.priority != b.priority {
			return cmp.Compare(sqlstore.BoolInt(b.priority), sqlstore.BoolInt(a.priority))
		}
		return a.joined.Compare(b.joined)
	})
	for i, e := range rows {
		id := fmt.Sprintf("ent_%07d", i)
		email := id + "@example.com"
		if _, err := stmt.ExecContext(ctx, id, businessID, "Person "+id, email, "email:"+email, e.party,
			sqlstore.TS(e.earliest), sqlstore.LatestTS(e.latest), sqlstore.BoolInt(e.priority), sqlstore.TS(e.joined), sqlstore.TS(e.joined), 1-sqlstore.BoolInt(e.priority)); err != nil {
			b.Fatal(err)
		}
	}
	if err := stx.Commit(); err != nil {
		b.Fatal(err)
	}
	var mid nextup.Entry
	err = db.Read(ctx, func(tx nextup.Tx) error {
		row := db.read.QueryRowContext(ctx, `SELECT `+sqlstore.EntryCols+` FROM entries WHERE business_id = ?
			ORDER BY `+sqlstore.FairOrder+` LIMIT 1 OFFSET ?`, businessID, n/2)
		var err error
		mid, err = sqlstore.ScanEntry(row)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return mid
}
