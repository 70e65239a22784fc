package waitlist_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// guestEvent is an event of capacity seats with up to maxGuests guests per
// registration, a month ahead.
func guestEvent(t *testing.T, bd *bundle, capacity, maxGuests int) nextup.Slot {
	t.Helper()
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Supper club", bd.at(30, 19, 0), bd.at(30, 23, 0), capacity
	p.Settings.MaxGuests = maxGuests
	ev, err := bd.svc.CreateEvent(bd.ctx, bd.biz.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// guestRows reads an event's guest rows from the store itself.
func (b *bundle) guestRows(t *testing.T, eventID string) []nextup.Guest {
	t.Helper()
	var gs []nextup.Guest
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		gs, err = tx.GuestListBySlot(b.ctx, eventID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return gs
}

// party is a registration's guests as "name/checked-in time" strings
// ("-" for none), in place order.
func party(r waitlist.Registration) string {
	var out []string
	for i, g := range r.GuestList {
		at := "-"
		if g.CheckedInAt != nil {
			at = g.CheckedInAt.Format("15:04:05")
		}
		if g.Index != i+1 || g.EntryID != r.Entry.ID {
			return fmt.Sprintf("guest %d is %+v", i+1, g)
		}
		out = append(out, g.Name+"/"+at)
	}
	return strings.Join(out, ", ")
}

// Guests' names are kept with the registration, confirmed or waitlisted,
// in its transaction: one row per guest (named or not, trimmed), shown by
// the registration, by GetRegistration and on the guest list; cancelling
// keeps them.
func TestRegisterGuestNames(t *testing.T) {
	t.Parallel()
	bd := setup(t, nil)
	ev := guestEvent(t, bd, 6, 3)
	reg := func(name string, guests int, names ...string) waitlist.Registration {
		t.Helper()
		bd.clock.Advance(time.Second)
		r, _, err := bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{Name: name,
			Email: strings.ToLower(name) + "@example.com", Guests: guests, GuestNames: names})
		if err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
		return r
	}
	ann := reg("Ann", 3, "Bea Ó'Brien", "", "  Cy  ")
	bob := reg("Bob", 1) // no names: an unnamed guest
	dee := reg("Dee", 2, "Eve")
	if ann.State != waitlist.RegConfirmed || bob.State != waitlist.RegConfirmed || dee.State != waitlist.RegWaitlisted {
		t.Fatalf("states: %s %s %s, want confirmed, confirmed, waitlisted (6 seats: 4 + 2, then 3 more)", ann.State, bob.State, dee.State)
	}
	want := map[string]string{ann.Entry.ID: "Bea Ó'Brien/-, /-, Cy/-", bob.Entry.ID: "/-", dee.Entry.ID: "Eve/-, /-"}
	for _, r := range []waitlist.Registration{ann, bob, dee} {
		if got := party(r); got != want[r.Entry.ID] {
			t.Errorf("Register(%s) guests: %q, want %q", r.Entry.Name, got, want[r.Entry.ID])
		}
	}
	check := func(step string) {
		t.Helper()
		_, regs, err := bd.svc.Registrations(bd.ctx, bd.biz.ID, ev.ID, "")
		if err != nil || len(regs) != 3 {
			t.Fatalf("%s: guest list %d, %v", step, len(regs), err)
		}
		for _, r := range regs {
			if got := party(r); got != want[r.Entry.ID] {
				t.Errorf("%s: guest list: %s's guests %q, want %q", step, r.Entry.Name, got, want[r.Entry.ID])
			}
			one, err := bd.svc.GetRegistration(bd.ctx, bd.biz.ID, ev.ID, r.Entry.ID)
			if err != nil || party(one) != want[r.Entry.ID] {
				t.Errorf("%s: GetRegistration(%s) guests %q, %v; want %q", step, r.Entry.Name, party(one), err, want[r.Entry.ID])
			}
		}
		if rows := bd.guestRows(t, ev.ID); len(rows) != 6 {
			t.Errorf("%s: %d guest rows, want 6 (3 + 1 + 2)", step, len(rows))
		}
	}
	check("registered")
	if _, _, err := bd.svc.CancelRegistration(bd.ctx, bd.biz.ID, ev.ID, bob.Entry.ID, nextup.ActorCustomer); err != nil {
		t.Fatal(err)
	}
	check("after Bob cancelled") // his guest stays on the record
}

// A refused registration stores nothing, guests included: more names than
// guests, a name with a control character, too long, or not text, and
// more guests than the event takes.
func TestRegisterGuestNamesRefused(t *testing.T) {
	t.Parallel()
	bd := setup(t, nil)
	ev := guestEvent(t, bd, 10, 2)
	for _, c := range []struct {
		what   string
		guests int
		names  []string
		field  string
	}{
		{"three names for two guests", 2, []string{"A", "B", "C"}, "guest_names"},
		{"names without guests", 0, []string{"A"}, "guest_names"},
		{"a bell", 2, []string{"A\aB"}, "guest_names"},
		{"a line break", 1, []string{"Ann\nDROP TABLE"}, "guest_names"},
		{"a tab", 1, []string{"A\tB"}, "guest_names"},
		{"101 characters", 1, []string{strings.Repeat("é", nextup.MaxGuestNameLen+1)}, "guest_names"},
		{"not UTF-8", 1, []string{"Ann \xff"}, "guest_names"},
		{"three guests of an event that takes two", 3, []string{"A", "B", "C"}, "guests"},
	} {
		_, _, err := bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{Name: "Zed", Email: "zed@example.com",
			Guests: c.guests, GuestNames: c.names})
		var ne *nextup.Error
		if !errors.As(err, &ne) || ne.Code != nextup.CodeValidation || len(ne.Fields) == 0 || ne.Fields[0].Field != c.field {
			t.Errorf("%s: %v, want validation_failed on %s", c.what, err, c.field)
		}
	}
	// 100 characters, accents and all, is a name.
	long := strings.Repeat("é", nextup.MaxGuestNameLen)
	if _, _, err := bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{Name: "Ann", Email: "ann@example.com",
		Guests: 1, GuestNames: []string{long}}); err != nil {
		t.Fatalf("a name of %d characters: %v", nextup.MaxGuestNameLen, err)
	}
	_, regs, err := bd.svc.Registrations(bd.ctx, bd.biz.ID, ev.ID, "")
	if err != nil || len(regs) != 1 || regs[0].Entry.Name != "Ann" {
		t.Fatalf("registrations after the refusals: %d, %v; want Ann's alone", len(regs), err)
	}
	if rows := bd.guestRows(t, ev.ID); len(rows) != 1 || rows[0].Name != long {
		t.Errorf("guest rows after the refusals: %v, want Ann's one", rows)
	}
}

// One guest is checked in, and undone, on their own, audited; the
// party's check-in checks in the guests not in yet (a guest who came
// first keeps their time) and its undo clears them all; another party is
// untouched; a place the registration does not have is not_found, a
// registration not confirmed not_confirmed.
func TestCheckInGuest(t *testing.T) {
	t.Parallel()
	bd := setup(t, nil)
	ev := guestEvent(t, bd, 6, 2)
	reg := func(name string, guests int, names ...string) waitlist.Registration {
		t.Helper()
		r, _, err := bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{Name: name,
			Email: strings.ToLower(name) + "@example.com", Guests: guests, GuestNames: names})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ann, bob, cy := reg("Ann", 2, "Bea", "Cat"), reg("Bob", 2, "Dan"), reg("Cy", 2)
	if cy.State != waitlist.RegWaitlisted {
		t.Fatalf("Cy is %s, want waitlisted", cy.State)
	}
	guestRows := func() []nextup.AuditEvent {
		t.Helper()
		var out []nextup.AuditEvent
		if err := bd.store.Read(bd.ctx, func(tx nextup.Tx) error {
			rows, err := tx.AuditList(bd.ctx, nextup.AuditFilter{BusinessID: bd.biz.ID, SlotID: ev.ID})
			for _, r := range rows {
				if r.Reason == "guest_check_in" {
					out = append(out, r)
				}
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	step := func(what string, do func() (waitlist.Registration, error), want string) waitlist.Registration {
		t.Helper()
		r, err := do()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := party(r); got != want {
			t.Errorf("%s: guests %q, want %q", what, got, want)
		}
		if again, err := bd.svc.GetRegistration(bd.ctx, bd.biz.ID, ev.ID, r.Entry.ID); err != nil || party(again) != want {
			t.Errorf("%s: read back %q, %v; want %q", what, party(again), err, want)
		}
		return r
	}
	guest := func(r waitlist.Registration, n int, undo bool) func() (waitlist.Registration, error) {
		return func() (waitlist.Registration, error) {
			return bd.svc.CheckInGuest(bd.ctx, bd.biz.ID, ev.ID, r.Entry.ID, n, undo)
		}
	}
	whole := func(r waitlist.Registration, undo bool) func() (waitlist.Registration, error) {
		return func() (waitlist.Registration, error) {
			return bd.svc.CheckIn(bd.ctx, bd.biz.ID, ev.ID, r.Entry.ID, undo)
		}
	}

	bd.clock.Set(bd.at(30, 18, 50))
	r := step("Cat arrives first", guest(ann, 2, false), "Bea/-, Cat/18:50:00")
	if r.Booking == nil || r.Booking.CheckedInAt != nil {
		t.Errorf("Cat's check-in checked in Ann's booking: %+v", r.Booking)
	}
	if rows := guestRows(); len(rows) != 1 || rows[0].From != "not_checked_in" || rows[0].To != "checked_in" ||
		rows[0].SubjectID != ann.Booking.ID || rows[0].Actor != nextup.ActorStaff || fmt.Sprint(rows[0].Detail["guest"]) != "2" {
		t.Errorf("audit of Cat's check-in: %+v", rows)
	}
	bd.clock.Advance(time.Minute)
	step("Cat again: nothing changes", guest(ann, 2, false), "Bea/-, Cat/18:50:00")
	if rows := guestRows(); len(rows) != 1 {
		t.Errorf("checking in Cat twice wrote %d audit rows, want 1", len(rows))
	}
	r = step("Ann's party arrives", whole(ann, false), "Bea/18:51:00, Cat/18:50:00")
	if r.Booking == nil || r.Booking.CheckedInAt == nil || !r.Booking.CheckedInAt.Equal(bd.at(30, 18, 51)) {
		t.Errorf("Ann's booking after the party's check-in: %+v", r.Booking)
	}
	step("Bob's party is untouched", func() (waitlist.Registration, error) {
		return bd.svc.GetRegistration(bd.ctx, bd.biz.ID, ev.ID, bob.Entry.ID)
	}, "Dan/-, /-")
	step("Bob's unnamed guest comes alone", guest(bob, 2, false), "Dan/-, /18:51:00")
	step("and is undone", guest(bob, 2, true), "Dan/-, /-")
	if rows := guestRows(); len(rows) != 3 || rows[2].From != "checked_in" || rows[2].To != "not_checked_in" {
		t.Errorf("audit after Bob's guest was undone: %+v", rows)
	}
	r = step("Ann's party undone", whole(ann, true), "Bea/-, Cat/-")
	if r.Booking.CheckedInAt != nil {
		t.Errorf("Ann's booking after the undo: %+v", r.Booking)
	}

	for _, c := range []struct {
		what string
		r    waitlist.Registration
		n    int
		code string
	}{
		{"guest 3 of a party of 2 guests", ann, 3, nextup.CodeNotFound},
		{"guest 0", ann, 0, nextup.CodeNotFound},
		{"a waitlisted registration's guest", cy, 1, nextup.CodeNotConfirmed},
	} {
		_, err := bd.svc.CheckInGuest(bd.ctx, bd.biz.ID, ev.ID, c.r.Entry.ID, c.n, false)
		var ne *nextup.Error
		if !errors.As(err, &ne) || ne.Code != c.code {
			t.Errorf("%s: %v, want %s", c.what, err, c.code)
		}
	}
	if rows := guestRows(); len(rows) != 3 {
		t.Errorf("refused check-ins wrote audit rows: %d, want 3", len(rows))
	}
}

// A place the store keeps no row for (a registration made before guests
// had rows, or a party that grew) shows as an unnamed guest and gets its
// row when checked in.
func TestCheckInGuestWithoutRow(t *testing.T) {
	t.Parallel()
	bd := setup(t, nil)
	ev := guestEvent(t, bd, 6, 3)
	ann, _, err := bd.svc.Register(bd.ctx, bd.biz.ID, ev.ID, waitlist.RegisterParams{Name: "Ann", Email: "ann@example.com",
		Guests: 1, GuestNames: []string{"Bea"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := bd.store.InTx(bd.ctx, func(tx nextup.Tx) error {
		e := ann.Entry
		e.PartySize = 3
		return tx.EntryUpdate(bd.ctx, e)
	}); err != nil {
		t.Fatal(err)
	}
	r, err := bd.svc.GetRegistration(bd.ctx, bd.biz.ID, ev.ID, ann.Entry.ID)
	if err != nil || party(r) != "Bea/-, /-" {
		t.Fatalf("a party grown to 2 guests with 1 row: %q, %v", party(r), err)
	}
	bd.clock.Set(bd.at(30, 18, 55))
	r, err = bd.svc.CheckIn(bd.ctx, bd.biz.ID, ev.ID, ann.Entry.ID, false)
	if err != nil || party(r) != "Bea/18:55:00, /18:55:00" {
		t.Fatalf("party check-in: %q, %v", party(r), err)
	}
	if rows := bd.guestRows(t, ev.ID); len(rows) != 2 || rows[1].Index != 2 || rows[1].CheckedInAt == nil {
		t.Errorf("rows after the check-in: %+v, want a row made for guest 2", rows)
	}
}
