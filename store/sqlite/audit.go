package sqlite

import (
	"context"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// AuditAppend appends one row; its id is assigned by the table in commit
// order (there is one writer).
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
		// With a slot or subject named, that index is the narrow one; the
		// unary + keeps the planner off the business index.
		if f.SlotID != "" || (f.SubjectType != "" && f.SubjectID != "") {
			q += ` AND +business_id = ?`
		} else {
			q += ` AND business_id = ?`
		}
		args = append(args, f.BusinessID)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, limitArg(f.Limit))
	out, err := scanAll(sqlstore.ScanAudit)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list audit", err)
}
