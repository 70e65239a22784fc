package dynamo

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
)

var _ = time.Time{}

func (t *Tx) AuditAppend(ctx context.Context, ev nextup.AuditEvent) error {
	return todo("AuditAppend")
}

func (t *Tx) AuditList(ctx context.Context, f nextup.AuditFilter) ([]nextup.AuditEvent, error) {
	return nil, todo("AuditList")
}

func (t *Tx) MessageCreate(ctx context.Context, m nextup.Message) error {
	return todo("MessageCreate")
}

func (t *Tx) MessageGet(ctx context.Context, id string) (nextup.Message, error) {
	return nextup.Message{}, todo("MessageGet")
}

func (t *Tx) MessageList(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	return nil, todo("MessageList")
}

func (t *Tx) MessageCounts(ctx context.Context, businessID string) (map[nextup.Channel]map[nextup.MessageState]int, error) {
	return nil, todo("MessageCounts")
}

func (t *Tx) MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]nextup.Message, error) {
	return nil, todo("MessageClaimDue")
}

func (t *Tx) MessageFinish(ctx context.Context, id string, claimedUntil time.Time, r nextup.MessageResult) error {
	return todo("MessageFinish")
}

func (t *Tx) MessageRequeue(ctx context.Context, id string, now time.Time) (nextup.Message, error) {
	return nextup.Message{}, todo("MessageRequeue")
}

func (t *Tx) MessageUndelivered(ctx context.Context, id, reason string) (nextup.Message, error) {
	return nextup.Message{}, todo("MessageUndelivered")
}

func (t *Tx) MessageCancelByOffer(ctx context.Context, offerID string) error {
	return todo("MessageCancelByOffer")
}

func (t *Tx) SuppressionAdd(ctx context.Context, s nextup.Suppression) error {
	return todo("SuppressionAdd")
}

func (t *Tx) SuppressionList(ctx context.Context, businessID string, addresses []string) ([]nextup.Suppression, error) {
	return nil, todo("SuppressionList")
}

func (t *Tx) SuppressionDelete(ctx context.Context, businessID string, ch nextup.Channel, address string) (bool, error) {
	return false, todo("SuppressionDelete")
}
