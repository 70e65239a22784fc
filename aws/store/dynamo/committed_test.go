package dynamo

import (
	"context"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// TestOnCommit: what a committed transaction did to timers and messages
// is told after the commit, and only what a trigger must follow: a timer
// scheduled or moved, a timer cancelled, a message to send (new, or a
// retry); not a lease, not a finished timer, not a transaction that
// failed.
func TestOnCommit(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	var told []Committed
	s.OnCommit(func(_ context.Context, c Committed) { told = append(told, c) })
	setup(t, s, business("b1"))
	if len(told) != 0 {
		t.Fatalf("a business alone told %+v", told)
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	run := func(fn func(tx nextup.Tx) error) Committed {
		t.Helper()
		told = nil
		if err := s.InTx(ctx, fn); err != nil {
			t.Fatal(err)
		}
		switch len(told) {
		case 0:
			return Committed{}
		case 1:
			return told[0]
		}
		t.Fatalf("told %d times for one transaction", len(told))
		return Committed{}
	}

	c := run(func(tx nextup.Tx) error {
		if err := tx.TimerSchedule(ctx, nextup.Timer{BusinessID: "b1", Kind: nextup.TimerOfferExpire, Key: "k1", DueAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
			return err
		}
		return tx.MessageCreate(ctx, nextup.Message{ID: "m1", BusinessID: "b1", Kind: "offer", Channel: nextup.ChannelEmail, To: "a@example.com",
			State: nextup.MessageQueued, CreatedAt: now})
	})
	if len(c.Timers) != 1 || c.Timers[0].Key != "k1" || c.Timers[0].ID == 0 || !c.Timers[0].DueAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("timers told: %+v", c.Timers)
	}
	id := c.Timers[0].ID
	if len(c.Messages) != 1 || c.Messages[0].ID != "m1" || len(c.Gone) != 0 {
		t.Fatalf("told %+v", c)
	}

	// Moved: told again with the new due time.
	c = run(func(tx nextup.Tx) error {
		return tx.TimerSchedule(ctx, nextup.Timer{BusinessID: "b1", Kind: nextup.TimerOfferExpire, Key: "k1", DueAt: now.Add(2 * time.Hour)})
	})
	if len(c.Timers) != 1 || c.Timers[0].ID != id || !c.Timers[0].DueAt.Equal(now.Add(2*time.Hour)) {
		t.Fatalf("moved timer told: %+v", c)
	}

	// A claim leases the message: nothing to trigger. A failed send is
	// a retry to trigger at its NextAttemptAt.
	var leased []nextup.Message
	c = run(func(tx nextup.Tx) (err error) {
		leased, err = tx.MessageClaimDue(ctx, now, time.Minute, 10)
		return err
	})
	if len(leased) != 1 || !c.Empty() {
		t.Fatalf("a claim of %d messages told %+v", len(leased), c)
	}
	c = run(func(tx nextup.Tx) error {
		return tx.MessageFinish(ctx, "m1", *leased[0].ClaimedUntil, nextup.MessageResult{State: nextup.MessageFailed, At: now, NextAttemptAt: now.Add(time.Minute), Error: "busy"})
	})
	if len(c.Messages) != 1 || c.Messages[0].State != nextup.MessageFailed || !c.Messages[0].NextAttemptAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("failed send told %+v", c)
	}

	// A transaction that fails tells nothing.
	told = nil
	if err := s.InTx(ctx, func(tx nextup.Tx) error {
		if err := tx.TimerSchedule(ctx, nextup.Timer{BusinessID: "b1", Kind: nextup.TimerOfferExpire, Key: "k2", DueAt: now}); err != nil {
			return err
		}
		return nextup.ErrInvalid
	}); err == nil || len(told) != 0 {
		t.Fatalf("failed transaction: err %v, told %+v", err, told)
	}

	// Cancelled: the id is gone.
	c = run(func(tx nextup.Tx) error { return tx.TimerCancel(ctx, "k1") })
	if len(c.Gone) != 1 || c.Gone[0] != id || len(c.Timers) != 0 {
		t.Fatalf("cancel told %+v", c)
	}
	// Cancelling a key with no pending timer tells nothing.
	if c = run(func(tx nextup.Tx) error { return tx.TimerCancel(ctx, "k1") }); !c.Empty() {
		t.Fatalf("second cancel told %+v", c)
	}
}
