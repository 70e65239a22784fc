package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// TimerCols are the columns ScanTimer reads, in its order.
const TimerCols = `id, business_id, kind, subject_id, key, due_at, claimed_until, claimed_by, attempts,
	done_at, created_at, renewed_until`

// ScanTimer reads a row of TimerCols.
func ScanTimer(r Scanner) (nextup.Timer, error) {
	var (
		tm            nextup.Timer
		due, created  int64
		claimed, done *int64
		renewed       *int64
	)
	err := r.Scan(&tm.ID, &tm.BusinessID, &tm.Kind, &tm.SubjectID, &tm.Key, &due, &claimed, &tm.ClaimedBy,
		&tm.Attempts, &done, &created, &renewed)
	tm.DueAt, tm.CreatedAt = FromTS(due), FromTS(created)
	tm.ClaimedUntil, tm.DoneAt = FromNullTS(claimed), FromNullTS(done)
	tm.RenewedUntil = FromNullTS(renewed)
	return tm, err
}

// Queries of timers, each named after the Tx method that runs it.
const (
	// TimerSchedule inserts a timer or, when a pending one has the same
	// non-empty key, moves it and drops its lease.
	TimerSchedule = `INSERT INTO timers (business_id, kind, subject_id, key, due_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) WHERE done_at IS NULL AND key <> '' DO UPDATE SET
			business_id = excluded.business_id, kind = excluded.kind, subject_id = excluded.subject_id,
			due_at = excluded.due_at, claimed_until = NULL, claimed_by = '', attempts = 0, renewed_until = NULL`

	// TimerCancel deletes the pending timer with a key. It repeats the
	// conditions of the partial index timers_pending_key, which SQLite
	// needs before it uses the index.
	TimerCancel = `DELETE FROM timers WHERE key = ? AND key <> '' AND done_at IS NULL`

	// TimerDone stamps done_at on a pending timer only under the exact
	// lease (claimed_until) it was claimed with.
	TimerDone = `UPDATE timers SET done_at = ?
		WHERE id = ? AND claimed_until = ? AND done_at IS NULL`

	// TimerRenew extends the lease of a pending timer, only while the
	// claim it was leased under (claimed_until) still holds it.
	TimerRenew = `UPDATE timers SET renewed_until = ?
		WHERE id = ? AND claimed_until = ? AND done_at IS NULL`

	// TimerNextDue reads the earliest due_at of the pending timers, NULL
	// when there are none.
	TimerNextDue = `SELECT min(due_at) FROM timers WHERE done_at IS NULL`
)

// TimerDueOrder orders claimed timers as TimerClaimDue hands them out
// (RETURNING gives no order): oldest due first, then by id.
func TimerDueOrder(a, b nextup.Timer) int {
	if c := a.DueAt.Compare(b.DueAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// TimerList returns the query of Tx.TimerList and its arguments; limit is
// the store's LIMIT argument for f.Limit.
func TimerList(f nextup.TimerFilter, limit any) (string, []any) {
	q := `SELECT ` + TimerCols + ` FROM timers WHERE 1 = 1`
	var args []any
	if f.BusinessID != "" {
		q += ` AND business_id = ?`
		args = append(args, f.BusinessID)
	}
	if f.Kind != "" {
		q += ` AND kind = ?`
		args = append(args, f.Kind)
	}
	if f.SubjectID != "" {
		q += ` AND subject_id = ?`
		args = append(args, f.SubjectID)
	}
	if f.PendingOnly {
		q += ` AND done_at IS NULL`
	}
	q += ` ORDER BY due_at, id LIMIT ?`
	return q, append(args, limit)
}

// IdempotencyCols are the columns ScanIdempotency reads, in its order.
const IdempotencyCols = `scope, key, fingerprint, status, header, body, created_at, expires_at`

// ScanIdempotency reads a row of IdempotencyCols. The response header is
// JSON, or NULL for none.
func ScanIdempotency(r Scanner) (nextup.IdempotencyRecord, error) {
	var (
		rec              nextup.IdempotencyRecord
		header           *string
		created, expires int64
	)
	if err := r.Scan(&rec.Scope, &rec.Key, &rec.Fingerprint, &rec.Status, &header, &rec.Body, &created, &expires); err != nil {
		return rec, err
	}
	rec.CreatedAt, rec.ExpiresAt = FromTS(created), FromTS(expires)
	if header != nil {
		if err := json.Unmarshal([]byte(*header), &rec.Header); err != nil {
			return rec, fmt.Errorf("idempotency record %s: header: %w", rec.Key, err)
		}
	}
	return rec, nil
}

// HeaderJSON returns a response header as stored: JSON text, or NULL (a
// nil any) for a nil map.
func HeaderJSON(h map[string]string) (any, error) {
	if h == nil {
		return nil, nil
	}
	b, err := json.Marshal(h)
	return string(b), err
}

// Queries of idempotency records and suppressions, each named after the
// Tx method that runs it.
const (
	// IdempotencyStart inserts a running record (status 0) for (scope,
	// key), or replaces one that expired by its created_at; a record still
	// alive is left as it is, and the statement changes no row.
	IdempotencyStart = `INSERT INTO idempotency (` + IdempotencyCols + `)
		VALUES (?, ?, ?, 0, ?, ?, ?, ?)
		ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = 0,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at,
			expires_at = excluded.expires_at
		WHERE idempotency.expires_at <= excluded.created_at`

	// IdempotencyGet reads the record of (scope, key).
	IdempotencyGet = `SELECT ` + IdempotencyCols + ` FROM idempotency WHERE scope = ? AND key = ?`

	// IdempotencyFinish stores a response (status, header, body) and, when
	// the argument is not NULL, a new expiry, on a record that is still
	// running (status 0); a finished record matches no row.
	IdempotencyFinish = `UPDATE idempotency
		SET status = ?, header = ?, body = ?, expires_at = coalesce(?, expires_at)
		WHERE scope = ? AND key = ? AND status = 0`

	// IdempotencyStatus reads the status of the record of (scope, key).
	IdempotencyStatus = `SELECT status FROM idempotency WHERE scope = ? AND key = ?`

	// IdempotencyDelete deletes the record of (scope, key).
	IdempotencyDelete = `DELETE FROM idempotency WHERE scope = ? AND key = ?`

	// IdempotencyPurge deletes the records expired before a time.
	IdempotencyPurge = `DELETE FROM idempotency WHERE expires_at < ?`

	// SuppressionAdd records, or re-records with the newer reason and
	// time, that an address may not be contacted on a channel.
	SuppressionAdd = `INSERT INTO suppressions (business_id, channel, address, reason, at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (business_id, channel, address) DO UPDATE SET reason = excluded.reason, at = excluded.at`

	// SuppressionDelete lifts one suppression.
	SuppressionDelete = `DELETE FROM suppressions WHERE business_id = ? AND channel = ? AND address = ?`
)

// SuppressionCols are the columns ScanSuppression reads, in its order.
const SuppressionCols = `business_id, channel, address, reason, at`

// SuppressionList returns the query of Tx.SuppressionList and its
// arguments, for at least one address; ScanSuppression reads its rows.
func SuppressionList(businessID string, addresses []string) (string, []any) {
	args := []any{businessID}
	for _, a := range addresses {
		args = append(args, a)
	}
	return `SELECT ` + SuppressionCols + ` FROM suppressions
		WHERE business_id = ? AND address IN (` + Placeholders(len(addresses)) + `)
		ORDER BY address, channel`, args
}

// ScanSuppression reads a row of SuppressionCols.
func ScanSuppression(r Scanner) (nextup.Suppression, error) {
	var (
		s  nextup.Suppression
		at int64
	)
	err := r.Scan(&s.BusinessID, &s.Channel, &s.Address, &s.Reason, &at)
	s.At = FromTS(at)
	return s, err
}

// TimerSchedule inserts a timer or, when a pending one has the same key,
// moves it. Moving drops any lease on it: a sweeper still running the old
// deadline then fails TimerDone, and the timer fires again at its new time.
// A timer with an empty key is never merged with another.
func (t *Tx) TimerSchedule(ctx context.Context, tm nextup.Timer) error {
	err := t.r.Defer(ctx, TimerSchedule,
		tm.BusinessID, tm.Kind, tm.SubjectID, tm.Key, TS(tm.DueAt), TS(tm.CreatedAt))
	t.wake = t.wake || err == nil
	return t.err(fmt.Sprintf("schedule timer %s", tm.Key), err)
}

// TimerCancel deletes the pending timer with this key; none is no error.
func (t *Tx) TimerCancel(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	return t.err("cancel timer "+key, t.r.Defer(ctx, TimerCancel, key))
}

// TimerClaimDue leases due timers in one statement of the dialect's
// (Dialect.TimerClaimDue) and hands them out oldest due first.
func (t *Tx) TimerClaimDue(ctx context.Context, now time.Time, lease time.Duration, owner string, limit int) ([]nextup.Timer, error) {
	out, err := all(ctx, t, ScanTimer, t.d.TimerClaimDue, TS(now), TS(now.Add(lease)), owner, t.limit(limit))
	if err != nil {
		return nil, t.err("claim due timers", err)
	}
	slices.SortFunc(out, TimerDueOrder)
	return out, nil
}

// TimerDone finishes a timer only under the exact lease it was claimed
// with; a sweeper that lost its lease gets ErrConflict.
func (t *Tx) TimerDone(ctx context.Context, id int64, claimedUntil time.Time, at time.Time) error {
	return t.underLease(ctx, id, "done", TimerDone, TS(at), id, TS(claimedUntil))
}

// TimerRenew extends a timer's lease to until while the claim
// claimedUntil still holds it: ErrConflict when it was claimed again,
// rescheduled or done, ErrNotFound when there is no such timer.
func (t *Tx) TimerRenew(ctx context.Context, id int64, claimedUntil, until time.Time) error {
	return t.underLease(ctx, id, "renew", TimerRenew, TS(until), id, TS(claimedUntil))
}

// underLease runs what, a write of timer id that holds only under its
// claim, and tells why it wrote nothing: no such timer (ErrNotFound), or
// the claim no longer holds it (ErrConflict).
func (t *Tx) underLease(ctx context.Context, id int64, what, query string, args ...any) error {
	op := fmt.Sprintf("timer %d %s", id, what)
	n, err := t.r.Exec(ctx, query, args...)
	if err != nil {
		return t.err(op, err)
	}
	if n > 0 {
		return nil
	}
	ok, err := t.exists(ctx, "timers", id)
	switch {
	case err != nil:
		return t.err(op, err)
	case !ok:
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	return fmt.Errorf("%s: lease lost: %w", op, nextup.ErrConflict)
}

// TimerNextDue returns when the earliest pending timer is due.
func (t *Tx) TimerNextDue(ctx context.Context) (time.Time, error) {
	var due *int64
	if err := t.r.QueryRow(ctx, TimerNextDue).Scan(&due); err != nil {
		return time.Time{}, t.err("next due timer", err)
	}
	if due == nil {
		return time.Time{}, fmt.Errorf("next due timer: %w", nextup.ErrNotFound)
	}
	return FromTS(*due), nil
}

// TimerList lists timers by due time.
func (t *Tx) TimerList(ctx context.Context, f nextup.TimerFilter) ([]nextup.Timer, error) {
	q, args := TimerList(f, t.limit(f.Limit))
	out, err := all(ctx, t, ScanTimer, q, args...)
	return out, t.err("list timers", err)
}

// IdempotencyStart claims (scope, key) for a first request. A record still
// alive at r.CreatedAt is returned with ErrConflict (a replay, or a
// request still running); an expired one is replaced. The insert and the
// replacement are one statement, so two first requests racing each other
// cannot both win: the loser waits for the winner's row and then finds it
// alive.
func (t *Tx) IdempotencyStart(ctx context.Context, r nextup.IdempotencyRecord) (nextup.IdempotencyRecord, error) {
	op := "start idempotent request " + r.Key
	r.Status = 0
	header, err := HeaderJSON(r.Header)
	if err != nil {
		return nextup.IdempotencyRecord{}, fmt.Errorf("%s: header: %w", op, err)
	}
	n, err := t.r.Exec(ctx, IdempotencyStart,
		r.Scope, r.Key, r.Fingerprint, header, r.Body, TS(r.CreatedAt), TS(r.ExpiresAt))
	if err != nil {
		return nextup.IdempotencyRecord{}, t.err(op, err)
	}
	if n > 0 {
		return r, nil
	}
	old, err := ScanIdempotency(t.r.QueryRow(ctx, IdempotencyGet, r.Scope, r.Key))
	if err != nil {
		return nextup.IdempotencyRecord{}, t.err(op, err)
	}
	return old, fmt.Errorf("%s: %w", op, nextup.ErrConflict)
}

// IdempotencyFinish stores the response (and a new expiry, when given) of
// a record that is still running; a finished one is ErrConflict and a
// missing one ErrNotFound, and neither changes.
func (t *Tx) IdempotencyFinish(ctx context.Context, r nextup.IdempotencyRecord) error {
	op := "finish idempotent request " + r.Key
	header, err := HeaderJSON(r.Header)
	if err != nil {
		return fmt.Errorf("%s: header: %w", op, err)
	}
	var expires any
	if !r.ExpiresAt.IsZero() {
		expires = TS(r.ExpiresAt)
	}
	n, err := t.r.Exec(ctx, IdempotencyFinish, r.Status, header, r.Body, expires, r.Scope, r.Key)
	if err != nil || n > 0 {
		return t.err(op, err)
	}
	var status int
	if err := t.r.QueryRow(ctx, IdempotencyStatus, r.Scope, r.Key).Scan(&status); err != nil {
		return t.err(op, err) // no row: ErrNotFound
	}
	return fmt.Errorf("%s: already finished with status %d: %w", op, status, nextup.ErrConflict)
}

// IdempotencyDelete forgets a record; none is no error.
func (t *Tx) IdempotencyDelete(ctx context.Context, scope, key string) error {
	_, err := t.r.Exec(ctx, IdempotencyDelete, scope, key)
	return t.err("delete idempotent request "+key, err)
}

// IdempotencyPurge deletes the records expired before a time and counts
// them.
func (t *Tx) IdempotencyPurge(ctx context.Context, before time.Time) (int, error) {
	n, err := t.r.Exec(ctx, IdempotencyPurge, TS(before))
	return t.count("purge idempotency records", n, err)
}

// SuppressionAdd records (or re-records, with the newer reason and time)
// that an address may not be contacted on a channel.
func (t *Tx) SuppressionAdd(ctx context.Context, s nextup.Suppression) error {
	_, err := t.r.Exec(ctx, SuppressionAdd, s.BusinessID, s.Channel, s.Address, s.Reason, TS(s.At))
	return t.err("add suppression", err)
}

// SuppressionDelete lifts a suppression and reports whether there was one.
func (t *Tx) SuppressionDelete(ctx context.Context, businessID string, ch nextup.Channel, address string) (bool, error) {
	n, err := t.r.Exec(ctx, SuppressionDelete, businessID, ch, address)
	if err != nil {
		return false, t.err("delete suppression", err)
	}
	return n > 0, nil
}

// SuppressionList returns the suppressions of these addresses.
func (t *Tx) SuppressionList(ctx context.Context, businessID string, addresses []string) ([]nextup.Suppression, error) {
	if len(addresses) == 0 {
		return nil, nil
	}
	q, args := SuppressionList(businessID, addresses)
	out, err := all(ctx, t, ScanSuppression, q, args...)
	return out, t.err("list suppressions", err)
}
