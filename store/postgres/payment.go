package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

func (t *tx) SlotEventSet(ctx context.Context, id, title string, ev nextup.EventSettings) error {
	res, err := t.tx.ExecContext(ctx, sqlstore.SlotEventSet, title, sqlstore.EncodeEvent(&ev), id)
	return t.touched(ctx, "set event "+id, res, err)
}

func (t *tx) EntryByContact(ctx context.Context, businessID, contactKey, service, eventID string, states []nextup.EntryState) (nextup.Entry, error) {
	q, args := sqlstore.EntryByContact(businessID, contactKey, sqlstore.QueueOf(service, eventID), states)
	e, err := sqlstore.ScanEntry(t.tx.QueryRowContext(ctx, q, args...))
	return e, dbErr("entry by contact", err)
}

// BookingCheckIn sets or clears the check-in of a booked booking.
func (t *tx) BookingCheckIn(ctx context.Context, id string, at *time.Time) (nextup.Booking, error) {
	op := "check in booking " + id
	b, err := sqlstore.ScanBooking(t.tx.QueryRowContext(ctx, sqlstore.BookingCheckIn, sqlstore.TSPtr(at), id))
	if err == nil {
		return b, nil
	}
	if isNoRows(err) {
		return nextup.Booking{}, t.missOrConflict(ctx, op, "bookings", id)
	}
	return nextup.Booking{}, dbErr(op, err)
}

func (t *tx) PaymentCreate(ctx context.Context, p nextup.Payment) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.PaymentInsert, sqlstore.PaymentInsertArgs(p)...)
	return dbErr("create payment "+p.ID, err)
}

func (t *tx) PaymentBySession(ctx context.Context, sessionID string) (nextup.Payment, error) {
	p, err := sqlstore.ScanPayment(t.tx.QueryRowContext(ctx, sqlstore.PaymentBySession, sessionID))
	return p, dbErr("payment by session "+sessionID, err)
}

func (t *tx) PaymentListByOffer(ctx context.Context, offerID string) ([]nextup.Payment, error) {
	out, err := scanAll(sqlstore.ScanPayment)(t.tx.QueryContext(ctx,
		sqlstore.PaymentListByOffer+` ORDER BY created_at DESC, rid DESC`, offerID))
	return out, dbErr("payments of offer "+offerID, err)
}

// PaymentSetState is a conditional write: a payment in none of c.From is
// ErrConflict, a missing one ErrNotFound.
func (t *tx) PaymentSetState(ctx context.Context, id string, c nextup.PaymentChange) (nextup.Payment, error) {
	op := fmt.Sprintf("payment %s to %s", id, c.To)
	q, args := sqlstore.PaymentSetState(id, c)
	p, err := sqlstore.ScanPayment(t.tx.QueryRowContext(ctx, q, args...))
	if err == nil {
		return p, nil
	}
	if isNoRows(err) {
		return nextup.Payment{}, t.missOrConflict(ctx, op, "payments", id)
	}
	return nextup.Payment{}, dbErr(op, err)
}
