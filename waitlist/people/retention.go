package people

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// Retention: a business that sets Profile.RetentionMonths has a person's
// personal data erased by itself once every entry of theirs ended more
// than that many months ago (by the clock). An entry has ended when it
// left, expired or was booked; it ended at its last change (UpdatedAt),
// and a booked one not before its booking's slot ended. The sweep is a
// timer (nextup.TimerRetention) the daily housekeeping schedules for the
// day; it erases at most retentionBatch people a run, each in
// transactions of their own, and the next day's run goes on from there.

// retentionBatch is the most people one run erases.
const retentionBatch = 100

// retentionPage is how many ended entries a run reads at a time.
const retentionPage = 200

// RetentionTimer is the timer of a business's retention sweep on the day
// of now: due at once, keyed by the day, so that housekeeping running
// again the same day schedules nothing new while it is pending.
func RetentionTimer(bid string, now time.Time) nextup.Timer {
	return nextup.Timer{BusinessID: bid, Kind: nextup.TimerRetention, SubjectID: bid,
		Key: nextup.TimerRetention + ":" + bid + ":" + now.UTC().Format("20060102"), DueAt: now}
}

// Retention runs a business's retention sweep (its timer t): it finishes
// the timer under the sweeper's claim first, then erases the people
// whose entries all ended before the business's retention (each with a
// retention_erased audit row), and returns how many it erased.
func (s *People) Retention(ctx context.Context, t nextup.Timer) (int, error) {
	if t.ClaimedUntil == nil {
		return 0, fmt.Errorf("timer %d handled without a claim", t.ID)
	}
	var months int
	var now time.Time
	err := s.Tx(ctx, func(w *core.Work) error {
		if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
			return fmt.Errorf("finish timer %s: %w", t.Key, err)
		}
		bi, err := w.Business(ctx, t.BusinessID)
		if err != nil {
			return err
		}
		months, now = bi.Profile.RetentionMonths, w.Now
		return nil
	})
	if err != nil || months <= 0 {
		return 0, err
	}
	return s.Sweep(ctx, t.BusinessID, now.AddDate(0, -months, 0), months)
}

// Sweep erases, in a business, up to retentionBatch people none of whose
// entries is active and all of which ended before cutoff. months is the
// retention the cutoff comes from, for the audit rows.
func (s *People) Sweep(ctx context.Context, bid string, cutoff time.Time, months int) (int, error) {
	var due []nextup.Contact
	err := s.Read(ctx, func(tx nextup.Tx) error {
		seen := map[string]bool{}
		for _, st := range []nextup.EntryState{nextup.EntryLeft, nextup.EntryExpired, nextup.EntryBooked} {
			var after *nextup.Entry
			for len(due) < retentionBatch {
				es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: bid, State: st, After: after, Limit: retentionPage})
				if err != nil {
					return err
				}
				for _, e := range es {
					if e.Email == "" && e.Phone == "" {
						continue // erased already
					}
					if !e.UpdatedAt.Before(cutoff) || seen[e.ContactKey()] {
						continue
					}
					seen[e.ContactKey()] = true
					c := nextup.ContactOf(e.Email, "")
					if e.Email == "" {
						c = nextup.ContactOf("", e.Phone)
					}
					ok, err := ended(ctx, tx, bid, c, cutoff)
					if err != nil {
						return err
					}
					if ok && len(due) < retentionBatch {
						due = append(due, c)
					}
				}
				if len(es) < retentionPage {
					break
				}
				after = &es[len(es)-1]
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range due {
		out, err := s.erase(ctx, bid, c, nextup.ActorTimer, AuditRetention, map[string]any{"retention_months": months})
		if err != nil {
			return n, fmt.Errorf("retention of business %s: %w", bid, err)
		}
		if out.Erased.Total() > 0 {
			n++
		}
	}
	return n, nil
}

// ended reports whether every entry of c ended before cutoff, and every
// booking of theirs is of a slot that ended before it.
func ended(ctx context.Context, tx nextup.Tx, bid string, c nextup.Contact, cutoff time.Time) (bool, error) {
	h, err := find(ctx, tx, bid, c)
	if err != nil {
		return false, err
	}
	for _, e := range h.entries {
		if e.Active() || !e.UpdatedAt.Before(cutoff) {
			return false, nil
		}
	}
	for _, b := range h.bookings {
		if sl, ok := h.slots[b.SlotID]; !ok || !sl.EndsAt.Before(cutoff) {
			return false, nil
		}
	}
	return len(h.entries) > 0, nil
}
