package waitlist_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// sendAll marks every due message sent, as the relay would.
func (b *bundle) sendAll(t *testing.T) {
	t.Helper()
	err := b.store.InTx(b.ctx, func(tx nextup.Tx) error {
		ms, err := tx.MessageClaimDue(b.ctx, b.clock.Now(), time.Minute, 100)
		for _, m := range ms {
			if err := tx.MessageFinish(b.ctx, m.ID, *m.ClaimedUntil, nextup.MessageResult{State: nextup.MessageSent, At: b.clock.Now()}); err != nil {
				return err
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) kinds(t *testing.T, offerID string) map[string][]nextup.Message {
	t.Helper()
	out := map[string][]nextup.Message{}
	for _, m := range b.messages(t, offerID) {
		out[m.Kind] = append(out[m.Kind], m)
	}
	return out
}

// A text the carrier could not deliver falls back to email, with the same
// claim link, once; a number that can never get a text is opted out and,
// with no email either, the person is skipped (no_channel) and the slot
// rolls on; a confirmation that did not arrive goes by email with its
// invite.
func TestUndeliverableFallsBack(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ann := b.join(t, "Ann", waitlist.JoinParams{Phone: "+447700900111", Email: "ann@example.com"})
	ben := b.join(t, "Ben", waitlist.JoinParams{Service: "colour", Phone: "+447700900222"})
	cy := b.join(t, "Cy", waitlist.JoinParams{Service: "colour", Email: "cy@example.com"})

	release := func(svc string, day int) nextup.Move {
		t.Helper()
		sl := b.slot(t, waitlist.SlotParams{Service: svc, StartsAt: b.at(day, 15, 0)})
		_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		return onlyMove(t, moves, nextup.MoveOffer)
	}
	// Ann: the text is undelivered (a phone switched off): email instead.
	mv := release("haircut", 1)
	if mv.EntryID != ann.ID {
		t.Fatalf("offer to %s", mv.EntryID)
	}
	b.sendAll(t)
	sms := b.kinds(t, mv.OfferID)[nextup.MessageOffer][0]
	if sms.Channel != nextup.ChannelSMS {
		t.Fatalf("Ann's offer went by %s", sms.Channel)
	}
	for range 2 { // a repeated report changes nothing
		if err := b.svc.SMSDelivery(b.ctx, sms.ID, "undelivered", "30003"); err != nil {
			t.Fatal(err)
		}
	}
	fb := b.kinds(t, mv.OfferID)[waitlist.MessageFallback]
	if len(fb) != 1 || fb[0].Channel != nextup.ChannelEmail || fb[0].To != "ann@example.com" || fb[0].ClaimURL != sms.ClaimURL ||
		!strings.Contains(fb[0].Body, sms.ClaimURL) || fb[0].HTML == "" {
		t.Fatalf("fallbacks %+v", fb)
	}
	if e := b.entry(t, ann.ID); e.Entry.State != nextup.EntryOffered {
		t.Fatalf("Ann is %s", e.Entry.State)
	}
	// Ann claims through the email; her confirmation text does not arrive
	// either: it goes by email, with the invite.
	res, err := b.svc.Claim(b.ctx, b.token(t, mv.OfferID))
	if err != nil {
		t.Fatal(err)
	}
	b.sendAll(t)
	conf := b.kinds(t, mv.OfferID)[nextup.MessageConfirmation][0]
	if err := b.svc.Undeliverable(b.ctx, conf.ID, false, "provider gave up"); err != nil {
		t.Fatal(err)
	}
	var confFB *nextup.Message
	for _, m := range b.kinds(t, mv.OfferID)[waitlist.MessageFallback] {
		if m.BookingID == res.Booking.ID {
			confFB = &m
		}
	}
	if confFB == nil || confFB.Channel != nextup.ChannelEmail || !strings.Contains(confFB.Calendar, "BEGIN:VEVENT") ||
		!strings.HasPrefix(confFB.Subject, "Booked:") {
		t.Fatalf("confirmation fallback %+v", confFB)
	}

	// Ben: a landline (30006) and no email: opted out, skipped, and the
	// slot goes to Cy.
	mv = release("colour", 2)
	if mv.EntryID != ben.ID {
		t.Fatalf("colour offer to %s", mv.EntryID)
	}
	b.sendAll(t)
	sms = b.kinds(t, mv.OfferID)[nextup.MessageOffer][0]
	if err := b.svc.SMSDelivery(b.ctx, sms.ID, "undelivered", "30006"); err != nil {
		t.Fatal(err)
	}
	o, err := b.svc.GetOffer(b.ctx, b.biz.ID, mv.OfferID)
	if err != nil || o.State != nextup.OfferCancelled {
		t.Fatalf("Ben's offer %s, %v", o.State, err)
	}
	if e := b.entry(t, ben.ID); e.Entry.State != nextup.EntryWaiting {
		t.Fatalf("Ben is %s, want waiting with his place", e.Entry.State)
	}
	if e := b.entry(t, cy.ID); e.Entry.State != nextup.EntryOffered {
		t.Fatalf("Cy is %s, want offered the colour slot", e.Entry.State)
	}
	events, err := b.svc.SlotAudit(b.ctx, b.biz.ID, mv.SlotID)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range events {
		reasons = append(reasons, ev.Reason)
	}
	if !strings.Contains(strings.Join(reasons, ","), "no_channel") {
		t.Errorf("the skip is not audited: %v", reasons)
	}
	// The next colour slot skips Ben (no channel) while Cy holds hers.
	sl := b.slot(t, waitlist.SlotParams{Service: "colour", StartsAt: b.at(3, 15, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range moves {
		if m.EntryID == ben.ID {
			t.Errorf("Ben was offered again with no way to reach him: %+v", moves)
		}
	}
}
