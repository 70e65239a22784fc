package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

const bookingCols = `id, business_id, slot_id, entry_id, offer_id, name, seats, state, token_hash, created_at, ended_at`

func scanBooking(r scanner) (nextup.Booking, error) {
	var (
		b       nextup.Booking
		created int64
		ended   *int64
	)
	err := r.Scan(&b.ID, &b.BusinessID, &b.SlotID, &b.EntryID, &b.OfferID, &b.Name, &b.Seats, &b.State,
		&b.TokenHash, &created, &ended)
	b.CreatedAt, b.EndedAt = fromTS(created), fromNullTS(ended)
	return b, err
}

func (t *tx) BookingCreate(ctx context.Context, b nextup.Booking) error {
	if b.State == "" {
		b.State = nextup.BookingBooked
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO bookings (`+bookingCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.ID, b.BusinessID, b.SlotID, b.EntryID, b.OfferID, b.Name, b.Seats, b.State, b.TokenHash,
		ts(b.CreatedAt), tsPtr(b.EndedAt))
	return dbErr("create booking "+b.ID, err)
}

func (t *tx) BookingGet(ctx context.Context, id string) (nextup.Booking, error) {
	b, err := scanBooking(t.tx.QueryRowContext(ctx, `SELECT `+bookingCols+` FROM bookings WHERE id = ?`, id))
	return b, dbErr("get booking "+id, err)
}

func (t *tx) BookingByOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	if offerID == "" {
		return nextup.Booking{}, fmt.Errorf("booking by offer: %w", nextup.ErrNotFound)
	}
	b, err := scanBooking(t.tx.QueryRowContext(ctx, qBookingByOffer, offerID))
	return b, dbErr("booking by offer "+offerID, err)
}

// BookingSetState stamps EndedAt when the booking ends (cancelled, no-show).
func (t *tx) BookingSetState(ctx context.Context, id string, from, to nextup.BookingState, at time.Time) (nextup.Booking, error) {
	op := fmt.Sprintf("booking %s %s -> %s", id, from, to)
	b, err := scanBooking(t.tx.QueryRowContext(ctx, `UPDATE bookings SET state = ?1,
			ended_at = CASE WHEN ?1 = 'booked' THEN ended_at ELSE ?2 END
		WHERE id = ?3 AND state = ?4
		RETURNING `+bookingCols, to, ts(at), id, from))
	if err == nil {
		return b, nil
	}
	if isNoRows(err) {
		return nextup.Booking{}, t.missOrConflict(ctx, op, "bookings", id)
	}
	return nextup.Booking{}, dbErr(op, err)
}

func (t *tx) BookingListBySlot(ctx context.Context, slotID string) ([]nextup.Booking, error) {
	out, err := scanAll(scanBooking)(t.tx.QueryContext(ctx, `SELECT `+bookingCols+` FROM bookings
		WHERE slot_id = ? ORDER BY created_at, rid`, slotID))
	return out, dbErr("bookings of slot "+slotID, err)
}

const handBackCols = `id, business_id, slot_id, reason, note, state, created_at, resolved_at`

func scanHandBack(r scanner) (nextup.HandBack, error) {
	var (
		h        nextup.HandBack
		created  int64
		resolved *int64
	)
	err := r.Scan(&h.ID, &h.BusinessID, &h.SlotID, &h.Reason, &h.Note, &h.State, &created, &resolved)
	h.CreatedAt, h.ResolvedAt = fromTS(created), fromNullTS(resolved)
	return h, err
}

func (t *tx) HandBackCreate(ctx context.Context, h nextup.HandBack) error {
	if h.State == "" {
		h.State = nextup.HandBackOpen
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO handbacks (`+handBackCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		h.ID, h.BusinessID, h.SlotID, h.Reason, h.Note, h.State, ts(h.CreatedAt), tsPtr(h.ResolvedAt))
	return dbErr("create hand-back "+h.ID, err)
}

func (t *tx) HandBackGet(ctx context.Context, id string) (nextup.HandBack, error) {
	h, err := scanHandBack(t.tx.QueryRowContext(ctx, `SELECT `+handBackCols+` FROM handbacks WHERE id = ?`, id))
	return h, dbErr("get hand-back "+id, err)
}

// HandBackList lists a business's hand-backs in one state ("" for all),
// oldest first.
func (t *tx) HandBackList(ctx context.Context, businessID string, state nextup.HandBackState) ([]nextup.HandBack, error) {
	q := `SELECT ` + handBackCols + ` FROM handbacks WHERE business_id = ?`
	args := []any{businessID}
	if state != "" {
		q += ` AND state = ?`
		args = append(args, state)
	}
	out, err := scanAll(scanHandBack)(t.tx.QueryContext(ctx, q+` ORDER BY created_at, rid`, args...))
	return out, dbErr("hand-backs of business "+businessID, err)
}

// HandBackResolve is idempotent: resolving what is already resolved is no
// error. Naming a hand-back that does not exist is ErrNotFound.
func (t *tx) HandBackResolve(ctx context.Context, id, slotID string, at time.Time) error {
	op := fmt.Sprintf("resolve hand-back %q of slot %q", id, slotID)
	q := `UPDATE handbacks SET state = 'resolved', resolved_at = ? WHERE state = 'open'`
	args := []any{ts(at)}
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
		return fmt.Errorf("%s: want an id or a slot: %w", op, nextup.ErrInvalid)
	}
	res, err := t.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return dbErr(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 || id == "" {
		return dbErr(op, err)
	}
	ok, err := t.exists(ctx, "handbacks", id)
	if err != nil {
		return dbErr(op, err)
	}
	if !ok {
		return fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	return nil
}

// Hot look-ups by secret or key, named so a test can check each reads
// its index (the partial indexes need the "<> empty" condition to be used).
const (
	qBookingByOffer = `SELECT ` + bookingCols + ` FROM bookings WHERE offer_id = ? AND offer_id <> ''`
)
