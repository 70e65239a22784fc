package waitlist_test

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/smtp"
	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/insight"
)

// TestMonthlySummaryByTimer runs December on the fake clock and lets the
// summary timers fire: on Monday 7 December at 09:00 November's (a quiet
// month) and on Monday 4 January December's, each once, stored and
// emailed to the owner through a real SMTP server; a second timer for the
// same month changes nothing.
func TestMonthlySummaryByTimer(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	owner, country := "owner@salon.test", "GB"
	services := []nextup.Service{{Name: "Haircut", PriceCents: 4500}}
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{OwnerEmail: &owner, Country: &country, Services: &services}); err != nil {
		t.Fatal(err)
	}
	advanceTo := func(at time.Time) {
		t.Helper()
		if err := timer.Advance(b.ctx, b.clock, b.sweeper, at.Sub(b.clock.Now())); err != nil {
			t.Fatal(err)
		}
	}
	// December: two cancellations; Ann claims the first, Bob declines the
	// second and it rolls on to Cat, who lets it lapse.
	advanceTo(b.at(9, 10, 0))
	b.join(t, "Ann", waitlist.JoinParams{})
	b.join(t, "Bob", waitlist.JoinParams{})
	b.join(t, "Cat", waitlist.JoinParams{})
	first := b.slot(t, waitlist.SlotParams{StartsAt: b.at(10, 14, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, first.ID, 0, "cancellation")
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(3 * time.Minute)
	if _, err := b.svc.Claim(b.ctx, b.token(t, onlyMove(t, moves, nextup.MoveOffer).OfferID)); err != nil {
		t.Fatal(err)
	}
	second := b.slot(t, waitlist.SlotParams{StartsAt: b.at(11, 14, 0)})
	if _, moves, err = b.svc.Release(b.ctx, b.biz.ID, second.ID, 0, "cancellation"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.Decline(b.ctx, b.token(t, onlyMove(t, moves, nextup.MoveOffer).OfferID)); err != nil {
		t.Fatal(err)
	}
	advanceTo(time.Date(2027, 1, 4, 9, 1, 0, 0, b.loc))

	sums, err := b.svc.Summaries(b.ctx, b.biz.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 2 || sums[0].Month != "2026-12" || sums[1].Month != "2026-11" {
		t.Fatalf("summaries %+v, want December's then November's", sums)
	}
	if !sums[1].CreatedAt.Equal(time.Date(2026, 12, 7, 9, 0, 0, 0, b.loc)) || sums[1].Narrative != "November 2026 was quiet: no slot was freed and nobody joined the waitlist." {
		t.Errorf("November's summary: made %v, %q", sums[1].CreatedAt, sums[1].Narrative)
	}
	dec := sums[0]
	if !dec.CreatedAt.Equal(time.Date(2027, 1, 4, 9, 0, 0, 0, b.loc)) || dec.SentAt == nil || dec.NarrativeBy != "template" {
		t.Errorf("December's summary: %+v", dec.Summary)
	}
	// Its figures are the month's, as the analytics compute them now.
	want, err := b.svc.Figures(b.ctx, b.biz.ID, time.Date(2026, 12, 1, 0, 0, 0, 0, b.loc), time.Date(2027, 1, 1, 0, 0, 0, 0, b.loc))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(dec.Report.Figures)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("stored figures\n%s\nwant\n%s", got, exp)
	}
	f := dec.Report.Figures
	if f.SlotsFreed != 2 || f.SlotsFilled != 1 || f.OffersMade != 3 || f.OffersClaimed != 1 || f.OffersDeclined != 1 || f.OffersLapsed != 1 ||
		f.RevenueRecoveredCents != 4500 || f.TimeToFillP50Seconds != 180 || f.HandBacks != 1 || f.WaitlistJoined != 3 {
		t.Errorf("December's figures %+v", f)
	}
	if !strings.Contains(dec.Narrative, "You recovered 1 of them from the waitlist (50%), worth £45.") {
		t.Errorf("narrative %q", dec.Narrative)
	}

	// Another timer for the same month (a second instance, a timer fired
	// twice) finds the month summed up and sends nothing.
	if err := b.store.InTx(b.ctx, func(tx nextup.Tx) error {
		return tx.TimerSchedule(b.ctx, nextup.Timer{BusinessID: b.biz.ID, Kind: nextup.TimerMonthlySummary, SubjectID: b.biz.ID,
			Key: "again", DueAt: b.clock.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	advanceTo(b.clock.Now().Add(time.Minute))
	if again, _ := b.svc.Summaries(b.ctx, b.biz.ID); len(again) != 2 {
		t.Errorf("%d summaries after a second timer, want 2", len(again))
	}
	// The next one is due on Monday 1 February.
	var next []nextup.Timer
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		next, err = tx.TimerList(b.ctx, nextup.TimerFilter{Kind: nextup.TimerMonthlySummary, PendingOnly: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(next) != 1 || !next[0].DueAt.Equal(time.Date(2027, 2, 1, 9, 0, 0, 0, b.loc)) {
		t.Errorf("pending summary timers %+v, want one on 1 February 09:00", next)
	}

	// The emails go out through a real SMTP server, one per month.
	srv := smtptest.Start(t)
	host, port, _ := net.SplitHostPort(srv.Addr)
	p, _ := strconv.Atoi(port)
	sender, err := smtp.New(smtp.Config{Host: host, Port: p, TLS: "none", From: "Salon <waitlist@nextup.test>"})
	if err != nil {
		t.Fatal(err)
	}
	relay := &outbox.Relay{Store: b.store, Clock: b.clock, Senders: map[nextup.Channel]nextup.Sender{nextup.ChannelEmail: sender}}
	for {
		sent, failed, err := relay.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sent+failed == 0 {
			break
		}
	}
	var mails []smtptest.Mail
	for _, m := range srv.Mails() {
		if len(m.To) == 1 && m.To[0] == owner && strings.HasPrefix(m.Subject, "Your waitlist in") { // not the hand-back notice
			mails = append(mails, m)
		}
	}
	if len(mails) != 2 {
		t.Fatalf("%d mails to the owner, want 2 (November's, December's)", len(mails))
	}
	m := mails[1]
	if m.Subject != "Your waitlist in December 2026: 1 of 2 freed slots recovered" {
		t.Errorf("subject %q", m.Subject)
	}
	for _, want := range []string{dec.Narrative, "£45", "50%", "Cancellations by weekday", "https://nextup.test/dash/summaries/2026-12"} {
		if !strings.Contains(m.HTML, strings.ReplaceAll(want, "'", "&#39;")) {
			t.Errorf("the mail's HTML lacks %q", want)
		}
		if !strings.Contains(m.Text, want) && want != "Cancellations by weekday" {
			t.Errorf("the mail's text lacks %q", want)
		}
	}
	// The weekday bars: both cancellations fell on a Thursday (10 Dec),
	// so Thursday's bar is the widest and the rest are empty.
	if !strings.Contains(m.HTML, `Thu</td><td><table role="presentation" cellpadding="0" cellspacing="0"><tr><td width="240"`) {
		t.Errorf("no full bar for Thursday in %s", m.HTML)
	}
	n, err := b.svc.Summary(b.ctx, b.biz.ID, "2026-12")
	if err != nil {
		t.Fatal(err)
	}
	var msg nextup.Message
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		msg, err = tx.MessageGet(b.ctx, n.MessageID)
		return err
	}); err != nil || msg.Kind != insight.MessageSummary || msg.To != owner || msg.State != nextup.MessageSent {
		t.Errorf("December's summary's message %+v: %v", msg, err)
	}
	if _, err := b.svc.Summary(b.ctx, b.biz.ID, "2026-10"); nextup.ErrorCode(err) != nextup.CodeNotFound {
		t.Errorf("October's summary: %v, want not_found", err)
	}
}
