package slots

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// ReleaseFilter chooses the slots of a bulk release: every condition
// given must hold (the slots starting in [From, To), of a service, of a
// staff member, or the slots named). At least one is needed; only slots
// that start after now and have seats booked are released.
type ReleaseFilter struct {
	From, To time.Time
	Service  string
	Staff    string
	IDs      []string
}

// A bulk release runs in waves: each wave is a timer's run of up to
// jobWave slots in one transaction (fewer on a bounded store: as many as
// it has room for) that also advances the job, so the slots' releases
// and the job's progress commit together; then the next wave's timer is
// due at once, so the relay, other timers and requests get the writer
// between waves.
// Until the job ends a guard timer is pending jobGuard ahead: a process
// that dies in a wave leaves the rest to whoever runs it.
const (
	jobWave  = 25
	jobGuard = 30 * time.Second
)

// JobKey is the key of a job's timer.
func JobKey(jobID string) string { return nextup.TimerJobRun + ":" + jobID }

// BulkRelease frees the booked seats of every slot the filter matches (a
// festival cancelled by weather, a staff member off sick), as a job of
// waves of bounded transactions, and returns the job at once: its
// progress is GetJob's. Each slot is released as Release would (the
// reason on every booking ended and in the audit), its seats offered to
// the waitlist in fair order; bookings made after the job began are not
// ended.
func (s *Slots) BulkRelease(ctx context.Context, businessID string, f ReleaseFilter, reason string) (nextup.Job, error) {
	switch reason {
	case ReasonCancellation, ReasonNoShow, ReasonOpening:
	case "":
		reason = ReasonCancellation
	default:
		return nextup.Job{}, core.Invalid(nextup.FieldError{Field: "reason", Message: "must be cancellation, no_show or opening"})
	}
	f.Service, f.Staff = strings.TrimSpace(f.Service), strings.TrimSpace(f.Staff)
	var fields []nextup.FieldError
	if f.From.IsZero() && f.To.IsZero() && f.Service == "" && f.Staff == "" && len(f.IDs) == 0 {
		fields = append(fields, nextup.FieldError{Field: "filter", Message: "name a day (from and to), a service, a staff member or slot ids"})
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		fields = append(fields, nextup.FieldError{Field: "filter.to", Message: "must be after from"})
	}
	if len(f.IDs) > nextup.MaxJobSlots {
		fields = append(fields, nextup.FieldError{Field: "filter.ids", Message: fmt.Sprintf("at most %d slots in one release", nextup.MaxJobSlots)})
	}
	for i, id := range f.IDs {
		if strings.TrimSpace(id) == "" {
			fields = append(fields, nextup.FieldError{Field: fmt.Sprintf("filter.ids[%d]", i), Message: "must be a slot id"})
			break
		}
	}
	if len(fields) > 0 {
		return nextup.Job{}, core.Invalid(fields...)
	}
	var job nextup.Job
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		matched, err := w.bulkSlots(ctx, businessID, f)
		if err != nil {
			return err
		}
		if len(matched) > nextup.MaxJobSlots {
			return core.Invalid(nextup.FieldError{Field: "filter",
				Message: fmt.Sprintf("matches %d slots; at most %d in one release", len(matched), nextup.MaxJobSlots)})
		}
		job = nextup.Job{ID: w.s.Random.ID("job"), BusinessID: businessID, Kind: nextup.JobSlotsRelease, Reason: reason,
			SlotIDs: matched, JobProgress: nextup.JobProgress{State: nextup.JobRunning, Total: len(matched)},
			CreatedAt: w.Now, UpdatedAt: w.Now}
		if len(matched) == 0 {
			job.State = nextup.JobDone
		}
		if err := w.Tx.JobCreate(ctx, job); err != nil {
			return fmt.Errorf("create job: %w", err)
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectJob, SubjectID: job.ID, To: string(job.State),
			Reason: reason, Detail: map[string]any{"slots": len(matched), "kind": job.Kind}}); err != nil {
			return err
		}
		if job.State != nextup.JobRunning {
			return nil
		}
		return w.Schedule(ctx, nextup.Timer{BusinessID: businessID, Kind: nextup.TimerJobRun, SubjectID: job.ID,
			Key: JobKey(job.ID), DueAt: w.Now})
	})
	return job, err
}

// bulkSlots lists the slots a bulk release frees, by start: those the
// filter matches that start after now and have seats booked.
func (w *work) bulkSlots(ctx context.Context, businessID string, f ReleaseFilter) ([]string, error) {
	var cand []nextup.Slot
	if len(f.IDs) > 0 {
		seen := map[string]bool{}
		for _, id := range f.IDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			sl, err := w.Tx.SlotGet(ctx, id)
			if err != nil || sl.BusinessID != businessID {
				if err == nil || errors.Is(err, nextup.ErrNotFound) {
					return nil, core.Invalid(nextup.FieldError{Field: "filter.ids", Message: "no slot " + id + " at this business"})
				}
				return nil, err
			}
			cand = append(cand, sl)
		}
	} else {
		from := f.From
		if from.IsZero() || from.Before(w.Now) {
			from = w.Now
		}
		list, err := w.Tx.SlotList(ctx, nextup.SlotFilter{BusinessID: businessID, From: from, To: f.To})
		if err != nil {
			return nil, fmt.Errorf("list slots: %w", err)
		}
		cand = list
	}
	var out []nextup.Slot
	for _, sl := range cand {
		switch {
		case !sl.StartsAt.After(w.Now), sl.BookedSeats == 0,
			!f.From.IsZero() && sl.StartsAt.Before(f.From), !f.To.IsZero() && !sl.StartsAt.Before(f.To),
			f.Service != "" && sl.Service != f.Service, f.Staff != "" && !strings.EqualFold(sl.Staff, f.Staff):
			continue
		}
		out = append(out, sl)
	}
	slices.SortStableFunc(out, func(a, b nextup.Slot) int { return a.StartsAt.Compare(b.StartsAt) })
	ids := make([]string, len(out))
	for i, sl := range out {
		ids[i] = sl.ID
	}
	return ids, nil
}

// GetJob reads a business's job.
func (s *Slots) GetJob(ctx context.Context, businessID, id string) (nextup.Job, error) {
	var j nextup.Job
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		j, err = tx.JobGet(ctx, id)
		if err != nil || (businessID != "" && j.BusinessID != businessID) {
			return core.NotFound("job", id, err)
		}
		return nil
	})
	return j, err
}

// RunJob is a job's timer: it runs one wave of the job and, while there
// is more, makes the next wave's timer due at once. The timer is
// finished first, under the sweeper's claim, with the guard scheduled in
// the same transaction (a wave that dies is resumed by it).
func (s *Slots) RunJob(ctx context.Context, t nextup.Timer) error {
	var job nextup.Job
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorTimer
		if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
			return fmt.Errorf("finish timer %s: %w", t.Key, err)
		}
		var err error
		if job, err = w.Tx.JobGet(ctx, t.SubjectID); err != nil {
			if errors.Is(err, nextup.ErrNotFound) {
				return nil // a timer without its job (never happens): nothing to do
			}
			return err
		}
		if job.State != nextup.JobRunning {
			return nil
		}
		return w.Schedule(ctx, nextup.Timer{BusinessID: job.BusinessID, Kind: nextup.TimerJobRun, SubjectID: job.ID,
			Key: JobKey(job.ID), DueAt: w.Now.Add(jobGuard)})
	})
	if err != nil || job.State != nextup.JobRunning {
		return err
	}
	// The wave in one transaction, a slot after another, as far as a
	// bounded store's transaction takes them; should it fail, slot by
	// slot, so that one slot that cannot be released holds up no other.
	batched, moves, err := s.jobBatch(ctx, job)
	if err != nil {
		s.Log().Warn("bulk release: a wave failed in one transaction; going slot by slot", "job_id", job.ID, "error", err)
		for i := 0; i < jobWave && job.State == nextup.JobRunning; i++ {
			if job, moves, err = s.jobStep(ctx, job); err != nil {
				return err // the guard resumes it
			}
			if s.Promoted != nil && len(moves) > 0 {
				s.Promoted(moves, job.CreatedAt)
			}
		}
	} else {
		job = batched
		if s.Promoted != nil && len(moves) > 0 {
			s.Promoted(moves, job.CreatedAt)
		}
	}
	if job.State != nextup.JobRunning {
		return nil
	}
	return s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorTimer
		return w.Schedule(ctx, nextup.Timer{BusinessID: job.BusinessID, Kind: nextup.TimerJobRun, SubjectID: job.ID,
			Key: JobKey(job.ID), DueAt: w.Now})
	})
}

// jobBatch does up to jobWave of the job's slots in one transaction (on
// a bounded store, as many as it has room for, at least one part), and
// advances the job once for them all.
func (s *Slots) jobBatch(ctx context.Context, job nextup.Job) (nextup.Job, []nextup.Move, error) {
	var out nextup.Job
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		cur := job
		for i := 0; i < jobWave && cur.Done < cur.Total; i++ {
			if i > 0 && w.Room(jobSlotWrites) == 0 {
				break // a bounded store's transaction is full: the next wave goes on
			}
			next, err := w.releaseJobSlot(ctx, cur)
			if err != nil {
				return err
			}
			partial := next.Done == cur.Done
			cur.JobProgress = next
			if partial {
				break // the rest of this slot in the next transaction
			}
		}
		var err error
		out, err = w.advanceJob(ctx, job, cur.JobProgress)
		moves = w.Moves
		return err
	})
	return out, moves, err
}

// jobSlotWrites is about what releasing one booked unit slot and offering
// it writes (the booking, its timers, the slot, the offer, the entry,
// their audit rows, the message and the offer's timers): a bounded store
// takes another slot into a wave's transaction only with room for it.
const jobSlotWrites = 20

// jobStep does the job's next part: it releases the seats of slot
// job.Done (or, on a bounded store, as many of them as one transaction
// takes) and advances the job in the same transaction. A slot whose
// release fails twice is skipped with the error kept; the job then ends
// failed, having done every other slot.
func (s *Slots) jobStep(ctx context.Context, job nextup.Job) (nextup.Job, []nextup.Move, error) {
	var out nextup.Job
	var moves []nextup.Move
	var err error
	for attempt := range 2 {
		err = s.tx(ctx, func(w *work) error {
			w.Actor = nextup.ActorStaff
			next, err := w.releaseJobSlot(ctx, job)
			if err != nil {
				return err
			}
			out, err = w.advanceJob(ctx, job, next)
			moves = w.Moves
			return err
		})
		if err == nil {
			return out, moves, nil
		}
		if errors.Is(err, nextup.ErrConflict) && attempt == 0 {
			// Another process moved the job (two sweepers after a
			// lease lapsed): go on from where it stands.
			fresh, gerr := s.GetJob(ctx, "", job.ID)
			if gerr != nil {
				return job, nil, gerr
			}
			if fresh.JobProgress != job.JobProgress {
				return fresh, nil, nil
			}
		}
	}
	s.Log().Warn("bulk release: a slot could not be released; skipped", "job_id", job.ID, "business_id", job.BusinessID,
		"slot_id", job.SlotIDs[job.Done], "error", err)
	err = s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		next := job.JobProgress
		next.Done++
		if next.Error == "" {
			next.Error = fmt.Sprintf("slot %s: %v", job.SlotIDs[job.Done], err)
		}
		var aerr error
		out, aerr = w.advanceJob(ctx, job, next)
		return aerr
	})
	return out, nil, err
}

// releaseJobSlot frees the seats of the job's next slot that were booked
// when the job began, offers them, and returns the job's progress after
// it: the slot done, or (a bounded store's part) more to free.
func (w *work) releaseJobSlot(ctx context.Context, job nextup.Job) (nextup.JobProgress, error) {
	next := job.JobProgress
	sl, err := w.Tx.SlotGet(ctx, job.SlotIDs[job.Done])
	if errors.Is(err, nextup.ErrNotFound) || (err == nil && sl.BusinessID != job.BusinessID) {
		next.Done++ // gone since: nothing to free
		return next, nil
	}
	if err != nil {
		return next, err
	}
	n, err := w.bookedAsOf(ctx, sl, job.CreatedAt)
	if err != nil {
		return next, err
	}
	if n == 0 {
		next.Done++
		return next, nil
	}
	movesBefore := len(w.Moves)
	freed, err := w.freeSeats(ctx, sl, n, job.Reason, job.CreatedAt)
	if err != nil {
		return next, err
	}
	if err := w.DecideSlot(ctx, sl.ID); err != nil {
		return next, err
	}
	next.Freed += freed
	for _, m := range w.Moves[movesBefore:] {
		if m.Move == nextup.MoveOffer {
			next.Offers++
		}
	}
	if freed >= n {
		next.Done++
	}
	return next, nil
}

// advanceJob records the job's progress, ending it after its last slot.
func (w *work) advanceJob(ctx context.Context, job nextup.Job, next nextup.JobProgress) (nextup.Job, error) {
	if next.Done >= next.Total {
		next.State = nextup.JobDone
		if next.Error != "" {
			next.State = nextup.JobFailed
		}
		if err := w.Tx.TimerCancel(ctx, JobKey(job.ID)); err != nil {
			return nextup.Job{}, fmt.Errorf("cancel timer %s: %w", JobKey(job.ID), err)
		}
	}
	out, err := w.Tx.JobAdvance(ctx, job.ID, job.JobProgress, next, w.Now)
	if err != nil {
		return out, fmt.Errorf("advance job %s: %w", job.ID, err)
	}
	if next.State != nextup.JobRunning {
		bi, err := w.Business(ctx, job.BusinessID)
		if err != nil {
			return out, err
		}
		detail := map[string]any{"slots": next.Total, "seats_freed": next.Freed, "offers": next.Offers}
		if next.Error != "" {
			detail["error"] = next.Error
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectJob, SubjectID: job.ID,
			From: string(nextup.JobRunning), To: string(next.State), Reason: job.Reason, Detail: detail}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// bookedAsOf is how many of a slot's booked seats a release that began
// at asOf frees: all of them but those of bookings made through nextup
// since (a claim of a seat the release itself offered).
func (w *work) bookedAsOf(ctx context.Context, sl nextup.Slot, asOf time.Time) (int, error) {
	bookings, err := w.Tx.BookingListBySlot(ctx, sl.ID)
	if err != nil {
		return 0, err
	}
	n := sl.BookedSeats
	for _, b := range bookings {
		if b.State == nextup.BookingBooked && b.CreatedAt.After(asOf) {
			n -= b.Seats
		}
	}
	if sl.Seating == nextup.SeatingUnit && n != sl.Capacity {
		return 0, nil // a unit slot is freed whole, or not at all
	}
	return max(n, 0), nil
}
