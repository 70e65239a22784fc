package waitlist

import (
	"context"
	"errors"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/business"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// HandleTimer runs a due timer's effect and marks it done in one
// transaction, only while the sweeper's claim on it still holds. Every
// handler is a conditional write, so a timer that fires twice (a crash
// after the effect, a lease that lapsed) does nothing the second time.
func (s *Service) HandleTimer(ctx context.Context, t nextup.Timer) error {
	if t.ClaimedUntil == nil {
		return fmt.Errorf("timer %d handled without a claim", t.ID)
	}
	if t.Kind == nextup.TimerSheetSync {
		// Finish the timer and schedule the next read first, under the
		// claim; then read and import, outside any transaction and with
		// no lease to outlive. A crash in between skips one read.
		err := s.tx(ctx, func(w *work) error {
			w.Actor = nextup.ActorTimer
			if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
				return fmt.Errorf("finish timer %s: %w", t.Key, err)
			}
			return w.nextSheetSync(ctx, t.SubjectID)
		})
		if err != nil {
			return err
		}
		s.syncSheetTimer(ctx, t)
		return nil
	}
	if t.Kind == nextup.TimerBookingSync {
		// It asks a business's booking system first, outside any
		// transaction, then applies the answer and finishes the timer in
		// one (booksys.go).
		return s.retryBookingSystem(ctx, t)
	}
	return s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorTimer
		// Finish the timer first, under the sweeper's claim: if the claim
		// lapsed, nothing below happens. The effect may then cancel timers
		// by key without touching this one (it is no longer pending).
		if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
			return fmt.Errorf("finish timer %s: %w", t.Key, err)
		}
		var err error
		switch t.Kind {
		case nextup.TimerOfferExpire:
			err = w.expireOffer(ctx, t.SubjectID)
		case nextup.TimerOfferRelease:
			err = w.sendPendingOffer(ctx, t.SubjectID)
		case nextup.TimerHousekeeping:
			err = business.Housekeeping(ctx, w.Work, t)
		case nextup.TimerOfferEscalate:
			err = w.escalate(ctx, t.SubjectID)
		case nextup.TimerEntryRematch:
			err = w.MatchEntry(ctx, t.SubjectID) // a no-op unless the entry is still waiting
		case nextup.TimerBookingRemind:
			err = w.remind(ctx, t.SubjectID)
		default:
			err = fmt.Errorf("unknown timer kind %q", t.Kind)
		}
		if err != nil {
			return fmt.Errorf("timer %s: %w", t.Key, err)
		}
		return nil
	})
}

// expireOffer ends an offer whose claim window has passed; the person goes
// back to waiting with their place kept and the slot rolls on.
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
	if _, err = w.EndOffer(ctx, o, nextup.OfferExpired, "claim_window_ended", nextup.EntryWaiting); err != nil {
		return err
	}
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return err
	}
	return w.queueExpired(ctx, bi, o)
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
