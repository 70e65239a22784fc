package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

const offerCols = `id, business_id, slot_id, entry_id, contact_key, seats, party_size, state, channel,
	token_hash, rule_version, created_at, send_at, sent_at, expires_at, seen_at, resolved_at, reason`

func scanOffer(r scanner) (nextup.Offer, error) {
	var (
		o                        nextup.Offer
		created, sendAt, expires int64
		sent, seen, resolved     *int64
	)
	err := r.Scan(&o.ID, &o.BusinessID, &o.SlotID, &o.EntryID, &o.ContactKey, &o.Seats, &o.PartySize,
		&o.State, &o.Channel, &o.TokenHash, &o.RuleVersion, &created, &sendAt, &sent, &expires, &seen,
		&resolved, &o.Reason)
	o.CreatedAt, o.SendAt, o.ExpiresAt = fromTS(created), fromTS(sendAt), fromTS(expires)
	o.SentAt, o.SeenAt, o.ResolvedAt = fromNullTS(sent), fromNullTS(seen), fromNullTS(resolved)
	return o, err
}

func (t *tx) OfferCreate(ctx context.Context, o nextup.Offer) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO offers (`+offerCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.BusinessID, o.SlotID, o.EntryID, o.ContactKey, o.Seats, o.PartySize, o.State, o.Channel,
		o.TokenHash, o.RuleVersion, ts(o.CreatedAt), ts(o.SendAt), tsPtr(o.SentAt), ts(o.ExpiresAt),
		tsPtr(o.SeenAt), tsPtr(o.ResolvedAt), o.Reason)
	return dbErr("create offer "+o.ID, err)
}

func (t *tx) OfferGet(ctx context.Context, id string) (nextup.Offer, error) {
	o, err := scanOffer(t.tx.QueryRowContext(ctx, `SELECT `+offerCols+` FROM offers WHERE id = ?`, id))
	return o, dbErr("get offer "+id, err)
}

func (t *tx) OfferByTokenHash(ctx context.Context, hash string) (nextup.Offer, error) {
	if hash == "" {
		return nextup.Offer{}, fmt.Errorf("offer by token: %w", nextup.ErrNotFound)
	}
	o, err := scanOffer(t.tx.QueryRowContext(ctx, qOfferByTokenHash, hash))
	return o, dbErr("offer by token", err)
}

// OfferSetState stamps ResolvedAt (and the reason) when the offer ends,
// SentAt when it goes out.
func (t *tx) OfferSetState(ctx context.Context, id string, from []nextup.OfferState, to nextup.OfferState, at time.Time, reason string) (nextup.Offer, error) {
	op := fmt.Sprintf("offer %s %v -> %s", id, from, to)
	final := !to.Live()
	args := []any{to,
		final, ts(at),
		to == nextup.OfferOffered, ts(at),
		final, reason, reason,
		id, strs(from)}
	o, err := scanOffer(t.tx.QueryRowContext(ctx, `UPDATE offers SET state = ?,
			resolved_at = CASE WHEN ?::boolean THEN ? ELSE resolved_at END,
			sent_at = CASE WHEN ?::boolean THEN ? ELSE sent_at END,
			reason = CASE WHEN ?::boolean OR ?::text <> '' THEN ? ELSE reason END
		WHERE id = ? AND state = ANY(?::text[])
		RETURNING `+offerCols, args...))
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
	o, err := scanOffer(t.tx.QueryRowContext(ctx, `UPDATE offers SET state = 'offered', sent_at = ?, expires_at = ?, token_hash = ?
		WHERE id = ? AND state = 'pending'
		RETURNING `+offerCols, ts(sentAt), ts(expiresAt), tokenHash, id))
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
	o, err := scanOffer(t.tx.QueryRowContext(ctx, qOfferClaim, ts(now), tokenHash))
	if err == nil {
		return o, nil
	}
	if !isNoRows(err) {
		return nextup.Offer{}, dbErr(op, err)
	}
	var id, state string
	err = t.tx.QueryRowContext(ctx, qOfferStateByTokenHash, tokenHash).Scan(&id, &state)
	switch {
	case isNoRows(err):
		return nextup.Offer{}, fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	case err != nil:
		return nextup.Offer{}, dbErr(op, err)
	}
	return nextup.Offer{}, fmt.Errorf("%s %s (%s): %w", op, id, state, nextup.ErrConflict)
}

func (t *tx) OfferSeen(ctx context.Context, id string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE offers SET seen_at = coalesce(seen_at, ?) WHERE id = ?`, ts(at), id)
	return t.touched(ctx, "offer "+id+" seen", res, err)
}

func (t *tx) OfferListBySlot(ctx context.Context, slotID string) ([]nextup.Offer, error) {
	out, err := scanAll(scanOffer)(t.tx.QueryContext(ctx, `SELECT `+offerCols+` FROM offers
		WHERE slot_id = ? ORDER BY created_at, rid`, slotID))
	return out, dbErr("offers of slot "+slotID, err)
}

func (t *tx) OfferLiveByEntry(ctx context.Context, entryID string) (nextup.Offer, error) {
	o, err := scanOffer(t.tx.QueryRowContext(ctx, `SELECT `+offerCols+` FROM offers
		WHERE entry_id = ? AND state IN ('pending', 'offered')`, entryID))
	return o, dbErr("live offer of entry "+entryID, err)
}

func (t *tx) OfferCountSince(ctx context.Context, businessID, contactKey string, since time.Time) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM offers
		WHERE business_id = ? AND contact_key = ? AND created_at >= ?`,
		businessID, contactKey, ts(since)).Scan(&n)
	return n, dbErr("count offers", err)
}

// Hot look-ups by secret or key, named so a test can check each reads
// its index (the partial indexes need the "<> empty" condition to be used).
const (
	// qOfferClaim is the claim: one conditional write.
	qOfferClaim = `UPDATE offers SET state = 'claimed', resolved_at = ?1
		WHERE token_hash = ?2 AND token_hash <> '' AND state = 'offered' AND expires_at > ?1
		RETURNING ` + offerCols
	qOfferByTokenHash      = `SELECT ` + offerCols + ` FROM offers WHERE token_hash = ? AND token_hash <> ''`
	qOfferStateByTokenHash = `SELECT id, state FROM offers WHERE token_hash = ? AND token_hash <> ''`
)
