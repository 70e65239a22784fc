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

const entryCols = `seq, id, business_id, name, email, phone, channel, service, event_id, party_size,
	earliest, latest, staff, availability, priority, source, joined_at, state, status_hash, updated_at`

// fairOrder is the ORDER BY of fair order (policy fcfs-priority/v1):
// priority first, then joined_at, then seq. fair_rank is 0 for priority
// entries and 1 for the rest, so the whole order is ascending and one
// index serves it.
const fairOrder = `fair_rank, joined_at, seq`

func scanEntry(r scanner) (nextup.Entry, error) {
	var (
		e                        nextup.Entry
		earliest, latest, joined int64
		updated                  int64
		avail                    *string
		priority                 int
	)
	err := r.Scan(&e.Seq, &e.ID, &e.BusinessID, &e.Name, &e.Email, &e.Phone, &e.Channel, &e.Service,
		&e.EventID, &e.PartySize, &earliest, &latest, &e.Staff, &avail, &priority, &e.Source, &joined,
		&e.State, &e.StatusHash, &updated)
	if err != nil {
		return e, err
	}
	e.Earliest, e.Latest = fromTS(earliest), fromLatestTS(latest)
	e.JoinedAt, e.UpdatedAt = fromTS(joined), fromTS(updated)
	e.Priority = priority != 0
	if avail != nil {
		if err := json.Unmarshal([]byte(*avail), &e.Availability); err != nil {
			return e, fmt.Errorf("entry %s: availability: %w", e.ID, err)
		}
	}
	return e, nil
}

// queueOf names the waitlist an entry is on, as the column entries.queue
// holds it (and its CHECK constraint insists): its event's, or else its
// service's.
func queueOf(service, eventID string) string {
	if eventID != "" {
		return "event:" + eventID
	}
	return "service:" + service
}

// fairKey is an entry's place in fair order, as the cursor columns
// (fair_rank, joined_at, seq) hold it.
func fairKey(e *nextup.Entry) []any {
	return []any{1 - boolInt(e.Priority), ts(e.JoinedAt), e.Seq}
}

func availabilityJSON(a []nextup.Availability) (any, error) {
	if a == nil {
		return nil, nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func (t *tx) EntryCreate(ctx context.Context, e nextup.Entry) (nextup.Entry, error) {
	op := "create entry " + e.ID
	if e.State == "" {
		e.State = nextup.EntryWaiting
	}
	avail, err := availabilityJSON(e.Availability)
	if err != nil {
		return e, fmt.Errorf("%s: availability: %w", op, err)
	}
	err = t.tx.QueryRowContext(ctx, `INSERT INTO entries (id, business_id, name, email, phone, channel,
			contact_key, service, event_id, party_size, earliest, latest, staff, availability, priority,
			source, joined_at, state, status_hash, updated_at, queue, fair_rank)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING seq`,
		e.ID, e.BusinessID, e.Name, e.Email, e.Phone, e.Channel, e.ContactKey(), e.Service, e.EventID,
		e.PartySize, ts(e.Earliest), latestTS(e.Latest), e.Staff, avail, boolInt(e.Priority), e.Source,
		ts(e.JoinedAt), e.State, e.StatusHash, ts(e.UpdatedAt), queueOf(e.Service, e.EventID),
		1-boolInt(e.Priority)).Scan(&e.Seq)
	if err != nil {
		return e, dbErr(op, err)
	}
	return e, nil
}

func (t *tx) EntryGet(ctx context.Context, id string) (nextup.Entry, error) {
	// As in SlotGet, the row stays locked inside InTx.
	e, err := scanEntry(t.tx.QueryRowContext(ctx, `SELECT `+entryCols+` FROM entries WHERE id = ?`+t.forUpdate(), id))
	return e, dbErr("get entry "+id, err)
}

func (t *tx) EntryByStatusHash(ctx context.Context, hash string) (nextup.Entry, error) {
	if hash == "" {
		return nextup.Entry{}, fmt.Errorf("entry by status token: %w", nextup.ErrNotFound)
	}
	e, err := scanEntry(t.tx.QueryRowContext(ctx, qEntryByStatusHash, hash))
	return e, dbErr("entry by status token", err)
}

// EntryUpdate rewrites what a person or staff may change: contact,
// criteria, priority and party size. The place in line (joined_at, seq),
// the state and the tokens stay.
func (t *tx) EntryUpdate(ctx context.Context, e nextup.Entry) error {
	op := "update entry " + e.ID
	avail, err := availabilityJSON(e.Availability)
	if err != nil {
		return fmt.Errorf("%s: availability: %w", op, err)
	}
	var updated any
	if !e.UpdatedAt.IsZero() {
		updated = ts(e.UpdatedAt)
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE entries SET name = ?, email = ?, phone = ?, channel = ?,
			contact_key = ?, service = ?, event_id = ?, party_size = ?, earliest = ?, latest = ?,
			staff = ?, availability = ?, priority = ?, updated_at = coalesce(?, updated_at),
			queue = ?, fair_rank = ?
		WHERE id = ?`,
		e.Name, e.Email, e.Phone, e.Channel, e.ContactKey(), e.Service, e.EventID, e.PartySize,
		ts(e.Earliest), latestTS(e.Latest), e.Staff, avail, boolInt(e.Priority), updated,
		queueOf(e.Service, e.EventID), 1-boolInt(e.Priority), e.ID)
	return t.touched(ctx, op, res, err)
}

func (t *tx) EntrySetState(ctx context.Context, id string, from []nextup.EntryState, to nextup.EntryState, at time.Time) error {
	return t.execOne(ctx, fmt.Sprintf("entry %s %v -> %s", id, from, to), "entries", id,
		`UPDATE entries SET state = ?, updated_at = ? WHERE id = ? AND state = ANY(?::text[])`,
		to, ts(at), id, strs(from))
}

// EntryCandidates reads the entries_fair index in fair order: equality on
// (business_id, queue, state), a keyset seek past the cursor on (fair_rank,
// joined_at, seq), and the window and party filters checked on the index
// entry. No sort, and the cost is the rows skipped plus Limit.
func (t *tx) EntryCandidates(ctx context.Context, q nextup.CandidateQuery) ([]nextup.Entry, error) {
	query, args := candidatesQuery(q)
	out, err := scanAll(scanEntry)(t.tx.QueryContext(ctx, query, args...))
	return out, dbErr("entry candidates for business "+q.BusinessID, err)
}

func candidatesQuery(q nextup.CandidateQuery) (string, []any) {
	service := q.Service
	if q.EventID != "" {
		service = ""
	}
	// The equality columns and ORDER BY match entries_fair, so the planner
	// walks it in fair order and stops after Limit rows.
	query := `SELECT ` + entryCols + ` FROM entries
		WHERE business_id = ? AND queue = ? AND state = 'waiting'`
	args := []any{q.BusinessID, queueOf(service, q.EventID)}
	if q.After != nil {
		query += ` AND (` + fairOrder + `) > (?, ?, ?)`
		args = append(args, fairKey(q.After)...)
	}
	start := ts(q.SlotStart)
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
	query += ` ORDER BY ` + fairOrder + ` LIMIT ?`
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
			part = `SELECT ` + entryCols + `, fair_rank FROM entries
				WHERE business_id = ? AND state = ? AND queue = ?`
			args = append(args, f.BusinessID, s, queueOf(f.Service, f.EventID))
		} else {
			part = `SELECT ` + entryCols + `, fair_rank FROM entries
				WHERE business_id = ? AND state = ?`
			args = append(args, f.BusinessID, s)
		}
		if f.After != nil {
			part += ` AND (` + fairOrder + `) > (?, ?, ?)`
			args = append(args, fairKey(f.After)...)
		}
		part += ` ORDER BY ` + fairOrder + ` LIMIT ?`
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
		query += ` ORDER BY ` + fairOrder + ` LIMIT ?`
		args = append(args, limitArg(f.Limit))
	}
	query = `SELECT ` + entryCols + ` FROM (` + query + `) AS q`
	out, err := scanAll(scanEntry)(t.tx.QueryContext(ctx, query, args...))
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
	err := t.tx.QueryRowContext(ctx, `SELECT business_id, queue, fair_rank, joined_at, seq FROM entries WHERE id = ?`,
		e.ID).Scan(&business, &queue, &rank, &joined, &seq)
	if err != nil {
		return 0, dbErr(op, err)
	}
	var ahead int
	err = t.tx.QueryRowContext(ctx, `SELECT count(*) FROM entries
		WHERE business_id = ? AND queue = ? AND state = 'waiting' AND (`+fairOrder+`) < (?, ?, ?)`,
		business, queue, rank, joined, seq).Scan(&ahead)
	if err != nil {
		return 0, dbErr(op, err)
	}
	return ahead + 1, nil
}

func (t *tx) EntryActiveByContact(ctx context.Context, businessID, contactKey, service, eventID string) (nextup.Entry, error) {
	e, err := scanEntry(t.tx.QueryRowContext(ctx, `SELECT `+entryCols+` FROM entries
		WHERE business_id = ? AND contact_key = ? AND state IN ('waiting', 'offered') AND queue = ?
		ORDER BY seq LIMIT 1`,
		businessID, contactKey, queueOf(service, eventID)))
	return e, dbErr("active entry by contact", err)
}

// EntryExpireBefore picks the batch with FOR UPDATE SKIP LOCKED, so an
// entry another transaction holds (EntryGet in an InTx) is left for the
// next sweep instead of making this one wait; the outer WHERE repeats the
// state so that an entry that changed meanwhile is not expired.
func (t *tx) EntryExpireBefore(ctx context.Context, businessID string, before time.Time, limit int) ([]nextup.Entry, error) {
	out, err := scanAll(scanEntry)(t.tx.QueryContext(ctx, `WITH due AS MATERIALIZED (
			SELECT seq FROM entries WHERE business_id = ?2 AND state = 'waiting' AND latest < ?1
			ORDER BY latest, seq LIMIT ?3 FOR UPDATE SKIP LOCKED)
		UPDATE entries SET state = 'expired', updated_at = ?1
		WHERE seq IN (SELECT seq FROM due)
		  AND state = 'waiting'
		RETURNING `+entryCols, ts(before), businessID, limitArg(limit)))
	if err != nil {
		return nil, dbErr("expire entries of business "+businessID, err)
	}
	slices.SortFunc(out, func(a, b nextup.Entry) int {
		if c := a.Latest.Compare(b.Latest); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out, nil
}

// Hot look-ups by secret or key, named so a test can check each reads
// its index (the partial indexes need the "<> empty" condition to be used).
const (
	qEntryByStatusHash = `SELECT ` + entryCols + ` FROM entries WHERE status_hash = ? AND status_hash <> ''`
)
