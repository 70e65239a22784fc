package parse

import (
	"sort"
	"strings"
	"unicode"

	"github.com/nextup-dev/nextup"
)

// words splits s into lower-case words: letters and digits, with
// apostrophes dropped ("chef's" is "chefs") and every other character a
// separator ("check-up" is "check up").
func words(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == '\'':
		default:
			flush()
		}
	}
	flush()
	return out
}

// phraseAt reports whether the phrase's words stand at text[i:], allowing
// a plural on the last word, a compound that starts with a long last word
// ("drehscheibe" in "drehscheibenkurs") and one typo in a long word.
func phraseAt(text []string, i int, phrase []string) bool {
	if len(phrase) == 0 || i+len(phrase) > len(text) {
		return false
	}
	for k, p := range phrase {
		t := text[i+k]
		if t == p {
			continue
		}
		if k == len(phrase)-1 {
			if t == p+"s" || t == p+"es" || len([]rune(p)) >= 6 && strings.HasPrefix(t, p) {
				continue
			}
		}
		if len([]rune(p)) >= 6 && editDistanceAtMost1(t, p) {
			continue
		}
		return false
	}
	return true
}

// exactAt reports the phrase's words standing at text[i:] as written.
func exactAt(text []string, i int, phrase []string) bool {
	for k, p := range phrase {
		if text[i+k] != p {
			return false
		}
	}
	return true
}

func editDistanceAtMost1(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > len(rb) {
		ra, rb = rb, ra
	}
	if len(rb)-len(ra) > 1 {
		return false
	}
	i, j, diff := 0, 0, 0
	for i < len(ra) && j < len(rb) {
		if ra[i] == rb[j] {
			i++
			j++
			continue
		}
		diff++
		if diff > 1 {
			return false
		}
		if len(ra) == len(rb) {
			i++
		}
		j++
	}
	return diff+(len(rb)-j)+(len(ra)-i) <= 1
}

type hit struct {
	what       string
	start, end int  // word positions
	exact      bool // the phrase's own words, with no plural, compound or typo
}

// findHits finds every phrase of every entry in text, dropping hits inside
// a longer one ("trim" inside "beard trim"). A phrase of several words is
// found written as one too, as German writes "Teamevent" for "team event".
func findHits(text []string, entries map[string][][]string) []hit {
	var hits []hit
	for name, phrases := range entries {
		for _, ph := range phrases {
			joined := []string{strings.Join(ph, "")}
			for i := range text {
				switch {
				case phraseAt(text, i, ph):
					hits = append(hits, hit{name, i, i + len(ph), exactAt(text, i, ph)})
				case len(ph) > 1 && phraseAt(text, i, joined):
					hits = append(hits, hit{name, i, i + 1, exactAt(text, i, joined)})
				}
			}
		}
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].start != hits[b].start {
			return hits[a].start < hits[b].start
		}
		if hits[a].end != hits[b].end {
			return hits[a].end > hits[b].end
		}
		return hits[a].what < hits[b].what
	})
	// Sorted by start, longest first: a hit lies inside a longer one when
	// an earlier start reaches as far, or the first hit of its own start
	// reaches further.
	var out []hit
	maxEnd, groupStart, groupEnd := -1, -1, -1
	prevMax := -1 // the furthest end of hits starting before this group
	for _, h := range hits {
		if h.start != groupStart {
			prevMax = max(prevMax, maxEnd)
			groupStart, groupEnd = h.start, h.end
		}
		maxEnd = max(maxEnd, h.end)
		if prevMax >= h.end || groupEnd > h.end {
			continue
		}
		out = append(out, h)
	}
	return out
}

type serviceMatch struct {
	name     string
	conf     float64
	problems []string
}

// matchService finds the business's services in the text (falling back to
// the subject); the first one mentioned is proposed.
func matchService(text, subject string, services []nextup.Service) serviceMatch {
	if len(services) == 0 {
		return serviceMatch{}
	}
	entries := map[string][][]string{}
	for _, s := range services {
		if strings.TrimSpace(s.Name) == "" {
			continue
		}
		for _, p := range append([]string{s.Name}, s.Synonyms...) {
			if w := words(p); len(w) > 0 && len(w) <= 8 {
				entries[s.Name] = append(entries[s.Name], w)
			}
		}
	}
	for _, src := range []struct {
		text string
		conf float64
	}{{text, 0.9}, {subject, 0.6}} {
		hits := findHits(words(src.text), entries)
		if len(hits) == 0 {
			continue
		}
		names := map[string]bool{}
		for _, h := range hits {
			names[h.what] = true
		}
		// "Quisiera reservar en la barra": a service named by its own
		// word beats one a longer word only starts with.
		first := hits[0]
		for _, h := range hits {
			if h.exact {
				first = h
				break
			}
		}
		m := serviceMatch{name: first.what, conf: src.conf}
		if len(names) > 1 {
			m.conf -= 0.3
			m.problems = append(m.problems, "several services mentioned ("+strings.Join(sortedKeys(names), ", ")+"); proposed the first")
		}
		return m
	}
	if len(services) == 1 {
		return serviceMatch{name: services[0].Name, conf: 0.5}
	}
	return serviceMatch{problems: []string{"no service of the business recognised"}}
}

type staffMatch struct {
	name     string
	conf     float64
	problems []string
}

var (
	greeting     = map[string]bool{"hi": true, "hello": true, "hey": true, "dear": true, "hiya": true, "morning": true, "ciao": true, "hallo": true, "gday": true, "yo": true, "afternoon": true, "evening": true, "bonjour": true, "hola": true}
	staffTitles  = map[string]bool{"dr": true, "doctor": true, "mr": true, "mrs": true, "ms": true, "miss": true, "nurse": true}
	wantBefore   = map[string]bool{"with": true, "w": true, "prefer": true, "see": true, "by": true, "ideally": true, "stylist": true, "usually": true, "want": true}
	negateBefore = map[string]bool{"but": true, "except": true, "not": true, "without": true, "than": true, "avoid": true}
)

// matchStaff finds a staff member the requester asks for: by first name,
// full name, or title and surname ("Dr Patel"). Names after "anybody but"
// or "not with" are passed over, and a greeting's name counts only when
// the message is not a reply (a reply's greeting names whoever wrote
// last).
func matchStaff(text, subject string, reply bool, requester string, staff []string) staffMatch {
	if len(staff) == 0 {
		return staffMatch{}
	}
	entries := map[string][][]string{}
	for _, s := range staff {
		ws := words(s)
		if len(ws) == 0 || len(ws) > 6 {
			continue
		}
		entries[s] = append(entries[s], ws)
		rest := ws
		if staffTitles[ws[0]] && len(ws) > 1 {
			rest = ws[1:]
			entries[s] = append(entries[s], rest)
			surname := rest[len(rest)-1]
			for _, t := range []string{"dr", "doctor"} {
				entries[s] = append(entries[s], []string{t, surname})
			}
		}
		entries[s] = append(entries[s], rest[:1]) // the first name
	}
	own := map[string]bool{}
	for _, w := range words(requester) {
		own[w] = true
	}
	type scored struct {
		name  string
		score float64
		pos   int
	}
	var found []scored
	for k, src := range []string{text, subject} {
		tw := words(src)
		for _, h := range findHits(tw, entries) {
			// Exact words only for names: no plurals or typos.
			exact := true
			for i := h.start; i < h.end; i++ {
				if !nameWordOK(tw[i], entries[h.what]) {
					exact = false
				}
			}
			if !exact {
				continue
			}
			if h.end-h.start == 1 && own[tw[h.start]] {
				continue // the requester's own first name
			}
			prev := func(n int) string {
				if h.start-n >= 0 {
					return tw[h.start-n]
				}
				return ""
			}
			if negateBefore[prev(1)] || negateBefore[prev(2)] && prev(1) == "with" {
				continue
			}
			score := 0.7
			switch {
			case wantBefore[prev(1)] || wantBefore[prev(2)]:
				score = 0.9
			case greeting[prev(1)] && (h.start <= 2):
				if reply {
					continue
				}
				score = 0.6
			}
			if k == 1 {
				score -= 0.1
			}
			found = append(found, scored{h.what, score, k*1000000 + h.start})
		}
		if len(found) > 0 {
			break
		}
	}
	if len(found) == 0 {
		return staffMatch{}
	}
	best := found[0]
	names := map[string]bool{}
	for _, f := range found {
		names[f.name] = true
		if f.score > best.score {
			best = f
		}
	}
	m := staffMatch{name: best.name, conf: best.score}
	if len(names) > 1 {
		m.conf -= 0.3
		m.problems = append(m.problems, "several staff named ("+strings.Join(sortedKeys(names), ", ")+")")
	}
	return m
}

func nameWordOK(w string, phrases [][]string) bool {
	for _, p := range phrases {
		for _, x := range p {
			if x == w {
				return true
			}
		}
	}
	return false
}
