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
	// The places in line are counted once at the end (rankRebuild), not
	// row by row (migration 0010).
	if _, err := ptx.Exec(ctx, `SET LOCAL nextup.skip_ranks = 'on'`); err != nil {
		return err
	}
	var businesses []string
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
		if i := slices.Index(cols, "id"); table == "businesses" && i >= 0 {
			if id, ok := row[i].(string); ok {
				businesses = append(businesses, id)
			}
		}
		return nil
	}
	if err := fn(insert); err != nil {
		return err
	}
	for _, b := range businesses {
		if err := rankRebuild(ctx, ptx, b); err != nil {
			return fmt.Errorf("count the places in line of %s: %w", b, err)
		}
	}
	if _, err := ptx.Exec(ctx, `RESET nextup.skip_ranks`); err != nil {
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

// rankRebuild counts the places in line of one business's waiting
// entries afresh (migration 0010's entry_ranks), for a load that skipped
// the count row by row: its rows are replaced.
func rankRebuild(ctx context.Context, tx pgx.Tx, businessID string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM entry_ranks WHERE business_id = $1`, businessID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO entry_ranks (business_id, queue, fair_rank, shift, node, n)
		SELECT e.business_id, e.queue, e.fair_rank, s.shift, (greatest(e.joined_at, 0) >> 10) >> s.shift, count(*)
		FROM entries e, unnest(ARRAY[36, 30, 24, 18, 12, 6]) AS s(shift)
		WHERE e.business_id = $1 AND e.state = 'waiting'
		GROUP BY 1, 2, 3, 4, 5`, businessID)
	return err
}
