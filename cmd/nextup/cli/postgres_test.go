package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/waitlist"
)

// pgSchema returns a DSN for a fresh PostgreSQL schema (dropped at the end),
// its name and an admin connection.
func pgSchema(t *testing.T) (string, string, *pgx.Conn) {
	t.Helper()
	s := pgtest.NewSchema(t, 0)
	return s.DSN, s.Name, s.Admin
}

// TestPostgresCLI runs `migrate` and `business create` against PostgreSQL
// (--db postgres://…) in a schema of its own.
func TestPostgresCLI(t *testing.T) {
	ctx := context.Background()
	db, schema, admin := pgSchema(t)
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

// TestCopyToPostgres moves the whole history the guided demo leaves behind
// (offers, expiry, decline, claim, batch promotion, audit, outbox, timers)
// from the embedded store to PostgreSQL, verified kind by kind, and the
// business carries on there.
func TestCopyToPostgres(t *testing.T) {
	ctx := context.Background()
	db, _, _ := pgSchema(t)
	file := filepath.Join(t.TempDir(), "demo.db")
	if _, err := runCLI(t, "demo", "--tour", "--db", file); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "copy", "--from", file, "--to", db)
	if err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	for _, kind := range []string{"offers", "audit", "entries", "messages", "timers", "bookings"} {
		if !regexp.MustCompile(`(?m)\s` + kind + `\s+[1-9]\d*\s+[0-9a-f]{16}\s+ok$`).MatchString(out) {
			t.Errorf("copy did not verify %s:\n%s", kind, out)
		}
	}
	if strings.Contains(out, "MISMATCH") {
		t.Fatalf("copy reported a mismatch:\n%s", out)
	}
	// The business carries on in PostgreSQL: a new joiner queues after
	// everyone copied (the sequence moved past the copied ones).
	st, err := openStore(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var bid string
	var maxSeq int64
	if err := st.Read(ctx, func(tx nextup.Tx) error {
		var err error
		bid = regexp.MustCompile(`(?m)^(biz_\S+)\s+business`).FindStringSubmatch(out)[1]
		entries, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: bid, State: nextup.EntryWaiting})
		for _, e := range entries {
			maxSeq = max(maxSeq, e.Seq)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	svc := waitlist.New(st, nextup.RealClock{}, "")
	res, err := svc.Join(ctx, bid, waitlist.JoinParams{Name: "New", Email: "new@example.com", Service: "colour"})
	if err != nil || res.Entry.Seq <= maxSeq {
		t.Fatalf("join after copy: seq %d (copied max %d), %v", res.Entry.Seq, maxSeq, err)
	}
	// Copying again is refused and changes nothing.
	if out, err := runCLI(t, "copy", "--from", file, "--to", db); err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("second copy: %v\n%s", err, out)
	}
}
