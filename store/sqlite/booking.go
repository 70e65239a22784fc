package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

func (t *tx) BookingCreate(ctx context.Context, b nextup.Booking) error {
	if b.State == "" {
		b.State = nextup.BookingBooked
	}
	_, err := t.tx.ExecContext(ctx, sqlstore.BookingInsert, sqlstore.BookingInsertArgs(b)...)
	return dbErr("create booking "+b.ID, err)
}

func (t *tx) BookingGet(ctx context.Context, id string) (nextup.Booking, error) {
	b, err := sqlstore.ScanBooking(t.tx.QueryRowContext(ctx, sqlstore.BookingGet, id))
	return b, dbErr("get booking "+id, err)
}

func (t *tx) BookingByOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	if offerID == "" {
		return nextup.Booking{}, fmt.Errorf("booking by offer: %w", nextup.ErrNotFound)
	}
	b, err := sqlstore.ScanBooking(t.tx.QueryRowContext(ctx, sqlstore.BookingByOffer, offerID))
	return b, dbErr("booking by offer "+offerID, err)
}

// BookingSetState stamps EndedAt when the booking ends (cancelled, no-show).
func (t *tx) BookingSetState(ctx context.Context, id string, from, to nextup.BookingState, at time.Time) (nextup.Booking, error) {
	op := fmt.Sprintf("booking %s %s -> %s", id, from, to)
	b, err := sqlstore.ScanBooking(t.tx.QueryRowContext(ctx, sqlstore.BookingSetState, to, sqlstore.TS(at), id, from))
	if err == nil {
		return b, nil
	}
	if isNoRows(err) {
		return nextup.Booking{}, t.missOrConflict(ctx, op, "bookings", id)
	}
	return nextup.Booking{}, dbErr(op, err)
}

func (t *tx) BookingListBySlot(ctx context.Context, slotID string) ([]nextup.Booking, error) {
	out, err := scanAll(sqlstore.ScanBooking)(t.tx.QueryContext(ctx, `SELECT `+sqlstore.BookingCols+` FROM bookings
		WHERE slot_id = ? ORDER BY created_at, rowid`, slotID))
	return out, dbErr("bookings of slot "+slotID, err)
}

func (t *tx) HandBackCreate(ctx context.Context, h nextup.HandBack) error {
	if h.State == "" {
		h.State = nextup.HandBackOpen
	}
	_, err := t.tx.ExecContext(ctx, sqlstore.HandBackInsert, sqlstore.HandBackInsertArgs(h)...)
	return dbErr("create hand-back "+h.ID, err)
}

func (t *tx) HandBackGet(ctx context.Context, id string) (nextup.HandBack, error) {
	h, err := sqlstore.ScanHandBack(t.tx.QueryRowContext(ctx, sqlstore.HandBackGet, id))
	return h, dbErr("get hand-back "+id, err)
}

// HandBackList lists a business's hand-backs in one state ("" for all),
// oldest first.
func (t *tx) HandBackList(ctx context.Context, businessID string, state nextup.HandBackState) ([]nextup.HandBack, error) {
	q, args := sqlstore.HandBackSelect(businessID, state)
	out, err := scanAll(sqlstore.ScanHandBack)(t.tx.QueryContext(ctx, q+` ORDER BY created_at, rowid`, args...))
	return out, dbErr("hand-backs of business "+businessID, err)
}

// HandBackResolve is idempotent: resolving what is already resolved is no
// error. Naming a hand-back that does not exist is ErrNotFound.
func (t *tx) HandBackResolve(ctx context.Context, id, slotID string, at time.Time) error {
	op := fmt.Sprintf("resolve hand-back %q of slot %q", id, slotID)
	q, args, err := sqlstore.HandBackResolve(id, slotID, at)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
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
