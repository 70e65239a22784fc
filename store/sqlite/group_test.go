package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// slotFn is a call that creates slot id, then does what then says.
func (f *fixture) slotFn(id string, then func() error) func(tx nextup.Tx) error {
	return func(tx nextup.Tx) error {
		if err := tx.SlotCreate(f.ctx, nextup.Slot{ID: id, BusinessID: f.biz.ID, StartsAt: t0, EndsAt: t0, Capacity: 1, CreatedAt: t0}); err != nil {
			return err
		}
		return then()
	}
}

func (f *fixture) slotExists(id string) bool {
	f.t.Helper()
	var ok bool
	if err := f.db.Read(f.ctx, func(tx nextup.Tx) error {
		_, err := tx.SlotGet(f.ctx, id)
		ok = err == nil
		if errors.Is(err, nextup.ErrNotFound) {
			err = nil
		}
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
	return ok
}

// calls makes the txCalls of a group, as InTx would hand them to the
// writer.
func calls(ctx context.Context, fns ...func(tx nextup.Tx) error) []*txCall {
	var out []*txCall
	for _, fn := range fns {
		out = append(out, &txCall{ctx: ctx, fn: fn, done: make(chan txDone, 1)})
	}
	return out
}

// TestGroupIsolatesEachCall runs one group of five calls the way the
// writer does: the ones that succeed are committed together; one that
// returns an error and one that panics, each after writing, leave nothing
// and are told so (the panic's own value); one whose context ended while
// it waited never runs; and each call sees what the calls before it wrote
// (a second create of the same slot is a conflict).
func TestGroupIsolatesEachCall(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cancelled, cancel := context.WithCancel(f.ctx)
	cancel()
	refused := errors.New("refused")
	group := calls(f.ctx,
		f.slotFn("a", func() error { return nil }),
		f.slotFn("b", func() error { return refused }),
		f.slotFn("c", func() error { panic("boom") }),
		f.slotFn("a", func() error { return nil }), // a exists already: the first call's write is seen
		f.slotFn("d", func() error { return nil }),
	)
	late := calls(cancelled, f.slotFn("e", func() error { return nil }))[0]
	group = append(group, late)
	f.db.w.run(group)
	outs := make([]txDone, len(group))
	for i, c := range group {
		outs[i] = <-c.done
	}
	if outs[0].err != nil || outs[0].panicked || outs[4].err != nil {
		t.Errorf("the successful calls: %+v, %+v", outs[0], outs[4])
	}
	if !errors.Is(outs[1].err, refused) {
		t.Errorf("the failing call: %+v", outs[1])
	}
	if !outs[2].panicked || outs[2].panic != "boom" {
		t.Errorf("the panicking call: %+v", outs[2])
	}
	if !errors.Is(outs[3].err, nextup.ErrConflict) {
		t.Errorf("the second create of a: %+v", outs[3])
	}
	if !errors.Is(outs[5].err, context.Canceled) {
		t.Errorf("the call whose context ended: %+v", outs[5])
	}
	for id, want := range map[string]bool{"a": true, "b": false, "c": false, "d": true, "e": false} {
		if got := f.slotExists(id); got != want {
			t.Errorf("slot %s exists: %v, want %v", id, got, want)
		}
	}
}

// TestGroupBrokenRunsAgain: when SQLite rolls the group's transaction
// back under it (a full disk, an I/O error; here a ROLLBACK the call runs
// itself), the call that met it is told, and the calls that had succeeded
// before it, and those not yet run, are run again each in a transaction of
// its own: nobody is told "committed" for a change that was lost.
func TestGroupBrokenRunsAgain(t *testing.T) {
	t.Parallel()
	f := setup(t)
	runs := map[string]int{}
	var mu sync.Mutex
	count := func(id string) func() error {
		return func() error {
			mu.Lock()
			defer mu.Unlock()
			runs[id]++
			return nil
		}
	}
	breaker := func(tx nextup.Tx) error {
		if _, err := tx.(*sqlstore.Tx).Runner().Exec(f.ctx, "ROLLBACK"); err != nil {
			return err
		}
		return errors.New("the disk is full")
	}
	group := calls(f.ctx, f.slotFn("a", count("a")), breaker, f.slotFn("c", count("c")))
	f.db.w.run(group)
	for i, c := range group {
		d := <-c.done
		if (i == 1) != (d.err != nil) {
			t.Errorf("call %d: %+v", i, d)
		}
	}
	if runs["a"] != 2 || runs["c"] != 1 {
		t.Errorf("runs: %v, want a twice (its first run was lost) and c once", runs)
	}
	if !f.slotExists("a") || !f.slotExists("c") {
		t.Error("the calls told they committed are not there")
	}
}

// TestGroupCommitUnderLoad: many concurrent InTx calls, each a
// conditional write on one slot's seats, share commits without breaking
// the rules: exactly the capacity's worth succeed, the rest are refused,
// and every one told it committed is there.
func TestGroupCommitUnderLoad(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const capacity, callers = 20, 64
	f.tx(func(tx nextup.Tx) error {
		return tx.SlotCreate(f.ctx, nextup.Slot{ID: "s", BusinessID: f.biz.ID, StartsAt: t0, EndsAt: t0.Add(1), Capacity: capacity,
			Seating: nextup.SeatingShared, CreatedAt: t0})
	})
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			errs[i] = f.db.InTx(f.ctx, func(tx nextup.Tx) error {
				if _, err := tx.SlotSeats(f.ctx, "s", nextup.SeatDelta{Booked: 1}); err != nil {
					return err
				}
				return tx.AuditAppend(f.ctx, nextup.AuditEvent{BusinessID: f.biz.ID, At: t0, Actor: nextup.ActorSystem,
					SubjectType: nextup.SubjectSlot, SubjectID: "s", To: fmt.Sprint("seat-", i)})
			})
		})
	}
	wg.Wait()
	booked := 0
	for _, err := range errs {
		switch {
		case err == nil:
			booked++
		case !errors.Is(err, nextup.ErrConflict):
			t.Errorf("a refused seat: %v", err)
		}
	}
	var sl nextup.Slot
	var audit []nextup.AuditEvent
	if err := f.db.Read(f.ctx, func(tx nextup.Tx) error {
		var err error
		if sl, err = tx.SlotGet(f.ctx, "s"); err != nil {
			return err
		}
		audit, err = tx.AuditList(f.ctx, nextup.AuditFilter{BusinessID: f.biz.ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	commits, n := f.db.GroupStats()
	t.Logf("%d calls in %d commits", n, commits)
	if booked != capacity || sl.BookedSeats != capacity || len(audit) != capacity {
		t.Fatalf("%d told booked, %d seats booked, %d audit rows; want %d each", booked, sl.BookedSeats, len(audit), capacity)
	}
}

// TestClosedStoreRefusesInTx: after Close, InTx says so.
func TestClosedStoreRefusesInTx(t *testing.T) {
	t.Parallel()
	db := open(t)
	db.Close()
	if err := db.InTx(t.Context(), func(nextup.Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("InTx after Close: %v", err)
	}
}
