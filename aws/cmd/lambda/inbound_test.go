package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// inboundBucket stands in for the S3 bucket an SES receipt rule writes
// inbound mail to (gofakes3, reached by the official S3 client).
func inboundBucket(t *testing.T) *s3mem.Backend {
	t.Helper()
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	if err := backend.CreateBucket("nextup-mail"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	return backend
}

// storeMail writes raw as SES's S3 action does and returns the S3 event
// that tells the function.
func storeMail(t *testing.T, b *s3mem.Backend, key string, raw []byte) []byte {
	t.Helper()
	if _, err := b.PutObject("nextup-mail", key, map[string]string{}, bytes.NewReader(raw), int64(len(raw)), nil); err != nil {
		t.Fatal(err)
	}
	ev := events.S3Event{Records: []events.S3EventRecord{{EventSource: "aws:s3", EventName: "ObjectCreated:Put", AWSRegion: "us-east-1",
		S3: events.S3Entity{Bucket: events.S3Bucket{Name: "nextup-mail"}, Object: events.S3Object{Key: url.QueryEscape(key), Size: int64(len(raw))}}}}}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return payload
}

// TestInboundMailFromS3: a request forwarded to {slug}@the inbound domain,
// stored in S3 by SES, becomes a proposal in that business's inbox lane,
// read by the same MIME parser and proposal lane as the SMTP listener's;
// told twice, it is still one proposal; mail for no business here
// changes nothing.
func TestInboundMailFromS3(t *testing.T) {
	s := newStack(t)
	bucket := inboundBucket(t)
	f, _ := s.function(t, func(c *config) { c.InboundDomain = "in.nextup.test" })
	biz := f.json("POST", "/v1/businesses", "adm", `{"name":"Inbox Cuts","timezone":"Europe/London"}`, 201)
	bid, key, slug := biz["id"].(string), biz["api_key"].(string), "inbox-cuts"
	f.json("PATCH", "/v1/businesses/"+bid, key, `{"slug":"`+slug+`"}`, 200)

	raw := []byte("Return-Path: <grace@example.com>\r\n" +
		"Received: from mail.example.com by inbound-smtp.us-east-1.amazonaws.com with SMTP id abc for " + slug + "@in.nextup.test; Wed, 04 Mar 2031 09:00:00 +0000 (UTC)\r\n" +
		"From: Grace Hopper <grace@example.com>\r\n" +
		"To: Front Desk <desk@example.com>\r\n" +
		"Subject: Fwd: any chance of an earlier haircut?\r\n" +
		"Date: Wed, 04 Mar 2031 09:00:00 +0000\r\n" +
		"Message-ID: <req-1@example.com>\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Hi, could you put me on the waitlist for a haircut? Any weekday afternoon.\r\nGrace Hopper\r\n07700 900123\r\n")
	ev := storeMail(t, bucket, "inbound/0001 abc+def", raw)
	for range 2 {
		out, err := f.h.Invoke(context.Background(), ev)
		if err != nil {
			t.Fatalf("S3 event: %v", err)
		}
		if !strings.Contains(string(out), `"delivered":1`) {
			t.Fatalf("S3 event: %s, want the mail delivered to one business", out)
		}
	}
	props := f.json("GET", "/v1/businesses/"+bid+"/proposals", key, "", 200)["proposals"].([]any)
	if len(props) != 1 {
		t.Fatalf("%d proposals after the mail was told twice, want 1: %v", len(props), props)
	}
	p := props[0].(map[string]any)
	if fields, _ := p["fields"].(map[string]any); fields["email"] != "grace@example.com" || !strings.Contains(p["excerpt"].(string), "earlier haircut") {
		t.Errorf("the proposal: %v", p)
	}

	other := storeMail(t, bucket, "inbound/0002", []byte("From: x@example.com\r\nTo: nobody@in.nextup.test\r\nSubject: hi\r\n\r\nhello\r\n"))
	out, err := f.h.Invoke(context.Background(), other)
	if err != nil || !strings.Contains(string(out), `"delivered":0`) {
		t.Errorf("mail for no business: %s %v", out, err)
	}
	if n := len(f.json("GET", "/v1/businesses/"+bid+"/proposals", key, "", 200)["proposals"].([]any)); n != 1 {
		t.Errorf("%d proposals after mail for no business, want 1", n)
	}
}

func TestRecipients(t *testing.T) {
	raw := []byte("Received: from a by b for <Salon-One@In.Example>; now\r\n" +
		"To: \"Desk\" <desk@in.example>, other@elsewhere.example\r\nCc: salon-one+fwd@in.example\r\n" +
		"Delivered-To: first@elsewhere.example\r\nDelivered-To: second+x@in.example\r\nSubject: x\r\n\r\nbody")
	got := recipients(raw, "in.example")
	if want := []string{"salon-one", "desk", "second"}; !slices.Equal(got, want) {
		t.Errorf("recipients: %v, want %v", got, want)
	}
	if got := recipients([]byte("not a mail"), "in.example"); len(got) != 0 {
		t.Errorf("recipients of junk: %v", got)
	}
}
