package twilio_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/twilio"
	"github.com/nextup-dev/nextup/notify/twilio/twiliotest"
	"github.com/nextup-dev/nextup/outbox"
)

func setup(t *testing.T, cfg twilio.Config) (*twilio.Sender, *twiliotest.Server) {
	t.Helper()
	fake := twiliotest.Start(t)
	cfg.AccountSID, cfg.AuthToken, cfg.APIBase = twiliotest.AccountSID, twiliotest.AuthToken, fake.URL
	s, err := twilio.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, fake
}

func TestSendThroughTheSDK(t *testing.T) {
	t.Parallel()
	s, fake := setup(t, twilio.Config{From: "+15005550006", StatusCallback: "https://nextup.example/v1/twilio/status"})
	id, err := s.Send(context.Background(), nextup.Message{ID: "msg_1", Channel: nextup.ChannelSMS, To: "+447700900123",
		Body: "Corner Cuts: a 2 pm haircut is free. Claim it until 4:10 pm: https://nextup.example/c/tok"})
	if err != nil {
		t.Fatal(err)
	}
	got := fake.Wait(t, 1, 5*time.Second)[0]
	if id != got.SID || s.Channel() != nextup.ChannelSMS {
		t.Fatalf("provider id %q, the fake's %q", id, got.SID)
	}
	if got.To != "+447700900123" || got.From != "+15005550006" || !strings.Contains(got.Body, "/c/tok") ||
		got.StatusHook != "https://nextup.example/v1/twilio/status?message=msg_1" {
		t.Fatalf("request %+v", got)
	}
}

func TestSendWithMessagingService(t *testing.T) {
	t.Parallel()
	s, fake := setup(t, twilio.Config{MessagingServiceSID: "MG0000000000000000000000000000000a"})
	if _, err := s.Send(context.Background(), nextup.Message{ID: "m", To: "+447700900123", Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	if got := fake.Texts()[0]; got.MessagingServiceSID != "MG0000000000000000000000000000000a" || got.From != "" {
		t.Fatalf("request %+v", got)
	}
}

func TestSendFailures(t *testing.T) {
	t.Parallel()
	s, fake := setup(t, twilio.Config{From: "+15005550006"})
	fake.Fail = func(to string) (int, int) {
		switch to {
		case "+447700900001":
			return 400, 21610 // replied STOP
		case "+447700900002":
			return 400, 21211 // not a valid number
		case "+447700900003":
			return 429, 20429 // too many requests
		case "+447700900004":
			return 503, 20500
		}
		return 0, 0
	}
	for to, permanent := range map[string]bool{"+447700900001": true, "+447700900002": true, "+447700900003": false, "+447700900004": false} {
		_, err := s.Send(context.Background(), nextup.Message{ID: "m", To: to, Body: "hi"})
		if err == nil || errors.Is(err, nextup.ErrInvalid) != permanent {
			t.Errorf("to %s: %v, want permanent=%v", to, err, permanent)
		}
	}
	if n := len(fake.Texts()); n != 0 {
		t.Fatalf("%d refused texts recorded as sent", n)
	}
	// Wrong credentials are Twilio's 401, retried (a config error staff see
	// in the message's last error, not a dead letter per text).
	bad, err := twilio.New(twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: "ffffffffffffffffffffffffffffffff", From: "+15005550006", APIBase: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Send(context.Background(), nextup.Message{ID: "m", To: "+447700900123", Body: "hi"}); err == nil || errors.Is(err, nextup.ErrInvalid) || !strings.Contains(err.Error(), "20003") {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestNewRefusesHalfAConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []twilio.Config{
		{AuthToken: twiliotest.AuthToken, From: "+15005550006"},
		{AccountSID: twiliotest.AccountSID, AuthToken: twiliotest.AuthToken},
		{AccountSID: twiliotest.AccountSID, AuthToken: twiliotest.AuthToken, From: "+1", MessagingServiceSID: "MG1"},
		{AccountSID: twiliotest.AccountSID, AuthToken: twiliotest.AuthToken, From: "+1", APIBase: "::nope"},
	} {
		if _, err := twilio.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// The relay's rate limit is per Twilio account: senders on one account
// (another number, a Messaging Service) name the same one.
func TestAccountIsTheAccountSID(t *testing.T) {
	t.Parallel()
	var _ outbox.Accounter = (*twilio.Sender)(nil)
	account := func(cfg twilio.Config) string {
		t.Helper()
		cfg.AuthToken = twiliotest.AuthToken
		s, err := twilio.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s.Account()
	}
	a := account(twilio.Config{AccountSID: twiliotest.AccountSID, From: "+15005550006"})
	if a != "twilio:"+twiliotest.AccountSID {
		t.Errorf("Account() = %q", a)
	}
	if b := account(twilio.Config{AccountSID: twiliotest.AccountSID, MessagingServiceSID: "MG1"}); b != a {
		t.Errorf("another sender on the account: %q, want %q", b, a)
	}
	if c := account(twilio.Config{AccountSID: "AC2", From: "+15005550006"}); c == a {
		t.Errorf("another account: %q, the same as the first", c)
	}
}
