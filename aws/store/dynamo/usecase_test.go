package dynamo

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestBatchPromotionSplits is the use case the service's limits would
// break in one transaction: a 200-seat event promoting 200 people at once
// (about ten writes each). It is split into transactions that each fit
// (waitlist/internal/core, "Bounded stores"): every person is offered, in
// fair order, and the seats held never pass the capacity.
func TestBatchPromotionSplits(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, clock, svc, biz := h.ctx, h.st, h.clock, h.svc, h.biz
	measured := st.Measure()
	ev := h.event(t, "Concert", 1)
	const waiting = 200
	for i := range waiting + 1 {
		if _, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: fmt.Sprintf("Guest %03d", i),
			Email: fmt.Sprintf("g%03d@example.com", i)}); err != nil {
			t.Fatalf("register %d: %v", i, err)
		}
	}
	// 200 more seats at once.
	slot, moves, err := svc.Resize(ctx, biz.ID, ev.ID, 1+waiting)
	if err != nil {
		t.Fatalf("resize to %d: %v", 1+waiting, err)
	}
	if n := st.TxWrites(); len(moves) == 0 || len(moves) >= waiting || slot.HeldSeats != len(moves) {
		t.Fatalf("the resize's own transaction: %d moves, %d held; want a first share of the 200 (store bound %d)", len(moves), slot.HeldSeats, n)
	}
	if err := timer.Advance(ctx, clock, h.sweep, time.Second); err != nil {
		t.Fatalf("the split's follow-up transactions: %v", err)
	}
	var offers []nextup.Offer
	err = st.Read(ctx, func(tx nextup.Tx) error {
		if slot, err = tx.SlotGet(ctx, ev.ID); err != nil {
			return err
		}
		offers, err = tx.OfferListBySlot(ctx, ev.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(offers) != waiting || slot.HeldSeats != waiting || slot.BookedSeats != 1 || slot.HeldSeats+slot.BookedSeats > slot.Capacity {
		t.Fatalf("after the split: %d offers, held %d, booked %d of %d; want all %d offered", len(offers), slot.HeldSeats, slot.BookedSeats, slot.Capacity, waiting)
	}
	// In fair order: the guests registered one after another, so the
	// offers go to Guest 001, 002, … in that order.
	for i, o := range offers {
		var e nextup.Entry
		if err := st.Read(ctx, func(tx nextup.Tx) error { e, err = tx.EntryGet(ctx, o.EntryID); return err }); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("Guest %03d", i+1); e.Name != want {
			t.Fatalf("offer %d went to %s, want %s (fair order)", i, e.Name, want)
		}
	}
	r, w := measured.Take()
	t.Logf("200 registrations and a 200-seat promotion: %.0f read units, %.0f write units", r, w)
}

// TestSplitReleaseResumes: a release of 30 registrations at once goes in
// parts on DynamoDB; a request with an Idempotency-Key that dies after its
// first part committed is run again with the same key and frees the
// remaining seats only, not 30 more, nor refuses.
func TestSplitReleaseResumes(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, svc, biz := h.ctx, h.st, h.svc, h.biz
	ev := h.event(t, "Talk", 40)
	for i := range 40 {
		if _, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: fmt.Sprintf("Guest %02d", i), Email: fmt.Sprintf("g%02d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	booked := func() int {
		var sl nextup.Slot
		if err := st.Read(ctx, func(tx nextup.Tx) error {
			var err error
			sl, err = tx.SlotGet(ctx, ev.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return sl.BookedSeats
	}
	key := &waitlist.Idempotency{Scope: "caller:x", Key: "release-30", Fingerprint: "release 30"}
	// The first run dies right after its first part commits.
	type died struct{}
	svc.Crash = func(point string) {
		if point == "after_phase_commit" {
			panic(died{})
		}
	}
	func() {
		rctx, req, _, err := svc.Begin(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if _, ok := recover().(died); !ok {
				t.Fatal("the first run did not die after its first part")
			}
			req.Abort()
		}()
		_, _, _ = svc.Release(rctx, biz.ID, ev.ID, 30, "cancellation")
	}()
	svc.Crash = nil
	first := 40 - booked()
	if first <= 0 || first >= 30 {
		t.Fatalf("the first part freed %d seats, want some of the 30", first)
	}
	// The retry, same key: it resumes with the seats freed so far.
	rctx, req, replay, err := svc.Begin(ctx, key)
	if err != nil || replay != nil {
		t.Fatalf("the retry: %v %v, want it to run", replay, err)
	}
	sl, _, err := svc.Release(rctx, biz.ID, ev.ID, 30, "cancellation")
	if err != nil {
		t.Fatalf("the retry's release: %v", err)
	}
	if _, _, err := req.End(waitlist.Response{Status: 200, Body: []byte("released")}); err != nil {
		t.Fatal(err)
	}
	if got := booked(); got != 10 || sl.BookedSeats != 10 {
		t.Fatalf("after the retry: %d booked (answer %d), want 10: 30 freed in all", got, sl.BookedSeats)
	}
	if _, _, replay, _ := svc.Begin(ctx, key); replay == nil || string(replay.Body) != "released" {
		t.Fatalf("the key again: %+v, want the answer replayed", replay)
	}
}

// TestPromotionWithManySkips: people passed over (opted out of their only
// channel) cost writes too; a promotion of 60 seats over 60 people, every
// other one opted out, fits its transactions: the 30 who can be reached
// are offered, the rest audited as skipped, and nothing fails.
func TestPromotionWithManySkips(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, clock, svc, biz := h.ctx, h.st, h.clock, h.svc, h.biz
	ev := h.event(t, "Talk", 1)
	for i := range 61 {
		email := fmt.Sprintf("g%02d@example.com", i)
		if _, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: fmt.Sprintf("Guest %02d", i), Email: email}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := st.InTx(ctx, func(tx nextup.Tx) error {
				return tx.SuppressionAdd(ctx, nextup.Suppression{BusinessID: biz.ID, Channel: nextup.ChannelEmail,
					Address: nextup.AddressKey(nextup.ChannelEmail, email), Reason: "bounced", At: clock.Now()})
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := svc.Resize(ctx, biz.ID, ev.ID, 61); err != nil {
		t.Fatalf("grow by 60 with 30 people unreachable: %v", err)
	}
	if err := timer.Advance(ctx, clock, h.sweep, time.Second); err != nil {
		t.Fatal(err)
	}
	var slot nextup.Slot
	var audit []nextup.AuditEvent
	if err := st.Read(ctx, func(tx nextup.Tx) error {
		var err error
		if slot, err = tx.SlotGet(ctx, ev.ID); err != nil {
			return err
		}
		audit, err = tx.AuditList(ctx, nextup.AuditFilter{SlotID: ev.ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if slot.HeldSeats != 30 {
		t.Fatalf("held %d seats, want the 30 reachable people offered", slot.HeldSeats)
	}
	skipped := map[string]bool{}
	for _, e := range audit {
		if e.Reason == "skipped:"+"no_channel" {
			skipped[e.SubjectID] = true
		}
		if e.Reason == "skipped:many" {
			for _, s := range e.Detail["skipped"].([]any) {
				skipped[s.(map[string]any)["entry_id"].(string)] = true
			}
		}
	}
	if len(skipped) != 30 {
		t.Errorf("%d people audited as skipped, want the 30 unreachable", len(skipped))
	}
}

// failNextAPI refuses the next TransactWriteItems as a conflict when armed.
type failNextAPI struct {
	API
	armed atomic.Bool
}

func (f *failNextAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if f.armed.CompareAndSwap(true, false) {
		return nil, canceled("ConditionalCheckFailed")
	}
	return f.API.TransactWriteItems(ctx, in, opts...)
}

// A request without an Idempotency-Key that splits (a release in parts)
// gets a key of its own at its first split: when its last part loses its
// commit to another transaction, it is run again with that key and
// resumes, freeing the seats left and no more.
func TestSplitRequestWithoutKeyResumes(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, svc, biz := h.ctx, h.st, h.svc, h.biz
	f := &failNextAPI{API: st.api}
	st.api = f
	ev := h.event(t, "Talk", 40)
	for i := range 40 {
		if _, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: fmt.Sprintf("Guest %02d", i), Email: fmt.Sprintf("g%02d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	rctx, req, _, err := svc.Begin(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Release(rctx, biz.ID, ev.ID, 30, "cancellation"); err != nil {
		t.Fatal(err)
	}
	f.armed.Store(true) // the last part's commit loses
	_, rerun, err := req.End(waitlist.Response{Status: 200})
	if err != nil || !rerun || req.Resume() == nil {
		t.Fatalf("End after the last part lost: rerun %t, key %v, %v; want a rerun with a key of its own", rerun, req.Resume(), err)
	}
	rctx, req, replay, err := svc.Begin(ctx, req.Resume())
	if err != nil || replay != nil {
		t.Fatalf("the rerun: %v %v", replay, err)
	}
	sl, _, err := svc.Release(rctx, biz.ID, ev.ID, 30, "cancellation")
	if err != nil {
		t.Fatalf("the rerun's release: %v", err)
	}
	if _, rerun, err := req.End(waitlist.Response{Status: 200}); err != nil || rerun {
		t.Fatalf("the rerun's End: %v %t", err, rerun)
	}
	if sl.BookedSeats != 10 {
		t.Fatalf("after the rerun: %d booked, want 10 (30 freed in all)", sl.BookedSeats)
	}
}

// TestBulkReleaseInParts: a bulk release of an event of 60 registrations
// and a unit slot, on DynamoDB, where one transaction cannot end 60
// registrations: the job frees the event's seats in parts (each
// advancing the job with the seats it freed) and offers them, split, to
// the 60 waiting in fair order; the job ends done with every seat freed
// and offered.
func TestBulkReleaseInParts(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, clock, svc, biz := h.ctx, h.st, h.clock, h.svc, h.biz
	ev := h.event(t, "Festival", 60)
	for i := range 120 {
		if _, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: fmt.Sprintf("Guest %03d", i),
			Email: fmt.Sprintf("g%03d@example.com", i)}); err != nil {
			t.Fatalf("register %d: %v", i, err)
		}
	}
	job, err := svc.BulkRelease(ctx, biz.ID, waitlist.ReleaseFilter{IDs: []string{ev.ID}}, "cancellation")
	if err != nil {
		t.Fatal(err)
	}
	if err := timer.Advance(ctx, clock, h.sweep, time.Second); err != nil {
		t.Fatalf("the job's waves: %v", err)
	}
	if job, err = svc.GetJob(ctx, biz.ID, job.ID); err != nil {
		t.Fatal(err)
	}
	var slot nextup.Slot
	var offers []nextup.Offer
	err = st.Read(ctx, func(tx nextup.Tx) error {
		if slot, err = tx.SlotGet(ctx, ev.ID); err != nil {
			return err
		}
		offers, err = tx.OfferListBySlot(ctx, ev.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if job.State != nextup.JobDone || job.Done != 1 || job.Freed != 60 {
		t.Fatalf("the job: %+v", job.JobProgress)
	}
	if slot.BookedSeats != 0 || slot.HeldSeats != 60 || len(offers) != 60 {
		t.Fatalf("the event after the release: booked %d, held %d, %d offers; want 0, 60, 60", slot.BookedSeats, slot.HeldSeats, len(offers))
	}
	for i, o := range offers {
		var e nextup.Entry
		if err := st.Read(ctx, func(tx nextup.Tx) error { e, err = tx.EntryGet(ctx, o.EntryID); return err }); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("Guest %03d", 60+i); e.Name != want {
			t.Fatalf("offer %d went to %s, want %s (fair order)", i, e.Name, want)
		}
	}
}

// TestBookingEventsOnDynamo: the booking tool's events on DynamoDB. Two
// first events about one appointment racing (a cancellation and its
// no-show, under different event ids) make one slot between them; the
// same event again answers the same and changes nothing.
func TestBookingEventsOnDynamo(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, svc, biz := h.ctx, h.svc, h.biz
	if _, err := svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: "Ann", Email: "ann@example.com", Service: "Haircut"}); err != nil {
		t.Fatal(err)
	}
	appt := waitlist.Appointment{ID: "apt_1", Service: "Haircut", StartsAt: h.clock.Now().Add(6 * time.Hour), EndsAt: h.clock.Now().Add(7 * time.Hour)}
	evs := []waitlist.BookingEvent{{ID: "ev_a", Type: waitlist.AppointmentCancelled, Appointment: appt},
		{ID: "ev_b", Type: waitlist.AppointmentNoShow, Appointment: appt}}
	res := make([]waitlist.BookingEventResult, 2)
	errs := make([]error, 2)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range evs {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			res[i], errs[i] = svc.BookingEvent(ctx, biz.ID, evs[i], "fp")
		}()
	}
	start.Done()
	done.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("event %s: %v", evs[i].ID, err)
		}
	}
	if res[0].SlotID != res[1].SlotID {
		t.Fatalf("one appointment, two slots: %s and %s", res[0].SlotID, res[1].SlotID)
	}
	var slots []nextup.Slot
	var offers []nextup.Offer
	count := func() {
		t.Helper()
		if err := h.st.Read(ctx, func(tx nextup.Tx) error {
			var err error
			if slots, err = tx.SlotList(ctx, nextup.SlotFilter{BusinessID: biz.ID}); err != nil {
				return err
			}
			offers, err = tx.OfferListBySlot(ctx, res[0].SlotID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	count()
	if len(slots) != 1 || slots[0].BookedSeats+slots[0].HeldSeats > slots[0].Capacity || len(offers) != 1 {
		t.Fatalf("after the race: %+v, %d offers; want one slot offered to Ann once", slots, len(offers))
	}
	again, err := svc.BookingEvent(ctx, biz.ID, evs[0], "fp")
	if err != nil || !again.Replayed || again.SlotID != res[0].SlotID || len(again.Moves) != len(res[0].Moves) {
		t.Fatalf("the repeat: %+v, %v; want the first answer %+v replayed", again, err, res[0])
	}
	count()
	if len(slots) != 1 || len(offers) != 1 {
		t.Fatalf("the repeat changed things: %d slots, %d offers", len(slots), len(offers))
	}
}

// TestDedupeInParts: on DynamoDB (100 items a transaction) a person on
// twelve lists books one with the dedupe rule at all: the claim withdraws
// what its transaction has room for and a dedupe timer the rest, so every
// other entry leaves, each once, and each is told.
func TestDedupeInParts(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, svc, biz := h.ctx, h.st, h.svc, h.biz
	if _, err := svc.UpdateRules(ctx, biz.ID, []byte(`{"dedupe":"all"}`)); err != nil {
		t.Fatal(err)
	}
	const lists = 12
	var first string
	var ids []string
	for i := range lists {
		res, err := svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: "Ann", Email: "ann@example.com", Service: fmt.Sprintf("service %02d", i)})
		if err != nil {
			t.Fatalf("join %d: %v", i, err)
		}
		if i == 0 {
			first = res.Entry.ID
		}
		ids = append(ids, res.Entry.ID)
		// Each other list holds an offer, the costliest to withdraw.
		if i > 0 {
			start := h.clock.Now().Add(time.Duration(30+i) * time.Hour)
			sl, _, err := svc.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: fmt.Sprintf("service %02d", i), StartsAt: start, EndsAt: start.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			if _, moves, err := svc.Release(ctx, biz.ID, sl.ID, 0, waitlist.ReasonCancellation); err != nil || len(moves) != 1 || moves[0].Move != nextup.MoveOffer {
				t.Fatalf("offer on list %d: %v %v", i, moves, err)
			}
		}
	}
	start := h.clock.Now().Add(26 * time.Hour)
	sl, _, err := svc.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "service 00", StartsAt: start, EndsAt: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	_, moves, err := svc.Release(ctx, biz.ID, sl.ID, 0, waitlist.ReasonCancellation)
	if err != nil || len(moves) != 1 || moves[0].EntryID != first {
		t.Fatalf("the offer to book: %v %v", moves, err)
	}
	if _, err := svc.Claim(ctx, h.token(t, moves[0].OfferID)); err != nil {
		t.Fatalf("claim: %v", err)
	}
	var pending []nextup.Timer
	if err := st.Read(ctx, func(tx nextup.Tx) error {
		var err error
		pending, err = tx.TimerList(ctx, nextup.TimerFilter{BusinessID: biz.ID, PendingOnly: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	split := false
	for _, tm := range pending {
		split = split || tm.Kind == nextup.TimerDedupe
	}
	if !split {
		t.Fatalf("eleven offers withdrawn in the claim's own transaction (bound %d): no dedupe timer left for the rest", st.TxWrites())
	}
	if err := timer.Advance(ctx, h.clock, h.sweep, time.Second); err != nil {
		t.Fatalf("the dedupe timers: %v", err)
	}
	var entries []nextup.Entry
	var msgs []nextup.Message
	if err := st.Read(ctx, func(tx nextup.Tx) error {
		for _, id := range ids {
			e, err := tx.EntryGet(ctx, id)
			if err != nil {
				return err
			}
			entries = append(entries, e)
		}
		var err error
		msgs, err = tx.MessageList(ctx, nextup.MessageFilter{BusinessID: biz.ID, To: "ann@example.com"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	left, told := 0, map[string]int{}
	for _, e := range entries {
		switch {
		case e.ID == first && e.State != nextup.EntryBooked:
			t.Errorf("the booked entry is %s", e.State)
		case e.ID != first && e.State != nextup.EntryLeft:
			t.Errorf("entry %s (%s) is %s, want withdrawn", e.ID, e.Service, e.State)
		case e.ID != first:
			left++
		}
	}
	for _, m := range msgs {
		if m.Kind == waitlist.MessageDeduped {
			told[m.EntryID]++
		}
	}
	if left != lists-1 || len(told) != lists-1 {
		t.Fatalf("%d of %d entries withdrawn, %d told (%v)", left, lists-1, len(told), told)
	}
	for id, n := range told {
		if n != 1 {
			t.Errorf("entry %s told %d times", id, n)
		}
	}
}
