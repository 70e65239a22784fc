package waitlist_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// jobOf reads a job, failing the test on error.
func (b *bundle) jobOf(t *testing.T, id string) nextup.Job {
	t.Helper()
	j, err := b.svc.GetJob(b.ctx, b.biz.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// A bulk release of a day's haircuts frees each booked haircut slot of
// that day, more than one wave of them, and offers each to the waitlist
// in fair order, soonest slot first; a colour slot the same day, a
// haircut the next day and a haircut with nothing booked are left alone.
// The job reports its progress, is audited when it starts and ends, and
// leaves no timer behind.
func TestBulkReleaseFreesEveryMatchingSlot(t *testing.T) {
	t.Parallel()
	b := requeueBundle(t, nil)
	const n = 30 // more than one wave
	var cuts []nextup.Slot
	for i := range n {
		start := b.at(1, 9, 0).Add(time.Duration(i) * 15 * time.Minute)
		cuts = append(cuts, b.slot(t, waitlist.SlotParams{StartsAt: start, EndsAt: start.Add(15 * time.Minute)}))
	}
	colour := b.slot(t, waitlist.SlotParams{Service: "colour", StartsAt: b.at(1, 12, 0)})
	nextDay := b.slot(t, waitlist.SlotParams{StartsAt: b.at(2, 12, 0)})
	free := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 18, 0), BookedSeats: new(int)})
	var waiting []nextup.Entry
	for i := range n + 5 {
		waiting = append(waiting, b.join(t, "P"+string(rune('a'+i%26))+string(rune('a'+i/26)), waitlist.JoinParams{
			Earliest: b.at(1, 0, 0), Latest: b.at(3, 0, 0)}))
	}
	job, err := b.svc.BulkRelease(b.ctx, b.biz.ID, waitlist.ReleaseFilter{From: b.at(1, 0, 0), To: b.at(2, 0, 0), Service: "haircut"}, "cancellation")
	if err != nil {
		t.Fatal(err)
	}
	if job.State != nextup.JobRunning || job.Total != n || job.Done != 0 || len(job.SlotIDs) != n || job.SlotIDs[0] != cuts[0].ID {
		t.Fatalf("the job at its start: %+v", job)
	}
	if _, err := b.sweeper.RunDue(b.ctx); err != nil {
		t.Fatal(err)
	}
	job = b.jobOf(t, job.ID)
	if job.State != nextup.JobDone || job.Done != n || job.Freed != n || job.Offers != n || job.Error != "" {
		t.Fatalf("the job at its end: %+v", job.JobProgress)
	}
	for i, sl := range cuts {
		v := b.getSlot(t, sl.ID)
		if v.Slot.BookedSeats != 0 || v.Slot.HeldSeats != 1 || len(v.Offers) != 1 || v.Offers[0].EntryID != waiting[i+1].ID {
			t.Fatalf("haircut %d after the release: %+v, offers %+v; want it offered to %s", i, v.Slot, v.Offers, waiting[i+1].ID)
		}
	}
	for _, sl := range []nextup.Slot{colour, nextDay} {
		if v := b.getSlot(t, sl.ID); v.Slot.BookedSeats != 1 || len(v.Offers) != 0 {
			t.Errorf("slot %s (%s) was touched: %+v", sl.ID, sl.Service, v.Slot)
		}
	}
	// The free haircut went to the first to join, before the release:
	// the job left it alone, so everyone else moved up one.
	if v := b.getSlot(t, free.ID); len(v.Offers) != 1 || v.Offers[0].EntryID != waiting[0].ID {
		t.Errorf("the free slot's offers: %+v", v.Offers)
	}
	rows, err := b.svc.SlotAudit(b.ctx, b.biz.ID, cuts[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	for _, r := range rows {
		if r.SubjectType == nextup.SubjectSlot && r.Reason == "cancellation" && r.To == "booked=0" {
			released = true
		}
	}
	if !released {
		t.Errorf("the slot's audit has no release: %+v", rows)
	}
	var jobRows []nextup.AuditEvent
	var pending []nextup.Timer
	err = b.store.Read(b.ctx, func(tx nextup.Tx) error {
		all, err := tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: b.biz.ID})
		for _, r := range all {
			if r.SubjectType == nextup.SubjectJob && r.SubjectID == job.ID {
				jobRows = append(jobRows, r)
			}
		}
		if err != nil {
			return err
		}
		ts, err := tx.TimerList(b.ctx, nextup.TimerFilter{BusinessID: b.biz.ID})
		for _, tm := range ts {
			if tm.Kind == nextup.TimerJobRun && tm.DoneAt == nil {
				pending = append(pending, tm)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobRows) != 2 || jobRows[0].To != "running" || jobRows[1].To != "done" || jobRows[1].Actor != nextup.ActorStaff {
		t.Errorf("the job's audit rows: %+v", jobRows)
	}
	if len(pending) != 0 {
		t.Errorf("job timers left pending: %+v", pending)
	}
}

// A shared class and an event, each with seats booked: a bulk release by
// ids frees every seat booked when it began, but not a seat claimed after
// it began (from an offer made before), and offers the freed seats.
func TestBulkReleaseSparesBookingsMadeAfterItBegan(t *testing.T) {
	t.Parallel()
	b := requeueBundle(t, nil)
	booked := 2
	class := b.slot(t, waitlist.SlotParams{Service: "yoga", Seating: nextup.SeatingShared, Capacity: 3, BookedSeats: &booked,
		StartsAt: b.at(1, 18, 0)})
	early := b.join(t, "Early", waitlist.JoinParams{Service: "yoga", Earliest: b.at(1, 0, 0), Latest: b.at(3, 0, 0)})
	v := b.getSlot(t, class.ID)
	if len(v.Offers) != 1 || v.Offers[0].EntryID != early.ID {
		t.Fatalf("the free seat's offer: %+v", v.Offers)
	}
	later := []nextup.Entry{
		b.join(t, "Later", waitlist.JoinParams{Service: "yoga", Earliest: b.at(1, 0, 0), Latest: b.at(3, 0, 0)}),
		b.join(t, "Last", waitlist.JoinParams{Service: "yoga", Earliest: b.at(1, 0, 0), Latest: b.at(3, 0, 0)}),
	}
	job, err := b.svc.BulkRelease(b.ctx, b.biz.ID, waitlist.ReleaseFilter{IDs: []string{class.ID}}, "no_show")
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	if _, err := b.svc.Claim(b.ctx, b.token(t, v.Offers[0].ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.sweeper.RunDue(b.ctx); err != nil {
		t.Fatal(err)
	}
	job = b.jobOf(t, job.ID)
	if job.State != nextup.JobDone || job.Freed != 2 || job.Offers != 2 {
		t.Fatalf("the job: %+v", job.JobProgress)
	}
	v = b.getSlot(t, class.ID)
	if v.Slot.BookedSeats != 1 || v.Slot.HeldSeats != 2 {
		t.Fatalf("the class after the release: %+v", v.Slot)
	}
	offered := map[string]bool{}
	for _, o := range v.Offers[1:] {
		offered[o.EntryID] = true
	}
	if !offered[later[0].ID] || !offered[later[1].ID] {
		t.Errorf("the freed seats went to %v, want Later and Last", offered)
	}
	if e := b.entry(t, early.ID); e.Entry.State != nextup.EntryBooked {
		t.Errorf("Early, who claimed after the release began, is %s", e.Entry.State)
	}
}

// A bulk release that names nothing, a bad reason, a range that ends
// before it starts, another business's slot or too many ids is refused
// with the field to fix, and no job is made; one that matches nothing is
// a job done at once.
func TestBulkReleaseRefusals(t *testing.T) {
	t.Parallel()
	b := requeueBundle(t, nil)
	other := requeueBundle(t, nil)
	theirs := other.slot(t, waitlist.SlotParams{StartsAt: other.at(1, 9, 0)})
	many := make([]string, nextup.MaxJobSlots+1)
	for i := range many {
		many[i] = "slot_x"
	}
	for _, c := range []struct {
		name  string
		f     waitlist.ReleaseFilter
		why   string
		field string
	}{
		{"no filter", waitlist.ReleaseFilter{}, "", "filter"},
		{"bad reason", waitlist.ReleaseFilter{Service: "haircut"}, "weather", "reason"},
		{"to before from", waitlist.ReleaseFilter{From: b.at(2, 0, 0), To: b.at(1, 0, 0)}, "", "filter.to"},
		{"another business's slot", waitlist.ReleaseFilter{IDs: []string{theirs.ID}}, "", "filter.ids"},
		{"too many ids", waitlist.ReleaseFilter{IDs: many}, "", "filter.ids"},
		{"an empty id", waitlist.ReleaseFilter{IDs: []string{" "}}, "", "filter.ids[0]"},
	} {
		_, err := b.svc.BulkRelease(b.ctx, b.biz.ID, c.f, c.why)
		if nextup.ErrorCode(err) != nextup.CodeValidation {
			t.Errorf("%s: %v, want a validation error", c.name, err)
			continue
		}
		var ne *nextup.Error
		if !errors.As(err, &ne) || len(ne.Fields) == 0 || ne.Fields[0].Field != c.field {
			t.Errorf("%s: %v, want the field %s", c.name, err, c.field)
		}
	}
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		jobs, err := tx.JobList(b.ctx, b.biz.ID, 0)
		if len(jobs) != 0 {
			t.Errorf("refused releases made jobs: %+v", jobs)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	job, err := b.svc.BulkRelease(b.ctx, b.biz.ID, waitlist.ReleaseFilter{Service: "massage"}, "")
	if err != nil || job.State != nextup.JobDone || job.Total != 0 || job.Reason != "cancellation" {
		t.Fatalf("a release of nothing: %+v, %v", job, err)
	}
	if _, err := other.svc.GetJob(other.ctx, other.biz.ID, job.ID); nextup.ErrorCode(err) != nextup.CodeNotFound {
		t.Errorf("another business reads the job: %v", err)
	}
}

// jobFaults is a store whose JobAdvance fails while failing is set: the
// disk went away in the middle of a wave.
type jobFaults struct {
	nextup.Store
	failing *atomic.Bool
}

func (s jobFaults) InTx(ctx context.Context, fn func(tx nextup.Tx) error) error {
	return s.Store.InTx(ctx, func(tx nextup.Tx) error { return fn(jobFaultsTx{tx, s.failing}) })
}

type jobFaultsTx struct {
	nextup.Tx
	failing *atomic.Bool
}

func (t jobFaultsTx) JobAdvance(ctx context.Context, id string, from, to nextup.JobProgress, at time.Time) (nextup.Job, error) {
	if t.failing.Load() {
		return nextup.Job{}, errors.New("disk I/O error")
	}
	return t.Tx.JobAdvance(ctx, id, from, to, at)
}

// A wave that fails in the middle (the store refuses every write of the
// job's progress) frees nothing it cannot record, and the job's guard
// timer, 30 s on, resumes it once the store is back: every slot freed
// once, every seat offered once, the job done.
func TestBulkReleaseResumesAfterAFailedWave(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), t.TempDir()+"/nextup.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	failing := new(atomic.Bool)
	b := newBundleOn(t, jobFaults{st, failing}, func(r *nextup.Rules) { r.QuietHours = nil })
	var cuts []nextup.Slot
	for i := range 4 {
		start := b.at(1, 9+i, 0)
		cuts = append(cuts, b.slot(t, waitlist.SlotParams{StartsAt: start, EndsAt: start.Add(30 * time.Minute)}))
	}
	for i := range 4 {
		b.join(t, fmt.Sprintf("P%d", i), waitlist.JoinParams{Earliest: b.at(1, 0, 0), Latest: b.at(3, 0, 0)})
	}
	job, err := b.svc.BulkRelease(b.ctx, b.biz.ID, waitlist.ReleaseFilter{Service: "haircut"}, "")
	if err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	_, _ = b.sweeper.RunDue(b.ctx) // the handler's failure is the sweeper's to log
	failing.Store(false)
	if got := b.jobOf(t, job.ID); got.State != nextup.JobRunning || got.Done != 0 {
		t.Fatalf("the job after the failed wave: %+v", got.JobProgress)
	}
	for _, sl := range cuts {
		if v := b.getSlot(t, sl.ID); v.Slot.BookedSeats != 1 || len(v.Offers) != 0 {
			t.Fatalf("a slot changed without its job's progress: %+v", v.Slot)
		}
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 29*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := b.jobOf(t, job.ID); got.Done != 0 {
		t.Fatalf("the job resumed before its guard was due: %+v", got.JobProgress)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	got := b.jobOf(t, job.ID)
	if got.State != nextup.JobDone || got.Done != 4 || got.Freed != 4 || got.Offers != 4 {
		t.Fatalf("the job after its guard: %+v", got.JobProgress)
	}
	for _, sl := range cuts {
		if v := b.getSlot(t, sl.ID); v.Slot.BookedSeats != 0 || len(v.Offers) != 1 {
			t.Errorf("slot %s after the resumed job: %+v, %d offers", sl.ID, v.Slot, len(v.Offers))
		}
	}
}
