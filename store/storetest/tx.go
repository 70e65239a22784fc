package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// patience is how long the suite waits for something that should happen at
// once before it calls it stuck.
const patience = 10 * time.Second

func testPing(t *testing.T, b *bundle) {
	wantOK(t, b.s.Ping(b.ctx), "Ping")
}

func testReadSeesCommitted(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID)
	b.read(func(tx nextup.Tx) error {
		got, err := tx.BusinessGet(b.ctx, biz.ID)
		if wantOK(t, err, "BusinessGet after commit") {
			checkEqual(t, "business", biz, got)
		}
		gs, err := tx.SlotGet(b.ctx, s.ID)
		if wantOK(t, err, "SlotGet after commit") {
			checkEqual(t, "slot", s, gs)
		}
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Booked: 1})
		return err
	})
	b.seats(s.ID, 1, 0)
}

// testReadIsolation: a Read while a write transaction is open neither sees
// its uncommitted rows nor waits for it.
func testReadIsolation(t *testing.T, b *bundle) {
	written := make(chan struct{})
	release := make(chan struct{})
	writerDone := make(chan error, 1)
	bizID := "biz_uncommitted"
	go func() {
		writerDone <- b.s.InTx(b.ctx, func(tx nextup.Tx) error {
			biz := nextup.Business{ID: bizID, Name: "Uncommitted", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: b.now}
			err := tx.BusinessCreate(b.ctx, biz)
			close(written)
			if err != nil {
				return err
			}
			select {
			case <-release:
			case <-time.After(3 * patience):
				return errors.New("writer: never released")
			}
			return nil
		})
	}()
	select {
	case <-written:
	case err := <-writerDone:
		t.Fatalf("InTx creating a business: %v", err)
	case <-time.After(patience):
		t.Fatal("InTx did not start within 10s")
	}

	readDone := make(chan error, 1)
	go func() {
		readDone <- b.s.Read(b.ctx, func(tx nextup.Tx) error {
			_, err := tx.BusinessGet(b.ctx, bizID)
			if !errors.Is(err, nextup.ErrNotFound) {
				return fmt.Errorf("BusinessGet of a row another transaction has not committed yet: got error %v, want ErrNotFound", err)
			}
			return nil
		})
	}()
	select {
	case err := <-readDone:
		wantOK(t, err, "Read during an open InTx")
		close(release)
	case <-time.After(patience):
		t.Errorf("Read waited more than 10s behind an open InTx; reads must run on a snapshot beside the writer")
		close(release)
		<-readDone
	}
	if err := <-writerDone; err != nil {
		t.Fatalf("writer InTx: %v", err)
	}
	b.read(func(tx nextup.Tx) error {
		_, err := tx.BusinessGet(b.ctx, bizID)
		wantOK(t, err, "BusinessGet after the writer committed")
		return nil
	})
}

// testReadSnapshot: one Read sees one state, even when a write commits
// while it runs, and does not hold that write up.
func testReadSnapshot(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(5))
	var after nextup.Slot
	b.read(func(tx nextup.Tx) error {
		before, err := tx.SlotGet(b.ctx, s.ID)
		if err != nil {
			return fmt.Errorf("SlotGet: %w", err)
		}
		writerDone := make(chan error, 1)
		go func() {
			writerDone <- b.s.InTx(b.ctx, func(tx nextup.Tx) error {
				_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Booked: 2})
				return err
			})
		}()
		select {
		case err := <-writerDone:
			if err != nil {
				return fmt.Errorf("InTx committing during a Read: %w", err)
			}
		case <-time.After(patience):
			t.Errorf("InTx waited more than 10s behind an open Read; writes must not wait for readers")
			// Let the writer finish once this Read is over.
			t.Cleanup(func() { <-writerDone })
			return nil
		}
		again, err := tx.SlotGet(b.ctx, s.ID)
		if err != nil {
			return fmt.Errorf("SlotGet again: %w", err)
		}
		if again.BookedSeats != before.BookedSeats {
			t.Errorf("one Read saw booked=%d, then booked=%d after another transaction committed; Read must be one consistent snapshot",
				before.BookedSeats, again.BookedSeats)
		}
		return nil
	})
	after = b.getSlot(s.ID)
	if after.BookedSeats != 2 {
		t.Errorf("after the write: booked=%d, want 2", after.BookedSeats)
	}
}

// writeWorld writes one row of most kinds through tx, for the rollback and
// reopen tests; it returns what it wrote.
type world struct {
	biz     nextup.Business
	slot    nextup.Slot
	entry   nextup.Entry
	offer   nextup.Offer
	booking nextup.Booking
	hb      nextup.HandBack
	msg     nextup.Message
	timer   nextup.Timer
	audit   nextup.AuditEvent
	idem    nextup.IdempotencyRecord
	sup     nextup.Suppression
	staff   nextup.Staff
	session nextup.Session
	reset   nextup.PasswordReset
}

func (b *bundle) newWorld(tag string) world {
	start := b.at(48 * time.Hour)
	w := world{}
	w.biz = nextup.Business{ID: "biz_" + tag, Name: "World " + tag, Timezone: "America/New_York",
		Rules: nextup.DefaultRules(), APIKeyHash: nextup.HashToken("key-" + tag), CreatedAt: b.now}
	w.slot = nextup.Slot{ID: "slot_" + tag, BusinessID: w.biz.ID, Kind: nextup.KindSlot, Service: "cut", Staff: "ann",
		StartsAt: start, EndsAt: start.Add(time.Hour), Capacity: 2, Seating: nextup.SeatingShared, MinParty: 1, CreatedAt: b.now}
	w.entry = nextup.Entry{ID: "ent_" + tag, BusinessID: w.biz.ID, Name: "Ann", Email: "ann-" + tag + "@example.com",
		Service: "cut", PartySize: 1, JoinedAt: b.now, State: nextup.EntryWaiting, StatusHash: nextup.HashToken("st-" + tag),
		Source: "form", UpdatedAt: b.now}
	w.offer = nextup.Offer{ID: "off_" + tag, BusinessID: w.biz.ID, SlotID: w.slot.ID, EntryID: w.entry.ID,
		ContactKey: w.entry.ContactKey(), Seats: 1, PartySize: 1, State: nextup.OfferOffered, Channel: nextup.ChannelSMS,
		TokenHash: nextup.HashToken("tok-" + tag), RuleVersion: 1, CreatedAt: b.now, SendAt: b.now, SentAt: ptr(b.now),
		ExpiresAt: b.at(10 * time.Minute)}
	w.booking = nextup.Booking{ID: "bkg_" + tag, BusinessID: w.biz.ID, SlotID: w.slot.ID, Name: "Walk-in", Seats: 1,
		State: nextup.BookingBooked, TokenHash: nextup.HashToken("cal-" + tag), CreatedAt: b.now}
	w.hb = nextup.HandBack{ID: "hb_" + tag, BusinessID: w.biz.ID, SlotID: w.slot.ID, Reason: nextup.HandBackTryCap,
		Note: "tried 3", State: nextup.HandBackOpen, CreatedAt: b.now}
	w.msg = nextup.Message{ID: "msg_" + tag, BusinessID: w.biz.ID, Kind: nextup.MessageOffer, Channel: nextup.ChannelSMS,
		To: "+15550100", Body: "A seat is free", ClaimURL: "https://x.test/c/" + tag, OfferID: w.offer.ID, EntryID: w.entry.ID,
		State: nextup.MessageQueued, NotBefore: b.now, NextAttemptAt: b.now, CreatedAt: b.now}
	w.timer = nextup.Timer{BusinessID: w.biz.ID, Kind: nextup.TimerOfferExpire, SubjectID: w.offer.ID,
		Key: "offer_expire:" + w.offer.ID, DueAt: w.offer.ExpiresAt, CreatedAt: b.now}
	w.audit = nextup.AuditEvent{BusinessID: w.biz.ID, At: b.now, Actor: nextup.ActorSystem, SubjectType: nextup.SubjectOffer,
		SubjectID: w.offer.ID, SlotID: w.slot.ID, From: "", To: string(nextup.OfferOffered), Reason: "make_offer", RuleVersion: 1,
		Detail: map[string]any{"entry_id": w.entry.ID}}
	w.idem = nextup.IdempotencyRecord{Scope: w.biz.ID, Key: "key-" + tag, Fingerprint: "fp", CreatedAt: b.now,
		ExpiresAt: b.at(24 * time.Hour)}
	w.sup = nextup.Suppression{BusinessID: w.biz.ID, Channel: nextup.ChannelSMS, Address: "+15550199", Reason: "STOP", At: b.now}
	w.staff = nextup.Staff{ID: "stf_" + tag, BusinessID: w.biz.ID, Email: "owner-" + tag + "@example.com", Name: "Owner",
		PasswordHash: "$2a$10$" + tag, FailedSignIns: 2, CreatedAt: b.now}
	w.session = nextup.Session{IDHash: nextup.HashToken("ses-" + tag), StaffID: w.staff.ID, BusinessID: w.biz.ID,
		CreatedAt: b.now, ExpiresAt: b.at(24 * time.Hour)}
	w.reset = nextup.PasswordReset{TokenHash: nextup.HashToken("rst-" + tag), StaffID: w.staff.ID, CreatedAt: b.now,
		ExpiresAt: b.at(time.Hour)}
	return w
}

func (w *world) write(ctx context.Context, tx nextup.Tx) error {
	if err := tx.BusinessCreate(ctx, w.biz); err != nil {
		return fmt.Errorf("BusinessCreate: %w", err)
	}
	if err := tx.SlotCreate(ctx, w.slot); err != nil {
		return fmt.Errorf("SlotCreate: %w", err)
	}
	e, err := tx.EntryCreate(ctx, w.entry)
	if err != nil {
		return fmt.Errorf("EntryCreate: %w", err)
	}
	w.entry = e
	if err := tx.OfferCreate(ctx, w.offer); err != nil {
		return fmt.Errorf("OfferCreate: %w", err)
	}
	if err := tx.EntrySetState(ctx, w.entry.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryOffered, w.offer.CreatedAt); err != nil {
		return fmt.Errorf("EntrySetState: %w", err)
	}
	w.entry.State, w.entry.UpdatedAt = nextup.EntryOffered, w.offer.CreatedAt
	if err := tx.BookingCreate(ctx, w.booking); err != nil {
		return fmt.Errorf("BookingCreate: %w", err)
	}
	s, err := tx.SlotSeats(ctx, w.slot.ID, nextup.SeatDelta{Booked: 1, Held: 1})
	if err != nil {
		return fmt.Errorf("SlotSeats: %w", err)
	}
	w.slot = s
	if err := tx.HandBackCreate(ctx, w.hb); err != nil {
		return fmt.Errorf("HandBackCreate: %w", err)
	}
	if err := tx.MessageCreate(ctx, w.msg); err != nil {
		return fmt.Errorf("MessageCreate: %w", err)
	}
	if err := tx.TimerSchedule(ctx, w.timer); err != nil {
		return fmt.Errorf("TimerSchedule: %w", err)
	}
	if err := tx.AuditAppend(ctx, w.audit); err != nil {
		return fmt.Errorf("AuditAppend: %w", err)
	}
	if _, err := tx.IdempotencyStart(ctx, w.idem); err != nil {
		return fmt.Errorf("IdempotencyStart: %w", err)
	}
	if err := tx.SuppressionAdd(ctx, w.sup); err != nil {
		return fmt.Errorf("SuppressionAdd: %w", err)
	}
	if err := tx.StaffCreate(ctx, w.staff); err != nil {
		return fmt.Errorf("StaffCreate: %w", err)
	}
	if err := tx.SessionCreate(ctx, w.session); err != nil {
		return fmt.Errorf("SessionCreate: %w", err)
	}
	if err := tx.PasswordResetCreate(ctx, w.reset); err != nil {
		return fmt.Errorf("PasswordResetCreate: %w", err)
	}
	return nil
}

// check reads every row of w back through tx. With present false it
// expects none of them to be there.
func (w *world) check(t *testing.T, ctx context.Context, tx nextup.Tx, present bool) {
	t.Helper()
	type lookup struct {
		what string
		want any
		get  func() (any, error)
	}
	lookups := []lookup{
		{"business", w.biz, func() (any, error) { return tx.BusinessGet(ctx, w.biz.ID) }},
		{"slot", w.slot, func() (any, error) { return tx.SlotGet(ctx, w.slot.ID) }},
		{"entry", w.entry, func() (any, error) { return tx.EntryGet(ctx, w.entry.ID) }},
		{"offer", w.offer, func() (any, error) { return tx.OfferGet(ctx, w.offer.ID) }},
		{"booking", w.booking, func() (any, error) { return tx.BookingGet(ctx, w.booking.ID) }},
		{"hand-back", w.hb, func() (any, error) { return tx.HandBackGet(ctx, w.hb.ID) }},
		{"message", w.msg, func() (any, error) { return tx.MessageGet(ctx, w.msg.ID) }},
		{"staff", w.staff, func() (any, error) { return tx.StaffGet(ctx, w.staff.ID) }},
		{"session", w.session, func() (any, error) { return tx.SessionGet(ctx, w.session.IDHash) }},
	}
	for _, l := range lookups {
		got, err := l.get()
		if present {
			if wantOK(t, err, "get %s", l.what) {
				checkEqual(t, l.what, l.want, got)
			}
		} else {
			wantErr(t, err, nextup.ErrNotFound, "get %s written by a rolled-back transaction", l.what)
		}
	}
	timers, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: w.biz.ID})
	wantOK(t, err, "TimerList")
	audit, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: w.biz.ID})
	wantOK(t, err, "AuditList")
	sups, err := tx.SuppressionList(ctx, w.biz.ID, []string{w.sup.Address})
	wantOK(t, err, "SuppressionList")
	msgs, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: w.biz.ID})
	wantOK(t, err, "MessageList")
	if !present {
		if len(timers)+len(audit)+len(sups)+len(msgs) != 0 {
			t.Errorf("rolled-back transaction left %d timers, %d audit rows, %d suppressions, %d messages", len(timers), len(audit), len(sups), len(msgs))
		}
		return
	}
	if len(timers) != 1 {
		t.Errorf("TimerList: %d timers, want 1", len(timers))
	} else {
		want := w.timer
		want.ID = timers[0].ID
		checkEqual(t, "timer", want, timers[0])
	}
	if len(audit) != 1 {
		t.Errorf("AuditList: %d rows, want 1", len(audit))
	} else {
		want := w.audit
		want.ID = audit[0].ID
		checkEqual(t, "audit row", want, audit[0])
	}
	if len(sups) != 1 {
		t.Errorf("SuppressionList: %d rows, want 1", len(sups))
	} else {
		checkEqual(t, "suppression", w.sup, sups[0])
	}
}

func testRollbackOnError(t *testing.T, b *bundle) {
	w := b.newWorld("rollback")
	boom := errors.New("boom")
	err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
		if err := w.write(b.ctx, tx); err != nil {
			return err
		}
		// Inside the transaction its own writes are visible.
		if _, err := tx.EntryGet(b.ctx, w.entry.ID); err != nil {
			return fmt.Errorf("EntryGet of an entry this transaction wrote: %w", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx with fn returning %v: got %v, want an error wrapping fn's", boom, err)
	}
	b.read(func(tx nextup.Tx) error {
		w.check(t, b.ctx, tx, false)
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		if _, err := tx.IdempotencyStart(b.ctx, w.idem); err != nil {
			t.Errorf("idempotency record of a rolled-back transaction is still there: IdempotencyStart: %v", err)
		}
		_, err := tx.PasswordResetUse(b.ctx, w.reset.TokenHash, b.now)
		wantErr(t, err, nextup.ErrNotFound, "PasswordResetUse of a reset written by a rolled-back transaction")
		return nil
	})
}

func (b *bundle) readErr(fn func(tx nextup.Tx) error) error { return b.s.Read(b.ctx, fn) }

func testRollbackOnPanic(t *testing.T, b *bundle) {
	w := b.newWorld("panic")
	var recovered any
	var err error
	func() {
		defer func() { recovered = recover() }()
		err = b.s.InTx(b.ctx, func(tx nextup.Tx) error {
			if err := w.write(b.ctx, tx); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if recovered == nil && err == nil {
		t.Fatal("InTx with fn panicking returned nil and did not panic; want the panic passed on (or an error)")
	}
	if recovered != nil && recovered != "boom" {
		t.Errorf("InTx re-panicked with %v, want the original value %q", recovered, "boom")
	}
	check := func() {
		if err := b.readErr(func(tx nextup.Tx) error {
			w.check(t, b.ctx, tx, false)
			return nil
		}); err != nil {
			t.Errorf("Read after a panicking InTx: %v", err)
		}
	}
	check()
	// The store is still usable: the panic left no transaction open.
	ctx, cancel := context.WithTimeout(b.ctx, patience)
	defer cancel()
	err = b.s.InTx(ctx, func(tx nextup.Tx) error {
		return tx.BusinessCreate(ctx, nextup.Business{ID: "biz_after_panic", Name: "After", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: b.now})
	})
	if err != nil {
		t.Fatalf("InTx after a panicking InTx: %v (is the writer still held by the aborted transaction?)", err)
	}
	check()
}

// testConflictLeavesTxUsable: a conditional write that fails, or a lookup
// that finds nothing, leaves the transaction usable; the rest of it
// commits. (On PostgreSQL a failed statement aborts the transaction, so
// conditions belong in WHERE clauses, not in constraint violations.)
func testConflictLeavesTxUsable(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID)
	e := b.entry(biz.ID)
	o, _ := b.offer(s, e, func(o *nextup.Offer) { o.State = nextup.OfferDeclined; o.ResolvedAt = ptr(b.now) })
	staff := b.staff(biz.ID)
	expired := b.reset(staff, func(r *nextup.PasswordReset) { r.ExpiresAt = b.at(-time.Minute) })
	idem := nextup.IdempotencyRecord{Scope: biz.ID, Key: "k", Fingerprint: "f", CreatedAt: b.now, ExpiresAt: b.at(time.Hour)}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.IdempotencyStart(b.ctx, idem)
		return err
	})
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Held: 2})
		wantErr(t, err, nextup.ErrConflict, "SlotSeats(held +2) on capacity 1")
		_, err = tx.SlotResize(b.ctx, s.ID, -1)
		if err == nil {
			t.Errorf("SlotResize(-1): no error")
		}
		err = tx.EntrySetState(b.ctx, e.ID, []nextup.EntryState{nextup.EntryBooked}, nextup.EntryLeft, b.now)
		wantErr(t, err, nextup.ErrConflict, "EntrySetState from booked of a waiting entry")
		_, err = tx.OfferClaim(b.ctx, o.TokenHash, b.now)
		wantErr(t, err, nextup.ErrConflict, "OfferClaim of a declined offer")
		_, err = tx.OfferClaim(b.ctx, nextup.HashToken("nope"), b.now)
		wantErr(t, err, nextup.ErrNotFound, "OfferClaim with an unknown token")
		_, err = tx.OfferSetState(b.ctx, o.ID, []nextup.OfferState{nextup.OfferOffered}, nextup.OfferExpired, b.now, "x")
		wantErr(t, err, nextup.ErrConflict, "OfferSetState from offered of a declined offer")
		r := biz.Rules
		r.Version = 5
		wantErr(t, tx.BusinessRulesSet(b.ctx, biz.ID, r), nextup.ErrConflict, "BusinessRulesSet skipping versions")
		_, err = tx.IdempotencyStart(b.ctx, idem)
		wantErr(t, err, nextup.ErrConflict, "IdempotencyStart of an existing key")
		_, err = tx.SlotGet(b.ctx, "slot_missing")
		wantErr(t, err, nextup.ErrNotFound, "SlotGet of a missing slot")
		_, err = tx.EntryGet(b.ctx, "ent_missing")
		wantErr(t, err, nextup.ErrNotFound, "EntryGet of a missing entry")
		_, err = tx.TimerNextDue(b.ctx)
		wantErr(t, err, nextup.ErrNotFound, "TimerNextDue with no timers")
		dupStaff := nextup.Staff{ID: "stf_dup", BusinessID: biz.ID, Email: strings.ToUpper(staff.Email), CreatedAt: b.now}
		wantErr(t, tx.StaffCreate(b.ctx, dupStaff), nextup.ErrConflict, "StaffCreate with an email another account has")
		dupStaff.Email, dupStaff.BusinessID = "fresh@example.com", "biz_missing"
		wantErr(t, tx.StaffCreate(b.ctx, dupStaff), nextup.ErrNotFound, "StaffCreate for a missing business")
		_, err = tx.PasswordResetUse(b.ctx, expired.TokenHash, b.now)
		wantErr(t, err, nextup.ErrConflict, "PasswordResetUse of an expired reset")
		_, err = tx.PasswordResetUse(b.ctx, expired.TokenHash, b.now)
		wantErr(t, err, nextup.ErrNotFound, "PasswordResetUse of an expired reset, again")

		// After all that, the transaction still works and commits.
		if _, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Booked: 1}); err != nil {
			return fmt.Errorf("SlotSeats(booked +1) after failed writes in the same transaction: %w", err)
		}
		if err := tx.EntrySetState(b.ctx, e.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryBooked, b.now); err != nil {
			return fmt.Errorf("EntrySetState after failed writes in the same transaction: %w", err)
		}
		return nil
	})
	b.seats(s.ID, 1, 0)
	if got := b.getEntry(e.ID); got.State != nextup.EntryBooked {
		t.Errorf("entry state %q, want booked: the writes after the failed ones did not commit", got.State)
	}
	if got := b.getOffer(o.ID); got.State != nextup.OfferDeclined {
		t.Errorf("offer state %q, want declined (unchanged)", got.State)
	}
}

func testReopen(t *testing.T, b *bundle) {
	if b.h.Reopen == nil {
		t.Skip("storetest: Harness.Reopen is nil; this backend does not declare reopen support (use RunHarness with Reopen)")
	}
	w := b.newWorld("reopen")
	b.tx(func(tx nextup.Tx) error { return w.write(b.ctx, tx) })
	// Something that must not survive: a rolled-back write.
	_ = b.s.InTx(b.ctx, func(tx nextup.Tx) error {
		if err := tx.BusinessCreate(b.ctx, nextup.Business{ID: "biz_ghost", Name: "Ghost", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: b.now}); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	if err := b.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2 := b.h.Reopen(t, b.s)
	if s2 == nil {
		t.Fatal("Harness.Reopen returned a nil store")
	}
	b.s = s2
	wantOK(t, s2.Ping(b.ctx), "Ping after reopen")
	b.read(func(tx nextup.Tx) error {
		w.check(t, b.ctx, tx, true)
		_, err := tx.BusinessGet(b.ctx, "biz_ghost")
		wantErr(t, err, nextup.ErrNotFound, "business of a rolled-back transaction, after reopen")
		return nil
	})
	// The store goes on where it left off: sequences continue, conditional
	// writes still see the old rows.
	e2 := b.entry(w.biz.ID)
	if e2.Seq <= w.entry.Seq {
		t.Errorf("entry created after reopen has Seq %d, not above %d of the one before", e2.Seq, w.entry.Seq)
	}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, w.slot.ID, nextup.SeatDelta{Booked: 1})
		wantErr(t, err, nextup.ErrConflict, "SlotSeats(booked +1) on a full slot after reopen")
		_, err = tx.IdempotencyStart(b.ctx, w.idem)
		wantErr(t, err, nextup.ErrConflict, "IdempotencyStart of a key stored before reopen")
		o, err := tx.OfferClaim(b.ctx, w.offer.TokenHash, b.now)
		if wantOK(t, err, "OfferClaim after reopen") && o.ID != w.offer.ID {
			t.Errorf("OfferClaim after reopen claimed %s, want %s", o.ID, w.offer.ID)
		}
		dup := w.staff
		dup.ID, dup.Email = "stf_after_reopen", strings.ToUpper(w.staff.Email)
		wantErr(t, tx.StaffCreate(b.ctx, dup), nextup.ErrConflict, "StaffCreate with an email stored before reopen")
		r, err := tx.PasswordResetUse(b.ctx, w.reset.TokenHash, b.now)
		if wantOK(t, err, "PasswordResetUse after reopen") {
			checkEqual(t, "reset after reopen", w.reset, r)
		}
		return nil
	})
	var claimed []nextup.Timer
	b.tx(func(tx nextup.Tx) error {
		var err error
		claimed, err = tx.TimerClaimDue(b.ctx, w.timer.DueAt, time.Minute, "after-reopen", 10)
		return err
	})
	if len(claimed) != 1 || claimed[0].Key != w.timer.Key {
		t.Errorf("TimerClaimDue after reopen: got keys %v, want [%s]", ids(claimed, func(t nextup.Timer) string { return t.Key }), w.timer.Key)
	}
}

// testSavepoint: a Savepoint whose function fails (or panics) undoes its
// own writes and nothing else; the transaction goes on and commits the
// rest. Savepoints nest, and one that succeeded is undone with an outer
// one that fails.
func testSavepoint(t *testing.T, b *bundle) {
	kept, failed, inner, outer, panicked := b.newWorld("sp_kept"), b.newWorld("sp_failed"), b.newWorld("sp_inner"), b.newWorld("sp_outer"), b.newWorld("sp_panic")
	boom := errors.New("boom")
	b.tx(func(tx nextup.Tx) error {
		if err := tx.Savepoint(b.ctx, func() error { return kept.write(b.ctx, tx) }); err != nil {
			return fmt.Errorf("a savepoint whose function succeeds: %w", err)
		}
		err := tx.Savepoint(b.ctx, func() error {
			if err := failed.write(b.ctx, tx); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("Savepoint whose function fails with %v: got %v", boom, err)
		}
		// Nested: the inner one succeeds, the outer one fails after it.
		err = tx.Savepoint(b.ctx, func() error {
			if err := tx.Savepoint(b.ctx, func() error { return inner.write(b.ctx, tx) }); err != nil {
				return fmt.Errorf("inner Savepoint: %w", err)
			}
			if err := outer.write(b.ctx, tx); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("outer Savepoint failing after an inner one: got %v, want %v", err, boom)
		}
		func() {
			defer func() {
				if r := recover(); r != "sp boom" {
					t.Errorf("Savepoint whose function panics: recovered %v, want the panic passed on", r)
				}
			}()
			_ = tx.Savepoint(b.ctx, func() error {
				if err := panicked.write(b.ctx, tx); err != nil {
					return err
				}
				panic("sp boom")
			})
		}()
		// A refused conditional write inside a savepoint, passed on as its
		// function's error: the transaction goes on, and a savepoint
		// after it that fails undoes only its own writes, not the first
		// one's (names of savepoints must not be confused).
		err = tx.Savepoint(b.ctx, func() error {
			_, err := tx.SlotSeats(b.ctx, kept.slot.ID, nextup.SeatDelta{Held: 100})
			return err
		})
		if !errors.Is(err, nextup.ErrConflict) {
			t.Errorf("Savepoint whose refused write is its error: got %v, want ErrConflict", err)
		}
		err = tx.Savepoint(b.ctx, func() error {
			if _, err := tx.EntryGet(b.ctx, "ent_missing"); !errors.Is(err, nextup.ErrNotFound) {
				return fmt.Errorf("EntryGet of a missing entry: %v", err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("Savepoint whose read found nothing: got %v, want %v", err, boom)
		}
		// The transaction is still usable, and sees what the first one kept.
		if _, err := tx.EntryGet(b.ctx, kept.entry.ID); err != nil {
			return fmt.Errorf("EntryGet of an entry a released Savepoint wrote: %w", err)
		}
		if _, err := tx.EntryGet(b.ctx, failed.entry.ID); !errors.Is(err, nextup.ErrNotFound) {
			t.Errorf("EntryGet of an entry a failed Savepoint wrote, inside the transaction: got %v, want ErrNotFound", err)
		}
		// Reusing a savepoint's depth after a failure works.
		return tx.Savepoint(b.ctx, func() error {
			_, err := tx.SlotSeats(b.ctx, kept.slot.ID, nextup.SeatDelta{Booked: -1})
			return err
		})
	})
	kept.slot.BookedSeats--
	b.read(func(tx nextup.Tx) error {
		kept.check(t, b.ctx, tx, true)
		for _, w := range []world{failed, inner, outer, panicked} {
			w.check(t, b.ctx, tx, false)
		}
		return nil
	})
	// A Savepoint inside Read only reads.
	b.read(func(tx nextup.Tx) error {
		return tx.Savepoint(b.ctx, func() error {
			_, err := tx.BusinessGet(b.ctx, kept.biz.ID)
			return err
		})
	})
}
