package sqlstore

import (
	"context"
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
// Tx.HandBackList orders by created_at and the dialect's RowID.
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

// BookingCreate stores a booking, booked unless b says otherwise.
func (t *Tx) BookingCreate(ctx context.Context, b nextup.Booking) error {
	if b.State == "" {
		b.State = nextup.BookingBooked
	}
	_, err := t.r.Exec(ctx, BookingInsert, BookingInsertArgs(b)...)
	return t.err("create booking "+b.ID, err)
}

// BookingGet reads a booking.
func (t *Tx) BookingGet(ctx context.Context, id string) (nextup.Booking, error) {
	b, err := ScanBooking(t.r.QueryRow(ctx, BookingGet, id))
	return b, t.err("get booking "+id, err)
}

// BookingByOffer reads the booking an offer's claim made.
func (t *Tx) BookingByOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	if offerID == "" {
		return nextup.Booking{}, fmt.Errorf("booking by offer: %w", nextup.ErrNotFound)
	}
	b, err := ScanBooking(t.r.QueryRow(ctx, BookingByOffer, offerID))
	return b, t.err("booking by offer "+offerID, err)
}

// BookingSetState stamps EndedAt when the booking ends (cancelled, no-show).
func (t *Tx) BookingSetState(ctx context.Context, id string, from, to nextup.BookingState, at time.Time) (nextup.Booking, error) {
	op := fmt.Sprintf("booking %s %s -> %s", id, from, to)
	b, err := ScanBooking(t.r.QueryRow(ctx, BookingSetState, to, TS(at), id, from))
	return returning(ctx, t, op, "bookings", id, b, err)
}

// BookingCheckIn sets or clears the check-in of a booked booking.
func (t *Tx) BookingCheckIn(ctx context.Context, id string, at *time.Time) (nextup.Booking, error) {
	b, err := ScanBooking(t.r.QueryRow(ctx, BookingCheckIn, TSPtr(at), id))
	return returning(ctx, t, "check in booking "+id, "bookings", id, b, err)
}

// BookingListBySlot lists a slot's bookings oldest first.
func (t *Tx) BookingListBySlot(ctx context.Context, slotID string) ([]nextup.Booking, error) {
	out, err := all(ctx, t, ScanBooking, `SELECT `+BookingCols+` FROM bookings
		WHERE slot_id = ? ORDER BY created_at, `+t.d.RowID, slotID)
	return out, t.err("bookings of slot "+slotID, err)
}

// HandBackCreate stores a hand-back, open unless h says otherwise.
func (t *Tx) HandBackCreate(ctx context.Context, h nextup.HandBack) error {
	if h.State == "" {
		h.State = nextup.HandBackOpen
	}
	_, err := t.r.Exec(ctx, HandBackInsert, HandBackInsertArgs(h)...)
	return t.err("create hand-back "+h.ID, err)
}

// HandBackGet reads a hand-back.
func (t *Tx) HandBackGet(ctx context.Context, id string) (nextup.HandBack, error) {
	h, err := ScanHandBack(t.r.QueryRow(ctx, HandBackGet, id))
	return h, t.err("get hand-back "+id, err)
}

// HandBackList lists a business's hand-backs in one state ("" for all),
// oldest first.
func (t *Tx) HandBackList(ctx context.Context, businessID string, state nextup.HandBackState) ([]nextup.HandBack, error) {
	q, args := HandBackSelect(businessID, state)
	out, err := all(ctx, t, ScanHandBack, q+` ORDER BY created_at, `+t.d.RowID, args...)
	return out, t.err("hand-backs of business "+businessID, err)
}

// HandBackResolve is idempotent: resolving what is already resolved is no
// error. Naming a hand-back that does not exist is ErrNotFound.
func (t *Tx) HandBackResolve(ctx context.Context, id, slotID string, at time.Time) error {
	op := fmt.Sprintf("resolve hand-back %q of slot %q", id, slotID)
	q, args, err := HandBackResolve(id, slotID, at)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	n, err := t.r.Exec(ctx, q, args...)
	if err != nil || n > 0 || id == "" {
		return t.err(op, err)
	}
	ok, err := t.exists(ctx, "handbacks", id)
	if err != nil {
		return t.err(op, err)
	}
	if !ok {
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	return nil
}
