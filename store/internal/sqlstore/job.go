package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

// JobCols are the columns ScanJob reads, in its order.
const JobCols = `id, business_id, kind, reason, slot_ids, state, done, total, freed, offers, error, created_at, updated_at`

// ScanJob reads a row of JobCols.
func ScanJob(r Scanner) (nextup.Job, error) {
	var j nextup.Job
	var ids string
	var created, updated int64
	err := r.Scan(&j.ID, &j.BusinessID, &j.Kind, &j.Reason, &ids, &j.State, &j.Done, &j.Total, &j.Freed, &j.Offers,
		&j.Error, &created, &updated)
	if err != nil {
		return j, err
	}
	if err := json.Unmarshal([]byte(ids), &j.SlotIDs); err != nil {
		return j, fmt.Errorf("job %s: slot ids: %w", j.ID, err)
	}
	j.CreatedAt, j.UpdatedAt = FromTS(created), FromTS(updated)
	return j, nil
}

// Queries of the jobs.
const (
	JobInsert = `INSERT INTO jobs (` + JobCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	JobGet    = `SELECT ` + JobCols + ` FROM jobs WHERE id = ?`
	JobList   = `SELECT ` + JobCols + ` FROM jobs WHERE business_id = ?
		ORDER BY created_at DESC, id DESC LIMIT ?`
	JobAdvance = `UPDATE jobs SET state = ?, done = ?, total = ?, freed = ?, offers = ?, error = ?, updated_at = ?
		WHERE id = ? AND state = ? AND done = ? AND total = ? AND freed = ? AND offers = ? AND error = ?
		RETURNING ` + JobCols
)

// JobInsertArgs returns the arguments of JobInsert.
func JobInsertArgs(j nextup.Job) ([]any, error) {
	ids, err := json.Marshal(orEmptySlice(j.SlotIDs))
	if err != nil {
		return nil, err
	}
	return []any{j.ID, j.BusinessID, j.Kind, j.Reason, string(ids), j.State, j.Done, j.Total, j.Freed, j.Offers,
		j.Error, TS(j.CreatedAt), TS(j.UpdatedAt)}, nil
}

// JobCreate stores a new job.
func (t *Tx) JobCreate(ctx context.Context, j nextup.Job) error {
	args, err := JobInsertArgs(j)
	if err != nil {
		return fmt.Errorf("create job %s: %w", j.ID, err)
	}
	_, err = t.r.Exec(ctx, JobInsert, args...)
	return t.err("create job "+j.ID, err)
}

// JobGet reads a job.
func (t *Tx) JobGet(ctx context.Context, id string) (nextup.Job, error) {
	j, err := ScanJob(t.r.QueryRow(ctx, JobGet, id))
	return j, t.err("get job "+id, err)
}

// JobList lists a business's jobs, newest first.
func (t *Tx) JobList(ctx context.Context, businessID string, limit int) ([]nextup.Job, error) {
	out, err := all(ctx, t, ScanJob, JobList, businessID, t.limit(limit))
	return out, t.err("list jobs of business "+businessID, err)
}

// JobAdvance moves a running job from one progress to the next.
func (t *Tx) JobAdvance(ctx context.Context, id string, from, to nextup.JobProgress, at time.Time) (nextup.Job, error) {
	op := "advance job " + id
	if from.State != nextup.JobRunning {
		return nextup.Job{}, fmt.Errorf("%s: from %s, not running: %w", op, from.State, nextup.ErrConflict)
	}
	j, err := ScanJob(t.r.QueryRow(ctx, JobAdvance, to.State, to.Done, to.Total, to.Freed, to.Offers, to.Error, TS(at),
		id, from.State, from.Done, from.Total, from.Freed, from.Offers, from.Error))
	return returning(ctx, t, op, "jobs", id, j, err)
}
