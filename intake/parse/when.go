package parse

import (
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// A day is a calendar date, held as midnight UTC so that adding days is
// plain arithmetic; it is placed in the business timezone at the end.
type day = time.Time

func dayOf(t time.Time) day { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }

func addDays(d day, n int) day { return d.AddDate(0, 0, n) }

// window is a part of a day in minutes past midnight, [from, to).
type window struct{ from, to int }

var allDay = window{0, 1440}

func (w window) and(o window) window {
	return window{max(w.from, o.from), min(w.to, o.to)}
}

func (w window) empty() bool { return w.from >= w.to }

// item is one thing a sentence said about when.
type item struct {
	from, to  day  // dates, inclusive (zero for a recurring weekday)
	weekday   bool // named by a weekday ("Friday"), so a week anchor may move it
	wd        time.Weekday
	recurring bool // "Tuesdays", "any Saturday", "weekdays": a weekly pattern
	days      map[time.Weekday]bool
	anchor    string       // "this week", "next week", "next" (next Friday), "this"
	toWd      time.Weekday // the end of a weekday range ("Monday to Wednesday")
	wdRange   bool
	tods      []window // parts of the day asked for on this item's days
	pos, end  int      // token positions
	group     int      // items joined by "or"/"and"/"," share a group
	context   bool     // said as background ("our anniversary is on the 21st")
	week      bool     // "this week", "next week", "the week of the 20th"
	month     bool     // "in June", "early May"
	refined   bool     // a week or range the weekdays said in it narrowed
}

// when is the outcome of reading dates and times.
type when struct {
	earliest, latest time.Time
	availability     []nextup.Availability
	conf             float64
	problems         []string
}

type reader struct {
	toks     []tok
	today    day
	ref      time.Time
	us       bool // month/day order for numeric dates
	items    []*item
	windows  []window // parts of the day said in a sentence naming no day
	exclude  map[time.Weekday]bool
	lower    day // "from the 5th of May on"
	upper    day // "before Friday"
	probs    []string
	groups   int
	lastTODs []window // for "at the same time"
	lastWeek *item    // the week a later sentence's weekdays fall in
	lastDay  *item    // for "the day before", "the weekend after"
	evening  bool     // dinner, tonight: a bare "8" is 20:00
}

type tw struct {
	w   window
	pos int
}

// findWhen reads when the requester wants to come, relative to ref (the
// sending time in the business timezone). The subject is read only when
// the text says nothing about time.
func findWhen(text, subject string, ref time.Time, country string) when {
	r := newReader(text, ref, country)
	r.read()
	if len(r.items) == 0 && len(r.windows) == 0 && len(r.exclude) == 0 && r.lower.IsZero() && r.upper.IsZero() {
		r = newReader(subject, ref, country)
		r.read()
	}
	return r.result()
}

func newReader(text string, ref time.Time, country string) *reader {
	c := strings.ToUpper(country)
	toks := lex(text)
	evening := false
	for _, t := range toks {
		switch t.w {
		case "dinner", "tonight", "tonite", "night", "evening", "evenings", "supper", "drinks":
			evening = true
		}
	}
	return &reader{
		evening: evening,
		toks:    toks,
		today:   dayOf(ref),
		ref:     ref,
		us:      c == "US" || c == "CA" || c == "PH",
		exclude: map[time.Weekday]bool{},
	}
}

// read goes sentence by sentence.
func (r *reader) read() {
	start := 0
	for i := 0; i <= len(r.toks); i++ {
		if i == len(r.toks) || isSentenceEnd(r.toks, i) {
			if i > start {
				r.sentence(start, i)
			}
			start = i + 1
		}
	}
}

func isSentenceEnd(ts []tok, i int) bool {
	switch ts[i].w {
	case "\n", "?", "!", ";":
		return true
	case ".":
		// Not after "dr", "st", "a.m." and the like.
		if i > 0 && ts[i-1].kind == 'w' && len(ts[i-1].w) <= 2 {
			return false
		}
		return true
	}
	return false
}

// maxItems bounds the dates and times read per sentence.
const maxItems = 48

var pastWords = map[string]bool{
	"ago": true, "last": true, "since": true, "broke": true, "had": true, "tweaked": true, "saw": true, "did": true,
	"was": true, "happened": true, "hurt": true, "injured": true, "booked": true, "sold": true, "nothing": true,
	"went": true, "came": true, "cancelled": true, "canceled": true, "moved": true,
}

var contextWords = map[string]bool{
	"birthday": true, "married": true, "wedding": true, "visiting": true, "anniversary": true, "staying": true,
}

// clauses splits a sentence at commas, brackets and dashes set apart by
// spaces: a past event ("I broke a tooth on Saturday") is usually a
// clause of its own.
func (r *reader) clauses(a, b int) [][2]int {
	var out [][2]int
	start := a
	for i := a; i < b; i++ {
		t := r.toks[i]
		if t.w == "," && i > a && i+1 < b {
			// "Sunday, March 29th" is one date.
			if _, _, ok := weekdayOf(r.toks[i-1].w); ok {
				if _, isMonth := months[r.toks[i+1].w]; isMonth || r.toks[i+1].kind == 'n' || r.toks[i+1].w == "the" {
					continue
				}
			}
		}
		if t.w == "," || t.w == "(" || t.w == ")" || t.w == ":" || (t.w == "-" && t.space && i+1 < b && r.toks[i+1].space) {
			if i > start {
				out = append(out, [2]int{start, i})
			}
			start = i + 1
		}
	}
	if b > start {
		out = append(out, [2]int{start, b})
	}
	return out
}

func (r *reader) sentence(a, b int) {
	var items []*item
	var wins []tw
	for _, c := range r.clauses(a, b) {
		past, ctx := false, false
		for i := c[0]; i < c[1]; i++ {
			w := r.toks[i].w
			if pastWords[w] && !(w == "last" && r.word(i+1, c[1]) == "minute") {
				past = true
			}
			if contextWords[w] {
				ctx = true
			}
			// "I am in London from ...", "I'm around from the 30th"
			if (w == "in" || w == "here" || w == "around" || w == "there") && i > c[0] && (r.toks[i-1].w == "am" || r.toks[i-1].w == "i'm" || r.toks[i-1].w == "we're" || r.toks[i-1].w == "are") {
				ctx = true
			}
		}
		is, ws := r.clause(c[0], c[1], past)
		// A sentence naming dozens of days is no booking request; keep
		// its first few so that reading it stays cheap.
		if len(items)+len(is) > maxItems {
			is = is[:max(0, maxItems-len(items))]
		}
		if len(wins)+len(ws) > maxItems {
			ws = ws[:max(0, maxItems-len(wins))]
		}
		if past {
			continue
		}
		for _, it := range is {
			it.context = it.context || ctx
		}
		items = append(items, is...)
		wins = append(wins, ws...)
	}
	if len(r.items)+len(items) > 4*maxItems {
		if len(items) > 0 || len(wins) > 0 {
			r.probs = append(r.probs, "too many dates and times to read them all")
		}
		return
	}
	items = r.link(items)
	r.anchor(a, b, items)
	r.attach(a, b, items, wins)
	r.items = append(r.items, items...)
}

// clause reads the items and time windows of one clause. A past clause
// is read only to keep "the day before" pointing at the right day.
func (r *reader) clause(a, b int, past bool) ([]*item, []tw) {
	var items []*item
	var wins []tw
	for i := a; i < b; {
		if n, ok := r.skipNegated(i, b); ok {
			i = n
			continue
		}
		if n, ok := r.bound(i, b); ok {
			i = n
			continue
		}
		if it, n := r.relative(i, b); it != nil {
			items = append(items, it)
			i = n
			continue
		}
		if n := len(items); n > 0 && !items[n-1].from.IsZero() && !items[n-1].weekday && items[n-1].from.Equal(items[n-1].to) {
			// "the 15 or 16": a bare number after a day of the month.
			switch r.word(i, b) {
			case "or", "and", "to", "until", "till", "-":
				if i+1 < b && r.toks[i+1].kind == 'n' && r.toks[i+1].clock < 0 && r.toks[i+1].ampm == 0 && !r.toks[i+1].ish && len(r.toks[i+1].w) <= 2 && r.toks[i+1].n >= 1 && r.toks[i+1].n <= 31 {
					if _, ok := months[r.word(i+2, b)]; !ok && !unitWord[r.word(i+2, b)] {
						if d, ok := r.resolveDM(r.toks[i+1].n, 0, 0); ok {
							items = append(items, r.newItem(d, d, i+1, i+2))
							i += 2
							continue
						}
					}
				}
			}
		}
		if its, n := r.dateAt(i, b); its != nil {
			for _, it := range its {
				if !it.from.IsZero() && !it.recurring && !past {
					r.lastDay = it
				}
			}
			items = append(items, its...)
			i = n
			continue
		}
		if w, n := r.timeAt(i, b); n > i {
			if !w.empty() {
				wins = append(wins, tw{w, i})
			}
			i = n
			continue
		}
		i++
	}
	return items, wins
}

// bound reads "before Friday", "until the 12th", "after the 20th" and
// "from the 5th of May on".
func (r *reader) bound(i, b int) (int, bool) {
	w := r.word(i, b)
	switch w {
	case "before", "until", "till", "til", "after", "from":
	default:
		return i, false
	}
	its, n := r.dateAt(i+1, b)
	if len(its) != 1 || its[0].recurring || its[0].week || its[0].month && w != "from" {
		return i, false
	}
	it := its[0]
	if it.from.IsZero() {
		it.from = r.upcoming(it.wd)
		it.to = it.from
	}
	switch w {
	case "before":
		r.upper = addDays(it.from, -1)
	case "until", "till", "til":
		r.upper = it.to
	case "after":
		r.lower = addDays(it.to, 1)
	case "from":
		nx := r.word(n, b)
		if nx != "on" && nx != "onwards" && nx != "onward" && nx != "forward" {
			return i, false
		}
		r.lower = it.from
		n++
	}
	return n, true
}

// relative reads days said relative to the last date: "the day before",
// "the morning of", "the weekend after".
func (r *reader) relative(i, b int) (*item, int) {
	if r.word(i, b) != "the" || r.lastDay == nil {
		return nil, i
	}
	last := r.lastDay
	what, rel := r.word(i+1, b), r.word(i+2, b)
	switch {
	case what == "day" && rel == "before":
		d := addDays(last.from, -1)
		return r.newItem(d, d, i, i+3), i + 3
	case what == "day" && rel == "after":
		d := addDays(last.to, 1)
		return r.newItem(d, d, i, i+3), i + 3
	case (what == "morning" || what == "afternoon" || what == "evening") && rel == "of":
		it := r.newItem(last.from, last.from, i, i+3)
		w, _ := r.timeAt(i+1, b)
		it.tods = []window{w}
		return it, i + 3
	case what == "weekend" && rel == "after":
		s := addDays(last.to, 1)
		for s.Weekday() != time.Saturday {
			s = addDays(s, 1)
		}
		return r.newItem(s, addDays(s, 1), i, i+3), i + 3
	case what == "week" && rel == "after":
		s := addDays(r.weekStart(last.to), 7)
		it := r.newItem(s, addDays(s, 6), i, i+3)
		it.week = true
		return it, i + 3
	}
	return nil, i
}

var unitWord = map[string]bool{
	"people": true, "persons": true, "guests": true, "of": true, "weeks": true, "week": true, "days": true, "day": true,
	"min": true, "mins": true, "minutes": true, "hours": true, "hour": true, "years": true, "kids": true, "children": true,
	"adults": true, "months": true, "pm": true, "am": true, "o'clock": true,
}

func (r *reader) upcoming(wd time.Weekday) day {
	return addDays(r.today, (int(wd)-int(r.today.Weekday())+7)%7)
}

func (r *reader) word(i, b int) string {
	if i >= 0 && i < b && i < len(r.toks) {
		return r.toks[i].w
	}
	return ""
}

// skipNegated reads "except Wednesday", "not Fridays", "can't do Monday",
// "anybody but", and "if not Friday" (an alternative about to be named,
// not a refusal).
func (r *reader) skipNegated(i, b int) (int, bool) {
	w := r.word(i, b)
	j := i + 1
	switch w {
	case "except", "excluding", "not":
		if w == "not" && r.word(i-1, b) == "if" {
			// "If not Friday, Saturday": skip the repeated day.
			if _, _, ok := weekdayOf(r.word(j, b)); ok {
				return j + 1, true
			}
			return j, true
		}
		if r.word(j, b) == "on" || r.word(j, b) == "for" {
			j++
		}
	case "can't", "cannot", "cant":
		if r.word(j, b) == "do" || r.word(j, b) == "make" || r.word(j, b) == "manage" {
			j++
		}
	case "but":
		if r.word(j, b) != "not" {
			return i, false
		}
		j++
	case "apart":
		if r.word(j, b) != "from" {
			return i, false
		}
		j++
	default:
		return i, false
	}
	found := false
	for j < b {
		if d, _, ok := weekdayOf(r.word(j, b)); ok {
			r.exclude[d] = true
			found = true
			j++
			if r.word(j, b) == "or" || r.word(j, b) == "and" || r.word(j, b) == "," {
				j++
				continue
			}
			break
		}
		if r.word(j, b) == "the" && j+1 < b && r.toks[j+1].kind == 'n' || j < b && r.toks[j].kind == 'n' && r.toks[j].ord {
			r.probs = append(r.probs, "a date to avoid was named ("+r.span(i, min(j+2, b))+"); check it by hand")
			k := j
			for k < b && r.toks[k].kind != 'n' {
				k++
			}
			return k + 1, true
		}
		break
	}
	if found {
		return j, true
	}
	return i, false
}

func (r *reader) span(a, b int) string {
	var s []string
	for i := a; i < b && i < len(r.toks); i++ {
		s = append(s, r.toks[i].w)
	}
	return strings.Join(s, " ")
}

func (r *reader) newItem(from, to day, pos, end int) *item {
	return &item{from: from, to: to, pos: pos, end: end}
}

// dayNumAt reads a day of the month: "19th", "the 15", "3rd of".
func (r *reader) dayNumAt(i, b int) (int, int, bool) {
	j := i
	if r.word(j, b) == "the" {
		j++
	}
	if j >= b || r.toks[j].kind != 'n' || r.toks[j].clock >= 0 || r.toks[j].ampm != 0 {
		return 0, i, false
	}
	t := r.toks[j]
	if t.n < 1 || t.n > 31 || len(t.w) > 2 {
		return 0, i, false
	}
	if !t.ord && j == i {
		return 0, i, false // a bare number needs "the" or a month beside it
	}
	switch r.word(j+1, b) {
	case "anniversary", "birthday", "century", "floor", "time", "times", "street", "st", "avenue", "grade", "year", "week", "weeks", "day", "days", "minute", "minutes", "hour", "hours", "of":
		if r.word(j+1, b) != "of" {
			return 0, i, false
		}
	}
	if w := r.word(i-1, b); w == "our" || w == "my" || w == "her" || w == "his" || w == "their" {
		return 0, i, false
	}
	return t.n, j + 1, true
}

func (r *reader) monthAt(i, b int) (time.Month, bool) {
	m, ok := months[r.word(i, b)]
	if !ok {
		return 0, false
	}
	if r.word(i, b) == "may" || r.word(i, b) == "mar" || r.word(i, b) == "jan" || r.word(i, b) == "sun" {
		// "may" is also a verb: take it when a day, "in", "of", "early" and
		// the like stand beside it.
		prev := r.word(i-1, b)
		ok = prev == "in" || prev == "of" || prev == "early" || prev == "mid" || prev == "late" || prev == "end" || prev == "until" || prev == "till" || prev == "from" || prev == "during" || prev == "for" ||
			i+1 < b && r.toks[i+1].kind == 'n' || i > 0 && r.toks[i-1].kind == 'n'
	}
	return m, ok
}

// resolveDM places day d (and month m, 0 when unknown) on or after today.
func (r *reader) resolveDM(d int, m time.Month, y int) (day, bool) {
	if m == 0 {
		m = r.today.Month()
		y = r.today.Year()
		if d < r.today.Day() {
			m++
		}
	}
	if y == 0 {
		y = r.today.Year()
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if t.Before(addDays(r.today, -14)) {
			y++
		}
	} else if y < 100 {
		y += 2000
	}
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || y < 2000 || y > 2200 {
		return day{}, false
	}
	return t, true
}

func (r *reader) monthSpan(m time.Month, part string) (day, day) {
	y := r.today.Year()
	if m < r.today.Month() {
		y++
	}
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1)
	switch part {
	case "early":
		last = addDays(first, 9)
	case "mid":
		first, last = addDays(first, 10), addDays(first, 19)
	case "late", "end":
		first = addDays(first, 20)
	}
	if first.Before(r.today) && !last.Before(r.today) {
		first = r.today
	}
	return first, last
}

func (r *reader) weekStart(d day) day {
	return addDays(d, -((int(d.Weekday()) + 6) % 7))
}

// thisWeek is today to Sunday; sent on a Sunday, it is the coming week.
func (r *reader) thisWeek() (day, day) {
	if r.today.Weekday() == time.Sunday {
		return addDays(r.today, 1), addDays(r.today, 7)
	}
	return r.today, addDays(r.weekStart(r.today), 6)
}

func (r *reader) nextWeek() (day, day) {
	s := addDays(r.weekStart(r.today), 7)
	return s, addDays(s, 6)
}

var numberWords = map[string]int{"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple": 2, "few": 3, "several": 3}

// dateAt reads a date expression at i.
func (r *reader) dateAt(i, b int) ([]*item, int) {
	w := r.word(i, b)
	one := func(from, to day, end int) ([]*item, int) {
		return []*item{r.newItem(from, to, i, end)}, end
	}
	switch w {
	case "today":
		return one(r.today, r.today, i+1)
	case "tonight", "tonite":
		it := r.newItem(r.today, r.today, i, i+1)
		it.tods = []window{{17 * 60, 1440}}
		return []*item{it}, i + 1
	case "tomorrow", "tmrw", "tmr", "tomorow", "tommorow", "tommorrow", "tomoz", "tomo", "2moro", "morgen":
		return one(addDays(r.today, 1), addDays(r.today, 1), i+1)
	}
	// in the next two weeks / within 2 weeks / next fortnight
	if w == "in" || w == "within" || w == "over" {
		j := i + 1
		if r.word(j, b) == "the" {
			j++
		}
		if r.word(j, b) == "next" || r.word(j, b) == "coming" || w == "within" {
			if r.word(j, b) == "next" || r.word(j, b) == "coming" {
				j++
			}
			n := 1
			if j < b && r.toks[j].kind == 'n' {
				n = r.toks[j].n
				j++
			} else if v, ok := numberWords[r.word(j, b)]; ok {
				n = v
				j++
				if r.word(j, b) == "of" {
					j++
				}
			}
			switch r.word(j, b) {
			case "week", "weeks":
				return one(r.today, addDays(r.today, 7*n), j+1)
			case "day", "days":
				return one(r.today, addDays(r.today, n), j+1)
			case "fortnight":
				return one(r.today, addDays(r.today, 14), j+1)
			case "month", "months":
				return one(r.today, r.today.AddDate(0, n, 0), j+1)
			}
		}
	}
	if w == "next" && r.word(i+1, b) == "fortnight" {
		return one(r.today, addDays(r.today, 14), i+2)
	}
	// this week / next week / the week of the 20th / this weekend
	j := i
	mod := ""
	switch w {
	case "this", "next", "the", "that", "any", "every", "a", "on":
		mod = w
		j++
	}
	switch r.word(j, b) {
	case "week":
		week := func(f, t day, end int) ([]*item, int) {
			its, n := one(f, t, end)
			its[0].week = true
			return its, n
		}
		switch mod {
		case "this":
			f, t := r.thisWeek()
			return week(f, t, j+1)
		case "next":
			f, t := r.nextWeek()
			return week(f, t, j+1)
		}
		if r.word(j+1, b) == "of" || r.word(j+1, b) == "commencing" || r.word(j+1, b) == "starting" || r.word(j+1, b) == "beginning" {
			if its, n := r.dateAt(j+2, b); len(its) == 1 && !its[0].recurring && !its[0].from.IsZero() {
				s := r.weekStart(its[0].from)
				return week(s, addDays(s, 6), n)
			}
		}
		if mod == "any" {
			return nil, i // "any week in May": the month says it
		}
	case "weekend":
		switch mod {
		case "this", "the", "on":
			if mod == "the" {
				if p := r.word(i-1, b); p != "at" && p != "over" && p != "on" && p != "for" && p != "this" {
					return nil, i // "the weekend we're there", "the weekend after"
				}
			}
			s := r.weekStart(r.today)
			if r.today.Weekday() == time.Sunday {
				return one(r.today, r.today, j+1)
			}
			return one(addDays(s, 5), addDays(s, 6), j+1)
		case "next":
			s := addDays(r.weekStart(r.today), 7)
			if r.today.Weekday() == time.Sunday || r.today.Weekday() == time.Saturday {
				s = addDays(s, 0)
			}
			return one(addDays(s, 5), addDays(s, 6), j+1)
		case "any", "every", "a":
			it := &item{recurring: true, days: map[time.Weekday]bool{time.Saturday: true, time.Sunday: true}, pos: i, end: j + 1}
			return []*item{it}, j + 1
		}
	case "weekends":
		it := &item{recurring: true, days: map[time.Weekday]bool{time.Saturday: true, time.Sunday: true}, pos: i, end: j + 1}
		return []*item{it}, j + 1
	case "weekday", "weekdays", "weeknights", "weeknight":
		it := &item{recurring: true, days: weekdaySet(time.Monday, time.Friday), pos: i, end: j + 1}
		return []*item{it}, j + 1
	}
	// early / mid / late / end of <month>; in <month>
	part := ""
	j = i
	switch w {
	case "early", "mid", "late", "beginning", "start":
		part = w
		if w == "beginning" || w == "start" {
			part = "early"
		}
		j++
	case "end":
		part = "end"
		j++
	}
	if part != "" {
		if r.word(j, b) == "of" {
			j++
		}
		if r.word(j, b) == "the" && r.word(j+1, b) == "month" {
			f, t := r.monthSpan(r.today.Month(), part)
			its, n := one(f, t, j+2)
			its[0].month = true
			return its, n
		}
		if r.word(j, b) == "-" {
			j++
		}
		if m, ok := months[r.word(j, b)]; ok {
			f, t := r.monthSpan(m, part)
			its, n := one(f, t, j+1)
			its[0].month = true
			return its, n
		}
	}
	// Weekday: [this|next|on|any|every|a] Friday[s] [the 20th] [next week]
	j = i
	mod = ""
	switch w {
	case "this", "next", "on", "any", "every", "a", "an", "coming", "the":
		mod = w
		j++
		if r.word(j, b) == "coming" {
			j++
		}
	}
	if d, plural, ok := weekdayOf(r.word(j, b)); ok {
		k := j + 1
		if r.word(k, b) == "," {
			k++
		}
		// "Thursday 16th", "Saturday 25 April", "Thursday March 26"
		if its, n := r.numericDate(k, b); its != nil {
			its[0].pos = i
			return its, n
		}
		if r.word(k, b) == "the" {
			if its, n := r.numericDate(k, b); its != nil {
				its[0].pos = i
				return its, n
			}
		}
		it := &item{weekday: true, wd: d, pos: i, end: j + 1}
		switch {
		case plural || mod == "any" || mod == "every" || mod == "a" || mod == "an":
			it.recurring = true
			it.days = map[time.Weekday]bool{d: true}
		case mod == "next":
			it.anchor = "next"
		case mod == "this" || mod == "coming":
			it.anchor = "this"
		}
		end := j + 1
		if (r.word(end, b) == "next" || r.word(end, b) == "this") && r.word(end+1, b) == "week" {
			it.anchor = r.word(end, b) + " week"
			end += 2
		}
		it.end = end
		return []*item{it}, end
	}
	if its, n := r.numericDate(i, b); its != nil {
		return its, n
	}
	// in <month>, any <month>, <month> alone
	j = i
	if w == "in" || w == "during" || w == "for" {
		j++
	}
	if m, ok := r.monthAt(j, b); ok && (j > i || !(j+1 < b && r.toks[j+1].kind == 'n')) {
		if j+1 < b && r.toks[j+1].kind == 'n' {
			return nil, i
		}
		f, t := r.monthSpan(m, "")
		its, n := one(f, t, j+1)
		its[0].month = true
		return its, n
	}
	return nil, i
}

func weekdaySet(from, to time.Weekday) map[time.Weekday]bool {
	m := map[time.Weekday]bool{}
	for d := from; ; d = (d + 1) % 7 {
		m[d] = true
		if d == to {
			break
		}
	}
	return m
}

// numericDate reads "the 19th", "19th of June", "14 April", "April 14th",
// "15-17 May", "04/02/2026".
func (r *reader) numericDate(i, b int) ([]*item, int) {
	if i < b && r.toks[i].kind == 'd' {
		t := r.toks[i]
		d, m := t.d1, t.d2
		if r.us {
			d, m = t.d2, t.d1
		} else if t.d2 > 12 && t.d1 <= 12 {
			d, m = t.d2, t.d1
		}
		if m < 1 || m > 12 {
			return nil, i
		}
		if x, ok := r.resolveDM(d, time.Month(m), t.d3); ok {
			return []*item{r.newItem(x, x, i, i+1)}, i + 1
		}
		return nil, i
	}
	// <month> [the] <n>[th]
	if m, ok := months[r.word(i, b)]; ok {
		j := i + 1
		if r.word(j, b) == "the" {
			j++
		}
		if j < b && r.toks[j].kind == 'n' && r.toks[j].clock < 0 && r.toks[j].ampm == 0 && r.toks[j].n >= 1 && r.toks[j].n <= 31 && len(r.toks[j].w) <= 2 {
			d := r.toks[j].n
			k := j + 1
			y := 0
			if r.word(k, b) == "," {
				k++
			}
			if k < b && r.toks[k].kind == 'n' && len(r.toks[k].w) == 4 {
				y = r.toks[k].n
				k++
			} else if r.word(j+1, b) == "," {
				k = j + 1
			}
			if x, ok := r.resolveDM(d, m, y); ok {
				return []*item{r.newItem(x, x, i, k)}, k
			}
		}
		return nil, i
	}
	d, j, ok := r.dayNumAt(i, b)
	if !ok {
		// "14 April": a bare number with a month after it.
		if i < b && r.toks[i].kind == 'n' && r.toks[i].clock < 0 && r.toks[i].ampm == 0 && r.toks[i].n >= 1 && r.toks[i].n <= 31 && len(r.toks[i].w) <= 2 {
			if _, isMonth := months[r.word(i+1, b)]; isMonth || r.word(i+1, b) == "-" || r.word(i+1, b) == "of" && months[r.word(i+2, b)] > 0 {
				d, j, ok = r.toks[i].n, i+1, true
			}
		}
		if !ok {
			return nil, i
		}
	}
	// "15-17 May"
	if r.word(j, b) == "-" && j+1 < b && r.toks[j+1].kind == 'n' && r.toks[j+1].n >= 1 && r.toks[j+1].n <= 31 && !r.toks[j].space {
		d2 := r.toks[j+1].n
		k := j + 2
		if m, ok := months[r.word(k, b)]; ok {
			f, ok1 := r.resolveDM(d, m, 0)
			t, ok2 := r.resolveDM(d2, m, 0)
			if ok1 && ok2 && !t.Before(f) {
				return []*item{r.newItem(f, t, i, k+1)}, k + 1
			}
		}
	}
	k := j
	if r.word(k, b) == "of" {
		k++
	}
	var m time.Month
	if mm, ok := months[r.word(k, b)]; ok {
		m = mm
		k++
	} else {
		k = j
	}
	y := 0
	if m != 0 && k < b && r.toks[k].kind == 'n' && len(r.toks[k].w) == 4 {
		y = r.toks[k].n
		k++
	}
	x, ok := r.resolveDM(d, m, y)
	if !ok {
		return nil, i
	}
	it := r.newItem(x, x, i, k)
	if m == 0 {
		it.anchor = "month?"
	}
	return []*item{it}, k
}

// timeAt reads a time of day or a part of the day at i.
func (r *reader) timeAt(i, b int) (window, int) {
	w := r.word(i, b)
	if r.word(i-1, b) == "good" || (i == 0 || r.toks[i-1].w == "\n") && (r.word(i+1, len(r.toks)) == "," || r.word(i+1, len(r.toks)) == "!") {
		return window{}, i // a greeting: "Good morning", "Morning!"
	}
	switch w {
	case "morning", "mornings", "am":
		if w == "am" {
			return window{}, i
		}
		if r.word(i-1, b) == "early" {
			return window{0, 9 * 60}, i + 1
		}
		return window{0, 12 * 60}, i + 1
	case "afternoon", "afternoons", "arvo", "arvos", "nachmittag", "nachmittags":
		return window{12 * 60, 17 * 60}, i + 1
	case "evening", "evenings", "night", "nights", "abends":
		if r.word(i-1, b) == "on" {
			return window{}, i // "a nurse on nights"
		}
		return window{17 * 60, 1440}, i + 1
	case "lunchtime", "lunchtimes", "lunch":
		if w == "lunch" && !(r.word(i+1, b) == "break" || r.word(i+1, b) == "time" || r.word(i+1, b) == "hour" || r.word(i-1, b) == "for" || r.word(i-1, b) == "at") {
			return window{}, i
		}
		return window{12 * 60, 14 * 60}, i + 1
	case "noon", "midday":
		return window{11*60 + 30, 12*60 + 30}, i + 1
	case "after", "from", "since", "before", "until", "till", "til", "between", "at", "around", "about", "approx", "approximately", "circa", "ca", "by":
		j := i + 1
		if w == "after" && (r.word(j, b) == "school" || r.word(j, b) == "work") {
			if r.word(j, b) == "school" {
				return window{15 * 60, 1440}, j + 1
			}
			return window{17 * 60, 1440}, j + 1
		}
		if w == "by" {
			return window{}, i
		}
		t1, approx1, k, ok := r.clockAt(j, b, true)
		if !ok {
			return window{}, i
		}
		switch w {
		case "before", "until", "till", "til":
			return window{0, r.hour(j, t1)}, k
		case "between", "from":
			sep := r.word(k, b)
			if sep == "and" || sep == "to" || sep == "-" || sep == "till" || sep == "until" {
				if t2, _, k2, ok := r.clockAt(k+1, b, true); ok {
					t1, t2 = r.pair(j, t1, k+1, t2)
					return window{t1, t2}, k2
				}
			}
			if w == "between" {
				return window{}, i
			}
			return window{r.hour(j, t1), 1440}, k
		case "after", "since":
			return window{r.hour(j, t1), 1440}, k
		default: // at, around, about
			_ = approx1
			c := r.hour(j, t1)
			return window{max(c-30, 0), min(c+30, 1440)}, k
		}
	}
	// A bare time with its own marks: "7pm", "7:30", "8ish", "11-1" after a
	// part of the day.
	if t1, _, k, ok := r.clockAt(i, b, false); ok {
		if r.word(k, b) == "or" && (r.word(k+1, b) == "after" || r.word(k+1, b) == "later") {
			return window{r.hour(i, t1), 1440}, k + 2
		}
		if r.word(k, b) == "onwards" || r.word(k, b) == "on" {
			return window{r.hour(i, t1), 1440}, k + 1
		}
		if sep := r.word(k, b); sep == "-" || sep == "to" {
			if t2, _, k2, ok := r.clockAt(k+1, b, true); ok {
				t1, t2 = r.pair(i, t1, k+1, t2)
				return window{t1, t2}, k2
			}
		}
		c := r.hour(i, t1)
		return window{max(c-30, 0), min(c+30, 1440)}, k
	}
	return window{}, i
}

// clockAt reads a clock time at i. With loose set, a bare hour ("after
// 5") counts; without it, the time must carry am/pm, minutes, "ish" or
// "o'clock". The minutes returned keep am/pm unresolved for bare hours
// (hour() settles them).
func (r *reader) clockAt(i, b int, loose bool) (int, bool, int, bool) {
	if i >= b || r.toks[i].kind != 'n' || r.toks[i].ord {
		return 0, false, i, false
	}
	t := r.toks[i]
	next := r.word(i+1, b)
	switch next {
	case "people", "persons", "guests", "of", "weeks", "week", "days", "day", "min", "mins", "minutes", "hours", "hour", "hrs", "years", "year", "kids", "children", "adults", "months", "month", "people's", "%", "/":
		return 0, false, i, false
	}
	if _, ok := months[next]; ok {
		return 0, false, i, false
	}
	marked := t.clock >= 0 || t.ampm != 0 || t.ish
	if !marked && !loose {
		return 0, false, i, false
	}
	m := t.clock
	if m < 0 {
		if t.n > 24 {
			return 0, false, i, false
		}
		m = t.n * 60
	}
	if m > 1440 {
		return 0, false, i, false
	}
	switch t.ampm {
	case 'p':
		if m < 12*60 {
			m += 12 * 60
		}
	case 'a':
		if m >= 12*60 && m < 13*60 {
			m -= 12 * 60
		}
	}
	return m, t.ish, i + 1, true
}

// hour settles am/pm for a time written without it: "after 5" is 17:00,
// "from 10" is 10:00, "8" at dinner is 20:00.
func (r *reader) hour(i int, m int) int {
	if i < len(r.toks) && r.toks[i].ampm != 0 || m >= 13*60 || m < 60 {
		return m
	}
	h := m / 60
	if h == 12 {
		return m
	}
	if r.evening || h <= 6 {
		return m + 12*60
	}
	return m
}

// pair settles a range: the end comes after the start ("between 11 and
// 1", "from 6 to 9").
func (r *reader) pair(i, t1, j, t2 int) (int, int) {
	a := r.hour(i, t1)
	if j < len(r.toks) && r.toks[j].ampm == 'p' && i < len(r.toks) && r.toks[i].ampm == 0 && t1 < 12*60 && t1+12*60 < t2 {
		a = t1 + 12*60
	}
	e := t2
	if j < len(r.toks) && r.toks[j].ampm == 0 {
		for e <= a && e < 12*60 {
			e += 12 * 60
		}
	}
	return a, e
}
