package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/nextup-dev/nextup"
)

// A person's data on request (export, erasure, retention).
//
// EntryListByContact has no index of its own: g4 is one waitlist's
// (entc#BID#QUEUE#CONTACT), and an entry with an email is keyed there by
// the email, not its phone number. So it reads the business's partitions
// of g3 (entb#STATE#BID), every state, whole, keeping the person's
// entries: the cost is the business's entries (as EntryActiveListByContact
// pays its active ones), paid by an export, an erasure or a retention
// sweep, none of them on the path of a customer or an offer.
// OfferListByContact is g3 of offers (offto#BID#CONTACTKEY), the
// person's partition: their offers only.
//
// PersonErase reads and puts every row it rewrites: one action each (a
// guest, an audit row: one put), plus an entry's counts in the rank tree,
// which an ended entry does not hold. An erasure larger than a
// transaction takes (MaxTxActions) fails at commit with ErrTooLarge; the
// use case (waitlist/people) splits a person's rows into erasures that
// fit, dependent rows before the entries they are found through, so that
// a split erasure interrupted halfway is finished by the next.

// EntryListByContact lists a person's entries in a business, any state,
// by JoinedAt, then ID.
func (t *Tx) EntryListByContact(ctx context.Context, businessID string, c nextup.Contact) ([]nextup.Entry, error) {
	if c.Empty() {
		return nil, nil
	}
	var out []nextup.Entry
	for _, s := range entryStates {
		its, err := t.query(ctx, query{
			index: "gsi3", part: entBizPart(s, businessID),
			keep: func(it item) bool {
				var e nextup.Entry
				return decode(it, &e) == nil && e.BusinessID == businessID && e.State == s && c.Matches(e)
			},
		})
		if err != nil {
			return nil, err
		}
		es, err := loadAll[nextup.Entry](its)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	slices.SortFunc(out, func(a, b nextup.Entry) int {
		return cmp.Or(a.JoinedAt.Compare(b.JoinedAt), cmp.Compare(a.ID, b.ID))
	})
	return slices.Clip(out), nil
}

// OfferListByContact lists the offers made under a contact key in a
// business, oldest first.
func (t *Tx) OfferListByContact(ctx context.Context, businessID, contactKey string) ([]nextup.Offer, error) {
	its, err := t.query(ctx, query{
		index: "gsi3", part: "offto#" + businessID + "#" + contactKey,
		keep: func(it item) bool {
			var o nextup.Offer
			return decode(it, &o) == nil && o.BusinessID == businessID && o.ContactKey == contactKey
		},
	})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Offer](its)
}

// PersonErase rewrites a person's rows in the transaction: a read and a
// put each.
func (t *Tx) PersonErase(ctx context.Context, e nextup.Erasure) error {
	bid := e.BusinessID
	mine := func(what, biz string) error {
		if biz != bid {
			return notFound(what + ": of another business")
		}
		return nil
	}
	erasedKey := nextup.Entry{}.ContactKey()
	for _, id := range e.Entries {
		what := "erase entry " + id
		en, err := load[nextup.Entry](ctx, t, entPK(id), what)
		if err != nil {
			return err
		}
		if err := mine(what, en.BusinessID); err != nil {
			return err
		}
		if en.Active() {
			return conflict(fmt.Sprintf("%s: still %s", what, en.State))
		}
		en.Name, en.Email, en.Phone, en.Channel, en.StatusHash = e.Pseudonym, "", "", "", ""
		if err := t.putEntry(ctx, en); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	for _, id := range e.Offers {
		what := "erase offer " + id
		o, old, err := loadItem[nextup.Offer](ctx, t, offerPK(id), what)
		if err != nil {
			return err
		}
		if err := mine(what, o.BusinessID); err != nil {
			return err
		}
		if o.State.Live() {
			return conflict(fmt.Sprintf("%s: still %s", what, o.State))
		}
		before := o
		o.ContactKey = erasedKey
		if err := t.updateOffer(ctx, before, old, o, what); err != nil {
			return err
		}
	}
	for _, id := range e.Bookings {
		what := "erase booking " + id
		b, old, err := loadItem[nextup.Booking](ctx, t, bookingPK(id), what)
		if err != nil {
			return err
		}
		if err := mine(what, b.BusinessID); err != nil {
			return err
		}
		b.Name = e.Pseudonym
		if err := t.putBooking(b, old); err != nil {
			return err
		}
	}
	for _, g := range e.Guests {
		what := fmt.Sprintf("erase guest %d of entry %s", g.Index, g.EntryID)
		pk := guestPK(g.EntryID, g.Index)
		cur, err := load[nextup.Guest](ctx, t, pk, what)
		if err != nil {
			return err
		}
		if err := mine(what, cur.BusinessID); err != nil {
			return err
		}
		cur.Name = g.Name
		it, err := guestItem(cur)
		if err != nil {
			return err
		}
		if err := t.put(pk, it); err != nil {
			return err
		}
	}
	for _, id := range e.Messages {
		what := "erase message " + id
		m, old, err := t.loadMsg(ctx, id, what)
		if err != nil {
			return err
		}
		if err := mine(what, m.BusinessID); err != nil {
			return err
		}
		m.To, m.Subject, m.Body, m.HTML, m.Calendar = e.Pseudonym, "", "", "", ""
		m.ClaimURL, m.UnsubscribeURL, m.LastError = "", "", ""
		if m.State == nextup.MessageQueued || m.State == nextup.MessageFailed {
			m.State = nextup.MessageCancelled
		}
		if err := t.putMsg(old, m); err != nil {
			return err
		}
	}
	for _, a := range e.Audit {
		what := fmt.Sprintf("erase audit event %d", a.ID)
		pk := auditPK(seqKey(a.ID))
		ev, err := load[nextup.AuditEvent](ctx, t, pk, what)
		if err != nil {
			return err
		}
		if err := mine(what, ev.BusinessID); err != nil {
			return err
		}
		ev.Detail = a.Detail
		it, err := auditItem(ev)
		if err != nil {
			return err
		}
		if err := t.put(pk, it); err != nil {
			return err
		}
	}
	for _, p := range e.Proposals {
		what := "erase proposal " + p.ID
		cur, err := load[nextup.Proposal](ctx, t, propPK(p.ID), what)
		if err != nil {
			return err
		}
		if err := mine(what, cur.BusinessID); err != nil {
			return err
		}
		cur.Fields, cur.Excerpt = p.Fields, p.Excerpt
		if err := t.putProposal(cur); err != nil {
			return err
		}
	}
	for _, h := range e.HandBacks {
		what := "erase hand-back " + h.ID
		cur, old, err := loadItem[nextup.HandBack](ctx, t, handBackPK(h.ID), what)
		if err != nil {
			return err
		}
		if err := mine(what, cur.BusinessID); err != nil {
			return err
		}
		cur.Note = h.Note
		if err := t.putHandBack(cur, old); err != nil {
			return err
		}
	}
	return nil
}
