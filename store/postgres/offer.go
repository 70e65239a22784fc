package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

func (t *tx) OfferCreate(ctx context.Context, o nextup.Offer) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.OfferInsert, sqlstore.OfferInsertArgs(o)...)
	return dbErr("create offer "+o.ID, err)
}

func (t *tx) OfferGet(ctx context.Context, id string) (nextup.Offer, error) {
	o, err := sqlstore.ScanOffer(t.tx.QueryRowContext(ctx, sqlstore.OfferGet, id))
	return o, dbErr("get offer "+id, err)
}

func (t *tx) OfferByTokenHash(ctx context.Context, hash string) (nextup.Offer, error) {
	if hash == "" {
		return nextup.Offer{}, fmt.Errorf("offer by token: %w", nextup.ErrNotFound)
	}
	o, err := sqlstore.ScanOffer(t.tx.QueryRowContext(ctx, sqlstore.OfferByTokenHash, hash))
	return o, dbErr("offer by token", err)
}

// OfferSetState stamps ResolvedAt (and the reason) when the offer ends,
// SentAt when it goes out.
func (t *tx) OfferSetState(ctx context.Context, id string, from []nextup.OfferState, to nextup.OfferState, at time.Time, reason string) (nextup.Offer, error) {
	op := fmt.Sprintf("offer %s %v -> %s", id, from, to)
	final := !to.Live()
	args := []any{to,
		final, sqlstore.TS(at),
		to == nextup.OfferOffered, sqlstore.TS(at),
		final, reason, reason,
		id, strs(from)}
	o, err := sqlstore.ScanOffer(t.tx.QueryRowContext(ctx, `UPDATE offers SET state = ?,
			resolved_at = CASE WHEN ?::boolean THEN ? ELSE resolved_at END,
			sent_at = CASE WHEN ?::boolean THEN ? ELSE sent_at END,
			reason = CASE WHEN ?::boolean OR ?::text <> '' THEN ? ELSE reason END
		WHERE id = ? AND state = ANY(?::text[])
		RETURNING `+sqlstore.OfferCols, args...))
	if err == nil {
		return o, nil
	}
	if isNoRows(err) {
		return nextup.Offer{}, t.missOrConflict(ctx, op, "offers", id)
	}
	return nextup.Offer{}, dbErr(op, err)
}

// OfferSend moves a pending offer to offered with its real send time and a
// deadline counted from it.
func (t *tx) OfferSend(ctx context.Context, id string, sentAt, expiresAt time.Time, tokenHash string) (nextup.Offer, error) {
	op := "send offer " + id
	o, err := sqlstore.ScanOffer(t.tx.QueryRowContext(ctx, sqlstore.OfferSend,
		sqlstore.TS(sentAt), sqlstore.TS(expiresAt), tokenHash, id))
	if err == nil {
		return o, nil
	}
	if isNoRows(err) {
		return nextup.Offer{}, t.missOrConflict(ctx, op, "offers", id)
	}
	return nextup.Offer{}, dbErr(op, err)
}

// OfferClaim is the claim itself: one conditional UPDATE that succeeds for
// exactly one caller while the offer is offered and its deadline is ahead.
// When it matches nothing the caller re-reads the offer to say why
// (claimed by someone else, expired, withdrawn).
func (t *tx) OfferClaim(ctx context.Context, tokenHash string, now time.Time) (nextup.Offer, error) {
	const op = "claim offer"
	if tokenHash == "" {
		return nextup.Offer{}, fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	o, err := sqlstore.ScanOffer(t.tx.QueryRowContext(ctx, sqlstore.OfferClaim, sqlstore.TS(now), tokenHash))
	if err == nil {
		return o, nil
	}
	if !isNoRows(err) {
		return nextup.Offer{}, dbErr(op, err)
	}
	var id, state string
	err = t.tx.QueryRowContext(ctx, sqlstore.OfferStateByTokenHash, tokenHash).Scan(&id, &state)
	switch {
	case isNoRows(err):
		return nextup.Offer{}, fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	case err != nil:
		return nextup.Offer{}, dbErr(op, err)
	}
	return nextup.Offer{}, fmt.Errorf("%s %s (%s): %w", op, id, state, nextup.ErrConflict)
}

func (t *tx) OfferSeen(ctx context.Context, id string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, sqlstore.OfferSeen, sqlstore.TS(at), id)
	return t.touched(ctx, "offer "+id+" seen", res, err)
}

func (t *tx) OfferListBySlot(ctx context.Context, slotID string) ([]nextup.Offer, error) {
	out, err := scanAll(sqlstore.ScanOffer)(t.tx.QueryContext(ctx, `SELECT `+sqlstore.OfferCols+` FROM offers
		WHERE slot_id = ? ORDER BY created_at, rid`, slotID))
	return out, dbErr("offers of slot "+slotID, err)
}

func (t *tx) OfferLiveByEntry(ctx context.Context, entryID string) (nextup.Offer, error) {
	o, err := sqlstore.ScanOffer(t.tx.QueryRowContext(ctx, sqlstore.OfferLiveByEntry, entryID))
	return o, dbErr("live offer of entry "+entryID, err)
}

func (t *tx) OfferCountSince(ctx context.Context, businessID, contactKey string, since time.Time) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, sqlstore.OfferCountSince, businessID, contactKey, sqlstore.TS(since)).Scan(&n)
	return n, dbErr("count offers", err)
}
