package offers

import (
	"context"
	"errors"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// An offer's timers: its expiry when the claim window ends, and its
// release when quiet hours held it back.

// Message kinds of the notices about an offer.
const (
	MessageExpired  = "expired"  // the hold lapsed; the person keeps their place
	MessageFilled   = "filled"   // the slot was just taken; the person keeps their place
	MessageRequeued = "requeued" // the hold lapsed or was declined; the person is now at the back of the waitlist
	MessageDropped  = "dropped"  // the hold lapsed or was declined once too often; the person is off the waitlist
)

// queueLapsed tells the person whose hold lapsed, or who declined it
// (ended says which), what the re-queue rule did with them: they keep
// their place (expired; nothing after a decline: they chose it), are now
// at the back of the waitlist (requeued), or are off it, with how to join
// again (dropped). On the channel the offer went by, outside quiet hours.
func (w *work) queueLapsed(ctx context.Context, bi *core.Biz, ended nextup.Offer, move engine.RequeueMove) error {
	declined := ended.State == nextup.OfferDeclined
	kind, tmpl := MessageExpired, templates.TemplateExpired
	switch {
	case move == engine.RequeueBack:
		kind, tmpl = MessageRequeued, templates.TemplateRequeued
	case move == engine.RequeueDrop:
		kind, tmpl = MessageDropped, templates.TemplateDropped
	case declined:
		return nil
	}
	e, err := w.Tx.EntryGet(ctx, ended.EntryID)
	if err != nil {
		return err
	}
	sl, err := w.Tx.SlotGet(ctx, ended.SlotID)
	if err != nil {
		return err
	}
	m := nextup.Message{BusinessID: bi.ID, Kind: kind, Channel: ended.Channel, To: templates.AddressOf(e, ended.Channel),
		OfferID: ended.ID, EntryID: e.ID, NotBefore: w.NotBefore(bi)}
	if m.To == "" {
		return nil
	}
	d := templates.SlotData(bi.Loc, sl, e, ended.PartySize)
	d.Declined, d.Lapses = declined, e.Lapses
	if rule := engine.RulesFor(bi.Rules, sl).Requeue; rule.DropAfter > e.Lapses {
		d.MissesLeft = rule.DropAfter - e.Lapses
	}
	if move == engine.RequeueDrop {
		d.JoinLink = w.s.JoinURL(bi.Business, sl)
	}
	w.s.Stoppable(bi.Business, &m)
	templates.Compose(bi.Business, tmpl, d, &m)
	return w.Queue(ctx, m)
}

// expireOffer ends an offer whose claim window has passed, the person's
// lapse: the re-queue rule says whether they keep their place, go to the
// back of the line or leave it, they are told, and the slot rolls on.
func (w *work) expireOffer(ctx context.Context, offerID string) error {
	o, err := w.Tx.OfferGet(ctx, offerID)
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !o.State.Live() {
		return nil // already ended (claimed, declined, ...): nothing to do
	}
	if o.State == nextup.OfferPending {
		// Its window has not started; the release timer decides when it
		// does and schedules the expiry from then.
		return nil
	}
	if w.Now.Before(o.ExpiresAt) {
		// Fired early (clock skew between instances): come back on time.
		return w.Schedule(ctx, nextup.Timer{BusinessID: o.BusinessID, Kind: nextup.TimerOfferExpire,
			SubjectID: o.ID, Key: core.ExpireKey(o.ID), DueAt: o.ExpiresAt})
	}
	ended, move, err := w.LapseOffer(ctx, o, nextup.OfferExpired, "claim_window_ended")
	if err != nil {
		return err
	}
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return err
	}
	return w.queueLapsed(ctx, bi, ended, move)
}

// sendPendingOffer releases an offer held back by quiet hours: it becomes
// offered with a claim window counted from now, and its message — with a
// claim link minted now — is queued to go at once. A release that fires
// late (the process was down) still gives the whole window; one that lands
// back inside quiet hours waits for the next morning; one too late to be
// claimed before the slot's lead time ends the offer and rolls on.
func (w *work) sendPendingOffer(ctx context.Context, offerID string) error {
	o, err := w.Tx.OfferGet(ctx, offerID)
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.State != nextup.OfferPending {
		return nil
	}
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return err
	}
	slot, err := w.Tx.SlotGet(ctx, o.SlotID)
	if err != nil {
		return err
	}
	expires := o.ExpiresAt
	if w.Now.After(o.SendAt) {
		state, sendAt, fresh, ok := engine.OfferWindow(w.Now, slot.StartsAt, engine.RulesFor(bi.Rules, slot), bi.Loc)
		switch {
		case !ok:
			_, err := w.EndOffer(ctx, o, nextup.OfferExpired, "too_late_to_send", nextup.EntryWaiting)
			return err
		case state == nextup.OfferPending:
			// Back inside quiet hours: wait for them to end again.
			if err := w.Schedule(ctx, nextup.Timer{BusinessID: o.BusinessID, Kind: nextup.TimerOfferRelease,
				SubjectID: o.ID, Key: core.ReleaseKey(o.ID), DueAt: sendAt}); err != nil {
				return err
			}
			return w.Schedule(ctx, nextup.Timer{BusinessID: o.BusinessID, Kind: nextup.TimerOfferExpire,
				SubjectID: o.ID, Key: core.ExpireKey(o.ID), DueAt: fresh})
		}
		expires = fresh
	}
	token, hash := w.s.Random.Token()
	sent, err := w.Tx.OfferSend(ctx, o.ID, w.Now, expires, hash)
	if err != nil {
		return err
	}
	entry, err := w.Tx.EntryGet(ctx, o.EntryID)
	if err != nil {
		return err
	}
	if err := w.Queue(ctx, core.OfferMessage(w.s, bi, slot, entry, sent, token, false)); err != nil {
		return err
	}
	if err := w.ScheduleEscalation(ctx, sent); err != nil {
		return err
	}
	w.NotePaidHold(slot, sent, token)
	if !expires.Equal(o.ExpiresAt) {
		if err := w.Schedule(ctx, nextup.Timer{BusinessID: o.BusinessID, Kind: nextup.TimerOfferExpire,
			SubjectID: o.ID, Key: core.ExpireKey(o.ID), DueAt: expires}); err != nil {
			return err
		}
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
		From: string(nextup.OfferPending), To: string(nextup.OfferOffered), Reason: "quiet_hours_ended",
		Detail: map[string]any{"expires_at": expires}})
}

// ExpireOffer runs an offer's expiry timer in w (see expireOffer);
// waitlist's timer handler calls it.
func ExpireOffer(ctx context.Context, w *core.Work, offerID string) error {
	return wrap(w).expireOffer(ctx, offerID)
}

// SendPendingOffer runs an offer's release timer in w (see
// sendPendingOffer); waitlist's timer handler calls it.
func SendPendingOffer(ctx context.Context, w *core.Work, offerID string) error {
	return wrap(w).sendPendingOffer(ctx, offerID)
}
