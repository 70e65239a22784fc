package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
)

// On Lambda nothing polls. The timer and message rows commit with the
// change, in DynamoDB (the outbox stays transactional); after the commit
// (dynamo.Store.OnCommit) triggers turns them into the services' own
// triggers, in the same invocation:
//   - a pending timer gets a one-time EventBridge Scheduler schedule at its
//     due time, rounded up to the whole minute (at(), in UTC,
//     ActionAfterCompletion DELETE, with a dead-letter queue), named after
//     the timer's id so that moving the timer updates it and cancelling it
//     deletes it; the schedule invokes the timer function with
//     {"nextup":"timers"}, which runs every timer due. Scheduler fires a
//     schedule within the minute it names (at 1:00 means between 1:00:00
//     and 1:00:59), so a schedule at the due time's own minute could fire
//     before the timer is due, find nothing, and be deleted: the timer
//     would wait for the sweep. Rounded up, it fires within two minutes of
//     the due time, never before. A timer already due is run before the
//     invocation ends instead;
//   - a message to send (new, or a failed one's retry) gets an SQS message
//     naming it, delayed until it is due; SQS delays at most 15 minutes, so
//     one due later is delayed 15 minutes, and the send function, finding
//     it not due yet, queues it again for the rest (sqsEvent).
//
// After the commit rather than from a DynamoDB Stream: a stream adds a
// function, a poller billed per shard and up to a second of lag before
// every offer goes out, for the same guarantee. What a crash between the
// commit and these calls leaves undone (or a call that fails) the safety
// sweep repairs: every five minutes {"nextup":"sweep"} runs the timers that
// are due and sends the messages that are due, whatever became of their
// schedule or SQS message. A timer then fires at most five minutes late,
// never not at all, and never twice (the timer's lease and the message's
// claim make a second trigger do nothing).
type triggers struct {
	clock nextup.Clock
	log   *slog.Logger

	sched *scheduler.Client
	// group, role, target and dlq are the schedule group, the role
	// Scheduler invokes the target with, the timer function's ARN and
	// the schedules' dead-letter queue's ARN.
	group, role, target, dlq string

	sqs   *sqs.Client
	queue string // the send queue's URL

	// crash, when set (only by tests), is called at named points so that
	// a test can stop the process there: "after_commit", before any
	// trigger is made.
	crash func(point string)

	mu     sync.Mutex
	dueNow bool
}

// timersEvent is what a timer's schedule and the sweep send.
const timersEvent = `{"nextup":"timers"}`

// maxSQSDelay is the longest delay SQS takes on a message.
const maxSQSDelay = 15 * time.Minute

// scheduleName names the schedule of timer id.
func scheduleName(id int64) string { return "nextup-timer-" + strconv.FormatInt(id, 10) }

// committed is the store's OnCommit.
func (tr *triggers) committed(ctx context.Context, c dynamo.Committed) {
	if tr.crash != nil {
		tr.crash("after_commit")
	}
	now := tr.clock.Now()
	for _, t := range c.Timers {
		if !t.DueAt.After(now) {
			tr.mu.Lock()
			tr.dueNow = true
			tr.mu.Unlock()
			continue
		}
		if err := tr.schedule(ctx, t); err != nil {
			tr.log.Error("timer schedule not made; the sweep will run the timer", "timer_id", t.ID, "key", t.Key,
				"due_at", t.DueAt, "error", err)
		}
	}
	for _, id := range c.Gone {
		if err := tr.unschedule(ctx, id); err != nil {
			tr.log.Warn("schedule of a cancelled timer not deleted; it will fire and find nothing due", "timer_id", id, "error", err)
		}
	}
	for _, m := range c.Messages {
		if err := tr.enqueue(ctx, m, now); err != nil {
			tr.log.Error("send not queued; the sweep will send the message", "message_id", m.ID, "error", err)
		}
	}
}

// takeDueNow reports whether a committed timer was due already, and
// forgets it.
func (tr *triggers) takeDueNow() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	due := tr.dueNow
	tr.dueNow = false
	return due
}

// scheduleAt is the at() time of a timer due at due: the whole minute at
// or after it (see triggers).
func scheduleAt(due time.Time) time.Time {
	at := due.UTC()
	if m := at.Truncate(time.Minute); !m.Equal(at) {
		at = m.Add(time.Minute)
	}
	return at
}

// schedule makes (or moves) timer t's one-time schedule.
func (tr *triggers) schedule(ctx context.Context, t nextup.Timer) error {
	if tr.sched == nil {
		return errors.New("no scheduler configured (NEXTUP_SCHEDULE_GROUP)")
	}
	at := scheduleAt(t.DueAt)
	name := scheduleName(t.ID)
	expr := "at(" + at.Format("2006-01-02T15:04:05") + ")"
	target := &schedtypes.Target{
		Arn: &tr.target, RoleArn: &tr.role, Input: aws.String(timersEvent),
		// Scheduler invokes the function asynchronously: these cover
		// delivering the event (throttling, a missing permission), after
		// which it goes to the dead-letter queue; a function error is
		// Lambda's to retry. Either way the sweep runs the timer.
		RetryPolicy: &schedtypes.RetryPolicy{MaximumRetryAttempts: aws.Int32(5), MaximumEventAgeInSeconds: aws.Int32(3600)},
	}
	if tr.dlq != "" {
		target.DeadLetterConfig = &schedtypes.DeadLetterConfig{Arn: &tr.dlq}
	}
	window := &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff}
	create := func() error {
		_, err := tr.sched.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
			Name: &name, GroupName: &tr.group, ScheduleExpression: &expr, ScheduleExpressionTimezone: aws.String("UTC"),
			FlexibleTimeWindow: window, ActionAfterCompletion: schedtypes.ActionAfterCompletionDelete, Target: target,
		})
		return err
	}
	err := create()
	var conflict *schedtypes.ConflictException
	if !errors.As(err, &conflict) {
		return err
	}
	// The timer was moved (or this is a retry): its schedule exists.
	_, err = tr.sched.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name: &name, GroupName: &tr.group, ScheduleExpression: &expr, ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow: window, ActionAfterCompletion: schedtypes.ActionAfterCompletionDelete, Target: target,
	})
	var gone *schedtypes.ResourceNotFoundException
	if errors.As(err, &gone) {
		// It fired and deleted itself in between: make it again.
		err = create()
	}
	return err
}

// unschedule deletes the schedule of a cancelled timer; one already gone
// (it fired, or was never made) is no error.
func (tr *triggers) unschedule(ctx context.Context, id int64) error {
	if tr.sched == nil {
		return nil
	}
	_, err := tr.sched.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(scheduleName(id)), GroupName: &tr.group})
	var gone *schedtypes.ResourceNotFoundException
	if errors.As(err, &gone) {
		return nil
	}
	return err
}

// sendRecord is the body of a send queue's message.
type sendRecord struct {
	MessageID string `json:"message_id"`
}

// dueAt is when m may be sent.
func dueAt(m nextup.Message) time.Time {
	if m.NextAttemptAt.After(m.NotBefore) {
		return m.NextAttemptAt
	}
	return m.NotBefore
}

// enqueue sends m's SQS message, delayed until m is due, or by SQS's
// longest delay when m is due later than that.
func (tr *triggers) enqueue(ctx context.Context, m nextup.Message, now time.Time) error {
	if tr.sqs == nil {
		return errors.New("no send queue configured (NEXTUP_SEND_QUEUE_URL)")
	}
	delay := min(dueAt(m).Sub(now), maxSQSDelay)
	secs := int32(0)
	if delay > 0 {
		secs = int32((delay + time.Second - 1) / time.Second)
	}
	body, err := json.Marshal(sendRecord{MessageID: m.ID})
	if err != nil {
		return err
	}
	_, err = tr.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &tr.queue, MessageBody: aws.String(string(body)), DelaySeconds: secs})
	return err
}
