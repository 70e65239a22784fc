package core

import (
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// TestPointless: under same_service a booking makes pointless the entries
// for the same service whose dates take in the booked day (in the
// business's timezone), and no others.
func TestPointless(t *testing.T) {
	loc, _ := time.LoadLocation("Europe/London")
	bi := &Biz{Loc: loc}
	day := func(d, h int) time.Time { return time.Date(2026, 12, d, h, 0, 0, 0, loc) }
	sl := nextup.Slot{Kind: nextup.KindSlot, Service: "haircut", StartsAt: day(10, 14)}
	for _, tc := range []struct {
		name string
		e    nextup.Entry
		want bool
	}{
		{"same service, no dates", nextup.Entry{Service: "haircut"}, true},
		{"dates take in the day", nextup.Entry{Service: "haircut", Earliest: day(9, 0), Latest: day(11, 0)}, true},
		{"from later that day", nextup.Entry{Service: "haircut", Earliest: day(10, 18)}, true},
		{"until that morning", nextup.Entry{Service: "haircut", Latest: day(10, 9)}, true},
		{"from the next day", nextup.Entry{Service: "haircut", Earliest: day(11, 0)}, false},
		{"until the day before", nextup.Entry{Service: "haircut", Latest: day(9, 23)}, false},
		{"another service", nextup.Entry{Service: "colour"}, false},
		{"an event's list", nextup.Entry{Service: "haircut", EventID: "slot_e"}, false},
	} {
		if got := Pointless(tc.e, sl, bi); got != tc.want {
			t.Errorf("%s: Pointless = %v, want %v", tc.name, got, tc.want)
		}
	}
}
