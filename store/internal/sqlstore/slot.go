package sqlstore

import (
	"github.com/nextup-dev/nextup"
)

// SlotCols are the columns ScanSlot reads, in its order.
const SlotCols = `id, business_id, kind, title, service, staff, starts_at, ends_at, capacity, seating,
	min_party, booked_seats, held_seats, handed_back, created_at`

// ScanSlot reads a row of SlotCols.
func ScanSlot(r Scanner) (nextup.Slot, error) {
	var (
		s                     nextup.Slot
		starts, ends, created int64
		handedBack            int
	)
	err := r.Scan(&s.ID, &s.BusinessID, &s.Kind, &s.Title, &s.Service, &s.Staff, &starts, &ends,
		&s.Capacity, &s.Seating, &s.MinParty, &s.BookedSeats, &s.HeldSeats, &handedBack, &created)
	s.StartsAt, s.EndsAt, s.CreatedAt = FromTS(starts), FromTS(ends), FromTS(created)
	s.HandedBack = handedBack != 0
	return s, err
}

// SlotInsert inserts a slot; SlotInsertArgs gives its arguments.
const SlotInsert = `INSERT INTO slots (` + SlotCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// SlotInsertArgs returns the arguments of SlotInsert for s, in SlotCols
// order.
func SlotInsertArgs(s nextup.Slot) []any {
	return []any{s.ID, s.BusinessID, s.Kind, s.Title, s.Service, s.Staff, TS(s.StartsAt), TS(s.EndsAt),
		s.Capacity, s.Seating, s.MinParty, s.BookedSeats, s.HeldSeats, BoolInt(s.HandedBack), TS(s.CreatedAt)}
}

// Queries of slots, each named after the Tx method that runs it.
const (
	// SlotGet reads a slot by id. The PostgreSQL store appends FOR UPDATE
	// inside InTx.
	SlotGet = `SELECT ` + SlotCols + ` FROM slots WHERE id = ?`

	// SlotSeats adds ?1 booked and ?2 held seats to slot ?3, only while
	// the result keeps 0 <= booked, 0 <= held and booked+held <= capacity,
	// and returns the slot; a refused change matches no row.
	SlotSeats = `UPDATE slots
		SET booked_seats = booked_seats + ?1, held_seats = held_seats + ?2
		WHERE id = ?3
		  AND booked_seats + ?1 >= 0
		  AND held_seats + ?2 >= 0
		  AND booked_seats + held_seats + ?1 + ?2 <= capacity
		RETURNING ` + SlotCols

	// SlotResize sets slot ?2's capacity to ?1 unless that is fewer than
	// its booked and held seats, and returns the slot.
	SlotResize = `UPDATE slots SET capacity = ?1
		WHERE id = ?2 AND ?1 >= booked_seats + held_seats AND ?1 >= 0
		RETURNING ` + SlotCols

	// SlotSetHandedBack sets a slot's handed_back flag (0 or 1).
	SlotSetHandedBack = `UPDATE slots SET handed_back = ? WHERE id = ?`
)

// SlotList returns the query of Tx.SlotList and its arguments; limit is
// the store's LIMIT argument for f.Limit.
func SlotList(f nextup.SlotFilter, limit any) (string, []any) {
	q := `SELECT ` + SlotCols + ` FROM slots WHERE business_id = ?`
	args := []any{f.BusinessID}
	if !f.From.IsZero() {
		q += ` AND starts_at >= ?`
		args = append(args, TS(f.From))
	}
	if !f.To.IsZero() {
		q += ` AND starts_at < ?`
		args = append(args, TS(f.To))
	}
	q += ` ORDER BY starts_at, id LIMIT ?`
	return q, append(args, limit)
}
