package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// The outbox's backlog and the time to drain it at each channel's rate:
// 40 texts and 3 emails wait, texts go at 10 a second, emails unpaced.
// /metrics has both backlogs and the texts' 4 s; the owner's Today page
// says it in words. With nothing waiting the page says nothing of it.
func TestOutboxBacklog(t *testing.T) {
	t.Parallel()
	var svc *waitlist.Service
	metrics := (*web.Metrics)(nil)
	rates := map[nextup.Channel]float64{nextup.ChannelSMS: 10}
	a := setup(t, func(s *web.Server) {
		svc, metrics = s.Svc, web.NewMetrics(s.Store)
		s.Metrics, s.SendRates = metrics, rates
		svc.PasswordCost = bcrypt.MinCost
		metrics.SetSendRates(rates)
	})
	sb := &staffBundle{api: a, svc: svc, email: "owner@salon.example", pass: "correct horse battery"}
	if _, err := svc.AddStaff(context.Background(), waitlist.AddStaffParams{BusinessID: a.bid, Email: sb.email, Name: "Olive", Password: sb.pass}); err != nil {
		t.Fatal(err)
	}
	b := sb.client()
	if d := sb.signIn(b, sb.email, sb.pass); strings.Contains(d.body, `id="backlog"`) {
		t.Errorf("the Today page shows a backlog with nothing waiting")
	}
	now := a.clock.Now()
	for i := range 43 {
		m := nextup.Message{ID: fmt.Sprintf("msg_%02d", i), BusinessID: a.bid, Kind: nextup.MessageOffer, Channel: nextup.ChannelSMS,
			To: fmt.Sprintf("+4477009001%02d", i), Body: "A slot opened", State: nextup.MessageQueued, NotBefore: now, NextAttemptAt: now, CreatedAt: now}
		if i >= 40 {
			m.Channel, m.To = nextup.ChannelEmail, fmt.Sprintf("p%d@example.com", i)
		}
		if err := a.store.InTx(context.Background(), func(tx nextup.Tx) error { return tx.MessageCreate(context.Background(), m) }); err != nil {
			t.Fatal(err)
		}
	}
	text := string(a.do("GET", "/metrics", "", "").body)
	for _, want := range []string{
		`nextup_outbox_backlog{channel="sms"} 40`,
		`nextup_outbox_backlog{channel="email"} 3`,
		`nextup_outbox_drain_seconds{channel="sms"} 4`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `nextup_outbox_drain_seconds{channel="email"}`) {
		t.Errorf("a drain time for unpaced email")
	}
	d := b.do("GET", "/dash", nil)
	if want := "Waiting to go out: 40 texts (about 4 s at 10 a second) and 3 emails."; !strings.Contains(d.body, want) {
		t.Errorf("the Today page lacks %q", want)
	}
	if live := b.do("GET", "/dash/live", nil); !strings.Contains(live.body, "40 texts") {
		t.Errorf("the live refresh lacks the backlog")
	}
}
