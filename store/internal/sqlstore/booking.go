package sqlstore

import (
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

// BookingCols are the columns ScanBooking reads, in its order.
const BookingCols = `id, business_id, slot_id, entry_id, offer_id, name, seats, state, token_hash, created_at, ended_at, checked_in_at`

// ScanBooking reads a row of BookingCols.
func ScanBooking(r Scanner) (nextup.Booking, error) {
	var (
		b       nextup.Booking
		created int64
		ended   *int64
		checkin *int64
	)
	err := r.Scan(&b.ID, &b.BusinessID, &b.SlotID, &b.EntryID, &b.OfferID, &b.Name, &b.Seats, &b.State,
		&b.TokenHash, &created, &ended, &checkin)
	b.CreatedAt, b.EndedAt, b.CheckedInAt = FromTS(created), FromNullTS(ended), FromNullTS(checkin)
	return b, err
}

// BookingInsert inserts a booking; BookingInsertArgs gives its arguments.
const BookingInsert = `INSERT INTO bookings (` + BookingCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// BookingInsertArgs returns the arguments of BookingInsert for b, in
// BookingCols order.
func BookingInsertArgs(b nextup.Booking) []any {
	return []any{b.ID, b.BusinessID, b.SlotID, b.EntryID, b.OfferID, b.Name, b.Seats, b.State, b.TokenHash,
		TS(b.CreatedAt), TSPtr(b.EndedAt), TSPtr(b.CheckedInAt)}
}

// Queries of bookings, each named after the Tx method that runs it.
const (
	// BookingGet reads a booking by id.
	BookingGet = `SELECT ` + BookingCols + ` FROM bookings WHERE id = ?`

	// BookingByOffer reads the booking an offer's claim made, repeating
	// the "<> empty" condition of the partial index bookings_offer, which
	// SQLite needs before it uses the index.
	BookingByOffer = `SELECT ` + BookingCols + ` FROM bookings WHERE offer_id = ? AND offer_id <> ''`

	// BookingSetState moves booking ?3 from state ?4 to ?1, stamps
	// ended_at ?2 unless the new state is booked, and returns it.
	BookingSetState = `UPDATE bookings SET state = ?1,
			ended_at = CASE WHEN ?1 = 'booked' THEN ended_at ELSE ?2 END
		WHERE id = ?3 AND state = ?4
		RETURNING ` + BookingCols

	// BookingCheckIn sets booking ?2's check-in to ?1 (NULL clears it)
	// while it is booked, and returns it.
	BookingCheckIn = `UPDATE bookings SET checked_in_at = ?1 WHERE id = ?2 AND state = 'booked'
		RETURNING ` + BookingCols
)

// HandBackCols are the columns ScanHandBack reads, in its order.
const HandBackCols = `id, business_id, slot_id, reason, note, state, created_at, resolved_at`

// ScanHandBack reads a row of HandBackCols.
func ScanHandBack(r Scanner) (nextup.HandBack, error) {
	var (
		h        nextup.HandBack
		created  int64
		resolved *int64
	)
	err := r.Scan(&h.ID, &h.BusinessID, &h.SlotID, &h.Reason, &h.Note, &h.State, &created, &resolved)
	h.CreatedAt, h.ResolvedAt = FromTS(created), FromNullTS(resolved)
	return h, err
}

// HandBackInsert inserts a hand-back; HandBackInsertArgs gives its
// arguments.
const HandBackInsert = `INSERT INTO handbacks (` + HandBackCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// HandBackInsertArgs returns the arguments of HandBackInsert for h, in
// HandBackCols order.
func HandBackInsertArgs(h nextup.HandBack) []any {
	return []any{h.ID, h.BusinessID, h.SlotID, h.Reason, h.Note, h.State, TS(h.CreatedAt), TSPtr(h.ResolvedAt)}
}

// HandBackGet reads a hand-back by id.
const HandBackGet = `SELECT ` + HandBackCols + ` FROM handbacks WHERE id = ?`

// HandBackSelect returns the query of Tx.HandBackList up to its ORDER BY,
// and its arguments: a business's hand-backs in one state ("" for all).
// Each store orders by created_at and its own insertion-order column.
func HandBackSelect(businessID string, state nextup.HandBackState) (string, []any) {
	q := `SELECT ` + HandBackCols + ` FROM handbacks WHERE business_id = ?`
	args := []any{businessID}
	if state != "" {
		q += ` AND state = ?`
		args = append(args, state)
	}
	return q, args
}

// HandBackResolve returns the query of Tx.HandBackResolve and its
// arguments: resolve, at at, the open hand-back named by id (of slotID,
// when given), or else the open hand-backs of slotID. Naming neither is
// ErrInvalid.
func HandBackResolve(id, slotID string, at time.Time) (string, []any, error) {
	q := `UPDATE handbacks SET state = 'resolved', resolved_at = ? WHERE state = 'open'`
	args := []any{TS(at)}
	switch {
	case id != "":
		q += ` AND id = ?`
		args = append(args, id)
		if slotID != "" {
			q += ` AND slot_id = ?`
			args = append(args, slotID)
		}
	case slotID != "":
		q += ` AND slot_id = ?`
		args = append(args, slotID)
	default:
		return "", nil, fmt.Errorf("want an id or a slot: %w", nextup.ErrInvalid)
	}
	return q, args, nil
}
