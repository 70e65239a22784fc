package parse

import (
	"strings"
	"time"
	"unicode"
)

// tok is one token of a lower-cased text: a word, a number (with what was
// glued to it: "19th", "3pm", "7:30", "8ish") or a punctuation mark.
type tok struct {
	w     string // the word, the digits, or the mark
	kind  byte   // 'w' word, 'n' number, 'd' numeric date, 'p' punctuation
	n     int    // a number's value
	ord   bool   // "19th"
	clock int    // minutes past midnight for "7:30" and "3.30"; -1 when none
	ampm  byte   // 'a' or 'p' when "am" or "pm" was written with it
	ish   bool   // "8ish"
	space bool   // whitespace came before it
	// A numeric date ("04/02/2026", "14.03."): its parts as written.
	d1, d2, d3 int
}

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

var weekdays = map[string]time.Weekday{
	"monday": time.Monday, "mon": time.Monday, "tuesday": time.Tuesday, "tue": time.Tuesday, "tues": time.Tuesday,
	"wednesday": time.Wednesday, "wed": time.Wednesday, "weds": time.Wednesday, "thursday": time.Thursday,
	"thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday, "friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday, "sunday": time.Sunday, "sun": time.Sunday,
}

// weekdayOf reads a weekday name; plural reports "tuesdays".
func weekdayOf(w string) (d time.Weekday, plural, ok bool) {
	if d, ok := weekdays[w]; ok {
		return d, false, true
	}
	if len(w) > 4 && strings.HasSuffix(w, "s") {
		if d, ok := weekdays[w[:len(w)-1]]; ok {
			return d, true, true
		}
	}
	return 0, false, false
}

const maxTokens = 20000

// lex splits lower-cased text into tokens. Newlines are kept as "\n"
// marks because a line is where people end a thought.
func lex(s string) []tok {
	s = strings.ToLower(s)
	rs := []rune(s)
	var out []tok
	space := true
	for i := 0; i < len(rs) && len(out) < maxTokens; {
		r := rs[i]
		switch {
		case r == '\n':
			out = append(out, tok{w: "\n", kind: 'p', clock: -1, space: space})
			space = true
			i++
			continue
		case unicode.IsSpace(r):
			space = true
			i++
			continue
		case unicode.IsLetter(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || rs[j] == '\'' && j+1 < len(rs) && unicode.IsLetter(rs[j+1])) {
				j++
			}
			out = append(out, tok{w: string(rs[i:j]), kind: 'w', clock: -1, space: space})
			i = j
		case r >= '0' && r <= '9':
			j := i
			for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' && j-i < 9 {
				j++
			}
			t := tok{w: string(rs[i:j]), kind: 'n', clock: -1, space: space}
			t.n = atoi(t.w)
			// 7:30, 3.30
			if j+2 < len(rs)+0 && (rs[j] == ':' || rs[j] == '.') && j+2 < len(rs) && isDigit(rs[j+1]) && isDigit(rs[j+2]) && (j+3 >= len(rs) || !isDigit(rs[j+3])) && t.n <= 24 {
				m := atoi(string(rs[j+1 : j+3]))
				dotDate := rs[j] == '.' && j+3 < len(rs) && rs[j+3] == '.'
				if m < 60 && !dotDate {
					t.clock = t.n*60 + m
					j += 3
				}
			}
			// 04/02/2026, 14/3, 14.03.2026
			if t.clock < 0 && j+1 < len(rs) && (rs[j] == '/' || rs[j] == '.') && isDigit(rs[j+1]) {
				sep := rs[j]
				k := j + 1
				var parts []int
				parts = append(parts, t.n)
				for len(parts) < 3 && k <= len(rs) {
					st := k
					for k < len(rs) && isDigit(rs[k]) && k-st < 4 {
						k++
					}
					if k == st {
						break
					}
					parts = append(parts, atoi(string(rs[st:k])))
					if k < len(rs) && rs[k] == sep && k+1 < len(rs) && isDigit(rs[k+1]) && len(parts) < 3 {
						k++
						continue
					}
					break
				}
				if len(parts) >= 2 && (sep == '/' || len(parts) == 3) {
					t.kind = 'd'
					t.d1, t.d2 = parts[0], parts[1]
					if len(parts) == 3 {
						t.d3 = parts[2]
					}
					j = k
				}
			}
			// glued suffixes: 19th, 3pm, 8ish, 10am, 7p.m.
			k := j
			for k < len(rs) && (unicode.IsLetter(rs[k]) || rs[k] == '.' && k > j && k+1 < len(rs) && unicode.IsLetter(rs[k+1])) {
				k++
			}
			suf := strings.ReplaceAll(string(rs[j:k]), ".", "")
			switch suf {
			case "":
			case "st", "nd", "rd", "th":
				t.ord = true
				j = k
			case "am", "pm":
				t.ampm = suf[0]
				j = k
			case "ish":
				t.ish = true
				j = k
			case "h", "hrs", "uhr":
				if t.clock < 0 {
					t.clock = t.n * 60
				}
				j = k
			default:
				// "7b", "2surf": a word, not a number.
				t.kind = 'w'
				t.w = string(rs[i:k])
				j = k
			}
			out = append(out, t)
			i = j
		default:
			out = append(out, tok{w: string(r), kind: 'p', clock: -1, space: space})
			i++
		}
		space = false
	}
	// "7 pm", "7:30 p.m.", "8 ish", "10 o'clock"
	merged := out[:0]
	for i := 0; i < len(out); i++ {
		t := out[i]
		if t.kind == 'n' && i+1 < len(out) && out[i+1].kind == 'w' {
			switch out[i+1].w {
			case "am", "pm":
				if t.ampm == 0 {
					t.ampm = out[i+1].w[0]
					i++
				}
			case "a", "p":
				if i+3 < len(out) && out[i+2].w == "." && out[i+3].w == "m" {
					t.ampm = out[i+1].w[0]
					i += 3
					if i+1 < len(out) && out[i+1].w == "." {
						i++
					}
				}
			case "ish":
				t.ish = true
				i++
			case "o'clock", "oclock":
				if t.clock < 0 {
					t.clock = t.n * 60
				}
				i++
			}
		}
		merged = append(merged, t)
	}
	return merged
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' || n > 1e8 {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}
