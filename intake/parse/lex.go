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
	ord   bool   // "19th", "5." before a month, "1er", "the twenty-first"
	word  bool   // an ordinal written as a word ("first"): a date only beside "the" or a month
	clock int    // minutes past midnight for "7:30" and "3.30"; -1 when none
	ampm  byte   // 'a' or 'p' when "am" or "pm" was written with it
	ish   bool   // "8ish"
	space bool   // whitespace came before it
	// A numeric date ("04/02/2026", "14.03.", "2026-10-10"): its parts as
	// written, or, when ymd is set, day, month and year in that order
	// because the writing settled them (ISO dates, named days).
	d1, d2, d3 int
	ymd        bool
	// soft marks a date named by an occasion ("Christmas Eve"): people
	// name those as background as often as they ask for them.
	soft bool
	// movable names a holiday whose date moves from year to year
	// ("easter", "thanksgiving"); movableDay places it.
	movable string
	// from and to are the runes of the text the token was read from, for
	// quoting it back in a problem.
	from, to int
}

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
	// German
	"januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "mär": 3, "mai": 5, "juni": 6, "juli": 7,
	"oktober": 10, "okt": 10, "dezember": 12, "dez": 12,
	// French
	"janvier": 1, "janv": 1, "février": 2, "fevrier": 2, "févr": 2, "fevr": 2, "mars": 3, "avril": 4, "avr": 4,
	"juin": 6, "juillet": 7, "juil": 7, "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
	"décembre": 12, "decembre": 12, "déc": 12, "fév": 2, "fev": 2, "juill": 7, "dec.": 12,
	// Spanish
	"enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
	"septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
	"ene": 1, "abr": 4, "ago": 8, "dic": 12,
	// Dutch
	"januari": 1, "februari": 2, "maart": 3, "mrt": 3, "mei": 5, "augustus": 8,
}

var weekdays = map[string]time.Weekday{
	"monday": time.Monday, "mon": time.Monday, "tuesday": time.Tuesday, "tue": time.Tuesday, "tues": time.Tuesday,
	"wednesday": time.Wednesday, "wed": time.Wednesday, "weds": time.Wednesday, "thursday": time.Thursday,
	"thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday, "friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday, "sunday": time.Sunday, "sun": time.Sunday,
	// German
	"montag": time.Monday, "dienstag": time.Tuesday, "mittwoch": time.Wednesday, "donnerstag": time.Thursday,
	"freitag": time.Friday, "samstag": time.Saturday, "sonnabend": time.Saturday, "sonntag": time.Sunday,
	// French
	"lundi": time.Monday, "mardi": time.Tuesday, "mercredi": time.Wednesday, "jeudi": time.Thursday,
	"vendredi": time.Friday, "samedi": time.Saturday, "dimanche": time.Sunday,
	// Spanish
	"lunes": time.Monday, "martes": time.Tuesday, "miércoles": time.Wednesday, "miercoles": time.Wednesday,
	"jueves": time.Thursday, "viernes": time.Friday, "sábado": time.Saturday, "sabado": time.Saturday,
	"domingo": time.Sunday,
	// Dutch
	"maandag": time.Monday, "dinsdag": time.Tuesday, "woensdag": time.Wednesday, "donderdag": time.Thursday,
	"vrijdag": time.Friday, "zaterdag": time.Saturday, "zondag": time.Sunday,
}

// weekdayOf reads a weekday name; plural reports "tuesdays" (and
// "montags", "samedis", "maandagen").
func weekdayOf(w string) (d time.Weekday, plural, ok bool) {
	if d, ok := weekdays[w]; ok {
		return d, false, true
	}
	if len(w) > 4 && strings.HasSuffix(w, "s") {
		if d, ok := weekdays[w[:len(w)-1]]; ok {
			return d, true, true
		}
	}
	if len(w) > 6 && strings.HasSuffix(w, "en") {
		if d, ok := weekdays[w[:len(w)-2]]; ok {
			return d, true, true
		}
	}
	return 0, false, false
}

// ordinalWords are the days of the month written as words.
var ordinalWords = map[string]int{
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
	"ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
	"fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
	"twentieth": 20, "thirtieth": 30, "premier": 1, "première": 1, "primero": 1, "ersten": 1, "erste": 1,
}

// elisions are the French articles and pronouns glued to the next word by
// an apostrophe ("l'après-midi", "jusqu'au"); they are split off so that
// the word after them reads as itself.
var elisions = map[string]bool{
	"l'": true, "d'": true, "j'": true, "n'": true, "s'": true, "c'": true, "m'": true, "t'": true,
	"qu'": true, "jusqu'": true, "lorsqu'": true, "puisqu'": true,
}

// germanDeterminers come before an ordinal adjective ("den 10.
// Geburtstag", "zum 3. Mal").
var germanDeterminers = map[string]bool{
	"den": true, "dem": true, "der": true, "die": true, "das": true, "zum": true, "zur": true, "am": true,
	"vom": true, "im": true, "ihren": true, "ihrem": true, "seinen": true, "seinem": true, "meinen": true,
	"meinem": true, "unseren": true, "unserem": true,
}

const maxTokens = 20000

// lex splits lower-cased text into tokens. Newlines are kept as "\n"
// marks because a line is where people end a thought, except where a
// mail client wrapped a long line (wrapped).
func lex(s string) []tok {
	rs := []rune(s)
	for i, r := range rs {
		rs[i] = unicode.ToLower(r) // rune by rune, so that positions stay those of s
	}
	var out []tok
	space := true
	for i := 0; i < len(rs) && len(out) < maxTokens; {
		r := rs[i]
		switch {
		case r == '\n' && wrapped(rs, i):
			space = true
			i++
			continue
		case r == '\n':
			out = append(out, tok{w: "\n", kind: 'p', clock: -1, space: space, from: i, to: i + 1})
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
			w := string(rs[i:j])
			if k := strings.IndexByte(w, '\''); k > 0 && elisions[w[:k+1]] && k+1 < len(w) {
				n := len([]rune(w[:k+1]))
				out = append(out, tok{w: w[:k+1], kind: 'w', clock: -1, space: space, from: i, to: i + n})
				i += n
				w = w[k+1:]
				space = false
			}
			t := tok{w: w, kind: 'w', clock: -1, space: space, from: i, to: j}
			if n, ok := ordinalWords[w]; ok {
				t.kind, t.n, t.ord, t.word = 'n', n, true, true
			}
			out = append(out, t)
			i = j
		case r >= '0' && r <= '9':
			t, j := lexNumber(rs, i)
			t.space = space
			// "den 10. Geburtstag": an ordinal after a German article, not
			// the end of a sentence.
			if t.kind == 'n' && !t.ord && t.clock < 0 && j < len(rs) && rs[j] == '.' && j+1 < len(rs) && rs[j+1] == ' ' && len(out) > 0 && germanDeterminers[out[len(out)-1].w] {
				t.ord, t.to = true, j+1
				j++
			}
			out = append(out, t)
			i = j
		default:
			out = append(out, tok{w: string(r), kind: 'p', clock: -1, space: space, from: i, to: i + 1})
			i++
		}
		space = false
	}
	return mergeUnits(out)
}

// wrapMin is the shortest line taken for one a mail client wrapped:
// clients wrap at 72 to 78 characters, and a line people end themselves
// ("Thanks,", "Tuesday 10am") is mostly far shorter.
const wrapMin = 45

// wrapped reports whether the newline at rs[i] is a mail client's wrap of
// a long line rather than the end of a thought: the line before it is
// long and ends mid-sentence (a letter, a digit or a comma), and the line
// after it goes on with a word or a number. "sometime next\nweek" is then
// read as "sometime next week".
func wrapped(rs []rune, i int) bool {
	st := i
	for st > 0 && rs[st-1] != '\n' {
		st--
	}
	line := strings.TrimSpace(string(rs[st:i]))
	if len([]rune(line)) < wrapMin || strings.HasPrefix(line, ">") {
		return false
	}
	last := []rune(line)[len([]rune(line))-1]
	if !unicode.IsLetter(last) && !unicode.IsDigit(last) && last != ',' {
		return false
	}
	j := i + 1
	for j < len(rs) && (rs[j] == ' ' || rs[j] == '\t') {
		j++
	}
	return j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '¿' || rs[j] == '¡')
}

// lexNumber reads the number at rs[i] with what is glued to it.
func lexNumber(rs []rune, i int) (tok, int) {
	j := i
	for j < len(rs) && isDigit(rs[j]) && j-i < 9 {
		j++
	}
	t := tok{w: string(rs[i:j]), kind: 'n', clock: -1, from: i}
	t.n = atoi(t.w)
	// 06-12345678, 0171-2345678: digits joined by a dash to a run of five
	// or more are a phone number or a reference, one token and no date.
	if j < len(rs) && rs[j] == '-' {
		k := j + 1
		for k < len(rs) && isDigit(rs[k]) {
			k++
		}
		if k-(j+1) >= 5 {
			t.w = string(rs[i:k])
			t.n = 1 << 30
			t.to = k
			return t, k
		}
	}
	// 2026-10-10, 2026/10/10: year first, so the order is settled.
	if j-i == 4 && j+2 < len(rs) && (rs[j] == '-' || rs[j] == '/') {
		if parts, k := digitGroups(rs, j, rs[j], 2); len(parts) == 2 && parts[0] >= 1 && parts[0] <= 12 && parts[1] >= 1 && parts[1] <= 31 {
			t.kind, t.d1, t.d2, t.d3, t.ymd = 'd', parts[1], parts[0], t.n, true
			t.to = k
			return t, k
		}
	}
	// 24-04, 04-24: two groups of two digits joined by a dash, one with
	// a leading zero, are a date in the country's order; "10-12" stays
	// hours or a range of days.
	if j-i == 2 && j+2 < len(rs) && rs[j] == '-' && isDigit(rs[j+1]) && isDigit(rs[j+2]) && (j+3 >= len(rs) || !isDigit(rs[j+3]) && rs[j+3] != '-' && rs[j+3] != ':') &&
		(rs[i] == '0' || rs[j+1] == '0') {
		a, b := t.n, atoi(string(rs[j+1:j+3]))
		if a >= 1 && b >= 1 && (a <= 12 || b <= 12) && a <= 31 && b <= 31 {
			t.kind, t.d1, t.d2 = 'd', a, b
			t.to = j + 3
			return t, j + 3
		}
	}
	// 7:30, 3.30
	if j+2 < len(rs) && (rs[j] == ':' || rs[j] == '.') && isDigit(rs[j+1]) && isDigit(rs[j+2]) && (j+3 >= len(rs) || !isDigit(rs[j+3])) && t.n <= 24 {
		m := atoi(string(rs[j+1 : j+3]))
		dotDate := rs[j] == '.' && j+3 < len(rs) && rs[j+3] == '.' && m >= 1 && m <= 12 && t.n >= 1
		if m < 60 && !dotDate {
			t.clock = t.n*60 + m
			j += 3
		}
	}
	// 04/02/2026, 14/3, 14.03.2026, 28.11.
	if t.clock < 0 && j+1 < len(rs) && (rs[j] == '/' || rs[j] == '.') && isDigit(rs[j+1]) {
		sep := rs[j]
		parts, k := digitGroups(rs, j, sep, 2)
		parts = append([]int{t.n}, parts...)
		dotted := sep == '.' && len(parts) == 2 && k < len(rs) && rs[k] == '.' && parts[0] >= 1 && parts[0] <= 31 && parts[1] >= 1 && parts[1] <= 12
		if len(parts) >= 2 && (sep == '/' || len(parts) == 3 || dotted) {
			t.kind = 'd'
			t.d1, t.d2 = parts[0], parts[1]
			if len(parts) == 3 {
				t.d3 = parts[2]
			}
			j = k
			if dotted || sep == '.' && k < len(rs) && rs[k] == '.' && (k+1 >= len(rs) || !isDigit(rs[k+1])) {
				j++ // the dot that closes "28.11." or "14.03.2026."
			}
			t.to = j
			return t, j
		}
	}
	// German ordinals: "5. September", "21. und 25.", "12.-15."
	if t.clock < 0 && t.n >= 1 && t.n <= 31 && j-i <= 2 && j < len(rs) && rs[j] == '.' {
		k := j + 1
		for k < len(rs) && rs[k] == ' ' {
			k++
		}
		e := k
		for e < len(rs) && unicode.IsLetter(rs[e]) {
			e++
		}
		next := string(rs[k:e])
		if _, isMonth := months[next]; isMonth || next == "und" || next == "bis" || next == "oder" || k < len(rs) && rs[k] == '-' && digitAfter(rs, k+1) {
			t.ord = true
			t.to = j + 1
			return t, j + 1
		}
	}
	// glued suffixes: 19th, 3pm, 8ish, 10am, 7p.m., 1er, 3e, 17h30, 18uhr
	k := j
	for k < len(rs) && (unicode.IsLetter(rs[k]) || rs[k] == '.' && k > j && k+1 < len(rs) && unicode.IsLetter(rs[k+1])) {
		k++
	}
	suf := strings.ReplaceAll(string(rs[j:k]), ".", "")
	switch suf {
	case "":
	case "st", "nd", "rd", "th", "er", "re", "e", "ème", "eme", "ste", "de":
		t.ord = true
		j = k
	case "am", "pm":
		t.ampm = suf[0]
		j = k
	case "ish":
		t.ish = true
		j = k
	case "h", "hrs", "uhr", "uur", "u":
		if t.clock < 0 {
			t.clock = t.n * 60
			if (suf == "h" || suf == "u") && k+1 < len(rs) && isDigit(rs[k]) && isDigit(rs[k+1]) && (k+2 >= len(rs) || !isDigit(rs[k+2])) {
				if m := atoi(string(rs[k : k+2])); m < 60 {
					t.clock += m // 17h30
					k += 2
				}
			}
		}
		j = k
	default:
		// "7b", "2surf": a word, not a number.
		t.kind = 'w'
		t.w = string(rs[i:k])
		j = k
	}
	t.to = j
	return t, j
}

// digitAfter reports a digit at rs[k] or after the spaces there: "12.-15."
// and "12. - 15." are a range of days, "after 3. -Jamal" a sign-off.
func digitAfter(rs []rune, k int) bool {
	for k < len(rs) && rs[k] == ' ' {
		k++
	}
	return k < len(rs) && isDigit(rs[k])
}

// digitGroups reads up to n more groups of digits, each after sep, from
// rs[j] (which is sep); it returns them and where reading stopped.
func digitGroups(rs []rune, j int, sep rune, n int) ([]int, int) {
	var parts []int
	k := j + 1
	for len(parts) < n && k <= len(rs) {
		st := k
		for k < len(rs) && isDigit(rs[k]) && k-st < 4 {
			k++
		}
		if k == st {
			break
		}
		parts = append(parts, atoi(string(rs[st:k])))
		if k < len(rs) && rs[k] == sep && k+1 < len(rs) && isDigit(rs[k+1]) && len(parts) < n {
			k++
			continue
		}
		break
	}
	return parts, k
}

// mergeUnits joins a number with the word after it that says what it is:
// "7 pm", "7:30 p.m.", "8 ish", "10 o'clock", "18 Uhr", "17 h".
func mergeUnits(out []tok) []tok {
	merged := out[:0]
	for i := 0; i < len(out); i++ {
		t := out[i]
		if t.kind == 'n' && !t.word && i+2 < len(out) && out[i+1].w == "-" && out[i+2].w == "ish" && !out[i+1].space && !out[i+2].space {
			// "6-ish" is "6ish".
			t.ish = true
			t.to = out[i+2].to
			merged = append(merged, t)
			i += 2
			continue
		}
		if t.kind == 'n' && !t.word && i+1 < len(out) && out[i+1].kind == 'w' {
			switch out[i+1].w {
			case "am", "pm":
				if t.ampm == 0 {
					t.ampm = out[i+1].w[0]
					t.to = out[i+1].to
					i++
				}
			case "a", "p":
				if i+3 < len(out) && out[i+2].w == "." && out[i+3].w == "m" {
					t.ampm = out[i+1].w[0]
					i += 3
					if i+1 < len(out) && out[i+1].w == "." {
						i++
					}
					t.to = out[i].to
				}
			case "ish":
				t.ish = true
				t.to = out[i+1].to
				i++
			case "o'clock", "oclock", "uhr", "uur", "h", "heures", "heure":
				if t.clock < 0 {
					t.clock = t.n * 60
				}
				t.to = out[i+1].to
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
