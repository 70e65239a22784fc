package waitlist_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// The notices: a person who asks for it is told they are on the list with
// their status link; a lapsed hold is told they keep their place; the
// owner gets the hand-back with the engine's note.
func TestNotices(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil; r.MaxOffersPerSlot = 1 })
	owner := "owner@salon.example"
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{OwnerEmail: &owner}); err != nil {
		t.Fatal(err)
	}
	byKind := func(kind string) []nextup.Message {
		t.Helper()
		msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
		if err != nil {
			t.Fatal(err)
		}
		var out []nextup.Message
		for _, m := range msgs {
			if m.Kind == kind {
				out = append(out, m)
			}
		}
		return out
	}
	ann := b.join(t, "Ann", waitlist.JoinParams{Notify: true})
	b.join(t, "Ben", waitlist.JoinParams{}) // an import, say: no notice
	joined := byKind(waitlist.MessageJoined)
	if len(joined) != 1 || joined[0].EntryID != ann.ID || !strings.Contains(joined[0].Body, "https://nextup.test/s/") ||
		!strings.Contains(joined[0].HTML, "See your place") || joined[0].UnsubscribeURL == "" {
		t.Fatalf("joined notices %+v", joined)
	}
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 15, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	o := onlyMove(t, moves, nextup.MoveOffer)
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 11*time.Minute); err != nil {
		t.Fatal(err)
	}
	exp := byKind(waitlist.MessageExpired)
	if len(exp) != 1 || exp[0].OfferID != o.OfferID || exp[0].To != "ann@example.com" || !strings.Contains(exp[0].Body, "You keep your place") {
		t.Fatalf("expiry notices %+v", exp)
	}
	// One try per slot: the slot is handed back, and the owner told.
	hb := byKind(waitlist.MessageHandback)
	if len(hb) != 1 || hb[0].To != owner || !strings.Contains(hb[0].Body, "Handed back") || !strings.HasPrefix(hb[0].Subject, "Over to you: haircut") {
		t.Fatalf("hand-back notices %+v", hb)
	}
}
