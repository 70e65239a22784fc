package sqlstore

import (
	"context"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// PaymentCols are the columns ScanPayment reads, in its order.
const PaymentCols = `id, business_id, slot_id, offer_id, entry_id, provider, session_id, url, amount_cents, currency,
	state, payment_intent, refund_id, expires_at, created_at, updated_at`

// ScanPayment reads a row of PaymentCols.
func ScanPayment(r Scanner) (nextup.Payment, error) {
	var (
		p                         nextup.Payment
		expires, created, updated int64
	)
	err := r.Scan(&p.ID, &p.BusinessID, &p.SlotID, &p.OfferID, &p.EntryID, &p.Provider, &p.SessionID, &p.URL,
		&p.AmountCents, &p.Currency, &p.State, &p.PaymentIntent, &p.RefundID, &expires, &created, &updated)
	p.ExpiresAt, p.CreatedAt, p.UpdatedAt = FromTS(expires), FromTS(created), FromTS(updated)
	return p, err
}

// PaymentInsert inserts a payment; PaymentInsertArgs gives its arguments.
const PaymentInsert = `INSERT INTO payments (` + PaymentCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// PaymentInsertArgs returns the arguments of PaymentInsert for p.
func PaymentInsertArgs(p nextup.Payment) []any {
	return []any{p.ID, p.BusinessID, p.SlotID, p.OfferID, p.EntryID, p.Provider, p.SessionID, p.URL,
		p.AmountCents, p.Currency, p.State, p.PaymentIntent, p.RefundID, TS(p.ExpiresAt), TS(p.CreatedAt), TS(p.UpdatedAt)}
}

// Queries of payments, each named after the Tx method that runs it.
const (
	// PaymentBySession reads a payment by its provider's session id.
	PaymentBySession = `SELECT ` + PaymentCols + ` FROM payments WHERE session_id = ?`
	// PaymentListByOffer lists an offer's payments; Tx.PaymentListByOffer
	// appends its newest-first order (with the dialect's RowID).
	PaymentListByOffer = `SELECT ` + PaymentCols + ` FROM payments WHERE offer_id = ?`
)

// PaymentSetState returns the conditional update of Tx.PaymentSetState
// and its arguments: payment id moves from one of c.From to c.To, keeping
// a payment intent or refund already recorded unless c names one.
func PaymentSetState(id string, c nextup.PaymentChange) (string, []any) {
	q := `UPDATE payments SET state = ?,
		payment_intent = CASE WHEN ? <> '' THEN ? ELSE payment_intent END,
		refund_id = CASE WHEN ? <> '' THEN ? ELSE refund_id END,
		updated_at = ?
		WHERE id = ? AND state IN (''`
	args := []any{c.To, c.PaymentIntent, c.PaymentIntent, c.RefundID, c.RefundID, TS(c.At), id}
	for _, s := range c.From {
		q += `, ?`
		args = append(args, string(s))
	}
	return q + `) RETURNING ` + PaymentCols, args
}

// PaymentCreate stores a payment.
func (t *Tx) PaymentCreate(ctx context.Context, p nextup.Payment) error {
	_, err := t.r.Exec(ctx, PaymentInsert, PaymentInsertArgs(p)...)
	return t.err("create payment "+p.ID, err)
}

// PaymentBySession reads a payment by its provider's session id.
func (t *Tx) PaymentBySession(ctx context.Context, sessionID string) (nextup.Payment, error) {
	p, err := ScanPayment(t.r.QueryRow(ctx, PaymentBySession, sessionID))
	return p, t.err("payment by session "+sessionID, err)
}

// PaymentListByOffer lists an offer's payments newest first.
func (t *Tx) PaymentListByOffer(ctx context.Context, offerID string) ([]nextup.Payment, error) {
	out, err := all(ctx, t, ScanPayment,
		PaymentListByOffer+` ORDER BY created_at DESC, `+t.d.RowID+` DESC`, offerID)
	return out, t.err("payments of offer "+offerID, err)
}

// PaymentSetState is a conditional write: a payment in none of c.From is
// ErrConflict, a missing one ErrNotFound.
func (t *Tx) PaymentSetState(ctx context.Context, id string, c nextup.PaymentChange) (nextup.Payment, error) {
	q, args := PaymentSetState(id, c)
	p, err := ScanPayment(t.r.QueryRow(ctx, q, args...))
	return returning(ctx, t, fmt.Sprintf("payment %s to %s", id, c.To), "payments", id, p, err)
}
