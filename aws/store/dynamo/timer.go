package dynamo

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
)

var _ = time.Time{}

func (t *Tx) TimerSchedule(ctx context.Context, tm nextup.Timer) error {
	return todo("TimerSchedule")
}

func (t *Tx) TimerCancel(ctx context.Context, key string) error {
	return todo("TimerCancel")
}

func (t *Tx) TimerClaimDue(ctx context.Context, now time.Time, lease time.Duration, owner string, limit int) ([]nextup.Timer, error) {
	return nil, todo("TimerClaimDue")
}

func (t *Tx) TimerDone(ctx context.Context, id int64, claimedUntil time.Time, at time.Time) error {
	return todo("TimerDone")
}

func (t *Tx) TimerNextDue(ctx context.Context) (time.Time, error) {
	return time.Time{}, todo("TimerNextDue")
}

func (t *Tx) TimerList(ctx context.Context, f nextup.TimerFilter) ([]nextup.Timer, error) {
	return nil, todo("TimerList")
}

func (t *Tx) IdempotencyStart(ctx context.Context, r nextup.IdempotencyRecord) (nextup.IdempotencyRecord, error) {
	return nextup.IdempotencyRecord{}, todo("IdempotencyStart")
}

func (t *Tx) IdempotencyFinish(ctx context.Context, r nextup.IdempotencyRecord) error {
	return todo("IdempotencyFinish")
}

func (t *Tx) IdempotencyDelete(ctx context.Context, scope, key string) error {
	return todo("IdempotencyDelete")
}

func (t *Tx) IdempotencyPurge(ctx context.Context, before time.Time) (int, error) {
	return 0, todo("IdempotencyPurge")
}
