package engine

import (
	"time"

	"github.com/nextup-dev/nextup"
)

// Every boundary below (a day's midnight, the start and end of quiet hours)
// is built with time.Date in the business timezone, never by adding 24h to
// another boundary: on the night clocks change a local day is 23 or 25
// hours long, and quiet hours still end at 08:00 on the wall clock.

// maxQuietPeriods bounds the loop in AddAwake. More than a year of daily
// quiet periods is far beyond any valid claim window (at most seven days);
// rules that are quiet all day long would otherwise never finish.
const maxQuietPeriods = 400

// wallTime returns the instant the wall clock in loc reads the given
// minute of the local day y-m-d (1440 is the end of the day). When that wall
// time does not exist because the clocks jump over it, it returns the
// instant of the jump, the first moment the wall clock has passed it:
// time.Date alone resolves such times inconsistently across zones (in
// America/Santiago midnight of a spring-forward day lands on 23:00 the day
// before).
func wallTime(y int, m time.Month, d, minute int, loc *time.Location) time.Time {
	r := time.Date(y, m, d, 0, minute, 0, 0, loc)
	want := time.Date(y, m, d, 0, minute, 0, 0, time.UTC)
	ry, rm, rd := r.Date()
	got := time.Date(ry, rm, rd, r.Hour(), r.Minute(), r.Second(), r.Nanosecond(), time.UTC)
	if got.Equal(want) {
		return r
	}
	start, end := r.ZoneBounds()
	if got.Before(want) && !end.IsZero() {
		return end
	}
	if got.After(want) && !start.IsZero() {
		return start
	}
	return r
}

// DayStart returns the first instant of t's local day in loc (nil means
// UTC): the boundary of the per-person daily offer cap, which counts a
// business local day, not a UTC one.
func DayStart(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	return wallTime(y, m, d, 0, loc)
}

// quietMinutes returns q's start and end in minutes of the day, clamped to
// a day, and false when there are no quiet hours: q is nil or its interval
// is empty. Start equal to end is rejected by Rules.Validate, and 24:00 to
// 00:00 is empty too; the engine must neither loop nor panic on either.
// (00:00 to 24:00 is the opposite, quiet all day long; see OfferWindow.)
func quietMinutes(q *nextup.QuietHours) (start, end int, ok bool) {
	if q == nil {
		return 0, 0, false
	}
	start = min(max(int(q.Start), 0), 24*60)
	end = min(max(int(q.End), 0), 24*60)
	return start, end, start != end && !(start == 24*60 && end == 0)
}

// InQuietHours reports whether t falls inside the quiet hours q in the
// business timezone loc (nil means UTC), and if so when they end. The
// interval is [start, end); a start after the end crosses midnight
// (21:00–08:00), so 23:00 and 07:59 are quiet, 08:00 is not. q nil means
// the business has no quiet hours.
func InQuietHours(t time.Time, q *nextup.QuietHours, loc *time.Location) (in bool, endsAt time.Time) {
	start, end, ok := quietMinutes(q)
	if !ok {
		return false, time.Time{}
	}
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	if start < end {
		s, e := wallTime(y, m, d, start, loc), wallTime(y, m, d, end, loc)
		if !t.Before(s) && t.Before(e) {
			return true, e
		}
		return false, time.Time{}
	}
	// Crossing midnight: the evening part started today and ends tomorrow,
	// the morning part started yesterday and ends today.
	if e := wallTime(y, m, d, end, loc); t.Before(e) {
		return true, e
	}
	if s := wallTime(y, m, d, start, loc); !t.Before(s) {
		if e := wallTime(y, m, d+1, end, loc); t.Before(e) {
			return true, e
		}
	}
	return false, time.Time{}
}

// NextQuietStart returns the earliest start of quiet hours at or after t in
// loc (nil means UTC), or the zero time when q defines none. Called outside
// quiet hours, it is the moment a running claim window has to pause; called
// inside, it is the start of the next period (or t itself when t is a
// start).
func NextQuietStart(t time.Time, q *nextup.QuietHours, loc *time.Location) time.Time {
	start, _, ok := quietMinutes(q)
	if !ok {
		return time.Time{}
	}
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	for i := range 4 {
		// A period that clocks jumping forward swallow whole (quiet
		// 00:00–00:30 on a night that skips from 00:00 to 01:00) is empty
		// and not a start at all.
		s := wallTime(y, m, d+i, start, loc)
		if in, _ := InQuietHours(s, q, loc); in && !s.Before(t) {
			return s
		}
	}
	// Unreachable for real zones: no zone swallows three nights running.
	return t
}

// AddAwake returns t plus d, counting only time outside the quiet hours q
// in loc, so that sleep does not eat a claim window: if t is inside quiet
// hours counting starts when they end, and a window that runs into the next
// quiet hours pauses there and carries on when they end. An offer sent at
// 20:55 with a ten-minute window and quiet hours 21:00–08:00 expires at
// 08:05 the next morning. Without quiet hours it is t.Add(d). A d below
// zero counts as zero.
func AddAwake(t time.Time, d time.Duration, q *nextup.QuietHours, loc *time.Location) time.Time {
	d = max(d, 0)
	if _, _, ok := quietMinutes(q); !ok {
		return t.Add(d)
	}
	cur, rest := t, d
	for range maxQuietPeriods {
		if in, end := InQuietHours(cur, q, loc); in {
			cur = end
			continue
		}
		next := NextQuietStart(cur, q, loc)
		awake := next.Sub(cur)
		if awake <= 0 || awake >= rest {
			// awake <= 0 cannot happen with real zones (NextQuietStart
			// returns a quiet instant, and cur is awake); stopping beats
			// looping on it.
			return cur.Add(rest)
		}
		rest -= awake
		cur = next
	}
	return cur.Add(rest)
}

// OfferWindow works out how an offer made at now for a slot starting at
// slotStart is sent and when it expires, under rules in the business
// timezone loc (nil means UTC). This is guardrail 3.
//
// The claim window is the rules' for the time from sending to the slot's
// start (Rules.WindowFor: the claim window ladder, or the claim window).
// Outside quiet hours the offer is sent now. Inside them it is held back as
// pending and sent when they end, with its claim window starting then;
// except that a time-critical offer (the slot starts before quiet hours end
// plus a window) is sent now when the business allows it. Either way the
// window counts only awake time (AddAwake), and it never runs past the slot
// start minus the minimum lead time, because a claim after that leaves the
// business no time to prepare. ok is false when that leaves no time to
// claim at all (expiresAt not after sendAt): the caller hands the slot back
// as too_soon rather than send an offer nobody can take.
func OfferWindow(now, slotStart time.Time, rules nextup.Rules, loc *time.Location) (state nextup.OfferState, sendAt, expiresAt time.Time, ok bool) {
	if loc == nil {
		loc = time.UTC
	}
	q := rules.QuietHours
	if start, end, ok := quietMinutes(q); ok && start == 0 && end == 24*60 {
		// Quiet all day long: there is no moment an offer may be sent,
		// so staff get the slot rather than a message at a forbidden hour.
		return nextup.OfferPending, now, now, false
	}
	limit := slotStart.Add(-rules.MinLead)
	state, sendAt = nextup.OfferOffered, now
	if in, end := InQuietHours(now, q, loc); in {
		timeCritical := slotStart.Before(end.Add(rules.WindowFor(slotStart.Sub(end))))
		if !timeCritical || !rules.TimeCriticalThroughQuiet {
			state, sendAt = nextup.OfferPending, end
		}
	}
	// The window by the ladder, for the time left when the person gets
	// the offer.
	expiresAt = AddAwake(sendAt, rules.WindowFor(slotStart.Sub(sendAt)), q, loc)
	if expiresAt.After(limit) {
		expiresAt = limit
	}
	return state, sendAt, expiresAt, expiresAt.After(sendAt)
}

// ReminderAt places a booking reminder that is due at due, for a slot
// starting at startsAt, outside the quiet hours q: a reminder due in quiet
// hours goes when they end if that is still before the slot starts (the
// 24-hour reminder of a 07:30 appointment goes at 08:00 the day before),
// else a minute before they began (the 1-hour reminder of a 07:30
// appointment goes at 20:59 the evening before). ok is false when the
// time it lands on is not after now or not before the start: that
// reminder is skipped (a booking made an hour before its slot gets no
// 24-hour reminder; its confirmation says it all), and so is one due
// before now in the first place, even if quiet hours would move it later.
func ReminderAt(due, startsAt, now time.Time, q *nextup.QuietHours, loc *time.Location) (at time.Time, ok bool) {
	if !due.After(now) {
		return due, false // its time has passed: not moved forward
	}
	if in, end := InQuietHours(due, q, loc); in {
		if end.Before(startsAt) {
			due = end
		} else {
			due = quietBegan(due, q, loc).Add(-time.Minute)
		}
	}
	return due, due.After(now) && due.Before(startsAt)
}

// quietBegan is the start of the quiet period t is in: the latest start of
// quiet hours at or before t.
func quietBegan(t time.Time, q *nextup.QuietHours, loc *time.Location) time.Time {
	start, _, _ := quietMinutes(q)
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	if s := wallTime(y, m, d, start, loc); !s.After(t) {
		return s
	}
	return wallTime(y, m, d-1, start, loc)
}

// NextDaily returns the first moment strictly after after at which the wall
// clock in loc reads at, counting one moment per local day:
//
//   - when at falls in a daylight-saving gap (02:30 on a spring-forward
//     night), that day's moment is at moved forward by the gap (03:30 in
//     the new offset), the same instant the clock would have shown had it
//     not jumped;
//   - when at occurs twice (01:30 on a fall-back night), only the first
//     occurrence counts, so a daily timer never fires twice in one day.
//
// An at of 24:00 means midnight at the end of the day.
func NextDaily(after time.Time, at nextup.TimeOfDay, loc *time.Location) time.Time {
	local := after.In(loc)
	y, m, d := local.Date()
	// The moment of the local day before after's can still lie after it
	// (at = 24:00, or a day whose moment was pushed through a gap), so
	// start one day early.
	for k := -1; ; k++ {
		if t := dailyAt(y, m, d+k, at, loc); t.After(after) {
			return t
		}
	}
}

// dailyAt returns the moment of local day y-m-d at which the wall clock in
// loc reads at, resolved as NextDaily describes.
func dailyAt(y int, m time.Month, d int, at nextup.TimeOfDay, loc *time.Location) time.Time {
	// The wall-clock reading we want, as if it were UTC. time.Date
	// normalises d out of range and hour 24.
	wall := time.Date(y, m, d, at.Hour(), at.Minute(), 0, 0, time.UTC)
	// Every offset loc uses around that day; a day has at most one
	// transition in any real zone, so the offsets a day and a half either
	// side cover it. (time.Date with loc picks an arbitrary side of a
	// transition, which is why we do not use it.)
	offsets := make([]int, 0, 3)
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		offsets = append(offsets, off)
	}
	var best time.Time
	for _, off := range offsets {
		t := wall.Add(-time.Duration(off) * time.Second)
		if !sameWall(t.In(loc), wall) {
			continue
		}
		if best.IsZero() || t.Before(best) {
			best = t
		}
	}
	if !best.IsZero() {
		return best.In(loc)
	}
	// A gap: read the wall clock with the offset in force before it.
	return wall.Add(-time.Duration(offsets[0]) * time.Second).In(loc)
}

func sameWall(t, wall time.Time) bool {
	y1, m1, d1 := t.Date()
	y2, m2, d2 := wall.Date()
	return y1 == y2 && m1 == m2 && d1 == d2 && t.Hour() == wall.Hour() && t.Minute() == wall.Minute() &&
		t.Second() == wall.Second() && t.Nanosecond() == wall.Nanosecond()
}
