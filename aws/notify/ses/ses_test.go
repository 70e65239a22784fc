package ses_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/internal/sestest"
	"github.com/nextup-dev/nextup/aws/notify/ses"
	"github.com/nextup-dev/nextup/outbox"
)

const from = "Nextup <offers@salon.example>"

func sender(t *testing.T, c *sesv2.Client, configSet string) *ses.Sender {
	t.Helper()
	s, err := ses.New(ses.Config{From: from, ConfigurationSetName: configSet, Client: c})
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

const invite = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//nextup//EN\r\nMETHOD:PUBLISH\r\nBEGIN:VEVENT\r\nUID:bk_1@nextup\r\nDTSTAMP:20310310T140000Z\r\nDTSTART:20310311T140000Z\r\nDTEND:20310311T144500Z\r\nSUMMARY:Haircut at Salon\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

// A mail goes out as SMTP would send it: text and HTML, the invite, the
// unsubscribe headers and the outbox id, tagged for SES's events and in
// the configuration set.
func TestSendDelivers(t *testing.T) {
	t.Parallel()
	srv := sestest.Start(t)
	s := sender(t, srv.Client(), "nextup-events")
	m := msg("msg_5k2abc", "ada@example.com")
	m.HTML = `<p>Tap to <a href="https://nextup.example/c/tok">claim</a>.</p>`
	m.Calendar = invite
	m.UnsubscribeURL = "https://nextup.example/u/biz_1/tok"
	id, err := s.Send(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Emails(t)
	if len(got) != 1 {
		t.Fatalf("%d mails arrived, want 1", len(got))
	}
	e := got[0]
	if id == "" || id != e.MessageID {
		t.Errorf("provider id %q, SES's MessageId %q", id, e.MessageID)
	}
	if e.Subject != "A 2 pm chair is free" || len(e.To) != 1 || e.To[0] != "ada@example.com" ||
		len(e.Destination) != 1 || e.Destination[0] != "ada@example.com" || !strings.Contains(e.From, "offers@salon.example") {
		t.Errorf("subject %q from %q to %v destination %v", e.Subject, e.From, e.To, e.Destination)
	}
	if !strings.Contains(e.Text, "https://nextup.example/c/tok") || !strings.Contains(e.HTML, `<a href="https://nextup.example/c/tok">claim</a>`) {
		t.Errorf("text %q html %q", e.Text, e.HTML)
	}
	if len(e.Attachments) != 1 || e.Attachments[0].Filename != "invite.ics" || e.Attachments[0].ContentType != "text/calendar" ||
		!strings.Contains(string(e.Attachments[0].Content), "SUMMARY:Haircut at Salon") {
		t.Errorf("attachments %+v", e.Attachments)
	}
	if e.Tags[ses.TagMessageID] != "msg_5k2abc" || e.ConfigurationSet != "nextup-events" {
		t.Errorf("tags %v, configuration set %q", e.Tags, e.ConfigurationSet)
	}
	raw, err := mail.ReadMessage(bytes.NewReader(e.Raw))
	if err != nil {
		t.Fatalf("the raw message: %v", err)
	}
	for k, want := range map[string]string{
		"X-Nextup-Message-Id":   "msg_5k2abc",
		"Message-Id":            "<msg_5k2abc@salon.example>",
		"List-Unsubscribe":      "<https://nextup.example/u/biz_1/tok>",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
	} {
		if got := raw.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// An outbox id SES would refuse as a tag value sends the mail all the
// same, named by its header only.
func TestSendUntaggableID(t *testing.T) {
	t.Parallel()
	srv := sestest.Start(t)
	s := sender(t, srv.Client(), "")
	if _, err := s.Send(context.Background(), msg("imported.7", "bo@example.com")); err != nil {
		t.Fatal(err)
	}
	e := srv.Emails(t)[0]
	raw, err := mail.ReadMessage(bytes.NewReader(e.Raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Tags) != 0 || raw.Header.Get("X-Nextup-Message-Id") != "imported.7" || e.ConfigurationSet != "" {
		t.Errorf("tags %v, header %q, configuration set %q", e.Tags, raw.Header.Get("X-Nextup-Message-Id"), e.ConfigurationSet)
	}
}

func TestSendFailures(t *testing.T) {
	t.Parallel()
	srv := sestest.Start(t)
	refusals := map[string]*sestest.Error{
		"gone":      {Status: 400, Type: "MessageRejected", Message: "Address blacklisted."},
		"odd":       {Status: 400, Type: "BadRequestException", Message: "Domain contains illegal character"},
		"sandbox":   {Status: 400, Type: "MessageRejected", Message: "Email address is not verified. The following identities failed the check in region US-EAST-1: sandbox@example.com"},
		"virus":     {Status: 400, Type: "MessageRejected", Message: "Illegal filename 'invite.exe'"},
		"tag":       {Status: 400, Type: "BadRequestException", Message: "Invalid tag value <x y>: only alphanumeric ASCII characters, '_', and '-' are allowed."},
		"suspended": {Status: 400, Type: "AccountSuspendedException", Message: "Sending is suspended for this account."},
		"paused":    {Status: 400, Type: "SendingPausedException", Message: "Sending is paused for this account."},
		"mailfrom":  {Status: 400, Type: "MailFromDomainNotVerifiedException", Message: "MAIL FROM domain is not verified."},
		"gonecs":    {Status: 404, Type: "NotFoundException", Message: "Configuration set <nextup-events> does not exist."},
		"busy":      {Status: 429, Type: "TooManyRequestsException", Message: "Maximum sending rate exceeded."},
		"quota":     {Status: 400, Type: "LimitExceededException", Message: "Daily message quota exceeded."},
		"down":      {Status: 500, Type: "InternalServiceErrorException", Message: "Internal failure."},
	}
	srv.Refuse = func(to string) *sestest.Error {
		local, _, _ := strings.Cut(to, "@")
		return refusals[local]
	}
	s := sender(t, srv.Client(), "")
	for _, tc := range []struct {
		to   string
		code string // "" for a retried failure
		// refused: the address itself is to blame (outbox.AddressRefused).
		refused bool
	}{
		{to: "gone@example.com", code: "address_refused", refused: true},
		{to: "odd@example.com", code: "bad_address", refused: true},
		{to: "not an address", code: "bad_address", refused: true}, // refused before SES
		{to: "sandbox@example.com", code: "mail_refused"},
		{to: "virus@example.com", code: "mail_refused"},
		{to: "tag@example.com", code: "mail_refused"},
		{to: "suspended@example.com", code: "mail_refused"},
		{to: "paused@example.com", code: "mail_refused"},
		{to: "mailfrom@example.com", code: "mail_refused"},
		{to: "gonecs@example.com", code: "mail_refused"},
		{to: "busy@example.com"},
		{to: "quota@example.com"},
		{to: "down@example.com"},
	} {
		_, err := s.Send(context.Background(), msg("msg_1", tc.to))
		switch {
		case err == nil:
			t.Errorf("%s: sent", tc.to)
		case tc.code == "" && errors.Is(err, nextup.ErrInvalid):
			t.Errorf("%s: %v, want a temporary error", tc.to, err)
		case tc.code != "" && (!errors.Is(err, nextup.ErrInvalid) || nextup.ErrorCode(err) != tc.code):
			t.Errorf("%s: %v (code %q), want ErrInvalid %s", tc.to, err, nextup.ErrorCode(err), tc.code)
		case outbox.AddressRefused(err) != tc.refused:
			t.Errorf("%s: address refused %v, want %v", tc.to, outbox.AddressRefused(err), tc.refused)
		}
	}
	if n := len(srv.Emails(t)); n != 0 {
		t.Errorf("%d mails arrived, want none", n)
	}
}

// SES not answering is a passing failure.
func TestSendNoServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := sesv2.New(sesv2.Options{Region: "eu-west-1", BaseEndpoint: aws.String("http://" + addr), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), HTTPClient: &http.Client{Timeout: 5 * time.Second}})
	s := sender(t, c, "")
	if s.Account() != "ses:eu-west-1" {
		t.Errorf("account %q", s.Account())
	}
	_, err = s.Send(context.Background(), msg("msg_1", "ada@example.com"))
	if err == nil || errors.Is(err, nextup.ErrInvalid) {
		t.Errorf("no server: %v, want a temporary error", err)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	c := sesv2.New(sesv2.Options{Region: "us-east-1"})
	if _, err := ses.New(ses.Config{From: "not an address", Client: c}); err == nil {
		t.Error("a bad From address was taken")
	}
	if _, err := ses.New(ses.Config{From: from}); err == nil {
		t.Error("no client was taken")
	}
}
