package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPostgresCLI runs `migrate` and `business create` against PostgreSQL
// (--db postgres://…) in a schema of its own.
func TestPostgresCLI(t *testing.T) {
	dsn := os.Getenv("NEXTUP_TEST_POSTGRES")
	ctx := context.Background()
	var admin *pgx.Conn
	var err error
	if dsn != "" {
		admin, err = pgx.Connect(ctx, dsn)
	}
	if dsn == "" || err != nil {
		if os.Getenv("NEXTUP_REQUIRE_ALL") == "1" {
			t.Fatalf("PostgreSQL required (NEXTUP_REQUIRE_ALL=1): NEXTUP_TEST_POSTGRES=%q: %v", dsn, err)
		}
		t.Skipf("SKIPPING: no PostgreSQL (NEXTUP_TEST_POSTGRES=%q): %v", dsn, err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "nx_cli_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db := u.String()

	out, err := runCLI(t, "migrate", "--db", db)
	if err != nil || !strings.Contains(out, "PostgreSQL: schema at version") {
		t.Fatalf("migrate: %q %v", out, err)
	}
	out, err = runCLI(t, "business", "create", "--db", db, "--name", "Corner Cuts", "--timezone", "Europe/Dublin")
	if err != nil {
		t.Fatal(err)
	}
	var biz struct {
		ID     string `json:"id"`
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(out), &biz); err != nil || !strings.HasPrefix(biz.APIKey, "nxk_") {
		t.Fatalf("business create on PostgreSQL: %q %v", out, err)
	}
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+schema+".businesses WHERE id = $1", biz.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the business is not in PostgreSQL: %d %v", n, err)
	}
}
