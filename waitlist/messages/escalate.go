package messages

import (
	"context"
	"errors"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// MessageEscalation is the kind of the follow-up of an offer not seen.
const MessageEscalation = "escalation"

// escalate is the follow-up of an offer nobody has opened by its share of
// the window (Rules.FollowUp, half by default): the same claim link once
// more, on the person's other channel if they have one they have not
// opted out of — or, when the rules say so, on the same channel when
// they have no other — and not inside quiet hours. Anything else is
// audited as a skipped follow-up.
func (w *work) escalate(ctx context.Context, offerID string) error {
	o, err := w.Tx.OfferGet(ctx, offerID)
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.State != nextup.OfferOffered || o.SeenAt != nil || !w.Now.Before(o.ExpiresAt) {
		return nil // claimed, ended, or opened: no follow-up needed
	}
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return err
	}
	skip := func(reason string) error {
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
			From: string(o.State), To: string(o.State), Reason: "escalation_skipped:" + reason})
	}
	if quiet, _ := engine.InQuietHours(w.Now, bi.Rules.QuietHours, bi.Loc); quiet {
		return skip("quiet_hours")
	}
	entry, err := w.Tx.EntryGet(ctx, o.EntryID)
	if err != nil {
		return err
	}
	other, to := nextup.ChannelEmail, entry.Email
	if o.Channel == nextup.ChannelEmail {
		other, to = nextup.ChannelSMS, entry.Phone
	}
	out := false
	if to != "" {
		if out, err = optedOut(ctx, w.Tx, o.BusinessID, other, to); err != nil {
			return err
		}
	}
	if to == "" || out {
		// No other channel: the same one, if the rules say so (the
		// offer went on it, so the person may be reached there).
		if !bi.Rules.FollowUp.SameChannelWhenNoOther || (o.Channel != nextup.ChannelEmail && o.Channel != nextup.ChannelSMS) {
			if out {
				return skip("opted_out")
			}
			return skip("no_other_channel")
		}
		other, to = o.Channel, templates.AddressOf(entry, o.Channel)
		if to == "" {
			return skip("no_other_channel")
		}
		if same, err := optedOut(ctx, w.Tx, o.BusinessID, other, to); err != nil {
			return err
		} else if same {
			return skip("opted_out")
		}
	}
	msgs, err := w.Tx.MessageList(ctx, nextup.MessageFilter{BusinessID: o.BusinessID, OfferID: o.ID})
	if err != nil {
		return err
	}
	var first *nextup.Message
	for i := range msgs {
		if msgs[i].Kind == MessageEscalation {
			// Followed up already: the window restarted when the offer
			// reached the provider late (offers.Handed), and its
			// follow-up timer with it. One follow-up is enough.
			return nil
		}
		if msgs[i].Kind == nextup.MessageOffer && msgs[i].ClaimURL != "" {
			first = &msgs[i]
		}
	}
	if first == nil {
		return skip("no_link")
	}
	slot, err := w.Tx.SlotGet(ctx, o.SlotID)
	if err != nil {
		return err
	}
	m := escalationMessage(w.s, bi, slot, entry, o, first.ClaimURL, other, w.Now)
	if err := w.Queue(ctx, m); err != nil {
		return err
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
		From: string(o.State), To: string(o.State), Reason: "escalated", Detail: map[string]any{"channel": string(other)}})
}

// escalationMessage is the follow-up of an offer, on the other channel,
// with the same claim link.
func escalationMessage(s *core.Service, bi *core.Biz, sl nextup.Slot, e nextup.Entry, o nextup.Offer, link string, ch nextup.Channel, now time.Time) nextup.Message {
	d := templates.OfferData(bi.Loc, sl, e, o, link, now)
	d.IfMissed = templates.IfMissed(engine.RulesFor(bi.Rules, sl).Requeue, e.Lapses)
	m := nextup.Message{BusinessID: bi.ID, Kind: MessageEscalation, Channel: ch, To: templates.AddressOf(e, ch), ClaimURL: link,
		OfferID: o.ID, EntryID: e.ID}
	s.Stoppable(bi.Business, &m)
	templates.Compose(bi.Business, templates.TemplateEscalation, d, &m)
	return m
}

// Escalate runs an offer's follow-up timer in w (see escalate); waitlist's
// timer handler calls it.
func Escalate(ctx context.Context, w *core.Work, offerID string) error {
	return wrap(w).escalate(ctx, offerID)
}
