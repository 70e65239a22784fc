package sqlstore

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// EntryCols are the columns ScanEntry reads, in its order.
const EntryCols = `seq, id, business_id, name, email, phone, channel, service, event_id, party_size,
	earliest, latest, staff, availability, priority, source, joined_at, state, status_hash, updated_at`

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
		&e.State, &e.StatusHash, &updated)
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
func QueueOf(service, eventID string) string {
	if eventID != "" {
		return "event:" + eventID
	}
	return "service:" + service
}

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
		source, joined_at, state, status_hash, updated_at, queue, fair_rank)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
		1 - BoolInt(e.Priority)}, nil
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
	// EntryGet reads an entry by id. The PostgreSQL store appends FOR
	// UPDATE inside InTx.
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
