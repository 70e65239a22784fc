package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/store/storetest"
)

// testDSN returns the server the tests run against (NEXTUP_TEST_POSTGRES);
// without one the test skips loudly, or fails under NEXTUP_REQUIRE_ALL=1.
func testDSN(t *testing.T) string {
	t.Helper()
	return pgtest.DSN(t)
}

// withSchema returns dsn with search_path set to schema and a small pool
// (the suite opens many stores at once).
func withSchema(t testing.TB, dsn, schema string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("NEXTUP_TEST_POSTGRES: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		q.Set("pool_max_conns", "6")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema + " pool_max_conns=6"
}

// openFresh creates a uniquely named empty schema, dropped when the test
// ends, and opens a migrated store on it.
func openFresh(t testing.TB, dsn string) *DB {
	t.Helper()
	ctx := context.Background()
	b := make([]byte, 8)
	rand.Read(b)
	schema := "nx_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	// Registered first, so it runs after the store is closed.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return openAt(t, withSchema(t, dsn, schema))
}

// openAt opens and migrates a store, closed when the test ends (closing
// twice is harmless).
func openAt(t testing.TB, dsn string) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db
}

// TestConformance runs the store conformance suite, each Open on a schema
// of its own.
func TestConformance(t *testing.T) {
	dsn := testDSN(t)
	storetest.RunHarness(t, storetest.Harness{
		Open: func(t *testing.T) nextup.Store { return openFresh(t, dsn) },
		Reopen: func(t *testing.T, s nextup.Store) nextup.Store {
			return openAt(t, s.(*DB).dsn)
		},
	})
}

// TestMigrateConcurrent starts several instances on one new schema at
// once: the advisory lock lets one migrate, and the others find the
// schema up to date.
func TestMigrateConcurrent(t *testing.T) {
	dsn := testDSN(t)
	first := openFresh(t, dsn)
	ctx := context.Background()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			db, err := Open(ctx, first.dsn)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			errs <- db.Migrate(ctx)
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("Migrate: %v", err)
		}
	}
	v, err := first.SchemaVersion(ctx)
	if err != nil || v != LatestVersion() {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, LatestVersion())
	}
}

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		`a = ? AND b = ?`:          `a = $1 AND b = $2`,
		`a = ?2 AND b = ?1 OR ?12`: `a = $2 AND b = $1 OR $12`,
		`no params`:                `no params`,
	} {
		if got := rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
}
