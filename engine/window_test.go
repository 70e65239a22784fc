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
	const m = time.Minute
	rules := func(mods ...func(*nextup.Rules)) nextup.Rules {
		r := nextup.DefaultRules() // 10-minute window, quiet 21:00–08:00, 15-minute lead
		for _, mod := range mods {
			mod(&r)
		}
		return r
	}
	critical := func(r *nextup.Rules) { r.TimeCriticalThroughQuiet = true }
	noLead := func(r *nextup.Rules) { r.MinLead = 0 }
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
