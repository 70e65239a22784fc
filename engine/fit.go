package engine

import (
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// Reasons Fits gives when an entry does not fit a slot. They are short and
// stable because they are logged, counted and shown to staff ("why was I
// not offered this?").
const (
	FitBusiness     = "business"     // the entry belongs to another business
	FitState        = "state"        // the entry is not waiting (it holds an offer, is booked, left or expired)
	FitEvent        = "event"        // an event entry for another event, or an event entry for a plain slot
	FitService      = "service"      // the slot is for another service
	FitParty        = "party"        // the party does not fit the seating
	FitWindow       = "window"       // the slot starts outside [Earliest, Latest]
	FitAvailability = "availability" // the slot starts outside the entry's weekly availability
	FitStaff        = "staff"        // the entry asked for another staff member
	FitLead         = "lead"         // the slot starts too soon for a claim window (Rules.MinLead)
)

// Fits reports whether entry e may be offered slot at now, and when it may
// not, the first reason (one of the Fit* codes) in the order the rules are
// listed in DESIGN.md. Weekly availability is read in loc, the business
// timezone (nil means UTC).
//
// Fits does not look at the slot's offer history: that an entry was already
// offered this slot is Decide's business, because only Decide has the
// history. The store pre-filters candidates through an index; Fits is the
// authority, so an index that is too generous costs time, never fairness.
func Fits(slot nextup.Slot, e nextup.Entry, rules nextup.Rules, loc *time.Location, now time.Time) (ok bool, reason string) {
	if loc == nil {
		loc = time.UTC
	}
	switch {
	case e.BusinessID != slot.BusinessID:
		return false, FitBusiness
	case e.State != nextup.EntryWaiting:
		return false, FitState
	}
	if slot.Kind == nextup.KindEvent {
		if e.EventID != slot.ID {
			return false, FitEvent
		}
	} else {
		if e.EventID != "" {
			return false, FitEvent
		}
		if e.Service != slot.Service {
			return false, FitService
		}
	}
	if !partyFits(slot, e.PartySize, rules.DownFit) {
		return false, FitParty
	}
	if (!e.Earliest.IsZero() && slot.StartsAt.Before(e.Earliest)) ||
		(!e.Latest.IsZero() && slot.StartsAt.After(e.Latest)) {
		return false, FitWindow
	}
	if len(e.Availability) > 0 && !available(slot.StartsAt.In(loc), e.Availability) {
		return false, FitAvailability
	}
	if e.Staff != "" && e.Staff != slot.Staff {
		return false, FitStaff
	}
	if slot.StartsAt.Sub(now) < rules.MinLead {
		return false, FitLead
	}
	return true, ""
}

// shared reports whether slot's seats are shared between parties. Anything
// other than shared is unit: slots default to unit, and treating an unknown
// seating as unit never puts two parties in one seat.
func shared(slot nextup.Slot) bool { return slot.Seating == nextup.SeatingShared }

// partyFits is the seating rule. A unit slot must be wholly free, since one
// party takes all of it; down-fitting lets a smaller party take a larger
// unit (a couple at a table for four) but never fewer than the slot's
// minimum party, so the business keeps its big tables for big parties.
func partyFits(slot nextup.Slot, party int, downFit bool) bool {
	if party < 1 {
		return false
	}
	if shared(slot) {
		return party <= slot.FreeSeats()
	}
	if slot.Capacity < 1 || slot.FreeSeats() != slot.Capacity {
		return false
	}
	if party == slot.Capacity {
		return true
	}
	return downFit && max(slot.MinParty, 1) <= party && party <= slot.Capacity
}

// available reports whether local, a slot start already in the business
// timezone, falls in one of the weekly windows. The time of day is compared
// to the second so that a 10:59:30 start is inside a window ending 11:00;
// To may be 24:00 to mean the end of the day. A window with From >= To is
// empty: crossing midnight would make it ambiguous which day it belongs to.
func available(local time.Time, windows []nextup.Availability) bool {
	tod := local.Hour()*3600 + local.Minute()*60 + local.Second()
	for _, w := range windows {
		if slices.Contains(w.Days, local.Weekday()) && int(w.From)*60 <= tod && tod < int(w.To)*60 {
			return true
		}
	}
	return false
}
