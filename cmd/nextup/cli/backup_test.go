package cli

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
)

// runNextup runs this test binary as the nextup command and returns what
// it printed (stdout and stderr) and its error (an *exec.ExitError for a
// non-zero exit).
func runNextup(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// plainClient talks to a serve process without holding it to the API
// document: the storage tests provoke answers (a 503 on any write) that
// openapi.json declares once for every path, not per operation.
var plainClient = &http.Client{Timeout: 30 * time.Second}

// do sends one request to base and returns the status, headers and body.
func do(t *testing.T, base, method, path, bearer, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := plainClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// mustDo is do for a request that must answer want; it returns the JSON.
func mustDo(t *testing.T, base, method, path, bearer, body string, want int) map[string]any {
	t.Helper()
	st, _, b := do(t, base, method, path, bearer, body)
	if st != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, st, b, want)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return m
}

// joinLoad keeps writers joining a business's waitlist, recording every
// entry the server acknowledged (201) and the emails it refused.
type joinLoad struct {
	base, bid, key string
	mu             sync.Mutex
	acked          []string // entry ids, in the order acknowledged
	refused        []string // emails of joins answered otherwise
	answers        map[int]int
	last503        http.Header
	last503Body    []byte
	n              atomic.Int64
	stop           chan struct{}
	wg             sync.WaitGroup
}

func startJoins(t *testing.T, base, bid, key, tag string, writers int) *joinLoad {
	l := &joinLoad{base: base, bid: bid, key: key, stop: make(chan struct{}), answers: map[int]int{}}
	for w := range writers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; i < 100000; i++ { // bounded; stopped long before
				select {
				case <-l.stop:
					return
				default:
				}
				email := fmt.Sprintf("%s-%d-%d@example.com", tag, w, i)
				body := fmt.Sprintf(`{"name":"Joiner %d %d","email":%q,"service":"cut"}`, w, i, email)
				req, _ := http.NewRequest("POST", base+"/v1/businesses/"+bid+"/waitlist:join", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				res, err := plainClient.Do(req)
				if err != nil {
					t.Errorf("join: %v", err)
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				l.mu.Lock()
				l.answers[res.StatusCode]++
				if res.StatusCode == 201 {
					var e map[string]any
					_ = json.Unmarshal(b, &e)
					l.acked = append(l.acked, e["id"].(string))
				} else {
					l.refused = append(l.refused, email)
					if res.StatusCode == 503 {
						l.last503, l.last503Body = res.Header, b
					}
				}
				l.mu.Unlock()
				l.n.Add(1)
				if res.StatusCode == 503 {
					time.Sleep(20 * time.Millisecond) // a client backing off, briefly
				}
			}
		}()
	}
	return l
}

func (l *joinLoad) ackedSoFar() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

func (l *joinLoad) halt() {
	close(l.stop)
	l.wg.Wait()
}

// waitFor polls cond (a server's state, through its API) until it holds.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond) // polling another process
	}
}

// checkEntries fails unless every entry id answers 200 on base.
func checkEntries(t *testing.T, base, key string, ids []string) {
	t.Helper()
	for _, id := range ids {
		if st, _, b := do(t, base, "GET", "/v1/waitlist/"+id, key, ""); st != 200 {
			t.Fatalf("entry %s, acknowledged: %d %s", id, st, b)
		}
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestBackupLiveServe backs up the file of a running `nextup serve` while
// writers keep joining, restores the backup into a new file, starts serve
// on it, and finds through the API every entry acknowledged before the
// backup began. A restore over the live file is refused while the server
// holds it, and a truncated backup is refused, changing nothing.
func TestBackupLiveServe(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	live := startInstance(t, "live", db, mail.Addr)
	biz := mustDo(t, live.base, "POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)

	load := startJoins(t, live.base, bid, key, "live", 4)
	waitFor(t, "100 joins", 60*time.Second, func() bool { return len(load.ackedSoFar()) >= 100 })
	before := load.ackedSoFar()
	bak := filepath.Join(dir, "nextup-backup.db")
	started := time.Now()
	out, err := runNextup(t, "backup", "--db", db, "--to", bak)
	took := time.Since(started)
	during := load.n.Load()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	t.Logf("nextup backup (process, %v):\n%s", took, out)
	if !strings.Contains(out, "verified") || !strings.Contains(out, "entries") {
		t.Errorf("the backup's report lacks its verification or the entries table:\n%s", out)
	}
	// The load went on while the backup ran; let it run a little more.
	waitFor(t, "more joins after the backup", 30*time.Second, func() bool { return load.n.Load() > during+20 })

	// A restore over the file the server has open is refused, even with
	// --force, and the file is untouched.
	liveSum := fileSum(t, db)
	out, err = runNextup(t, "restore", "--from", bak, "--db", db, "--force")
	if err == nil || !strings.Contains(out, "open in another process") {
		t.Errorf("restore over the live database: %v\n%s; want refused: the server holds it", err, out)
	}
	if fileSum(t, db) != liveSum {
		// The server itself may have checkpointed meanwhile; the -wal's
		// removal would show, too.
		if _, err := os.Stat(db + "-wal"); err != nil {
			t.Errorf("the live database's log is gone after a refused restore: %v", err)
		}
	}
	load.halt()
	if load.answers[201] == 0 || len(load.answers) != 1 {
		t.Errorf("answers to the joins: %v, want only 201s", load.answers)
	}

	// The backup checks on its own, later, with the same figures.
	out, err = runNextup(t, "restore", "--from", bak, "--verify-only")
	if err != nil || !strings.Contains(out, "checks: integrity ok") || !strings.Contains(out, "entries") {
		t.Errorf("restore --verify-only: %v\n%s", err, out)
	}

	// A truncated backup is refused and writes nothing.
	restored := filepath.Join(dir, "restored.db")
	raw, err := os.ReadFile(bak)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.db")
	if err := os.WriteFile(cut, raw[:len(raw)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = runNextup(t, "restore", "--from", cut, "--db", restored)
	if err == nil || !strings.Contains(out, "not a sound nextup backup") || !strings.Contains(out, "truncated") {
		t.Errorf("restore of a truncated backup: %v\n%s; want refused, saying it is truncated", err, out)
	}
	if _, err := os.Stat(restored); !os.IsNotExist(err) {
		t.Fatalf("a refused restore left %s: %v", restored, err)
	}

	out, err = runNextup(t, "restore", "--from", bak, "--db", restored)
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	t.Logf("nextup restore:\n%s", out)
	again := startInstance(t, "restored", restored, mail.Addr)
	checkEntries(t, again.base, key, before)
	// The restored server takes writes.
	mustDo(t, again.base, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"After","email":"after@example.com","service":"cut"}`, 201)
	st, err := os.Stat(bak)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figures: backup of a live db under 4 writers: %v (process start included), %d bytes; %d entries acknowledged before it, %d in all", took, st.Size(), len(before), len(load.acked))
}

// TestDiskFullServe fills the small file system a real `nextup serve`
// keeps its database on while writers join: writes answer 503
// storage_full with Retry-After, /readyz says not ready and why, reads go
// on, and every acknowledged write is still there. When space frees,
// /readyz is ready again and writes succeed, without a restart; the joins
// that were refused left nothing behind (the same people join again).
func TestDiskFullServe(t *testing.T) {
	t.Parallel()
	mnt := mountTmpfs(t, "24m")
	mail := smtptest.Start(t)
	db := filepath.Join(mnt, "n.db")
	p := startInstance(t, "full", db, mail.Addr)
	biz := mustDo(t, p.base, "POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	if r := mustDo(t, p.base, "GET", "/readyz", "", "", 200); r["status"] != "ready" {
		t.Fatalf("/readyz: %v", r)
	}

	load := startJoins(t, p.base, bid, key, "full", 3)
	waitFor(t, "50 joins", 60*time.Second, func() bool { return len(load.ackedSoFar()) >= 50 })
	ballast := filepath.Join(mnt, "ballast")
	fillDisk(t, ballast)
	waitFor(t, "a 503", 60*time.Second, func() bool {
		load.mu.Lock()
		defer load.mu.Unlock()
		return load.answers[503] >= 5
	})
	load.mu.Lock()
	hdr, body := load.last503, load.last503Body
	load.mu.Unlock()
	var prob map[string]any
	if err := json.Unmarshal(body, &prob); err != nil || prob["code"] != "storage_full" || hdr.Get("Retry-After") == "" ||
		!strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") {
		t.Errorf("a write to a full disk: %v %s (Retry-After %q, %s); want problem+json storage_full with Retry-After", hdr, body, hdr.Get("Retry-After"), hdr.Get("Content-Type"))
	}
	st, rh, rb := do(t, p.base, "GET", "/readyz", "", "")
	if st != 503 || !strings.Contains(string(rb), `"storage_full"`) || rh.Get("Retry-After") == "" {
		t.Errorf("/readyz on a full disk: %d %s (Retry-After %q), want 503 storage_full", st, rb, rh.Get("Retry-After"))
	}
	t.Logf("/readyz on a full disk: %s", rb)
	load.halt()
	acked := load.ackedSoFar()
	refused := append([]string(nil), load.refused...)
	t.Logf("joins: %v (%d acknowledged, %d refused)", load.answers, len(acked), len(refused))
	for code := range load.answers {
		if code != 201 && code != 503 {
			t.Errorf("answers to the joins: %v, want only 201 and 503", load.answers)
		}
	}
	// Reads go on while the disk is full.
	checkEntries(t, p.base, key, acked)

	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/readyz ready after space freed", 30*time.Second, func() bool {
		st, _, _ := do(t, p.base, "GET", "/readyz", "", "")
		return st == 200
	})
	// Those refused join again as if for the first time: nothing of their
	// first try was kept.
	for i, email := range refused {
		if i >= 20 {
			break
		}
		mustDo(t, p.base, "POST", "/v1/businesses/"+bid+"/waitlist:join", key,
			fmt.Sprintf(`{"name":"Again","email":%q,"service":"cut"}`, email), 201)
	}
	checkEntries(t, p.base, key, acked)
	// And all of it survives a restart.
	p.stop()
	p = startInstance(t, "full-again", db, mail.Addr)
	checkEntries(t, p.base, key, acked)
}

// stop kills the process and waits for it.
func (in *instance) stop() {
	_ = in.cmd.Process.Kill()
	<-in.done
}

// TestReadOnlyServe starts `nextup serve` on a database it can only read
// (the file behind a read-only mount, as after a disk was remounted
// read-only): reads answer as before, every write answers 503
// storage_read_only with Retry-After, and /readyz says not ready and why.
func TestReadOnlyServe(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "n.db")
	p := startInstance(t, "rw", db, mail.Addr)
	biz := mustDo(t, p.base, "POST", "/v1/businesses", "adm", `{"name":"Salon","timezone":"UTC"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	var ids []string
	for i := range 5 {
		e := mustDo(t, p.base, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, fmt.Sprintf(`{"name":"Ann %d","email":"ann%d@example.com","service":"cut"}`, i, i), 201)
		ids = append(ids, e["id"].(string))
	}
	// A clean stop, as a deploy would: the log is checkpointed away.
	_ = p.cmd.Process.Signal(os.Interrupt)
	<-p.done

	ro := bindReadOnly(t, dir)
	p = startInstance(t, "ro", filepath.Join(ro, "n.db"), mail.Addr)
	checkEntries(t, p.base, key, ids)
	st, hdr, body := do(t, p.base, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Bob","email":"bob@example.com","service":"cut"}`)
	var prob map[string]any
	_ = json.Unmarshal(body, &prob)
	if st != 503 || prob["code"] != "storage_read_only" || hdr.Get("Retry-After") == "" {
		t.Errorf("a write to a read-only database: %d %s (Retry-After %q), want 503 storage_read_only with Retry-After", st, body, hdr.Get("Retry-After"))
	}
	st, _, body = do(t, p.base, "GET", "/readyz", "", "")
	if st != 503 || !strings.Contains(string(body), `"storage_read_only"`) {
		t.Errorf("/readyz on a read-only database: %d %s, want 503 storage_read_only", st, body)
	}
	t.Logf("/readyz on a read-only database: %s", body)
	checkEntries(t, p.base, key, ids)
}

// TestBackupRestoreUsage: the commands' flags, and the stores they refuse.
func TestBackupRestoreUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"backup"},
		{"backup", "--db", "postgres://localhost/nextup", "--to", "x.db"},
		{"restore"},
		{"restore", "--from", "x.db", "--db", "postgres://localhost/nextup"},
	} {
		var ue usageError
		if _, err := runCLI(t, args...); !errors.As(err, &ue) {
			t.Errorf("nextup %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
	for _, cmd := range []string{"backup", "restore"} {
		out, err := runCLI(t, cmd, "--help")
		if err != nil || !strings.Contains(out, "Usage: nextup "+cmd+" [flags]") || !strings.Contains(out, "-force") {
			t.Errorf("nextup %s --help: %v\n%s", cmd, err, out)
		}
	}
	dir := t.TempDir()
	if _, err := runCLI(t, "backup", "--db", filepath.Join(dir, "none.db"), "--to", filepath.Join(dir, "b.db")); err == nil {
		t.Error("a backup of a missing database succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("a failed backup left %v", entries)
	}
}
