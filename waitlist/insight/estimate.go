package insight

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/nextup-dev/nextup"
)

// The estimated wait on a person's status page: how long the people who
// waited for the same thing (a service's list, or an event's) and booked
// from it in the last EstimateWindow waited, from joining to booking, as
// the range from the quartile below to the quartile above, and nothing
// with fewer than EstimateMinSamples such bookings. It is read from the
// audit trail and kept for EstimateTTL per list, so a busy status page
// costs one read an hour.

const (
	EstimateWindow     = 90 * 24 * time.Hour
	EstimateMinSamples = 5
	EstimateSure       = 20 // samples from which the range is "usually"
	EstimateTTL        = time.Hour
)

// WaitEstimate is the estimated wait of one list.
type WaitEstimate struct {
	Low, High time.Duration
	Samples   int
	// Words says it for the person: "People waiting for a haircut have
	// usually booked within 3–10 days of joining."
	Words string
}

type estimateKey struct{ business, queue string }

type estimateCached struct {
	at time.Time
	ok bool
	w  WaitEstimate
}

// estimates is the cache of EstimateWait, per Insight.
type estimates struct {
	mu sync.Mutex
	m  map[estimateKey]estimateCached
}

// EstimateWait estimates how long e, on b's list, may wait; false when
// there is too little history to say.
func (s *Insight) EstimateWait(ctx context.Context, b nextup.Business, e nextup.Entry) (WaitEstimate, bool, error) {
	key := estimateKey{b.ID, e.Queue()}
	now := s.Clock.Now()
	c := &s.est
	c.mu.Lock()
	got, hit := c.m[key]
	c.mu.Unlock()
	if hit && now.Sub(got.at) < EstimateTTL {
		return got.w, got.ok, nil
	}
	var waits []time.Duration
	err := s.Read(ctx, func(tx nextup.Tx) error {
		joined := map[string]time.Time{} // entries of the list that joined in the window
		rows, err := auditRows(ctx, tx, nextup.AuditFilter{BusinessID: b.ID, SubjectType: nextup.SubjectEntry, Since: now.Add(-EstimateWindow)})
		if err != nil {
			return err
		}
		for _, r := range rows {
			switch {
			case r.From == "" && (r.Reason == "joined" || r.Reason == "registered"):
				if e, ok := joinFacts(r); ok && e.Queue() == key.queue {
					joined[r.SubjectID] = e.JoinedAt
				}
			case r.From == string(nextup.EntryOffered) && r.To == string(nextup.EntryBooked):
				at, ok := joined[r.SubjectID]
				if !ok {
					// Joined before the window: its join is on the entry.
					old, err := tx.EntryGet(ctx, r.SubjectID)
					if errors.Is(err, nextup.ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					if old.Queue() != key.queue {
						continue
					}
					at = old.JoinedAt
				}
				if !r.At.Before(at) {
					waits = append(waits, r.At.Sub(at))
				}
			}
		}
		return nil
	})
	if err != nil {
		return WaitEstimate{}, false, err
	}
	w, ok := estimateOf(waits, e)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[estimateKey]estimateCached{}
	}
	for k, v := range c.m { // the lists of past events, and any not asked for in an hour
		if now.Sub(v.at) >= EstimateTTL {
			delete(c.m, k)
		}
	}
	c.m[key] = estimateCached{at: now, ok: ok, w: w}
	c.mu.Unlock()
	return w, ok, nil
}

// estimateOf is the estimate from the waits of those who booked.
func estimateOf(waits []time.Duration, e nextup.Entry) (WaitEstimate, bool) {
	if len(waits) < EstimateMinSamples {
		return WaitEstimate{}, false
	}
	s := slices.Clone(waits)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)] }
	w := WaitEstimate{Low: at(0.25), High: at(0.75), Samples: len(s)}
	what := "this"
	if e.Service != "" {
		what = e.Service
	} else if e.EventID != "" {
		what = "this event"
	}
	span := spanWords(w.Low, w.High)
	if w.Samples >= EstimateSure {
		w.Words = fmt.Sprintf("Recently, people waiting for %s have typically booked %s after joining.", what, span)
	} else {
		w.Words = fmt.Sprintf("A rough guide, from the last %d bookings: people waiting for %s booked %s after joining.", w.Samples, what, span)
	}
	return w, true
}

// spanWords is a range of waits in hours or days: "2–6 hours", "3–10
// days", "about a day".
func spanWords(lo, hi time.Duration) string {
	if hi < 24*time.Hour {
		l, h := max(int(lo.Hours()), 1), max(int(math.Ceil(hi.Hours())), 1)
		if l >= h {
			return "about " + plural(h, "hour", "hours")
		}
		return fmt.Sprintf("%d–%d hours", l, h)
	}
	l, h := max(int(lo.Hours()/24), 1), int(math.Ceil(hi.Hours()/24))
	if l >= h {
		if h == 1 {
			return "about a day"
		}
		return fmt.Sprintf("about %d days", h)
	}
	return fmt.Sprintf("%d–%d days", l, h)
}
