package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/aws/internal/schedtest"
	"github.com/nextup-dev/nextup/aws/internal/sestest"
	"github.com/nextup-dev/nextup/aws/internal/snstest"
	"github.com/nextup-dev/nextup/aws/internal/sqstest"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
)

// emulated is the bootstrap binary running behind the Lambda Runtime API
// of AWS's Runtime Interface Emulator, with every service it calls on a
// local stand-in: DynamoDB on dynoxide, SES on aws-ses-v2-local, SNS texts
// on snstest, EventBridge Scheduler on schedtest, SQS on sqstest, Secrets
// Manager on secretsServer, S3 on gofakes3. The test plays the parts AWS
// plays between the services: the Function URL, the SQS event source
// mapping, Scheduler firing, S3 telling of an object.
type emulated struct {
	t      *testing.T
	url    string // the emulator's invoke URL
	logs   *syncBuffer
	sched  *schedtest.Server
	sqs    *sqstest.Server
	queue  string
	ses    *sestest.Server
	sns    *snstest.Server
	bucket *s3mem.Backend

	mu  sync.Mutex
	now time.Time // the function's clock, as it last said
}

func startEmulated(t *testing.T) *emulated {
	t.Helper()
	emulator := rie(t)
	e := &emulated{t: t, logs: &syncBuffer{}}
	e.ses = sestest.Start(t)
	e.sns = snstest.Start(t)
	e.sched = schedtest.New(t, "nextup")
	e.sqs = sqstest.New(t, "nextup-send")
	e.sqs.Now = e.clock
	e.queue = e.sqs.QueueURL("nextup-send")
	arn := "arn:aws:secretsmanager:us-east-1:123456789012:secret:nextup-story"
	secrets, _ := secretsServer(t, arn, `{"admin_token":"story-admin"}`)
	e.bucket = inboundBucket(t) // sets AWS_ENDPOINT_URL_S3, for the child too

	dir := t.TempDir()
	bin := filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	db := fmt.Sprintf("dynamodb://%s/%s-?region=us-east-1", dynotest.Addr(t), dynotest.Table(t))
	st, err := dynamo.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	addr, api := freePort(t), freePort(t)
	cmd := exec.Command(emulator, "--runtime-interface-emulator-address", addr, "--runtime-api-address", api, bin)
	cmd.Env = append(os.Environ(),
		"NEXTUP_DB="+db, "NEXTUP_BASE_URL=https://abc.lambda-url.us-east-1.on.aws", "NEXTUP_SECRETS_ARN="+arn,
		"NEXTUP_SCHEDULE_GROUP=nextup", "NEXTUP_SCHEDULE_ROLE_ARN="+roleARN, "NEXTUP_SCHEDULE_TARGET_ARN="+timerARN,
		"NEXTUP_SCHEDULE_DLQ_ARN="+dlqARN, "NEXTUP_SEND_QUEUE_URL="+e.queue,
		"NEXTUP_MAIL_FROM=Story Cuts <waitlist@mail.nextup.test>", "NEXTUP_SES_CONFIGURATION_SET=nextup",
		"NEXTUP_SMS_SENDER_ID=StoryCuts", "NEXTUP_INBOUND_DOMAIN=in.nextup.test", "NEXTUP_CLOCK=fake",
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1",
		"AWS_ENDPOINT_URL_SESV2="+e.ses.URL, "AWS_ENDPOINT_URL_SNS="+e.sns.URL, "AWS_ENDPOINT_URL_SCHEDULER="+e.sched.URL,
		"AWS_ENDPOINT_URL_SQS="+e.sqs.URL, "AWS_ENDPOINT_URL_SECRETS_MANAGER="+secrets.URL)
	cmd.Stdout, cmd.Stderr = e.logs, e.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("emulator:\n%s", e.logs.String())
		}
	})
	e.url = "http://" + addr + "/2015-03-31/functions/function/invocations"
	// The emulator listens at once and starts the bootstrap at the first
	// invocation.
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator never listened: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling a process start
	}
	return e
}

func (e *emulated) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

// invoke sends one event to the function and returns its answer.
func (e *emulated) invoke(payload []byte) []byte {
	e.t.Helper()
	var res *http.Response
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		res, err = http.Post(e.url, "application/json", bytes.NewReader(payload))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling the emulator's start
	}
	if err != nil {
		e.t.Fatalf("invoke: %v", err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || bytes.Contains(raw, []byte(`"errorMessage"`)) {
		e.t.Fatalf("the function failed: %d %s", res.StatusCode, raw)
	}
	return raw
}

// http sends a Function URL request (payload 2.0).
func (e *emulated) http(method, path, key, body string, want int) map[string]any {
	e.t.Helper()
	raw, query, _ := strings.Cut(path, "?")
	ev := events.LambdaFunctionURLRequest{Version: "2.0", RawPath: raw, RawQueryString: query, Body: body,
		Headers: map[string]string{"content-type": "application/json", "host": "abc.lambda-url.us-east-1.on.aws"},
		RequestContext: events.LambdaFunctionURLRequestContext{DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: raw, SourceIP: "203.0.113.7"}}}
	if key != "" {
		ev.Headers["authorization"] = "Bearer " + key
	}
	payload, _ := json.Marshal(ev)
	var out events.LambdaFunctionURLResponse
	if err := json.Unmarshal(e.invoke(payload), &out); err != nil || out.StatusCode != want {
		e.t.Fatalf("%s %s: %d %s (%v), want %d", method, path, out.StatusCode, out.Body, err, want)
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(out.Body), &m)
	return m
}

// advance moves the function's clock (NEXTUP_CLOCK=fake) and nothing else.
func (e *emulated) advance(d time.Duration) {
	e.t.Helper()
	var res struct{ Now time.Time }
	if err := json.Unmarshal(e.invoke(fmt.Appendf(nil, `{"nextup":"clock","advance_seconds":%d}`, int64(d/time.Second))), &res); err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	e.now = res.Now
	e.mu.Unlock()
}

// deliver plays the SQS event source mapping: what is visible now goes to
// the function in one event (records may be given again by the test).
func (e *emulated) deliver(extra ...sqstest.Message) []sqstest.Message {
	e.t.Helper()
	msgs := append(e.sqs.Take(e.queue, e.clock()), extra...)
	if len(msgs) == 0 {
		return nil
	}
	var ev events.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: m.ID, Body: m.Body, EventSource: "aws:sqs"})
	}
	payload, _ := json.Marshal(ev)
	var res events.SQSEventResponse
	if err := json.Unmarshal(e.invoke(payload), &res); err != nil || len(res.BatchItemFailures) != 0 {
		e.t.Fatalf("SQS event: failures %v (%v)", res.BatchItemFailures, err)
	}
	return msgs
}

// fire plays EventBridge Scheduler at the function's time.
func (e *emulated) fire() int {
	e.t.Helper()
	n, err := e.sched.Fire(context.Background(), e.clock(), func(_ context.Context, sc schedtest.Schedule) error {
		e.invoke([]byte(sc.Target.Input))
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// mailTo returns the mails SES took for an address, oldest first.
func (e *emulated) mailTo(to string) []sestest.Email {
	e.t.Helper()
	var out []sestest.Email
	for _, m := range e.ses.Emails(e.t) {
		for _, d := range m.Destination {
			if d == to {
				out = append(out, m)
			}
		}
	}
	return out
}

var claimLink = regexp.MustCompile(`https://abc\.lambda-url\.us-east-1\.on\.aws/c/([A-Za-z0-9_-]+)`)

// TestLambdaStory is the deployment's end-to-end story, on the built
// bootstrap under the Runtime Interface Emulator: a business is created
// and a slot released through Function URL events; the offer email
// arrives in SES; its claim link is accepted through a Function URL event;
// the confirmation arrives; an unclaimed offer rolls on when Scheduler
// fires its schedule, and the next person's text goes by SNS; an SQS
// record delivered twice sends once; a schedule lost on purpose is still
// fired by the sweep; a forwarded request stored in S3 becomes a proposal.
// The first invocation's time and the emulator's Init Duration are logged.
func TestLambdaStory(t *testing.T) {
	e := startEmulated(t)
	start := time.Now() // measurement, not logic
	e.advance(0)
	cold := time.Since(start)

	biz := e.http("POST", "/v1/businesses", "story-admin", `{"name":"Story Cuts","timezone":"Europe/London","rules":{"quiet_hours":null,"claim_window_seconds":600}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	e.http("PATCH", "/v1/businesses/"+bid, key, `{"slug":"story-cuts"}`, 200)
	for _, who := range []string{`"name":"Ada","email":"ada@example.com"`, `"name":"Grace","email":"grace@example.com"`, `"name":"Linus","phone":"+447700900123"`} {
		e.http("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{`+who+`,"service":"haircut"}`, 201)
	}
	e.deliver() // any join confirmations
	slot := func(day int) string {
		return e.http("POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"haircut","starts_at":"%[1]s-%02[2]dT14:00:00Z","ends_at":"%[1]s-%02[2]dT14:45:00Z"}`, monthAhead(), day), 201)["id"].(string)
	}

	// A release offers the slot to Ada; the offer email goes by SQS and SES.
	warmStart := time.Now()
	e.http("POST", "/v1/slots/"+slot(5)+":release", key, `{"reason":"cancellation"}`, 200)
	warm := time.Since(warmStart)
	if got := e.deliver(); len(got) != 1 {
		t.Fatalf("%d SQS records after the release, want 1 (the offer)", len(got))
	}
	offers := e.mailTo("ada@example.com")
	if len(offers) != 1 {
		t.Fatalf("%d mails to Ada after the release, want the offer", len(offers))
	}
	m := claimLink.FindStringSubmatch(offers[0].Text)
	if m == nil {
		t.Fatalf("no claim link in the offer mail:\n%s", offers[0].Text)
	}
	if offers[0].Tags["nextup_message_id"] == "" || offers[0].ConfigurationSet != "nextup" {
		t.Errorf("the offer mail's tags %v and configuration set %q", offers[0].Tags, offers[0].ConfigurationSet)
	}

	// Ada claims through the link; the confirmation arrives.
	if c := e.http("POST", "/v1/claims/"+m[1]+":accept", "", "", 200); c["state"] != "claimed" {
		t.Fatalf("claim: %v", c)
	}
	e.deliver()
	mails := e.mailTo("ada@example.com")
	if len(mails) != 2 || !strings.HasPrefix(mails[1].Subject, "Booked: haircut") {
		t.Fatalf("Ada's mails after the claim: %d, want the offer and the confirmation; last: %q", len(mails), mails[len(mails)-1].Subject)
	}

	// A second slot goes to Grace, who does not answer: when her window's
	// schedule fires the offer rolls on to Linus, by text.
	e.http("POST", "/v1/slots/"+slot(6)+":release", key, `{"reason":"cancellation"}`, 200)
	e.deliver()
	if n := len(e.mailTo("grace@example.com")); n != 1 {
		t.Fatalf("%d mails to Grace, want the offer", n)
	}
	e.advance(9 * time.Minute)
	if n := e.fire(); n != 0 {
		t.Fatalf("%d schedules fired before the window's end", n)
	}
	e.sched.DropNext(1)        // Linus's offer's schedule, made when Grace's fires, is lost
	e.advance(2 * time.Minute) // a schedule is at the whole minute after its timer's due time
	if n := e.fire(); n != 1 {
		t.Fatalf("%d schedules fired at the window's end, want Grace's", n)
	}
	records := e.deliver()
	texts := e.sns.Texts()
	if len(records) == 0 || len(texts) != 1 || texts[0].PhoneNumber != "+447700900123" || !claimLink.MatchString(texts[0].Message) {
		t.Fatalf("after the roll-on: %d records, texts %+v; want Linus's offer by SNS", len(records), texts)
	}
	if texts[0].Attributes["AWS.SNS.SMS.SenderID"] != "StoryCuts" || texts[0].Attributes["AWS.SNS.SMS.SMSType"] != "Transactional" {
		t.Errorf("the text's attributes: %v", texts[0].Attributes)
	}

	// The same SQS records again (SQS delivers at least once): no second
	// text, no second mail.
	mailed := len(e.ses.Emails(t))
	e.deliver(records...)
	if n := len(e.sns.Texts()); n != 1 {
		t.Fatalf("%d texts after the records came twice, want 1", n)
	}
	if n := len(e.ses.Emails(t)); n != mailed {
		t.Fatalf("%d mails after the records came twice, want %d", n, mailed)
	}

	// Linus's schedule was lost: at his window's end nothing fires, and
	// the sweep (every five minutes) expires the offer; with nobody left
	// the slot is handed back.
	linus := claimLink.FindStringSubmatch(texts[0].Message)[1]
	e.advance(10 * time.Minute)
	if n := e.fire(); n != 0 {
		t.Fatalf("%d schedules fired; Linus's was lost", n)
	}
	if c := e.http("GET", "/v1/claims/"+linus, "", "", 200); c["offer_state"] != "offered" {
		t.Fatalf("Linus's offer with its schedule lost: %v", c["offer_state"])
	}
	e.advance(4 * time.Minute)
	if out := string(e.invoke([]byte(`{"nextup":"sweep"}`))); !strings.Contains(out, `"timers":1`) {
		t.Fatalf("sweep: %s, want the lost timer run", out)
	}
	if c := e.http("GET", "/v1/claims/"+linus, "", "", 200); c["offer_state"] != "expired" {
		t.Fatalf("Linus's offer after the sweep: %v, want expired", c["offer_state"])
	}

	// Inbound mail: SES stores a forwarded request in S3; S3 tells the
	// function; the request is a proposal.
	raw := []byte("Received: from mx.example.com by inbound-smtp.us-east-1.amazonaws.com for story-cuts@in.nextup.test; Wed, 04 Mar 2099 09:00:00 +0000\r\n" +
		"From: Edsger <edsger@example.com>\r\nTo: story-cuts@in.nextup.test\r\nSubject: waitlist please\r\nDate: Wed, 04 Mar 2099 09:00:00 +0000\r\n\r\n" +
		"Please add me to the waitlist for a haircut, any morning.\r\n")
	e.invoke(storeMail(t, e.bucket, "inbound/story-1", raw))
	props := e.http("GET", "/v1/businesses/"+bid+"/proposals", key, "", 200)["proposals"].([]any)
	if len(props) != 1 {
		t.Fatalf("%d proposals after the inbound mail, want 1", len(props))
	}

	// SES reports that Ada's confirmation bounced for good (an SES event
	// through the configuration set's SNS topic): the message is dead and
	// her address opted out of the business's email.
	confirmation := mails[1]
	bounce, _ := json.Marshal(map[string]any{"eventType": "Bounce",
		"bounce": map[string]any{"bounceType": "Permanent", "bounceSubType": "General",
			"bouncedRecipients": []map[string]string{{"emailAddress": "ada@example.com", "diagnosticCode": "smtp; 550 5.1.1 user unknown"}}},
		"mail": map[string]any{"messageId": confirmation.MessageID, "destination": []string{"ada@example.com"},
			"tags": map[string][]string{"nextup_message_id": {confirmation.Tags["nextup_message_id"]}}}})
	sns, _ := json.Marshal(events.SNSEvent{Records: []events.SNSEventRecord{{EventSource: "aws:sns", EventVersion: "1.0",
		SNS: events.SNSEntity{Type: "Notification", MessageID: "sns-1", TopicArn: "arn:aws:sns:us-east-1:123456789012:nextup-mail-feedback", Message: string(bounce)}}}})
	for range 2 { // SNS delivers at least once
		if out := string(e.invoke(sns)); !strings.Contains(out, `"recorded":1`) {
			t.Fatalf("SES feedback: %s", out)
		}
	}
	var dead bool
	for _, m := range e.http("GET", "/v1/businesses/"+bid+"/messages?to=ada@example.com", key, "", 200)["messages"].([]any) {
		if m := m.(map[string]any); m["id"] == confirmation.Tags["nextup_message_id"] {
			dead = m["state"] == "dead"
		}
	}
	if !dead {
		t.Errorf("Ada's bounced confirmation is not dead")
	}

	init := regexp.MustCompile(`Init Duration: ([0-9.]+) ms`).FindStringSubmatch(e.logs.String())
	if init == nil {
		t.Fatalf("the emulator reported no Init Duration:\n%s", e.logs.String())
	}
	// The emulator's Init Duration is not a cold start's (it starts the
	// process before timing): make coldstart measures that.
	t.Logf("first invocation (process start, init with the secret read, a clock event): %v; a warm release with its commit's schedule and SQS message: %v; (the emulator's Init Duration: %s ms)",
		cold.Round(time.Millisecond), warm.Round(time.Millisecond), init[1])
}
