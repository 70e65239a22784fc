package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// Crash child: when the test binary runs with these set, TestCrashAfterCommit
// is the child: a container that releases the slot and dies right after
// the commit, before any schedule or SQS message is made.
const (
	crashEnvDB   = "NEXTUP_TEST_CRASH_DB"
	crashEnvSlot = "NEXTUP_TEST_CRASH_SLOT"
	crashEnvKey  = "NEXTUP_TEST_CRASH_KEY"
	crashEnvNow  = "NEXTUP_TEST_CRASH_NOW"
	crashExit    = 3
)

// crashChild is the child's part: it never returns.
func crashChild(t *testing.T) {
	now, err := time.Parse(time.RFC3339Nano, os.Getenv(crashEnvNow))
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{db: os.Getenv(crashEnvDB), clock: nextup.NewFakeClock(now), queue: os.Getenv("NEXTUP_TEST_CRASH_QUEUE")}
	f, _ := s.function(t, func(c *config) {
		c.crash = func(point string) {
			if point == "after_commit" {
				os.Exit(crashExit)
			}
		}
	})
	f.url("POST", "/v1/slots/"+os.Getenv(crashEnvSlot)+":release", os.Getenv(crashEnvKey), `{"reason":"cancellation"}`)
	t.Fatal("the child did not crash after the release's commit")
}

// TestCrashAfterCommit: a container killed between a commit and the
// schedule and SQS message that were to follow it loses neither the
// timer nor the message: the rows committed, nothing triggers them, and
// the safety sweep sends the offer and expires it when its window ends.
func TestCrashAfterCommit(t *testing.T) {
	if os.Getenv(crashEnvDB) != "" {
		crashChild(t)
		return
	}
	s := newStack(t)
	f, out := s.function(t)
	bid, key, sid := salon(t, f, 600)
	s.sqs.Take(s.queue, s.clock.Now())

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashAfterCommit$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvDB+"="+s.db, crashEnvSlot+"="+sid, crashEnvKey+"="+key,
		crashEnvNow+"="+s.clock.Now().Format(time.RFC3339Nano), "NEXTUP_TEST_CRASH_QUEUE="+s.queue)
	outb, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != crashExit {
		t.Fatalf("the child: %v, want exit %d at the crash point\n%s", err, crashExit, outb)
	}

	// Committed: the offer is there, pending, with its message queued;
	// nothing was triggered.
	msgs := f.json("GET", "/v1/businesses/"+bid+"/messages", key, "", 200)["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["state"] != "queued" {
		t.Fatalf("after the crash, messages %v: want the offer's, queued", msgs)
	}
	offer := msgs[0].(map[string]any)["offer_id"].(string)
	if o := f.json("GET", "/v1/offers/"+offer, key, "", 200); o["state"] != "offered" {
		t.Fatalf("after the crash the offer is %v, want offered", o["state"])
	}
	if n, q := len(s.offerSchedules()), s.sqs.Len(s.queue); n != 0 || q != 0 {
		t.Fatalf("after the crash: %d schedules, %d SQS messages; the crash came before them", n, q)
	}

	sweep := func() map[string]int {
		t.Helper()
		res, err := f.h.Invoke(context.Background(), []byte(`{"nextup":"sweep"}`))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]int
		if err := json.Unmarshal(res, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// The next sweep sends the offer; the one after the window expires
	// it (nobody else waits for it but Grace, who is offered next).
	if got := sweep(); got["sent"] != 1 || got["timers"] != 0 {
		t.Fatalf("the first sweep: %v, want the offer sent", got)
	}
	if len(out.Messages()) != 1 {
		t.Fatalf("%d messages sent by the sweep, want 1", len(out.Messages()))
	}
	s.clock.Advance(10 * time.Minute)
	if got := sweep(); got["timers"] < 1 {
		t.Fatalf("the sweep after the window: %v, want the expiry run", got)
	}
	if o := f.json("GET", "/v1/offers/"+offer, key, "", 200); o["state"] != "expired" {
		t.Fatalf("the offer after the sweep: %v, want expired", o["state"])
	}
}
