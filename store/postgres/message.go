package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

const messageCols = `id, business_id, kind, channel, to_addr, subject, body, claim_url, offer_id, entry_id,
	booking_id, state, attempts, last_error, not_before, next_attempt_at, claimed_until, created_at,
	sent_at, provider_id`

func scanMessage(r scanner) (nextup.Message, error) {
	var (
		m                        nextup.Message
		notBefore, next, created int64
		claimed, sent            *int64
	)
	err := r.Scan(&m.ID, &m.BusinessID, &m.Kind, &m.Channel, &m.To, &m.Subject, &m.Body, &m.ClaimURL,
		&m.OfferID, &m.EntryID, &m.BookingID, &m.State, &m.Attempts, &m.LastError, &notBefore, &next,
		&claimed, &created, &sent, &m.ProviderID)
	m.NotBefore, m.NextAttemptAt, m.CreatedAt = fromTS(notBefore), fromTS(next), fromTS(created)
	m.ClaimedUntil, m.SentAt = fromNullTS(claimed), fromNullTS(sent)
	return m, err
}

func (t *tx) MessageCreate(ctx context.Context, m nextup.Message) error {
	if m.State == "" {
		m.State = nextup.MessageQueued
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO messages (`+messageCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.BusinessID, m.Kind, m.Channel, m.To, m.Subject, m.Body, m.ClaimURL, m.OfferID, m.EntryID,
		m.BookingID, m.State, m.Attempts, m.LastError, ts(m.NotBefore), ts(m.NextAttemptAt),
		tsPtr(m.ClaimedUntil), ts(m.CreatedAt), tsPtr(m.SentAt), m.ProviderID)
	return dbErr("create message "+m.ID, err)
}

func (t *tx) MessageGet(ctx context.Context, id string) (nextup.Message, error) {
	m, err := scanMessage(t.tx.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE id = ?`, id))
	return m, dbErr("get message "+id, err)
}

// MessageList returns outbox rows newest first.
func (t *tx) MessageList(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	q := `SELECT ` + messageCols + ` FROM messages WHERE 1 = 1`
	var args []any
	if f.BusinessID != "" {
		q += ` AND business_id = ?`
		args = append(args, f.BusinessID)
	}
	if f.To != "" {
		q += ` AND to_addr = ?`
		args = append(args, f.To)
	}
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, f.State)
	}
	if f.OfferID != "" {
		q += ` AND offer_id = ? AND offer_id <> ''`
		args = append(args, f.OfferID)
	}
	q += ` ORDER BY created_at DESC, rid DESC LIMIT ?`
	args = append(args, limitArg(f.Limit))
	out, err := scanAll(scanMessage)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list messages", err)
}

// MessageClaimDue leases due messages in one UPDATE. Attempts counts the
// outcomes recorded so far (MessageFinish adds one), so a claimed message
// says how many sends went before this one.
func (t *tx) MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]nextup.Message, error) {
	out, err := scanAll(scanMessage)(t.tx.QueryContext(ctx, `WITH due AS MATERIALIZED (
			SELECT id FROM messages
			WHERE state IN ('queued', 'failed') AND next_attempt_at <= ?1 AND not_before <= ?1
			  AND (claimed_until IS NULL OR claimed_until <= ?1)
			ORDER BY next_attempt_at, created_at, rid
			LIMIT ?3
			FOR UPDATE SKIP LOCKED)
		UPDATE messages
		SET claimed_until = ?2
		WHERE id IN (SELECT id FROM due)
		  AND state IN ('queued', 'failed') AND (claimed_until IS NULL OR claimed_until <= ?1)
		RETURNING `+messageCols, ts(now), ts(now.Add(lease)), limitArg(limit)))
	if err != nil {
		return nil, dbErr("claim due messages", err)
	}
	// RETURNING gives no order; hand them out oldest due first.
	slices.SortFunc(out, func(a, b nextup.Message) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	})
	return out, nil
}

// MessageFinish records a send's outcome under the lease it was sent under;
// a relay whose lease ran out (and was taken over) gets ErrConflict. A
// message cancelled while it was being sent stays cancelled unless the send
// went through.
func (t *tx) MessageFinish(ctx context.Context, id string, claimedUntil time.Time, r nextup.MessageResult) error {
	op := fmt.Sprintf("finish message %s as %s", id, r.State)
	switch r.State {
	case nextup.MessageSent, nextup.MessageFailed, nextup.MessageDead:
	default:
		return fmt.Errorf("%s: want sent, failed or dead: %w", op, nextup.ErrInvalid)
	}
	var next any
	if r.State == nextup.MessageFailed {
		next = ts(r.NextAttemptAt)
	}
	var sent any
	if r.State == nextup.MessageSent {
		sent = ts(r.At)
	}
	return t.execOne(ctx, op, "messages", id, `UPDATE messages
		SET state = CASE WHEN state = 'cancelled' AND ?1 <> 'sent' THEN state ELSE ?1 END,
			claimed_until = NULL, attempts = attempts + 1,
			next_attempt_at = coalesce(?2, next_attempt_at),
			sent_at = coalesce(?3, sent_at),
			last_error = CASE WHEN ?4 <> '' THEN ?4 ELSE last_error END,
			provider_id = CASE WHEN ?5 <> '' THEN ?5 ELSE provider_id END
		WHERE id = ?6 AND claimed_until = ?7`,
		r.State, next, sent, r.Error, r.ProviderID, id, ts(claimedUntil))
}

// MessageRequeue gives a dead message a fresh set of attempts, due now.
func (t *tx) MessageRequeue(ctx context.Context, id string, now time.Time) (nextup.Message, error) {
	op := "requeue message " + id
	m, err := scanMessage(t.tx.QueryRowContext(ctx, `UPDATE messages
		SET state = 'queued', attempts = 0, next_attempt_at = ?, claimed_until = NULL
		WHERE id = ? AND state = 'dead'
		RETURNING `+messageCols, ts(now), id))
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
	_, err := t.tx.ExecContext(ctx, qMessageCancelByOffer, offerID)
	return dbErr("cancel messages of offer "+offerID, err)
}

// qMessageCancelByOffer repeats the "offer_id is not empty" condition so the partial index
// messages_offer is used.
const qMessageCancelByOffer = `UPDATE messages SET state = 'cancelled'
	WHERE offer_id = ? AND offer_id <> '' AND state IN ('queued', 'failed')`

func (t *tx) MessageCounts(ctx context.Context, businessID string) (map[nextup.MessageState]int, error) {
	q, args := `SELECT state, count(*) FROM messages GROUP BY state`, []any{}
	if businessID != "" {
		q, args = `SELECT state, count(*) FROM messages WHERE business_id = ? GROUP BY state`, []any{businessID}
	}
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, dbErr("count messages", err)
	}
	defer rows.Close()
	out := map[nextup.MessageState]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, dbErr("count messages", err)
		}
		out[nextup.MessageState(st)] = n
	}
	return out, dbErr("count messages", rows.Err())
}
