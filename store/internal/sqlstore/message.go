package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// MessageCols are the columns ScanMessage reads, in its order.
const MessageCols = `id, business_id, kind, channel, to_addr, subject, body, claim_url, offer_id, entry_id,
	booking_id, state, attempts, last_error, not_before, next_attempt_at, claimed_until, created_at,
	sent_at, provider_id, html, calendar, unsubscribe_url, template_version`

// ScanMessage reads a row of MessageCols.
func ScanMessage(r Scanner) (nextup.Message, error) {
	var (
		m                        nextup.Message
		notBefore, next, created int64
		claimed, sent            *int64
	)
	err := r.Scan(&m.ID, &m.BusinessID, &m.Kind, &m.Channel, &m.To, &m.Subject, &m.Body, &m.ClaimURL,
		&m.OfferID, &m.EntryID, &m.BookingID, &m.State, &m.Attempts, &m.LastError, &notBefore, &next,
		&claimed, &created, &sent, &m.ProviderID, &m.HTML, &m.Calendar, &m.UnsubscribeURL, &m.TemplateVersion)
	m.NotBefore, m.NextAttemptAt, m.CreatedAt = FromTS(notBefore), FromTS(next), FromTS(created)
	m.ClaimedUntil, m.SentAt = FromNullTS(claimed), FromNullTS(sent)
	return m, err
}

// MessageInsert inserts an outbox message; MessageInsertArgs gives its
// arguments.
const MessageInsert = `INSERT INTO messages (` + MessageCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// MessageInsertArgs returns the arguments of MessageInsert for m, in
// MessageCols order.
func MessageInsertArgs(m nextup.Message) []any {
	return []any{m.ID, m.BusinessID, m.Kind, m.Channel, m.To, m.Subject, m.Body, m.ClaimURL, m.OfferID, m.EntryID,
		m.BookingID, m.State, m.Attempts, m.LastError, TS(m.NotBefore), TS(m.NextAttemptAt),
		TSPtr(m.ClaimedUntil), TS(m.CreatedAt), TSPtr(m.SentAt), m.ProviderID, m.HTML, m.Calendar, m.UnsubscribeURL, m.TemplateVersion}
}

// MessageGet reads an outbox message by id.
const MessageGet = `SELECT ` + MessageCols + ` FROM messages WHERE id = ?`

// MessageSelect returns the query of Tx.MessageList up to its ORDER BY,
// and its arguments. Tx.MessageList orders newest first by created_at and
// the dialect's RowID.
func MessageSelect(f nextup.MessageFilter) (string, []any) {
	q := `SELECT ` + MessageCols + ` FROM messages WHERE 1 = 1`
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
	if !f.Since.IsZero() {
		q += ` AND created_at >= ?`
		args = append(args, TS(f.Since))
	}
	if !f.Until.IsZero() {
		q += ` AND created_at < ?`
		args = append(args, TS(f.Until))
	}
	return q, args
}

// MessageDueOrder orders claimed messages as MessageClaimDue hands them out
// (RETURNING gives no order): oldest due first, then oldest.
func MessageDueOrder(a, b nextup.Message) int {
	if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
		return c
	}
	return a.CreatedAt.Compare(b.CreatedAt)
}

// MessageClaim leases message ?1, when it is due at ?2 and its lease is
// free, until ?3, and returns it. One statement serves both stores: the
// row is named by its key, so there is no batch to choose. On PostgreSQL
// a concurrent claim of the same row waits on the first one's row lock
// and then, under READ COMMITTED, checks the WHERE again on the row as
// committed: it finds the lease and changes nothing. On SQLite the
// single writer does that.
const MessageClaim = `UPDATE messages
	SET claimed_until = ?3
	WHERE id = ?1 AND state IN ('queued', 'failed') AND next_attempt_at <= ?2 AND not_before <= ?2
	  AND (claimed_until IS NULL OR claimed_until <= ?2)
	RETURNING ` + MessageCols

// unclaimable says why m may not be claimed at now ("it is sent",
// "leased until …", "not due until …"), or "" when it may: the
// condition of MessageClaim, in words.
func unclaimable(m nextup.Message, now time.Time) string {
	now = FromTS(TS(now)) // as the statement compares it
	switch {
	case m.State != nextup.MessageQueued && m.State != nextup.MessageFailed:
		return "it is " + string(m.State)
	case m.ClaimedUntil != nil && m.ClaimedUntil.After(now):
		return "leased until " + m.ClaimedUntil.Format(time.RFC3339Nano)
	case m.NotBefore.After(now) || m.NextAttemptAt.After(now):
		due := m.NotBefore
		if m.NextAttemptAt.After(due) {
			due = m.NextAttemptAt
		}
		return "not due until " + due.Format(time.RFC3339Nano)
	}
	return ""
}

// MessageFinish records a send's outcome on message ?6 under the lease
// ?7 it was sent under; MessageFinishArgs gives its arguments. A message
// cancelled while it was being sent stays cancelled unless the send went
// through.
const MessageFinish = `UPDATE messages
	SET state = CASE WHEN state = 'cancelled' AND ?1 <> 'sent' THEN state ELSE ?1 END,
		claimed_until = NULL, attempts = attempts + 1,
		next_attempt_at = coalesce(?2, next_attempt_at),
		sent_at = coalesce(?3, sent_at),
		last_error = CASE WHEN ?4 <> '' THEN ?4 ELSE last_error END,
		provider_id = CASE WHEN ?5 <> '' THEN ?5 ELSE provider_id END
	WHERE id = ?6 AND claimed_until = ?7`

// MessageFinishArgs returns the arguments of MessageFinish. An outcome
// other than sent, failed or dead is ErrInvalid.
func MessageFinishArgs(id string, claimedUntil time.Time, r nextup.MessageResult) ([]any, error) {
	switch r.State {
	case nextup.MessageSent, nextup.MessageFailed, nextup.MessageDead:
	default:
		return nil, fmt.Errorf("want sent, failed or dead: %w", nextup.ErrInvalid)
	}
	var next any
	if r.State == nextup.MessageFailed {
		next = TS(r.NextAttemptAt)
	}
	var sent any
	if r.State == nextup.MessageSent {
		sent = TS(r.At)
	}
	return []any{r.State, next, sent, r.Error, r.ProviderID, id, TS(claimedUntil)}, nil
}

const (
	// MessageRequeue gives a dead message a fresh set of attempts, due at
	// the time given, and returns it.
	MessageRequeue = `UPDATE messages
		SET state = 'queued', attempts = 0, next_attempt_at = ?, claimed_until = NULL
		WHERE id = ? AND state = 'dead'
		RETURNING ` + MessageCols

	// MessageUndelivered turns a sent message dead with the provider's
	// reason.
	MessageUndelivered = `UPDATE messages SET state = 'dead', last_error = ?
		WHERE id = ? AND state = 'sent'
		RETURNING ` + MessageCols

	// MessageCancelByOffer cancels an offer's queued and failed messages.
	// It repeats offer_id <> '' so the partial index messages_offer is used.
	MessageCancelByOffer = `UPDATE messages SET state = 'cancelled'
		WHERE offer_id = ? AND offer_id <> '' AND state IN ('queued', 'failed')`
)

// MessageCounts returns the query of Tx.MessageCounts, rows of channel,
// state and count, and its arguments: of one business, or of all for "".
func MessageCounts(businessID string) (string, []any) {
	if businessID != "" {
		return `SELECT channel, state, count(*) FROM messages WHERE business_id = ? GROUP BY channel, state`, []any{businessID}
	}
	return `SELECT channel, state, count(*) FROM messages GROUP BY channel, state`, []any{}
}

// MessageCreate queues an outbox message, queued unless m says otherwise.
func (t *Tx) MessageCreate(ctx context.Context, m nextup.Message) error {
	if m.State == "" {
		m.State = nextup.MessageQueued
	}
	err := t.r.Defer(ctx, MessageInsert, MessageInsertArgs(m)...)
	t.wake = t.wake || err == nil
	return t.err("create message "+m.ID, err)
}

// MessageGet reads an outbox message.
func (t *Tx) MessageGet(ctx context.Context, id string) (nextup.Message, error) {
	m, err := ScanMessage(t.r.QueryRow(ctx, MessageGet, id))
	return m, t.err("get message "+id, err)
}

// MessageList returns outbox rows newest first.
func (t *Tx) MessageList(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	q, args := MessageSelect(f)
	q += ` ORDER BY created_at DESC, ` + t.d.RowID + ` DESC LIMIT ?`
	args = append(args, t.limit(f.Limit))
	out, err := all(ctx, t, ScanMessage, q, args...)
	return out, t.err("list messages", err)
}

// MessageClaimDue leases due messages in one statement of the dialect's
// (Dialect.MessageClaimDue). Attempts counts the outcomes recorded so far
// (MessageFinish adds one), so a claimed message says how many sends went
// before this one.
func (t *Tx) MessageClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]nextup.Message, error) {
	out, err := all(ctx, t, ScanMessage, t.d.MessageClaimDue, TS(now), TS(now.Add(lease)), t.limit(limit))
	if err != nil {
		return nil, t.err("claim due messages", err)
	}
	// Stable: messages made at the same instant keep the order the store
	// returned them in (in practice the order they were written: a hold's
	// message before its confirmation).
	slices.SortStableFunc(out, MessageDueOrder)
	return out, nil
}

// MessageClaim leases one message as MessageClaimDue would have. When
// the statement changes no row, the message is read again to say why: it
// is missing (ErrNotFound) or may not be claimed now (ErrConflict).
func (t *Tx) MessageClaim(ctx context.Context, id string, now time.Time, lease time.Duration) (nextup.Message, error) {
	op := "claim message " + id
	m, err := ScanMessage(t.r.QueryRow(ctx, MessageClaim, id, TS(now), TS(now.Add(lease))))
	switch {
	case err == nil:
		return m, nil
	case !isNoRows(err):
		return nextup.Message{}, t.err(op, err)
	}
	m, err = ScanMessage(t.r.QueryRow(ctx, MessageGet, id))
	if err != nil {
		return nextup.Message{}, t.err(op, err)
	}
	why := unclaimable(m, now)
	if why == "" {
		// Claimable when read again: it changed between the two
		// statements (PostgreSQL's READ COMMITTED), so the claim lost.
		why = "changed meanwhile"
	}
	return nextup.Message{}, fmt.Errorf("%s: %s: %w", op, why, nextup.ErrConflict)
}

// MessageFinish records a send's outcome under the lease it was sent under;
// a relay whose lease ran out (and was taken over) gets ErrConflict. A
// message cancelled while it was being sent stays cancelled unless the send
// went through.
func (t *Tx) MessageFinish(ctx context.Context, id string, claimedUntil time.Time, r nextup.MessageResult) error {
	op := fmt.Sprintf("finish message %s as %s", id, r.State)
	args, err := MessageFinishArgs(id, claimedUntil, r)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return t.execOne(ctx, op, "messages", id, MessageFinish, args...)
}

// MessageRequeue gives a dead message a fresh set of attempts, due now.
func (t *Tx) MessageRequeue(ctx context.Context, id string, now time.Time) (nextup.Message, error) {
	m, err := ScanMessage(t.r.QueryRow(ctx, MessageRequeue, TS(now), id))
	t.wake = t.wake || err == nil
	return returning(ctx, t, "requeue message "+id, "messages", id, m, err)
}

// MessageUndelivered turns a sent message dead with the provider's reason
// (a bounce after the send).
func (t *Tx) MessageUndelivered(ctx context.Context, id, reason string) (nextup.Message, error) {
	m, err := ScanMessage(t.r.QueryRow(ctx, MessageUndelivered, reason, id))
	return returning(ctx, t, "message "+id+" undelivered", "messages", id, m, err)
}

// MessageCancelByOffer cancels the offer's messages that are still waiting
// to go (queued, or failed and due for a retry). One being sent right now
// keeps its lease and its outcome.
func (t *Tx) MessageCancelByOffer(ctx context.Context, offerID string) error {
	if offerID == "" {
		return nil
	}
	_, err := t.r.Exec(ctx, MessageCancelByOffer, offerID)
	return t.err("cancel messages of offer "+offerID, err)
}

// MessageCounts counts a business's messages (every business's, for "")
// by channel and state.
func (t *Tx) MessageCounts(ctx context.Context, businessID string) (map[nextup.Channel]map[nextup.MessageState]int, error) {
	q, args := MessageCounts(businessID)
	rows, err := t.r.Query(ctx, q, args...)
	if err != nil {
		return nil, t.err("count messages", err)
	}
	defer rows.Close()
	out := map[nextup.Channel]map[nextup.MessageState]int{}
	for rows.Next() {
		var ch, st string
		var n int
		if err := rows.Scan(&ch, &st, &n); err != nil {
			return nil, t.err("count messages", err)
		}
		if out[nextup.Channel(ch)] == nil {
			out[nextup.Channel(ch)] = map[nextup.MessageState]int{}
		}
		out[nextup.Channel(ch)][nextup.MessageState(st)] = n
	}
	return out, t.err("count messages", rows.Err())
}
