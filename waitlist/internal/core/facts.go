package core

import (
	"encoding/json"
	"time"

	"github.com/nextup-dev/nextup"
)

// The facts a slot's "created" audit row and an entry's "joined" (or
// "registered") row carry: everything the engine's fit rule and the fair
// order read, so that the replay of a place in line (package insight)
// is computed from the audit rows alone. Times are RFC 3339 in UTC,
// availability is its JSON (as a staff edit's "changes" record it).

// SlotFacts is the detail of a slot's "created" row.
func SlotFacts(sl nextup.Slot) map[string]any {
	return map[string]any{"capacity": sl.Capacity, "booked_seats": sl.BookedSeats, "seating": string(sl.Seating),
		"kind": string(sl.Kind), "service": sl.Service, "staff": sl.Staff, "min_party": sl.MinParty,
		"starts_at": FactTime(sl.StartsAt), "ends_at": FactTime(sl.EndsAt)}
}

// EntryFacts is the detail of an entry's "joined" or "registered" row:
// where it joins the line and what it asks for.
func EntryFacts(e nextup.Entry) map[string]any {
	return map[string]any{"source": e.Source, "seq": e.Seq, "service": e.Service, "priority": e.Priority,
		"joined_at": e.JoinedAt.UTC().Format(time.RFC3339Nano), "party_size": e.PartySize,
		"earliest": FactTime(e.Earliest), "latest": FactTime(e.Latest), "staff": e.Staff,
		"availability": FactAvailability(e.Availability)}
}

// FactTime is a time as facts hold it: "" for none.
func FactTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// FactAvailability is weekly availability as facts hold it: "" for none.
func FactAvailability(av []nextup.Availability) string {
	if len(av) == 0 {
		return ""
	}
	raw, _ := json.Marshal(av)
	return string(raw)
}

// ParseFactTime reads a FactTime (a time.Time a row's detail kept as
// JSON reads the same way); zero for "" or anything else.
func ParseFactTime(v any) time.Time {
	s, _ := v.(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// ParseFactAvailability reads a FactAvailability; nil for "".
func ParseFactAvailability(v any) []nextup.Availability {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	var av []nextup.Availability
	if json.Unmarshal([]byte(s), &av) != nil {
		return nil
	}
	return av
}

// RulesFacts are the rules the fit rule and the claim window read, as a business's "created"
// and "rules_changed" rows keep them (detail "fit").
func RulesFacts(r nextup.Rules) map[string]any {
	f := map[string]any{"min_lead_seconds": int64(r.MinLead / time.Second), "down_fit": r.DownFit,
		"time_critical_through_quiet": r.TimeCriticalThroughQuiet}
	if q := r.QuietHours; q != nil {
		f["quiet_start_minute"], f["quiet_end_minute"] = int(q.Start), int(q.End)
	}
	return f
}
