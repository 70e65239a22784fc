package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nextup-dev/nextup"
)

// The group commit crash test. A child process (this test binary, run
// again as TestGroupCrashChild) writes from 16 goroutines at once, so that
// its commits carry many calls, and prints "ok N" after each InTx that
// returned nil and "err N" after each that returned an error (every
// seventh call fails on purpose after writing). The parent kills it with
// SIGKILL after a while — most often in the middle of a group being
// written or committed — opens the file again and checks: every call the
// child was told committed is there, and no call that was told it failed
// is. (A call killed before it heard either may be there or not.)

const crashEnv = "NEXTUP_TEST_GROUP_CRASH_DB"

func TestGroupCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		return // only as the crash test's child
	}
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	start, _ := strconv.Atoi(os.Getenv(crashEnv + "_FROM"))
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format, args...)
		out.Flush()
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for n := start + g; ; n += 16 {
				err := db.InTx(ctx, func(tx nextup.Tx) error {
					if err := tx.AuditAppend(ctx, nextup.AuditEvent{BusinessID: "biz_crash", At: t0, Actor: nextup.ActorSystem,
						SubjectType: nextup.SubjectBusiness, SubjectID: "biz_crash", To: strconv.Itoa(n)}); err != nil {
						return err
					}
					if n%7 == 0 {
						return errors.New("refused on purpose")
					}
					return nil
				})
				if err != nil {
					say("err %d\n", n)
				} else {
					say("ok %d\n", n)
				}
			}
		})
	}
	wg.Wait()
}

func TestGroupCommitCrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crash.db")
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx nextup.Tx) error {
		return tx.BusinessCreate(ctx, nextup.Business{ID: "biz_crash", Name: "Crash", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: t0})
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	told := map[int]bool{} // true: told committed; false: told failed
	const rounds = 8
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGroupCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s_FROM=%d", crashEnv, round*10_000_000))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		heard := 0
		// Killed after 300 to 2,400 answers: at a different moment of
		// the writer's work each round.
		killAt := 300 + round*300
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 2 || (f[0] != "ok" && f[0] != "err") {
				t.Fatalf("the child says %q", sc.Text())
			}
			n, _ := strconv.Atoi(f[1])
			told[n] = f[0] == "ok"
			if heard++; heard == killAt {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		_ = cmd.Wait()
		if heard < killAt {
			t.Fatalf("round %d: the child stopped after %d answers", round, heard)
		}
	}
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	there := map[int]bool{}
	if err := db.Read(ctx, func(tx nextup.Tx) error {
		rows, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: "biz_crash"})
		for _, r := range rows {
			n, _ := strconv.Atoi(r.To)
			there[n] = true
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	committed, failed := 0, 0
	for n, ok := range told {
		switch {
		case ok && !there[n]:
			t.Errorf("call %d was told committed, and is not there after the kill", n)
		case !ok && there[n]:
			t.Errorf("call %d was told it failed, and is there after the kill", n)
		case ok:
			committed++
		default:
			failed++
		}
	}
	if committed == 0 || failed == 0 {
		t.Fatalf("%d committed and %d failed calls heard: the test tested nothing", committed, failed)
	}
	t.Logf("%d rounds killed; %d calls told committed, all there; %d told failed, none there; %d rows in all", rounds, committed, failed, len(there))
}
