package engine_test

import (
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

var night = quiet(21, 0, 8, 0) // the default quiet hours, crossing midnight

func TestInQuietHours(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    time.Time
		q    *nextup.QuietHours
		loc  *time.Location
		in   bool
		end  time.Time
	}{
		{"no quiet hours", at(london, 2026, 6, 10, 23, 0), nil, london, false, time.Time{}},
		{"start equal to end is none", at(london, 2026, 6, 10, 23, 0), quiet(21, 0, 21, 0), london, false, time.Time{}},
		{"evening before", at(london, 2026, 6, 10, 20, 59), night, london, false, time.Time{}},
		{"start is quiet", at(london, 2026, 6, 10, 21, 0), night, london, true, at(london, 2026, 6, 11, 8, 0)},
		{"before midnight ends tomorrow", at(london, 2026, 6, 10, 23, 30), night, london, true, at(london, 2026, 6, 11, 8, 0)},
		{"after midnight ends today", at(london, 2026, 6, 11, 0, 30), night, london, true, at(london, 2026, 6, 11, 8, 0)},
		{"last quiet minute", at(london, 2026, 6, 11, 7, 59), night, london, true, at(london, 2026, 6, 11, 8, 0)},
		{"end is not quiet", at(london, 2026, 6, 11, 8, 0), night, london, false, time.Time{}},
		{"midday", at(london, 2026, 6, 11, 12, 0), night, london, false, time.Time{}},
		{"daytime quiet: inside", at(london, 2026, 6, 10, 13, 0), quiet(12, 0, 14, 0), london, true, at(london, 2026, 6, 10, 14, 0)},
		{"daytime quiet: before", at(london, 2026, 6, 10, 11, 59), quiet(12, 0, 14, 0), london, false, time.Time{}},
		{"daytime quiet: end", at(london, 2026, 6, 10, 14, 0), quiet(12, 0, 14, 0), london, false, time.Time{}},
		{"ending 24:00", at(london, 2026, 6, 10, 23, 59), quiet(22, 0, 24, 0), london, true, at(london, 2026, 6, 11, 0, 0)},
		{"nil location is UTC", utc(2026, 6, 10, 21, 30), night, nil, true, utc(2026, 6, 11, 8, 0)},
		{"the same instant is 22:30 in London", utc(2026, 6, 10, 21, 30), night, london, true, at(london, 2026, 6, 11, 8, 0)},
		{"the same instant is 17:30 in New York", utc(2026, 6, 10, 21, 30), night, newYork, false, time.Time{}},

		// Europe/London springs forward at 01:00 GMT on 2026-03-29: that
		// night is ten hours long, and it ends at 08:00 BST, 07:00 UTC.
		{"London spring: night starts GMT", utc(2026, 3, 28, 21, 0), night, london, true, utc(2026, 3, 29, 7, 0)},
		{"London spring: after the jump", utc(2026, 3, 29, 1, 30), night, london, true, utc(2026, 3, 29, 7, 0)},
		{"London spring: 08:00 BST is awake", utc(2026, 3, 29, 7, 0), night, london, false, time.Time{}},
		{"London spring: 07:30 UTC is 08:30 BST", utc(2026, 3, 29, 7, 30), night, london, false, time.Time{}},
		{"London spring: quiet ending inside the gap", utc(2026, 3, 29, 0, 59), quiet(0, 0, 1, 30), london, true, utc(2026, 3, 29, 1, 0)},
		{"London spring: quiet ending after the gap", utc(2026, 3, 29, 1, 0), quiet(0, 0, 2, 30), london, true, utc(2026, 3, 29, 1, 30)},
		// It falls back at 01:00 UTC on 2026-10-25: a twelve-hour night
		// from 21:00 BST (20:00 UTC) to 08:00 GMT (08:00 UTC).
		{"London fall: night starts BST", utc(2026, 10, 24, 20, 0), night, london, true, utc(2026, 10, 25, 8, 0)},
		{"London fall: 20:00 BST is awake", utc(2026, 10, 24, 19, 0), night, london, false, time.Time{}},
		{"London fall: first 01:30", utc(2026, 10, 25, 0, 30), night, london, true, utc(2026, 10, 25, 8, 0)},
		{"London fall: second 01:30", utc(2026, 10, 25, 1, 30), night, london, true, utc(2026, 10, 25, 8, 0)},
		{"London fall: 07:30 UTC is 07:30 GMT", utc(2026, 10, 25, 7, 30), night, london, true, utc(2026, 10, 25, 8, 0)},
		// America/New_York springs forward at 02:00 EST on 2026-03-08 and
		// falls back at 02:00 EDT on 2026-11-01.
		{"New York spring", at(newYork, 2026, 3, 7, 22, 0), night, newYork, true, utc(2026, 3, 8, 12, 0)},
		{"New York fall", at(newYork, 2026, 10, 31, 22, 0), night, newYork, true, utc(2026, 11, 1, 13, 0)},
		{"New York fall: 07:30 EST", utc(2026, 11, 1, 12, 30), night, newYork, true, utc(2026, 11, 1, 13, 0)},
		// America/Santiago jumps from 00:00 to 01:00 on 2026-09-06: quiet
		// hours from midnight start at the jump, not at 23:00 the day before.
		{"Santiago: the evening before is awake", utc(2026, 9, 6, 3, 30), quiet(0, 0, 6, 0), santiago, false, time.Time{}},
		{"Santiago: after the jump", utc(2026, 9, 6, 4, 30), quiet(0, 0, 6, 0), santiago, true, utc(2026, 9, 6, 9, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in, end := engine.InQuietHours(tt.t, tt.q, tt.loc)
			if in != tt.in || !end.Equal(tt.end) {
				t.Errorf("InQuietHours(%v) = %v, %v; want %v, %v", tt.t, in, end.UTC(), tt.in, tt.end.UTC())
			}
		})
	}
}

func TestNextQuietStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    time.Time
		q    *nextup.QuietHours
		loc  *time.Location
		want time.Time
	}{
		{"none", at(london, 2026, 6, 10, 10, 0), nil, london, time.Time{}},
		{"later today", at(london, 2026, 6, 10, 10, 0), night, london, at(london, 2026, 6, 10, 21, 0)},
		{"at the start", at(london, 2026, 6, 10, 21, 0), night, london, at(london, 2026, 6, 10, 21, 0)},
		{"inside: the next one", at(london, 2026, 6, 10, 22, 0), night, london, at(london, 2026, 6, 11, 21, 0)},
		{"across the spring jump", at(london, 2026, 3, 28, 22, 0), night, london, utc(2026, 3, 29, 20, 0)},
		{"across the fall jump", at(london, 2026, 10, 24, 22, 0), night, london, utc(2026, 10, 25, 21, 0)},
		{"New York across the spring jump", at(newYork, 2026, 3, 7, 22, 0), night, newYork, utc(2026, 3, 9, 1, 0)},
		{"start 24:00 is midnight", at(london, 2026, 6, 10, 10, 0), quiet(24, 0, 6, 0), london, at(london, 2026, 6, 11, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := engine.NextQuietStart(tt.t, tt.q, tt.loc); !got.Equal(tt.want) {
				t.Errorf("NextQuietStart = %v, want %v", got.UTC(), tt.want.UTC())
			}
		})
	}
}

func TestAddAwake(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	tests := []struct {
		name string
		t    time.Time
		d    time.Duration
		q    *nextup.QuietHours
		loc  *time.Location
		want time.Time
	}{
		{"no quiet hours", at(london, 2026, 6, 10, 20, 55), 10 * m, nil, london, at(london, 2026, 6, 10, 21, 5)},
		{"daytime", at(london, 2026, 6, 10, 10, 0), 10 * m, night, london, at(london, 2026, 6, 10, 10, 10)},
		{"sleep does not eat the window", at(london, 2026, 6, 10, 20, 55), 10 * m, night, london, at(london, 2026, 6, 11, 8, 5)},
		{"ends just as quiet starts", at(london, 2026, 6, 10, 20, 50), 10 * m, night, london, at(london, 2026, 6, 10, 21, 0)},
		{"starting inside counts from the end", at(london, 2026, 6, 10, 23, 0), 10 * m, night, london, at(london, 2026, 6, 11, 8, 10)},
		{"starting at the end", at(london, 2026, 6, 11, 8, 0), 10 * m, night, london, at(london, 2026, 6, 11, 8, 10)},
		{"a day of awake time spans two nights", at(london, 2026, 6, 10, 20, 55), 24 * time.Hour, night, london, at(london, 2026, 6, 12, 18, 55)},
		{"negative counts as zero", at(london, 2026, 6, 10, 10, 0), -m, night, london, at(london, 2026, 6, 10, 10, 0)},
		{"nil location is UTC", utc(2026, 6, 10, 20, 55), 10 * m, night, nil, utc(2026, 6, 11, 8, 5)},
		{"London spring night", at(london, 2026, 3, 28, 20, 55), 10 * m, night, london, utc(2026, 3, 29, 7, 5)},
		{"London fall night", at(london, 2026, 10, 24, 20, 55), 10 * m, night, london, utc(2026, 10, 25, 8, 5)},
		{"New York spring night", at(newYork, 2026, 3, 7, 20, 55), 10 * m, night, newYork, utc(2026, 3, 8, 12, 5)},
		{"New York fall night", at(newYork, 2026, 10, 31, 20, 55), 10 * m, night, newYork, utc(2026, 11, 1, 13, 5)},
		{"half-hour clock change (Lord Howe)", at(lordHowe, 2026, 4, 4, 20, 55), 10 * m, night, lordHowe, at(lordHowe, 2026, 4, 5, 8, 5)},
		{"quiet all day still ends", at(london, 2026, 6, 10, 10, 0), 10 * m, quiet(0, 0, 24, 0), london, at(london, 2026, 6, 11, 0, 0).AddDate(0, 0, 399).Add(10 * m)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := engine.AddAwake(tt.t, tt.d, tt.q, tt.loc); !got.Equal(tt.want) {
				t.Errorf("AddAwake = %v, want %v", got.In(tt.want.Location()), tt.want)
			}
		})
	}
}

func TestOfferWindow(t *testing.T) {
	t.Parallel()
	rules := func(mods ...func(*nextup.Rules)) nextup.Rules {
		r := nextup.DefaultRules() // 10-minute window, quiet 21:00–08:00, 15-minute lead
		for _, mod := range mods {
			mod(&r)
		}
		return r
	}
	critical := func(r *nextup.Rules) { r.TimeCriticalThroughQuiet = true }
	noLead := func(r *nextup.Rules) { r.MinLead = 0 }
	noQuiet := func(r *nextup.Rules) { r.QuietHours = nil }
	ladder := func(r *nextup.Rules) {
		r.ClaimWindow = time.Hour
		r.ClaimWindowLadder = []nextup.LadderStep{{LeadUnder: 2 * time.Hour, Window: 10 * time.Minute}, {LeadUnder: 24 * time.Hour, Window: 30 * time.Minute}}
	}
	tests := []struct {
		name       string
		now, start time.Time
		rules      nextup.Rules
		loc        *time.Location
		state      nextup.OfferState
		sendAt     time.Time
		expiresAt  time.Time
		ok         bool
	}{
		{"daytime", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 14, 0), rules(), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 10), true},
		{"capped at start minus lead", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 20), rules(), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 5), true},
		{"cap not after now: cannot be claimed", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 15), rules(), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 0), false},
		{"no quiet hours at night", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 14, 0), rules(func(r *nextup.Rules) { r.QuietHours = nil }), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 10, 23, 10), true},
		{"sent before quiet, window sleeps", at(london, 2026, 6, 10, 20, 55), at(london, 2026, 6, 11, 14, 0), rules(), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 20, 55), at(london, 2026, 6, 11, 8, 5), true},
		{"sent before quiet, slot in the night: capped", at(london, 2026, 6, 10, 20, 55), at(london, 2026, 6, 10, 21, 30), rules(), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 20, 55), at(london, 2026, 6, 10, 21, 15), true},
		{"quiet: held back until morning", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 14, 0), rules(), london,
			nextup.OfferPending, at(london, 2026, 6, 11, 8, 0), at(london, 2026, 6, 11, 8, 10), true},
		{"quiet, not time-critical, exception on: still held back", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 14, 0), rules(critical), london,
			nextup.OfferPending, at(london, 2026, 6, 11, 8, 0), at(london, 2026, 6, 11, 8, 10), true},
		{"quiet, time-critical, exception off: held back, capped", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 8, 5), rules(noLead), london,
			nextup.OfferPending, at(london, 2026, 6, 11, 8, 0), at(london, 2026, 6, 11, 8, 5), true},
		{"quiet, time-critical, exception off: too late by morning", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 8, 5), rules(), london,
			nextup.OfferPending, at(london, 2026, 6, 11, 8, 0), at(london, 2026, 6, 11, 7, 50), false},
		{"quiet, time-critical, exception on: sent now, open until the slot", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 8, 9), rules(critical, noLead), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 8, 9), true},
		{"quiet, time-critical, exception on: capped at start minus lead", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 7, 0), rules(critical), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 6, 45), true},
		{"London spring night: sent at 08:00 BST", utc(2026, 3, 29, 0, 30), utc(2026, 3, 29, 12, 0), rules(), london,
			nextup.OfferPending, utc(2026, 3, 29, 7, 0), utc(2026, 3, 29, 7, 10), true},
		{"London fall night: sent at 08:00 GMT", utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 12, 0), rules(), london,
			nextup.OfferPending, utc(2026, 10, 25, 8, 0), utc(2026, 10, 25, 8, 10), true},
		{"New York spring night", at(newYork, 2026, 3, 8, 1, 30), at(newYork, 2026, 3, 8, 12, 0), rules(), newYork,
			nextup.OfferPending, utc(2026, 3, 8, 12, 0), utc(2026, 3, 8, 12, 10), true},
		{"quiet all day: never sent", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 12, 14, 0), rules(func(r *nextup.Rules) { r.QuietHours = quiet(0, 0, 24, 0) }), london,
			nextup.OfferPending, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 0), false},
		{"24:00 to 00:00 is no quiet hours", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 14, 0), rules(func(r *nextup.Rules) { r.QuietHours = quiet(24, 0, 0, 0) }), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 10, 23, 10), true},
		{"nil location is UTC", utc(2026, 6, 10, 23, 0), utc(2026, 6, 11, 14, 0), rules(), nil,
			nextup.OfferPending, utc(2026, 6, 11, 8, 0), utc(2026, 6, 11, 8, 10), true},
		// The claim window ladder (an hour's window by default here; 10
		// minutes under 2 h to the start, 30 under 24 h).
		{"ladder: under 2 h, the shortest step", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 11, 30), rules(noQuiet, ladder), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 10), true},
		{"ladder: exactly 2 h is the next step", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 12, 0), rules(noQuiet, ladder), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 30), true},
		{"ladder: under 24 h", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 11, 9, 0), rules(noQuiet, ladder), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 30), true},
		{"ladder: further off, the claim window", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 12, 9, 0), rules(noQuiet, ladder), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 11, 0), true},
		{"ladder: still capped at the start minus the lead", at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 20), rules(noQuiet, ladder), london,
			nextup.OfferOffered, at(london, 2026, 6, 10, 10, 0), at(london, 2026, 6, 10, 10, 5), true},
		{"ladder: held back by quiet hours, the step for the lead at sending", at(london, 2026, 6, 10, 23, 0), at(london, 2026, 6, 11, 9, 30), rules(ladder), london,
			nextup.OfferPending, at(london, 2026, 6, 11, 8, 0), at(london, 2026, 6, 11, 8, 10), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state, sendAt, expiresAt, ok := engine.OfferWindow(tt.now, tt.start, tt.rules, tt.loc)
			if state != tt.state || !sendAt.Equal(tt.sendAt) || !expiresAt.Equal(tt.expiresAt) || ok != tt.ok {
				t.Errorf("OfferWindow = %s, send %v, expires %v, %v; want %s, send %v, expires %v, %v",
					state, sendAt.UTC(), expiresAt.UTC(), ok, tt.state, tt.sendAt.UTC(), tt.expiresAt.UTC(), tt.ok)
			}
		})
	}
}

func TestDayStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    time.Time
		loc  *time.Location
		want time.Time
	}{
		{"summer London", at(london, 2026, 6, 10, 15, 0), london, utc(2026, 6, 9, 23, 0)},
		{"local day ahead of UTC", utc(2026, 6, 10, 23, 30), london, utc(2026, 6, 10, 23, 0)},
		{"nil location is UTC", utc(2026, 6, 10, 23, 30), nil, utc(2026, 6, 10, 0, 0)},
		{"London spring day (23 hours)", utc(2026, 3, 29, 22, 0), london, utc(2026, 3, 29, 0, 0)},
		{"London fall day (25 hours)", utc(2026, 10, 25, 23, 0), london, utc(2026, 10, 24, 23, 0)},
		{"New York spring day", at(newYork, 2026, 3, 8, 12, 0), newYork, utc(2026, 3, 8, 5, 0)},
		{"New York fall day", at(newYork, 2026, 11, 1, 23, 0), newYork, utc(2026, 11, 1, 4, 0)},
		{"Santiago: midnight skipped, day starts at the jump", at(santiago, 2026, 9, 6, 12, 0), santiago, utc(2026, 9, 6, 4, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := engine.DayStart(tt.t, tt.loc); !got.Equal(tt.want) {
				t.Errorf("DayStart = %v, want %v", got.UTC(), tt.want)
			}
		})
	}
}

func TestReminderAt(t *testing.T) {
	t.Parallel()
	loc, _ := time.LoadLocation("Europe/London")
	at := func(day, h, m int) time.Time { return time.Date(2026, 12, day, h, m, 0, 0, loc) }
	q := quiet(21, 0, 8, 0)
	now := at(1, 10, 0)
	for _, c := range []struct {
		name          string
		due, startsAt time.Time
		want          time.Time
		ok            bool
	}{
		{"awake", at(3, 14, 0), at(4, 14, 0), at(3, 14, 0), true},
		{"quiet morning, moved to its end", at(3, 7, 30), at(4, 7, 30), at(3, 8, 0), true},
		{"quiet evening, moved to its end", at(3, 22, 0), at(4, 22, 0), at(4, 8, 0), true},
		{"the end is after the start: a minute before quiet began", at(4, 6, 30), at(4, 7, 30), at(3, 20, 59), true},
		{"evening quiet, start after midnight", at(3, 23, 30), at(4, 0, 30), at(3, 20, 59), true},
		{"already past", at(1, 9, 0), at(1, 12, 0), at(1, 9, 0), false},
		{"past and quiet: not moved forward", at(1, 7, 30), at(2, 7, 30), at(1, 7, 30), false},
		{"moved before now", at(2, 6, 0), at(2, 7, 0), at(1, 20, 59), true},
		{"moved before now, skipped", at(1, 22, 0), at(1, 23, 0), at(1, 20, 59), true},
	} {
		n := now
		if c.name == "moved before now, skipped" {
			n = at(1, 21, 30)
			c.ok = false
		}
		got, ok := engine.ReminderAt(c.due, c.startsAt, n, q, loc)
		if !got.Equal(c.want) || ok != c.ok {
			t.Errorf("%s: ReminderAt(%s, start %s) = %s, %v; want %s, %v", c.name, c.due, c.startsAt, got, ok, c.want, c.ok)
		}
	}
	// Without quiet hours it is the due time, while before the start.
	if got, ok := engine.ReminderAt(at(3, 3, 0), at(3, 4, 0), now, nil, loc); !got.Equal(at(3, 3, 0)) || !ok {
		t.Errorf("no quiet hours: %s %v", got, ok)
	}
}

func tod(t *testing.T, s string) nextup.TimeOfDay {
	t.Helper()
	v, err := nextup.ParseTimeOfDay(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNextDaily(t *testing.T) {
	t.Parallel()
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name  string
		zone  string
		after string // RFC 3339
		at    string
		want  string // RFC 3339, compared as an instant
	}{
		{"later today", "UTC", "2031-03-10T02:00:00Z", "03:00", "2031-03-10T03:00:00Z"},
		{"earlier today is tomorrow", "UTC", "2031-03-10T09:00:00Z", "03:00", "2031-03-11T03:00:00Z"},
		{"exactly at is tomorrow", "UTC", "2031-03-10T03:00:00Z", "03:00", "2031-03-11T03:00:00Z"},
		{"local day, not UTC day", "America/Los_Angeles", "2031-03-10T07:00:00Z", "03:00", "2031-03-10T10:00:00Z"},
		{"midnight as 24:00", "Europe/London", "2031-03-10T09:00:00Z", "24:00", "2031-03-11T00:00:00Z"},
		{"24:00 a minute away", "Europe/London", "2031-03-10T23:59:00Z", "24:00", "2031-03-11T00:00:00Z"},
		{"00:00 is the same as 24:00 of the day before", "Europe/London", "2031-03-10T23:59:00Z", "00:00", "2031-03-11T00:00:00Z"},

		// New York springs forward at 02:00 on 9 March 2025: 02:30 never
		// happens, and the run moves on by the gap.
		{"spring gap", "America/New_York", "2025-03-09T05:00:00Z", "02:30", "2025-03-09T07:30:00Z"}, // 03:30 EDT
		{"after the gap day", "America/New_York", "2025-03-09T07:30:00Z", "02:30", "2025-03-10T06:30:00Z"},
		// New York falls back at 02:00 on 2 November 2025: 01:30 happens
		// twice; only the first counts.
		{"fall overlap, first", "America/New_York", "2025-11-02T04:00:00Z", "01:30", "2025-11-02T05:30:00Z"}, // 01:30 EDT
		{"fall overlap, not twice", "America/New_York", "2025-11-02T05:30:00Z", "01:30", "2025-11-03T06:30:00Z"},
		// Berlin, east of Greenwich, where time.Date picks the second
		// occurrence.
		{"berlin spring gap", "Europe/Berlin", "2025-03-29T23:00:00Z", "02:30", "2025-03-30T01:30:00Z"},     // 03:30 CEST
		{"berlin overlap, first", "Europe/Berlin", "2025-10-25T22:00:00Z", "02:30", "2025-10-26T00:30:00Z"}, // 02:30 CEST
		{"berlin overlap, not twice", "Europe/Berlin", "2025-10-26T00:30:00Z", "02:30", "2025-10-27T01:30:00Z"},
		// Lord Howe Island moves by half an hour: 01:45 happens twice on
		// 6 April 2025 (+11 then +10:30).
		{"half-hour overlap", "Australia/Lord_Howe", "2025-04-05T13:00:00Z", "01:45", "2025-04-05T14:45:00Z"},
		{"half-hour overlap, not twice", "Australia/Lord_Howe", "2025-04-05T14:45:00Z", "01:45", "2025-04-06T15:15:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoad(tt.zone)
			got := engine.NextDaily(utc(tt.after), tod(t, tt.at), loc)
			if want := utc(tt.want); !got.Equal(want) {
				t.Errorf("NextDaily(%s, %s, %s) = %s (%s), want %s (%s)",
					tt.after, tt.at, tt.zone, got.UTC(), got.In(loc), want, want.In(loc))
			}
			if got.Location() != loc {
				t.Errorf("result is in %v, want %v", got.Location(), loc)
			}
		})
	}
}

// TestNextDailyOncePerLocalDay chains NextDaily through two years in zones
// with and without daylight saving: every local day gets exactly one run,
// at the asked wall-clock time except on a day it does not exist.
func TestNextDailyOncePerLocalDay(t *testing.T) {
	t.Parallel()
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Chatham", "America/Santiago"}
	times := []string{"00:00", "00:30", "01:30", "02:00", "02:30", "03:00", "12:00", "23:59"}
	for _, zone := range zones {
		loc := mustLoad(zone)
		for _, s := range times {
			at := tod(t, s)
			start := time.Date(2025, 1, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
			prev := start
			wantDay := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC) // calendar date only
			for range 730 {
				next := engine.NextDaily(prev, at, loc)
				if !next.After(prev) {
					t.Fatalf("%s %s: NextDaily(%v) = %v, not after", zone, s, prev, next)
				}
				y, m, d := next.In(loc).Date()
				wy, wm, wd := wantDay.Date()
				if y != wy || m != wm || d != wd {
					t.Fatalf("%s %s: after %v came %v; want a run on %d-%02d-%02d", zone, s, prev.In(loc), next.In(loc), wy, wm, wd)
				}
				local := next.In(loc)
				if local.Hour() != at.Hour() || local.Minute() != at.Minute() {
					// Only a day whose at is skipped by a jump may differ,
					// and then only by that jump, forwards.
					wall := time.Date(y, m, d, at.Hour(), at.Minute(), 0, 0, time.UTC)
					got := time.Date(y, m, d, local.Hour(), local.Minute(), 0, 0, time.UTC)
					if shift := got.Sub(wall); shift <= 0 || shift > time.Hour {
						t.Fatalf("%s %s: run on %v is %v from the asked time", zone, s, local, shift)
					}
					if _, off1 := next.Add(-time.Hour).In(loc).Zone(); func() bool { _, off2 := next.In(loc).Zone(); return off1 == off2 }() {
						t.Fatalf("%s %s: run on %v is off the asked time on a day without a jump", zone, s, local)
					}
				}
				prev = next
				wantDay = wantDay.AddDate(0, 0, 1)
			}
		}
	}
}
