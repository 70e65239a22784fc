package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func paymentID(p nextup.Payment) string { return p.ID }

// paidEvent creates a paid event with a claimed offer to one person and
// returns both.
func (b *bundle) paidEvent(businessID string) (nextup.Slot, nextup.Offer) {
	b.t.Helper()
	s := b.slot(businessID, event(&nextup.EventSettings{ClaimWindow: time.Hour, PriceCents: 1500, Currency: "gbp"}))
	o, _ := b.offer(s, b.entry(businessID, func(e *nextup.Entry) { e.Service, e.EventID = "", s.ID }))
	return s, o
}

// payment creates an open checkout of offer o, made now, and returns it.
func (b *bundle) payment(o nextup.Offer, mods ...func(*nextup.Payment)) nextup.Payment {
	b.t.Helper()
	id := b.id("pay")
	p := nextup.Payment{
		ID: id, BusinessID: o.BusinessID, SlotID: o.SlotID, OfferID: o.ID, EntryID: o.EntryID,
		Provider: "stripe", SessionID: "cs_test_" + id, URL: "https://checkout.example/c/pay/cs_test_" + id + "#fid=a%2Fb",
		AmountCents: 1500, Currency: "gbp", State: nextup.PaymentOpen,
		ExpiresAt: b.at(30*time.Minute + time.Microsecond), CreatedAt: b.now, UpdatedAt: b.now,
	}
	for _, m := range mods {
		m(&p)
	}
	b.tx(func(tx nextup.Tx) error { return tx.PaymentCreate(b.ctx, p) })
	return p
}

// Payments read back whole by session and by offer, newest first; two
// offers' payments do not mix.
func testPaymentRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	_, o1 := b.paidEvent(biz.ID)
	s2, o2 := b.paidEvent(biz.ID)
	_, none := b.paidEvent(biz.ID)
	// Made out of order: the list is by CreatedAt, then the later made.
	mid := b.payment(o1, func(p *nextup.Payment) { p.CreatedAt, p.UpdatedAt = b.at(-time.Hour), b.at(-time.Hour) })
	old := b.payment(o1, func(p *nextup.Payment) {
		p.CreatedAt, p.ExpiresAt, p.UpdatedAt = b.at(-2*time.Hour), b.at(-90*time.Minute), b.at(-90*time.Minute)
		p.State = nextup.PaymentExpired
	})
	sameInstant := b.payment(o1, func(p *nextup.Payment) { p.CreatedAt, p.UpdatedAt = b.at(-time.Hour), b.at(-time.Hour) })
	newest := b.payment(o1, func(p *nextup.Payment) {
		p.State, p.PaymentIntent, p.RefundID = nextup.PaymentRefunded, "pi_3Abc", "re_3Xyz"
		p.AmountCents, p.Currency = 0, "eur"
		p.UpdatedAt = b.at(time.Minute)
	})
	other := b.payment(o2, func(p *nextup.Payment) { p.SlotID, p.Provider = s2.ID, "stripe-connect" })
	all := []nextup.Payment{mid, old, sameInstant, newest, other}

	b.read(func(tx nextup.Tx) error {
		for _, want := range all {
			got, err := tx.PaymentBySession(b.ctx, want.SessionID)
			if wantOK(t, err, "PaymentBySession(%s)", want.SessionID) {
				checkEqual(t, "PaymentBySession "+want.SessionID, want, got)
			}
		}
		_, err := tx.PaymentBySession(b.ctx, "cs_missing")
		wantErr(t, err, nextup.ErrNotFound, "PaymentBySession(missing)")
		_, err = tx.PaymentBySession(b.ctx, "")
		wantErr(t, err, nextup.ErrNotFound, "PaymentBySession(empty)")
		for _, c := range []struct {
			offer string
			want  []nextup.Payment
		}{
			{o1.ID, []nextup.Payment{newest, sameInstant, mid, old}},
			{o2.ID, []nextup.Payment{other}},
			{none.ID, nil},
			{"off_missing", nil},
		} {
			got, err := tx.PaymentListByOffer(b.ctx, c.offer)
			if wantOK(t, err, "PaymentListByOffer(%s)", c.offer) {
				if g, w := ids(got, paymentID), ids(c.want, paymentID); !sameStrings(g, w) {
					t.Errorf("PaymentListByOffer(%s) = %v, want %v (newest first)", c.offer, g, w)
				} else {
					checkEqual(t, "PaymentListByOffer "+c.offer, c.want, got)
				}
			}
		}
		return nil
	})

	// A payment of a missing offer is refused.
	b.tx(func(tx nextup.Tx) error {
		orphan := mid
		orphan.ID, orphan.SessionID, orphan.OfferID = "pay_orphan", "cs_orphan", "off_missing"
		wantErr(t, tx.PaymentCreate(b.ctx, orphan), nextup.ErrNotFound, "PaymentCreate for a missing offer")
		return nil
	})
}

// PaymentSetState is conditional on the state; it records a payment
// intent or refund when the change names one and keeps the earlier ones
// otherwise; a refused change leaves the payment as it was.
func testPaymentSetState(t *testing.T, b *bundle) {
	biz := b.business()
	_, o := b.paidEvent(biz.ID)
	p := b.payment(o)
	q := b.payment(o)
	steps := []struct {
		p    *nextup.Payment
		c    nextup.PaymentChange
		err  error
		want func(*nextup.Payment)
	}{
		{&p, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen}, To: nextup.PaymentPaid, PaymentIntent: "pi_1"}, nil,
			func(p *nextup.Payment) { p.State, p.PaymentIntent = nextup.PaymentPaid, "pi_1" }},
		{&p, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen}, To: nextup.PaymentPaid, PaymentIntent: "pi_2"}, nextup.ErrConflict, nil},
		{&p, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentPaid}, To: nextup.PaymentRefunded, RefundID: "re_1"}, nil,
			func(p *nextup.Payment) { p.State, p.RefundID = nextup.PaymentRefunded, "re_1" }},
		{&p, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen, nextup.PaymentPaid}, To: nextup.PaymentExpired}, nextup.ErrConflict, nil},
		{&p, nextup.PaymentChange{To: nextup.PaymentExpired}, nextup.ErrConflict, nil}, // in none of no states
		{&q, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentPaid, nextup.PaymentOpen}, To: nextup.PaymentExpired}, nil,
			func(p *nextup.Payment) { p.State = nextup.PaymentExpired }},
		{&q, nextup.PaymentChange{From: []nextup.PaymentState{nextup.PaymentOpen}, To: nextup.PaymentPaid, PaymentIntent: "pi_late"}, nextup.ErrConflict, nil},
	}
	for i, st := range steps {
		at := b.at(time.Duration(i+1)*time.Minute + time.Microsecond)
		st.c.At = at
		name := fmt.Sprintf("step %d: PaymentSetState(%s, %v -> %s) of a payment %s", i, st.p.ID, st.c.From, st.c.To, st.p.State)
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.PaymentSetState(b.ctx, st.p.ID, st.c)
			if st.err != nil {
				wantErr(t, err, st.err, "%s", name)
				return nil
			}
			st.want(st.p)
			st.p.UpdatedAt = at
			if wantOK(t, err, "%s", name) {
				checkEqual(t, name+": returned payment", *st.p, got)
			}
			return nil
		})
		b.read(func(tx nextup.Tx) error {
			for _, want := range []nextup.Payment{p, q} {
				got, err := tx.PaymentBySession(b.ctx, want.SessionID)
				if wantOK(t, err, "PaymentBySession(%s)", want.SessionID) {
					checkEqual(t, fmt.Sprintf("payment %s after step %d", want.ID, i), want, got)
				}
			}
			return nil
		})
	}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.PaymentSetState(b.ctx, "pay_missing", nextup.PaymentChange{
			From: []nextup.PaymentState{nextup.PaymentOpen}, To: nextup.PaymentPaid, PaymentIntent: "pi_x", At: b.now})
		wantErr(t, err, nextup.ErrNotFound, "PaymentSetState(missing)")
		return nil
	})
}

// One provider's checkout session is one payment: a second with the same
// session (or the same id) is ErrConflict, and the transaction goes on.
func testPaymentDuplicateSession(t *testing.T, b *bundle) {
	biz := b.business()
	_, o := b.paidEvent(biz.ID)
	_, o2 := b.paidEvent(biz.ID)
	p := b.payment(o)
	b.tx(func(tx nextup.Tx) error {
		dup := p
		dup.ID = "pay_dup"
		wantErr(t, tx.PaymentCreate(b.ctx, dup), nextup.ErrConflict, "PaymentCreate of the same provider and session")
		dup.OfferID, dup.EntryID = o2.ID, o2.EntryID
		wantErr(t, tx.PaymentCreate(b.ctx, dup), nextup.ErrConflict, "PaymentCreate of the same session for another offer")
		again := p
		again.SessionID = "cs_other"
		wantErr(t, tx.PaymentCreate(b.ctx, again), nextup.ErrConflict, "PaymentCreate of the same id")
		fresh := p
		fresh.ID, fresh.SessionID = "pay_fresh", "cs_fresh"
		wantOK(t, tx.PaymentCreate(b.ctx, fresh), "PaymentCreate of a new session after the refused ones, in the same transaction")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.PaymentBySession(b.ctx, p.SessionID)
		if wantOK(t, err, "PaymentBySession") {
			checkEqual(t, "the first payment of the session", p, got)
		}
		list, err := tx.PaymentListByOffer(b.ctx, o2.ID)
		if wantOK(t, err, "PaymentListByOffer(other offer)") && len(list) != 0 {
			t.Errorf("PaymentListByOffer(other offer) = %v, want none", ids(list, paymentID))
		}
		list, err = tx.PaymentListByOffer(b.ctx, o.ID)
		if wantOK(t, err, "PaymentListByOffer") && !sameStrings(sortedIDs(list, paymentID), []string{p.ID, "pay_fresh"}) {
			t.Errorf("PaymentListByOffer = %v, want %s and pay_fresh", ids(list, paymentID), p.ID)
		}
		return nil
	})
}
