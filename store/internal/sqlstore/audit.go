package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// AuditCols are the columns ScanAudit reads, in its order.
const AuditCols = `id, business_id, at, actor, subject_type, subject_id, slot_id, from_state, to_state,
	reason, rule_version, detail`

// ScanAudit reads a row of AuditCols. Detail is JSON, or NULL for none.
func ScanAudit(r Scanner) (nextup.AuditEvent, error) {
	var (
		ev     nextup.AuditEvent
		at     int64
		detail *string
	)
	if err := r.Scan(&ev.ID, &ev.BusinessID, &at, &ev.Actor, &ev.SubjectType, &ev.SubjectID, &ev.SlotID,
		&ev.From, &ev.To, &ev.Reason, &ev.RuleVersion, &detail); err != nil {
		return ev, err
	}
	ev.At = FromTS(at)
	if detail != nil {
		if err := json.Unmarshal([]byte(*detail), &ev.Detail); err != nil {
			return ev, fmt.Errorf("audit event %d: detail: %w", ev.ID, err)
		}
	}
	return ev, nil
}

// AuditInsert appends an audit event, its id left to the table;
// AuditInsertArgs gives its arguments.
const AuditInsert = `INSERT INTO audit_events (business_id, at, actor, subject_type,
		subject_id, slot_id, from_state, to_state, reason, rule_version, detail)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// AuditInsertArgs returns the arguments of AuditInsert for ev.
func AuditInsertArgs(ev nextup.AuditEvent) ([]any, error) {
	var detail any
	if ev.Detail != nil {
		b, err := json.Marshal(ev.Detail)
		if err != nil {
			return nil, fmt.Errorf("detail: %w", err)
		}
		detail = string(b)
	}
	return []any{ev.BusinessID, TS(ev.At), ev.Actor, ev.SubjectType, ev.SubjectID, ev.SlotID, ev.From, ev.To,
		ev.Reason, ev.RuleVersion, detail}, nil
}

// AuditSelect returns the query of Tx.AuditList up to its business
// condition, and its arguments: the slot, subject, time and paging
// conditions of f.
// Tx.AuditList adds the business condition (with the dialect's NoIndex
// hint), ORDER BY id and the limit.
func AuditSelect(f nextup.AuditFilter) (string, []any) {
	q := `SELECT ` + AuditCols + ` FROM audit_events WHERE 1 = 1`
	var args []any
	if f.SlotID != "" {
		q += ` AND slot_id = ?`
		args = append(args, f.SlotID)
	}
	if f.SubjectType != "" {
		q += ` AND subject_type = ?`
		args = append(args, f.SubjectType)
	}
	if f.SubjectID != "" {
		q += ` AND subject_id = ?`
		args = append(args, f.SubjectID)
	}
	if !f.Since.IsZero() {
		q += ` AND at >= ?`
		args = append(args, TS(f.Since))
	}
	if !f.Until.IsZero() {
		q += ` AND at < ?`
		args = append(args, TS(f.Until))
	}
	if f.AfterID > 0 {
		q += ` AND id > ?`
		args = append(args, f.AfterID)
	}
	return q, args
}

// AuditAppend appends one row. Its id comes from the table: in commit
// order on SQLite (one writer), in insertion order on PostgreSQL (an
// identity column; concurrent transactions may commit in another order).
func (t *Tx) AuditAppend(ctx context.Context, ev nextup.AuditEvent) error {
	op := fmt.Sprintf("append audit %s %s", ev.SubjectType, ev.SubjectID)
	args, err := AuditInsertArgs(ev)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return t.err(op, t.r.Defer(ctx, AuditInsert, args...))
}

// AuditList reads oldest first through the slot, subject or business
// index.
func (t *Tx) AuditList(ctx context.Context, f nextup.AuditFilter) ([]nextup.AuditEvent, error) {
	q, args := AuditSelect(f)
	if f.BusinessID != "" {
		// With a slot or subject named, that index is the narrow one; on
		// SQLite the unary + keeps the planner off the business index
		// (PostgreSQL's planner picks from statistics and takes no hint).
		col := "business_id"
		if f.SlotID != "" || (f.SubjectType != "" && f.SubjectID != "") {
			col = t.d.noIndex(col)
		}
		q += ` AND ` + col + ` = ?`
		args = append(args, f.BusinessID)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, t.limit(f.Limit))
	out, err := all(ctx, t, ScanAudit, q, args...)
	return out, t.err("list audit", err)
}
