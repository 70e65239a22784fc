package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func timerKey(t nextup.Timer) string { return t.Key }

// timer returns an offer-expiry timer due at now+due.
func (b *bundle) timer(businessID string, due time.Duration, mods ...func(*nextup.Timer)) nextup.Timer {
	subject := b.id("off")
	tm := nextup.Timer{
		BusinessID: businessID,
		Kind:       nextup.TimerOfferExpire,
		SubjectID:  subject,
		Key:        nextup.TimerOfferExpire + ":" + subject,
		DueAt:      b.at(due),
		CreatedAt:  b.now,
	}
	for _, m := range mods {
		m(&tm)
	}
	return tm
}

func (b *bundle) schedule(ts ...nextup.Timer) {
	b.t.Helper()
	b.tx(func(tx nextup.Tx) error {
		for _, tm := range ts {
			if err := tx.TimerSchedule(b.ctx, tm); err != nil {
				return fmt.Errorf("TimerSchedule(%s): %w", tm.Key, err)
			}
		}
		return nil
	})
}

func (b *bundle) claimTimers(now time.Time, lease time.Duration, owner string, limit int) []nextup.Timer {
	b.t.Helper()
	var got []nextup.Timer
	b.tx(func(tx nextup.Tx) error {
		var err error
		got, err = tx.TimerClaimDue(b.ctx, now, lease, owner, limit)
		return err
	})
	return got
}

func (b *bundle) timerDone(id int64, claimedUntil, at time.Time) error {
	return b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.TimerDone(b.ctx, id, claimedUntil, at) })
}

// timerByKey returns the pending timer with this key.
func (b *bundle) timerByKey(key string) (nextup.Timer, bool) {
	b.t.Helper()
	for _, tm := range b.timers(nextup.TimerFilter{}) {
		if tm.Key == key && tm.DoneAt == nil {
			return tm, true
		}
	}
	return nextup.Timer{}, false
}

func testTimerRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	expire := b.timer(biz.ID, 10*time.Minute)
	// Housekeeping belongs to no business.
	house := b.timer("", 5*time.Minute, func(tm *nextup.Timer) {
		tm.Kind, tm.SubjectID, tm.Key = nextup.TimerHousekeeping, "", "housekeeping:2031-03-10"
		tm.CreatedAt = b.at(-24 * time.Hour)
	})
	b.schedule(expire, house)
	list := b.timers(nextup.TimerFilter{})
	if len(list) != 2 {
		t.Fatalf("TimerList: %d timers %v, want 2", len(list), ids(list, timerKey))
	}
	want := []nextup.Timer{house, expire} // soonest due first
	for i := range want {
		if list[i].ID == 0 {
			t.Errorf("timer %s has ID 0; the store assigns ids", list[i].Key)
		}
		want[i].ID = list[i].ID
	}
	if list[0].ID == list[1].ID {
		t.Errorf("two timers with ID %d", list[0].ID)
	}
	checkEqual(t, "TimerList", want, list)

	lease := 30 * time.Second
	now := b.at(time.Hour)
	claimed := b.claimTimers(now, lease, "worker-1", 10)
	for i := range want {
		want[i].ClaimedUntil = ptr(now.Add(lease))
		want[i].ClaimedBy = "worker-1"
		want[i].Attempts = 1
	}
	checkEqual(t, "TimerClaimDue", want, claimed)
	checkEqual(t, "TimerList after the claim", want, b.timers(nextup.TimerFilter{}))

	for i, tm := range want {
		at := now.Add(time.Duration(i+1) * time.Second)
		wantOK(t, b.timerDone(tm.ID, *tm.ClaimedUntil, at), "TimerDone(%s)", tm.Key)
		want[i].DoneAt = &at
	}
	list = b.timers(nextup.TimerFilter{})
	for i := range list {
		// Whether the lease is cleared when done is the backend's business.
		list[i].ClaimedUntil, list[i].ClaimedBy = want[i].ClaimedUntil, want[i].ClaimedBy
	}
	checkEqual(t, "TimerList after TimerDone", want, list)
}

func testTimerScheduleUpsert(t *testing.T, b *bundle) {
	biz := b.business()
	tm := b.timer(biz.ID, 10*time.Minute)
	other := b.timer(biz.ID, 7*time.Minute)
	b.schedule(tm, other)
	first, ok := b.timerByKey(tm.Key)
	if !ok {
		t.Fatalf("timer %s not listed after TimerSchedule", tm.Key)
	}
	for _, due := range []time.Duration{5 * time.Minute, 20 * time.Minute, 20 * time.Minute} {
		moved := tm
		moved.DueAt = b.at(due)
		b.schedule(moved)
		pending := b.timers(nextup.TimerFilter{PendingOnly: true})
		n := 0
		for _, p := range pending {
			if p.Key != tm.Key {
				continue
			}
			n++
			if p.ID != first.ID {
				t.Errorf("TimerSchedule of an existing key made timer %d, want timer %d moved", p.ID, first.ID)
			}
			if !p.DueAt.Equal(moved.DueAt) {
				t.Errorf("TimerSchedule(%s, due now+%s): DueAt %s", tm.Key, due, p.DueAt.Format(time.RFC3339Nano))
			}
		}
		if n != 1 {
			t.Errorf("after TimerSchedule(now+%s) again: %d pending timers with key %s, want 1", due, n, tm.Key)
		}
	}
	if o, ok := b.timerByKey(other.Key); !ok || !o.DueAt.Equal(other.DueAt) {
		t.Errorf("timer %s with another key was changed: %+v", other.Key, o)
	}

	// Once a timer is done, the same key schedules a new one.
	now := b.at(time.Hour)
	for _, c := range b.claimTimers(now, time.Minute, "w", 10) {
		wantOK(t, b.timerDone(c.ID, *c.ClaimedUntil, now), "TimerDone")
	}
	again := tm
	again.DueAt = b.at(2 * time.Hour)
	b.schedule(again)
	p, ok := b.timerByKey(tm.Key)
	if !ok {
		t.Fatalf("TimerSchedule of a key whose timer is done: no pending timer")
	}
	if p.ID == first.ID || !p.DueAt.Equal(again.DueAt) {
		t.Errorf("TimerSchedule of a key whose timer is done: got timer %d due %s, want a new timer due %s",
			p.ID, p.DueAt.Format(time.RFC3339Nano), again.DueAt.Format(time.RFC3339Nano))
	}
	if n := len(b.timers(nextup.TimerFilter{})); n != 3 {
		t.Errorf("TimerList: %d timers, want 3 (two done, one pending)", n)
	}
}

func testTimerCancel(t *testing.T, b *bundle) {
	biz := b.business()
	gone, kept, done := b.timer(biz.ID, time.Minute), b.timer(biz.ID, 2*time.Minute), b.timer(biz.ID, -time.Minute)
	b.schedule(gone, kept, done)
	for _, c := range b.claimTimers(b.now, time.Minute, "w", 10) {
		wantOK(t, b.timerDone(c.ID, *c.ClaimedUntil, b.now), "TimerDone")
	}
	for _, key := range []string{gone.Key, gone.Key, "no-such-key", done.Key} {
		b.tx(func(tx nextup.Tx) error {
			wantOK(t, tx.TimerCancel(b.ctx, key), "TimerCancel(%s)", key)
			return nil
		})
	}
	pending := b.timers(nextup.TimerFilter{PendingOnly: true})
	if keys := ids(pending, timerKey); !sameStrings(keys, []string{kept.Key}) {
		t.Errorf("pending timers after TimerCancel: %v, want [%s]", keys, kept.Key)
	}
	all := b.timers(nextup.TimerFilter{})
	if keys := ids(all, timerKey); !sameStrings(keys, []string{done.Key, kept.Key}) {
		t.Errorf("all timers after TimerCancel: %v, want [%s %s] (a done timer is not pending and stays)", keys, done.Key, kept.Key)
	}
	if c := b.claimTimers(b.at(time.Hour), time.Minute, "w", 10); !sameStrings(ids(c, timerKey), []string{kept.Key}) {
		t.Errorf("TimerClaimDue after TimerCancel: %v, want [%s]", ids(c, timerKey), kept.Key)
	}
}

func testTimerClaimDue(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	a := b.timer(biz.ID, -3*time.Minute)
	bb := b.timer(other.ID, -time.Minute)
	c := b.timer(biz.ID, 0)
	d := b.timer(biz.ID, time.Minute)
	// Scheduled out of order.
	b.schedule(d, bb, c, a)
	lease := time.Minute
	got := b.claimTimers(b.now, lease, "w1", 10)
	if keys, want := ids(got, timerKey), ids([]nextup.Timer{a, bb, c}, timerKey); !sameStrings(keys, want) {
		t.Fatalf("TimerClaimDue(now): %v, want %v (due only, oldest due first)", keys, want)
	}
	for _, tm := range got {
		if tm.ClaimedBy != "w1" || tm.ClaimedUntil == nil || !tm.ClaimedUntil.Equal(b.now.Add(lease)) || tm.Attempts != 1 || tm.DoneAt != nil {
			t.Errorf("claimed timer %s: ClaimedBy=%q ClaimedUntil=%s Attempts=%d DoneAt=%s; want w1, now+1m, 1, nil",
				tm.Key, tm.ClaimedBy, fmtTimePtr(tm.ClaimedUntil), tm.Attempts, fmtTimePtr(tm.DoneAt))
		}
	}
	if got := b.claimTimers(b.at(30*time.Second), lease, "w2", 10); len(got) != 0 {
		t.Errorf("TimerClaimDue while the leases hold: %v, want none", ids(got, timerKey))
	}
	// All four are due and unleased at now+2m: limit 2 takes the oldest two.
	at := b.at(2 * time.Minute)
	first := b.claimTimers(at, lease, "w2", 2)
	second := b.claimTimers(at, lease, "w3", 10)
	if keys, want := ids(first, timerKey), ids([]nextup.Timer{a, bb}, timerKey); !sameStrings(keys, want) {
		t.Errorf("TimerClaimDue(limit 2): %v, want %v", keys, want)
	}
	if keys, want := ids(second, timerKey), ids([]nextup.Timer{c, d}, timerKey); !sameStrings(keys, want) {
		t.Errorf("TimerClaimDue after a limited claim: %v, want %v", keys, want)
	}
}

// testTimerDueTwice: a worker claims a timer and dies; once its lease lapses
// another worker claims it again, and only the later claim can finish it.
func testTimerDueTwice(t *testing.T, b *bundle) {
	biz := b.business()
	tm := b.timer(biz.ID, 0)
	b.schedule(tm)
	lease := time.Minute
	c1 := b.claimTimers(b.now, lease, "w1", 10)
	if len(c1) != 1 {
		t.Fatalf("first claim: %d timers, want 1", len(c1))
	}
	if c := b.claimTimers(b.at(lease-time.Microsecond), lease, "w2", 10); len(c) != 0 {
		t.Errorf("claim 1µs before the lease lapses: %v, want none", ids(c, timerKey))
	}
	later := b.at(lease + time.Microsecond)
	c2 := b.claimTimers(later, lease, "w2", 10)
	if len(c2) != 1 {
		t.Fatalf("claim after the lease lapsed: %d timers, want the same timer again", len(c2))
	}
	if c2[0].ID != c1[0].ID || c2[0].ClaimedBy != "w2" || c2[0].Attempts != 2 || !c2[0].ClaimedUntil.Equal(later.Add(lease)) {
		t.Errorf("second claim: ID=%d ClaimedBy=%q Attempts=%d ClaimedUntil=%s; want ID=%d, w2, 2, %s",
			c2[0].ID, c2[0].ClaimedBy, c2[0].Attempts, fmtTimePtr(c2[0].ClaimedUntil), c1[0].ID, later.Add(lease).Format(time.RFC3339Nano))
	}
	// w1 wakes up and tries to finish under its lapsed lease.
	wantErr(t, b.timerDone(c1[0].ID, *c1[0].ClaimedUntil, later), nextup.ErrConflict, "TimerDone under a lapsed, superseded lease")
	if p, ok := b.timerByKey(tm.Key); !ok || p.DoneAt != nil {
		t.Errorf("timer after a refused TimerDone: pending=%v DoneAt=%s, want still pending", ok, fmtTimePtr(p.DoneAt))
	}
	wantOK(t, b.timerDone(c2[0].ID, *c2[0].ClaimedUntil, later), "TimerDone under the live lease")
	if c := b.claimTimers(b.at(time.Hour), lease, "w3", 10); len(c) != 0 {
		t.Errorf("claim after TimerDone: %v, want none", ids(c, timerKey))
	}
}

func testTimerDone(t *testing.T, b *bundle) {
	biz := b.business()
	tm, never := b.timer(biz.ID, 0), b.timer(biz.ID, time.Hour)
	b.schedule(tm, never)
	c := b.claimTimers(b.now, time.Minute, "w", 10)
	if len(c) != 1 {
		t.Fatalf("claim: %d timers, want 1", len(c))
	}
	cu := *c[0].ClaimedUntil
	wantErr(t, b.timerDone(c[0].ID, cu.Add(time.Microsecond), b.now), nextup.ErrConflict, "TimerDone with another lease")
	nv, _ := b.timerByKey(never.Key)
	wantErr(t, b.timerDone(nv.ID, cu, b.now), nextup.ErrConflict, "TimerDone of a timer never claimed")
	if err := b.timerDone(1<<40, cu, b.now); !errors.Is(err, nextup.ErrNotFound) && !errors.Is(err, nextup.ErrConflict) {
		t.Errorf("TimerDone(missing): got %v, want ErrNotFound or ErrConflict", err)
	}
	if p, ok := b.timerByKey(tm.Key); !ok || p.DoneAt != nil {
		t.Errorf("timer after refused TimerDone calls: pending=%v DoneAt=%s, want still pending", ok, fmtTimePtr(p.DoneAt))
	}
	at := b.at(time.Second)
	wantOK(t, b.timerDone(c[0].ID, cu, at), "TimerDone under the held lease")
	for _, p := range b.timers(nextup.TimerFilter{}) {
		if p.Key == tm.Key && (p.DoneAt == nil || !p.DoneAt.Equal(at)) {
			t.Errorf("done timer: DoneAt=%s, want %s", fmtTimePtr(p.DoneAt), at.Format(time.RFC3339Nano))
		}
	}
	if keys := ids(b.timers(nextup.TimerFilter{PendingOnly: true}), timerKey); !sameStrings(keys, []string{never.Key}) {
		t.Errorf("pending timers: %v, want [%s]", keys, never.Key)
	}
}

func (b *bundle) timerRenew(id int64, claimedUntil, until time.Time) error {
	return b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.TimerRenew(b.ctx, id, claimedUntil, until) })
}

// testTimerRenew: a renewed lease keeps other claimers off past the lease
// the timer was claimed with, TimerDone still names the claim by that
// first lease, and only the claim that holds the timer may renew it.
func testTimerRenew(t *testing.T, b *bundle) {
	biz := b.business()
	tm, other := b.timer(biz.ID, 0), b.timer(biz.ID, 0)
	b.schedule(tm, other)
	lease := 5 * time.Second
	c := b.claimTimers(b.now, lease, "w1", 1)
	if len(c) != 1 {
		t.Fatalf("claim: %d timers, want 1", len(c))
	}
	claim := *c[0].ClaimedUntil
	renewed := b.at(4*time.Second + lease)
	wantOK(t, b.timerRenew(c[0].ID, claim, renewed), "TimerRenew under the held lease")
	if p, ok := b.timerByKey(c[0].Key); !ok || p.RenewedUntil == nil || !p.RenewedUntil.Equal(renewed) || !p.ClaimedUntil.Equal(claim) {
		t.Errorf("renewed timer: ClaimedUntil=%s RenewedUntil=%s, want %s and %s",
			fmtTimePtr(p.ClaimedUntil), fmtTimePtr(p.RenewedUntil), claim.Format(time.RFC3339Nano), renewed.Format(time.RFC3339Nano))
	}
	// Past the first lease, before the renewed one ends: the other timer
	// is free, the renewed one is not.
	mid := b.at(lease + time.Second)
	got := b.claimTimers(mid, lease, "w2", 10)
	if keys := ids(got, timerKey); !sameStrings(keys, []string{keyOther(c[0].Key, tm, other)}) {
		t.Errorf("claim after the first lease, before the renewed one ends: %v, want only the timer not renewed", keys)
	}
	wantErr(t, b.timerRenew(c[0].ID, claim.Add(time.Microsecond), renewed), nextup.ErrConflict, "TimerRenew under another lease")
	if err := b.timerRenew(1<<40, claim, renewed); !errors.Is(err, nextup.ErrNotFound) && !errors.Is(err, nextup.ErrConflict) {
		t.Errorf("TimerRenew(missing): got %v, want ErrNotFound or ErrConflict", err)
	}
	// Once the renewed lease lapses another claimer takes it; the old
	// claim can neither renew nor finish it any more.
	after := renewed.Add(time.Microsecond)
	c2 := b.claimTimers(after, lease, "w3", 10)
	if len(c2) != 1 || c2[0].ID != c[0].ID || c2[0].RenewedUntil != nil {
		t.Fatalf("claim after the renewed lease lapsed: %+v, want the renewed timer, its renewal cleared", c2)
	}
	wantErr(t, b.timerRenew(c[0].ID, claim, after.Add(lease)), nextup.ErrConflict, "TimerRenew by a superseded claim")
	wantErr(t, b.timerDone(c[0].ID, claim, after), nextup.ErrConflict, "TimerDone by a superseded claim")
	wantOK(t, b.timerDone(c2[0].ID, *c2[0].ClaimedUntil, after), "TimerDone by the new claim")
	wantErr(t, b.timerRenew(c2[0].ID, *c2[0].ClaimedUntil, after.Add(lease)), nextup.ErrConflict, "TimerRenew of a done timer")
	// Moving a timer drops its renewal with its lease.
	freed := mid.Add(lease) // w2's lease of the other timer ends
	c3 := b.claimTimers(freed, lease, "w4", 10)
	if len(c3) != 1 {
		t.Fatalf("claim of the remaining timer: %d, want 1", len(c3))
	}
	wantOK(t, b.timerRenew(c3[0].ID, *c3[0].ClaimedUntil, freed.Add(time.Hour)), "TimerRenew")
	moved := c3[0]
	moved.DueAt = freed
	b.schedule(moved)
	if p, ok := b.timerByKey(moved.Key); !ok || p.ClaimedUntil != nil || p.RenewedUntil != nil {
		t.Errorf("moved timer: ClaimedUntil=%s RenewedUntil=%s, want both cleared", fmtTimePtr(p.ClaimedUntil), fmtTimePtr(p.RenewedUntil))
	}
}

// keyOther is the key of whichever of a and b does not have key.
func keyOther(key string, a, b nextup.Timer) string {
	if a.Key == key {
		return b.Key
	}
	return a.Key
}

func testTimerNextDue(t *testing.T, b *bundle) {
	biz := b.business()
	next := func() (time.Time, error) {
		var due time.Time
		err := b.s.Read(b.ctx, func(tx nextup.Tx) error {
			var err error
			due, err = tx.TimerNextDue(b.ctx)
			return err
		})
		return due, err
	}
	_, err := next()
	wantErr(t, err, nextup.ErrNotFound, "TimerNextDue with no timers")
	soon, late := b.timer(biz.ID, 2*time.Minute), b.timer(biz.ID, 5*time.Minute)
	b.schedule(late, soon)
	if due, err := next(); wantOK(t, err, "TimerNextDue") && !due.Equal(soon.DueAt) {
		t.Errorf("TimerNextDue = %s, want %s", due.Format(time.RFC3339Nano), soon.DueAt.Format(time.RFC3339Nano))
	}
	b.tx(func(tx nextup.Tx) error {
		c, err := tx.TimerClaimDue(b.ctx, soon.DueAt, time.Minute, "w", 10)
		if err != nil || len(c) != 1 {
			return fmt.Errorf("TimerClaimDue: %v, %d timers", err, len(c))
		}
		return tx.TimerDone(b.ctx, c[0].ID, *c[0].ClaimedUntil, soon.DueAt)
	})
	if due, err := next(); wantOK(t, err, "TimerNextDue") && !due.Equal(late.DueAt) {
		t.Errorf("TimerNextDue after the first is done = %s, want %s", due.Format(time.RFC3339Nano), late.DueAt.Format(time.RFC3339Nano))
	}
	b.tx(func(tx nextup.Tx) error { return tx.TimerCancel(b.ctx, late.Key) })
	_, err = next()
	wantErr(t, err, nextup.ErrNotFound, "TimerNextDue with only done and cancelled timers")
}

func testTimerList(t *testing.T, b *bundle) {
	a, other := b.business(), b.business()
	t1 := b.timer(a.ID, 3*time.Minute, func(tm *nextup.Timer) { tm.SubjectID = "off_1"; tm.Key = "offer_expire:off_1" })
	t2 := b.timer(a.ID, time.Minute, func(tm *nextup.Timer) {
		tm.Kind, tm.SubjectID, tm.Key = nextup.TimerOfferRelease, "off_1", "offer_release:off_1"
	})
	t3 := b.timer(a.ID, 2*time.Minute)
	t4 := b.timer(other.ID, 0)
	t5 := b.timer(a.ID, -time.Hour)
	b.schedule(t1, t2, t3, t4, t5)
	for _, c := range b.claimTimers(b.at(-time.Minute), time.Minute, "w", 10) {
		wantOK(t, b.timerDone(c.ID, *c.ClaimedUntil, b.now), "TimerDone")
	}
	cases := []struct {
		name string
		f    nextup.TimerFilter
		want []nextup.Timer
	}{
		{"all", nextup.TimerFilter{}, []nextup.Timer{t5, t4, t2, t3, t1}},
		{"business", nextup.TimerFilter{BusinessID: a.ID}, []nextup.Timer{t5, t2, t3, t1}},
		{"business, pending", nextup.TimerFilter{BusinessID: a.ID, PendingOnly: true}, []nextup.Timer{t2, t3, t1}},
		{"kind", nextup.TimerFilter{BusinessID: a.ID, Kind: nextup.TimerOfferExpire}, []nextup.Timer{t5, t3, t1}},
		{"subject", nextup.TimerFilter{BusinessID: a.ID, SubjectID: "off_1"}, []nextup.Timer{t2, t1}},
		{"kind and subject", nextup.TimerFilter{Kind: nextup.TimerOfferRelease, SubjectID: "off_1"}, []nextup.Timer{t2}},
		{"limit", nextup.TimerFilter{PendingOnly: true, Limit: 2}, []nextup.Timer{t4, t2}},
	}
	for _, c := range cases {
		got := b.timers(c.f)
		if keys, want := ids(got, timerKey), ids(c.want, timerKey); !sameStrings(keys, want) {
			t.Errorf("TimerList(%s): %v, want %v (soonest due first)", c.name, keys, want)
		}
	}
}
