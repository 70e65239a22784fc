package insight

import (
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// TestEstimateWords: the range in hours under a day, in days above, and
// "usually" only from EstimateSure bookings; nothing below the minimum.
func TestEstimateWords(t *testing.T) {
	hours := func(hs ...int) []time.Duration {
		var out []time.Duration
		for _, h := range hs {
			out = append(out, time.Duration(h)*time.Hour)
		}
		return out
	}
	e := nextup.Entry{Service: "colour"}
	if _, ok := estimateOf(hours(1, 2, 3, 4), e); ok {
		t.Error("four waits made an estimate")
	}
	w, ok := estimateOf(hours(1, 2, 3, 5, 9), e)
	if !ok || w.Words != "A rough guide, from the last 5 bookings: people waiting for colour booked 2–5 hours after joining." {
		t.Errorf("hours: %+v", w)
	}
	var many []int
	for i := range 20 {
		many = append(many, 24*(1+i%10))
	}
	w, _ = estimateOf(hours(many...), nextup.Entry{EventID: "slot_1"})
	if w.Words != "Recently, people waiting for this event have typically booked 3–8 days after joining." {
		t.Errorf("days: %+v", w)
	}
	if got := spanWords(30*time.Hour, 40*time.Hour); got != "1–2 days" {
		t.Errorf("spanWords = %q", got)
	}
	if got := spanWords(3*time.Hour, 3*time.Hour); got != "about 3 hours" {
		t.Errorf("spanWords = %q", got)
	}
}
