package waitlist_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// suppressions returns the business's suppressions of addr on ch.
func (b *bundle) suppressions(t *testing.T, ch nextup.Channel, addr string) []nextup.Suppression {
	t.Helper()
	var out []nextup.Suppression
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		sups, err := tx.SuppressionList(b.ctx, b.biz.ID, []string{nextup.AddressKey(ch, addr)})
		for _, sp := range sups {
			if sp.Channel == ch {
				out = append(out, sp)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// audit returns the business's audit rows that moved something to to.
func (b *bundle) auditTo(t *testing.T, to string) []nextup.AuditEvent {
	t.Helper()
	var out []nextup.AuditEvent
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		evs, err := tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: b.biz.ID})
		for _, ev := range evs {
			if ev.To == to {
				out = append(out, ev)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// emailOffer releases a haircut slot day days ahead, which must be
// offered to want by email, and marks the mail sent.
func (b *bundle) emailOffer(t *testing.T, day int, want nextup.Entry) (nextup.Move, nextup.Message) {
	t.Helper()
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(day, 15, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	mv := onlyMove(t, moves, nextup.MoveOffer)
	if mv.EntryID != want.ID {
		t.Fatalf("offer to %s, want %s", mv.EntryID, want.Name)
	}
	b.sendAll(t)
	m := b.kinds(t, mv.OfferID)[nextup.MessageOffer][0]
	if m.Channel != nextup.ChannelEmail || m.State != nextup.MessageSent {
		t.Fatalf("the offer went by %s and is %s", m.Channel, m.State)
	}
	return mv, m
}

func (b *bundle) message(t *testing.T, id string) nextup.Message {
	t.Helper()
	var m nextup.Message
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		m, err = tx.MessageGet(b.ctx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A mail that bounces for good is an undeliverable text's equal: dead,
// the address opted out of email, the offer sent again by text with the
// same link, once however often the bounce is reported; with no other
// channel the person is skipped and the slot rolls on.
func TestMailPermanentBounce(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ann := b.join(t, "Ann", waitlist.JoinParams{Email: "ann@example.com", Phone: "+447700900111", Channel: nextup.ChannelEmail})
	mv, m := b.emailOffer(t, 1, ann)
	for range 2 {
		if err := b.svc.MailFeedback(b.ctx, m.ID, "Ann@Example.com", waitlist.MailPermanentBounce, "General: smtp; 550 5.1.1 user unknown"); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.message(t, m.ID); got.State != nextup.MessageDead || !strings.Contains(got.LastError, "550 5.1.1 user unknown") {
		t.Errorf("the mail is %s (%q), want dead with the bounce", got.State, got.LastError)
	}
	if sups := b.suppressions(t, nextup.ChannelEmail, "ann@example.com"); len(sups) != 1 || !strings.Contains(sups[0].Reason, "550 5.1.1") {
		t.Errorf("email suppressions %+v, want one with the bounce", sups)
	}
	if n := len(b.auditTo(t, "email_undeliverable")); n != 1 {
		t.Errorf("%d email_undeliverable audit rows, want 1", n)
	}
	fb := b.kinds(t, mv.OfferID)[waitlist.MessageFallback]
	if len(fb) != 1 || fb[0].Channel != nextup.ChannelSMS || fb[0].To != "+447700900111" || !strings.Contains(fb[0].Body, m.ClaimURL) {
		t.Fatalf("fallbacks %+v, want one text with the claim link", fb)
	}
	if e := b.entry(t, ann.ID); e.Entry.State != nextup.EntryOffered {
		t.Errorf("Ann is %s, want offered still", e.Entry.State)
	}

	// Bo has no phone: skipped (no_channel), Cy is offered the slot.
	bo := b.join(t, "Bo", waitlist.JoinParams{Service: "colour"})
	cy := b.join(t, "Cy", waitlist.JoinParams{Service: "colour"})
	sl := b.slot(t, waitlist.SlotParams{Service: "colour", StartsAt: b.at(2, 15, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	mv = onlyMove(t, moves, nextup.MoveOffer)
	if mv.EntryID != bo.ID {
		t.Fatalf("colour offer to %s, want Bo", mv.EntryID)
	}
	b.sendAll(t)
	m = b.kinds(t, mv.OfferID)[nextup.MessageOffer][0]
	if err := b.svc.MailFeedback(b.ctx, m.ID, "bo@example.com", waitlist.MailPermanentBounce, "OnAccountSuppressionList"); err != nil {
		t.Fatal(err)
	}
	if o, err := b.svc.GetOffer(b.ctx, b.biz.ID, mv.OfferID); err != nil || o.State != nextup.OfferCancelled {
		t.Fatalf("Bo's offer %s, %v", o.State, err)
	}
	if e := b.entry(t, bo.ID); e.Entry.State != nextup.EntryWaiting {
		t.Errorf("Bo is %s, want waiting with his place", e.Entry.State)
	}
	if e := b.entry(t, cy.ID); e.Entry.State != nextup.EntryOffered {
		t.Errorf("Cy is %s, want offered the colour slot", e.Entry.State)
	}
}

// A complaint opts the address out of email, audited once however often
// it is reported; the mail arrived, so it stays sent and nothing falls
// back.
func TestMailComplaint(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ann := b.join(t, "Ann", waitlist.JoinParams{Email: "ann@example.com", Phone: "+447700900111", Channel: nextup.ChannelEmail})
	mv, m := b.emailOffer(t, 1, ann)
	for range 2 {
		if err := b.svc.MailFeedback(b.ctx, m.ID, "ann@example.com", waitlist.MailComplaint, "abuse"); err != nil {
			t.Fatal(err)
		}
	}
	if sups := b.suppressions(t, nextup.ChannelEmail, "ann@example.com"); len(sups) != 1 || sups[0].Reason != "complaint" {
		t.Errorf("email suppressions %+v, want one for the complaint", sups)
	}
	evs := b.auditTo(t, "email_opted_out")
	if len(evs) != 1 || evs[0].Reason != "complaint" || evs[0].Actor != nextup.ActorCustomer {
		t.Errorf("audit %+v, want one email_opted_out by the customer for the complaint", evs)
	}
	if got := b.message(t, m.ID); got.State != nextup.MessageSent {
		t.Errorf("the mail is %s, want sent", got.State)
	}
	if fb := b.kinds(t, mv.OfferID)[waitlist.MessageFallback]; len(fb) != 0 {
		t.Errorf("fallbacks %+v, want none", fb)
	}
	if len(b.suppressions(t, nextup.ChannelSMS, "+447700900111")) != 0 {
		t.Error("the complaint opted the phone out too")
	}
}

// A transient bounce changes nothing.
func TestMailTransientBounce(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ann := b.join(t, "Ann", waitlist.JoinParams{Email: "ann@example.com", Phone: "+447700900111", Channel: nextup.ChannelEmail})
	mv, m := b.emailOffer(t, 1, ann)
	if err := b.svc.MailFeedback(b.ctx, m.ID, "ann@example.com", waitlist.MailTransientBounce, "MailboxFull"); err != nil {
		t.Fatal(err)
	}
	if got := b.message(t, m.ID); got.State != nextup.MessageSent {
		t.Errorf("the mail is %s, want sent", got.State)
	}
	if len(b.suppressions(t, nextup.ChannelEmail, "ann@example.com")) != 0 {
		t.Error("a transient bounce opted the address out")
	}
	if fb := b.kinds(t, mv.OfferID)[waitlist.MessageFallback]; len(fb) != 0 {
		t.Errorf("fallbacks %+v, want none", fb)
	}
}

func TestMailFeedbackRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ann := b.join(t, "Ann", waitlist.JoinParams{Email: "ann@example.com", Channel: nextup.ChannelEmail})
	_, m := b.emailOffer(t, 1, ann)
	gus := b.join(t, "Gus", waitlist.JoinParams{Phone: "+447700900222", Service: "colour"})
	sl := b.slot(t, waitlist.SlotParams{Service: "colour", StartsAt: b.at(2, 15, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if mv := onlyMove(t, moves, nextup.MoveOffer); mv.EntryID != gus.ID {
		t.Fatalf("colour offer to %s", mv.EntryID)
	}
	b.sendAll(t)
	text := b.kinds(t, moves[0].OfferID)[nextup.MessageOffer][0]

	for _, tc := range []struct {
		name, id, addr, kind string
		want                 error
	}{
		{"unknown message", "msg_nope", "ann@example.com", waitlist.MailPermanentBounce, nextup.ErrNotFound},
		{"a text", text.ID, "", waitlist.MailComplaint, nextup.ErrInvalid},
		{"another address", m.ID, "eve@example.com", waitlist.MailPermanentBounce, nextup.ErrInvalid},
		{"unknown kind", m.ID, "ann@example.com", "delivery", nextup.ErrInvalid},
	} {
		if err := b.svc.MailFeedback(b.ctx, tc.id, tc.addr, tc.kind, "x"); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := b.message(t, m.ID); got.State != nextup.MessageSent || len(b.suppressions(t, nextup.ChannelEmail, "ann@example.com")) != 0 {
		t.Errorf("refused feedback changed something: the mail is %s", got.State)
	}
}
