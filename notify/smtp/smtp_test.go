package smtp_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/smtp"
	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/outbox"
)

func sender(t *testing.T, addr string) *smtp.Sender {
	t.Helper()
	cfg, err := smtp.ParseURL("smtp://"+addr+"?tls=none", "Nextup <offers@salon.example>")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	s, err := smtp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func msg(id, to string) nextup.Message {
	return nextup.Message{ID: id, Channel: nextup.ChannelEmail, To: to, Subject: "A 2 pm chair is free",
		Body:      "Tap to claim: https://nextup.example/c/tok\nUntil 4:10 pm.",
		CreatedAt: time.Date(2031, 3, 10, 14, 0, 0, 0, time.UTC)}
}

func TestSendDelivers(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	s := sender(t, srv.Addr)
	id, err := s.Send(context.Background(), msg("msg_1", "ada@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if id != "msg_1@salon.example" {
		t.Errorf("provider id = %q", id)
	}
	m := srv.Wait(t, 1, 5*time.Second)[0]
	if m.MessageID != "msg_1@salon.example" || m.Header.Get("X-Nextup-Message-Id") != "msg_1" {
		t.Errorf("Message-ID %q, X-Nextup-Message-Id %q", m.MessageID, m.Header.Get("X-Nextup-Message-Id"))
	}
	if m.From != "offers@salon.example" || len(m.To) != 1 || m.To[0] != "ada@example.com" {
		t.Errorf("envelope from %q to %v", m.From, m.To)
	}
	if m.Subject != "A 2 pm chair is free" || !strings.Contains(m.Text, "https://nextup.example/c/tok") {
		t.Errorf("subject %q text %q", m.Subject, m.Text)
	}
	if d, err := m.Header.Date(); err != nil || !d.Equal(time.Date(2031, 3, 10, 14, 0, 0, 0, time.UTC)) {
		t.Errorf("Date %v, %v", d, err)
	}
}

// Sending one outbox message twice (a relay that crashed before recording
// the first send) delivers two copies with one Message-ID.
func TestSendTwiceSameMessageID(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	s := sender(t, srv.Addr)
	for range 2 {
		if _, err := s.Send(context.Background(), msg("msg_7", "bo@example.com")); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Wait(t, 2, 5*time.Second)
	if got[0].MessageID != got[1].MessageID || got[0].MessageID != s.MessageID("msg_7") {
		t.Errorf("Message-IDs %q and %q", got[0].MessageID, got[1].MessageID)
	}
}

func TestSendFailures(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	srv.Reject = func(rcpt string) error {
		switch {
		case strings.HasPrefix(rcpt, "gone@"):
			return &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
		case strings.HasPrefix(rcpt, "busy@"):
			return &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "try later"}
		case strings.HasPrefix(rcpt, "far@"):
			return &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 7, 1}, Message: "relay denied"}
		}
		return nil
	}
	s := sender(t, srv.Addr)
	ctx := context.Background()

	_, err := s.Send(ctx, msg("m1", "gone@example.com"))
	if !errors.Is(err, nextup.ErrInvalid) || nextup.ErrorCode(err) != "address_refused" {
		t.Errorf("550 5.1.1 recipient: %v, want ErrInvalid address_refused (permanent, the address's fault)", err)
	}
	// A policy refusal is permanent too, but not the address's fault.
	_, err = s.Send(ctx, msg("m5", "far@example.com"))
	if !errors.Is(err, nextup.ErrInvalid) || nextup.ErrorCode(err) != "mail_refused" {
		t.Errorf("550 5.7.1 recipient: %v, want ErrInvalid mail_refused", err)
	}
	_, err = s.Send(ctx, msg("m2", "busy@example.com"))
	if err == nil || errors.Is(err, nextup.ErrInvalid) {
		t.Errorf("451 recipient: %v, want a temporary error", err)
	}
	_, err = s.Send(ctx, msg("m3", "not an address"))
	if !errors.Is(err, nextup.ErrInvalid) {
		t.Errorf("bad address: %v, want ErrInvalid", err)
	}
	if n := len(srv.Mails()); n != 0 {
		t.Errorf("%d mails arrived, want none", n)
	}

	// A server that is not there is a temporary failure.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = sender(t, addr).Send(ctx, msg("m4", "ada@example.com"))
	if err == nil || errors.Is(err, nextup.ErrInvalid) {
		t.Errorf("no server: %v, want a temporary error", err)
	}
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, from string
		want      smtp.Config
		err       string
	}{
		{url: "smtp://mail.example:2525", from: "a@b.example",
			want: smtp.Config{Host: "mail.example", Port: 2525, TLS: "starttls", From: "a@b.example"}},
		{url: "smtp://u%40x:p%3Ass@mail.example", from: "a@b.example",
			want: smtp.Config{Host: "mail.example", Port: 587, Username: "u@x", Password: "p:ss", TLS: "starttls", From: "a@b.example"}},
		{url: "smtps://mail.example", from: "a@b.example",
			want: smtp.Config{Host: "mail.example", Port: 465, TLS: "tls", From: "a@b.example"}},
		{url: "smtp://mail.example?tls=require", from: "a@b.example",
			want: smtp.Config{Host: "mail.example", Port: 587, TLS: "require", From: "a@b.example"}},
		{url: "http://mail.example", from: "a@b.example", err: "scheme"},
		{url: "smtp://mail.example:99999", from: "a@b.example", err: "port"},
		{url: "smtp://mail.example?tls=maybe", from: "a@b.example", err: "tls"},
		{url: "smtps://mail.example?tls=none", from: "a@b.example", err: "tls"},
		{url: "smtp://", from: "a@b.example", err: "host"},
		{url: "smtp://mail.example", from: "", err: "From"},
		{url: "smtp://mail.example", from: "nobody", err: "From"},
	} {
		got, err := smtp.ParseURL(tc.url, tc.from)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURL(%q, %q) = %v, want error about %s", tc.url, tc.from, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseURL(%q, %q) = %+v, %v; want %+v", tc.url, tc.from, got, err, tc.want)
		}
	}
}

// The relay's rate limit is per login at a mail server.
func TestAccountIsTheLoginAtTheServer(t *testing.T) {
	t.Parallel()
	var _ outbox.Accounter = (*smtp.Sender)(nil)
	for _, tc := range []struct{ url, want string }{
		{"smtp://mail.example", "smtp:mail.example:587"},
		{"smtp://u%40x:secret@mail.example:2525", "smtp:u@x@mail.example:2525"},
		{"smtps://offers:secret@mail.example", "smtp:offers@mail.example:465"},
		{"smtp://offers:other@[::1]:25", "smtp:offers@[::1]:25"},
	} {
		cfg, err := smtp.ParseURL(tc.url, "a@b.example")
		if err != nil {
			t.Fatal(err)
		}
		s, err := smtp.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Account(); got != tc.want || strings.Contains(got, "secret") {
			t.Errorf("Account() of %s = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	f.Add("smtp://u:p@mail.example:25?tls=none", "a@b.example")
	f.Add("smtps://mail.example", "Name <a@b.example>")
	f.Add("smtp://[::1]:2525", "x")
	f.Fuzz(func(t *testing.T, url, from string) {
		c, err := smtp.ParseURL(url, from)
		if err != nil {
			return
		}
		if c.Host == "" || c.Port < 1 || c.Port > 65535 || c.From != from {
			t.Fatalf("accepted %q, %q as %+v", url, from, c)
		}
		if _, err := smtp.New(c); err != nil {
			t.Fatalf("ParseURL accepted a config New refuses: %v", err)
		}
	})
}

// A message with every part arrives as text and HTML alternatives, the
// invite as a valid iCalendar attachment, and the RFC 8058 headers.
func TestSendMultipartInviteUnsubscribe(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	s := sender(t, srv.Addr)
	m := msg("msg_9", "cy@example.com")
	m.HTML = `<p>Tap to <a href="https://nextup.example/c/tok">claim</a>.</p>`
	m.Calendar = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//nextup//booking//EN\r\nMETHOD:PUBLISH\r\n" +
		"BEGIN:VEVENT\r\nUID:bkg_1@nextup\r\nDTSTAMP:20310310T140000Z\r\nDTSTART:20310311T150000Z\r\n" +
		"DTEND:20310311T160000Z\r\nSUMMARY:Cut with Anna — Salon\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	m.UnsubscribeURL = "https://nextup.example/u/biz_1/tok"
	if _, err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := srv.Wait(t, 1, 5*time.Second)[0]
	if !strings.Contains(got.Text, "https://nextup.example/c/tok") || !strings.Contains(got.HTML, `href="https://nextup.example/c/tok"`) {
		t.Errorf("text %q html %q", got.Text, got.HTML)
	}
	if ct, _, _ := got.Header.ContentType(); ct != "multipart/mixed" {
		t.Errorf("Content-Type %q, want multipart/mixed", ct)
	}
	if len(got.Attachments) != 1 {
		t.Fatalf("attachments %+v", got.Attachments)
	}
	a := got.Attachments[0]
	if a.Filename != "invite.ics" || a.ContentType != "text/calendar" || a.Params["method"] != "PUBLISH" {
		t.Errorf("attachment %q %q %v", a.Filename, a.ContentType, a.Params)
	}
	cal, err := ics.ParseCalendar(bytes.NewReader(a.Body))
	if err != nil {
		t.Fatalf("invite is not iCalendar: %v\n%s", err, a.Body)
	}
	if evs := cal.Events(); len(evs) != 1 || evs[0].Id() != "bkg_1@nextup" {
		t.Errorf("events %d", len(evs))
	}
	if u := got.Header.Get("List-Unsubscribe"); u != "<https://nextup.example/u/biz_1/tok>" {
		t.Errorf("List-Unsubscribe %q", u)
	}
	if p := got.Header.Get("List-Unsubscribe-Post"); p != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", p)
	}
}
