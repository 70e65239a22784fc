package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// registration creates an event's registration (an entry for the event)
// of a party of 1 + guests.
func (b *bundle) registration(ev nextup.Slot, guests int) nextup.Entry {
	b.t.Helper()
	return b.entry(ev.BusinessID, func(e *nextup.Entry) {
		e.Service, e.EventID, e.PartySize, e.State = "", ev.ID, 1+guests, nextup.EntryBooked
	})
}

// guestsOf makes guests of a registration at these places, named as
// names says ("" for an unnamed guest).
func guestsOf(e nextup.Entry, names map[int]string, places ...int) []nextup.Guest {
	out := make([]nextup.Guest, len(places))
	for i, p := range places {
		out[i] = nextup.Guest{BusinessID: e.BusinessID, SlotID: e.EventID, EntryID: e.ID, Index: p, Name: names[p]}
	}
	return out
}

// checkGuests reads the guests of entries and of events back through both
// lists and compares them with want (each list in its order).
func (b *bundle) checkGuests(step string, want map[string][]nextup.Guest, events ...nextup.Slot) {
	b.t.Helper()
	t := b.t
	b.read(func(tx nextup.Tx) error {
		bySlot := map[string][]nextup.Guest{}
		for _, id := range []string{"ent_missing"} {
			got, err := tx.GuestListByEntry(b.ctx, id)
			if wantOK(t, err, "%s: GuestListByEntry(%s)", step, id) && len(got) != 0 {
				t.Errorf("%s: GuestListByEntry(%s) = %v, want none", step, id, got)
			}
		}
		for entryID, gs := range want {
			got, err := tx.GuestListByEntry(b.ctx, entryID)
			if wantOK(t, err, "%s: GuestListByEntry(%s)", step, entryID) {
				checkEqual(t, step+": GuestListByEntry "+entryID, gs, got)
			}
			for _, g := range gs {
				bySlot[g.SlotID] = append(bySlot[g.SlotID], g)
			}
		}
		for _, ev := range events {
			got, err := tx.GuestListBySlot(b.ctx, ev.ID)
			if wantOK(t, err, "%s: GuestListBySlot(%s)", step, ev.ID) {
				checkEqual(t, step+": GuestListBySlot "+ev.ID, sortedGuests(bySlot[ev.ID]), got)
			}
		}
		got, err := tx.GuestListBySlot(b.ctx, "slot_missing")
		if wantOK(t, err, "%s: GuestListBySlot(missing)", step) && len(got) != 0 {
			t.Errorf("%s: GuestListBySlot(missing) = %v, want none", step, got)
		}
		return nil
	})
}

// sortedGuests is the order of GuestListBySlot: by entry, then place.
func sortedGuests(gs []nextup.Guest) []nextup.Guest {
	return sortedBy(gs, func(g nextup.Guest) string { return fmt.Sprintf("%s#%06d", g.EntryID, g.Index) })
}

// A registration's guests read back whole, by registration in place order
// (made out of order) and by event in registration and place order; two
// registrations and two events keep theirs apart, names as given
// (unnamed, accents, quotes).
func testGuestRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	ev := b.slot(biz.ID, event(&nextup.EventSettings{MaxGuests: 5}))
	other := b.slot(biz.ID, event(&nextup.EventSettings{MaxGuests: 5}))
	ann, bob, cy := b.registration(ev, 3), b.registration(ev, 1), b.registration(other, 3)
	solo := b.registration(ev, 0)
	names := map[int]string{1: "Bea Ó'Brien", 3: `Dee "DJ" Lee`}
	annGuests := guestsOf(ann, names, 2, 3, 1) // made out of order
	bobGuests := guestsOf(bob, map[int]string{1: "Bea Ó'Brien"}, 1)
	bobGuests[0].CheckedInAt = ptr(b.at(time.Hour + time.Microsecond))
	cyGuests := guestsOf(cy, names, 1, 2, 3)
	b.tx(func(tx nextup.Tx) error {
		for _, gs := range [][]nextup.Guest{annGuests, bobGuests, cyGuests, nil} {
			if err := tx.GuestsCreate(b.ctx, gs); err != nil {
				return fmt.Errorf("GuestsCreate(%v): %w", gs, err)
			}
		}
		return nil
	})
	b.checkGuests("created", map[string][]nextup.Guest{
		ann.ID: {annGuests[2], annGuests[0], annGuests[1]}, bob.ID: bobGuests, cy.ID: cyGuests, solo.ID: nil,
	}, ev, other)
}

// A refused GuestsCreate stores none of its guests and leaves the
// transaction usable: a place taken (in the store, or twice in the call)
// or below 1 is ErrConflict, a missing entry, event or business
// ErrNotFound.
func testGuestCreateRefused(t *testing.T, b *bundle) {
	biz := b.business()
	ev := b.slot(biz.ID, event(&nextup.EventSettings{MaxGuests: 5}))
	ann, bob := b.registration(ev, 3), b.registration(ev, 2)
	first := guestsOf(ann, map[int]string{1: "Bea"}, 1)
	b.tx(func(tx nextup.Tx) error { return tx.GuestsCreate(b.ctx, first) })

	withEntry := func(id string) []nextup.Guest {
		gs := guestsOf(bob, nil, 1)
		gs[0].EntryID = id
		return gs
	}
	withSlot := func(id string) []nextup.Guest {
		gs := guestsOf(bob, nil, 1)
		gs[0].SlotID = id
		return gs
	}
	withBusiness := func(id string) []nextup.Guest {
		gs := guestsOf(bob, nil, 1)
		gs[0].BusinessID = id
		return gs
	}
	later := guestsOf(bob, map[int]string{1: "Cy", 2: "Dee"}, 1, 2)
	b.tx(func(tx nextup.Tx) error {
		for _, c := range []struct {
			what string
			gs   []nextup.Guest
			kind error
		}{
			{"a new place and one taken", append(guestsOf(ann, nil, 2), guestsOf(ann, map[int]string{1: "Again"}, 1)...), nextup.ErrConflict},
			{"one place twice", append(guestsOf(bob, nil, 1), guestsOf(bob, nil, 1)...), nextup.ErrConflict},
			{"place 0", guestsOf(bob, nil, 2, 0), nextup.ErrConflict},
			{"place -1", guestsOf(bob, nil, -1), nextup.ErrConflict},
			{"a missing entry", append(guestsOf(bob, nil, 2), withEntry("ent_missing")...), nextup.ErrNotFound},
			{"a missing event", withSlot("slot_missing"), nextup.ErrNotFound},
			{"a missing business", withBusiness("biz_missing"), nextup.ErrNotFound},
		} {
			wantErr(t, tx.GuestsCreate(b.ctx, c.gs), c.kind, "GuestsCreate of %s", c.what)
		}
		// The transaction goes on.
		return tx.GuestsCreate(b.ctx, later)
	})
	b.checkGuests("after refused creates", map[string][]nextup.Guest{ann.ID: first, bob.ID: later}, ev)
}

// A guest's check-in is set, moved and cleared on that guest alone (the
// same place of another registration, and the registration's other
// guests, keep theirs), and both lists show it; a missing guest is
// ErrNotFound and changes nothing.
func testGuestCheckIn(t *testing.T, b *bundle) {
	biz := b.business()
	ev := b.slot(biz.ID, event(&nextup.EventSettings{MaxGuests: 5}))
	ann, bob := b.registration(ev, 2), b.registration(ev, 2)
	want := map[string][]nextup.Guest{ann.ID: guestsOf(ann, map[int]string{2: "Bea"}, 1, 2), bob.ID: guestsOf(bob, nil, 1, 2)}
	b.tx(func(tx nextup.Tx) error {
		if err := tx.GuestsCreate(b.ctx, want[ann.ID]); err != nil {
			return err
		}
		return tx.GuestsCreate(b.ctx, want[bob.ID])
	})
	b.checkGuests("created", want, ev)

	ist := time.FixedZone("IST", 5*3600+30*60)
	bea := &want[ann.ID][1]
	for i, at := range []*time.Time{ptr(b.at(time.Hour + time.Microsecond).In(ist)), ptr(b.at(2 * time.Hour)), nil, ptr(b.at(3 * time.Hour))} {
		step := fmt.Sprintf("step %d: GuestCheckIn(%s, 2, %v)", i, ann.ID, at)
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.GuestCheckIn(b.ctx, ann.ID, 2, at)
			bea.CheckedInAt = at
			if wantOK(t, err, "%s", step) {
				checkEqual(t, step+": returned guest", *bea, got)
			}
			return nil
		})
		b.checkGuests(step, want, ev)
	}

	// Undo of the other registration's first guest, never checked in:
	// still not, and nothing else moves.
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.GuestCheckIn(b.ctx, bob.ID, 1, nil)
		if wantOK(t, err, "GuestCheckIn(%s, 1, nil)", bob.ID) {
			checkEqual(t, "undo of a guest not checked in", want[bob.ID][0], got)
		}
		for _, c := range []struct {
			entry string
			index int
		}{{ann.ID, 3}, {ann.ID, 0}, {"ent_missing", 1}} {
			_, err := tx.GuestCheckIn(b.ctx, c.entry, c.index, ptr(b.at(4*time.Hour)))
			wantErr(t, err, nextup.ErrNotFound, "GuestCheckIn(%s, %d)", c.entry, c.index)
		}
		return nil
	})
	b.checkGuests("after refused check-ins", want, ev)
}
