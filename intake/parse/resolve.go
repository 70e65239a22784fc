package parse

import (
	"sort"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// link joins items written as ranges ("from the 30th to the 2nd",
// "Monday to Wednesday", "between the 3rd and the 5th") and groups items
// written as a list ("Thursday or Friday").
func (r *reader) link(items []*item) []*item {
	var out []*item
	for k := 0; k < len(items); k++ {
		it := items[k]
		if it.group == 0 {
			r.groups++
			it.group = r.groups
		}
		if k+1 < len(items) {
			nx := items[k+1]
			between := r.span(it.end, nx.pos)
			isRange := between == "to" || between == "until" || between == "till" || between == "through" ||
				between == "thru" || between == "-" || between == "to the" || between == "until the" || between == "till the" ||
				between == "and" && r.word(it.pos-1, len(r.toks)) == "between" ||
				between == "and the" && r.word(it.pos-1, len(r.toks)) == "between"
			if isRange && it.weekday && nx.weekday && !it.wdRange {
				it.wdRange, it.toWd = true, nx.wd
				if it.anchor == "" {
					it.anchor = nx.anchor
				}
				if it.recurring || nx.recurring {
					it.recurring = true
					it.days = weekdaySet(it.wd, nx.wd)
				}
				it.end = nx.end
				out = append(out, it)
				k++
				continue
			}
			// "from today until Friday", "the 4th to Friday": a weekday
			// ending a range is the first one after its start. A dash set
			// apart by spaces starts a clause instead ("we fly home on the
			// 18th - Friday afternoon would be best").
			spacedDash := between == "-" && r.toks[it.end].space && it.end+1 < len(r.toks) && r.toks[it.end+1].space
			if isRange && !spacedDash && !it.weekday && !it.recurring && !it.week && !it.month && !it.from.IsZero() &&
				nx.weekday && !nx.recurring && !nx.wdRange && (nx.anchor == "" || nx.anchor == "coming" || nx.anchor == "this") {
				d := addDays(it.to, 1)
				for d.Weekday() != nx.wd {
					d = addDays(d, 1)
				}
				it.to, it.end = d, nx.end
				it.context = it.context && nx.context
				out = append(out, it)
				k++
				continue
			}
			if isRange && !it.weekday && !nx.weekday && !it.recurring && !nx.recurring && !it.from.IsZero() && !nx.from.IsZero() {
				if it.anchor == "month?" && nx.anchor != "month?" {
					// A day without a month takes the month written after it.
					d := it.from.Day()
					y, m := nx.from.Year(), nx.from.Month()
					if d > nx.from.Day() {
						m--
					}
					if x := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); x.Day() == d {
						it.from = x
					}
				}
				if !nx.to.Before(it.from) {
					it.to = nx.to
					it.end = nx.end
					it.context = it.context && nx.context
					out = append(out, it)
					k++
					continue
				}
			}
			if nx.relative && !nx.context && it.context && alternativeJoin(between) {
				// "on Australia Day if you're open, or otherwise the day
				// after", "op Koningsdag of de dag erna": the day counted
				// from is asked for too.
				it.context = false
			}
			switch between {
			case "or", "and", ",", ", or", "or on", "/", ", and", "or the", "and the", "or on the", "or next":
				nx.group = it.group
				if it.weekday && nx.weekday && nx.anchor == "" && !nx.recurring && (it.anchor == "next" || it.anchor == "this" || it.anchor == "coming") {
					nx.anchor = it.anchor // "next Tuesday or Wednesday": both next week's
				}
				if nx.relative && !nx.context {
					// "Australia Day, or the day after": the day counted
					// from is asked for too.
					it.context = false
				}
			case "of":
				// Dutch "dinsdag of donderdag", "vrijdag of de maandag
				// erna", "morgen of overmorgen": English reads "of"
				// inside a date ("the 3rd of May"), never between two.
				nx.group = it.group
			}
		}
		if it.now {
			continue // "between now and then": no range, so no day
		}
		out = append(out, it)
	}
	return out
}

// alternativeWords offer one day as an alternative to another, in each
// language.
var alternativeWords = map[string]bool{
	"or": true, "otherwise": true, "else": true, "alternatively": true, "failing": true, "oder": true,
	"sonst": true, "ansonsten": true, "ou": true, "sinon": true, "o": true, "si": true, "of": true, "anders": true,
}

// alternativeJoin reports whether the words between two days offer the
// second as an alternative: "or", ", or otherwise", "if you're open, or
// else", "oder sonst", "ou sinon", "o si no", "of anders".
func alternativeJoin(between string) bool {
	ws := strings.Fields(strings.ReplaceAll(between, ",", " "))
	if len(ws) == 0 || len(ws) > 8 {
		return false
	}
	return alternativeWords[ws[len(ws)-1]] || len(ws) > 1 && alternativeWords[ws[len(ws)-2]]
}

// anchor gives weekdays their dates, or makes them weekly patterns. A
// weekday falls in the week its sentence names ("Thursday and Friday next
// week"), else on the date its sentence names that falls on it ("the 18th,
// or the 19th if Friday is full"), else in a short span its sentence names
// ("15-17 May, the Saturday afternoon"; "we arrive on the 15th and fly home
// on the 18th - Friday afternoon"), else becomes a pattern when the
// sentence speaks of any week or a month ("a Thursday or Friday in June",
// "only Saturday mornings"), else in the week or weekend an earlier
// sentence named, else it is the next such day.
func (r *reader) anchor(a, b int, items []*item) {
	var week, rng *item
	var dates []*item // single days and short ranges the sentence dates
	sentAnchor := ""
	hasMonth := false
	for _, it := range items {
		switch {
		case it.week || it.span:
			week = it
		case it.month:
			hasMonth = true
		case !it.weekday && !it.recurring && !it.from.IsZero() && it.to.After(it.from) && it.to.Sub(it.from) <= 6*24*time.Hour:
			rng = it
		}
		if !it.weekday && !it.recurring && !it.from.IsZero() && !it.week && !it.span && !it.month && !it.relative {
			dates = append(dates, it)
		}
		if it.anchor == "this week" || it.anchor == "next week" {
			sentAnchor = it.anchor
		}
	}
	if rng == nil && len(dates) > 1 {
		// The sentence's dates, taken together, as a span ("we arrive on
		// the 15th and fly home on the 18th").
		f, t := dates[0].from, dates[0].to
		for _, it := range dates {
			if it.from.Before(f) {
				f = it.from
			}
			if it.to.After(t) {
				t = it.to
			}
		}
		if t.Sub(f) <= 6*24*time.Hour {
			rng = &item{from: f, to: t}
		}
	}
	patterned := false
	for i := a; i < b; i++ {
		w := r.toks[i].w
		if (w == "any" || w == "every" || w == "each") && (r.word(i+1, b) == "week" || r.word(i+1, b) == "weeks") {
			patterned = true
		}
		if w == "only" || w == "usually" || w == "generally" || w == "always" {
			patterned = true
		}
	}
	recurringGroup := map[int]bool{}
	for _, it := range items {
		if it.recurring && it.weekday {
			recurringGroup[it.group] = true
		}
	}
	for _, it := range items {
		if !it.weekday || it.recurring {
			continue
		}
		inWeek := func(s day) {
			it.from = s
			for it.from.Weekday() != it.wd {
				it.from = addDays(it.from, 1)
			}
			it.to = it.from
			if it.wdRange {
				it.to = it.from
				for it.to.Weekday() != it.toWd {
					it.to = addDays(it.to, 1)
				}
			}
		}
		// inSpan places the weekday in a span when the span holds it.
		inSpan := func(sp *item) bool {
			inWeek(sp.from)
			return !it.to.After(sp.to)
		}
		named := 0
		var same *item
		for _, d := range dates {
			if d.from.Equal(d.to) && d.from.Weekday() == it.wd {
				named++
				same = d
			}
		}
		switch {
		case it.anchor == "next week" || it.anchor == "" && sentAnchor == "next week":
			s, _ := r.nextWeek()
			inWeek(s)
		case it.anchor == "this week" || it.anchor == "" && sentAnchor == "this week":
			s, _ := r.thisWeek()
			inWeek(r.weekStart(s))
			if it.from.Before(r.today) {
				inWeek(r.today)
			}
		case week != nil && it.anchor != "next" && inSpan(week):
			week.refined = true
		case named == 1 && !it.wdRange && same.pos > it.pos && (it.anchor == "" || it.anchor == "this" || it.anchor == "coming" || it.anchor == "on"):
			// "this Saturday afternoon (the 6th)": the date says which
			// Saturday, and stands where the weekday does, so that what
			// was said with the weekday is said of it.
			it.from, it.to = same.from, same.to
			it.refined, it.dateOf = true, same
		case it.anchor == "" && named == 1 && !it.wdRange:
			// "if Friday is full": the weekday of a date just given.
			it.from, it.to = same.from, same.to
			it.refined = true
		case it.anchor == "" && named == 0 && !it.wdRange && !hasMonth && r.earlierDay(it.wd) != nil:
			// "on Saturday May 8 ... Saturday works better for everyone":
			// a bare weekday a later sentence names is the dated day of
			// that weekday already asked for, not the coming one. Said
			// with a month ("a Saturday in March") it is any of its own.
			same := r.earlierDay(it.wd)
			it.from, it.to = same.from, same.to
			it.refined = true
		case recurringGroup[it.group] || hasMonth || patterned && it.anchor == "":
			it.recurring = true
			if it.wdRange {
				it.days = weekdaySet(it.wd, it.toWd)
			} else {
				it.days = map[time.Weekday]bool{it.wd: true}
			}
		case rng != nil && it.anchor != "next" && inSpan(rng):
			rng.refined = true
			for _, d := range dates {
				if !d.from.Before(rng.from) && !d.to.After(rng.to) {
					d.refined = true
				}
			}
		case r.lastWeek != nil && it.anchor == "" && inSpan(r.lastWeek):
			r.lastWeek.refined = true
		case it.anchor == "next":
			s, _ := r.nextWeek()
			inWeek(s)
			// "next Friday" said early in a week may mean this week's.
			if up := r.upcoming(it.wd); up.After(r.today) && up.Before(s) {
				r.doubt(it.pos, it.end)
			}
		default:
			inWeek(r.today)
			if it.anchor == "" && r.today.Weekday() == it.wd && !it.wdRange {
				// "Friday", written on a Friday: today, or a week today?
				r.doubt(it.pos, it.end)
			}
		}
	}
	if week != nil {
		r.lastWeek = week
	}
}

// earlierDay is the one single day of weekday wd that an earlier sentence
// named, even as background ("for our anniversary on Saturday May 8"),
// or nil when there is none or more than one.
func (r *reader) earlierDay(wd time.Weekday) *item {
	var same *item
	for _, d := range r.items {
		if d.recurring || d.from.IsZero() || !d.from.Equal(d.to) || d.from.Weekday() != wd {
			continue
		}
		if same != nil && !same.from.Equal(d.from) {
			return nil
		}
		same = d
	}
	return same
}

// attach gives each part of the day to the days it was said with: the day
// just before it ("Friday after 3pm or Saturday"), all of a list when it
// comes after the whole list and no day of the list has its own
// ("Thursday or Friday this week after 5"), the day after it when none is
// before ("mornings, Tuesday to Thursday"), and every day when its
// sentence names none ("Any time from 10 o'clock.").
func (r *reader) attach(a, b int, items []*item, wins []tw) {
	same := false
	for i := a; i+1 < b; i++ {
		if r.toks[i].w == "same" && r.toks[i+1].w == "time" {
			same = true
		}
	}
	// Parts of the day side by side narrow each other ("afternoon from
	// 2pm", "mornings only (before 12)"); "or" between them makes two.
	type mw struct {
		ws       []window
		pos, end int
		point    bool
	}
	var merged []mw
	for _, w := range wins {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			dayBetween := false
			for _, it := range items {
				if it.pos > last.pos && it.pos < w.pos {
					dayBetween = true
				}
			}
			orBetween := false
			for i := last.end; i < w.pos; i++ {
				if r.toks[i].w == "or" {
					orBetween = true
				}
			}
			if !dayBetween {
				switch {
				case orBetween:
					last.ws = append(last.ws, w.w)
				case last.point != w.point:
					// "Around noon would be ideal, I'm on my lunch
					// break": the moment said wins over the part of the
					// day beside it.
					if w.point {
						last.ws[len(last.ws)-1] = w.w
						last.point = true
					}
				default:
					if x := last.ws[len(last.ws)-1].and(w.w); !x.empty() {
						last.ws[len(last.ws)-1] = x
					} else {
						last.ws[len(last.ws)-1] = w.w
					}
				}
				last.end = w.pos + 1
				continue
			}
		}
		merged = append(merged, mw{ws: []window{w.w}, pos: w.pos, end: w.pos + 1, point: w.point})
	}
	for _, m := range merged {
		r.lastTODs = m.ws
		// Background days take no part of the day that a day asked for
		// can take ("back at school on the 26th, any morning from then
		// until the 30th").
		var before, after *item
		asked := false
		for _, it := range items {
			asked = asked || !it.context
		}
		for _, it := range items {
			if it.context && asked && it.end != m.pos {
				continue // but "an interview on Monday morning" keeps its morning
			}
			if it.pos < m.pos && (before == nil || it.pos > before.pos) {
				before = it
			}
			if it.pos > m.pos && (after == nil || it.pos < after.pos) {
				after = it
			}
		}
		target := before
		if target == nil {
			target = after
		}
		if target != nil && target.dateOf != nil {
			target = target.dateOf // "this Saturday afternoon (the 6th)"
		}
		if target == nil {
			r.windows = append(r.windows, m.ws...)
			continue
		}
		all := true
		for _, it := range items {
			if it.group == target.group && (it.pos > m.pos || it != target && len(it.tods) > 0) {
				all = false
			}
		}
		// "next Tuesday, or Thursday the 10th in the morning": an
		// alternative set apart by a comma and said differently from the
		// rest keeps its part of the day to itself.
		for k, it := range items {
			if it == target && k > 0 && items[k-1].group == it.group && shape(items[k-1]) != shape(it) &&
				strings.Contains(r.span(items[k-1].end, it.pos), ",") {
				all = false
			}
		}
		for _, it := range items {
			if it == target || all && it.group == target.group {
				it.tods = andAll(it.tods, m.ws)
			}
		}
	}
	// "tmrw after 5 or thurs same time": the hours said of one day go to
	// the days said without hours of their own, in this sentence or the
	// next.
	if same && len(r.lastTODs) > 0 {
		for _, it := range items {
			if len(it.tods) == 0 {
				it.tods = append([]window(nil), r.lastTODs...)
			}
		}
	}
}

// shape is how an item was said: a weekday, a date, or a weekly pattern.
func shape(it *item) byte {
	switch {
	case it.recurring:
		return 'r'
	case it.weekday:
		return 'w'
	}
	return 'd'
}

// andAll narrows parts of the day already known by new ones (tonight, 8ish).
func andAll(have, add []window) []window {
	if len(have) == 0 {
		return append([]window(nil), add...)
	}
	var out []window
	for _, h := range have {
		for _, a := range add {
			if x := h.and(a); !x.empty() {
				out = append(out, x)
			}
		}
	}
	if len(out) == 0 {
		return append([]window(nil), add...)
	}
	return out
}

const maxSpanDays = 400

// openPatterns makes weekly patterns of the weekdays that would fall
// before the day the requester can start from, when nothing bounds the
// end: "I could start any time after the 1st of July; I'm free Tuesday
// and Thursday evenings", "vanaf 8 februari, op maandag, woensdag of
// vrijdag". Such weekdays say which days of any week suit, not which
// coming day.
func (r *reader) openPatterns() {
	// Days wholly outside the bounds are what the bounds count from ("I
	// get back on the 19th, so any time from the 20th"): background.
	for _, it := range r.items {
		if it.from.IsZero() || it.recurring {
			continue
		}
		if !r.lower.IsZero() && it.to.Before(r.lower) && !it.weekday || !r.upper.IsZero() && it.from.After(r.upper) {
			it.context = true
		}
	}
	if r.lower.IsZero() || !r.upper.IsZero() {
		return
	}
	for _, it := range r.items {
		// A range of weekdays beside an open start ("from Monday 18th
		// onwards, Monday to Friday") is the days of the week that suit,
		// wherever its coming days fall.
		if !it.weekday || it.recurring || it.refined || it.context || it.from.IsZero() || !it.to.Before(r.lower) && !it.wdRange {
			continue
		}
		switch it.anchor {
		case "", "on", "coming", "this":
		default:
			continue
		}
		it.recurring, it.days = true, map[time.Weekday]bool{it.wd: true}
		if it.wdRange {
			it.days = weekdaySet(it.wd, it.toWd)
		}
	}
}

// narrowSpans lets a range of dates said inside a month part or a week
// stand for it: "at the end of the month? I'm off from the 25th to the
// 29th", "early April, between the 3rd and the 6th", "Ende März, vom 25.
// bis 28.", "la semaine prochaine, du 13 au 15". The coarse span only
// said roughly what the range says exactly.
func (r *reader) narrowSpans() {
	for _, sp := range r.items {
		if !(sp.month || sp.week) || sp.context || sp.refined || sp.recurring || sp.from.IsZero() {
			continue
		}
		inside, ranged := 0, false
		for _, it := range r.items {
			if it == sp || it.month || it.week || it.span || it.context || it.refined || it.recurring || it.from.IsZero() {
				continue
			}
			if it.from.Before(sp.from) || it.to.After(sp.to) {
				inside = -1 // a day outside it is asked for too
				break
			}
			inside++
			ranged = ranged || it.to.After(it.from) && !it.weekday
		}
		if inside > 0 && ranged {
			sp.refined = true
		}
	}
}

// restateWords put dates after a coarse span as what it means: "on the
// weekend, so Saturday 1/23 or Sunday 1/24", "Ende Mai, also 24. bis
// 28.", "fin mai, donc du 24 au 28", "eind mei, dus 24 tot 28".
var restateWords = map[string]bool{"so": true, "namely": true, "meaning": true, "ie": true, "i.e": true, "also": true, "donc": true, "soit": true, "dus": true}

// restatedSpans lets the days said right after a week, weekend or month
// part, with a word that restates it, stand for it: the span said
// roughly what they say exactly, even where the two do not agree.
func (r *reader) restatedSpans() {
	for k, sp := range r.items {
		if !(sp.month || sp.week || sp.span) || sp.context || sp.refined || sp.recurring || sp.from.IsZero() || k+1 == len(r.items) {
			continue
		}
		i := sp.end
		if i < len(r.toks) && r.toks[i].w == "," {
			i++
		}
		if i >= len(r.toks) || !restateWords[r.toks[i].w] {
			continue
		}
		next := r.items[k+1]
		if next.sentence == sp.sentence && !next.context && !next.recurring && !next.from.IsZero() && next.pos <= i+2 {
			sp.refined = true
		}
	}
}

func (r *reader) result() when {
	r.openPatterns()
	r.narrowSpans()
	r.restatedSpans()
	var dated, recurring []*item
	var context []*item
	for _, it := range r.items {
		switch {
		case it.refined:
		case it.recurring:
			recurring = append(recurring, it)
		case it.from.IsZero():
		case it.context:
			context = append(context, it)
		default:
			dated = append(dated, it)
		}
	}
	if len(dated) == 0 {
		// Background dates stand in when nothing else is dated, but not
		// those the bounds said rule out ("closed over Christmas ... from
		// the 4th of January").
		for _, it := range context {
			if (r.lower.IsZero() || !it.to.Before(r.lower)) && (r.upper.IsZero() || !it.from.After(r.upper)) {
				dated = append(dated, it)
			}
		}
	}
	out := when{problems: r.probs}
	// Parts of the day said on their own apply to every day asked for.
	if len(r.windows) > 0 {
		for _, it := range append(append([]*item(nil), dated...), recurring...) {
			it.tods = andAll(it.tods, r.windows)
		}
	}
	allowed := map[time.Weekday]bool{}
	for d := time.Sunday; d <= time.Saturday; d++ {
		allowed[d] = !r.exclude[d]
	}
	if len(recurring) > 0 {
		pattern := map[time.Weekday]bool{}
		for _, it := range recurring {
			for d := range it.days {
				pattern[d] = true
			}
		}
		for d := range allowed {
			allowed[d] = allowed[d] && pattern[d]
		}
	}
	var avail []nextup.Availability
	addAvail := func(days map[time.Weekday]bool, tods []window) {
		var ds []time.Weekday
		for d := time.Sunday; d <= time.Saturday; d++ {
			if days[d] {
				ds = append(ds, d)
			}
		}
		if len(ds) == 0 {
			return
		}
		if len(tods) == 0 {
			tods = []window{allDay}
		}
		for _, w := range tods {
			avail = append(avail, nextup.Availability{Days: ds, From: nextup.TimeOfDay(w.from), To: nextup.TimeOfDay(w.to)})
		}
	}
	loc := r.ref.Location()
	at := func(d day, minutes int) time.Time {
		if minutes >= 1440 {
			return time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc).Add(-time.Microsecond)
		}
		return time.Date(d.Year(), d.Month(), d.Day(), minutes/60, minutes%60, 0, 0, loc)
	}

	contiguousDays := false
	withHours := false // the dates' hours already made the pattern's windows
	if len(dated) > 0 {
		sort.SliceStable(dated, func(i, j int) bool { return dated[i].from.Before(dated[j].from) })
		r.conflicts(dated)
		first, last := dated[0].from, dated[0].to
		covered := map[day]bool{}
		for _, it := range dated {
			if it.to.After(last) {
				last = it.to
			}
			for d, n := it.from, 0; !d.After(it.to) && n < maxSpanDays; d, n = addDays(d, 1), n+1 {
				covered[d] = true
			}
		}
		if !r.lower.IsZero() && r.lower.After(first) {
			first = r.lower
		}
		if !r.upper.IsZero() && r.upper.Before(last) {
			last = r.upper
		}
		var days []day
		for d, n := first, 0; !d.After(last) && n < maxSpanDays; d, n = addDays(d, 1), n+1 {
			if covered[d] && allowed[d.Weekday()] {
				days = append(days, d)
			}
		}
		if len(days) == 0 {
			out.problems = append(out.problems, "the days asked for and the days excluded leave nothing")
			days = []day{first}
		}
		contiguous := days[len(days)-1].Sub(days[0]) == time.Duration(len(days)-1)*24*time.Hour
		contiguousDays = contiguous
		start, end := days[0], days[len(days)-1]
		if !contiguous {
			start, end = first, last
		}
		// Parts of the day: one day with one window is a window; the same
		// windows on every day are weekly; a window only on the first or
		// last day moves that end.
		firstIt, lastIt := dated[0], dated[len(dated)-1]
		for _, it := range dated {
			if it.to.Equal(last) || it.to.After(lastIt.to) {
				lastIt = it
			}
		}
		common := len(firstIt.tods) > 0
		for _, it := range dated {
			if !sameWindows(it.tods, firstIt.tods) {
				common = false
			}
		}
		var dayDays map[time.Weekday]bool
		if !contiguous {
			dayDays = map[time.Weekday]bool{}
			for _, d := range days {
				dayDays[d.Weekday()] = true
			}
		}
		out.earliest, out.latest = at(start, 0), at(end, 1440)
		switch {
		case start.Equal(end) && common && len(firstIt.tods) == 1:
			out.earliest, out.latest = at(start, firstIt.tods[0].from), at(end, firstIt.tods[0].to)
		case common && len(recurring) == 0:
			if dayDays == nil {
				dayDays = weekdaySet(time.Sunday, time.Saturday)
			}
			addAvail(dayDays, firstIt.tods)
			dayDays = nil
		case common:
			// "Any weekday in the week of the 7th, lunchtimes": the
			// pattern's days, at the hours the dates were said with.
			ds := map[time.Weekday]bool{}
			for _, d := range days {
				ds[d.Weekday()] = true
			}
			addAvail(ds, firstIt.tods)
			dayDays = nil
			withHours = true
		default:
			if len(firstIt.tods) == 1 && firstIt.from.Equal(start) {
				out.earliest = at(start, firstIt.tods[0].from)
			}
			if len(lastIt.tods) == 1 && lastIt.to.Equal(end) && lastIt != firstIt {
				out.latest = at(end, lastIt.tods[0].to)
			}
		}
		if dayDays != nil && len(recurring) == 0 {
			addAvail(dayDays, nil)
		}
		out.conf = 0.8
	} else {
		if !r.lower.IsZero() {
			out.earliest = at(r.lower, 0)
			out.conf = 0.7
		}
		if !r.upper.IsZero() {
			out.latest = at(r.upper, 1440)
			out.conf = 0.7
		}
		if len(recurring) == 0 && (len(r.windows) > 0 || len(r.exclude) > 0) {
			addAvail(allowed, r.windows)
		}
	}
	// Weekly patterns, each with its parts of the day. When the dates
	// already say which days (the weekdays of next week), a pattern
	// without hours adds nothing.
	for _, it := range recurring {
		if len(dated) > 0 && (contiguousDays || withHours) && len(it.tods) == 0 {
			continue
		}
		days := map[time.Weekday]bool{}
		for d := range it.days {
			if allowed[d] {
				days[d] = true
			}
		}
		addAvail(days, it.tods)
	}
	out.availability = mergeAvailability(avail)
	if len(out.availability) > 0 && out.conf == 0 {
		out.conf = 0.7
	}
	if out.conf > 0 && len(out.problems) > 0 {
		out.conf -= 0.2
	}
	if len(r.unsure) > 0 {
		// Say so rather than pass a guess off as read: staff look at a
		// low confidence and the problem before they approve.
		out.conf = min(out.conf, unsureConfidence)
		if out.conf == 0 {
			out.conf = unsureConfidence
		}
		qs := make([]string, len(r.unsure))
		for i, u := range r.unsure {
			qs[i] = `"` + u + `"`
		}
		out.problems = append(out.problems, "I wasn't sure of the dates: "+strings.Join(qs, ", ")+"; please check them")
	}
	if out.conf == 0 {
		out.problems = append(out.problems, "no date or time preference found")
	}
	return out
}

// unsureConfidence is the confidence of dates read with doubt.
const unsureConfidence = 0.3

// conflicts doubts dates said in different sentences that lie weeks
// apart with nothing asked for between them ("on the 3rd ... the 28th
// would be best"): one of them is likely not meant.
func (r *reader) conflicts(dated []*item) {
	for k := 1; k < len(dated); k++ {
		a, b := dated[k-1], dated[k]
		last := a.to
		for _, it := range dated[:k] {
			if it.to.After(last) {
				last = it.to
			}
		}
		if a.sentence != b.sentence && b.from.Sub(last) > 14*24*time.Hour {
			r.doubt(a.pos, a.end)
			r.doubt(b.pos, b.end)
		}
	}
}

func sameWindows(a, b []window) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mergeAvailability joins windows with the same hours into one with all
// their days, and orders them.
func mergeAvailability(av []nextup.Availability) []nextup.Availability {
	type key struct{ from, to nextup.TimeOfDay }
	days := map[key]map[time.Weekday]bool{}
	var keys []key
	for _, a := range av {
		k := key{a.From, a.To}
		if days[k] == nil {
			days[k] = map[time.Weekday]bool{}
			keys = append(keys, k)
		}
		for _, d := range a.Days {
			days[k][d] = true
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].from != keys[j].from {
			return keys[i].from < keys[j].from
		}
		return keys[i].to < keys[j].to
	})
	var out []nextup.Availability
	for _, k := range keys {
		var ds []time.Weekday
		for d := time.Sunday; d <= time.Saturday; d++ {
			if days[k][d] {
				ds = append(ds, d)
			}
		}
		out = append(out, nextup.Availability{Days: ds, From: k.from, To: k.to})
	}
	if len(out) > 16 {
		out = out[:16]
	}
	return out
}
