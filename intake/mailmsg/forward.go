package mailmsg

import (
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	subjectPrefix  = regexp.MustCompile(`(?i)^\s*(re|fwd?|fw|aw|wg|tr|sv|vs|antw)\s*(\[\d+\])?\s*:\s*`)
	replySubject   = regexp.MustCompile(`(?i)^\s*(re|aw|sv|antw)\s*(\[\d+\])?\s*:`)
	forwardSubject = regexp.MustCompile(`(?i)^\s*((re|aw|sv)\s*:\s*)*(fwd?|fw|wg|tr|rv|doorst)\s*(\[\d+\])?\s*:`)

	// A marker that always introduces a forwarded message.
	strongMarker = regexp.MustCompile(`(?i)^\s*(-{2,}\s*(forwarded message|weitergeleitete nachricht|message transf[ée]r[ée]|mensaje reenviado|doorgestuurd bericht|messaggio inoltrato)\s*-*|begin forwarded message:?|anfang der weitergeleiteten nachricht:?|d[ée]but du message r[ée]exp[ée]di[ée]\s*:?|inicio del mensaje reenviado:?|begin doorgestuurd bericht:?)\s*$`)
	// A marker that introduces either a forwarded message or the quoted
	// message being replied to: Outlook writes the same for both.
	// Outlook's separator in English, German, French, Spanish and Dutch.
	weakMarker = regexp.MustCompile(`(?i)^\s*(-{3,}\s*(original message|urspr[üu]ngliche nachricht|message d'origine|mensaje original|oorspronkelijk bericht)\s*-{3,}|_{10,}|-{10,})\s*$`)
	headerLine = regexp.MustCompile(`(?i)^\s*\*?(from|sent|date|to|cc|subject|reply-to|de|von|envoy[ée]|gesendet|datum|an|betreff|objet|[àa]|para|asunto|enviado(?: el)?|fecha|van|verzonden|aan|onderwerp)\s*\*?\s*:\s*\*?\s*(.*)$`)
)

// forward is one inline-forwarded message found in a text.
type forward struct {
	note    string // the text above the marker
	from    mail.Address
	date    time.Time
	rawDate string
	subject string
	body    func() string // built only once the forward is accepted
}

// headerKey folds localised header names onto the English ones.
func headerKey(k string) string {
	switch strings.Join(strings.Fields(strings.ToLower(k)), " ") {
	case "from", "de", "von", "van":
		return "from"
	case "sent", "date", "envoyé", "envoye", "gesendet", "datum", "enviado", "enviado el", "fecha", "verzonden":
		return "date"
	case "subject", "betreff", "objet", "asunto", "onderwerp":
		return "subject"
	case "to", "an", "à", "a", "para", "aan":
		return "to"
	}
	return strings.ToLower(k)
}

// findForward finds the first forwarded message in text. Outlook's
// "-----Original Message-----" and underscore separators, and a bare
// From/Sent header block, count as forwards only when the subject says so
// (FW:, Fwd:) or nothing was written above them; otherwise they introduce a
// quoted reply. loc is the zone for forward dates that do not name one.
func findForward(text string, fwdSubject bool, loc *time.Location) (forward, bool) {
	lines := strings.Split(text, "\n")
	wroteAbove := false // anything but quotes and blank lines above line i
	for i, l := range lines {
		if i > 0 {
			p := strings.TrimSpace(lines[i-1])
			wroteAbove = wroteAbove || p != "" && !strings.HasPrefix(p, ">")
		}
		strong := strongMarker.MatchString(unquote(l))
		weak := !strong && weakMarker.MatchString(unquote(l))
		bare := !strong && !weak && isBareHeaderStart(lines, i)
		if !strong && !weak && !bare {
			continue
		}
		if !strong && !fwdSubject && wroteAbove {
			continue
		}
		start := i + 1
		if bare {
			start = i
		}
		f, ok := parseForward(lines[start:], loc)
		if !ok || (!strong && f.from.Address == "" && f.from.Name == "") {
			continue
		}
		f.note = strings.Join(lines[:i], "\n")
		return f, true
	}
	return forward{}, false
}

func isBareHeaderStart(lines []string, i int) bool {
	m := headerLine.FindStringSubmatch(lines[i])
	if m == nil || headerKey(m[1]) != "from" || strings.TrimSpace(m[2]) == "" {
		return false
	}
	for j := i + 1; j < len(lines) && j <= i+2; j++ {
		if n := headerLine.FindStringSubmatch(lines[j]); n != nil {
			k := headerKey(n[1])
			return k == "date" || k == "to" || k == "subject"
		}
	}
	return false
}

// parseForward reads the header block that follows a forward marker and
// returns the message below it. Apple Mail quotes the forwarded message,
// header block included; a quoted one is unquoted by one level, line by
// line as it is read, so that a failed attempt costs only its header.
func parseForward(lines []string, loc *time.Location) (forward, bool) {
	first := -1
	for j, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = j
			break
		}
		if j > 8 {
			break
		}
	}
	if first < 0 {
		return forward{}, false
	}
	quoted := strings.HasPrefix(strings.TrimLeft(lines[first], " "), ">")
	line := func(j int) string {
		if quoted {
			return unquoteOnce(lines[j])
		}
		return lines[j]
	}
	var f forward
	keys, last := 0, ""
	j := first
	for ; j < len(lines); j++ {
		l := line(j)
		if strings.TrimSpace(l) == "" {
			if keys > 0 {
				j++
				break
			}
			continue
		}
		m := headerLine.FindStringSubmatch(l)
		if m == nil {
			if keys > 0 && (last == "to" || last == "cc") && (strings.Contains(l, "@") || strings.HasSuffix(strings.TrimSpace(l), ",")) {
				continue // a wrapped recipient list
			}
			if keys == 0 {
				return forward{}, false
			}
			break
		}
		keys++
		if keys > 32 {
			return forward{}, false
		}
		k, v := headerKey(m[1]), strings.TrimSpace(m[2])
		last = k
		switch k {
		case "from":
			if a, ok := looseAddress(v); ok {
				f.from = a
			}
		case "date":
			f.rawDate = v
			if d, ok := parseLooseDate(v, loc); ok {
				f.date = d
			}
		case "subject":
			f.subject = v
		}
	}
	if keys == 0 {
		return forward{}, false
	}
	j = min(j, len(lines))
	f.body = func() string {
		var b strings.Builder
		for k := j; k < len(lines); k++ {
			if k > j {
				b.WriteByte('\n')
			}
			b.WriteString(line(k))
		}
		return b.String()
	}
	return f, true
}

func unquote(l string) string {
	return strings.TrimLeft(l, "> ")
}

func unquoteOnce(l string) string {
	t := strings.TrimLeft(l, " ")
	if !strings.HasPrefix(t, ">") {
		return l
	}
	t = t[1:]
	return strings.TrimPrefix(t, " ")
}

var (
	angleAddr = regexp.MustCompile(`^\s*"?([^"<\[]*?)"?\s*[<\[]\s*(?:mailto:)?\s*([^\s<>\[\]]+@[^\s<>\[\]]+?)\s*[>\]]`)
	bareAddr  = regexp.MustCompile(`[A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	nameOnly  = regexp.MustCompile(`^[\pL][\pL .,'’-]{0,78}$`)
)

// looseAddress reads an address as forward headers and broken From fields
// write it: `Name <a@b>`, `"Doe, Jane" <a@b>`, `Doe, Jane <a@b>`,
// `Name [mailto:a@b]`, `a@b`, or a name alone.
func looseAddress(s string) (mail.Address, bool) {
	s = strings.TrimSpace(s)
	if m := angleAddr.FindStringSubmatch(s); m != nil {
		return mail.Address{Name: strings.Trim(strings.TrimSpace(m[1]), `"'`), Address: strings.ToLower(m[2])}, true
	}
	if a, err := mail.ParseAddress(s); err == nil {
		a.Address = strings.ToLower(a.Address)
		return *a, true
	}
	if loc := bareAddr.FindStringIndex(s); loc != nil {
		name := strings.Trim(strings.TrimSpace(s[:loc[0]]+" "+s[loc[1]:]), `"'<>()[] `)
		return mail.Address{Name: name, Address: strings.ToLower(s[loc[0]:loc[1]])}, true
	}
	if nameOnly.MatchString(s) {
		return mail.Address{Name: s}, true
	}
	return mail.Address{}, false
}

var (
	looseTime    = regexp.MustCompile(`(?i)\b(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?(?:\W|$)|\b(\d{1,2})\s*(a\.?m\.?|p\.?m\.?)(?:\W|$)`)
	looseNumDate = regexp.MustCompile(`\b(\d{1,4})[/.-](\d{1,2})[/.-](\d{2,4})\b`)
	looseZone    = regexp.MustCompile(`(?i)\b(?:gmt|utc)\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?\b|([+-])(\d{2}):?(\d{2})\b|\b(gmt|utc|z|bst|cet|cest|eet|eest|wet|west|est|edt|cst|cdt|mst|mdt|pst|pdt|aest|aedt|nzst|nzdt)\b`)
	looseNum     = regexp.MustCompile(`\b\d{1,4}(?:st|nd|rd|th)?\b`)
	// monthNames are the first three or four letters of the month names
	// forward headers write, in English, German, French, Spanish and Dutch.
	monthNames = map[string]time.Month{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
		"mär": 3, "mai": 5, "okt": 10, "dez": 12, "janv": 1, "févr": 2, "avr": 4, "juin": 6, "juil": 7, "août": 8, "déc": 12,
		"ene": 1, "abr": 4, "ago": 8, "dic": 12, "mrt": 3, "maar": 3, "mei": 5,
	}
	// weekdayNames are the weekdays, whole and abbreviated, that forward
	// headers write before the date ("mar, 3 nov 2026", "mardi 3
	// novembre", "di 3 nov"). Such a word is never taken for its month
	// ("mar" is Tuesday in Spanish and French, and March), unless the date
	// names no other month ("3 mar 2026").
	weekdayNames = wordSet(
		"mon tue tues wed weds thu thur thurs fri sat sun monday tuesday wednesday thursday friday saturday sunday",
		"mo di mi do fr sa so montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag",
		"lun mar mer jeu ven sam dim lundi mardi mercredi jeudi vendredi samedi dimanche",
		"mié mie jue vie sáb sab dom lunes martes miércoles miercoles jueves viernes sábado sabado domingo",
		"ma wo vr za zo maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
	)
	zoneOffsets = map[string]int{
		"gmt": 0, "utc": 0, "z": 0, "bst": 1, "cet": 1, "cest": 2, "eet": 2, "eest": 3, "wet": 0, "west": 1,
		"est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
		"aest": 10, "aedt": 11, "nzst": 12, "nzdt": 13,
	}
	monthWord = regexp.MustCompile(`\pL+`)
)

// parseLooseDate reads the dates mail clients write in forward headers
// ("Tue, 3 Mar 2026 at 09:12", "Tuesday, March 3, 2026 9:12 AM",
// "3 March 2026 at 09:12:33 GMT", "03/03/2026 09:12"). A date without a
// zone is taken to be in loc.
func parseLooseDate(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 200 {
		return time.Time{}, false
	}
	if t, err := mail.ParseDate(s); err == nil {
		return t, true
	}
	low := strings.ToLower(s)
	zone := loc
	if m := looseZone.FindStringSubmatchIndex(low); m != nil {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return low[m[2*i]:m[2*i+1]]
		}
		off := 0
		switch {
		case g(1) != "":
			h, _ := strconv.Atoi(g(2))
			mi, _ := strconv.Atoi(g(3))
			off = h*3600 + mi*60
			if g(1) == "-" {
				off = -off
			}
		case g(4) != "":
			h, _ := strconv.Atoi(g(5))
			mi, _ := strconv.Atoi(g(6))
			off = h*3600 + mi*60
			if g(4) == "-" {
				off = -off
			}
		default:
			off = zoneOffsets[g(7)] * 3600
		}
		if off > -15*3600 && off < 15*3600 {
			zone = time.FixedZone("", off)
		}
		low = low[:m[0]] + " " + low[m[1]:]
	}
	hour, minute, sec := 0, 0, 0
	if m := looseTime.FindStringSubmatchIndex(low); m != nil {
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return low[m[2*i]:m[2*i+1]]
		}
		var ampm string
		if g(1) != "" {
			hour, _ = strconv.Atoi(g(1))
			minute, _ = strconv.Atoi(g(2))
			sec, _ = strconv.Atoi(g(3))
			ampm = g(4)
		} else {
			hour, _ = strconv.Atoi(g(5))
			ampm = g(6)
		}
		if strings.HasPrefix(ampm, "p") && hour < 12 {
			hour += 12
		} else if strings.HasPrefix(ampm, "a") && hour == 12 {
			hour = 0
		}
		if hour > 23 || minute > 59 || sec > 60 {
			return time.Time{}, false
		}
		low = low[:m[0]] + " " + low[m[1]:]
	}
	var year, day int
	var month time.Month
	if m := looseNumDate.FindStringSubmatch(low); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		c, _ := strconv.Atoi(m[3])
		switch {
		case len(m[1]) == 4:
			year, month, day = a, time.Month(b), c
		case a > 12:
			day, month, year = a, time.Month(b), c
		case b > 12 || strings.Contains(m[0], "/"):
			month, day, year = time.Month(a), b, c
		default:
			day, month, year = a, time.Month(b), c
		}
	} else {
		month = monthOf(monthWord.FindAllString(low, -1))
		for _, n := range looseNum.FindAllString(low, -1) {
			n = strings.TrimRight(n, "stndrh")
			v, _ := strconv.Atoi(n)
			switch {
			case len(n) == 4 && year == 0:
				year = v
			case len(n) <= 2 && day == 0 && v >= 1 && v <= 31:
				day = v
			}
		}
	}
	if year > 0 && year < 100 {
		year += 2000
	}
	if year < 1990 || year > 2200 || month < 1 || month > 12 || day < 1 || day > 31 {
		return time.Time{}, false
	}
	t := time.Date(year, month, day, hour, minute, sec, 0, zone)
	if t.Day() != day {
		return time.Time{}, false
	}
	return t, true
}

func wordSet(lists ...string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, w := range strings.Fields(l) {
			m[w] = true
		}
	}
	return m
}

// monthOf finds the month among a date's words: the first whose first four
// or three letters name one, a weekday coming second to any other word.
func monthOf(words []string) time.Month {
	var weekday time.Month
	for _, w := range words {
		var mo time.Month
		r := []rune(w)
		for _, n := range []int{4, 3} {
			if len(r) >= n && mo == 0 {
				mo = monthNames[string(r[:n])]
			}
		}
		switch {
		case mo == 0:
		case !weekdayNames[w]:
			return mo
		case weekday == 0 && monthNames[w] == mo:
			weekday = mo // "mar": March only if nothing else is a month
		}
	}
	return weekday
}
