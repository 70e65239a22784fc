package missing_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup/internal/missing"
)

// TestSkipRecords: a skip is a skip, and leaves its line in the log.
func TestSkipRecords(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(missing.Log, log)
	t.Setenv(missing.RequireAll, "")
	var skipped bool
	t.Run("needs a server", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		missing.Skip(t, "Widget server", "WIDGET_URL is not\tset", "export WIDGET_URL=…")
		t.Error("Skip returned")
	})
	if !skipped {
		t.Fatal("the test did not skip")
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "Widget server\texport WIDGET_URL=…\tWIDGET_URL is not set\n"; got != want {
		t.Fatalf("log %q, want %q", got, want)
	}
}

// TestSkipFailsUnderRequireAll runs a skipping test in a child process
// with NEXTUP_REQUIRE_ALL=1: it must fail, and record nothing.
func TestSkipFailsUnderRequireAll(t *testing.T) {
	if os.Getenv("MISSING_TEST_CHILD") == "1" {
		missing.Skip(t, "Widget server", "WIDGET_URL is not set", "export WIDGET_URL=…")
		return
	}
	log := filepath.Join(t.TempDir(), "skips")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSkipFailsUnderRequireAll$", "-test.v")
	cmd.Env = append(os.Environ(), "MISSING_TEST_CHILD=1", missing.RequireAll+"=1", missing.Log+"="+log)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Widget server required (NEXTUP_REQUIRE_ALL=1) but WIDGET_URL is not set") {
		t.Fatalf("the child passed or said something else (%v):\n%s", err, out)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("a failure was recorded as a skip (%v)", err)
	}
}
