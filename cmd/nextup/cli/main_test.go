package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/waitlist"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), err
}

// TestDemo runs the newcomer's first command end to end and checks that
// the story it tells actually happened: an offer, an expiry rolling on, a
// decline rolling on, a claim with its confirmation, batch promotion, and
// the slot's audit trail.
func TestDemo(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "demo", "--tour", "--db", filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{
		"move: offer → Maya",
		"offer to Olivia",       // Maya's window ended: rolled on
		"move: roll_on → Priya", // Olivia declined
		"booked: bkg_",          // Priya claimed
		"confirmation to Priya", // and was told
		"Maya's old link: slot_taken",
		"move: offer → Vera", // priority first in the class
		"offered → expired", "offered → declined", "offered → claimed",
		"Rosa's claim: slot_taken", // the salon's booking system answered 409
		"booking_failed to Rosa",   // and she was told
		"/c/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if strings.Contains(out, "Noah") && strings.Contains(out, "offer to Noah") {
		t.Error("Noah wants Ben and must not be offered Ana's chair")
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestDemoRefusesExistingFile(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "demo.db")
	if _, err := runCLI(t, "migrate", "--db", db); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "demo", "--db", db); err == nil || !strings.Contains(err.Error(), "fresh") {
		t.Fatalf("demo on an existing file: err = %v", err)
	}
}

func TestMigrateTwiceAndBusinessCreate(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "n.db")
	for i := 0; i < 2; i++ {
		out, err := runCLI(t, "migrate", "--db", db)
		if err != nil || !strings.Contains(out, "schema at version") {
			t.Fatalf("migrate #%d: %q %v", i+1, out, err)
		}
	}
	out, err := runCLI(t, "business", "create", "--db", db, "--name", "Corner Cuts", "--timezone", "Europe/Dublin")
	if err != nil {
		t.Fatal(err)
	}
	var biz struct {
		ID     string `json:"id"`
		APIKey string `json:"api_key"`
		Rules  struct {
			Version int `json:"version"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(out), &biz); err != nil {
		t.Fatalf("business JSON %q: %v", out, err)
	}
	if !strings.HasPrefix(biz.APIKey, "nxk_") || biz.Rules.Version != 1 {
		t.Fatalf("business = %+v", biz)
	}
	if _, err := runCLI(t, "business", "create", "--db", db, "--name", "X", "--timezone", "Mars/Olympus"); err == nil {
		t.Fatal("bad timezone accepted")
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"frobnicate"}, {"business"}, {"migrate", "--nope"}, {"migrate", "extra"},
		{"serve", "--clock", "sideways"}, {"serve", "--notify", "pigeon"}, {"serve", "--smtp-url", "smtp://localhost:25"},
		{"serve", "--notify", "capture,smtp"}, {"serve", "--smtp-url", "http://x", "--mail-from", "a@b.example"},
		{"serve", "--db-max-conns", "-1"}, {"serve", "--notify", "twilio"},
		{"serve", "--twilio-account-sid", "AC1", "--twilio-auth-token", "abc"},
		{"serve", "--booking-timeout", "0s"}, {"serve", "--booking-timeout", "1m"},
		{"serve", "--sms-tps", "-1"}, {"serve", "--email-tps", "0.01"}, {"serve", "--webhook-tps", "NaN"}, {"serve", "--sms-tps", "ten"},
		{"serve", "--stripe-secret-key", "sk_test_1"}, {"serve", "--stripe-webhook-secret", "whsec_1"}} {
		_, err := runCLI(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
	out, err := runCLI(t, "version")
	if err != nil || !strings.HasPrefix(out, "nextup ") {
		t.Fatalf("version: %q %v", out, err)
	}
}

func TestEnvFallback(t *testing.T) {
	db := filepath.Join(t.TempDir(), "env.db")
	t.Setenv("NEXTUP_DB", db)
	out, err := runCLI(t, "migrate")
	if err != nil || !strings.Contains(out, db) {
		t.Fatalf("NEXTUP_DB not honoured: %q %v", out, err)
	}
}

// TestBenchHTTPRuns keeps `nextup bench -http` working; it asserts what
// was done, never how fast.
func TestBenchHTTPRuns(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "bench", "-http", "-n", "20", "-clients", "4")
	if err != nil || !strings.Contains(out, "joins") || !strings.Contains(out, "claims") {
		t.Fatalf("bench -http: %v\n%s", err, out)
	}
}

// TestBenchScenarioRuns keeps `nextup bench -scenario position -json`
// working on a short list, on SQLite and on PostgreSQL: one JSON object
// per figure with the fields API.md names, each with its baseline; it
// asserts what was measured, never how fast.
func TestBenchScenarioRuns(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			args := []string{"bench", "-scenario", "position", "-entries", "300", "-json"}
			if store == "postgres" {
				args = append(args, "-postgres", pgtest.DSN(t))
			}
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("bench -scenario position: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 {
				t.Fatalf("want 2 figures, got:\n%s", out)
			}
			for _, l := range lines {
				var r map[string]any
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("not JSON: %q", l)
				}
				for _, k := range []string{"scenario", "figure", "unit", "baseline", "baseline_label", "ratio"} {
					if _, ok := r[k]; !ok {
						t.Errorf("figure %s lacks %q", l, k)
					}
				}
				if r["scenario"] != "position" || r["store"] != store || r["figure"].(float64) <= 0 || r["baseline"].(float64) <= 0 {
					t.Errorf("figure %s", l)
				}
			}
		})
	}
	out, err := runCLI(t, "bench", "-scenario", "claims,joins", "-n", "40", "-json")
	if err != nil {
		t.Fatalf("bench -scenario claims,joins: %v\n%s", err, out)
	}
	for i, want := range []string{"claims", "joins"} {
		var r map[string]any
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || json.Unmarshal([]byte(lines[i]), &r) != nil || r["scenario"] != want || r["figure"].(float64) <= 0 ||
			r["baseline"].(float64) <= 0 || r["ratio"].(float64) <= 0 {
			t.Fatalf("bench -scenario claims,joins:\n%s", out)
		}
	}
	out, err = runCLI(t, "bench", "-scenario", "storm,flash", "-entries", "600", "-n", "1100", "-json")
	if err != nil {
		t.Fatalf("bench -scenario storm,flash: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, want := range []string{"storm", "storm", "flash"} {
		var r map[string]any
		if len(lines) != 3 || json.Unmarshal([]byte(lines[i]), &r) != nil || r["scenario"] != want || r["figure"].(float64) <= 0 ||
			r["baseline"].(float64) <= 0 || r["ratio"].(float64) <= 0 {
			t.Fatalf("bench -scenario storm,flash:\n%s", out)
		}
	}
	out, err = runCLI(t, "bench", "-scenario", "ready", "-entries", "500", "-json")
	if err != nil {
		t.Fatalf("bench -scenario ready: %v\n%s", err, out)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	for i, unit := range []string{"ms", "MB", "MB"} {
		var r map[string]any
		if len(lines) != 3 || json.Unmarshal([]byte(lines[i]), &r) != nil || r["scenario"] != "ready" || r["unit"] != unit ||
			r["figure"].(float64) <= 0 || r["baseline"].(float64) <= 0 {
			t.Fatalf("bench -scenario ready:\n%s", out)
		}
	}
	if _, err := runCLI(t, "bench", "-scenario", "nope"); err == nil {
		t.Error("bench -scenario nope: no error")
	}
}

func TestStaffAdd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "n.db")
	out, err := runCLI(t, "business", "create", "--db", db, "--name", "Corner Cuts", "--timezone", "Europe/Dublin")
	if err != nil {
		t.Fatal(err)
	}
	var biz struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &biz); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("long enough password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "staff", "add", "--db", db, "--business", biz.ID, "--email", "Desk@Corner.example", "--password-file", pw)
	if err != nil || !strings.Contains(out, "desk@corner.example") {
		t.Fatalf("staff add: %q %v", out, err)
	}
	// The account signs in with the file's password (its newline trimmed).
	st, err := openStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := waitlist.New(st, nextup.RealClock{}, "")
	if _, s, err := svc.SignIn(context.Background(), "desk@corner.example", "long enough password"); err != nil || s.BusinessID != biz.ID {
		t.Fatalf("sign in: %+v %v", s, err)
	}
	for _, args := range [][]string{
		{"staff", "add", "--db", db, "--business", biz.ID, "--email", "desk@corner.example", "--password-file", pw}, // taken
		{"staff", "add", "--db", db, "--business", "biz_nope", "--email", "x@corner.example", "--password-file", pw},
		{"staff", "add", "--db", db, "--business", biz.ID, "--email", "y@corner.example"},
		{"staff", "remove"},
	} {
		if _, err := runCLI(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestHelp: every command's --help (and -h) lists its flags on stdout and
// succeeds, without doing anything else (no store is created).
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		flag string // one of the command's flags
	}{
		{[]string{"serve", "--help"}, "-admin-token"},
		{[]string{"serve", "-h"}, "-stripe-webhook-secret"},
		{[]string{"demo", "--help"}, "-tour"},
		{[]string{"business", "create", "--help"}, "-timezone"},
		{[]string{"staff", "add", "--help"}, "-password-file"},
		{[]string{"import", "--help"}, "-date-order"},
		{[]string{"inbox", "import", "--help"}, "-business"},
		{[]string{"migrate", "--help"}, "-db"},
		{[]string{"copy", "--help"}, "-from"},
		{[]string{"bench", "--help"}, "-entries"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{}, tc.args...)
			var out, errOut bytes.Buffer
			cmd := exec.Command(os.Args[0], args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1")
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("nextup %s: %v (want exit 0)\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errOut.String())
			}
			name := strings.Join(slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, "-") }), " ")
			for _, want := range []string{"Usage: nextup " + name + " [flags]", tc.flag, "NEXTUP_<FLAG>"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("help lacks %q:\n%s", want, out.String())
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("--help left %v behind", entries)
			}
		})
	}
}
