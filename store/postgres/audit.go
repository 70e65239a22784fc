package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

const auditCols = `id, business_id, at, actor, subject_type, subject_id, slot_id, from_state, to_state,
	reason, rule_version, detail`

func scanAudit(r scanner) (nextup.AuditEvent, error) {
	var (
		ev     nextup.AuditEvent
		at     int64
		detail *string
	)
	if err := r.Scan(&ev.ID, &ev.BusinessID, &at, &ev.Actor, &ev.SubjectType, &ev.SubjectID, &ev.SlotID,
		&ev.From, &ev.To, &ev.Reason, &ev.RuleVersion, &detail); err != nil {
		return ev, err
	}
	ev.At = fromTS(at)
	if detail != nil {
		if err := json.Unmarshal([]byte(*detail), &ev.Detail); err != nil {
			return ev, fmt.Errorf("audit event %d: detail: %w", ev.ID, err)
		}
	}
	return ev, nil
}

// AuditAppend appends one row; its id comes from an identity column, in
// the order rows are inserted (concurrent transactions may commit in
// another order).
func (t *tx) AuditAppend(ctx context.Context, ev nextup.AuditEvent) error {
	var detail any
	if ev.Detail != nil {
		b, err := json.Marshal(ev.Detail)
		if err != nil {
			return fmt.Errorf("append audit %s %s: detail: %w", ev.SubjectType, ev.SubjectID, err)
		}
		detail = string(b)
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO audit_events (business_id, at, actor, subject_type,
			subject_id, slot_id, from_state, to_state, reason, rule_version, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.BusinessID, ts(ev.At), ev.Actor, ev.SubjectType, ev.SubjectID, ev.SlotID, ev.From, ev.To,
		ev.Reason, ev.RuleVersion, detail)
	return dbErr(fmt.Sprintf("append audit %s %s", ev.SubjectType, ev.SubjectID), err)
}

// AuditList reads oldest first through the slot, subject or business index.
func (t *tx) AuditList(ctx context.Context, f nextup.AuditFilter) ([]nextup.AuditEvent, error) {
	q := `SELECT ` + auditCols + ` FROM audit_events WHERE 1 = 1`
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
	if f.BusinessID != "" {
		// PostgreSQL's planner picks among the slot, subject and business
		// indexes from statistics; no hint is needed (or possible).
		q += ` AND business_id = ?`
		args = append(args, f.BusinessID)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, limitArg(f.Limit))
	out, err := scanAll(scanAudit)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list audit", err)
}
