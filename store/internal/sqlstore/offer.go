package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

// OfferCols are the columns ScanOffer reads, in its order.
const OfferCols = `id, business_id, slot_id, entry_id, contact_key, seats, party_size, state, channel,
	token_hash, rule_version, created_at, send_at, sent_at, expires_at, seen_at, resolved_at, reason`

// ScanOffer reads a row of OfferCols.
func ScanOffer(r Scanner) (nextup.Offer, error) {
	var (
		o                        nextup.Offer
		created, sendAt, expires int64
		sent, seen, resolved     *int64
	)
	err := r.Scan(&o.ID, &o.BusinessID, &o.SlotID, &o.EntryID, &o.ContactKey, &o.Seats, &o.PartySize,
		&o.State, &o.Channel, &o.TokenHash, &o.RuleVersion, &created, &sendAt, &sent, &expires, &seen,
		&resolved, &o.Reason)
	o.CreatedAt, o.SendAt, o.ExpiresAt = FromTS(created), FromTS(sendAt), FromTS(expires)
	o.SentAt, o.SeenAt, o.ResolvedAt = FromNullTS(sent), FromNullTS(seen), FromNullTS(resolved)
	return o, err
}

// OfferInsert inserts an offer; OfferInsertArgs gives its arguments.
const OfferInsert = `INSERT INTO offers (` + OfferCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// OfferInsertArgs returns the arguments of OfferInsert for o, in OfferCols
// order.
func OfferInsertArgs(o nextup.Offer) []any {
	return []any{o.ID, o.BusinessID, o.SlotID, o.EntryID, o.ContactKey, o.Seats, o.PartySize, o.State, o.Channel,
		o.TokenHash, o.RuleVersion, TS(o.CreatedAt), TS(o.SendAt), TSPtr(o.SentAt), TS(o.ExpiresAt),
		TSPtr(o.SeenAt), TSPtr(o.ResolvedAt), o.Reason}
}

// Queries of offers, each named after the Tx method that runs it. The
// look-ups by token repeat the "<> empty" condition of the partial index
// offers_token, which SQLite needs before it uses the index.
const (
	// OfferGet reads an offer by id.
	OfferGet = `SELECT ` + OfferCols + ` FROM offers WHERE id = ?`

	// OfferByTokenHash reads an offer by its claim token's hash.
	OfferByTokenHash = `SELECT ` + OfferCols + ` FROM offers WHERE token_hash = ? AND token_hash <> ''`

	// OfferClaim is the claim: one conditional write that claims the
	// offer with token hash ?2 while it is offered and its deadline is
	// after ?1, stamps resolved_at ?1, and returns it.
	OfferClaim = `UPDATE offers SET state = 'claimed', resolved_at = ?1
		WHERE token_hash = ?2 AND token_hash <> '' AND state = 'offered' AND expires_at > ?1
		RETURNING ` + OfferCols

	// OfferStateByTokenHash reads the id and state of the offer with a
	// token hash, to say why a claim matched nothing.
	OfferStateByTokenHash = `SELECT id, state FROM offers WHERE token_hash = ? AND token_hash <> ''`

	// OfferSend moves a pending offer to offered with its send time,
	// deadline and token hash, and returns it.
	OfferSend = `UPDATE offers SET state = 'offered', sent_at = ?, expires_at = ?, token_hash = ?
		WHERE id = ? AND state = 'pending'
		RETURNING ` + OfferCols

	// OfferHanded restarts an offered offer's window from its message's
	// hand-off.
	OfferHanded = `UPDATE offers SET sent_at = ?, expires_at = ?
		WHERE id = ? AND state = 'offered' AND expires_at > ? AND expires_at < ?
		RETURNING ` + OfferCols

	// OfferSeen stamps seen_at the first time only.
	OfferSeen = `UPDATE offers SET seen_at = coalesce(seen_at, ?) WHERE id = ?`

	// OfferLiveByEntry reads an entry's pending or offered offer.
	OfferLiveByEntry = `SELECT ` + OfferCols + ` FROM offers
		WHERE entry_id = ? AND state IN ('pending', 'offered')`

	// OfferCountSince counts a contact's offers of one business created
	// since a time.
	OfferCountSince = `SELECT count(*) FROM offers
		WHERE business_id = ? AND contact_key = ? AND created_at >= ?`
)

// OfferCreate stores an offer.
func (t *Tx) OfferCreate(ctx context.Context, o nextup.Offer) error {
	_, err := t.r.Exec(ctx, OfferInsert, OfferInsertArgs(o)...)
	return t.err("create offer "+o.ID, err)
}

// OfferGet reads an offer.
func (t *Tx) OfferGet(ctx context.Context, id string) (nextup.Offer, error) {
	o, err := ScanOffer(t.r.QueryRow(ctx, OfferGet, id))
	return o, t.err("get offer "+id, err)
}

// OfferByTokenHash reads the offer whose claim token has this hash.
func (t *Tx) OfferByTokenHash(ctx context.Context, hash string) (nextup.Offer, error) {
	if hash == "" {
		return nextup.Offer{}, fmt.Errorf("offer by token: %w", nextup.ErrNotFound)
	}
	o, err := ScanOffer(t.r.QueryRow(ctx, OfferByTokenHash, hash))
	return o, t.err("offer by token", err)
}

// OfferSetState stamps ResolvedAt (and the reason) when the offer ends,
// SentAt when it goes out. The flags are compared with 1 rather than
// used as conditions, so that PostgreSQL reads them as integers as SQLite
// does.
func (t *Tx) OfferSetState(ctx context.Context, id string, from []nextup.OfferState, to nextup.OfferState, at time.Time, reason string) (nextup.Offer, error) {
	op := fmt.Sprintf("offer %s %v -> %s", id, from, to)
	final := BoolInt(!to.Live())
	cond, fromArgs := in(t, "state", from)
	args := append([]any{to,
		final, TS(at),
		BoolInt(to == nextup.OfferOffered), TS(at),
		final, reason, reason,
		id}, fromArgs...)
	o, err := ScanOffer(t.r.QueryRow(ctx, `UPDATE offers SET state = ?,
			resolved_at = CASE WHEN ? = 1 THEN ? ELSE resolved_at END,
			sent_at = CASE WHEN ? = 1 THEN ? ELSE sent_at END,
			reason = CASE WHEN ? = 1 OR ? <> '' THEN ? ELSE reason END
		WHERE id = ? AND `+cond+`
		RETURNING `+OfferCols, args...))
	return returning(ctx, t, op, "offers", id, o, err)
}

// OfferSend moves a pending offer to offered with its real send time and a
// deadline counted from it.
func (t *Tx) OfferSend(ctx context.Context, id string, sentAt, expiresAt time.Time, tokenHash string) (nextup.Offer, error) {
	o, err := ScanOffer(t.r.QueryRow(ctx, OfferSend, TS(sentAt), TS(expiresAt), tokenHash, id))
	return returning(ctx, t, "send offer "+id, "offers", id, o, err)
}

// OfferHanded restarts an offered offer's claim window from the moment
// its message reached the provider.
func (t *Tx) OfferHanded(ctx context.Context, id string, sentAt, expiresAt time.Time) (nextup.Offer, error) {
	o, err := ScanOffer(t.r.QueryRow(ctx, OfferHanded, TS(sentAt), TS(expiresAt), id, TS(sentAt), TS(expiresAt)))
	return returning(ctx, t, "restart the window of offer "+id, "offers", id, o, err)
}

// OfferClaim is the claim itself: one conditional UPDATE that succeeds for
// exactly one caller while the offer is offered and its deadline is ahead.
// When it matches nothing the caller re-reads the offer to say why
// (claimed by someone else, expired, withdrawn).
func (t *Tx) OfferClaim(ctx context.Context, tokenHash string, now time.Time) (nextup.Offer, error) {
	const op = "claim offer"
	if tokenHash == "" {
		return nextup.Offer{}, fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	}
	o, err := ScanOffer(t.r.QueryRow(ctx, OfferClaim, TS(now), tokenHash))
	if err == nil {
		return o, nil
	}
	if !isNoRows(err) {
		return nextup.Offer{}, t.err(op, err)
	}
	var id, state string
	err = t.r.QueryRow(ctx, OfferStateByTokenHash, tokenHash).Scan(&id, &state)
	switch {
	case isNoRows(err):
		return nextup.Offer{}, fmt.Errorf("%s: %w", op, nextup.ErrNotFound)
	case err != nil:
		return nextup.Offer{}, t.err(op, err)
	}
	return nextup.Offer{}, fmt.Errorf("%s %s (%s): %w", op, id, state, nextup.ErrConflict)
}

// OfferSeen stamps the first time the claim page was opened.
func (t *Tx) OfferSeen(ctx context.Context, id string, at time.Time) error {
	n, err := t.r.Exec(ctx, OfferSeen, TS(at), id)
	return t.touched("offer "+id+" seen", n, err)
}

// OfferListBySlot lists a slot's offers oldest first.
func (t *Tx) OfferListBySlot(ctx context.Context, slotID string) ([]nextup.Offer, error) {
	out, err := all(ctx, t, ScanOffer, `SELECT `+OfferCols+` FROM offers
		WHERE slot_id = ? ORDER BY created_at, `+t.d.RowID, slotID)
	return out, t.err("offers of slot "+slotID, err)
}

// OfferLiveByEntry reads an entry's pending or offered offer.
func (t *Tx) OfferLiveByEntry(ctx context.Context, entryID string) (nextup.Offer, error) {
	o, err := ScanOffer(t.r.QueryRow(ctx, OfferLiveByEntry, entryID))
	return o, t.err("live offer of entry "+entryID, err)
}

// OfferCountSince counts a contact's offers of one business since a time.
func (t *Tx) OfferCountSince(ctx context.Context, businessID, contactKey string, since time.Time) (int, error) {
	var n int
	err := t.r.QueryRow(ctx, OfferCountSince, businessID, contactKey, TS(since)).Scan(&n)
	return n, t.err("count offers", err)
}
