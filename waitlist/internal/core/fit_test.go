package core

import (
	"fmt"
	"testing"

	"github.com/nextup-dev/nextup/engine"
)

// fit cuts a decision to a bounded transaction's room in fair order:
// skips before the offers kept are kept (or, past the room, summed up in
// the overflow), offers past the room are cut with the skips after them.
func TestFit(t *testing.T) {
	offers := func(n int) []engine.Offer {
		var out []engine.Offer
		for i := range n {
			out = append(out, engine.Offer{EntryID: fmt.Sprint("o", i)})
		}
		return out
	}
	skip := func(id string, before int) engine.Skip {
		return engine.Skip{EntryID: id, Reason: engine.SkipNoChannel, Before: before}
	}
	w := writesPerOffer // the rooms below are in its units
	for _, c := range []struct {
		name                     string
		d                        engine.Decision
		room                     int
		offers, skips, overflown int
		cut                      bool
	}{
		{"all fits", engine.Decision{Offers: offers(3), Skipped: []engine.Skip{skip("s", 1)}}, 100, 3, 1, 0, false},
		{"offers cut", engine.Decision{Offers: offers(20)}, 3 + 6*w - 1, 5, 0, 0, true},
		{"skips after the cut wait", engine.Decision{Offers: offers(20), Skipped: []engine.Skip{skip("a", 2), skip("b", 10)}}, 3 + 5*w + 1 + w - 1, 5, 1, 0, true},
		{"no room for any offer", engine.Decision{Offers: offers(2)}, 3 + w - 1, 0, 0, 0, true},
		{"many skips before the first offer overflow", engine.Decision{Offers: offers(1), Skipped: func() []engine.Skip {
			var s []engine.Skip
			for i := range 80 {
				s = append(s, skip(fmt.Sprint("s", i), 0))
			}
			return s
		}()}, 3 + w + 37, 1, 37, 43, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, over, cut := fit(c.d, c.room)
			if len(out.Offers) != c.offers || len(out.Skipped) != c.skips || len(over) != c.overflown || cut != c.cut {
				t.Errorf("fit(room %d) = %d offers, %d skips, %d overflown, cut %t; want %d, %d, %d, %t",
					c.room, len(out.Offers), len(out.Skipped), len(over), cut, c.offers, c.skips, c.overflown, c.cut)
			}
		})
	}
}
