package waitlist

import (
	"context"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/business"
	"github.com/nextup-dev/nextup/waitlist/intake"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/messages"
	"github.com/nextup-dev/nextup/waitlist/offers"
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
		err := s.core.Tx(ctx, func(w *core.Work) error {
			w.Actor = nextup.ActorTimer
			if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
				return fmt.Errorf("finish timer %s: %w", t.Key, err)
			}
			return intake.NextSheetSync(ctx, w, t.SubjectID)
		})
		if err != nil {
			return err
		}
		intake.SyncSheetTimer(ctx, s.Intake, t)
		return nil
	}
	if t.Kind == nextup.TimerJobRun {
		// A wave of a job: a transaction per part (package slots, bulk.go).
		return s.Slots.RunJob(ctx, t)
	}
	if t.Kind == nextup.TimerMonthlySummary {
		// The month's figures and narrative (a model, maybe) first,
		// outside any transaction, then the summary stored and sent and
		// the timer finished in one (package insight).
		return s.Insight.SendSummary(ctx, t)
	}
	if t.Kind == nextup.TimerSheetMark {
		// The claim's row in the business's Google Sheet: a transaction
		// that finishes the timer and schedules the next try, the write
		// outside any transaction, then one recording how it went
		// (package intake, sheetmark.go).
		return intake.MarkSheetTimer(ctx, s.Intake, t)
	}
	if t.Kind == nextup.TimerRetention {
		// The timer finished first, then each person erased in
		// transactions of their own (package people, retention.go).
		_, err := s.People.Retention(ctx, t)
		return err
	}
	if t.Kind == nextup.TimerBookingSync {
		// It asks a business's booking system first, outside any
		// transaction, then applies the answer and finishes the timer in
		// one (package offers, booksys.go).
		return offers.RetryBookingSystem(ctx, s.Offers, t)
	}
	return s.core.Tx(ctx, func(w *core.Work) error {
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
			err = offers.ExpireOffer(ctx, w, t.SubjectID)
		case nextup.TimerOfferRelease:
			err = offers.SendPendingOffer(ctx, w, t.SubjectID)
		case nextup.TimerHousekeeping:
			err = business.Housekeeping(ctx, w, t)
		case nextup.TimerOfferEscalate:
			err = messages.Escalate(ctx, w, t.SubjectID)
		case nextup.TimerEntryRematch:
			err = w.MatchEntry(ctx, t.SubjectID) // a no-op unless the entry is still waiting
		case nextup.TimerBookingRemind:
			err = messages.Remind(ctx, w, t.SubjectID)
		case nextup.TimerSlotDecide:
			err = w.DecideSlot(ctx, t.SubjectID)
		case nextup.TimerDedupe:
			err = w.DedupeTimer(ctx, t.SubjectID)
		default:
			err = fmt.Errorf("unknown timer kind %q", t.Kind)
		}
		if err != nil {
			return fmt.Errorf("timer %s: %w", t.Key, err)
		}
		return nil
	})
}
