package dynamo

import "github.com/nextup-dev/nextup"

// Stand-ins for offer.go's item builders, for ImportRecords, until
// offer.go has them: the same items (keys, index attributes, markers) as
// its OfferCreate, BookingCreate, PaymentCreate and HandBackCreate write,
// with the creation-order key ts(CreatedAt)#rid() in g2 (and g3). When
// offer.go lands, ImportRecords should call its builders and this file
// go.

func importOfferLivePK(entryID string) string { return "offlive#" + entryID }

func importBookingOfferPK(offerID string) string { return "bkgoff#" + offerID }

func importPaymentSessionPK(provider, sessionID string) string {
	return "paysess#" + provider + "#" + sessionID
}

// importOfferItem is an offer's item off#ID: g1 offtok#TOKENHASH (while
// it has a token), g2 offslot#SLOT and g3 offto#BID#CONTACTKEY by
// creation order; the live-offer marker offlive#ENTRY is the caller's.
func importOfferItem(o nextup.Offer) (string, item, error) {
	var token string
	if o.TokenHash != "" {
		token = "offtok#" + o.TokenHash
	}
	sk := ts(o.CreatedAt) + "#" + rid()
	it, err := newItem(o, "gsi1pk", token, "gsi1sk", "off#"+o.ID,
		"gsi2pk", "offslot#"+o.SlotID, "gsi2sk", sk,
		"gsi3pk", "offto#"+o.BusinessID+"#"+o.ContactKey, "gsi3sk", sk)
	return "off#" + o.ID, it, err
}

// importBookingItem is a booking's item bkg#ID: g2 bkgslot#SLOT by
// creation order; the marker bkgoff#OFFER is the caller's.
func importBookingItem(b nextup.Booking) (string, item, error) {
	it, err := newItem(b, "gsi2pk", "bkgslot#"+b.SlotID, "gsi2sk", ts(b.CreatedAt)+"#"+rid())
	return "bkg#" + b.ID, it, err
}

// importPaymentItem is a payment's item pay#ID: g1 paysid#SESSION (when it
// has one), g2 payoff#OFFER by creation order; the marker
// paysess#PROVIDER#SESSION is the caller's.
func importPaymentItem(p nextup.Payment) (string, item, error) {
	var session string
	if p.SessionID != "" {
		session = "paysid#" + p.SessionID
	}
	it, err := newItem(p, "gsi1pk", session, "gsi1sk", "pay#"+p.ID,
		"gsi2pk", "payoff#"+p.OfferID, "gsi2sk", ts(p.CreatedAt)+"#"+rid())
	return "pay#" + p.ID, it, err
}

// importHandBackItem is a hand-back's item hb#ID: g2 hbbiz#BID#STATE and,
// while open, g3 hbopen#SLOT, by creation order.
func importHandBackItem(h nextup.HandBack) (string, item, error) {
	sk := ts(h.CreatedAt) + "#" + rid()
	var open string
	if h.State == nextup.HandBackOpen {
		open = "hbopen#" + h.SlotID
	}
	it, err := newItem(h, "gsi2pk", "hbbiz#"+h.BusinessID+"#"+string(h.State), "gsi2sk", sk,
		"gsi3pk", open, "gsi3sk", sk)
	return "hb#" + h.ID, it, err
}
