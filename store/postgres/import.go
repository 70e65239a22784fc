package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Import runs fn in one transaction that inserts rows copied from another
// store (`nextup copy`): columns this schema lacks are dropped, identity
// columns keep the copied values (ids and fair-order sequence numbers
// survive the move), and the identity sequences are moved past them at the
// end. Nothing is visible unless everything is copied.
func (db *DB) Import(ctx context.Context, fn func(insert func(table string, cols []string, row []any) error) error) error {
	ptx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return err
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	known := map[string][]string{}
	columns := func(table string) ([]string, error) {
		if c, ok := known[table]; ok {
			return c, nil
		}
		rows, err := ptx.Query(ctx, `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1`, table)
		if err != nil {
			return nil, err
		}
		c, err := pgx.CollectRows(rows, pgx.RowTo[string])
		known[table] = c
		return c, err
	}
	insert := func(table string, cols []string, row []any) error {
		have, err := columns(table)
		if err != nil {
			return err
		}
		var names, marks []string
		var vals []any
		for i, c := range cols {
			if slices.Contains(have, c) {
				names = append(names, c)
				vals = append(vals, row[i])
				marks = append(marks, fmt.Sprintf("$%d", len(vals)))
			}
		}
		_, err = ptx.Exec(ctx, `INSERT INTO `+pgx.Identifier{table}.Sanitize()+` (`+strings.Join(names, ", ")+`)
			OVERRIDING SYSTEM VALUE VALUES (`+strings.Join(marks, ", ")+`)`, vals...)
		if err != nil {
			return dialect.Err("import "+table, err)
		}
		return nil
	}
	if err := fn(insert); err != nil {
		return err
	}
	for _, seq := range [][2]string{{"entries", "seq"}, {"audit_events", "id"}, {"timers", "id"}} {
		if _, err := ptx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2),
			greatest((SELECT coalesce(max(`+seq[1]+`), 0) FROM `+seq[0]+`), 1))`, seq[0], seq[1]); err != nil {
			return fmt.Errorf("move %s.%s past the copied rows: %w", seq[0], seq[1], err)
		}
	}
	return ptx.Commit(ctx)
}
