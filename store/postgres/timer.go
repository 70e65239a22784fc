package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

const timerCols = `id, business_id, kind, subject_id, key, due_at, claimed_until, claimed_by, attempts,
	done_at, created_at`

func scanTimer(r scanner) (nextup.Timer, error) {
	var (
		tm            nextup.Timer
		due, created  int64
		claimed, done *int64
	)
	err := r.Scan(&tm.ID, &tm.BusinessID, &tm.Kind, &tm.SubjectID, &tm.Key, &due, &claimed, &tm.ClaimedBy,
		&tm.Attempts, &done, &created)
	tm.DueAt, tm.CreatedAt = fromTS(due), fromTS(created)
	tm.ClaimedUntil, tm.DoneAt = fromNullTS(claimed), fromNullTS(done)
	return tm, err
}

// TimerSchedule inserts a timer or, when a pending one has the same key,
// moves it. Moving drops any lease on it: a sweeper still running the old
// deadline then fails TimerDone, and the timer fires again at its new time.
// A timer with an empty key is never merged with another.
func (t *tx) TimerSchedule(ctx context.Context, tm nextup.Timer) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO timers (business_id, kind, subject_id, key, due_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) WHERE done_at IS NULL AND key <> '' DO UPDATE SET
			business_id = excluded.business_id, kind = excluded.kind, subject_id = excluded.subject_id,
			due_at = excluded.due_at, claimed_until = NULL, claimed_by = '', attempts = 0`,
		tm.BusinessID, tm.Kind, tm.SubjectID, tm.Key, ts(tm.DueAt), ts(tm.CreatedAt))
	return dbErr(fmt.Sprintf("schedule timer %s", tm.Key), err)
}

// TimerCancel deletes the pending timer with this key; none is no error.
func (t *tx) TimerCancel(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, qTimerCancel, key)
	return dbErr("cancel timer "+key, err)
}

// TimerClaimDue leases due timers in one UPDATE. The batch is chosen with
// FOR UPDATE SKIP LOCKED, so concurrent sweepers take disjoint batches
// instead of queueing on each other's rows; the outer WHERE repeats the
// condition so that a row another sweeper leased meanwhile is passed over.
func (t *tx) TimerClaimDue(ctx context.Context, now time.Time, lease time.Duration, owner string, limit int) ([]nextup.Timer, error) {
	out, err := scanAll(scanTimer)(t.tx.QueryContext(ctx, `WITH due AS MATERIALIZED (
			SELECT id FROM timers
			WHERE done_at IS NULL AND due_at <= ?1 AND (claimed_until IS NULL OR claimed_until <= ?1)
			ORDER BY due_at, id
			LIMIT ?4
			FOR UPDATE SKIP LOCKED)
		UPDATE timers
		SET claimed_until = ?2, claimed_by = ?3, attempts = attempts + 1
		WHERE id IN (SELECT id FROM due)
		  AND done_at IS NULL AND (claimed_until IS NULL OR claimed_until <= ?1)
		RETURNING `+timerCols, ts(now), ts(now.Add(lease)), owner, limitArg(limit)))
	if err != nil {
		return nil, dbErr("claim due timers", err)
	}
	// RETURNING gives no order; hand them out oldest due first.
	slices.SortFunc(out, func(a, b nextup.Timer) int {
		if c := a.DueAt.Compare(b.DueAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// TimerDone finishes a timer only under the exact lease it was claimed
// with; a sweeper that lost its lease gets ErrConflict.
func (t *tx) TimerDone(ctx context.Context, id int64, claimedUntil time.Time, at time.Time) error {
	op := fmt.Sprintf("timer %d done", id)
	res, err := t.tx.ExecContext(ctx, `UPDATE timers SET done_at = ?
		WHERE id = ? AND claimed_until = ? AND done_at IS NULL`, ts(at), id, ts(claimedUntil))
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
	err = t.tx.QueryRowContext(ctx, `SELECT 1 FROM timers WHERE id = ?`, id).Scan(&one)
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
	if err := t.tx.QueryRowContext(ctx, `SELECT min(due_at) FROM timers WHERE done_at IS NULL`).Scan(&due); err != nil {
		return time.Time{}, dbErr("next due timer", err)
	}
	if due == nil {
		return time.Time{}, fmt.Errorf("next due timer: %w", nextup.ErrNotFound)
	}
	return fromTS(*due), nil
}

func (t *tx) TimerList(ctx context.Context, f nextup.TimerFilter) ([]nextup.Timer, error) {
	q := `SELECT ` + timerCols + ` FROM timers WHERE 1 = 1`
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
	args = append(args, limitArg(f.Limit))
	out, err := scanAll(scanTimer)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list timers", err)
}

const idempotencyCols = `scope, key, fingerprint, status, header, body, created_at, expires_at`

func scanIdempotency(r scanner) (nextup.IdempotencyRecord, error) {
	var (
		rec              nextup.IdempotencyRecord
		header           *string
		created, expires int64
	)
	if err := r.Scan(&rec.Scope, &rec.Key, &rec.Fingerprint, &rec.Status, &header, &rec.Body, &created, &expires); err != nil {
		return rec, err
	}
	rec.CreatedAt, rec.ExpiresAt = fromTS(created), fromTS(expires)
	if header != nil {
		if err := json.Unmarshal([]byte(*header), &rec.Header); err != nil {
			return rec, fmt.Errorf("idempotency record %s: header: %w", rec.Key, err)
		}
	}
	return rec, nil
}

func headerJSON(h map[string]string) (any, error) {
	if h == nil {
		return nil, nil
	}
	b, err := json.Marshal(h)
	return string(b), err
}

// IdempotencyStart claims (scope, key) for a first request. A record still
// alive at r.CreatedAt is returned with ErrConflict (a replay, or a
// request still running); an expired one is replaced. The insert and the
// replacement are one statement, so two first requests racing each other
// cannot both win: the loser waits for the winner's row and then finds it
// alive.
func (t *tx) IdempotencyStart(ctx context.Context, r nextup.IdempotencyRecord) (nextup.IdempotencyRecord, error) {
	op := "start idempotent request " + r.Key
	r.Status = 0
	header, err := headerJSON(r.Header)
	if err != nil {
		return nextup.IdempotencyRecord{}, fmt.Errorf("%s: header: %w", op, err)
	}
	res, err := t.tx.ExecContext(ctx, `INSERT INTO idempotency (`+idempotencyCols+`)
		VALUES (?, ?, ?, 0, ?, ?, ?, ?)
		ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = 0,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at,
			expires_at = excluded.expires_at
		WHERE idempotency.expires_at <= excluded.created_at`,
		r.Scope, r.Key, r.Fingerprint, header, r.Body, ts(r.CreatedAt), ts(r.ExpiresAt))
	if err != nil {
		return nextup.IdempotencyRecord{}, dbErr(op, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return r, nil
	}
	old, err := scanIdempotency(t.tx.QueryRowContext(ctx, `SELECT `+idempotencyCols+` FROM idempotency
		WHERE scope = ? AND key = ?`, r.Scope, r.Key))
	if err != nil {
		return nextup.IdempotencyRecord{}, dbErr(op, err)
	}
	return old, fmt.Errorf("%s: %w", op, nextup.ErrConflict)
}

// IdempotencyFinish stores the response (and a new expiry, when given).
func (t *tx) IdempotencyFinish(ctx context.Context, r nextup.IdempotencyRecord) error {
	op := "finish idempotent request " + r.Key
	header, err := headerJSON(r.Header)
	if err != nil {
		return fmt.Errorf("%s: header: %w", op, err)
	}
	var expires any
	if !r.ExpiresAt.IsZero() {
		expires = ts(r.ExpiresAt)
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE idempotency
		SET status = ?, header = ?, body = ?, expires_at = coalesce(?, expires_at)
		WHERE scope = ? AND key = ?`,
		r.Status, header, r.Body, expires, r.Scope, r.Key)
	return t.touched(ctx, op, res, err)
}

func (t *tx) IdempotencyDelete(ctx context.Context, scope, key string) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM idempotency WHERE scope = ? AND key = ?`, scope, key)
	return dbErr("delete idempotent request "+key, err)
}

func (t *tx) IdempotencyPurge(ctx context.Context, before time.Time) (int, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM idempotency WHERE expires_at < ?`, ts(before))
	if err != nil {
		return 0, dbErr("purge idempotency records", err)
	}
	n, err := res.RowsAffected()
	return int(n), dbErr("purge idempotency records", err)
}

// SuppressionAdd records (or re-records, with the newer reason and time)
// that an address may not be contacted on a channel.
func (t *tx) SuppressionAdd(ctx context.Context, s nextup.Suppression) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO suppressions (business_id, channel, address, reason, at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (business_id, channel, address) DO UPDATE SET reason = excluded.reason, at = excluded.at`,
		s.BusinessID, s.Channel, s.Address, s.Reason, ts(s.At))
	return dbErr("add suppression", err)
}

func (t *tx) SuppressionList(ctx context.Context, businessID string, addresses []string) ([]nextup.Suppression, error) {
	if len(addresses) == 0 {
		return nil, nil
	}
	args := []any{businessID}
	for _, a := range addresses {
		args = append(args, a)
	}
	out, err := scanAll(func(r scanner) (nextup.Suppression, error) {
		var (
			s  nextup.Suppression
			at int64
		)
		err := r.Scan(&s.BusinessID, &s.Channel, &s.Address, &s.Reason, &at)
		s.At = fromTS(at)
		return s, err
	})(t.tx.QueryContext(ctx, `SELECT business_id, channel, address, reason, at FROM suppressions
		WHERE business_id = ? AND address IN (`+placeholders(len(addresses))+`)
		ORDER BY address, channel`, args...))
	return out, dbErr("list suppressions", err)
}

// Hot look-ups by secret or key, named so a test can check each reads
// its index (the partial indexes need the "<> empty" condition to be used).
const (
	qTimerCancel = `DELETE FROM timers WHERE key = ? AND key <> '' AND done_at IS NULL`
)
