package dynamo

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
)

var _ = time.Time{}

func (t *Tx) OfferCreate(ctx context.Context, o nextup.Offer) error {
	return todo("OfferCreate")
}

func (t *Tx) OfferGet(ctx context.Context, id string) (nextup.Offer, error) {
	return nextup.Offer{}, todo("OfferGet")
}

func (t *Tx) OfferByTokenHash(ctx context.Context, hash string) (nextup.Offer, error) {
	return nextup.Offer{}, todo("OfferByTokenHash")
}

func (t *Tx) OfferSetState(ctx context.Context, id string, from []nextup.OfferState, to nextup.OfferState, at time.Time, reason string) (nextup.Offer, error) {
	return nextup.Offer{}, todo("OfferSetState")
}

func (t *Tx) OfferSend(ctx context.Context, id string, sentAt, expiresAt time.Time, tokenHash string) (nextup.Offer, error) {
	return nextup.Offer{}, todo("OfferSend")
}

func (t *Tx) OfferClaim(ctx context.Context, tokenHash string, now time.Time) (nextup.Offer, error) {
	return nextup.Offer{}, todo("OfferClaim")
}

func (t *Tx) OfferSeen(ctx context.Context, id string, at time.Time) error {
	return todo("OfferSeen")
}

func (t *Tx) OfferListBySlot(ctx context.Context, slotID string) ([]nextup.Offer, error) {
	return nil, todo("OfferListBySlot")
}

func (t *Tx) OfferLiveByEntry(ctx context.Context, entryID string) (nextup.Offer, error) {
	return nextup.Offer{}, todo("OfferLiveByEntry")
}

func (t *Tx) OfferCountSince(ctx context.Context, businessID, contactKey string, since time.Time) (int, error) {
	return 0, todo("OfferCountSince")
}

func (t *Tx) BookingCreate(ctx context.Context, b nextup.Booking) error {
	return todo("BookingCreate")
}

func (t *Tx) BookingGet(ctx context.Context, id string) (nextup.Booking, error) {
	return nextup.Booking{}, todo("BookingGet")
}

func (t *Tx) BookingByOffer(ctx context.Context, offerID string) (nextup.Booking, error) {
	return nextup.Booking{}, todo("BookingByOffer")
}

func (t *Tx) BookingSetState(ctx context.Context, id string, from, to nextup.BookingState, at time.Time) (nextup.Booking, error) {
	return nextup.Booking{}, todo("BookingSetState")
}

func (t *Tx) BookingListBySlot(ctx context.Context, slotID string) ([]nextup.Booking, error) {
	return nil, todo("BookingListBySlot")
}

func (t *Tx) BookingCheckIn(ctx context.Context, id string, at *time.Time) (nextup.Booking, error) {
	return nextup.Booking{}, todo("BookingCheckIn")
}

func (t *Tx) PaymentCreate(ctx context.Context, p nextup.Payment) error {
	return todo("PaymentCreate")
}

func (t *Tx) PaymentBySession(ctx context.Context, sessionID string) (nextup.Payment, error) {
	return nextup.Payment{}, todo("PaymentBySession")
}

func (t *Tx) PaymentListByOffer(ctx context.Context, offerID string) ([]nextup.Payment, error) {
	return nil, todo("PaymentListByOffer")
}

func (t *Tx) PaymentSetState(ctx context.Context, id string, c nextup.PaymentChange) (nextup.Payment, error) {
	return nextup.Payment{}, todo("PaymentSetState")
}

func (t *Tx) HandBackCreate(ctx context.Context, h nextup.HandBack) error {
	return todo("HandBackCreate")
}

func (t *Tx) HandBackGet(ctx context.Context, id string) (nextup.HandBack, error) {
	return nextup.HandBack{}, todo("HandBackGet")
}

func (t *Tx) HandBackList(ctx context.Context, businessID string, state nextup.HandBackState) ([]nextup.HandBack, error) {
	return nil, todo("HandBackList")
}

func (t *Tx) HandBackResolve(ctx context.Context, id, slotID string, at time.Time) error {
	return todo("HandBackResolve")
}
