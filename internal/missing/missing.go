// Package missing is the one way a test says that a server or a tool it
// needs is not on this machine (PostgreSQL, Chromium, stripe-mock): the
// test skips loudly, and the skip is written down so that `make test`
// ends with one line naming every suite that did not run and how to
// enable it. Under NEXTUP_REQUIRE_ALL=1 (as CI sets it) the test fails
// instead, so nothing is silently left out where everything must run.
package missing

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Environment variables read by Skip.
const (
	// RequireAll, set to 1, turns every skip into a failure.
	RequireAll = "NEXTUP_REQUIRE_ALL"
	// Log names a file that each skip appends a line to:
	// "suite<TAB>how to enable<TAB>why". The Makefile sets it and prints
	// the suites at the end of make test.
	Log = "NEXTUP_SKIP_LOG"
)

// Skip ends t because suite (for example "PostgreSQL") cannot run here:
// why says what is missing, enable how to get it. It records the skip in
// the NEXTUP_SKIP_LOG file and skips t; under NEXTUP_REQUIRE_ALL=1 it
// fails t instead.
func Skip(t testing.TB, suite, why, enable string) {
	t.Helper()
	if os.Getenv(RequireAll) == "1" {
		t.Fatalf("%s required (%s=1) but %s; to enable: %s", suite, RequireAll, why, enable)
	}
	if path := os.Getenv(Log); path != "" {
		if err := record(path, suite, why, enable); err != nil {
			t.Logf("could not record the skip in %s: %v", path, err)
		}
	}
	t.Skipf("SKIPPING: no %s: %s (to enable: %s)", suite, why, enable)
}

// record appends one line to the log. Test binaries of several packages
// run at once: each line is one write to a file opened for appending, so
// lines from different processes do not interleave.
func record(path, suite, why, enable string) error {
	clean := func(s string) string { return strings.Join(strings.Fields(s), " ") } // no tabs or newlines inside a field
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s\t%s\t%s\n", clean(suite), clean(enable), clean(why))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
