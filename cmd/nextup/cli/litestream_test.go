package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/internal/missing"
	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/store/sqlite"
)

// litestreamVersion is the Litestream release the drill runs and
// docs/backup.md describes; .ci/run installs it.
const litestreamVersion = "v0.5.18"

// litestream locates the litestream binary: on PATH, or where `go install`
// puts it.
func litestream(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("litestream"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "litestream")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	missing.Skip(t, "Litestream", "litestream is not on PATH nor in $(go env GOPATH)/bin",
		"CGO_ENABLED=0 go install github.com/benbjohnson/litestream/cmd/litestream@"+litestreamVersion)
	return ""
}

// TestLitestreamRestoreDrill is the restore drill of docs/backup.md, with
// Litestream as the sidecar it describes: `nextup serve` takes joins while
// `litestream replicate` streams its file to a replica; the server is
// killed (SIGKILL: no clean shutdown) and the database deleted with its
// -wal and -shm; `litestream restore` rebuilds it from the replica,
// `nextup restore` checks it and puts it in place, and a new serve on it
// answers for every join that was acknowledged.
func TestLitestreamRestoreDrill(t *testing.T) {
	t.Parallel()
	bin := litestream(t)
	if out, err := exec.Command(bin, "version").CombinedOutput(); err == nil {
		t.Logf("litestream %s", strings.TrimSpace(string(out)))
	}
	mail := smtptest.Start(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "nextup.db")
	replica := filepath.Join(dir, "replica")
	// The sample configuration itself, as an operator runs it, with a
	// file replica.
	cfg, err := filepath.Abs(filepath.Join("..", "..", "..", "deploy", "litestream.yml"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "NEXTUP_DB="+db, "LITESTREAM_REPLICA_URL=file://"+replica)
	lsCmd := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = env
		return c
	}

	p := startInstance(t, "primary", db, mail.Addr)
	biz := mustDo(t, p.base, "POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)

	ls := lsCmd("replicate", "-config", cfg)
	logs := &syncBuffer{}
	ls.Stdout, ls.Stderr = logs, logs
	if err := ls.Start(); err != nil {
		t.Fatal(err)
	}
	lsDone := make(chan struct{})
	go func() { _ = ls.Wait(); close(lsDone) }()
	t.Cleanup(func() {
		_ = ls.Process.Kill()
		<-lsDone
		if t.Failed() {
			t.Logf("--- litestream logs:\n%s", logs.String())
		}
	})

	// Writes under Litestream: its read transaction and its checkpoints
	// run beside nextup's writer (busy_timeout), and nothing fails.
	load := startJoins(t, p.base, bid, key, "drill", 3)
	waitFor(t, "300 joins", 90*time.Second, func() bool { return len(load.ackedSoFar()) >= 300 })
	load.halt()
	if len(load.answers) != 1 {
		t.Errorf("answers to the joins under Litestream: %v, want only 201s", load.answers)
	}
	acked := load.ackedSoFar()

	// The machine's nextup dies. Litestream, still up, ships what the
	// server had committed (the log is on disk) within about a monitor
	// and a sync interval: replication is asynchronous by design. The
	// drill waits until the replica holds every acknowledged join, as an
	// operator waits for `litestream ltx` to show the last transaction,
	// and then stops it.
	p.stop()
	probe := filepath.Join(dir, "probe.db")
	waitFor(t, "the replica to hold every acknowledged join", 60*time.Second, func() bool {
		removeAll(probe)
		if out, err := lsCmd("restore", "-config", cfg, "-o", probe, db).CombinedOutput(); err != nil {
			t.Logf("replica not ready: %v: %s", err, strings.TrimSpace(string(out)))
			time.Sleep(500 * time.Millisecond)
			return false
		}
		rep, err := sqlite.Verify(context.Background(), probe)
		if err != nil {
			t.Fatalf("Litestream's restore does not check: %v", err)
		}
		for _, tb := range rep.Tables {
			if tb.Name == "entries" {
				return tb.Rows == int64(len(acked))
			}
		}
		return false
	})
	removeAll(probe)
	_ = ls.Process.Signal(syscall.SIGTERM)
	select {
	case <-lsDone:
	case <-time.After(30 * time.Second):
		t.Fatal("litestream did not stop on SIGTERM")
	}
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}

	restored := filepath.Join(dir, "from-replica.db")
	started := time.Now()
	out, err := lsCmd("restore", "-config", cfg, "-o", restored, db).CombinedOutput()
	if err != nil {
		t.Fatalf("litestream restore: %v\n%s", err, out)
	}
	lsTook := time.Since(started)
	nout, err := runNextup(t, "restore", "--from", restored, "--db", db)
	if err != nil {
		t.Fatalf("nextup restore of Litestream's copy: %v\n%s", err, nout)
	}
	t.Logf("litestream restore took %v; nextup restore:\n%s", lsTook, nout)

	again := startInstance(t, "restored", db, mail.Addr)
	checkEntries(t, again.base, key, acked)
	mustDo(t, again.base, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"After","email":"after@example.com","service":"cut"}`, 201)
	t.Logf("drill: %d acknowledged joins, all restored from the replica", len(acked))
}

// removeAll removes a database file and the journals SQLite keeps beside it.
func removeAll(db string) {
	for _, f := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
		_ = os.Remove(f)
	}
}
