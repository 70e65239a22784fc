package offers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// HandOffSlack is how late an offer's message may reach the provider
// before its claim window is restarted from that moment: a message sent
// within it (the relay's next poll) keeps the window it was given; one
// that waited longer (paced behind a storm of others, or retried) gets
// its whole window from when it went.
const HandOffSlack = time.Second

// Handed runs, in the relay's transaction that records an offer message
// sent at at, the rule that a claim window starts when its message is
// handed to the provider, never earlier: an offer whose message went
// more than HandOffSlack after the offer was made has its window
// counted again from at (awake time, capped before the slot as ever),
// its expiry and follow-up timers moved with it, audited. Other
// messages, an offer that ended meanwhile or whose window would not
// grow change nothing.
func (s *Offers) Handed(ctx context.Context, tx nextup.Tx, m nextup.Message, at time.Time) (after func(), err error) {
	if m.Kind != nextup.MessageOffer || m.OfferID == "" {
		return func() {}, nil
	}
	return s.Within(ctx, tx, func(cw *core.Work) error {
		w := wrap(cw)
		w.Actor = nextup.ActorSystem
		return w.handed(ctx, m.OfferID, at)
	})
}

func (w *work) handed(ctx context.Context, offerID string, at time.Time) error {
	o, err := w.Tx.OfferGet(ctx, offerID)
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.State != nextup.OfferOffered || o.SentAt == nil || at.Sub(*o.SentAt) <= HandOffSlack || !o.ExpiresAt.After(at) {
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
	rules := engine.RulesFor(bi.Rules, slot)
	limit := slot.StartsAt.Add(-rules.MinLead)
	fresh := engine.AddAwake(at, rules.WindowFor(slot.StartsAt.Sub(at)), rules.QuietHours, bi.Loc)
	if fresh.After(limit) {
		fresh = limit
	}
	if !fresh.After(o.ExpiresAt) {
		return nil
	}
	sentAt := *o.SentAt
	restarted, err := w.Tx.OfferHanded(ctx, o.ID, at, fresh)
	if errors.Is(err, nextup.ErrConflict) {
		return nil // claimed or ended in the meantime
	}
	if err != nil {
		return fmt.Errorf("restart the window of offer %s: %w", o.ID, err)
	}
	if err := w.Schedule(ctx, nextup.Timer{BusinessID: o.BusinessID, Kind: nextup.TimerOfferExpire,
		SubjectID: o.ID, Key: core.ExpireKey(o.ID), DueAt: fresh}); err != nil {
		return err
	}
	// The follow-up moves with the window (one that went already is not
	// sent again: messages.Escalate sends one per offer).
	if err := w.Tx.TimerCancel(ctx, core.EscalateKey(o.ID)); err != nil {
		return fmt.Errorf("cancel timer %s: %w", core.EscalateKey(o.ID), err)
	}
	if err := w.ScheduleEscalation(ctx, restarted); err != nil {
		return err
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectOffer, SubjectID: o.ID, SlotID: o.SlotID,
		From: string(nextup.OfferOffered), To: string(nextup.OfferOffered), Reason: "window_from_send",
		Detail: map[string]any{"made_at": sentAt, "sent_at": at, "expires_at": fresh, "was_expires_at": o.ExpiresAt}})
}
