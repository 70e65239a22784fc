package waitlist_test

import (
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestDedupeAll: Ann waits for a haircut and for a colour, and holds an
// offer of a haircut when a colour frees up and she claims it. With the
// rules' dedupe at "all", her haircut entry is withdrawn in the same
// transaction: its live offer ends and the haircut rolls on to Bob; the
// withdrawal is audited with the booking that made it pointless, and Ann
// is told. With dedupe off (the default) nothing else changes.
func TestDedupeAll(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{nextup.DedupeAll, nextup.DedupeOff} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil; r.Dedupe = mode })
			annCut := b.join(t, "Ann", waitlist.JoinParams{Service: "haircut", Email: "ann@example.com"})
			annColour := b.join(t, "Ann", waitlist.JoinParams{Service: "colour", Email: "ann@example.com"})
			annMassage := b.join(t, "Ann", waitlist.JoinParams{Service: "massage", Email: "ann@example.com"})
			bob := b.join(t, "Bob", waitlist.JoinParams{Service: "haircut"})
			cut := b.slot(t, waitlist.SlotParams{Service: "haircut", StartsAt: b.at(2, 10, 0)})
			_, moves, err := b.svc.Release(b.ctx, b.biz.ID, cut.ID, 0, "cancellation")
			if err != nil || len(moves) != 1 || moves[0].EntryID != annCut.ID {
				t.Fatalf("haircut release: %+v %v", moves, err)
			}
			colour := b.slot(t, waitlist.SlotParams{Service: "colour", StartsAt: b.at(3, 10, 0)})
			_, moves, err = b.svc.Release(b.ctx, b.biz.ID, colour.ID, 0, "cancellation")
			if err != nil || len(moves) != 1 || moves[0].EntryID != annColour.ID {
				t.Fatalf("colour release: %+v %v", moves, err)
			}
			b.clock.Advance(time.Minute)
			if _, err := b.svc.Claim(b.ctx, b.token(t, moves[0].OfferID)); err != nil {
				t.Fatal(err)
			}
			cutEntry, bobEntry, massage := b.entry(t, annCut.ID), b.entry(t, bob.ID), b.entry(t, annMassage.ID)
			var told []nextup.Message
			msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if m.Kind == waitlist.MessageDeduped {
					told = append(told, m)
				}
			}
			if mode == nextup.DedupeOff {
				if cutEntry.Entry.State != nextup.EntryOffered || bobEntry.Entry.State != nextup.EntryWaiting || massage.Entry.State != nextup.EntryWaiting || len(told) != 0 {
					t.Errorf("dedupe off: Ann's haircut %s, Bob %s, %d told", cutEntry.Entry.State, bobEntry.Entry.State, len(told))
				}
				return
			}
			if cutEntry.Entry.State != nextup.EntryLeft || massage.Entry.State != nextup.EntryLeft {
				t.Errorf("Ann's haircut entry is %s, her massage entry %s, want both left", cutEntry.Entry.State, massage.Entry.State)
			}
			if bobEntry.Entry.State != nextup.EntryOffered || bobEntry.Offer == nil || bobEntry.Offer.SlotID != cut.ID {
				t.Errorf("Bob = %s %+v, want offered the haircut Ann's entry held", bobEntry.Entry.State, bobEntry.Offer)
			}
			subjects := map[string]string{}
			for _, m := range told {
				subjects[m.EntryID] = m.To + ": " + m.Subject
			}
			if len(told) != 2 || subjects[annCut.ID] != "ann@example.com: You're off the haircut waitlist" || subjects[annMassage.ID] != "ann@example.com: You're off the massage waitlist" {
				t.Errorf("Ann told: %v", subjects)
			}
			colourRows, err := b.svc.SlotAudit(b.ctx, b.biz.ID, colour.ID)
			if err != nil {
				t.Fatal(err)
			}
			var withdrawn bool
			for _, r := range colourRows {
				if r.SubjectID == annMassage.ID && r.Reason == "deduped" && r.From == string(nextup.EntryWaiting) && r.Detail["booked_slot_id"] == colour.ID {
					withdrawn = true
				}
			}
			if !withdrawn {
				t.Error("no audit row on the booked slot says Ann's massage entry was withdrawn for it")
			}
			rows, err := b.svc.SlotAudit(b.ctx, b.biz.ID, cut.ID)
			if err != nil {
				t.Fatal(err)
			}
			var deduped bool
			for _, r := range rows {
				if r.SubjectID == annCut.ID && r.Reason == "deduped" && r.To == string(nextup.EntryLeft) {
					deduped = true
				}
			}
			if !deduped {
				t.Errorf("no audit row says Ann's haircut entry was deduped: %+v", rows)
			}
		})
	}
}
