package sqlite

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

func (t *tx) MessageCreate(ctx context.Context, m nextup.Message) error {
	if m.State == "" {
		m.State = nextup.MessageQueued
	}
	_, err := t.tx.ExecContext(ctx, sqlstore.MessageInsert, sqlstore.MessageInsertArgs(m)...)
	return dbErr("create message "+m.ID, err)
}

func (t *tx) MessageGet(ctx context.Context, id string) (nextup.Message, error) {
	m, err := sqlstore.ScanMessage(t.tx.QueryRowContext(ctx, sqlstore.MessageGet, id))
	return m, dbErr("get message "+id, err)
}

// MessageList returns outbox rows newest first.
func (t *tx) MessageList(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	q, args := sqlstore.MessageSelect(f)
	q += ` ORDER BY created_at DESC, rowid DESC LIMIT ?`
	args = append(args, limitArg(f.Limit))
	out, err := scanAll(sqlstore.ScanMessage)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list messages", err)
}

// MessageClaimDue leases due messages in one UPDATE. Attempts counts the
// outcomes recorded so far (MessageFinish adds one), so a claimed message
// says how many sends went before this one.
func (t *tx) MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]nextup.Message, error) {
	out, err := scanAll(sqlstore.ScanMessage)(t.tx.QueryContext(ctx, `UPDATE messages
		SET claimed_until = ?2
		WHERE rowid IN (
			SELECT rowid FROM messages
			WHERE state IN ('queued', 'failed') AND next_attempt_at <= ?1 AND not_before <= ?1
			  AND (claimed_until IS NULL OR claimed_until <= ?1)
			ORDER BY next_attempt_at, created_at, rowid
			LIMIT ?3)
		RETURNING `+sqlstore.MessageCols, sqlstore.TS(now), sqlstore.TS(now.Add(lease)), limitArg(limit)))
	if err != nil {
		return nil, dbErr("claim due messages", err)
	}
	slices.SortFunc(out, sqlstore.MessageDueOrder)
	return out, nil
}

// MessageFinish records a send's outcome under the lease it was sent under;
// a relay whose lease ran out (and was taken over) gets ErrConflict. A
// message cancelled while it was being sent stays cancelled unless the send
// went through.
func (t *tx) MessageFinish(ctx context.Context, id string, claimedUntil time.Time, r nextup.MessageResult) error {
	op := fmt.Sprintf("finish message %s as %s", id, r.State)
	args, err := sqlstore.MessageFinishArgs(id, claimedUntil, r)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return t.execOne(ctx, op, "messages", id, sqlstore.MessageFinish, args...)
}

// MessageRequeue gives a dead message a fresh set of attempts, due now.
func (t *tx) MessageRequeue(ctx context.Context, id string, now time.Time) (nextup.Message, error) {
	op := "requeue message " + id
	m, err := sqlstore.ScanMessage(t.tx.QueryRowContext(ctx, sqlstore.MessageRequeue, sqlstore.TS(now), id))
	if err == nil {
		return m, nil
	}
	if isNoRows(err) {
		return nextup.Message{}, t.missOrConflict(ctx, op, "messages", id)
	}
	return nextup.Message{}, dbErr(op, err)
}

func (t *tx) MessageUndelivered(ctx context.Context, id, reason string) (nextup.Message, error) {
	op := "message " + id + " undelivered"
	m, err := sqlstore.ScanMessage(t.tx.QueryRowContext(ctx, sqlstore.MessageUndelivered, reason, id))
	if err == nil {
		return m, nil
	}
	if isNoRows(err) {
		return nextup.Message{}, t.missOrConflict(ctx, op, "messages", id)
	}
	return nextup.Message{}, dbErr(op, err)
}

// MessageCancelByOffer cancels the offer's messages that are still waiting
// to go (queued, or failed and due for a retry). One being sent right now
// keeps its lease and its outcome.
func (t *tx) MessageCancelByOffer(ctx context.Context, offerID string) error {
	if offerID == "" {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, sqlstore.MessageCancelByOffer, offerID)
	return dbErr("cancel messages of offer "+offerID, err)
}

func (t *tx) MessageCounts(ctx context.Context, businessID string) (map[nextup.Channel]map[nextup.MessageState]int, error) {
	q, args := sqlstore.MessageCounts(businessID)
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, dbErr("count messages", err)
	}
	defer rows.Close()
	out := map[nextup.Channel]map[nextup.MessageState]int{}
	for rows.Next() {
		var ch, st string
		var n int
		if err := rows.Scan(&ch, &st, &n); err != nil {
			return nil, dbErr("count messages", err)
		}
		if out[nextup.Channel(ch)] == nil {
			out[nextup.Channel(ch)] = map[nextup.MessageState]int{}
		}
		out[nextup.Channel(ch)][nextup.MessageState(st)] = n
	}
	return out, dbErr("count messages", rows.Err())
}
