package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func (b *bundle) job(businessID string, created time.Time, slots ...string) nextup.Job {
	b.t.Helper()
	j := nextup.Job{ID: b.id("job"), BusinessID: businessID, Kind: nextup.JobSlotsRelease, Reason: "cancellation",
		SlotIDs: slots, JobProgress: nextup.JobProgress{State: nextup.JobRunning, Total: len(slots)},
		CreatedAt: created, UpdatedAt: created}
	b.tx(func(tx nextup.Tx) error { return tx.JobCreate(b.ctx, j) })
	return j
}

// A job reads back as stored; an id taken is a conflict, a missing
// business and a missing job are not found; a business's jobs are listed
// newest first, limited, without another business's.
func testJobRoundTrip(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	j := b.job(biz.ID, b.now, "slot_a", "slot_b", "slot_c")
	b.read(func(tx nextup.Tx) error {
		got, err := tx.JobGet(b.ctx, j.ID)
		if wantOK(t, err, "JobGet") {
			checkEqual(t, "JobGet", j, got)
		}
		_, err = tx.JobGet(b.ctx, "job_missing")
		wantErr(t, err, nextup.ErrNotFound, "JobGet of a missing job")
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		wantErr(t, tx.JobCreate(b.ctx, j), nextup.ErrConflict, "JobCreate of an id taken")
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		err := tx.JobCreate(b.ctx, nextup.Job{ID: "job_orphan", BusinessID: "biz_missing", Kind: nextup.JobSlotsRelease,
			JobProgress: nextup.JobProgress{State: nextup.JobRunning}, CreatedAt: b.now, UpdatedAt: b.now})
		wantErr(t, err, nextup.ErrNotFound, "JobCreate for a missing business")
		return nil
	})
	later := b.job(biz.ID, b.at(time.Minute)) // no slots: an empty list reads back empty
	b.job(other.ID, b.at(time.Hour), "slot_x")
	b.read(func(tx nextup.Tx) error {
		got, err := tx.JobList(b.ctx, biz.ID, 0)
		if wantOK(t, err, "JobList") && (len(got) != 2 || got[0].ID != later.ID || got[1].ID != j.ID) {
			t.Errorf("JobList: %+v, want %s then %s", got, later.ID, j.ID)
		}
		if len(got) == 2 && len(got[0].SlotIDs) != 0 {
			t.Errorf("a job of no slots lists %v", got[0].SlotIDs)
		}
		got, err = tx.JobList(b.ctx, biz.ID, 1)
		if wantOK(t, err, "JobList(limit 1)") && (len(got) != 1 || got[0].ID != later.ID) {
			t.Errorf("the latest job: %+v", got)
		}
		return nil
	})
}

// JobAdvance moves a running job only from the progress it has: a stale
// from is a conflict and changes nothing; a job that ended moves no more.
func testJobAdvance(t *testing.T, b *bundle) {
	biz := b.business()
	j := b.job(biz.ID, b.now, "slot_a", "slot_b")
	start := j.JobProgress
	one := nextup.JobProgress{State: nextup.JobRunning, Done: 1, Total: 2, Freed: 3, Offers: 2}
	at := b.at(time.Second)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.JobAdvance(b.ctx, j.ID, start, one, at)
		if wantOK(t, err, "JobAdvance") && (got.JobProgress != one || !got.UpdatedAt.Equal(at) || got.Reason != j.Reason) {
			t.Errorf("JobAdvance returned %+v", got)
		}
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.JobAdvance(b.ctx, j.ID, start, one, at)
		wantErr(t, err, nextup.ErrConflict, "JobAdvance from a stale progress")
		_, err = tx.JobAdvance(b.ctx, "job_missing", start, one, at)
		wantErr(t, err, nextup.ErrNotFound, "JobAdvance of a missing job")
		return nil
	})
	done := nextup.JobProgress{State: nextup.JobDone, Done: 2, Total: 2, Freed: 4, Offers: 3}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.JobAdvance(b.ctx, j.ID, one, done, at)
		wantOK(t, err, "JobAdvance to done")
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.JobAdvance(b.ctx, j.ID, done, done, at)
		wantErr(t, err, nextup.ErrConflict, "JobAdvance of a job that is done")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.JobGet(b.ctx, j.ID)
		if wantOK(t, err, "JobGet") && got.JobProgress != done {
			t.Errorf("the job after the refused moves: %+v, want %+v", got.JobProgress, done)
		}
		return nil
	})
	k := b.job(biz.ID, b.now, "slot_c")
	bad := nextup.JobProgress{State: nextup.JobFailed, Total: 1, Error: "slot_c: boom"}
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.JobAdvance(b.ctx, k.ID, k.JobProgress, bad, at)
		if wantOK(t, err, "JobAdvance to failed") && got.JobProgress != bad {
			t.Errorf("the failed job: %+v", got.JobProgress)
		}
		return nil
	})
}

// Of eight transactions advancing a job from the same progress at once,
// exactly one commits its move: the rest find it moved.
func testConcurrentJobAdvance(t *testing.T, b *bundle) {
	biz := b.business()
	j := b.job(biz.ID, b.now, "slot_a")
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	var other []error
	for w := range 8 {
		wg.Go(func() {
			to := nextup.JobProgress{State: nextup.JobRunning, Total: 1, Freed: w + 1}
			err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
				_, err := tx.JobAdvance(b.ctx, j.ID, j.JobProgress, to, b.now)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, nextup.ErrConflict):
				lost++
			default:
				other = append(other, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || lost != 7 || len(other) > 0 {
		t.Errorf("%d advances committed, %d refused, errors %v; want 1 and 7", won, lost, other)
	}
}
