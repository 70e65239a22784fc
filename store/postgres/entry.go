package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

func (t *tx) EntryCreate(ctx context.Context, e nextup.Entry) (nextup.Entry, error) {
	op := "create entry " + e.ID
	if e.State == "" {
		e.State = nextup.EntryWaiting
	}
	args, err := sqlstore.EntryInsertArgs(e)
	if err != nil {
		return e, fmt.Errorf("%s: %w", op, err)
	}
	if err := t.tx.QueryRowContext(ctx, sqlstore.EntryInsert, args...).Scan(&e.Seq); err != nil {
		return e, dbErr(op, err)
	}
	return e, nil
}

func (t *tx) EntryGet(ctx context.Context, id string) (nextup.Entry, error) {
	// As in SlotGet, the row stays locked inside InTx.
	e, err := sqlstore.ScanEntry(t.tx.QueryRowContext(ctx, sqlstore.EntryGet+t.forUpdate(), id))
	return e, dbErr("get entry "+id, err)
}

func (t *tx) EntryByStatusHash(ctx context.Context, hash string) (nextup.Entry, error) {
	if hash == "" {
		return nextup.Entry{}, fmt.Errorf("entry by status token: %w", nextup.ErrNotFound)
	}
	e, err := sqlstore.ScanEntry(t.tx.QueryRowContext(ctx, sqlstore.EntryByStatusHash, hash))
	return e, dbErr("entry by status token", err)
}

// EntryUpdate rewrites what a person or staff may change: contact,
// criteria, priority and party size. The place in line (joined_at, seq),
// the state and the tokens stay.
func (t *tx) EntryUpdate(ctx context.Context, e nextup.Entry) error {
	op := "update entry " + e.ID
	args, err := sqlstore.EntryUpdateArgs(e)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	res, err := t.tx.ExecContext(ctx, sqlstore.EntryUpdate, args...)
	return t.touched(ctx, op, res, err)
}

func (t *tx) EntrySetState(ctx context.Context, id string, from []nextup.EntryState, to nextup.EntryState, at time.Time) error {
	return t.execOne(ctx, fmt.Sprintf("entry %s %v -> %s", id, from, to), "entries", id,
		`UPDATE entries SET state = ?, updated_at = ? WHERE id = ? AND state = ANY(?::text[])`,
		to, sqlstore.TS(at), id, strs(from))
}

// EntryCandidates reads the entries_fair index in fair order: equality on
// (business_id, queue, state), a keyset seek past the cursor on (fair_rank,
// joined_at, seq), and the window and party filters checked on the index
// entry. No sort, and the cost is the rows skipped plus Limit.
func (t *tx) EntryCandidates(ctx context.Context, q nextup.CandidateQuery) ([]nextup.Entry, error) {
	query, args := candidatesQuery(q)
	out, err := scanAll(sqlstore.ScanEntry)(t.tx.QueryContext(ctx, query, args...))
	return out, dbErr("entry candidates for business "+q.BusinessID, err)
}

func candidatesQuery(q nextup.CandidateQuery) (string, []any) {
	service := q.Service
	if q.EventID != "" {
		service = ""
	}
	// The equality columns and ORDER BY match entries_fair, so the planner
	// walks it in fair order and stops after Limit rows.
	query := `SELECT ` + sqlstore.EntryCols + ` FROM entries
		WHERE business_id = ? AND queue = ? AND state = 'waiting'`
	args := []any{q.BusinessID, sqlstore.QueueOf(service, q.EventID)}
	if q.After != nil {
		query += ` AND (` + sqlstore.FairOrder + `) > (?, ?, ?)`
		args = append(args, sqlstore.FairKey(q.After)...)
	}
	start := sqlstore.TS(q.SlotStart)
	query += ` AND earliest <= ? AND latest >= ?`
	args = append(args, start, start)
	if q.MinParty > 0 {
		query += ` AND party_size >= ?`
		args = append(args, q.MinParty)
	}
	if q.MaxParty > 0 {
		query += ` AND party_size <= ?`
		args = append(args, q.MaxParty)
	}
	query += ` ORDER BY ` + sqlstore.FairOrder + ` LIMIT ?`
	args = append(args, limitArg(q.Limit))
	return query, args
}

// EntryList returns entries in fair order. For the default (active) list
// each state is read in order through the index, at most Limit rows each,
// and the two runs are merged, so a page costs Limit rows, not the list.
func (t *tx) EntryList(ctx context.Context, f nextup.EntryFilter) ([]nextup.Entry, error) {
	states := []nextup.EntryState{f.State}
	if f.State == "" {
		states = []nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered}
	}
	var (
		parts []string
		args  []any
	)
	for _, s := range states {
		var part string
		if f.Service != "" || f.EventID != "" {
			part = `SELECT ` + sqlstore.EntryCols + `, fair_rank FROM entries
				WHERE business_id = ? AND state = ? AND queue = ?`
			args = append(args, f.BusinessID, s, sqlstore.QueueOf(f.Service, f.EventID))
		} else {
			part = `SELECT ` + sqlstore.EntryCols + `, fair_rank FROM entries
				WHERE business_id = ? AND state = ?`
			args = append(args, f.BusinessID, s)
		}
		if f.After != nil {
			part += ` AND (` + sqlstore.FairOrder + `) > (?, ?, ?)`
			args = append(args, sqlstore.FairKey(f.After)...)
		}
		part += ` ORDER BY ` + sqlstore.FairOrder + ` LIMIT ?`
		args = append(args, limitArg(f.Limit))
		parts = append(parts, fmt.Sprintf(`SELECT * FROM (%s) AS p%d`, part, len(parts)))
	}
	query := parts[0]
	if len(parts) > 1 {
		query = ""
		for i, p := range parts {
			if i > 0 {
				query += ` UNION ALL `
			}
			query += p
		}
		query += ` ORDER BY ` + sqlstore.FairOrder + ` LIMIT ?`
		args = append(args, limitArg(f.Limit))
	}
	query = `SELECT ` + sqlstore.EntryCols + ` FROM (` + query + `) AS q`
	out, err := scanAll(sqlstore.ScanEntry)(t.tx.QueryContext(ctx, query, args...))
	if err != nil {
		return nil, dbErr("list entries of business "+f.BusinessID, err)
	}
	// The outer SELECT keeps the order of the inner one in practice, but
	// SQL does not promise it; sorting a page is cheap.
	slices.SortStableFunc(out, nextup.CompareFair)
	return out, nil
}

// EntryPosition counts, through the same index as EntryCandidates, the
// waiting entries of the same waitlist ahead of this one. The entry's place
// is read from the store, not from e, so a stale copy still gets the truth.
func (t *tx) EntryPosition(ctx context.Context, e nextup.Entry) (int, error) {
	op := "position of entry " + e.ID
	var (
		business, queue string
		rank, seq       int64
		joined          int64
	)
	err := t.tx.QueryRowContext(ctx, sqlstore.EntryPlace, e.ID).Scan(&business, &queue, &rank, &joined, &seq)
	if err != nil {
		return 0, dbErr(op, err)
	}
	var ahead int
	err = t.tx.QueryRowContext(ctx, `SELECT count(*) FROM entries
		WHERE business_id = ? AND queue = ? AND state = 'waiting' AND (`+sqlstore.FairOrder+`) < (?, ?, ?)`,
		business, queue, rank, joined, seq).Scan(&ahead)
	if err != nil {
		return 0, dbErr(op, err)
	}
	return ahead + 1, nil
}

func (t *tx) EntryActiveByContact(ctx context.Context, businessID, contactKey, service, eventID string) (nextup.Entry, error) {
	e, err := sqlstore.ScanEntry(t.tx.QueryRowContext(ctx, sqlstore.EntryActiveByContact,
		businessID, contactKey, sqlstore.QueueOf(service, eventID)))
	return e, dbErr("active entry by contact", err)
}

// EntryExpireBefore picks the batch with FOR UPDATE SKIP LOCKED, so an
// entry another transaction holds (EntryGet in an InTx) is left for the
// next sweep instead of making this one wait; the outer WHERE repeats the
// state so that an entry that changed meanwhile is not expired.
func (t *tx) EntryExpireBefore(ctx context.Context, businessID string, before time.Time, limit int) ([]nextup.Entry, error) {
	out, err := scanAll(sqlstore.ScanEntry)(t.tx.QueryContext(ctx, `WITH due AS MATERIALIZED (
			SELECT seq FROM entries WHERE business_id = ?2 AND state = 'waiting' AND latest < ?1
			ORDER BY latest, seq LIMIT ?3 FOR UPDATE SKIP LOCKED)
		UPDATE entries SET state = 'expired', updated_at = ?1
		WHERE seq IN (SELECT seq FROM due)
		  AND state = 'waiting'
		RETURNING `+sqlstore.EntryCols, sqlstore.TS(before), businessID, limitArg(limit)))
	if err != nil {
		return nil, dbErr("expire entries of business "+businessID, err)
	}
	slices.SortFunc(out, sqlstore.EntryExpiryOrder)
	return out, nil
}
