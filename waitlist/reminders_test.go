package waitlist_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// A booked slot gets its reminders at the business's offsets (24 h and
// 1 h by default), moved out of quiet hours; a cancelled booking gets none.
func TestReminders(t *testing.T) {
	t.Parallel()
	b := setup(t, nil) // quiet hours 21:00–08:00
	reminders := func() map[string][]nextup.Message {
		t.Helper()
		msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]nextup.Message{}
		for _, m := range msgs {
			if m.Kind == waitlist.MessageReminder {
				out[m.BookingID] = append(out[m.BookingID], m)
			}
		}
		return out
	}
	book := func(name string, p waitlist.JoinParams, startsAt time.Time) nextup.Booking {
		t.Helper()
		p.Service = name
		b.join(t, name, p)
		sl := b.slot(t, waitlist.SlotParams{Service: name, StartsAt: startsAt})
		_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.svc.Claim(b.ctx, b.token(t, onlyMove(t, moves, nextup.MoveOffer).OfferID))
		if err != nil {
			t.Fatal(err)
		}
		return res.Booking
	}
	// Thu 3 Dec 15:00: reminders Wed 15:00 and Thu 14:00, by email.
	ann := book("ann", waitlist.JoinParams{Email: "ann@example.com"}, b.at(2, 15, 0))
	// Thu 3 Dec 08:30 by text: the 1-hour reminder (07:30, quiet) goes at 08:00.
	bob := book("bob", waitlist.JoinParams{Phone: "+447700900123"}, b.at(2, 8, 30))
	// Tomorrow 09:00, cancelled before any reminder.
	cy := book("cy", waitlist.JoinParams{Email: "cy@example.com"}, b.at(1, 9, 0))
	// Today 12:00 (in two hours): too late for the 24-hour one; the 1-hour one at 11:00.
	dee := book("dee", waitlist.JoinParams{Email: "dee@example.com"}, b.at(0, 12, 0))
	if _, _, err := b.svc.CancelBooking(b.ctx, b.biz.ID, cy.ID, ""); err != nil {
		t.Fatal(err)
	}
	var pending []nextup.Timer
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		pending, err = tx.TimerList(b.ctx, nextup.TimerFilter{BusinessID: b.biz.ID, Kind: nextup.TimerBookingRemind, PendingOnly: true})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 5 {
		t.Errorf("%d pending reminders, want 5 (2 Ann, 2 Bob, 1 Dee; none for Cy)", len(pending))
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 3*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	got := reminders()
	want := map[string][]time.Time{
		ann.ID: {b.at(1, 15, 0), b.at(2, 14, 0)},
		bob.ID: {b.at(1, 8, 30), b.at(2, 8, 0)},
		dee.ID: {b.at(0, 11, 0)},
	}
	if len(got[cy.ID]) != 0 {
		t.Errorf("Cy's cancelled booking got %d reminders", len(got[cy.ID]))
	}
	for id, times := range want {
		ms := got[id]
		if len(ms) != len(times) {
			t.Errorf("booking %s: %d reminders, want %d", id, len(ms), len(times))
			continue
		}
		for _, m := range ms {
			found := false
			for _, at := range times {
				found = found || m.CreatedAt.Equal(at)
			}
			if !found {
				t.Errorf("booking %s: a reminder at %s, want one of %v", id, m.CreatedAt.In(b.loc), times)
			}
		}
	}
	if m := got[bob.ID][0]; m.Channel != nextup.ChannelSMS || m.To != "+447700900123" || !strings.Contains(m.Body, "a reminder of your bob") {
		t.Errorf("Bob's reminder: %s to %s: %q", m.Channel, m.To, m.Body)
	}
	if m := got[ann.ID][0]; m.Channel != nextup.ChannelEmail || !strings.HasPrefix(m.Subject, "Reminder: ann on Thu 3 Dec at 3:00 pm") ||
		m.HTML == "" || m.UnsubscribeURL != "" {
		t.Errorf("Ann's reminder: %s %q html %d unsubscribe %q", m.Channel, m.Subject, len(m.HTML), m.UnsubscribeURL)
	}
}
