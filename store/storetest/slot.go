package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func slotID(s nextup.Slot) string { return s.ID }

func testSlotRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	ist := time.FixedZone("IST", 5*3600+30*60)
	slots := []nextup.Slot{
		b.slot(biz.ID, func(s *nextup.Slot) {
			s.Staff = "ann"
			s.StartsAt = time.Date(2031, 3, 12, 14, 30, 0, 1000, ist)
			s.EndsAt = s.StartsAt.Add(45 * time.Minute)
		}),
		b.slot(biz.ID, func(s *nextup.Slot) {
			s.Kind = nextup.KindEvent
			s.Title = "Spring open day — 'all welcome'"
			s.Service = ""
			s.Seating = nextup.SeatingShared
			s.Capacity = 30
			s.BookedSeats = 12
			s.HandedBack = true
		}),
		b.slot(biz.ID, func(s *nextup.Slot) {
			s.Service = "table"
			s.Capacity = 4
			s.MinParty = 2
			s.BookedSeats = 4
		}),
	}
	b.read(func(tx nextup.Tx) error {
		for _, want := range slots {
			got, err := tx.SlotGet(b.ctx, want.ID)
			if wantOK(t, err, "SlotGet(%s)", want.ID) {
				checkEqual(t, "slot "+want.ID, want, got)
			}
		}
		return nil
	})
}

func testSlotNotFound(t *testing.T, b *bundle) {
	b.business()
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotGet(b.ctx, "slot_missing")
		wantErr(t, err, nextup.ErrNotFound, "SlotGet(missing)")
		_, err = tx.SlotSeats(b.ctx, "slot_missing", nextup.SeatDelta{Held: 1})
		wantErr(t, err, nextup.ErrNotFound, "SlotSeats(missing)")
		_, err = tx.SlotResize(b.ctx, "slot_missing", 3)
		wantErr(t, err, nextup.ErrNotFound, "SlotResize(missing)")
		wantErr(t, tx.SlotSetHandedBack(b.ctx, "slot_missing", true), nextup.ErrNotFound, "SlotSetHandedBack(missing)")
		return nil
	})
}

func testSlotCreateOverCapacity(t *testing.T, b *bundle) {
	biz := b.business()
	bad := nextup.Slot{ID: "slot_over", BusinessID: biz.ID, Kind: nextup.KindSlot, Service: "cut", StartsAt: b.at(time.Hour),
		EndsAt: b.at(2 * time.Hour), Capacity: 2, Seating: nextup.SeatingShared, MinParty: 1, BookedSeats: 3, CreatedAt: b.now}
	err := b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.SlotCreate(b.ctx, bad) })
	if err == nil {
		t.Errorf("SlotCreate with 3 seats booked of 2: no error; the store must keep booked+held <= capacity in every committed state")
	}
	b.read(func(tx nextup.Tx) error {
		_, err := tx.SlotGet(b.ctx, bad.ID)
		wantErr(t, err, nextup.ErrNotFound, "SlotGet of a refused slot")
		return nil
	})
}

func testSlotSeats(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4), func(s *nextup.Slot) { s.BookedSeats = 1 })
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Held: 1})
		return err
	})
	booked, held := 1, 1
	steps := []struct {
		d  nextup.SeatDelta
		ok bool
	}{
		{nextup.SeatDelta{Held: 2}, true},              // 1+3 = 4
		{nextup.SeatDelta{Held: 1}, false},             // 5 > 4
		{nextup.SeatDelta{Booked: 1}, false},           // 5 > 4
		{nextup.SeatDelta{Booked: 1, Held: -1}, true},  // a claim: 2+2
		{nextup.SeatDelta{Held: -3}, false},            // held -1
		{nextup.SeatDelta{Booked: -3}, false},          // booked -1
		{nextup.SeatDelta{Booked: -3, Held: 3}, false}, // booked -1 even though the sum fits
		{nextup.SeatDelta{Booked: 3, Held: -3}, false}, // held -1 even though the sum fits
		{nextup.SeatDelta{Booked: -2, Held: -2}, true}, // 0+0
		{nextup.SeatDelta{}, true},                     // no change
		{nextup.SeatDelta{Booked: 4}, true},            // full
		{nextup.SeatDelta{Booked: 1, Held: -1}, false}, // held -1
		{nextup.SeatDelta{Booked: -1, Held: 1}, true},  // 3+1
	}
	for i, st := range steps {
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.SlotSeats(b.ctx, s.ID, st.d)
			if !st.ok {
				wantErr(t, err, nextup.ErrConflict, "step %d: SlotSeats(%+v) on booked=%d held=%d capacity=4", i, st.d, booked, held)
				return nil
			}
			if !wantOK(t, err, "step %d: SlotSeats(%+v) on booked=%d held=%d capacity=4", i, st.d, booked, held) {
				return nil
			}
			booked += st.d.Booked
			held += st.d.Held
			want := s
			want.BookedSeats, want.HeldSeats = booked, held
			checkEqual(t, "slot returned by SlotSeats", want, got)
			return nil
		})
		b.seats(s.ID, booked, held)
	}
}

func testSlotResize(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4), func(s *nextup.Slot) { s.BookedSeats = 2 })
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Held: 1})
		return err
	})
	capacity := 4
	for _, st := range []struct {
		capacity int
		ok       bool
	}{{3, true}, {2, false}, {0, false}, {-1, false}, {10, true}, {3, true}} {
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.SlotResize(b.ctx, s.ID, st.capacity)
			if !st.ok {
				wantErr(t, err, nextup.ErrConflict, "SlotResize(%d) with booked=2 held=1", st.capacity)
				return nil
			}
			if wantOK(t, err, "SlotResize(%d) with booked=2 held=1", st.capacity) {
				capacity = st.capacity
				want := s
				want.Capacity, want.BookedSeats, want.HeldSeats = capacity, 2, 1
				checkEqual(t, "slot returned by SlotResize", want, got)
			}
			return nil
		})
		if got := b.getSlot(s.ID); got.Capacity != capacity || got.BookedSeats != 2 || got.HeldSeats != 1 {
			t.Errorf("after SlotResize(%d): capacity=%d booked=%d held=%d, want capacity=%d booked=2 held=1",
				st.capacity, got.Capacity, got.BookedSeats, got.HeldSeats, capacity)
		}
	}
}

func testSlotSetHandedBack(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID)
	for _, v := range []bool{true, true, false, true} {
		b.tx(func(tx nextup.Tx) error { return tx.SlotSetHandedBack(b.ctx, s.ID, v) })
		got := b.getSlot(s.ID)
		want := s
		want.HandedBack = v
		checkEqual(t, "slot after SlotSetHandedBack", want, got)
	}
}

func testSlotList(t *testing.T, b *bundle) {
	a, other := b.business(), b.business()
	day := func(n int) time.Time { return b.at(time.Duration(n) * 24 * time.Hour) }
	var as []nextup.Slot
	for _, n := range []int{3, 1, 4, 0, 2} {
		as = append(as, b.slot(a.ID, func(s *nextup.Slot) { s.StartsAt, s.EndsAt = day(n), day(n).Add(time.Hour) }))
	}
	b.slot(other.ID, func(s *nextup.Slot) { s.StartsAt, s.EndsAt = day(2), day(2).Add(time.Hour) })
	in := func(from, to time.Time) []string {
		var out []string
		for _, s := range as {
			if (from.IsZero() || !s.StartsAt.Before(from)) && (to.IsZero() || s.StartsAt.Before(to)) {
				out = append(out, s.ID)
			}
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		name string
		f    nextup.SlotFilter
	}{
		{"all", nextup.SlotFilter{BusinessID: a.ID}},
		{"from day 1 to day 3", nextup.SlotFilter{BusinessID: a.ID, From: day(1), To: day(3)}},
		{"from day 2", nextup.SlotFilter{BusinessID: a.ID, From: day(2)}},
		{"to day 2", nextup.SlotFilter{BusinessID: a.ID, To: day(2)}},
		{"empty range", nextup.SlotFilter{BusinessID: a.ID, From: day(5)}},
	}
	b.read(func(tx nextup.Tx) error {
		for _, c := range cases {
			got, err := tx.SlotList(b.ctx, c.f)
			if !wantOK(t, err, "SlotList(%s)", c.name) {
				continue
			}
			gotIDs := ids(got, slotID)
			slices.Sort(gotIDs)
			if want := in(c.f.From, c.f.To); !sameStrings(gotIDs, want) {
				t.Errorf("SlotList(%s): got %v, want %v (StartsAt in [From, To), this business only)", c.name, gotIDs, want)
			}
		}
		got, err := tx.SlotList(b.ctx, nextup.SlotFilter{BusinessID: a.ID, Limit: 2})
		if wantOK(t, err, "SlotList(limit 2)") {
			if len(got) != 2 {
				t.Errorf("SlotList(limit 2): %d slots", len(got))
			}
			for _, s := range got {
				if s.BusinessID != a.ID {
					t.Errorf("SlotList(limit 2) returned slot %s of business %s", s.ID, s.BusinessID)
				}
			}
		}
		return nil
	})
}

func testSlotOpenFor(t *testing.T, b *bundle) {
	a, other := b.business(), b.business()
	day := func(n int) time.Time { return b.at(time.Duration(n) * 24 * time.Hour) }
	at := func(n int) func(*nextup.Slot) {
		return func(s *nextup.Slot) { s.StartsAt, s.EndsAt = day(n), day(n).Add(time.Hour) }
	}
	e := b.entry(a.ID, func(e *nextup.Entry) {
		e.PartySize = 2
		e.Earliest, e.Latest = day(1), day(6)
	})
	annOnly := b.entry(a.ID, func(e *nextup.Entry) { e.PartySize = 2; e.Staff = "ann" })
	anyTime := b.entry(a.ID, func(e *nextup.Entry) { e.PartySize = 2 })

	fit1 := b.slot(a.ID, at(2), shared(4))
	fit2 := b.slot(a.ID, at(3), func(s *nextup.Slot) { s.Capacity = 2; s.Staff = "bob" })
	fit3 := b.slot(a.ID, at(4), shared(6), func(s *nextup.Slot) { s.BookedSeats = 3; s.Staff = "ann" })
	fit4 := b.slot(a.ID, at(6), shared(2))
	excluded := map[string]string{}
	ex := func(why string, s nextup.Slot) { excluded[s.ID] = why }
	ex("other service", b.slot(a.ID, at(2), shared(4), func(s *nextup.Slot) { s.Service = "color" }))
	ex("other business", b.slot(other.ID, at(2), shared(4)))
	ex("handed back", b.slot(a.ID, at(2), shared(4), func(s *nextup.Slot) { s.HandedBack = true }))
	ex("no free seats (booked)", b.slot(a.ID, at(2), shared(2), func(s *nextup.Slot) { s.BookedSeats = 2 }))
	held := b.slot(a.ID, at(3), func(s *nextup.Slot) { s.Capacity = 2; s.StartsAt = s.StartsAt.Add(30 * time.Minute) })
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, held.ID, nextup.SeatDelta{Held: 2})
		return err
	})
	ex("no free seats (held)", held)
	ex("free seats fewer than the party", b.slot(a.ID, at(3), shared(4), func(s *nextup.Slot) { s.BookedSeats = 3 }))
	ex("capacity below the party", b.slot(a.ID, at(3)))
	ex("not after startsAfter", b.slot(a.ID, func(s *nextup.Slot) { s.StartsAt, s.EndsAt = b.at(-time.Hour), b.now }))
	early := b.slot(a.ID, at(1), shared(4), func(s *nextup.Slot) { s.StartsAt = day(1).Add(-time.Minute) })
	late := b.slot(a.ID, at(6), shared(4), func(s *nextup.Slot) { s.StartsAt = day(6).Add(time.Minute); s.EndsAt = day(7) })
	windowed := map[string]string{
		early.ID: "starts before the entry's earliest",
		late.ID:  "starts after the entry's latest",
	}
	// Bounds are inclusive: a slot starting exactly at Earliest fits.
	fit0 := b.slot(a.ID, at(1), shared(4))

	check := func(name string, e nextup.Entry, limit int, want []nextup.Slot) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			got, err := tx.SlotOpenFor(b.ctx, e, b.now, limit)
			if !wantOK(t, err, "SlotOpenFor(%s)", name) {
				return nil
			}
			for _, s := range got {
				if why, ok := excluded[s.ID]; ok {
					t.Errorf("SlotOpenFor(%s) returned slot %s: %s", name, s.ID, why)
				}
				if why, ok := windowed[s.ID]; ok && !e.Earliest.IsZero() {
					t.Errorf("SlotOpenFor(%s) returned slot %s: %s", name, s.ID, why)
				}
			}
			gotIDs, wantIDs := ids(got, slotID), ids(want, slotID)
			if !sameStrings(gotIDs, wantIDs) {
				t.Errorf("SlotOpenFor(%s, limit %d): got %v, want %v (soonest first)", name, limit, gotIDs, wantIDs)
			}
			for _, s := range got {
				if full, err := tx.SlotGet(b.ctx, s.ID); wantOK(t, err, "SlotGet(%s)", s.ID) {
					checkEqual(t, "slot from SlotOpenFor", full, s)
				}
			}
			return nil
		})
	}
	check("window day 1..6", e, 10, []nextup.Slot{fit0, fit1, fit2, fit3, fit4})
	check("window day 1..6", e, 2, []nextup.Slot{fit0, fit1})
	check("no window", anyTime, 10, []nextup.Slot{early, fit0, fit1, fit2, fit3, fit4, late})
	// ann is wanted: bob's slot is out; slots with no staff named are the engine's call.
	b.read(func(tx nextup.Tx) error {
		got, err := tx.SlotOpenFor(b.ctx, annOnly, b.now, 10)
		if wantOK(t, err, "SlotOpenFor(staff ann)") {
			gotIDs := ids(got, slotID)
			if slices.Contains(gotIDs, fit2.ID) {
				t.Errorf("SlotOpenFor(staff ann) returned %s, a slot with staff bob", fit2.ID)
			}
			if !slices.Contains(gotIDs, fit3.ID) {
				t.Errorf("SlotOpenFor(staff ann) = %v lacks %s, a slot with staff ann", gotIDs, fit3.ID)
			}
		}
		return nil
	})
	// A slot whose free seats are all held is open again once the hold ends.
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, held.ID, nextup.SeatDelta{Held: -2})
		return err
	})
	delete(excluded, held.ID)
	check("after a hold ended", anyTime, 10, []nextup.Slot{early, fit0, fit1, fit2, b.getSlot(held.ID), fit3, fit4, late})
}

func testSlotOpenForEvent(t *testing.T, b *bundle) {
	biz := b.business()
	event := func(n int) func(*nextup.Slot) {
		return func(s *nextup.Slot) {
			s.Kind, s.Title, s.Service = nextup.KindEvent, "Event", ""
			s.Seating, s.Capacity = nextup.SeatingShared, 10
			s.StartsAt = b.at(time.Duration(n) * 24 * time.Hour)
			s.EndsAt = s.StartsAt.Add(2 * time.Hour)
		}
	}
	ev1 := b.slot(biz.ID, event(2))
	ev2 := b.slot(biz.ID, event(3))
	b.slot(biz.ID, shared(10)) // a plain slot of service "cut"
	e := b.entry(biz.ID, func(e *nextup.Entry) { e.Service, e.EventID, e.PartySize = "", ev1.ID, 3 })
	check := func(name string, want ...string) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			got, err := tx.SlotOpenFor(b.ctx, e, b.now, 10)
			if wantOK(t, err, "SlotOpenFor(event entry, %s)", name) {
				if gotIDs := ids(got, slotID); !sameStrings(gotIDs, want) {
					t.Errorf("SlotOpenFor(event entry, %s): got %v, want %v (only its own event)", name, gotIDs, want)
				}
			}
			return nil
		})
	}
	check("open", ev1.ID)
	_ = ev2
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, ev1.ID, nextup.SeatDelta{Booked: 8})
		return err
	})
	check("2 seats left for a party of 3")
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(b.ctx, ev1.ID, nextup.SeatDelta{Booked: -1})
		return err
	})
	check("3 seats left", ev1.ID)
	b.tx(func(tx nextup.Tx) error { return tx.SlotSetHandedBack(b.ctx, ev1.ID, true) })
	check("handed back")
}

// event makes a slot an event (shared seating, no service) with settings.
func event(ev *nextup.EventSettings) func(*nextup.Slot) {
	return func(s *nextup.Slot) {
		s.Kind, s.Title, s.Service, s.Seating, s.Capacity = nextup.KindEvent, "Event "+s.ID, "", nextup.SeatingShared, 20
		s.Event = ev
	}
}

// An event's settings are kept with its slot: every field reads back, by
// SlotGet and SlotList and from the slot the seat writes return; a plain
// slot has none (checkEqual tells a nil Event from a set one, and an
// empty list of reminders from the default). SlotEventSet replaces an event's title and settings and
// is ErrNotFound for a missing slot and for a plain one, which stays plain.
func testSlotEventRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	ist := time.FixedZone("IST", 5*3600+30*60)
	full := &nextup.EventSettings{
		MaxGuests:          3,
		WaitlistLimit:      ptr(25),
		RegistrationCutoff: ptr(b.at(20 * time.Hour).In(ist)), // microseconds, another zone
		CancellationCutoff: ptr(b.at(12*time.Hour + 7*time.Microsecond)),
		PromotionCutoff:    90 * time.Minute,
		ClaimWindow:        nextup.DefaultEventClaimWindow,
		ReminderOffsets:    nextup.DefaultEventReminderOffsets(),
		ReminderMorningOf:  "08:30",
		PriceCents:         1250,
		Currency:           "gbp",
		// The public page's settings.
		Slug:                     "wine-tasting",
		Public:                   nextup.EventPublic{ShowSeats: nextup.ShowSeatsFew, Place: "The back room", Notes: "Bring a glass.\nDoors at 7.", NoIndex: true},
		TimeCriticalThroughQuiet: ptr(true),
		// Its own re-queue rule (nil, the events' default, in bare).
		Requeue: &nextup.Requeue{Policy: nextup.RequeueDrop, DropAfter: 3},
	}
	// No reminders at all (an empty list, not the default), no cutoffs, a
	// waitlist of zero (none) rather than no limit, free.
	bare := &nextup.EventSettings{
		WaitlistLimit:   ptr(0),
		ClaimWindow:     30 * time.Minute,
		ReminderOffsets: []time.Duration{},
		Currency:        nextup.DefaultEventCurrency,
	}
	evFull := b.slot(biz.ID, event(full), func(s *nextup.Slot) { s.Title = "Wine tasting — 'bring a friend'" })
	evBare := b.slot(biz.ID, event(bare), func(s *nextup.Slot) { s.StartsAt = s.StartsAt.Add(time.Hour) })
	plain := b.slot(biz.ID, func(s *nextup.Slot) { s.StartsAt = s.StartsAt.Add(2 * time.Hour) })
	slots := []nextup.Slot{evFull, evBare, plain}

	check := func(step string, want []nextup.Slot) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			for _, w := range want {
				got, err := tx.SlotGet(b.ctx, w.ID)
				if wantOK(t, err, "%s: SlotGet(%s)", step, w.ID) {
					checkEqual(t, step+": SlotGet "+w.ID, w, got)
				}
			}
			list, err := tx.SlotList(b.ctx, nextup.SlotFilter{BusinessID: biz.ID})
			if wantOK(t, err, "%s: SlotList", step) {
				checkEqual(t, step+": SlotList", want, list)
			}
			return nil
		})
	}
	check("created", slots)

	// The seat writes return the slot with its settings and keep them.
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.SlotSeats(b.ctx, evFull.ID, nextup.SeatDelta{Booked: 2, Held: 1})
		slots[0].BookedSeats, slots[0].HeldSeats = 2, 1
		if wantOK(t, err, "SlotSeats(event)") {
			checkEqual(t, "slot returned by SlotSeats", slots[0], got)
		}
		got, err = tx.SlotResize(b.ctx, evFull.ID, 8)
		slots[0].Capacity = 8
		if wantOK(t, err, "SlotResize(event)") {
			checkEqual(t, "slot returned by SlotResize", slots[0], got)
		}
		slots[0].HandedBack = true
		return tx.SlotSetHandedBack(b.ctx, evFull.ID, true)
	})
	check("after SlotSeats, SlotResize, SlotSetHandedBack", slots)

	// SlotEventSet replaces title and settings; nil cutoffs clear them.
	changed := nextup.EventSettings{
		MaxGuests:                1,
		PromotionCutoff:          0,
		ClaimWindow:              2 * time.Hour,
		ReminderOffsets:          []time.Duration{48 * time.Hour},
		ReminderMorningOf:        "",
		PriceCents:               500,
		Currency:                 "eur",
		Slug:                     "wine",
		TimeCriticalThroughQuiet: ptr(false),
	}
	b.tx(func(tx nextup.Tx) error { return tx.SlotEventSet(b.ctx, evFull.ID, "Wine tasting (moved)", changed) })
	slots[0].Title, slots[0].Event = "Wine tasting (moved)", &changed
	check("after SlotEventSet", slots)

	b.tx(func(tx nextup.Tx) error {
		wantErr(t, tx.SlotEventSet(b.ctx, "slot_missing", "x", changed), nextup.ErrNotFound, "SlotEventSet(missing)")
		wantErr(t, tx.SlotEventSet(b.ctx, plain.ID, "x", changed), nextup.ErrNotFound, "SlotEventSet(plain slot): no such event")
		return nil
	})
	check("after refused SlotEventSets (the plain slot stays plain)", slots)
}
