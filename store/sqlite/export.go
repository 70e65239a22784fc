package sqlite

import (
	"context"
	"fmt"
)

// CopyTables lists the tables that hold a business's history, parents
// first, as `nextup copy` moves them.
var CopyTables = []string{"businesses", "slots", "entries", "offers", "bookings", "handbacks", "audit_events", "messages", "timers", "suppressions",
	"staff", "sessions", "password_resets", "proposals", "sheet_versions", "payments", "guests", "jobs",
	"summaries"}

// ExportBusiness streams every row of one business, table by table in
// CopyTables order and each table in insertion order, to emit with the
// table's column names.
func (db *DB) ExportBusiness(ctx context.Context, businessID string, emit func(table string, cols []string, row []any) error) error {
	for _, table := range CopyTables {
		where := "business_id = ?"
		switch table {
		case "businesses":
			where = "id = ?"
		case "password_resets": // a reset knows its business through its staff member
			where = "staff_id IN (SELECT id FROM staff WHERE business_id = ?)"
		}
		order := "rowid" // insertion order, which the copy keeps
		if table == "suppressions" {
			order = "at" // a WITHOUT ROWID table
		}
		rows, err := db.read.QueryContext(ctx, `SELECT * FROM `+table+` WHERE `+where+` ORDER BY `+order, businessID)
		if err != nil {
			return fmt.Errorf("export %s: %w", table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return err
		}
		for rows.Next() {
			row := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range row {
				ptrs[i] = &row[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return fmt.Errorf("export %s: %w", table, err)
			}
			if err := emit(table, cols, row); err != nil {
				rows.Close()
				return err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("export %s: %w", table, err)
		}
	}
	return nil
}

// BusinessIDs lists the businesses in the file, oldest first.
func (db *DB) BusinessIDs(ctx context.Context) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM businesses ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
