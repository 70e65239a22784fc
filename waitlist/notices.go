package waitlist

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Notices: the messages that tell a person (or the owner) how things
// stand, beyond offers and bookings.

// Message kinds of the notices.
const (
	MessageExpired  = "expired"  // the hold lapsed; the person keeps their place
	MessageJoined   = "joined"   // on the list, with the status link
	MessageHandback = "handback" // to the owner: a slot is back with staff
	MessageFilled   = "filled"   // the slot was just taken; the person keeps their place
)

// notBefore is when a notice may go: now, or when quiet hours end.
func (w *work) notBefore(bi *bizInfo) time.Time {
	if in, end := engine.InQuietHours(w.now, bi.b.Rules.QuietHours, bi.loc); in {
		return end
	}
	return w.now
}

// queueJoined tells a person who just joined that they are on the list,
// with the link to their status page.
func (w *work) queueJoined(ctx context.Context, bi *bizInfo, e nextup.Entry, statusToken string) error {
	ch, ok := engine.ChooseChannel(e, nil)
	if !ok {
		return nil
	}
	what := e.Service
	if e.EventID != "" {
		ev, err := w.tx.SlotGet(ctx, e.EventID)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.EventID, err)
		}
		what = templates.SlotService(ev)
	}
	m := nextup.Message{BusinessID: bi.b.ID, Kind: MessageJoined, Channel: ch, To: templates.AddressOf(e, ch), EntryID: e.ID}
	w.s.stoppable(bi.b, &m)
	templates.Compose(bi.b, templates.TemplateJoined, templates.TemplateData{Name: e.Name, Service: what, StatusLink: w.s.StatusURL(statusToken)}, &m)
	return w.queue(ctx, m)
}

// queueExpired tells the person whose hold lapsed that the slot went on
// and they keep their place, on the channel the offer went by, outside
// quiet hours.
func (w *work) queueExpired(ctx context.Context, bi *bizInfo, o nextup.Offer) error {
	e, err := w.tx.EntryGet(ctx, o.EntryID)
	if err != nil {
		return err
	}
	sl, err := w.tx.SlotGet(ctx, o.SlotID)
	if err != nil {
		return err
	}
	m := nextup.Message{BusinessID: bi.b.ID, Kind: MessageExpired, Channel: o.Channel, To: templates.AddressOf(e, o.Channel),
		OfferID: o.ID, EntryID: e.ID, NotBefore: w.notBefore(bi)}
	if m.To == "" {
		return nil
	}
	w.s.stoppable(bi.b, &m)
	templates.Compose(bi.b, templates.TemplateExpired, templates.SlotData(bi.loc, sl, e, o.PartySize), &m)
	return w.queue(ctx, m)
}

// queueHandback emails the owner that a slot is back with staff, with the
// engine's note.
func (w *work) queueHandback(ctx context.Context, bi *bizInfo, sl nextup.Slot, h nextup.HandBack) error {
	to := bi.b.Profile.OwnerEmail
	if to == "" {
		return nil
	}
	m := nextup.Message{BusinessID: bi.b.ID, Kind: MessageHandback, Channel: nextup.ChannelEmail, To: to}
	d := templates.TemplateData{Service: templates.SlotService(sl), Staff: sl.Staff, When: templates.FormatWhen(sl.StartsAt, bi.loc), Note: h.Note}
	templates.Compose(bi.b, templates.TemplateHandback, d, &m)
	return w.queue(ctx, m)
}
