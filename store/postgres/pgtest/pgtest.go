// Package pgtest gives tests a PostgreSQL schema of their own on the
// server named by NEXTUP_TEST_POSTGRES (for example
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable).
//
// Without that variable, or when the server does not answer, a test skips
// loudly; with NEXTUP_REQUIRE_ALL=1 (as CI sets it) it fails instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nextup-dev/nextup/internal/missing"
)

// DSN returns the test server's URL, or skips (fails under
// NEXTUP_REQUIRE_ALL=1) when there is none that answers.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("NEXTUP_TEST_POSTGRES")
	miss := func(why string) {
		t.Helper()
		missing.Skip(t, "PostgreSQL", why, "export NEXTUP_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/test?sslmode=disable (a server that answers; .ci/run starts one)")
	}
	if dsn == "" {
		miss("NEXTUP_TEST_POSTGRES is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		miss("cannot reach NEXTUP_TEST_POSTGRES: " + err.Error())
	}
	conn.Close(ctx)
	return dsn
}

// Schema is a fresh, empty schema, dropped when the test ends.
type Schema struct {
	// Name is the schema's name.
	Name string
	// DSN connects with search_path set to the schema.
	DSN string
	// Admin is a connection of the test's own, for SQL checks; prefix
	// table names with Name + ".".
	Admin *pgx.Conn
}

// NewSchema creates a uniquely named schema. maxConns, when positive, caps
// the pool of a store opened on its DSN (pool_max_conns).
func NewSchema(t testing.TB, maxConns int) Schema {
	t.Helper()
	dsn := DSN(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "nx_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		admin.Close(ctx)
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = admin.Exec(ctx, "DROP SCHEMA "+name+" CASCADE")
		admin.Close(ctx)
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: NEXTUP_TEST_POSTGRES must be a postgres:// URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	if maxConns > 0 {
		q.Set("pool_max_conns", strconv.Itoa(maxConns))
	}
	u.RawQuery = q.Encode()
	return Schema{Name: name, DSN: u.String(), Admin: admin}
}
