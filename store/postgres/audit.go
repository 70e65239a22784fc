package postgres

import (
	"context"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// AuditAppend appends one row; its id comes from an identity column, in
// the order rows are inserted (concurrent transactions may commit in
// another order).
func (t *tx) AuditAppend(ctx context.Context, ev nextup.AuditEvent) error {
	op := fmt.Sprintf("append audit %s %s", ev.SubjectType, ev.SubjectID)
	args, err := sqlstore.AuditInsertArgs(ev)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = t.tx.ExecContext(ctx, sqlstore.AuditInsert, args...)
	return dbErr(op, err)
}

// AuditList reads oldest first through the slot, subject or business index.
func (t *tx) AuditList(ctx context.Context, f nextup.AuditFilter) ([]nextup.AuditEvent, error) {
	q, args := sqlstore.AuditSelect(f)
	if f.BusinessID != "" {
		// PostgreSQL's planner picks among the slot, subject and business
		// indexes from statistics; no hint is needed (or possible).
		q += ` AND business_id = ?`
		args = append(args, f.BusinessID)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, limitArg(f.Limit))
	out, err := scanAll(sqlstore.ScanAudit)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list audit", err)
}
