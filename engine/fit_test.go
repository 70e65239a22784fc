package engine_test

import (
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

func TestFits(t *testing.T) {
	t.Parallel()
	start := testNow.Add(4 * time.Hour) // Wednesday 2026-06-10 14:00 BST
	type mods struct {
		slot  func(*nextup.Slot)
		entry func(*nextup.Entry)
		rules func(*nextup.Rules)
		loc   *time.Location
		now   time.Time
	}
	unitOf := func(capacity, minParty int) func(*nextup.Slot) {
		return func(s *nextup.Slot) { s.Capacity, s.MinParty = capacity, minParty }
	}
	sharedOf := func(capacity, booked, held int) func(*nextup.Slot) {
		return func(s *nextup.Slot) {
			s.Seating, s.Capacity, s.BookedSeats, s.HeldSeats = nextup.SeatingShared, capacity, booked, held
		}
	}
	event := func(s *nextup.Slot) {
		s.ID, s.Kind, s.Seating, s.Capacity, s.Service = "ev1", nextup.KindEvent, nextup.SeatingShared, 30, ""
	}
	downFit := func(r *nextup.Rules) { r.DownFit = true }
	avail := func(from, to nextup.TimeOfDay, days ...time.Weekday) func(*nextup.Entry) {
		return func(e *nextup.Entry) {
			e.Availability = append(e.Availability, nextup.Availability{Days: days, From: from, To: to})
		}
	}
	const h = 60 // minutes in an hour, for TimeOfDay
	tests := []struct {
		name   string
		mods   mods
		ok     bool
		reason string
	}{
		{"plain fit", mods{}, true, ""},

		{"other business", mods{entry: func(e *nextup.Entry) { e.BusinessID = "biz2" }}, false, engine.FitBusiness},

		{"entry holds an offer", mods{entry: func(e *nextup.Entry) { e.State = nextup.EntryOffered }}, false, engine.FitState},
		{"entry booked", mods{entry: func(e *nextup.Entry) { e.State = nextup.EntryBooked }}, false, engine.FitState},
		{"entry left", mods{entry: func(e *nextup.Entry) { e.State = nextup.EntryLeft }}, false, engine.FitState},

		{"event entry for its event", mods{slot: event, entry: func(e *nextup.Entry) { e.EventID, e.Service = "ev1", "" }}, true, ""},
		{"event entry for another event", mods{slot: event, entry: func(e *nextup.Entry) { e.EventID = "ev2" }}, false, engine.FitEvent},
		{"plain entry for an event", mods{slot: event}, false, engine.FitEvent},
		{"event entry for a plain slot", mods{entry: func(e *nextup.Entry) { e.EventID = "ev1" }}, false, engine.FitEvent},

		{"other service", mods{entry: func(e *nextup.Entry) { e.Service = "colour" }}, false, engine.FitService},

		{"unit: party equals capacity", mods{slot: unitOf(4, 0), entry: party(4)}, true, ""},
		{"unit: smaller party, no down-fit", mods{slot: unitOf(4, 0), entry: party(2)}, false, engine.FitParty},
		{"unit: down-fit at the minimum party", mods{slot: unitOf(4, 2), entry: party(2), rules: downFit}, true, ""},
		{"unit: down-fit below the minimum party", mods{slot: unitOf(4, 2), entry: party(1), rules: downFit}, false, engine.FitParty},
		{"unit: down-fit, no minimum means one", mods{slot: unitOf(4, 0), entry: party(1), rules: downFit}, true, ""},
		{"unit: party larger than capacity", mods{slot: unitOf(4, 0), entry: party(5), rules: downFit}, false, engine.FitParty},
		{"unit: partly held is not free", mods{slot: func(s *nextup.Slot) { s.Capacity, s.HeldSeats = 4, 1 }, entry: party(3), rules: downFit}, false, engine.FitParty},
		{"unit: booked is not free", mods{slot: func(s *nextup.Slot) { s.BookedSeats = 1 }}, false, engine.FitParty},
		{"unknown seating is unit", mods{slot: func(s *nextup.Slot) { s.Seating, s.Capacity = "", 2 }, entry: party(1)}, false, engine.FitParty},
		{"party of zero", mods{entry: party(0)}, false, engine.FitParty},
		{"shared: party fits free seats exactly", mods{slot: sharedOf(12, 7, 2), entry: party(3)}, true, ""},
		{"shared: party larger than free seats", mods{slot: sharedOf(12, 7, 2), entry: party(4)}, false, engine.FitParty},

		{"earliest is inclusive", mods{entry: func(e *nextup.Entry) { e.Earliest = start }}, true, ""},
		{"earliest after start", mods{entry: func(e *nextup.Entry) { e.Earliest = start.Add(time.Minute) }}, false, engine.FitWindow},
		{"latest is inclusive", mods{entry: func(e *nextup.Entry) { e.Latest = start }}, true, ""},
		{"latest before start", mods{entry: func(e *nextup.Entry) { e.Latest = start.Add(-time.Minute) }}, false, engine.FitWindow},
		{"open window on both ends", mods{entry: func(e *nextup.Entry) { e.Earliest, e.Latest = time.Time{}, time.Time{} }}, true, ""},

		{"availability: inside", mods{entry: avail(13*h, 15*h, time.Wednesday)}, true, ""},
		{"availability: from is inclusive", mods{entry: avail(14*h, 15*h, time.Wednesday)}, true, ""},
		{"availability: to is exclusive", mods{entry: avail(12*h, 14*h, time.Wednesday)}, false, engine.FitAvailability},
		{"availability: other day", mods{entry: avail(13*h, 15*h, time.Tuesday, time.Thursday)}, false, engine.FitAvailability},
		{"availability: any of several windows", mods{entry: func(e *nextup.Entry) {
			avail(9*h, 11*h, time.Wednesday)(e)
			avail(14*h, 24*h, time.Wednesday)(e)
		}}, true, ""},
		{"availability: read in the business timezone", mods{entry: avail(14*h, 15*h, time.Wednesday), loc: london}, true, ""},
		{"availability: the same instant in UTC is 13:00", mods{entry: avail(14*h, 15*h, time.Wednesday), loc: time.UTC}, false, engine.FitAvailability},
		{"availability: to 24:00 takes a late start", mods{
			slot:  func(s *nextup.Slot) { s.StartsAt = at(london, 2026, time.June, 10, 23, 30) },
			entry: avail(22*h, 24*h, time.Wednesday),
		}, true, ""},
		{"availability: spring-forward Sunday in local time", mods{
			slot:  func(s *nextup.Slot) { s.StartsAt = utc(2026, time.March, 29, 8, 0) }, // 09:00 BST
			entry: avail(9*h, 10*h, time.Sunday),
			now:   utc(2026, time.March, 29, 6, 0),
		}, true, ""},
		{"availability: fall-back Sunday in local time", mods{
			slot:  func(s *nextup.Slot) { s.StartsAt = utc(2026, time.October, 25, 9, 0) }, // 09:00 GMT
			entry: avail(9*h, 10*h, time.Sunday),
			now:   utc(2026, time.October, 25, 6, 0),
		}, true, ""},
		{"availability: window crossing midnight is empty", mods{entry: avail(22*h, 15*h, time.Wednesday)}, false, engine.FitAvailability},

		{"no staff preference", mods{entry: func(e *nextup.Entry) { e.Staff = "" }}, true, ""},
		{"same staff", mods{entry: func(e *nextup.Entry) { e.Staff = "ann" }}, true, ""},
		{"other staff", mods{entry: func(e *nextup.Entry) { e.Staff = "bob" }}, false, engine.FitStaff},

		{"lead exactly met", mods{now: start.Add(-15 * time.Minute)}, true, ""},
		{"lead not met", mods{now: start.Add(-14 * time.Minute)}, false, engine.FitLead},
		{"no lead required, slot about to start", mods{now: start.Add(-time.Second), rules: func(r *nextup.Rules) { r.MinLead = 0 }}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			slot, e, rules, loc, now := slotAt(start), entry("e1"), nextup.DefaultRules(), london, testNow
			if tt.mods.slot != nil {
				tt.mods.slot(&slot)
			}
			if tt.mods.entry != nil {
				tt.mods.entry(&e)
			}
			if tt.mods.rules != nil {
				tt.mods.rules(&rules)
			}
			if tt.mods.loc != nil {
				loc = tt.mods.loc
			}
			if !tt.mods.now.IsZero() {
				now = tt.mods.now
			}
			ok, reason := engine.Fits(slot, e, rules, loc, now)
			if ok != tt.ok || reason != tt.reason {
				t.Errorf("Fits = %v, %q; want %v, %q", ok, reason, tt.ok, tt.reason)
			}
		})
	}
}

func TestFitsNilLocationIsUTC(t *testing.T) {
	t.Parallel()
	slot := slotAt(utc(2026, time.June, 10, 14, 0))
	e := entry("e1")
	e.Availability = []nextup.Availability{{Days: []time.Weekday{time.Wednesday}, From: 14 * 60, To: 15 * 60}}
	if ok, reason := engine.Fits(slot, e, nextup.DefaultRules(), nil, testNow); !ok {
		t.Fatalf("Fits with nil location = false, %q; want a fit read in UTC", reason)
	}
}
