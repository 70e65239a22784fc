package ses_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup/aws/notify/ses"
	"github.com/nextup-dev/nextup/waitlist"
)

func TestParseFeedback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string // a file in testdata, or JSON
		want []ses.Feedback
		err  string
	}{
		{name: "event publishing: a permanent bounce, named by its tag", in: "bounce_event.json", want: []ses.Feedback{{
			MessageID: "msg_5k2abc", SESMessageID: "0100017a2b3c4d5e-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d-000000",
			Address: "ada@example.com", Kind: ses.PermanentBounce,
			Reason: "Permanent bounce; General; 5.1.1; smtp; 550 5.1.1 user unknown"}}},
		{name: "event publishing: a complaint", in: "complaint_event.json", want: []ses.Feedback{{
			MessageID: "msg_bo1", SESMessageID: "0100017a2b3c4d5e-2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e-000000",
			Address: "bo@example.com", Kind: ses.Complaint, Reason: "complaint; abuse"}}},
		{name: "identity notification: a transient bounce, named by its header", in: "bounce_notification.json", want: []ses.Feedback{{
			MessageID: "msg_cy1_fb", SESMessageID: "00000137860315fd-34208509-5b74-41f3-95c5-22c1edc3c924-000000",
			Address: "cy@example.com", Kind: ses.TransientBounce,
			Reason: "Transient bounce; MailboxFull; 4.2.2; smtp; 452 4.2.2 mailbox full"}}},
		{name: "identity notification without headers: the account's suppression list", in: "suppressed_notification.json", want: []ses.Feedback{{
			SESMessageID: "0100017a-1111-2222-3333-444444444444-000000", Address: "dee@example.com", Kind: ses.PermanentBounce,
			Reason: "Permanent bounce; OnAccountSuppressionList; 5.1.1; Amazon SES did not send the message to this address because it is on the suppression list for your account."}}},
		{name: "a delivery is no feedback", in: "delivery_event.json"},
		{name: "an undetermined bounce is transient", in: `{"eventType":"Bounce","bounce":{"bounceType":"Undetermined","bounceSubType":"Undetermined","bouncedRecipients":[{"emailAddress":"a@example.com"},{"emailAddress":"B@Example.com"},{"emailAddress":""}]},"mail":{"messageId":"m1","tags":{"nextup_message_id":["msg_1"]}}}`,
			want: []ses.Feedback{
				{MessageID: "msg_1", SESMessageID: "m1", Address: "a@example.com", Kind: ses.TransientBounce, Reason: "Undetermined bounce; Undetermined"},
				{MessageID: "msg_1", SESMessageID: "m1", Address: "B@Example.com", Kind: ses.TransientBounce, Reason: "Undetermined bounce; Undetermined"},
			}},
		{name: "the tag wins over the header", in: `{"eventType":"Complaint","complaint":{"complainedRecipients":[{"emailAddress":"a@example.com"}]},"mail":{"messageId":"m1","tags":{"nextup_message_id":["msg_tag"]},"headers":[{"name":"X-Nextup-Message-Id","value":"msg_header"}]}}`,
			want: []ses.Feedback{{MessageID: "msg_tag", SESMessageID: "m1", Address: "a@example.com", Kind: ses.Complaint, Reason: "complaint"}}},
		{name: "not JSON", in: `Bounce!`, err: "invalid character"},
		{name: "no type", in: `{"bounce":{"bounceType":"Permanent"}}`, err: "neither eventType nor notificationType"},
		{name: "a bounce without its bounce", in: `{"eventType":"Bounce","mail":{}}`, err: "without its bounce"},
		{name: "a complaint without its complaint", in: `{"notificationType":"Complaint","mail":{}}`, err: "without its complaint"},
		{name: "a bounce type of the wrong shape", in: `{"eventType":"Bounce","bounce":{"bounceType":1}}`, err: "cannot unmarshal"},
	} {
		in := []byte(tc.in)
		if strings.HasSuffix(tc.in, ".json") {
			var err error
			if in, err = os.ReadFile(filepath.Join("testdata", tc.in)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := ses.ParseFeedback(in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !reflect.DeepEqual(got, tc.want):
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// The kinds are the ones the use case takes.
func TestKindsAreMailFeedbacks(t *testing.T) {
	t.Parallel()
	if ses.PermanentBounce != waitlist.MailPermanentBounce || ses.TransientBounce != waitlist.MailTransientBounce || ses.Complaint != waitlist.MailComplaint {
		t.Errorf("ses kinds %q %q %q, waitlist's %q %q %q", ses.PermanentBounce, ses.TransientBounce, ses.Complaint,
			waitlist.MailPermanentBounce, waitlist.MailTransientBounce, waitlist.MailComplaint)
	}
}

// FuzzParseFeedback: whatever SNS hands over, ParseFeedback does not
// panic, gives feedback only without an error, and each feedback is whole
// (a known kind, an address) and survives being written back as an event
// and read again.
func FuzzParseFeedback(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed notifications: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"eventType":"Bounce","bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"\"A B\" <a@b.example>"},{"emailAddress":" x "}]},"mail":{"headers":[{"name":"x-nextup-message-id","value":" msg_1 "}]}}`))
	f.Add([]byte(`{"notificationType":"Complaint","complaint":{"complainedRecipients":[{"emailAddress":"a@b"}],"complaintFeedbackType":"abuse"},"mail":{"tags":{"nextup_message_id":[]}}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"eventType":"Bounce","bounce":null}`))
	kinds := map[ses.Kind]bool{ses.PermanentBounce: true, ses.TransientBounce: true, ses.Complaint: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ses.ParseFeedback(b)
		if err != nil {
			if got != nil {
				t.Fatalf("feedback %+v with the error %v", got, err)
			}
			return
		}
		again, _ := ses.ParseFeedback(b)
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("read twice: %+v then %+v", got, again)
		}
		for _, fb := range got {
			if !kinds[fb.Kind] || fb.Address == "" || fb.Address != strings.TrimSpace(fb.Address) || fb.MessageID != strings.TrimSpace(fb.MessageID) {
				t.Fatalf("feedback %+v", fb)
			}
			typ, bounceType := "Complaint", ""
			switch fb.Kind {
			case ses.PermanentBounce:
				typ, bounceType = "Bounce", "Permanent"
			case ses.TransientBounce:
				typ, bounceType = "Bounce", "Transient"
			}
			ev := map[string]any{
				"eventType": typ,
				"bounce":    map[string]any{"bounceType": bounceType, "bouncedRecipients": []any{map[string]string{"emailAddress": fb.Address}}},
				"complaint": map[string]any{"complainedRecipients": []any{map[string]string{"emailAddress": fb.Address}}},
				"mail":      map[string]any{"messageId": fb.SESMessageID, "tags": map[string][]string{ses.TagMessageID: {fb.MessageID}}},
			}
			eb, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ses.ParseFeedback(eb)
			if err != nil || len(back) != 1 || back[0].MessageID != fb.MessageID || back[0].Address != fb.Address ||
				back[0].Kind != fb.Kind || back[0].SESMessageID != fb.SESMessageID {
				t.Fatalf("%+v written back and read: %+v, %v", fb, back, err)
			}
		}
	})
}
