package sqlstore

import (
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
