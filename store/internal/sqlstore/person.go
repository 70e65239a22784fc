package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nextup-dev/nextup"
)

// PhoneDigitsExpr is an entry's phone number reduced to its '+' and
// digits (nextup.PhoneDigits) for the characters a stored number may hold
// besides them: the expression of the index entries_phone (migrations
// 0016 on SQLite, 0017 on PostgreSQL), which a query must repeat as it is.
const PhoneDigitsExpr = `replace(replace(replace(replace(replace(phone, ' ', ''), '-', ''), '(', ''), ')', ''), '.', '')`

// Queries of a person's data, each named after the Tx method that runs it.
const (
	// EntryListByContact reads a person's entries in any state: by the
	// email's and the phone's contact keys (?2, ?3; entries_contact), and
	// by the number itself (?4; entries_phone), for entries whose contact
	// key is their email. A UNION of the two, so that each half seeks in
	// its index (an OR of the two makes SQLite scan the business's
	// entries). Tx.EntryListByContact checks each row with
	// nextup.Contact.Matches.
	EntryListByContact = `SELECT ` + EntryCols + ` FROM entries
		WHERE business_id = ?1 AND contact_key IN (?2, ?3)
		UNION SELECT ` + EntryCols + ` FROM entries
		WHERE business_id = ?1 AND phone <> '' AND ` + PhoneDigitsExpr + ` = ?4
		ORDER BY joined_at, id`

	// PersonEntryState reads the business and state of an entry that an
	// erasure rewrites.
	PersonEntryState = `SELECT business_id, state FROM entries WHERE id = ?`
	// PersonEntryErase puts the pseudonym ?1 in place of an entry's name
	// and clears its contact, channel and status link; ?2 is the contact
	// key of an entry without a contact.
	PersonEntryErase = `UPDATE entries SET name = ?1, email = '', phone = '', channel = '', contact_key = ?2,
		status_hash = '' WHERE id = ?3`
	// PersonOfferState reads the business and state of an offer.
	PersonOfferState = `SELECT business_id, state FROM offers WHERE id = ?`
	// PersonOfferErase replaces an offer's contact key.
	PersonOfferErase = `UPDATE offers SET contact_key = ?1 WHERE id = ?2`
	// PersonBookingErase puts the pseudonym in place of a booking's name.
	PersonBookingErase = `UPDATE bookings SET name = ?1 WHERE id = ?2 AND business_id = ?3`
	// PersonGuestErase rewrites a guest's name.
	PersonGuestErase = `UPDATE guests SET name = ?1 WHERE entry_id = ?2 AND idx = ?3 AND business_id = ?4`
	// PersonMessageErase addresses a message to the pseudonym, empties its
	// text and cancels it if it was still to be sent.
	PersonMessageErase = `UPDATE messages SET to_addr = ?1, subject = '', body = '', html = '', calendar = '',
		claim_url = '', unsubscribe_url = '', last_error = '',
		state = CASE WHEN state IN ('queued', 'failed') THEN 'cancelled' ELSE state END
		WHERE id = ?2 AND business_id = ?3`
	// PersonAuditErase replaces an audit row's detail (JSON, NULL for none).
	PersonAuditErase = `UPDATE audit_events SET detail = ?1 WHERE id = ?2 AND business_id = ?3`
	// PersonProposalErase replaces a proposal's fields and excerpt.
	PersonProposalErase = `UPDATE proposals SET fields = ?1, excerpt = ?2 WHERE id = ?3 AND business_id = ?4`
	// PersonHandBackErase replaces a hand-back's note.
	PersonHandBackErase = `UPDATE handbacks SET note = ?1 WHERE id = ?2 AND business_id = ?3`
)

// EntryListByContact lists a person's entries in a business, in any
// state, oldest first.
func (t *Tx) EntryListByContact(ctx context.Context, businessID string, c nextup.Contact) ([]nextup.Entry, error) {
	if c.Empty() {
		return nil, nil
	}
	emailKey, phoneKey := "", ""
	if c.Email != "" {
		emailKey = nextup.Entry{Email: c.Email}.ContactKey()
	}
	if c.Phone != "" {
		phoneKey = nextup.Entry{Phone: c.Phone}.ContactKey()
	}
	// An empty key or number must match nothing: no contact key is ""
	// and no stored number is "" (phone <> '').
	out, err := all(ctx, t, ScanEntry, EntryListByContact, businessID, emailKey, phoneKey, c.Phone)
	if err != nil {
		return nil, t.err("entries of a person", err)
	}
	return slices.DeleteFunc(out, func(e nextup.Entry) bool { return !c.Matches(e) }), nil
}

// OfferListByContact lists the offers made to a person (by contact key)
// in a business, oldest first (the index offers_contact).
func (t *Tx) OfferListByContact(ctx context.Context, businessID, contactKey string) ([]nextup.Offer, error) {
	out, err := all(ctx, t, ScanOffer, `SELECT `+OfferCols+` FROM offers
		WHERE business_id = ? AND contact_key = ? ORDER BY created_at, `+t.d.RowID, businessID, contactKey)
	return out, t.err("offers of a person", err)
}

// PersonErase rewrites a person's rows, statement by statement in the
// transaction: any error fails the whole erasure with it (InTx rolls
// back).
func (t *Tx) PersonErase(ctx context.Context, e nextup.Erasure) error {
	bid := e.BusinessID
	erasedKey := nextup.Entry{}.ContactKey()
	for _, id := range e.Entries {
		op := "erase entry " + id
		var biz, state string
		if err := t.r.QueryRow(ctx, PersonEntryState, id).Scan(&biz, &state); err != nil {
			return t.err(op, err)
		}
		switch {
		case biz != bid:
			return fmt.Errorf("%s: of another business: %w", op, nextup.ErrNotFound)
		case nextup.Entry{State: nextup.EntryState(state)}.Active():
			return fmt.Errorf("%s: still %s: %w", op, state, nextup.ErrConflict)
		}
		n, err := t.r.Exec(ctx, PersonEntryErase, e.Pseudonym, erasedKey, id)
		if err := t.touched(op, n, err); err != nil {
			return err
		}
	}
	for _, id := range e.Offers {
		op := "erase offer " + id
		var biz, state string
		if err := t.r.QueryRow(ctx, PersonOfferState, id).Scan(&biz, &state); err != nil {
			return t.err(op, err)
		}
		switch {
		case biz != bid:
			return fmt.Errorf("%s: of another business: %w", op, nextup.ErrNotFound)
		case nextup.OfferState(state).Live():
			return fmt.Errorf("%s: still %s: %w", op, state, nextup.ErrConflict)
		}
		n, err := t.r.Exec(ctx, PersonOfferErase, erasedKey, id)
		if err := t.touched(op, n, err); err != nil {
			return err
		}
	}
	for _, id := range e.Bookings {
		n, err := t.r.Exec(ctx, PersonBookingErase, e.Pseudonym, id, bid)
		if err := t.touched("erase booking "+id, n, err); err != nil {
			return err
		}
	}
	for _, g := range e.Guests {
		n, err := t.r.Exec(ctx, PersonGuestErase, g.Name, g.EntryID, g.Index, bid)
		if err := t.touched(fmt.Sprintf("erase guest %d of entry %s", g.Index, g.EntryID), n, err); err != nil {
			return err
		}
	}
	for _, id := range e.Messages {
		n, err := t.r.Exec(ctx, PersonMessageErase, e.Pseudonym, id, bid)
		if err := t.touched("erase message "+id, n, err); err != nil {
			return err
		}
	}
	for _, ev := range e.Audit {
		op := fmt.Sprintf("erase audit event %d", ev.ID)
		var detail any
		if ev.Detail != nil {
			b, err := json.Marshal(ev.Detail)
			if err != nil {
				return fmt.Errorf("%s: detail: %w", op, err)
			}
			detail = string(b)
		}
		n, err := t.r.Exec(ctx, PersonAuditErase, detail, ev.ID, bid)
		if err := t.touched(op, n, err); err != nil {
			return err
		}
	}
	for _, p := range e.Proposals {
		op := "erase proposal " + p.ID
		fields, err := json.Marshal(p.Fields)
		if err != nil {
			return fmt.Errorf("%s: fields: %w", op, err)
		}
		n, err := t.r.Exec(ctx, PersonProposalErase, string(fields), p.Excerpt, p.ID, bid)
		if err := t.touched(op, n, err); err != nil {
			return err
		}
	}
	for _, h := range e.HandBacks {
		n, err := t.r.Exec(ctx, PersonHandBackErase, h.Note, h.ID, bid)
		if err := t.touched("erase hand-back "+h.ID, n, err); err != nil {
			return err
		}
	}
	return nil
}
