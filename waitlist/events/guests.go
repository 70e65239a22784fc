package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// Guests by name. A registration's party is the person and their guests
// (Entry.PartySize = 1 + guests); each guest is a row of its own
// (nextup.Guest), named by the registration and its place, with the name
// the person gave for them (optional: the door list shows "Guest 2 of
// Ann") and a check-in of its own, because a party rarely arrives all at
// once.
//
//   - The rows are written with the registration, in its transaction: one
//     per guest, named or not, so that every guest has a row to check in.
//     A bounded store (DynamoDB: 100 items a transaction) takes only so
//     many: a registration whose guests do not fit in what its transaction
//     has left is refused as guests, nothing stored (about 80 guests there,
//     far above what an RSVP brings; the SQL stores take any number).
//   - A registration shows exactly its PartySize-1 guests: a place without
//     a row (a registration made before guests had rows) is an unnamed
//     guest not checked in, and gets its row when it is checked in.
//   - Checking in the registration checks in the whole party: the
//     registrant's booking and every guest not checked in yet (a guest who
//     came first keeps their time); its undo clears them all. One guest is
//     checked in, or undone, on their own (CheckInGuest). Either way only
//     a confirmed registration, and it is audited.
//   - Cancelling keeps the rows, as it keeps the entry and the booking: the
//     guest list of a past event is its history. There is no erasure of a
//     person's data yet; when there is, guest names are personal data of
//     the registrant's and go with it.

// guestNames checks and normalises the names given for a registration's
// guests: trimmed, each at most nextup.MaxGuestNameLen characters of
// valid UTF-8 without control characters, and no more names than guests.
// An empty name is an unnamed guest.
func guestNames(names []string, guests int) ([]string, []nextup.FieldError) {
	var f []nextup.FieldError
	if len(names) > guests {
		f = append(f, nextup.FieldError{Field: "guest_names", Message: fmt.Sprintf("%d names for %d guests: at most one name per guest", len(names), guests)})
	}
	out := make([]string, len(names))
	for i, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case !utf8.ValidString(n) || strings.ContainsFunc(n, unicode.IsControl):
			f = append(f, nextup.FieldError{Field: "guest_names", Message: fmt.Sprintf("guest %d's name has a control character or is not text", i+1)})
		case utf8.RuneCountInString(n) > nextup.MaxGuestNameLen:
			f = append(f, nextup.FieldError{Field: "guest_names", Message: fmt.Sprintf("guest %d's name is longer than %d characters", i+1, nextup.MaxGuestNameLen)})
		}
		out[i] = n
	}
	return out, f
}

// createGuests writes the rows of a new registration's guests: one per
// guest, named from names in order (the rest unnamed). It goes last in
// the registration's transaction, so that on a bounded store what the
// registration wrote before is counted.
func (w *work) createGuests(ctx context.Context, e nextup.Entry, names []string) error {
	n := max(e.PartySize-1, 0)
	if n == 0 {
		return nil
	}
	if room := w.Room(1); room >= 0 && n > room {
		return core.Invalid(nextup.FieldError{Field: "guests", Message: fmt.Sprintf("at most %d guests per registration here", room)})
	}
	gs := make([]nextup.Guest, n)
	for i := range gs {
		gs[i] = nextup.Guest{BusinessID: e.BusinessID, SlotID: e.EventID, EntryID: e.ID, Index: i + 1}
		if i < len(names) {
			gs[i].Name = names[i]
		}
	}
	if err := w.Tx.GuestsCreate(ctx, gs); err != nil {
		return fmt.Errorf("create the guests of registration %s: %w", e.ID, err)
	}
	return nil
}

// partyOf is a registration's guests as shown: exactly its PartySize-1,
// in place order, from the rows kept (rows), a place without one being
// an unnamed guest not checked in.
func partyOf(e nextup.Entry, rows []nextup.Guest) []nextup.Guest {
	out := make([]nextup.Guest, max(e.PartySize-1, 0))
	for i := range out {
		out[i] = nextup.Guest{BusinessID: e.BusinessID, SlotID: e.EventID, EntryID: e.ID, Index: i + 1}
	}
	for _, g := range rows {
		if g.EntryID == e.ID && g.Index >= 1 && g.Index <= len(out) {
			out[g.Index-1] = g
		}
	}
	return out
}

// guestsOf reads a registration's guests.
func (w *work) guestsOf(ctx context.Context, e nextup.Entry) ([]nextup.Guest, error) {
	rows, err := w.Tx.GuestListByEntry(ctx, e.ID)
	if err != nil {
		return nil, fmt.Errorf("guests of registration %s: %w", e.ID, err)
	}
	return partyOf(e, rows), nil
}

// guestsBySlot reads the guests of every registration of an event, by
// registration.
func (w *work) guestsBySlot(ctx context.Context, sl nextup.Slot) (map[string][]nextup.Guest, error) {
	rows, err := w.Tx.GuestListBySlot(ctx, sl.ID)
	if err != nil {
		return nil, fmt.Errorf("guests of event %s: %w", sl.ID, err)
	}
	out := map[string][]nextup.Guest{}
	for _, g := range rows {
		out[g.EntryID] = append(out[g.EntryID], g)
	}
	return out, nil
}

// setGuestCheckIn checks guest g in at at (nil: undoes it), making the
// row of a place that has none. It reports whether anything changed: a
// guest checked in already keeps their time, one not checked in stays so.
func (w *work) setGuestCheckIn(ctx context.Context, g *nextup.Guest, at *time.Time) (bool, error) {
	if (at == nil) == (g.CheckedInAt == nil) {
		return false, nil
	}
	stored, err := w.Tx.GuestCheckIn(ctx, g.EntryID, g.Index, at)
	if err == nil {
		*g = stored
		return true, nil
	}
	if !errors.Is(err, nextup.ErrNotFound) {
		return false, fmt.Errorf("check in guest %d of registration %s: %w", g.Index, g.EntryID, err)
	}
	made := *g
	made.CheckedInAt = at
	if err := w.Tx.GuestsCreate(ctx, []nextup.Guest{made}); err != nil {
		return false, fmt.Errorf("check in guest %d of registration %s: %w", g.Index, g.EntryID, err)
	}
	*g = made
	return true, nil
}

// checkInParty checks in (at non-nil) or undoes the check-in of every
// guest of a registration with it, and returns how many changed.
func (w *work) checkInParty(ctx context.Context, r *Registration, at *time.Time) (int, error) {
	guests, err := w.guestsOf(ctx, r.Entry)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range guests {
		changed, err := w.setGuestCheckIn(ctx, &guests[i], at)
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	r.GuestList = guests
	return n, nil
}

// CheckInGuest records (or, with undo, clears) that one guest of a
// confirmed registration came: guest n (from 1) of the party. Checking in
// a guest who is in already, or undoing one who is not, changes nothing
// and writes no audit row.
func (s *Events) CheckInGuest(ctx context.Context, businessID, eventID, regID string, n int, undo bool) (Registration, error) {
	var out Registration
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		sl, e, err := w.registrationEntry(ctx, businessID, eventID, regID)
		if err != nil {
			return err
		}
		r, err := w.registrationOf(ctx, sl, e)
		if err != nil {
			return err
		}
		if n < 1 || n > len(r.GuestList) {
			return core.NotFound("guest", fmt.Sprintf("%d of registration %s (it brings %d)", n, regID, len(r.GuestList)), nil)
		}
		if r.State != RegConfirmed {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeNotConfirmed, "only a confirmed registration's guests can be checked in; this one is %s", r.State)
		}
		var at *time.Time
		from, to := "not_checked_in", "checked_in"
		if !undo {
			t := w.Now
			at = &t
		} else {
			from, to = to, from
		}
		changed, err := w.setGuestCheckIn(ctx, &r.GuestList[n-1], at)
		if err != nil || !changed {
			out = r
			return err
		}
		bi, err := w.Business(ctx, sl.BusinessID)
		if err != nil {
			return err
		}
		// On the registrant's booking, naming the guest by place: the
		// name is the registrant's to change or erase, the audit row is
		// kept.
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: r.Booking.ID, SlotID: sl.ID,
			From: from, To: to, Reason: "guest_check_in", Detail: map[string]any{"entry_id": e.ID, "guest": n}}); err != nil {
			return err
		}
		out = r
		return nil
	})
	return out, err
}
