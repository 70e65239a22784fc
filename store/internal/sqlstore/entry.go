package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// EntryCols are the columns ScanEntry reads, in its order.
const EntryCols = `seq, id, business_id, name, email, phone, channel, service, event_id, party_size,
	earliest, latest, staff, availability, priority, source, joined_at, state, status_hash, updated_at, lapses`

// FairOrder is the ORDER BY of fair order (policy fcfs-priority/v1):
// priority first, then joined_at, then seq. fair_rank is 0 for priority
// entries and 1 for the rest, so the whole order is ascending and one
// index serves it.
const FairOrder = `fair_rank, joined_at, seq`

// ScanEntry reads a row of EntryCols. Availability is JSON, or NULL for
// none.
func ScanEntry(r Scanner) (nextup.Entry, error) {
	var (
		e                        nextup.Entry
		earliest, latest, joined int64
		updated                  int64
		avail                    *string
		priority                 int
	)
	err := r.Scan(&e.Seq, &e.ID, &e.BusinessID, &e.Name, &e.Email, &e.Phone, &e.Channel, &e.Service,
		&e.EventID, &e.PartySize, &earliest, &latest, &e.Staff, &avail, &priority, &e.Source, &joined,
		&e.State, &e.StatusHash, &updated, &e.Lapses)
	if err != nil {
		return e, err
	}
	e.Earliest, e.Latest = FromTS(earliest), FromLatestTS(latest)
	e.JoinedAt, e.UpdatedAt = FromTS(joined), FromTS(updated)
	e.Priority = priority != 0
	if avail != nil {
		if err := json.Unmarshal([]byte(*avail), &e.Availability); err != nil {
			return e, fmt.Errorf("entry %s: availability: %w", e.ID, err)
		}
	}
	return e, nil
}

// QueueOf names the waitlist an entry is on, as the column entries.queue
// holds it (and its CHECK constraint insists): its event's, or else its
// service's.
func QueueOf(service, eventID string) string { return nextup.QueueOf(service, eventID) }

// FairKey is an entry's place in fair order, as the cursor columns
// (fair_rank, joined_at, seq) hold it.
func FairKey(e *nextup.Entry) []any {
	return []any{1 - BoolInt(e.Priority), TS(e.JoinedAt), e.Seq}
}

func availabilityJSON(a []nextup.Availability) (any, error) {
	if a == nil {
		return nil, nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("availability: %w", err)
	}
	return string(b), nil
}

// EntryInsert inserts an entry and returns its seq; EntryInsertArgs gives
// its arguments. The queue and fair_rank columns are derived from the
// entry, for the indexes.
const EntryInsert = `INSERT INTO entries (id, business_id, name, email, phone, channel,
		contact_key, service, event_id, party_size, earliest, latest, staff, availability, priority,
		source, joined_at, state, status_hash, updated_at, queue, fair_rank, lapses)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	RETURNING seq`

// EntryInsertArgs returns the arguments of EntryInsert for e.
func EntryInsertArgs(e nextup.Entry) ([]any, error) {
	avail, err := availabilityJSON(e.Availability)
	if err != nil {
		return nil, err
	}
	return []any{e.ID, e.BusinessID, e.Name, e.Email, e.Phone, e.Channel, e.ContactKey(), e.Service, e.EventID,
		e.PartySize, TS(e.Earliest), LatestTS(e.Latest), e.Staff, avail, BoolInt(e.Priority), e.Source,
		TS(e.JoinedAt), e.State, e.StatusHash, TS(e.UpdatedAt), QueueOf(e.Service, e.EventID),
		1 - BoolInt(e.Priority), e.Lapses}, nil
}

// EntryUpdate rewrites what a person or staff may change of an entry:
// contact, criteria, priority and party size (and updated_at, unless the
// argument is NULL). EntryUpdateArgs gives its arguments.
const EntryUpdate = `UPDATE entries SET name = ?, email = ?, phone = ?, channel = ?,
		contact_key = ?, service = ?, event_id = ?, party_size = ?, earliest = ?, latest = ?,
		staff = ?, availability = ?, priority = ?, updated_at = coalesce(?, updated_at),
		queue = ?, fair_rank = ?
	WHERE id = ?`

// EntryUpdateArgs returns the arguments of EntryUpdate for e; a zero
// UpdatedAt leaves updated_at as it is.
func EntryUpdateArgs(e nextup.Entry) ([]any, error) {
	avail, err := availabilityJSON(e.Availability)
	if err != nil {
		return nil, err
	}
	var updated any
	if !e.UpdatedAt.IsZero() {
		updated = TS(e.UpdatedAt)
	}
	return []any{e.Name, e.Email, e.Phone, e.Channel, e.ContactKey(), e.Service, e.EventID, e.PartySize,
		TS(e.Earliest), LatestTS(e.Latest), e.Staff, avail, BoolInt(e.Priority), updated,
		QueueOf(e.Service, e.EventID), 1 - BoolInt(e.Priority), e.ID}, nil
}

// Queries of entries, each named after the Tx method that runs it.
const (
	// EntryGet reads an entry by id; Tx.EntryGet appends the dialect's
	// ForUpdate inside InTx.
	EntryGet = `SELECT ` + EntryCols + ` FROM entries WHERE id = ?`

	// EntryByStatusHash reads an entry by its status token's hash,
	// repeating the "<> empty" condition of its partial index, which
	// SQLite needs before it uses the index.
	EntryByStatusHash = `SELECT ` + EntryCols + ` FROM entries WHERE status_hash = ? AND status_hash <> ''`

	// EntryPlace reads where an entry stands: its business, queue and
	// fair-order key, for EntryPosition to count the entries ahead.
	EntryPlace = `SELECT business_id, queue, fair_rank, joined_at, seq FROM entries WHERE id = ?`

	// EntryActiveByContact reads the oldest waiting or offered entry of a
	// contact on one waitlist.
	EntryActiveByContact = `SELECT ` + EntryCols + ` FROM entries
		WHERE business_id = ? AND contact_key = ? AND state IN ('waiting', 'offered') AND queue = ?
		ORDER BY seq LIMIT 1`

	// EntryActiveListByContact reads the waiting and offered entries of a
	// contact in a business, on every waitlist, oldest first; its last
	// argument is a Limit argument. The equality columns and the state
	// match entries_contact (business_id, contact_key, state): a person's
	// few active entries, sorted.
	EntryActiveListByContact = `SELECT ` + EntryCols + ` FROM entries
		WHERE business_id = ? AND contact_key = ? AND state IN ('waiting', 'offered')
		ORDER BY joined_at, id LIMIT ?`
)

// EntryByContact returns the query of Tx.EntryByContact and its arguments:
// the oldest entry of a contact on one waitlist in one of states.
func EntryByContact(businessID, contactKey, queue string, states []nextup.EntryState) (string, []any) {
	q := `SELECT ` + EntryCols + ` FROM entries WHERE business_id = ? AND contact_key = ? AND queue = ? AND state IN (''`
	args := []any{businessID, contactKey, queue}
	for _, s := range states {
		q += `, ?`
		args = append(args, string(s))
	}
	return q + `) ORDER BY seq LIMIT 1`, args
}

// EntryExpiryOrder orders expired entries as EntryExpireBefore hands them out:
// by Latest, then Seq.
func EntryExpiryOrder(a, b nextup.Entry) int {
	if c := a.Latest.Compare(b.Latest); c != 0 {
		return c
	}
	return cmp.Compare(a.Seq, b.Seq)
}

// EntryCreate stores an entry, waiting unless e says otherwise, and
// returns it with its Seq.
func (t *Tx) EntryCreate(ctx context.Context, e nextup.Entry) (nextup.Entry, error) {
	op := "create entry " + e.ID
	if e.State == "" {
		e.State = nextup.EntryWaiting
	}
	args, err := EntryInsertArgs(e)
	if err != nil {
		return e, fmt.Errorf("%s: %w", op, err)
	}
	if err := t.r.QueryRow(ctx, EntryInsert, args...).Scan(&e.Seq); err != nil {
		return e, t.err(op, err)
	}
	return e, nil
}

// EntryGet reads an entry; inside InTx the row is locked as in SlotGet.
func (t *Tx) EntryGet(ctx context.Context, id string) (nextup.Entry, error) {
	e, err := ScanEntry(t.r.QueryRow(ctx, EntryGet+t.lock, id))
	return e, t.err("get entry "+id, err)
}

// EntryByStatusHash reads the entry whose status token has this hash.
func (t *Tx) EntryByStatusHash(ctx context.Context, hash string) (nextup.Entry, error) {
	if hash == "" {
		return nextup.Entry{}, fmt.Errorf("entry by status token: %w", nextup.ErrNotFound)
	}
	e, err := ScanEntry(t.r.QueryRow(ctx, EntryByStatusHash, hash))
	return e, t.err("entry by status token", err)
}

// EntryUpdate rewrites what a person or staff may change: contact,
// criteria, priority and party size. The place in line (joined_at, seq),
// the state and the tokens stay.
func (t *Tx) EntryUpdate(ctx context.Context, e nextup.Entry) error {
	op := "update entry " + e.ID
	args, err := EntryUpdateArgs(e)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	n, err := t.r.Exec(ctx, EntryUpdate, args...)
	return t.touched(op, n, err)
}

// EntrySetState moves an entry from one of the states from to state to.
func (t *Tx) EntrySetState(ctx context.Context, id string, from []nextup.EntryState, to nextup.EntryState, at time.Time) error {
	cond, fromArgs := in(t, "state", from)
	return t.execOne(ctx, fmt.Sprintf("entry %s %v -> %s", id, from, to), "entries", id,
		`UPDATE entries SET state = ?, updated_at = ? WHERE id = ? AND `+cond,
		append([]any{to, TS(at), id}, fromArgs...)...)
}

// EntrySetStatusHash replaces an entry's status hash; the unique index
// on status_hash refuses one another entry has (ErrConflict).
func (t *Tx) EntrySetStatusHash(ctx context.Context, id, hash string, at time.Time) error {
	op := "set status hash of entry " + id
	if hash == "" {
		return fmt.Errorf("%s: empty hash: %w", op, nextup.ErrConflict)
	}
	n, err := t.r.Exec(ctx, `UPDATE entries SET status_hash = ?, updated_at = ? WHERE id = ?`, hash, TS(at), id)
	return t.touched(op, n, err)
}

// EntryLapseCount counts a lapse of entry ?1 and returns it (EntryCols);
// a move to the back is the dialect's EntryLapseBack.
const EntryLapseCount = `UPDATE entries SET lapses = lapses + 1 WHERE id = ?1 RETURNING ` + EntryCols

// EntryLapse counts one more lapse or decline of an entry and, when back,
// moves it to the back of its waitlist (joined_at at, a new seq) in the
// same statement.
func (t *Tx) EntryLapse(ctx context.Context, id string, back bool, at time.Time) (nextup.Entry, error) {
	query, args := EntryLapseCount, []any{id}
	if back {
		query, args = t.d.EntryLapseBack, []any{id, TS(at)}
	}
	e, err := ScanEntry(t.r.QueryRow(ctx, query, args...))
	return e, t.err(fmt.Sprintf("lapse of entry %s (back: %v)", id, back), err)
}

// EntryCandidates reads the entries_fair index in fair order: equality on
// (business_id, queue, state), a keyset seek past the cursor on (fair_rank,
// joined_at, seq), and the window and party filters checked on the index
// entry. No sort, and the cost is the rows skipped plus Limit.
func (t *Tx) EntryCandidates(ctx context.Context, q nextup.CandidateQuery) ([]nextup.Entry, error) {
	query, args := t.d.CandidatesQuery(q)
	out, err := all(ctx, t, ScanEntry, query, args...)
	return out, t.err("entry candidates for business "+q.BusinessID, err)
}

// CandidatesQuery returns the query of Tx.EntryCandidates in d and its
// arguments (a store's benchmark explains its plan).
func (d *Dialect) CandidatesQuery(q nextup.CandidateQuery) (string, []any) {
	service := q.Service
	if q.EventID != "" {
		service = ""
	}
	// On SQLite, INDEXED BY: without statistics the planner may prefer the
	// partial index on latest and sort; this query must walk fair order.
	// On PostgreSQL the equality columns and ORDER BY match entries_fair,
	// so the planner walks it in fair order and stops after Limit rows.
	query := `SELECT ` + EntryCols + ` FROM entries` + d.indexedBy("entries_fair") + `
		WHERE business_id = ? AND queue = ? AND state = 'waiting'`
	args := []any{q.BusinessID, QueueOf(service, q.EventID)}
	if q.After != nil {
		query += ` AND (` + FairOrder + `) > (?, ?, ?)`
		args = append(args, FairKey(q.After)...)
	}
	start := TS(q.SlotStart)
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
	query += ` ORDER BY ` + FairOrder + ` LIMIT ?`
	args = append(args, d.Limit(q.Limit))
	return query, args
}

// EntryList returns entries in fair order. For the default (active) list
// each state is read in order through the index, at most Limit rows each,
// and the two runs are merged, so a page costs Limit rows, not the list.
func (t *Tx) EntryList(ctx context.Context, f nextup.EntryFilter) ([]nextup.Entry, error) {
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
			part = `SELECT ` + EntryCols + `, fair_rank FROM entries` + t.d.indexedBy("entries_fair") + `
				WHERE business_id = ? AND state = ? AND queue = ?`
			args = append(args, f.BusinessID, s, QueueOf(f.Service, f.EventID))
		} else {
			part = `SELECT ` + EntryCols + `, fair_rank FROM entries` + t.d.indexedBy("entries_business_fair") + `
				WHERE business_id = ? AND state = ?`
			args = append(args, f.BusinessID, s)
		}
		if f.After != nil {
			part += ` AND (` + FairOrder + `) > (?, ?, ?)`
			args = append(args, FairKey(f.After)...)
		}
		part += ` ORDER BY ` + FairOrder + ` LIMIT ?`
		args = append(args, t.limit(f.Limit))
		// PostgreSQL wants every subquery in FROM named; SQLite takes the
		// names too.
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
		query += ` ORDER BY ` + FairOrder + ` LIMIT ?`
		args = append(args, t.limit(f.Limit))
	}
	query = `SELECT ` + EntryCols + ` FROM (` + query + `) AS q`
	out, err := all(ctx, t, ScanEntry, query, args...)
	if err != nil {
		return nil, t.err("list entries of business "+f.BusinessID, err)
	}
	// The outer SELECT keeps the order of the inner one in practice, but
	// SQL does not promise it; sorting a page is cheap.
	slices.SortStableFunc(out, nextup.CompareFair)
	return out, nil
}

// RankShifts are the levels of the count tree entry_ranks (migration
// 0010), top first: for each shift s it counts the waiting entries of a
// list, by fair_rank, whose coordinate RankCoord(joined_at) >> s is a
// node. Each level has 64 nodes under each node of the level above.
var RankShifts = [...]int64{36, 30, 24, 18, 12, 6}

// RankCoord is an entry's coordinate in the count tree: its joined_at (in
// microseconds) in units of 1024 µs, never below zero.
func RankCoord(joinedUS int64) int64 { return max(joinedUS, 0) >> 10 }

// EntryPositionQuery counts the waiting entries ahead of a place in a
// list in a time that does not grow with the place: the top level's
// nodes of the rank below (priority entries ahead of a normal one) and
// of the place's rank before its node; at each lower level the nodes
// before the place's among its 63 siblings; and, through entries_fair,
// the entries of the place's own lowest node (about 65 ms of joins) that
// are ahead in fair order. Its arguments are EntryPositionArgs.
func (d *Dialect) EntryPositionQuery() string {
	const sum = `(SELECT coalesce(sum(n), 0) FROM entry_ranks WHERE business_id = ? AND queue = ? AND `
	var b strings.Builder
	// Ranks are 0 (priority) and 1: the rank below is an equality, so
	// that the search stays within one level of the tree.
	b.WriteString(`SELECT ` + sum + `fair_rank = ? AND shift = ?)`)
	b.WriteString(` + ` + sum + `fair_rank = ? AND shift = ? AND node < ?)`)
	for range RankShifts[1:] {
		b.WriteString(` + ` + sum + `fair_rank = ? AND shift = ? AND node >= ? AND node < ?)`)
	}
	b.WriteString(` + (SELECT count(*) FROM entries` + d.indexedBy("entries_fair") + `
		WHERE business_id = ? AND queue = ? AND state = 'waiting' AND fair_rank = ? AND joined_at >= ? AND (joined_at, seq) < (?, ?))`)
	return b.String()
}

// EntryPositionArgs are the arguments of EntryPositionQuery for a place
// (business, queue, fair_rank, joined_at, seq).
func EntryPositionArgs(business, queue string, rank, joined, seq int64) []any {
	c := RankCoord(joined)
	top := RankShifts[0]
	args := []any{business, queue, rank - 1, top, business, queue, rank, top, c >> top}
	for i, s := range RankShifts[1:] {
		parent := c >> RankShifts[i]
		args = append(args, business, queue, rank, s, parent<<(RankShifts[i]-s), c>>s)
	}
	low := RankShifts[len(RankShifts)-1]
	leafStart := (c >> low) << (low + 10) // the lowest node's first joined_at, in µs
	if c>>low == 0 {
		leafStart = math.MinInt64 // the first node also holds the times before 1970
	}
	return append(args, business, queue, rank, leafStart, joined, seq)
}

// EntryPosition reads the entry's place and counts the entries ahead of
// it in the count tree (EntryPositionQuery): a few index seeks, however
// long the list.
func (t *Tx) EntryPosition(ctx context.Context, e nextup.Entry) (int, error) {
	op := "position of entry " + e.ID
	var (
		business, queue string
		rank, seq       int64
		joined          int64
	)
	err := t.r.QueryRow(ctx, EntryPlace, e.ID).Scan(&business, &queue, &rank, &joined, &seq)
	if err != nil {
		return 0, t.err(op, err)
	}
	var ahead int64
	if err := t.r.QueryRow(ctx, t.d.EntryPositionQuery(), EntryPositionArgs(business, queue, rank, joined, seq)...).Scan(&ahead); err != nil {
		return 0, t.err(op, err)
	}
	return int(ahead) + 1, nil
}

// EntryActiveByContact reads the oldest waiting or offered entry of a
// contact on one waitlist.
func (t *Tx) EntryActiveByContact(ctx context.Context, businessID, contactKey, service, eventID string) (nextup.Entry, error) {
	e, err := ScanEntry(t.r.QueryRow(ctx, EntryActiveByContact, businessID, contactKey, QueueOf(service, eventID)))
	return e, t.err("active entry by contact", err)
}

// EntryActiveListByContact reads the waiting and offered entries of a
// contact in a business, on all its waitlists, by joined_at, then id; at
// most limit (0: no limit).
func (t *Tx) EntryActiveListByContact(ctx context.Context, businessID, contactKey string, limit int) ([]nextup.Entry, error) {
	out, err := all(ctx, t, ScanEntry, EntryActiveListByContact, businessID, contactKey, t.limit(limit))
	if err != nil {
		return nil, t.err("active entries by contact", err)
	}
	return out, nil
}

// EntryByContact reads the oldest entry of a contact on one waitlist in
// one of states.
func (t *Tx) EntryByContact(ctx context.Context, businessID, contactKey, service, eventID string, states []nextup.EntryState) (nextup.Entry, error) {
	q, args := EntryByContact(businessID, contactKey, QueueOf(service, eventID), states)
	e, err := ScanEntry(t.r.QueryRow(ctx, q, args...))
	return e, t.err("entry by contact", err)
}

// EntryExpireBefore expires, in one statement of the dialect's, waiting
// entries whose window ended, and returns them by Latest, then Seq.
func (t *Tx) EntryExpireBefore(ctx context.Context, businessID string, before time.Time, limit int) ([]nextup.Entry, error) {
	out, err := all(ctx, t, ScanEntry, t.d.EntryExpireBefore, TS(before), businessID, t.limit(limit))
	if err != nil {
		return nil, t.err("expire entries of business "+businessID, err)
	}
	slices.SortFunc(out, EntryExpiryOrder)
	return out, nil
}
