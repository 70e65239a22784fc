package waitlist

import (
	"context"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Notices: the messages that tell a person (or the owner) how things
// stand, beyond offers and bookings.

// Message kinds of the notices.
const (
	MessageExpired = "expired" // the hold lapsed; the person keeps their place
	MessageFilled  = "filled"  // the slot was just taken; the person keeps their place
)

// queueExpired tells the person whose hold lapsed that the slot went on
// and they keep their place, on the channel the offer went by, outside
// quiet hours.
func (w *work) queueExpired(ctx context.Context, bi *core.Biz, o nextup.Offer) error {
	e, err := w.Tx.EntryGet(ctx, o.EntryID)
	if err != nil {
		return err
	}
	sl, err := w.Tx.SlotGet(ctx, o.SlotID)
	if err != nil {
		return err
	}
	m := nextup.Message{BusinessID: bi.ID, Kind: MessageExpired, Channel: o.Channel, To: templates.AddressOf(e, o.Channel),
		OfferID: o.ID, EntryID: e.ID, NotBefore: w.NotBefore(bi)}
	if m.To == "" {
		return nil
	}
	w.s.Stoppable(bi.Business, &m)
	templates.Compose(bi.Business, templates.TemplateExpired, templates.SlotData(bi.Loc, sl, e, o.PartySize), &m)
	return w.Queue(ctx, m)
}
