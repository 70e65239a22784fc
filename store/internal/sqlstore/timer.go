package sqlstore

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// TimerCols are the columns ScanTimer reads, in its order.
const TimerCols = `id, business_id, kind, subject_id, key, due_at, claimed_until, claimed_by, attempts,
	done_at, created_at`

// ScanTimer reads a row of TimerCols.
func ScanTimer(r Scanner) (nextup.Timer, error) {
	var (
		tm            nextup.Timer
		due, created  int64
		claimed, done *int64
	)
	err := r.Scan(&tm.ID, &tm.BusinessID, &tm.Kind, &tm.SubjectID, &tm.Key, &due, &claimed, &tm.ClaimedBy,
		&tm.Attempts, &done, &created)
	tm.DueAt, tm.CreatedAt = FromTS(due), FromTS(created)
	tm.ClaimedUntil, tm.DoneAt = FromNullTS(claimed), FromNullTS(done)
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
			due_at = excluded.due_at, claimed_until = NULL, claimed_by = '', attempts = 0`

	// TimerCancel deletes the pending timer with a key. It repeats the
	// conditions of the partial index timers_pending_key, which SQLite
	// needs before it uses the index.
	TimerCancel = `DELETE FROM timers WHERE key = ? AND key <> '' AND done_at IS NULL`

	// TimerDone stamps done_at on a pending timer only under the exact
	// lease (claimed_until) it was claimed with.
	TimerDone = `UPDATE timers SET done_at = ?
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
	// IdempotencyFinish stores a response (status, header, body) and, when
	// the argument is not NULL, a new expiry.
	IdempotencyFinish = `UPDATE idempotency
		SET status = ?, header = ?, body = ?, expires_at = coalesce(?, expires_at)
		WHERE scope = ? AND key = ?`

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

// SuppressionList returns the query of Tx.SuppressionList and its
// arguments, for at least one address; ScanSuppression reads its rows.
func SuppressionList(businessID string, addresses []string) (string, []any) {
	args := []any{businessID}
	for _, a := range addresses {
		args = append(args, a)
	}
	return `SELECT business_id, channel, address, reason, at FROM suppressions
		WHERE business_id = ? AND address IN (` + Placeholders(len(addresses)) + `)
		ORDER BY address, channel`, args
}

// ScanSuppression reads a row of SuppressionList.
func ScanSuppression(r Scanner) (nextup.Suppression, error) {
	var (
		s  nextup.Suppression
		at int64
	)
	err := r.Scan(&s.BusinessID, &s.Channel, &s.Address, &s.Reason, &at)
	s.At = FromTS(at)
	return s, err
}
