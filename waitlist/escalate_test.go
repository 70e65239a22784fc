package waitlist_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// An offer nobody has opened by half its window (an hour here) gets one
// follow-up, with the same link, on the person's other channel; one that
// was opened, or a person with one channel, gets none.
func TestEscalation(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil; r.ClaimWindow = time.Hour })
	messages := func(kind string) []nextup.Message {
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
	tom := b.join(t, "Tom", waitlist.JoinParams{Service: "haircut", Phone: "+447700900123", Email: "tom@example.com", Channel: nextup.ChannelSMS})
	b.join(t, "Una", waitlist.JoinParams{Service: "colour", Phone: "+447700900124"})
	vic := b.join(t, "Vic", waitlist.JoinParams{Service: "massage", Phone: "+447700900125", Email: "vic@example.com"})
	slots := map[string]string{}
	for _, svc := range []string{"haircut", "colour", "massage"} {
		sl := b.slot(t, waitlist.SlotParams{Service: svc, StartsAt: b.at(2, 14, 0)})
		slots[svc] = sl.ID
		if _, _, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	offers := messages(nextup.MessageOffer)
	if len(offers) != 3 {
		t.Fatalf("%d offer messages", len(offers))
	}
	// Vic opens his link at once.
	for _, m := range offers {
		if m.EntryID == vic.ID {
			if _, err := b.svc.ViewClaim(b.ctx, m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 29*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(messages(waitlist.MessageEscalation)); n != 0 {
		t.Fatalf("%d follow-ups before half the window", n)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	esc := messages(waitlist.MessageEscalation)
	if len(esc) != 1 || esc[0].EntryID != tom.ID || esc[0].Channel != nextup.ChannelEmail || esc[0].To != "tom@example.com" {
		t.Fatalf("follow-ups %+v, want one email to Tom", esc)
	}
	var tomsLink string
	for _, m := range offers {
		if m.EntryID == tom.ID {
			tomsLink = m.ClaimURL
		}
	}
	if esc[0].ClaimURL != tomsLink || !strings.Contains(esc[0].Body, tomsLink) {
		t.Fatalf("the follow-up's link %q, the offer's %q", esc[0].ClaimURL, tomsLink)
	}
	// Una has no other channel: the skip is on the record.
	events, err := b.svc.SlotAudit(b.ctx, b.biz.ID, slots["colour"])
	if err != nil {
		t.Fatal(err)
	}
	skipped := false
	for _, ev := range events {
		skipped = skipped || ev.Reason == "escalation_skipped:no_other_channel"
	}
	if !skipped {
		t.Error("Una's skipped follow-up is not audited")
	}
	// Nothing more is sent when the window ends.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := len(messages(waitlist.MessageEscalation)); n != 1 {
		t.Fatalf("%d follow-ups after the window", n)
	}
}

// TestFollowUpOnTheSameChannel: with the follow-up set to a quarter of
// the window on the same channel for people who have only one, an
// email-only person who has not opened the offer gets the link again by
// email at 15 minutes of the hour; one who opened it gets nothing; and a
// person with two channels still gets it on the other.
func TestFollowUpOnTheSameChannel(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) {
		r.QuietHours, r.ClaimWindow = nil, time.Hour
		r.FollowUp = nextup.FollowUp{AfterShare: 0.25, SameChannelWhenNoOther: true}
	})
	ann := b.join(t, "Ann", waitlist.JoinParams{Service: "haircut", Email: "ann@example.com"})
	bea := b.join(t, "Bea", waitlist.JoinParams{Service: "colour", Email: "bea@example.com"})
	cy := b.join(t, "Cy", waitlist.JoinParams{Service: "massage", Phone: "+447700900125", Email: "cy@example.com"})
	for _, svc := range []string{"haircut", "colour", "massage"} {
		sl := b.slot(t, waitlist.SlotParams{Service: svc, StartsAt: b.at(2, 14, 0)})
		if _, _, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
	if err != nil {
		t.Fatal(err)
	}
	var cyOffer nextup.Channel
	for _, m := range msgs {
		if m.Kind == nextup.MessageOffer && m.EntryID == cy.ID {
			cyOffer = m.Channel
		}
		if m.Kind == nextup.MessageOffer && m.EntryID == bea.ID { // Bea opens hers
			if _, err := b.svc.ViewClaim(b.ctx, m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]); err != nil {
				t.Fatal(err)
			}
		}
	}
	followUps := func() map[string]nextup.Message {
		t.Helper()
		msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]nextup.Message{}
		for _, m := range msgs {
			if m.Kind == waitlist.MessageEscalation {
				out[m.EntryID] = m
			}
		}
		return out
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 14*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(followUps()); n != 0 {
		t.Fatalf("%d follow-ups before a quarter of the window", n)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	got := followUps()
	if m, ok := got[ann.ID]; !ok || m.Channel != nextup.ChannelEmail || m.To != "ann@example.com" || m.ClaimURL == "" {
		t.Errorf("Ann's follow-up: %+v", m)
	}
	if _, ok := got[bea.ID]; ok {
		t.Error("Bea opened her offer and was followed up")
	}
	if m, ok := got[cy.ID]; !ok || m.Channel == cyOffer {
		t.Errorf("Cy's follow-up went by %q, the offer by %q: want the other channel", m.Channel, cyOffer)
	}
	if len(got) != 2 {
		t.Errorf("%d follow-ups, want 2", len(got))
	}
}
