package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/aws/internal/schedtest"
	"github.com/nextup-dev/nextup/aws/internal/sqstest"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/notify/capture"
)

// stack is a function's world: DynamoDB on dynoxide, EventBridge Scheduler
// and SQS on their stand-ins, reached by the official clients through the
// SDK's own endpoint settings (AWS_ENDPOINT_URL_<SERVICE>), as a deployed
// function reaches the services.
type stack struct {
	db    string
	sched *schedtest.Server
	sqs   *sqstest.Server
	queue string
	clock *nextup.FakeClock
}

const (
	timerARN = "arn:aws:lambda:us-east-1:123456789012:function:nextup-timer"
	roleARN  = "arn:aws:iam::123456789012:role/nextup-scheduler"
	dlqARN   = "arn:aws:sqs:us-east-1:123456789012:nextup-schedule-dlq"
)

// newStack sets the process's AWS environment: tests using it are not
// parallel.
func newStack(t *testing.T) *stack {
	t.Helper()
	ctx := context.Background()
	s := &stack{clock: nextup.NewFakeClock(time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))}
	s.db = fmt.Sprintf("dynamodb://%s/%s-?region=us-east-1", dynotest.Addr(t), dynotest.Table(t))
	st, err := dynamo.Open(ctx, s.db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s.sched = schedtest.New(t, "nextup")
	s.sqs = sqstest.New(t, "nextup-send")
	s.sqs.Now = s.clock.Now
	s.queue = s.sqs.QueueURL("nextup-send")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_ENDPOINT_URL_SCHEDULER", s.sched.URL)
	t.Setenv("AWS_ENDPOINT_URL_SQS", s.sqs.URL)
	return s
}

func (s *stack) config() config {
	return config{DB: s.db, BaseURL: "https://abc.lambda-url.us-east-1.on.aws", AdminToken: "adm",
		ScheduleGroup: "nextup", ScheduleRole: roleARN, ScheduleTarget: timerARN, ScheduleDLQ: dlqARN,
		SendQueue: s.queue, Logger: slog.New(slog.DiscardHandler), Clock: s.clock}
}

// function starts a container of the bootstrap in this process, its
// texts and mail captured.
func (s *stack) function(t *testing.T, mod ...func(*config)) (*fn, *capture.Sender) {
	t.Helper()
	c := s.config()
	for _, m := range mod {
		m(&c)
	}
	h, err := newHandler(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	out := capture.New()
	h.relay.Senders[nextup.ChannelEmail] = out
	h.relay.Senders[nextup.ChannelSMS] = out
	return &fn{t: t, h: h}, out
}

// offerSchedules are the schedules due before the next day's housekeeping
// (each business has a daily one at 03:00 local time): the offers'.
func (s *stack) offerSchedules() []schedtest.Schedule {
	var out []schedtest.Schedule
	for _, sc := range s.sched.Schedules() {
		if sc.At.Before(s.clock.Now().Add(time.Hour)) {
			out = append(out, sc)
		}
	}
	return out
}

// fire plays EventBridge Scheduler at the stack's time: every schedule due
// invokes f with its input.
func (s *stack) fire(t *testing.T, f *fn) int {
	t.Helper()
	n, err := s.sched.Fire(context.Background(), s.clock.Now(), func(ctx context.Context, sc schedtest.Schedule) error {
		if sc.Target.Arn != timerARN {
			return fmt.Errorf("schedule %s targets %s", sc.Name, sc.Target.Arn)
		}
		_, err := f.h.Invoke(ctx, []byte(sc.Target.Input))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// deliver plays the SQS event source mapping: the messages visible now go
// to f in one event, and the batch item failures come back.
func (s *stack) deliver(t *testing.T, f *fn, msgs []sqstest.Message) []string {
	t.Helper()
	var ev events.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: m.ID, Body: m.Body, EventSource: "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:nextup-send"})
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.h.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("SQS event: %v", err)
	}
	var res events.SQSEventResponse
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("SQS event response %s: %v", out, err)
	}
	var failed []string
	for _, f := range res.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// salon makes a business with one person waiting and one slot, and
// returns the business id, its key and the slot id.
func salon(t *testing.T, f *fn, window int) (bid, key, sid string) {
	t.Helper()
	biz := f.json("POST", "/v1/businesses", "adm", fmt.Sprintf(`{"name":"Scheduled Cuts","timezone":"Europe/London","rules":{"quiet_hours":null,"claim_window_seconds":%d}}`, window), 201)
	bid, key = biz["id"].(string), biz["api_key"].(string)
	f.json("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ada","email":"ada@example.com","service":"haircut"}`, 201)
	f.json("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Grace","email":"grace@example.com","service":"haircut"}`, 201)
	slot := f.json("POST", "/v1/businesses/"+bid+"/slots", key, `{"service":"haircut","starts_at":"2031-03-05T14:00:00Z","ends_at":"2031-03-05T14:45:00Z"}`, 201)
	return bid, key, slot["id"].(string)
}

func offerOf(t *testing.T, rel map[string]any) string {
	t.Helper()
	for _, m := range rel["moves"].([]any) {
		if id, _ := m.(map[string]any)["offer_id"].(string); id != "" {
			return id
		}
	}
	t.Fatalf("no offer in %v", rel)
	return ""
}

// TestSchedulesFollowTimers: an offer's expiry timer gets its one-time
// schedule after the commit (at its due time, deleted after it runs, with
// the dead-letter queue); when the schedule fires the offer expires and
// rolls on to the next person, whose offer gets a schedule of its own;
// the claim cancels that timer and its schedule goes.
func TestSchedulesFollowTimers(t *testing.T) {
	s := newStack(t)
	f, _ := s.function(t)
	bid, key, sid := salon(t, f, 600)
	rel := f.json("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200)
	first := offerOf(t, rel)

	if n := len(s.sched.Schedules()); n != 3 {
		t.Errorf("%d schedules, want 3: the offer's expiry, the daily housekeeping and the monthly summary", n)
	}
	scheds := s.offerSchedules()
	if len(scheds) != 1 {
		t.Fatalf("schedules after the release: %+v", scheds)
	}
	sc := scheds[0]
	if want := s.clock.Now().Add(10 * time.Minute); !sc.At.Equal(want) {
		t.Errorf("the expiry's schedule is at %v, want %v (the claim window's end)", sc.At, want)
	}
	if sc.ActionAfterCompletion != "DELETE" || sc.Group != "nextup" || sc.Target.Input != timersEvent ||
		sc.Target.RoleArn != roleARN || sc.Target.DeadLetterConfig == nil || sc.Target.DeadLetterConfig.Arn != dlqARN {
		t.Errorf("the schedule: %+v", sc)
	}
	if s.sqs.Len(s.queue) != 1 {
		t.Errorf("the offer's message: %d SQS messages, want 1", s.sqs.Len(s.queue))
	}

	// Before its time nothing fires; at its time the offer expires and
	// rolls on.
	s.clock.Advance(9 * time.Minute)
	if n := s.fire(t, f); n != 0 {
		t.Fatalf("%d schedules fired before their time", n)
	}
	s.clock.Advance(time.Minute)
	if n := s.fire(t, f); n != 1 {
		t.Fatalf("%d schedules fired at the window's end, want 1", n)
	}
	if o := f.json("GET", "/v1/offers/"+first, key, "", 200); o["state"] != "expired" {
		t.Fatalf("the first offer after its schedule fired: %v", o["state"])
	}
	var second string
	for _, m := range f.json("GET", "/v1/businesses/"+bid+"/messages", key, "", 200)["messages"].([]any) {
		if o, _ := m.(map[string]any)["offer_id"].(string); o != "" && o != first {
			second = o
		}
	}
	if second == "" {
		t.Fatal("no offer rolled on")
	}
	if o := f.json("GET", "/v1/offers/"+second, key, "", 200); o["state"] != "offered" {
		t.Fatalf("the second offer: %v", o["state"])
	}
	scheds = s.offerSchedules()
	if len(scheds) != 1 || !scheds[0].At.Equal(s.clock.Now().Add(10*time.Minute)) {
		t.Fatalf("after the roll-on: schedules %+v, want one for the second offer's window", scheds)
	}

	// The claim cancels the expiry: its schedule is deleted.
	tok := claimToken(t, f, bid, key, second)
	f.json("POST", "/v1/claims/"+tok+":accept", "", "", 200)
	if scheds := s.offerSchedules(); len(scheds) != 0 {
		t.Errorf("after the claim: schedules %+v, want none", scheds)
	}
	if n := s.sched.Calls("DeleteSchedule"); n != 1 {
		t.Errorf("%d DeleteSchedule calls, want 1", n)
	}
}

// claimToken finds the claim token of an offer in its message.
func claimToken(t *testing.T, f *fn, bid, key, offer string) string {
	t.Helper()
	msgs := f.json("GET", "/v1/businesses/"+bid+"/messages", key, "", 200)["messages"].([]any)
	for _, m := range msgs {
		m := m.(map[string]any)
		if u, _ := m["claim_url"].(string); u != "" && m["offer_id"] == offer {
			return u[strings.LastIndex(u, "/")+1:]
		}
	}
	t.Fatalf("no claim link for offer %s in %v", offer, msgs)
	return ""
}

// TestSweepRepairsALostSchedule: a schedule lost between the commit and
// its creation (dropped on purpose by the stand-in) never fires, and the
// safety sweep still runs the timer once it is due, and only once.
func TestSweepRepairsALostSchedule(t *testing.T) {
	s := newStack(t)
	f, _ := s.function(t)
	_, key, sid := salon(t, f, 600)
	s.sched.DropNext(1) // the next one made: the offer's expiry
	first := offerOf(t, f.json("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200))
	if n := len(s.offerSchedules()); n != 0 {
		t.Fatalf("%d schedules kept; the stand-in was to lose it", n)
	}
	s.clock.Advance(10 * time.Minute)
	if n := s.fire(t, f); n != 0 {
		t.Fatalf("%d schedules fired; the lost one cannot", n)
	}
	if o := f.json("GET", "/v1/offers/"+first, key, "", 200); o["state"] != "offered" {
		t.Fatalf("the offer with its schedule lost: %v", o["state"])
	}
	s.clock.Advance(4 * time.Minute) // the sweep runs within five minutes
	out, err := f.h.Invoke(context.Background(), []byte(`{"nextup":"sweep"}`))
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]int
	if err := json.Unmarshal(out, &res); err != nil || res["timers"] < 1 {
		t.Fatalf("sweep: %s (%v), want the lost timer run", out, err)
	}
	if o := f.json("GET", "/v1/offers/"+first, key, "", 200); o["state"] != "expired" {
		t.Fatalf("the offer after the sweep: %v", o["state"])
	}
	out, err = f.h.Invoke(context.Background(), []byte(`{"nextup":"sweep"}`))
	if err != nil || !strings.Contains(string(out), `"timers":0`) {
		t.Errorf("the sweep again: %s %v, want no timer run twice", out, err)
	}
}

// TestSQSRecordSendsOnce: each record of the send queue sends the message
// it names; the same record delivered twice (SQS delivers at least once)
// sends nothing the second time, and a record naming no message is
// dropped, not retried.
func TestSQSRecordSendsOnce(t *testing.T) {
	s := newStack(t)
	f, out := s.function(t)
	bid, key, sid := salon(t, f, 600)
	f.json("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200)
	msgs := s.sqs.Take(s.queue, s.clock.Now())
	if len(msgs) != 1 {
		t.Fatalf("%d SQS messages after the release, want 1 (the offer)", len(msgs))
	}
	if failed := s.deliver(t, f, msgs); len(failed) != 0 {
		t.Fatalf("batch item failures: %v", failed)
	}
	if n := len(out.Messages()); n != 1 {
		t.Fatalf("%d sent after one record, want 1", n)
	}
	if failed := s.deliver(t, f, append(msgs, sqstest.Message{ID: "junk", Body: `{"nope":1}`})); len(failed) != 0 {
		t.Fatalf("batch item failures on a record delivered twice: %v", failed)
	}
	if n := len(out.Messages()); n != 1 {
		t.Fatalf("%d sent after the record came twice, want 1", n)
	}
	sent := f.json("GET", "/v1/businesses/"+bid+"/messages", key, "", 200)["messages"].([]any)
	for _, m := range sent {
		if m := m.(map[string]any); m["state"] != "sent" || m["attempts"].(float64) != 1 {
			t.Errorf("message %v: %v after %v attempts, want sent after 1", m["id"], m["state"], m["attempts"])
		}
	}
}

// TestScheduleNeverFiresEarly: Scheduler fires a schedule anywhere in the
// minute its at() names, so a timer due in the middle of a minute gets the
// next whole minute: fired at the earliest the service may fire it, the
// schedule still finds its timer due.
func TestScheduleNeverFiresEarly(t *testing.T) {
	s := newStack(t)
	f, _ := s.function(t)
	_, key, sid := salon(t, f, 600)
	s.clock.Advance(30 * time.Second)
	first := offerOf(t, f.json("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200))
	scheds := s.offerSchedules()
	if len(scheds) != 1 || !scheds[0].At.Equal(time.Date(2031, 3, 4, 10, 11, 0, 0, time.UTC)) {
		t.Fatalf("the expiry due at 10:10:30 got schedules %+v, want one at 10:11:00", scheds)
	}
	s.clock.Set(time.Date(2031, 3, 4, 10, 10, 0, 0, time.UTC)) // the earliest the 10:10 minute fires
	if n := s.fire(t, f); n != 0 {
		t.Fatalf("%d schedules fired in the minute before the due time's", n)
	}
	s.clock.Set(time.Date(2031, 3, 4, 10, 11, 0, 0, time.UTC))
	if n := s.fire(t, f); n != 1 {
		t.Fatalf("%d schedules fired at 10:11, want the expiry's", n)
	}
	if o := f.json("GET", "/v1/offers/"+first, key, "", 200); o["state"] != "expired" {
		t.Fatalf("the offer after its schedule fired: %v, want expired", o["state"])
	}
}

// TestMovedTimerMovesItsSchedule: a timer scheduled again at another time
// (TimerSchedule on its key) updates its schedule rather than making a
// second one.
func TestMovedTimerMovesItsSchedule(t *testing.T) {
	s := newStack(t)
	f, _ := s.function(t)
	ctx := context.Background()
	move := func(due time.Time) {
		t.Helper()
		if err := f.h.relay.Store.InTx(ctx, func(tx nextup.Tx) error {
			return tx.TimerSchedule(ctx, nextup.Timer{BusinessID: "b1", Kind: nextup.TimerEntryRematch, Key: "rematch:e1", DueAt: due, CreatedAt: s.clock.Now()})
		}); err != nil {
			t.Fatal(err)
		}
	}
	move(s.clock.Now().Add(time.Hour))
	move(s.clock.Now().Add(2 * time.Hour))
	scheds := s.sched.Schedules()
	if len(scheds) != 1 || !scheds[0].At.Equal(s.clock.Now().Add(2*time.Hour)) {
		t.Fatalf("schedules after the move: %+v, want one at the new time", scheds)
	}
	if c, u := s.sched.Calls("CreateSchedule"), s.sched.Calls("UpdateSchedule"); c != 2 || u != 1 {
		t.Errorf("%d creates and %d updates, want 2 (the second one conflicting) and 1", c, u)
	}
}

// TestTimerDueAtCommitRunsAtOnce: a timer already due when it commits gets
// no schedule; it runs before the invocation that committed it ends.
func TestTimerDueAtCommitRunsAtOnce(t *testing.T) {
	s := newStack(t)
	f, _ := s.function(t)
	biz := f.json("POST", "/v1/businesses", "adm", `{"name":"Now Cuts","timezone":"Europe/London"}`, 201)
	bid := biz["id"].(string)
	ctx := context.Background()
	before := s.sched.Calls("CreateSchedule")
	// A housekeeping run due now, as a restarted business's would be.
	if err := f.h.relay.Store.InTx(ctx, func(tx nextup.Tx) error {
		return tx.TimerSchedule(ctx, nextup.Timer{BusinessID: bid, Kind: nextup.TimerHousekeeping, SubjectID: bid,
			Key: nextup.TimerHousekeeping + ":" + bid, DueAt: s.clock.Now(), CreatedAt: s.clock.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	if n := s.sched.Calls("CreateSchedule") - before; n != 0 {
		t.Fatalf("%d schedules made for a timer due at its commit", n)
	}
	f.json("GET", "/v1/businesses/"+bid, biz["api_key"].(string), "", 200) // any invocation
	var pending []nextup.Timer
	if err := f.h.relay.Store.Read(ctx, func(tx nextup.Tx) (err error) {
		pending, err = tx.TimerList(ctx, nextup.TimerFilter{BusinessID: bid, Kind: nextup.TimerHousekeeping, PendingOnly: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || !pending[0].DueAt.After(s.clock.Now()) {
		t.Fatalf("housekeeping after the invocation: %+v, want it run and the next day's pending", pending)
	}
}

// TestSendsDueLaterThanSQSDelays: a message due later than SQS's longest
// delay (15 minutes) is queued with that delay; its record comes early,
// finds it not due, and queues it again for the rest; it is sent once,
// when due.
func TestSendsDueLaterThanSQSDelays(t *testing.T) {
	s := newStack(t)
	f, out := s.function(t)
	ctx := context.Background()
	due := s.clock.Now().Add(40 * time.Minute)
	if err := f.h.relay.Store.InTx(ctx, func(tx nextup.Tx) error {
		return tx.MessageCreate(ctx, nextup.Message{ID: "msg_later", BusinessID: "b1", Kind: "offer", Channel: nextup.ChannelEmail,
			To: "ada@example.com", Subject: "later", Body: "later", State: nextup.MessageQueued, CreatedAt: s.clock.Now(), NotBefore: due})
	}); err != nil {
		t.Fatal(err)
	}
	for hop := 1; hop <= 3; hop++ {
		if got := s.sqs.Take(s.queue, s.clock.Now()); len(got) != 0 {
			t.Fatalf("hop %d: a record visible before its delay: %+v", hop, got)
		}
		next := s.clock.Now().Add(maxSQSDelay)
		if next.After(due) {
			next = due
		}
		s.clock.Set(next)
		msgs := s.sqs.Take(s.queue, s.clock.Now())
		if len(msgs) != 1 {
			t.Fatalf("hop %d at %v: %d records visible, want 1", hop, s.clock.Now(), len(msgs))
		}
		if failed := s.deliver(t, f, msgs); len(failed) != 0 {
			t.Fatalf("hop %d: batch item failures %v", hop, failed)
		}
		if sent := out.Len(); (sent == 1) != (hop == 3) {
			t.Fatalf("hop %d at %v: %d sent; want it sent at its due time %v and not before", hop, s.clock.Now(), sent, due)
		}
	}
	if n := s.sqs.Len(s.queue); n != 0 {
		t.Errorf("%d records left after the send", n)
	}
}

// TestFailedTriggersLeaveItToTheSweep: when SQS refuses the send's record
// (after the SDK's retries) the message stays queued in the table, and
// the sweep sends it.
func TestFailedTriggersLeaveItToTheSweep(t *testing.T) {
	s := newStack(t)
	f, out := s.function(t)
	_, key, sid := salon(t, f, 600)
	s.sqs.FailNext(3) // the SDK's three attempts
	f.json("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200)
	if n := s.sqs.Len(s.queue); n != 0 || out.Len() != 0 {
		t.Fatalf("%d records, %d sent; SQS was to refuse the record", n, out.Len())
	}
	res, err := f.h.Invoke(context.Background(), []byte(`{"nextup":"sweep"}`))
	if err != nil || !strings.Contains(string(res), `"sent":1`) || out.Len() != 1 {
		t.Fatalf("sweep: %s %v, %d sent; want the offer sent", res, err, out.Len())
	}
}
