package core

import (
	"testing"
	"time"

	"pgregory.net/rapid"

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

// TestPointlessProperties: for any entry and booked slot, same_service
// dedupe withdraws only an entry of the slot's service, never an event's,
// exactly when the entry's dates (in the business's timezone, across
// clock changes) share a local day with the slot's start; and widening
// an entry's dates never makes it matter again.
func TestPointlessProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		loc, _ := time.LoadLocation(rapid.SampledFrom([]string{"Europe/London", "America/New_York", "Australia/Sydney", "UTC"}).Draw(t, "tz"))
		bi := &Biz{Loc: loc}
		base := time.Date(2026, 3, 1, 0, 0, 0, 0, loc)
		at := func(label string) time.Time {
			return base.Add(time.Duration(rapid.IntRange(0, 120*24*60).Draw(t, label)) * time.Minute)
		}
		services := []string{"haircut", "colour"}
		sl := nextup.Slot{Kind: nextup.KindSlot, Service: rapid.SampledFrom(services).Draw(t, "slot service"), StartsAt: at("start")}
		e := nextup.Entry{Service: rapid.SampledFrom(services).Draw(t, "entry service")}
		if rapid.Bool().Draw(t, "earliest") {
			e.Earliest = at("from")
		}
		if rapid.Bool().Draw(t, "latest") {
			e.Latest = at("until")
		}
		if rapid.Bool().Draw(t, "event") {
			e.EventID = "slot_event"
		}
		got := Pointless(e, sl, bi)
		// The slot's local day, by the calendar rather than by 24 hours.
		y, m, d := sl.StartsAt.In(loc).Date()
		dayStart, nextDay := time.Date(y, m, d, 0, 0, 0, 0, loc), time.Date(y, m, d+1, 0, 0, 0, 0, loc)
		want := e.EventID == "" && e.Service == sl.Service &&
			(e.Earliest.IsZero() || e.Earliest.Before(nextDay)) && (e.Latest.IsZero() || !e.Latest.Before(dayStart))
		if got != want {
			t.Fatalf("Pointless(%+v, slot at %s) = %v, want %v", e, sl.StartsAt.In(loc), got, want)
		}
		wider := e
		wider.Earliest, wider.Latest = time.Time{}, time.Time{}
		if got && !Pointless(wider, sl, bi) && e.EventID == "" {
			t.Fatalf("an entry with no dates stopped being pointless: %+v", wider)
		}
	})
}
