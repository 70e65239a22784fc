package dynamo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// Offers, bookings, payments and hand-backs. "order" below is
// ts(CreatedAt)#rid(): the creation time, then the insertion order (the SQL
// stores' created_at, rowid), fixed when the item is created and kept by
// every update.
//
// An offer is the item off#ID:
//   - g1 offtok#TOKENHASH → off#ID while it has a token: OfferByTokenHash and
//     OfferClaim (a query of one item, then its read from the base table).
//     Token hashes are hashes of random tokens: no marker enforces their
//     uniqueness.
//   - g2 offslot#SLOTID → order: OfferListBySlot (the slot's partition).
//   - g3 offto#BID#CONTACTKEY → order: OfferCountSince (a COUNT query of
//     the range since t: keys only, no item read).
//   - marker offlive#ENTRYID → offer id while the offer is live (pending or
//     offered): an entry holds at most one live offer (the SQL stores'
//     unique index offers_live_entry); OfferLiveByEntry is two GetItems.
//
// OfferCreate reads the slot and the entry it refers to (and the business
// when it is not the slot's) and the live marker; the offer itself is a
// blind create (the engine's ids are fresh: an id that exists fails the
// commit, not with ErrConflict at once; bookings and hand-backs are made
// the same way). Every change of an offer is
// one GetItem of it (plus the marker's when it starts or stops being live),
// and the commit checks the version read: of the transactions that race
// to end an offer, the first to commit wins and the others run again.
//
// A booking is the item bkg#ID:
//   - g2 bkgslot#SLOTID → order: BookingListBySlot (the slot's partition).
//   - marker bkgoff#OFFERID → booking id: one booking per claimed offer
//     (bookings_offer); BookingByOffer is two GetItems.
//
// A payment is the item pay#ID:
//   - g1 paysid#SESSIONID → pay#ID: PaymentBySession (a query of one item,
//     then its read).
//   - g2 payoff#OFFERID → order: PaymentListByOffer, newest first (the
//     offer's partition, backwards).
//   - marker paysess#PROVIDER#SESSIONID → payment id: one payment per
//     provider's checkout session (payments_session).
//
// PaymentCreate reads its id (a duplicate id is ErrConflict at once), its
// offer (and its slot and business when they are not the offer's) and the
// session marker.
//
// A hand-back is the item hb#ID:
//   - g2 hbbiz#BID#STATE → order: HandBackList of one state (its partition;
//     all states: one query per state, merged).
//   - g3 hbopen#SLOTID → order while open: HandBackResolve of a slot's open
//     hand-backs (the partition of what it resolves).

func offerPK(id string) string { return "off#" + id }

func offerLivePK(entryID string) string { return "offlive#" + entryID }

func bookingPK(id string) string { return "bkg#" + id }

func bookingOfferPK(offerID string) string { return "bkgoff#" + offerID }

func paymentPK(id string) string { return "pay#" + id }

func paymentSessionPK(provider, sessionID string) string {
	return "paysess#" + provider + "#" + sessionID
}

func handBackPK(id string) string { return "hb#" + id }

// order is the sort key of a record listed in creation order: the one of
// the item it replaces (old), or for a new record its creation time then
// its insertion order.
func order(old item, created time.Time) string {
	if sk := str(old, "gsi2sk"); sk != "" {
		return sk
	}
	return ts(created) + "#" + rid()
}

// loadItem is load that also returns the item (whose index keys an update
// keeps).
func loadItem[T any](ctx context.Context, t *Tx, pk, what string) (T, item, error) {
	var rec T
	it, err := t.get(ctx, pk)
	if err != nil {
		return rec, nil, err
	}
	if it == nil {
		return rec, nil, notFound(what)
	}
	return rec, it, decode(it, &rec)
}

// refSlot checks that the slot and business a new record refers to exist
// (the SQL stores' foreign keys): ErrNotFound otherwise. A slot's business
// exists; another business is read.
func (t *Tx) refSlot(ctx context.Context, businessID, slotID, what string) error {
	s, err := load[nextup.Slot](ctx, t, slotPK(slotID), what+": slot "+slotID)
	if err != nil || s.BusinessID == businessID {
		return err
	}
	if ok, err := t.exists(ctx, bizPK(businessID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": business "+businessID))
	}
	return nil
}

// ---------------------------------------------------------------- offers

func offerItem(o nextup.Offer, sk string) (item, error) {
	var token string
	if o.TokenHash != "" {
		token = "offtok#" + o.TokenHash
	}
	return newItem(o, "gsi1pk", token, "gsi1sk", offerPK(o.ID),
		"gsi2pk", "offslot#"+o.SlotID, "gsi2sk", sk,
		"gsi3pk", "offto#"+o.BusinessID+"#"+o.ContactKey, "gsi3sk", sk)
}

// updateOffer writes o over the offer it was (before, the item old),
// setting or dropping the entry's live-offer marker when o starts or stops
// being live.
func (t *Tx) updateOffer(ctx context.Context, before nextup.Offer, old item, o nextup.Offer, what string) error {
	switch {
	case o.State.Live() && !before.State.Live():
		if err := t.markerSet(ctx, offerLivePK(o.EntryID), o.ID, what+": entry "+o.EntryID+" has a live offer"); err != nil {
			return err
		}
	case !o.State.Live() && before.State.Live():
		if err := t.markerDrop(ctx, offerLivePK(o.EntryID), o.ID); err != nil {
			return err
		}
	}
	it, err := offerItem(o, order(old, o.CreatedAt))
	if err != nil {
		return err
	}
	return t.put(offerPK(o.ID), it)
}

// OfferCreate stores an offer; a missing slot, entry or business is
// ErrNotFound, a live offer for an entry that has one ErrConflict.
func (t *Tx) OfferCreate(ctx context.Context, o nextup.Offer) error {
	what := "create offer " + o.ID
	if err := t.refSlot(ctx, o.BusinessID, o.SlotID, what); err != nil {
		return err
	}
	if _, err := t.EntryGet(ctx, o.EntryID); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if o.State.Live() {
		if err := t.markerSet(ctx, offerLivePK(o.EntryID), o.ID, what+": entry "+o.EntryID+" has a live offer"); err != nil {
			return err
		}
	}
	it, err := offerItem(o, order(nil, o.CreatedAt))
	if err != nil {
		return err
	}
	return t.create(offerPK(o.ID), it)
}

// OfferGet reads an offer.
func (t *Tx) OfferGet(ctx context.Context, id string) (nextup.Offer, error) {
	return load[nextup.Offer](ctx, t, offerPK(id), "get offer "+id)
}

// offerByToken reads the offer whose claim token has this hash, with its
// item.
func (t *Tx) offerByToken(ctx context.Context, hash, what string) (nextup.Offer, item, error) {
	if hash == "" {
		return nextup.Offer{}, nil, notFound(what)
	}
	its, err := t.query(ctx, query{index: "gsi1", part: "offtok#" + hash, limit: 1})
	if err != nil {
		return nextup.Offer{}, nil, err
	}
	if len(its) == 0 {
		return nextup.Offer{}, nil, notFound(what)
	}
	o, it, err := loadItem[nextup.Offer](ctx, t, str(its[0], attrPK), what)
	if err == nil && o.TokenHash != hash {
		return nextup.Offer{}, nil, notFound(what)
	}
	return o, it, err
}

// OfferByTokenHash reads the offer whose claim token has this hash.
func (t *Tx) OfferByTokenHash(ctx context.Context, hash string) (nextup.Offer, error) {
	o, _, err := t.offerByToken(ctx, hash, "offer by token")
	return o, err
}

// OfferSetState moves an offer from one of from to to, stamping ResolvedAt
// (and the reason) when it ends and SentAt when it goes out; ErrConflict
// when it is in none of from.
func (t *Tx) OfferSetState(ctx context.Context, id string, from []nextup.OfferState, to nextup.OfferState, at time.Time, reason string) (nextup.Offer, error) {
	what := fmt.Sprintf("offer %s %v -> %s", id, from, to)
	o, old, err := loadItem[nextup.Offer](ctx, t, offerPK(id), what)
	if err != nil {
		return nextup.Offer{}, err
	}
	if !slices.Contains(from, o.State) {
		return nextup.Offer{}, conflict(fmt.Sprintf("%s: offer is %s", what, o.State))
	}
	before := o
	o.State = to
	if !to.Live() {
		o.ResolvedAt, o.Reason = &at, reason
	} else if reason != "" {
		o.Reason = reason
	}
	if to == nextup.OfferOffered {
		o.SentAt = &at
	}
	return o, t.updateOffer(ctx, before, old, o, what)
}

// OfferSend moves a pending offer to offered with its send time, deadline
// and token hash; ErrConflict when it is no longer pending.
func (t *Tx) OfferSend(ctx context.Context, id string, sentAt, expiresAt time.Time, tokenHash string) (nextup.Offer, error) {
	what := "send offer " + id
	o, old, err := loadItem[nextup.Offer](ctx, t, offerPK(id), what)
	if err != nil {
		return nextup.Offer{}, err
	}
	if o.State != nextup.OfferPending {
		return nextup.Offer{}, conflict(fmt.Sprintf("%s: offer is %s", what, o.State))
	}
	before := o
	o.State, o.SentAt, o.ExpiresAt, o.TokenHash = nextup.OfferOffered, &sentAt, expiresAt, tokenHash
	return o, t.updateOffer(ctx, before, old, o, what)
}

// OfferHanded restarts an offered offer's claim window from the moment
// its message reached the provider: only while it is offered and its
// deadline is after sentAt and before expiresAt (ErrConflict otherwise).
func (t *Tx) OfferHanded(ctx context.Context, id string, sentAt, expiresAt time.Time) (nextup.Offer, error) {
	what := "restart the window of offer " + id
	o, old, err := loadItem[nextup.Offer](ctx, t, offerPK(id), what)
	if err != nil {
		return nextup.Offer{}, err
	}
	if o.State != nextup.OfferOffered || !o.ExpiresAt.After(sentAt) || !o.ExpiresAt.Before(expiresAt) {
		return nextup.Offer{}, conflict(fmt.Sprintf("%s: offer is %s until %s", what, o.State, o.ExpiresAt))
	}
	before := o
	o.SentAt, o.ExpiresAt = &sentAt, expiresAt
	return o, t.updateOffer(ctx, before, old, o, what)
}

// OfferClaim claims the offer with this token hash while it is offered and
// now is before its deadline, stamping ResolvedAt; ErrConflict otherwise.
// The offer is written, so the commit checks the version read: of
// concurrent claims (or a claim and an expiry) exactly one commits, the
// others run again and find it claimed.
func (t *Tx) OfferClaim(ctx context.Context, tokenHash string, now time.Time) (nextup.Offer, error) {
	const what = "claim offer"
	o, old, err := t.offerByToken(ctx, tokenHash, what)
	if err != nil {
		return nextup.Offer{}, err
	}
	if o.State != nextup.OfferOffered || !now.Before(o.ExpiresAt) {
		return nextup.Offer{}, conflict(fmt.Sprintf("%s %s (%s)", what, o.ID, o.State))
	}
	before := o
	o.State, o.ResolvedAt = nextup.OfferClaimed, &now
	return o, t.updateOffer(ctx, before, old, o, what+" "+o.ID)
}

// OfferSeen stamps the first time the claim page was opened.
func (t *Tx) OfferSeen(ctx context.Context, id string, at time.Time) error {
	what := "offer " + id + " seen"
	o, old, err := loadItem[nextup.Offer](ctx, t, offerPK(id), what)
	if err != nil || o.SeenAt != nil {
		return err
	}
	before := o
	o.SeenAt = &at
	return t.updateOffer(ctx, before, old, o, what)
}

// OfferListBySlot lists a slot's offers oldest first.
func (t *Tx) OfferListBySlot(ctx context.Context, slotID string) ([]nextup.Offer, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "offslot#" + slotID})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Offer](its)
}

// OfferLiveByEntry reads an entry's pending or offered offer.
func (t *Tx) OfferLiveByEntry(ctx context.Context, entryID string) (nextup.Offer, error) {
	what := "live offer of entry " + entryID
	id, err := t.markerGet(ctx, offerLivePK(entryID))
	if err != nil {
		return nextup.Offer{}, err
	}
	if id == "" {
		return nextup.Offer{}, notFound(what)
	}
	o, err := load[nextup.Offer](ctx, t, offerPK(id), what)
	if err != nil {
		return nextup.Offer{}, err
	}
	if !o.State.Live() || o.EntryID != entryID {
		return nextup.Offer{}, notFound(what)
	}
	return o, nil
}

// OfferCountSince counts a contact's offers of one business created since
// a time.
func (t *Tx) OfferCountSince(ctx context.Context, businessID, contactKey string, since time.Time) (int, error) {
	return t.count(ctx, query{index: "gsi3", part: "offto#" + businessID + "#" + contactKey, from: ts(since)})
}

// -------------------------------------------------------------- bookings

// bookingItem is a booking's item, sk its creation-order key.
func bookingItem(b nextup.Booking, sk string) (item, error) {
	return newItem(b, "gsi2pk", "bkgslot#"+b.SlotID, "gsi2sk", sk)
}

func (t *Tx) putBooking(b nextup.Booking, old item) error {
	it, err := bookingItem(b, order(old, b.CreatedAt))
	if err != nil {
		return err
	}
	if old == nil {
		return t.create(bookingPK(b.ID), it)
	}
	return t.put(bookingPK(b.ID), it)
}

// BookingCreate stores a booking, booked unless b says otherwise; a
// missing slot or business is ErrNotFound, a second booking of one offer
// ErrConflict.
func (t *Tx) BookingCreate(ctx context.Context, b nextup.Booking) error {
	what := "create booking " + b.ID
	if b.State == "" {
		b.State = nextup.BookingBooked
	}
	if err := t.refSlot(ctx, b.BusinessID, b.SlotID, what); err != nil {
		return err
	}
	if b.OfferID != "" {
		if err := t.markerSet(ctx, bookingOfferPK(b.OfferID), b.ID, what+": offer "+b.OfferID+" has a booking"); err != nil {
			return err
		}
	}
	return t.putBooking(b, nil)
}

// BookingGet reads a booking.
func (t *Tx) BookingGet(ctx context.Context, id string) (nextup.Booking, error) {
	return load[nextup.Booking](ctx, t, bookingPK(id), "get booking "+id)
}

// BookingByOffer reads the booking an offer's claim made.
func (t *Tx) BookingByOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	what := "booking by offer " + offerID
	if offerID == "" {
		return nextup.Booking{}, notFound(what)
	}
	return byMarker[nextup.Booking](ctx, t, bookingOfferPK(offerID), bookingPK, what)
}

// BookingSetState moves a booking from from to to, stamping EndedAt unless
// it is booked again; ErrConflict when it is not in from.
func (t *Tx) BookingSetState(ctx context.Context, id string, from, to nextup.BookingState, at time.Time) (nextup.Booking, error) {
	what := fmt.Sprintf("booking %s %s -> %s", id, from, to)
	b, old, err := loadItem[nextup.Booking](ctx, t, bookingPK(id), what)
	if err != nil {
		return nextup.Booking{}, err
	}
	if b.State != from {
		return nextup.Booking{}, conflict(fmt.Sprintf("%s: booking is %s", what, b.State))
	}
	b.State = to
	if to != nextup.BookingBooked {
		b.EndedAt = &at
	}
	return b, t.putBooking(b, old)
}

// BookingListBySlot lists a slot's bookings oldest first.
func (t *Tx) BookingListBySlot(ctx context.Context, slotID string) ([]nextup.Booking, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "bkgslot#" + slotID})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Booking](its)
}

// BookingCheckIn sets or clears the check-in of a booked booking;
// ErrConflict when it is not booked.
func (t *Tx) BookingCheckIn(ctx context.Context, id string, at *time.Time) (nextup.Booking, error) {
	what := "check in booking " + id
	b, old, err := loadItem[nextup.Booking](ctx, t, bookingPK(id), what)
	if err != nil {
		return nextup.Booking{}, err
	}
	if b.State != nextup.BookingBooked {
		return nextup.Booking{}, conflict(fmt.Sprintf("%s: booking is %s", what, b.State))
	}
	b.CheckedInAt = nil
	if at != nil {
		v := *at
		b.CheckedInAt = &v
	}
	return b, t.putBooking(b, old)
}

// -------------------------------------------------------------- payments

// paymentItem is a payment's item, sk its creation-order key.
func paymentItem(p nextup.Payment, sk string) (item, error) {
	var session string
	if p.SessionID != "" {
		session = "paysid#" + p.SessionID
	}
	return newItem(p, "gsi1pk", session, "gsi1sk", paymentPK(p.ID), "gsi2pk", "payoff#"+p.OfferID, "gsi2sk", sk)
}

func (t *Tx) putPayment(p nextup.Payment, old item) error {
	it, err := paymentItem(p, order(old, p.CreatedAt))
	if err != nil {
		return err
	}
	return t.put(paymentPK(p.ID), it)
}

// PaymentCreate stores a payment: an id or a provider's session that has
// one already is ErrConflict, a missing offer, slot or business
// ErrNotFound.
func (t *Tx) PaymentCreate(ctx context.Context, p nextup.Payment) error {
	what := "create payment " + p.ID
	if ok, err := t.exists(ctx, paymentPK(p.ID)); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	o, err := load[nextup.Offer](ctx, t, offerPK(p.OfferID), what+": offer "+p.OfferID)
	if err != nil {
		return err
	}
	if o.SlotID != p.SlotID || o.BusinessID != p.BusinessID {
		if err := t.refSlot(ctx, p.BusinessID, p.SlotID, what); err != nil {
			return err
		}
	}
	if err := t.markerSet(ctx, paymentSessionPK(p.Provider, p.SessionID), p.ID, what+": session "+p.SessionID+" has a payment"); err != nil {
		return err
	}
	return t.putPayment(p, nil)
}

// PaymentBySession reads a payment by its provider's session id.
func (t *Tx) PaymentBySession(ctx context.Context, sessionID string) (nextup.Payment, error) {
	return byIndex[nextup.Payment](ctx, t, "paysid#", sessionID, "payment by session "+sessionID)
}

// PaymentListByOffer lists an offer's payments newest first.
func (t *Tx) PaymentListByOffer(ctx context.Context, offerID string) ([]nextup.Payment, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "payoff#" + offerID, desc: true})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Payment](its)
}

// PaymentSetState moves a payment from one of c.From to c.To, recording
// the payment intent and refund c names and keeping the earlier ones
// otherwise; ErrConflict when it is in none of c.From.
func (t *Tx) PaymentSetState(ctx context.Context, id string, c nextup.PaymentChange) (nextup.Payment, error) {
	what := fmt.Sprintf("payment %s to %s", id, c.To)
	p, old, err := loadItem[nextup.Payment](ctx, t, paymentPK(id), what)
	if err != nil {
		return nextup.Payment{}, err
	}
	if !slices.Contains(c.From, p.State) {
		return nextup.Payment{}, conflict(fmt.Sprintf("%s: payment is %s", what, p.State))
	}
	p.State, p.UpdatedAt = c.To, c.At
	if c.PaymentIntent != "" {
		p.PaymentIntent = c.PaymentIntent
	}
	if c.RefundID != "" {
		p.RefundID = c.RefundID
	}
	return p, t.putPayment(p, old)
}

// ------------------------------------------------------------ hand-backs

// handBackItem is a hand-back's item, sk its creation-order key.
func handBackItem(h nextup.HandBack, sk string) (item, error) {
	var open string
	if h.State == nextup.HandBackOpen {
		open = "hbopen#" + h.SlotID
	}
	return newItem(h, "gsi2pk", "hbbiz#"+h.BusinessID+"#"+string(h.State), "gsi2sk", sk, "gsi3pk", open, "gsi3sk", sk)
}

func (t *Tx) putHandBack(h nextup.HandBack, old item) error {
	it, err := handBackItem(h, order(old, h.CreatedAt))
	if err != nil {
		return err
	}
	if old == nil {
		return t.create(handBackPK(h.ID), it)
	}
	return t.put(handBackPK(h.ID), it)
}

// HandBackCreate stores a hand-back, open unless h says otherwise; a
// missing slot or business is ErrNotFound.
func (t *Tx) HandBackCreate(ctx context.Context, h nextup.HandBack) error {
	if h.State == "" {
		h.State = nextup.HandBackOpen
	}
	if err := t.refSlot(ctx, h.BusinessID, h.SlotID, "create hand-back "+h.ID); err != nil {
		return err
	}
	return t.putHandBack(h, nil)
}

// HandBackGet reads a hand-back.
func (t *Tx) HandBackGet(ctx context.Context, id string) (nextup.HandBack, error) {
	return load[nextup.HandBack](ctx, t, handBackPK(id), "get hand-back "+id)
}

// HandBackList lists a business's hand-backs in one state ("" for all),
// oldest first.
func (t *Tx) HandBackList(ctx context.Context, businessID string, state nextup.HandBackState) ([]nextup.HandBack, error) {
	states := []nextup.HandBackState{state}
	if state == "" {
		states = []nextup.HandBackState{nextup.HandBackOpen, nextup.HandBackResolved}
	}
	var its []item
	for _, st := range states {
		got, err := t.query(ctx, query{index: "gsi2", part: "hbbiz#" + businessID + "#" + string(st)})
		if err != nil {
			return nil, err
		}
		its = append(its, got...)
	}
	if len(states) > 1 {
		slices.SortFunc(its, query{index: "gsi2"}.less)
	}
	return loadAll[nextup.HandBack](its)
}

// HandBackResolve resolves the open hand-back id (of slotID, when given),
// or else every open one of slotID; resolving what is resolved already is
// no error, naming a hand-back that does not exist ErrNotFound, naming
// neither ErrInvalid.
func (t *Tx) HandBackResolve(ctx context.Context, id, slotID string, at time.Time) error {
	what := fmt.Sprintf("resolve hand-back %q of slot %q", id, slotID)
	resolve := func(h nextup.HandBack, old item) error {
		h.State, h.ResolvedAt = nextup.HandBackResolved, &at
		return t.putHandBack(h, old)
	}
	switch {
	case id != "":
		h, old, err := loadItem[nextup.HandBack](ctx, t, handBackPK(id), what)
		if err != nil || h.State != nextup.HandBackOpen || (slotID != "" && h.SlotID != slotID) {
			return err
		}
		return resolve(h, old)
	case slotID != "":
		its, err := t.query(ctx, query{index: "gsi3", part: "hbopen#" + slotID})
		if err != nil {
			return err
		}
		for _, it := range its {
			var h nextup.HandBack
			if err := decode(it, &h); err != nil {
				return err
			}
			if err := resolve(h, it); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: want an id or a slot: %w", what, nextup.ErrInvalid)
}
