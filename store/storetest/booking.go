package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func bookingID(b nextup.Booking) string   { return b.ID }
func handBackID(h nextup.HandBack) string { return h.ID }

func sortedBy[T any](rows []T, id func(T) string) []T {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(id(a), id(b)) })
	return out
}

func testBookingRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(6))
	other := b.slot(biz.ID, shared(6))
	e := b.entry(biz.ID, func(e *nextup.Entry) { e.PartySize = 2 })
	o, _ := b.offer(s, e, func(o *nextup.Offer) { o.State, o.ResolvedAt = nextup.OfferClaimed, ptr(b.now) })
	bookings := []nextup.Booking{
		{ID: "bkg_offer", BusinessID: biz.ID, SlotID: s.ID, EntryID: e.ID, OfferID: o.ID, Name: e.Name, Seats: 2,
			State: nextup.BookingBooked, TokenHash: nextup.HashToken("cal-1"), CreatedAt: b.at(time.Second)},
		{ID: "bkg_walkin", BusinessID: biz.ID, SlotID: s.ID, Name: "Walk-in", Seats: 1,
			State: nextup.BookingBooked, TokenHash: nextup.HashToken("cal-2"), CreatedAt: b.at(-time.Hour)},
		{ID: "bkg_gone", BusinessID: biz.ID, SlotID: s.ID, Name: "Gone", Seats: 3,
			State: nextup.BookingCancelled, TokenHash: nextup.HashToken("cal-3"), CreatedAt: b.at(-2 * time.Hour), EndedAt: ptr(b.at(-time.Minute))},
		{ID: "bkg_other", BusinessID: biz.ID, SlotID: other.ID, Name: "Elsewhere", Seats: 1,
			State: nextup.BookingNoShow, TokenHash: nextup.HashToken("cal-4"), CreatedAt: b.at(-time.Hour), EndedAt: ptr(b.now)},
	}
	b.tx(func(tx nextup.Tx) error {
		for _, bk := range bookings {
			if err := tx.BookingCreate(b.ctx, bk); err != nil {
				return fmt.Errorf("BookingCreate(%s): %w", bk.ID, err)
			}
		}
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		for _, want := range bookings {
			got, err := tx.BookingGet(b.ctx, want.ID)
			if wantOK(t, err, "BookingGet(%s)", want.ID) {
				checkEqual(t, "BookingGet "+want.ID, want, got)
			}
		}
		got, err := tx.BookingByOffer(b.ctx, o.ID)
		if wantOK(t, err, "BookingByOffer") {
			checkEqual(t, "BookingByOffer", bookings[0], got)
		}
		list, err := tx.BookingListBySlot(b.ctx, s.ID)
		if wantOK(t, err, "BookingListBySlot") {
			want := bookings[:3]
			if gotIDs, wantIDs := ids(sortedBy(list, bookingID), bookingID), ids(sortedBy(want, bookingID), bookingID); !sameStrings(gotIDs, wantIDs) {
				t.Errorf("BookingListBySlot: got %v, want %v (any order)", gotIDs, wantIDs)
			} else {
				checkEqual(t, "BookingListBySlot", sortedBy(want, bookingID), sortedBy(list, bookingID))
			}
		}
		return nil
	})
}

func testBookingNotFound(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID)
	o, _ := b.offer(s, b.entry(biz.ID))
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.BookingGet(b.ctx, "bkg_missing")
		wantErr(t, err, nextup.ErrNotFound, "BookingGet(missing)")
		_, err = tx.BookingByOffer(b.ctx, o.ID)
		wantErr(t, err, nextup.ErrNotFound, "BookingByOffer(offer without a booking)")
		_, err = tx.BookingByOffer(b.ctx, "off_missing")
		wantErr(t, err, nextup.ErrNotFound, "BookingByOffer(missing offer)")
		_, err = tx.BookingSetState(b.ctx, "bkg_missing", nextup.BookingBooked, nextup.BookingCancelled, b.now)
		wantErr(t, err, nextup.ErrNotFound, "BookingSetState(missing)")
		list, err := tx.BookingListBySlot(b.ctx, s.ID)
		if wantOK(t, err, "BookingListBySlot(slot without bookings)") && len(list) != 0 {
			t.Errorf("BookingListBySlot(slot without bookings): %d bookings", len(list))
		}
		return nil
	})
}

func testBookingSetState(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4))
	mk := func(id string) nextup.Booking {
		return nextup.Booking{ID: id, BusinessID: biz.ID, SlotID: s.ID, Name: id, Seats: 1, State: nextup.BookingBooked,
			TokenHash: nextup.HashToken(id), CreatedAt: b.now}
	}
	cancel, noShow := mk("bkg_cancel"), mk("bkg_noshow")
	b.tx(func(tx nextup.Tx) error {
		if err := tx.BookingCreate(b.ctx, cancel); err != nil {
			return err
		}
		return tx.BookingCreate(b.ctx, noShow)
	})
	steps := []struct {
		bk       *nextup.Booking
		from, to nextup.BookingState
		ok       bool
	}{
		{&cancel, nextup.BookingBooked, nextup.BookingCancelled, true},
		{&cancel, nextup.BookingBooked, nextup.BookingNoShow, false},
		{&cancel, nextup.BookingBooked, nextup.BookingCancelled, false},
		{&noShow, nextup.BookingCancelled, nextup.BookingBooked, false},
		{&noShow, nextup.BookingBooked, nextup.BookingNoShow, true},
	}
	for i, st := range steps {
		at := b.at(time.Duration(i+1) * time.Minute)
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.BookingSetState(b.ctx, st.bk.ID, st.from, st.to, at)
			name := fmt.Sprintf("step %d: BookingSetState(%s, %s -> %s) of a %s booking", i, st.bk.ID, st.from, st.to, st.bk.State)
			if !st.ok {
				wantErr(t, err, nextup.ErrConflict, "%s", name)
				return nil
			}
			if wantOK(t, err, "%s", name) {
				st.bk.State, st.bk.EndedAt = st.to, &at
				checkEqual(t, name, *st.bk, got)
			}
			return nil
		})
		b.read(func(tx nextup.Tx) error {
			got, err := tx.BookingGet(b.ctx, st.bk.ID)
			if wantOK(t, err, "BookingGet") {
				checkEqual(t, fmt.Sprintf("booking after step %d", i), *st.bk, got)
			}
			return nil
		})
	}
}

func testHandBackRoundTrip(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	s := b.slot(biz.ID)
	os := b.slot(other.ID)
	hbs := []nextup.HandBack{
		{ID: "hb_open", BusinessID: biz.ID, SlotID: s.ID, Reason: nextup.HandBackListExhausted,
			Note: "Offered to 2 people:\n- Ann: expired\n- Bob: declined", State: nextup.HandBackOpen, CreatedAt: b.now},
		{ID: "hb_done", BusinessID: biz.ID, SlotID: s.ID, Reason: nextup.HandBackTooSoon, Note: "",
			State: nextup.HandBackResolved, CreatedAt: b.at(-time.Hour), ResolvedAt: ptr(b.at(-time.Minute))},
		{ID: "hb_other", BusinessID: other.ID, SlotID: os.ID, Reason: nextup.HandBackTryCap, Note: "x",
			State: nextup.HandBackOpen, CreatedAt: b.now},
	}
	b.tx(func(tx nextup.Tx) error {
		for _, h := range hbs {
			if err := tx.HandBackCreate(b.ctx, h); err != nil {
				return fmt.Errorf("HandBackCreate(%s): %w", h.ID, err)
			}
		}
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		for _, want := range hbs {
			got, err := tx.HandBackGet(b.ctx, want.ID)
			if wantOK(t, err, "HandBackGet(%s)", want.ID) {
				checkEqual(t, "HandBackGet "+want.ID, want, got)
			}
		}
		_, err := tx.HandBackGet(b.ctx, "hb_missing")
		wantErr(t, err, nextup.ErrNotFound, "HandBackGet(missing)")
		for _, c := range []struct {
			biz   string
			state nextup.HandBackState
			want  []nextup.HandBack
		}{
			{biz.ID, nextup.HandBackOpen, hbs[:1]},
			{biz.ID, nextup.HandBackResolved, hbs[1:2]},
			{other.ID, nextup.HandBackOpen, hbs[2:]},
			{other.ID, nextup.HandBackResolved, nil},
		} {
			got, err := tx.HandBackList(b.ctx, c.biz, c.state)
			if wantOK(t, err, "HandBackList(%s, %s)", c.biz, c.state) {
				checkEqual(t, fmt.Sprintf("HandBackList(%s, %s)", c.biz, c.state), sortedBy(c.want, handBackID), sortedBy(got, handBackID))
			}
		}
		return nil
	})
}

func testHandBackResolve(t *testing.T, b *bundle) {
	biz := b.business()
	s1, s2, s3 := b.slot(biz.ID), b.slot(biz.ID), b.slot(biz.ID)
	mk := func(id string, s nextup.Slot) nextup.HandBack {
		return nextup.HandBack{ID: id, BusinessID: biz.ID, SlotID: s.ID, Reason: nextup.HandBackListExhausted,
			State: nextup.HandBackOpen, CreatedAt: b.now}
	}
	hbs := map[string]nextup.HandBack{}
	b.tx(func(tx nextup.Tx) error {
		for _, h := range []nextup.HandBack{mk("hb_1", s1), mk("hb_1b", s1), mk("hb_2a", s2), mk("hb_2b", s2), mk("hb_3", s3)} {
			hbs[h.ID] = h
			if err := tx.HandBackCreate(b.ctx, h); err != nil {
				return err
			}
		}
		return nil
	})
	resolve := func(ids ...string) {
		for _, id := range ids {
			h := hbs[id]
			h.State = nextup.HandBackResolved
			h.ResolvedAt = ptr(b.now)
			hbs[id] = h
		}
	}
	check := func(step string) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			for id, want := range hbs {
				got, err := tx.HandBackGet(b.ctx, id)
				if wantOK(t, err, "HandBackGet(%s)", id) {
					checkEqual(t, step+": hand-back "+id, want, got)
				}
			}
			return nil
		})
	}
	b.now = b.at(time.Minute)
	b.tx(func(tx nextup.Tx) error { return tx.HandBackResolve(b.ctx, "hb_1", "", b.now) })
	resolve("hb_1")
	check("resolve hb_1 by id")

	b.now = b.at(time.Minute)
	b.tx(func(tx nextup.Tx) error { return tx.HandBackResolve(b.ctx, "", s2.ID, b.now) })
	resolve("hb_2a", "hb_2b")
	check("resolve every open one of slot 2")

	// Resolving again changes nothing: ResolvedAt stays the first.
	b.now = b.at(time.Minute)
	err := b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.HandBackResolve(b.ctx, "hb_1", "", b.now) })
	if err != nil && !errors.Is(err, nextup.ErrConflict) && !errors.Is(err, nextup.ErrNotFound) {
		t.Errorf("HandBackResolve of a resolved hand-back: %v", err)
	}
	check("resolve hb_1 again")
}

// BookingCheckIn sets, moves and clears the check-in of a booked booking;
// every read shows it, BookingSetState keeps it; a booking no longer
// booked is ErrConflict and unchanged, a missing one ErrNotFound.
func testBookingCheckIn(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, event(&nextup.EventSettings{ClaimWindow: time.Hour, Currency: "eur"}))
	e := b.entry(biz.ID, func(e *nextup.Entry) { e.Service, e.EventID = "", s.ID })
	o, _ := b.offer(s, e, func(o *nextup.Offer) { o.State, o.ResolvedAt = nextup.OfferClaimed, ptr(b.now) })
	mk := func(id string, state nextup.BookingState, mods ...func(*nextup.Booking)) nextup.Booking {
		bk := nextup.Booking{ID: id, BusinessID: biz.ID, SlotID: s.ID, Name: id, Seats: 1, State: state,
			TokenHash: nextup.HashToken(id), CreatedAt: b.now}
		if state != nextup.BookingBooked {
			bk.EndedAt = ptr(b.now)
		}
		for _, m := range mods {
			m(&bk)
		}
		return bk
	}
	bks := map[string]*nextup.Booking{}
	for _, bk := range []nextup.Booking{
		mk("bkg_door", nextup.BookingBooked, func(bk *nextup.Booking) { bk.EntryID, bk.OfferID = e.ID, o.ID }),
		mk("bkg_early", nextup.BookingBooked, func(bk *nextup.Booking) { bk.CheckedInAt = ptr(b.at(-time.Minute)) }), // created checked in
		mk("bkg_gone", nextup.BookingCancelled),
	} {
		b.tx(func(tx nextup.Tx) error { return tx.BookingCreate(b.ctx, bk) })
		bks[bk.ID] = &bk
	}
	check := func(step string) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			for id, want := range bks {
				got, err := tx.BookingGet(b.ctx, id)
				if wantOK(t, err, "%s: BookingGet(%s)", step, id) {
					checkEqual(t, step+": BookingGet "+id, *want, got)
				}
			}
			got, err := tx.BookingByOffer(b.ctx, o.ID)
			if wantOK(t, err, "%s: BookingByOffer", step) {
				checkEqual(t, step+": BookingByOffer", *bks["bkg_door"], got)
			}
			list, err := tx.BookingListBySlot(b.ctx, s.ID)
			if wantOK(t, err, "%s: BookingListBySlot", step) {
				var want []nextup.Booking
				for _, bk := range bks {
					want = append(want, *bk)
				}
				checkEqual(t, step+": BookingListBySlot", sortedBy(want, bookingID), sortedBy(list, bookingID))
			}
			return nil
		})
	}
	check("created")

	ist := time.FixedZone("IST", 5*3600+30*60)
	door := bks["bkg_door"]
	for i, at := range []*time.Time{ptr(b.at(time.Hour + time.Microsecond).In(ist)), ptr(b.at(2 * time.Hour)), nil, ptr(b.at(3 * time.Hour))} {
		step := fmt.Sprintf("step %d: BookingCheckIn(%s, %v)", i, door.ID, at)
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.BookingCheckIn(b.ctx, door.ID, at)
			door.CheckedInAt = at
			if wantOK(t, err, "%s", step) {
				checkEqual(t, step+": returned booking", *door, got)
			}
			return nil
		})
		check(step)
	}

	// Ending a booking keeps its check-in; after that it cannot change.
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.BookingSetState(b.ctx, door.ID, nextup.BookingBooked, nextup.BookingCancelled, b.at(4*time.Hour))
		door.State, door.EndedAt = nextup.BookingCancelled, ptr(b.at(4*time.Hour))
		if wantOK(t, err, "BookingSetState(checked-in booking, booked -> cancelled)") {
			checkEqual(t, "booking returned by BookingSetState", *door, got)
		}
		return nil
	})
	check("after BookingSetState")
	b.tx(func(tx nextup.Tx) error {
		for _, id := range []string{door.ID, "bkg_gone"} {
			_, err := tx.BookingCheckIn(b.ctx, id, ptr(b.at(5*time.Hour)))
			wantErr(t, err, nextup.ErrConflict, "BookingCheckIn(%s) of a cancelled booking", id)
			_, err = tx.BookingCheckIn(b.ctx, id, nil)
			wantErr(t, err, nextup.ErrConflict, "BookingCheckIn(%s, nil) of a cancelled booking", id)
		}
		_, err := tx.BookingCheckIn(b.ctx, "bkg_missing", ptr(b.now))
		wantErr(t, err, nextup.ErrNotFound, "BookingCheckIn(missing)")
		return nil
	})
	check("after refused check-ins")
}
