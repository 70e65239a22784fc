package messages

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// MessageFallback is the kind of a message sent again on the person's
// other channel because the first could not be delivered.
const MessageFallback = "fallback"

// permanentSMSCodes are the carrier errors that say a number can never
// get a text (Twilio's codes): unknown or invalid (30005, 21211), a
// landline (30006, 21614), blocked (30004), or opted out at the carrier
// (21610). Others (a phone switched off, 30003) may clear.
var permanentSMSCodes = []string{"30004", "30005", "30006", "21211", "21610", "21614"}

// Undeliverable handles a message that could not be delivered, in a
// transaction of its own. The relay's dead letters (DeadLetter) and the
// carrier's reports (SMSDelivery) run the same fallback inside the
// transaction that records the failure, so the two commit together. permanent says
// the address itself is bad (not a provider outage): it is then opted out
// of that channel for the business, reason recorded, so the engine stops
// choosing it. Then, for a person's message:
//
//   - an offer (or its follow-up) that is still live goes again on the
//     person's other channel, with the same claim link, once; with no other
//     channel it ends as no_channel and the slot rolls on (guardrail 4:
//     the person keeps their place and is skipped while unreachable);
//   - a confirmation or reminder goes again on the other channel, once.
//
// A fallback waits for the end of quiet hours, and none goes for a slot
// that has started. Every step is audited. Handling the same message twice
// sends nothing twice (a person with no other channel may get a second
// "fallback_skipped" audit row).
func (s *Messages) Undeliverable(ctx context.Context, messageID string, permanent bool, reason string) error {
	return s.tx(ctx, func(w *work) error { return w.undeliverable(ctx, messageID, permanent, reason) })
}

// DeadLetter is Undeliverable inside the transaction that records the
// message dead (the outbox relay's): the dead letter and its fallback
// commit together or not at all, so a crash between the two cannot leave
// a person unreached. It runs in a savepoint of tx, and runs again when
// the state changed under it; its error rolls the whole transaction back
// (the relay then tries the message again when its lease lapses). after,
// run once tx has committed, wakes the sweeper and relay and makes the
// checkouts of paid holds the fallback made (an offer rolled on).
func (s *Messages) DeadLetter(ctx context.Context, tx nextup.Tx, messageID string, permanent bool, reason string) (after func(), err error) {
	after, err = s.Within(ctx, tx, func(cw *core.Work) error {
		w := wrap(cw)
		w.Actor = nextup.ActorSystem
		return w.undeliverable(ctx, messageID, permanent, reason)
	})
	if err != nil {
		return nil, fmt.Errorf("fallback of message %s: %w", messageID, err)
	}
	return after, nil
}

func (w *work) undeliverable(ctx context.Context, messageID string, permanent bool, reason string) error {
	m, err := w.Tx.MessageGet(ctx, messageID)
	if err != nil {
		return core.NotFound("message", messageID, err)
	}
	if m.EntryID == "" || (m.Channel != nextup.ChannelSMS && m.Channel != nextup.ChannelEmail) {
		return nil // staff mail, webhooks: visible as dead, nothing to fall back to
	}
	bi, err := w.Business(ctx, m.BusinessID)
	if err != nil {
		return err
	}
	key := nextup.AddressKey(m.Channel, m.To)
	suppressed := false
	if permanent && key != "" {
		if suppressed, err = optedOut(ctx, w.Tx, m.BusinessID, m.Channel, m.To); err != nil {
			return err
		}
		if !suppressed {
			if err := w.Tx.SuppressionAdd(ctx, nextup.Suppression{BusinessID: m.BusinessID, Channel: m.Channel,
				Address: key, Reason: "undeliverable: " + reason, At: w.Now}); err != nil {
				return err
			}
			if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: m.EntryID,
				To: string(m.Channel) + "_undeliverable", Reason: reason, Detail: map[string]any{"message_id": m.ID, "address": m.To}}); err != nil {
				return err
			}
			suppressed = true
		}
	}
	e, err := w.Tx.EntryGet(ctx, m.EntryID)
	if err != nil {
		return err
	}
	other := nextup.ChannelEmail
	if m.Channel == nextup.ChannelEmail {
		other = nextup.ChannelSMS
	}
	to := templates.AddressOf(e, other)
	if out, err := optedOut(ctx, w.Tx, m.BusinessID, other, to); err != nil {
		return err
	} else if out {
		to = ""
	}
	switch m.Kind {
	case nextup.MessageOffer, MessageEscalation, MessageFallback:
		return w.offerFallback(ctx, bi, m, e, other, to, suppressed)
	case nextup.MessageConfirmation, MessageReminder:
		return w.bookingFallback(ctx, bi, m, e, other, to)
	}
	return nil
}

// offerFallback sends a live offer again on the other channel, or ends it
// when the person cannot be reached at all.
func (w *work) offerFallback(ctx context.Context, bi *core.Biz, m nextup.Message, e nextup.Entry, other nextup.Channel, to string, suppressed bool) error {
	o, err := w.Tx.OfferGet(ctx, m.OfferID)
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.State != nextup.OfferOffered || !w.Now.Before(o.ExpiresAt) {
		return nil // claimed or ended meanwhile
	}
	note := func(outcome string, detail map[string]any) error {
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
			From: string(o.State), To: string(o.State), Reason: outcome, Detail: detail})
	}
	msgs, err := w.Tx.MessageList(ctx, nextup.MessageFilter{BusinessID: o.BusinessID, OfferID: o.ID})
	if err != nil {
		return err
	}
	for _, x := range msgs {
		if x.Channel == other && x.State != nextup.MessageDead && x.State != nextup.MessageCancelled {
			return nil // the other channel has it already (a follow-up or an earlier fallback)
		}
	}
	if m.Kind == MessageFallback {
		to = "" // a fallback does not fall back again
	}
	if done, err := w.fellBack(ctx, m); done || err != nil {
		return err
	}
	if to == "" {
		if !suppressed {
			// A passing failure and nowhere else to send: the offer runs
			// its course (the relay's retry, or expiry, rolls on).
			return note("fallback_skipped:no_other_channel", map[string]any{"message_id": m.ID})
		}
		_, err := w.EndOffer(ctx, o, nextup.OfferCancelled, "no_channel", nextup.EntryWaiting)
		if errors.Is(err, core.ErrRedecide) {
			return nil
		}
		return err
	}
	sl, err := w.Tx.SlotGet(ctx, o.SlotID)
	if err != nil {
		return err
	}
	d := templates.OfferData(bi.Loc, sl, e, o, m.ClaimURL, w.Now)
	d.IfMissed = templates.IfMissed(engine.RulesFor(bi.Rules, sl).Requeue, e.Lapses)
	f := nextup.Message{ID: fallbackID(m.ID), BusinessID: bi.ID, Kind: MessageFallback, Channel: other, To: to,
		ClaimURL: m.ClaimURL, OfferID: o.ID, EntryID: e.ID, NotBefore: w.NotBefore(bi)}
	w.s.Stoppable(bi.Business, &f)
	templates.Compose(bi.Business, templates.TemplateOffer, d, &f)
	if err := w.QueueWithID(ctx, f); err != nil {
		return err
	}
	return note("fallback", map[string]any{"message_id": m.ID, "channel": string(other)})
}

// bookingFallback sends a confirmation or reminder again on the other
// channel.
func (w *work) bookingFallback(ctx context.Context, bi *core.Biz, m nextup.Message, e nextup.Entry, other nextup.Channel, to string) error {
	if to == "" || m.BookingID == "" {
		return nil
	}
	b, err := w.Tx.BookingGet(ctx, m.BookingID)
	if err != nil {
		return fmt.Errorf("booking of message %s: %w", m.ID, err)
	}
	if b.State != nextup.BookingBooked {
		return nil
	}
	if done, err := w.fellBack(ctx, m); done || err != nil {
		return err
	}
	sl, err := w.Tx.SlotGet(ctx, b.SlotID)
	if err != nil {
		return err
	}
	if !w.NotBefore(bi).Before(sl.StartsAt) {
		return nil // too late to help
	}
	d := templates.SlotData(bi.Loc, sl, e, b.Seats)
	kind := templates.TemplateReminder
	f := nextup.Message{ID: fallbackID(m.ID), BusinessID: bi.ID, Kind: MessageFallback, Channel: other, To: to,
		OfferID: m.OfferID, EntryID: e.ID, BookingID: b.ID, NotBefore: w.NotBefore(bi)}
	if m.Kind == nextup.MessageConfirmation {
		kind = templates.TemplateConfirmation
		if other == nextup.ChannelEmail {
			f.Calendar = templates.CalendarICS(b, sl, bi.Name)
		}
	}
	templates.Compose(bi.Business, kind, d, &f)
	if err := w.QueueWithID(ctx, f); err != nil {
		return err
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: b.ID, SlotID: b.SlotID,
		From: string(b.State), To: string(b.State), Reason: "fallback", Detail: map[string]any{"message_id": m.ID, "channel": string(other)}})
}

// fallbackID is the id of the fallback of message id: one per message.
func fallbackID(id string) string { return id + "_fb" }

// fellBack reports whether m has had its fallback already.
func (w *work) fellBack(ctx context.Context, m nextup.Message) (bool, error) {
	_, err := w.Tx.MessageGet(ctx, fallbackID(m.ID))
	if errors.Is(err, nextup.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// PermanentSMSError reports whether a carrier error code means the number
// can never get a text.
func PermanentSMSError(code string) bool { return slices.Contains(permanentSMSCodes, code) }
