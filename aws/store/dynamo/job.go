package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

// A job is the item job#ID, in g2 (jobbiz#BID, sorted by CREATED#ID:
// JobList reads the business's jobs, newest first). JobAdvance reads the
// item and puts it back; the commit checks the version it read, so two
// advances from the same progress cannot both commit.

func jobPK(id string) string { return "job#" + id }

func jobItem(j nextup.Job) (item, error) {
	return newItem(j, "gsi2pk", "jobbiz#"+j.BusinessID, "gsi2sk", ts(j.CreatedAt)+"#"+j.ID)
}

// JobCreate stores a new job; an id that exists is ErrConflict, a missing
// business ErrNotFound.
func (t *Tx) JobCreate(ctx context.Context, j nextup.Job) error {
	what := "create job " + j.ID
	if ok, err := t.exists(ctx, bizPK(j.BusinessID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": business "+j.BusinessID))
	}
	pk := jobPK(j.ID)
	if ok, err := t.exists(ctx, pk); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	it, err := jobItem(j)
	if err != nil {
		return err
	}
	return t.put(pk, it)
}

// JobGet reads a job.
func (t *Tx) JobGet(ctx context.Context, id string) (nextup.Job, error) {
	return load[nextup.Job](ctx, t, jobPK(id), "get job "+id)
}

// JobList lists a business's jobs, newest first, at most limit (<= 0: all).
func (t *Tx) JobList(ctx context.Context, businessID string, limit int) ([]nextup.Job, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "jobbiz#" + businessID, desc: true, limit: max(limit, 0)})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Job](its)
}

// JobAdvance moves a running job from one progress to the next, only
// while its stored progress is from.
func (t *Tx) JobAdvance(ctx context.Context, id string, from, to nextup.JobProgress, at time.Time) (nextup.Job, error) {
	what := "advance job " + id
	j, err := loadLocked[nextup.Job](ctx, t, jobPK(id), what)
	if err != nil {
		return nextup.Job{}, err
	}
	if from.State != nextup.JobRunning || j.JobProgress != from {
		return nextup.Job{}, conflict(fmt.Sprintf("%s: it is %s at %d of %d", what, j.State, j.Done, j.Total))
	}
	j.JobProgress, j.UpdatedAt = to, at
	it, err := jobItem(j)
	if err != nil {
		return nextup.Job{}, err
	}
	return j, t.put(jobPK(id), it)
}
