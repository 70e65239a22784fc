package sqlite

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// TimerSchedule inserts a timer or, when a pending one has the same key,
// moves it. Moving drops any lease on it: a sweeper still running the old
// deadline then fails TimerDone, and the timer fires again at its new time.
// A timer with an empty key is never merged with another.
func (t *tx) TimerSchedule(ctx context.Context, tm nextup.Timer) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.TimerSchedule,
		tm.BusinessID, tm.Kind, tm.SubjectID, tm.Key, sqlstore.TS(tm.DueAt), sqlstore.TS(tm.CreatedAt))
	return dbErr(fmt.Sprintf("schedule timer %s", tm.Key), err)
}

// TimerCancel deletes the pending timer with this key; none is no error.
func (t *tx) TimerCancel(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, sqlstore.TimerCancel, key)
	return dbErr("cancel timer "+key, err)
}

// TimerClaimDue leases due timers in one UPDATE; on SQLite the single
// writer is what SKIP LOCKED is on PostgreSQL.
func (t *tx) TimerClaimDue(ctx context.Context, now time.Time, lease time.Duration, owner string, limit int) ([]nextup.Timer, error) {
	out, err := scanAll(sqlstore.ScanTimer)(t.tx.QueryContext(ctx, `UPDATE timers
		SET claimed_until = ?2, claimed_by = ?3, attempts = attempts + 1
		WHERE id IN (
			SELECT id FROM timers
			WHERE done_at IS NULL AND due_at <= ?1 AND (claimed_until IS NULL OR claimed_until <= ?1)
			ORDER BY due_at, id
			LIMIT ?4)
		RETURNING `+sqlstore.TimerCols, sqlstore.TS(now), sqlstore.TS(now.Add(lease)), owner, limitArg(limit)))
	if err != nil {
		return nil, dbErr("claim due timers", err)
	}
	slices.SortFunc(out, sqlstore.TimerDueOrder)
	return out, nil
}

// TimerDone finishes a timer only under the exact lease it was claimed
// with; a sweeper that lost its lease gets ErrConflict.
func (t *tx) TimerDone(ctx context.Context, id int64, claimedUntil time.Time, at time.Time) error {
	op := fmt.Sprintf("timer %d done", id)
	res, err := t.tx.ExecContext(ctx, sqlstore.TimerDone, sqlstore.TS(at), id, sqlstore.TS(claimedUntil))
	if err != nil {
		return dbErr(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return dbErr(op, err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = t.tx.QueryRowContext(ctx, sqlstore.Exists("timers"), id).Scan(&one)
	switch {
	case isNoRows(err):
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	case err != nil:
		return dbErr(op, err)
	}
	return fmt.Errorf("%s: lease lost: %w", op, nextup.ErrConflict)
}

func (t *tx) TimerNextDue(ctx context.Context) (time.Time, error) {
	var due *int64
	if err := t.tx.QueryRowContext(ctx, sqlstore.TimerNextDue).Scan(&due); err != nil {
		return time.Time{}, dbErr("next due timer", err)
	}
	if due == nil {
		return time.Time{}, fmt.Errorf("next due timer: %w", nextup.ErrNotFound)
	}
	return sqlstore.FromTS(*due), nil
}

func (t *tx) TimerList(ctx context.Context, f nextup.TimerFilter) ([]nextup.Timer, error) {
	q, args := sqlstore.TimerList(f, limitArg(f.Limit))
	out, err := scanAll(sqlstore.ScanTimer)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list timers", err)
}

// IdempotencyStart claims (scope, key) for a first request. A record still
// alive at r.CreatedAt is returned with ErrConflict (a replay, or a
// request still running); an expired one is replaced.
func (t *tx) IdempotencyStart(ctx context.Context, r nextup.IdempotencyRecord) (nextup.IdempotencyRecord, error) {
	op := "start idempotent request " + r.Key
	old, err := sqlstore.ScanIdempotency(t.tx.QueryRowContext(ctx, `SELECT `+sqlstore.IdempotencyCols+` FROM idempotency
		WHERE scope = ? AND key = ? AND expires_at > ?`, r.Scope, r.Key, sqlstore.TS(r.CreatedAt)))
	switch {
	case err == nil:
		return old, fmt.Errorf("%s: %w", op, nextup.ErrConflict)
	case !isNoRows(err):
		return nextup.IdempotencyRecord{}, dbErr(op, err)
	}
	r.Status = 0
	header, err := sqlstore.HeaderJSON(r.Header)
	if err != nil {
		return nextup.IdempotencyRecord{}, fmt.Errorf("%s: header: %w", op, err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT OR REPLACE INTO idempotency (`+sqlstore.IdempotencyCols+`)
		VALUES (?, ?, ?, 0, ?, ?, ?, ?)`,
		r.Scope, r.Key, r.Fingerprint, header, r.Body, sqlstore.TS(r.CreatedAt), sqlstore.TS(r.ExpiresAt))
	if err != nil {
		return nextup.IdempotencyRecord{}, dbErr(op, err)
	}
	return r, nil
}

// IdempotencyFinish stores the response (and a new expiry, when given).
func (t *tx) IdempotencyFinish(ctx context.Context, r nextup.IdempotencyRecord) error {
	op := "finish idempotent request " + r.Key
	header, err := sqlstore.HeaderJSON(r.Header)
	if err != nil {
		return fmt.Errorf("%s: header: %w", op, err)
	}
	var expires any
	if !r.ExpiresAt.IsZero() {
		expires = sqlstore.TS(r.ExpiresAt)
	}
	res, err := t.tx.ExecContext(ctx, sqlstore.IdempotencyFinish,
		r.Status, header, r.Body, expires, r.Scope, r.Key)
	return t.touched(ctx, op, res, err)
}

func (t *tx) IdempotencyDelete(ctx context.Context, scope, key string) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.IdempotencyDelete, scope, key)
	return dbErr("delete idempotent request "+key, err)
}

func (t *tx) IdempotencyPurge(ctx context.Context, before time.Time) (int, error) {
	res, err := t.tx.ExecContext(ctx, sqlstore.IdempotencyPurge, sqlstore.TS(before))
	if err != nil {
		return 0, dbErr("purge idempotency records", err)
	}
	n, err := res.RowsAffected()
	return int(n), dbErr("purge idempotency records", err)
}

// SuppressionAdd records (or re-records, with the newer reason and time)
// that an address may not be contacted on a channel.
func (t *tx) SuppressionAdd(ctx context.Context, s nextup.Suppression) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.SuppressionAdd, s.BusinessID, s.Channel, s.Address, s.Reason, sqlstore.TS(s.At))
	return dbErr("add suppression", err)
}

func (t *tx) SuppressionDelete(ctx context.Context, businessID string, ch nextup.Channel, address string) (bool, error) {
	res, err := t.tx.ExecContext(ctx, sqlstore.SuppressionDelete, businessID, ch, address)
	if err != nil {
		return false, dbErr("delete suppression", err)
	}
	n, err := res.RowsAffected()
	return n > 0, dbErr("delete suppression", err)
}

func (t *tx) SuppressionList(ctx context.Context, businessID string, addresses []string) ([]nextup.Suppression, error) {
	if len(addresses) == 0 {
		return nil, nil
	}
	q, args := sqlstore.SuppressionList(businessID, addresses)
	out, err := scanAll(sqlstore.ScanSuppression)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list suppressions", err)
}
