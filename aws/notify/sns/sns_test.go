package sns_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/internal/snstest"
	"github.com/nextup-dev/nextup/aws/notify/sns"
	"github.com/nextup-dev/nextup/outbox"
)

func sender(t *testing.T, cfg sns.Config) *sns.Sender {
	t.Helper()
	s, err := sns.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func msg(id, to string) nextup.Message {
	return nextup.Message{ID: id, Channel: nextup.ChannelSMS, To: to,
		Body: "Salon: a 2 pm chair is free. Tap to claim: https://nextup.example/c/tok"}
}

func TestSendTexts(t *testing.T) {
	t.Parallel()
	srv := snstest.Start(t)
	s := sender(t, sns.Config{Client: srv.Client(), SenderID: "Salon", OriginationNumber: "+447700900001"})
	id, err := s.Send(context.Background(), msg("msg_1", "+447700900111"))
	if err != nil {
		t.Fatal(err)
	}
	texts := srv.Texts()
	if len(texts) != 1 {
		t.Fatalf("%d texts, want 1", len(texts))
	}
	got := texts[0]
	if got.MessageID != id || got.PhoneNumber != "+447700900111" || got.Message != msg("", "").Body || got.Dropped {
		t.Errorf("text %+v, provider id %q", got, id)
	}
	for k, want := range map[string]string{
		"AWS.SNS.SMS.SMSType":          "Transactional",
		"AWS.SNS.SMS.SenderID":         "Salon",
		"AWS.MM.SMS.OriginationNumber": "+447700900001",
	} {
		if got.Attributes[k] != want {
			t.Errorf("attribute %s = %q, want %q", k, got.Attributes[k], want)
		}
	}
	if srv.Checks() != 1 {
		t.Errorf("%d opt-out checks, want 1 before the text", srv.Checks())
	}

	// Without a sender id or origination number, neither is sent.
	s = sender(t, sns.Config{Client: srv.Client()})
	if _, err := s.Send(context.Background(), msg("msg_2", "+447700900222")); err != nil {
		t.Fatal(err)
	}
	got = srv.Texts()[1]
	if len(got.Attributes) != 1 || got.Attributes["AWS.SNS.SMS.SMSType"] != "Transactional" {
		t.Errorf("attributes %v, want the SMS type only", got.Attributes)
	}
}

// A number on SNS's own opt-out list gets nothing: the message is dead as
// opted out, which the relay takes as the address's (it falls back to the
// person's other channel).
func TestSendOptedOut(t *testing.T) {
	t.Parallel()
	srv := snstest.Start(t)
	srv.OptOut("+447700900333")
	s := sender(t, sns.Config{Client: srv.Client()})
	_, err := s.Send(context.Background(), msg("msg_1", "+447700900333"))
	if !errors.Is(err, nextup.ErrInvalid) || nextup.ErrorCode(err) != outbox.CodeOptedOut || !outbox.AddressRefused(err) {
		t.Fatalf("opted-out number: %v (code %q), want ErrInvalid opted_out", err, nextup.ErrorCode(err))
	}
	if n := len(srv.Texts()); n != 0 {
		t.Errorf("%d texts published, want none", n)
	}
}

func TestSendFailures(t *testing.T) {
	t.Parallel()
	srv := snstest.Start(t)
	srv.Fail = func(action, phone string) *snstest.Error {
		switch {
		case phone == "+447700900444" && action == "Publish":
			return &snstest.Error{Status: 400, Type: "Sender", Code: "Throttling", Message: "Rate exceeded"}
		case phone == "+447700900555" && action == "CheckIfPhoneNumberIsOptedOut":
			return &snstest.Error{Status: 429, Type: "Sender", Code: "Throttled", Message: "Rate exceeded"}
		case phone == "+447700900666":
			return &snstest.Error{Status: 500, Type: "Receiver", Code: "InternalError", Message: "Internal failure"}
		case phone == "+447700900777" && action == "Publish":
			return &snstest.Error{Status: 400, Type: "Sender", Code: "InvalidParameter", Message: "Invalid parameter: Message too long"}
		case phone == "+447700900888" && action == "Publish":
			return &snstest.Error{Status: 400, Type: "Sender", Code: "ParameterValueInvalid", Message: "The message attribute 'AWS.MM.SMS.OriginationNumber' has an invalid message attribute value"}
		}
		return nil
	}
	s := sender(t, sns.Config{Client: srv.Client()})
	for _, tc := range []struct {
		to, code string // code "" for a retried failure
		refused  bool   // the number itself is to blame
	}{
		{to: "07700 900999", code: "bad_address", refused: true}, // not E.164
		{to: "+447700900444"},
		{to: "+447700900555"},
		{to: "+447700900666"},
		{to: "+447700900777", code: "sms_rejected"},
		{to: "+447700900888", code: "sms_rejected"},
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
	if n := len(srv.Texts()); n != 0 {
		t.Errorf("%d texts published, want none", n)
	}
}

// A number SNS takes for the opt-out check but refuses to publish to is
// the number's fault too.
func TestSendPublishRefusesNumber(t *testing.T) {
	t.Parallel()
	srv := snstest.Start(t)
	srv.Fail = func(action, phone string) *snstest.Error {
		if action == "Publish" {
			return &snstest.Error{Status: 400, Type: "Sender", Code: "InvalidParameter", Message: "Invalid parameter: PhoneNumber Reason: " + phone + " is not valid to publish to"}
		}
		return nil
	}
	_, err := sender(t, sns.Config{Client: srv.Client()}).Send(context.Background(), msg("msg_1", "+15550100"))
	if nextup.ErrorCode(err) != "bad_address" || !outbox.AddressRefused(err) {
		t.Fatalf("%v, want ErrInvalid bad_address", err)
	}
}

func TestSendNoServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := awssns.New(awssns.Options{Region: "eu-west-2", BaseEndpoint: aws.String("http://" + addr), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), HTTPClient: &http.Client{Timeout: 5 * time.Second}})
	s := sender(t, sns.Config{Client: c})
	if s.Account() != "sns:eu-west-2" {
		t.Errorf("account %q", s.Account())
	}
	_, err = s.Send(context.Background(), msg("msg_1", "+447700900111"))
	if err == nil || errors.Is(err, nextup.ErrInvalid) {
		t.Errorf("no server: %v, want a temporary error", err)
	}
	if _, err := sns.New(sns.Config{}); err == nil {
		t.Error("no client was taken")
	}
}
