package parse

import (
	"regexp"
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
	refined   bool     // a span the weekdays said in it narrowed, or a weekday naming a date already said
	dateOf    *item    // for a weekday the date after it placed ("this Saturday (the 6th)"), that date
	span      bool     // "this weekend": a short span later weekdays may fall in
	soft      bool     // named by an occasion ("Christmas Eve"), read as background
	relative  bool     // said relative to another day ("the day before")
	now       bool     // "now", which is a day only as the start of a range
	sentence  int      // which sentence said it
}

// when is the outcome of reading dates and times.
type when struct {
	earliest, latest time.Time
	availability     []nextup.Availability
	conf             float64
	problems         []string
}

type reader struct {
	toks      []tok
	today     day
	ref       time.Time
	us        bool // month/day order for numeric dates
	items     []*item
	windows   []window // parts of the day said in a sentence naming no day
	exclude   map[time.Weekday]bool
	lower     day // "from the 5th of May on"
	upper     day // "before Friday"
	probs     []string
	groups    int
	lastTODs  []window // for "at the same time"
	lastWeek  *item    // the week or weekend a later sentence's weekdays fall in
	lastDay   *item    // for "the day before", "the weekend after"
	evening   bool     // dinner, tonight: a bare "8" is 20:00
	settled   bool     // the country settles the order of 04/05
	country   string   // the business's country, for the holidays it keeps its own way
	src       []rune   // the text, for quoting a phrase back
	keep      []bool   // tokens outside quoted history, headers and the sign-off
	unsure    []string // date phrases read with doubt, as written
	away      bool     // the clause being read says the requester is away or busy
	sentences int      // sentences read so far
	prev      []*item  // the items of the last sentence that had any
	datedEnd  int      // where the last dated day read ends, for an apposition after it
}

type tw struct {
	w   window
	pos int
	// point marks a time said as a moment ("around noon", "at 7",
	// "8ish"): a part of the day beside it does not cut it.
	point bool
}

// findWhen reads when the requester wants to come, relative to ref (the
// sending time in the business timezone). The subject is read only when
// the text says nothing about time.
func findWhen(text, subject string, ref time.Time, country string) when {
	r := newReader(text, ref, country)
	r.read()
	if len(r.items) == 0 && len(r.windows) == 0 && len(r.exclude) == 0 && r.lower.IsZero() && r.upper.IsZero() && !asap.MatchString(text) {
		unsure := r.unsure
		r = newReader(subject, ref, country)
		r.read()
		r.unsure = append(unsure, r.unsure...)
	}
	return r.result()
}

// asap matches "as soon as possible" in each language: a text that says
// it has said when, so a day in the subject ("Re: Your appointment on
// King's Day") is not read as the request.
var asap = regexp.MustCompile(`(?i)\b(as soon as possible|asap|as early as possible|so bald wie möglich|so schnell wie möglich|schnellstmöglich|baldmöglichst|dès que possible|au plus vite|au plus tôt|lo antes posible|cuanto antes|lo más pronto posible|zo snel mogelijk|zo spoedig mogelijk|zsm)\b`)

// eveningWords make a bare hour ("at 8") an evening one.
var eveningWords = map[string]bool{
	"dinner": true, "tonight": true, "tonite": true, "night": true, "evening": true, "evenings": true,
	"supper": true, "drinks": true, "cena": true, "cenar": true, "dîner": true, "diner": true,
	"abendessen": true, "avondeten": true,
	// A table is booked for the evening more often than not.
	"table": true, "mesa": true, "tisch": true, "tafel": true,
}

func newReader(text string, ref time.Time, country string) *reader {
	toks := canonical(lex(text))
	evening := false
	for _, t := range toks {
		if eveningWords[t.w] {
			evening = true
		}
	}
	src := []rune(text)
	us, settled := orderOf(country)
	return &reader{
		country: country,
		evening: evening,
		toks:    toks,
		today:   dayOf(ref),
		ref:     ref,
		us:      us,
		settled: settled,
		src:     src,
		keep:    keepTokens(toks, src),
		exclude: map[time.Weekday]bool{},
	}
}

// orderOf says how a country (ISO 3166-1 alpha-2) writes 04/05: month
// first (the United States and the countries that follow its usage, as
// intake/csvrows lists them) or day first, and whether the country settles
// it at all: Canada writes both, and an unknown country says nothing.
// Canada is read month first, an unknown country day first.
func orderOf(country string) (monthFirst, settled bool) {
	switch strings.ToUpper(country) {
	case "US", "PR", "GU", "VI", "AS", "MP", "UM", "PH", "FM", "MH", "PW":
		return true, true
	case "CA":
		return true, false
	case "":
		return false, false
	}
	return false, true
}

// Lines that are not the request: a mail header block left in the text
// (a forward the mail reader did not recognise), a reply's introduction
// ("On Tue, 3 Mar 2026, Jane wrote:", "Op ma 14 dec 2026 schreef ...:")
// and everything after it, and the sign-off block under a closing ("Kind
// regards,") down to a postscript. Dates there (the quoted offer, the
// forward's date, "Out of office 31 Aug - 4 Sep") are not asked for.
var (
	headerLine     = regexp.MustCompile(`(?i)^\s*\*?(from|sent|date|to|cc|subject|von|gesendet|datum|an|betreff|de|envoyé|objet|à|para|asunto|enviado|fecha|van|verzonden|aan|onderwerp)\s*\*?\s*:`)
	replyIntroLine = regexp.MustCompile(`(?i)^\s*(on|am|le|el|op|il)\b.*\b(wrote|schrieb|schreef|a écrit|escribió|ha escrito|scrisse)\b.*:\s*$`)
	postscript     = regexp.MustCompile(`(?i)^\s*p\.?\s*s\b`)
)

// closings are the lines that end a message, as people write them.
var closings = map[string]bool{
	"thanks": true, "thank you": true, "thanks so much": true, "thank you so much": true, "many thanks": true,
	"thanks a million": true, "thanks again": true, "cheers": true, "regards": true, "kind regards": true,
	"best regards": true, "warm regards": true, "warmest regards": true, "best": true, "best wishes": true,
	"all the best": true, "sincerely": true, "yours sincerely": true, "yours faithfully": true, "ta": true,
	"thx": true, "love": true, "many thanks in advance": true, "thanks in advance": true,
	"mit freundlichen grüßen": true, "mit freundlichen grüssen": true, "freundliche grüße": true,
	"viele grüße": true, "liebe grüße": true, "beste grüße": true, "herzliche grüße": true, "grüße": true,
	"gruß": true, "danke": true, "danke und gruß": true, "vielen dank": true, "lg": true, "vg": true, "mfg": true,
	"cordialement": true, "bien cordialement": true, "bien à vous": true, "merci": true, "merci beaucoup": true,
	"merci d'avance": true, "bonne journée": true, "bonne soirée": true, "bises": true, "amicalement": true,
	"saludos": true, "un saludo": true, "un abrazo": true, "gracias": true, "muchas gracias": true,
	"atentamente": true, "besos": true, "groet": true, "groetjes": true, "met vriendelijke groet": true,
	"vriendelijke groet": true, "hartelijke groet": true, "bedankt": true, "alvast bedankt": true, "mvg": true,
	// More of the same, in each language: a sign-off block often holds an
	// office closure or a leave notice that is not the request.
	"kindest regards": true, "best wishes and thanks": true, "warm wishes": true, "speak soon": true,
	"talk soon": true, "see you soon": true, "thanks again and best regards": true, "with thanks": true,
	"mit besten grüßen": true, "schöne grüße": true, "herzliche grüsse": true, "liebe grüsse": true,
	"viele grüsse": true, "beste grüsse": true, "freundliche grüsse": true, "gruss": true, "lg und danke": true,
	"salutations": true, "sincères salutations": true, "meilleures salutations": true, "bien à toi": true,
	"à bientôt": true, "belle journée": true, "belle soirée": true, "merci et bonne journée": true,
	"saludos cordiales": true, "un cordial saludo": true, "cordiales saludos": true, "muchas gracias de antemano": true,
	"gracias de antemano": true, "un saludo cordial": true, "saludos y gracias": true, "hasta pronto": true,
	"met vriendelijke groeten": true, "vriendelijke groeten": true, "groeten": true, "hartelijke groeten": true,
	"met hartelijke groet": true, "alvast dank": true, "dank je wel": true, "dank u wel": true, "tot snel": true,
}

// noticeWords mark a notice line, as signatures and autoreplies carry
// them: "Office closed 24 Dec - 2 Jan", "Annual leave: 21/12 - 04/01",
// "Unser Büro ist vom 23.12. bis 03.01. geschlossen".
var noticeWords = []string{
	"out of office", "annual leave", "on leave", "ooo", "abwesend", "afwezig", "ausente", "absent du", "absente du",
}

// closedWords say that something is closed; with an office word
// (officeWords) on the same line they make a notice too. Alone they may
// be anything: "aún no tenemos el día cerrado".
var (
	closedWords = []string{"closed", "geschlossen", "fermé", "fermée", "fermés", "cerrado", "cerrada", "gesloten"}
	officeWords = []string{"office", "büro", "bureau", "oficina", "kantoor", "praxis", "firma", "company", "empresa", "entreprise", "bedrijf", "cabinet"}
)

// askWords are the words of a request in each language; a line that asks
// is no notice, whatever else it says.
var askWords = []string{
	"could", "would", "can ", "can't", "like", "book", "please", "appointment", "möchte", "würde", "könnte",
	"kann", "gern", "voudrais", "pourr", "aimerais", "souhait", "rendez", "podría", "quisiera", "quería",
	"gustaría", "reserv", "kan ik", "zou ", "graag", "afspraak", "wil ",
}

// noticeLine reports a notice line: it names a closure or a leave and
// asks for nothing.
func noticeLine(line string) bool {
	l := strings.ToLower(line)
	notice := false
	for _, w := range noticeWords {
		notice = notice || strings.Contains(l, w)
	}
	for _, c := range closedWords {
		for _, o := range officeWords {
			notice = notice || strings.Contains(l, c) && strings.Contains(l, o)
		}
	}
	if !notice {
		return false
	}
	for _, w := range askWords {
		if strings.Contains(l, w) {
			return false
		}
	}
	return true
}

// keepTokens marks the tokens that stand outside such lines.
func keepTokens(toks []tok, src []rune) []bool {
	type line struct {
		from, to int
		text     string
	}
	var lines []line
	for i, st := 0, 0; i <= len(src); i++ {
		if i == len(src) || src[i] == '\n' {
			lines = append(lines, line{st, i, strings.TrimSpace(string(src[st:i]))})
			st = i + 1
		}
	}
	skip := make([]bool, len(lines))
	header := func(i int) string {
		if i < 0 || i >= len(lines) {
			return ""
		}
		if m := headerLine.FindStringSubmatch(lines[i].text); m != nil {
			return strings.ToLower(m[1])
		}
		return ""
	}
	signed, content := false, false
lines:
	for i, l := range lines {
		closing := closings[strings.ToLower(strings.TrimRight(l.text, " ,.!"))]
		switch {
		case replyIntroLine.MatchString(l.text):
			for k := i; k < len(lines); k++ {
				skip[k] = true
			}
			break lines
		case signed:
			if postscript.MatchString(l.text) {
				signed = false
			} else {
				skip[i] = true
			}
		case closing && content:
			signed = true
		case noticeLine(l.text):
			skip[i] = true
		case header(i) != "":
			k := header(i)
			for _, j := range []int{i - 2, i - 1, i + 1, i + 2} {
				if h := header(j); h != "" && h != k {
					skip[i] = true
				}
			}
		}
		content = content || l.text != "" && !closing
	}
	keep := make([]bool, len(toks))
	li := 0
	for i, t := range toks {
		for li < len(lines)-1 && t.from > lines[li].to {
			li++
		}
		keep[i] = len(lines) == 0 || !skip[li]
	}
	return keep
}

// read goes sentence by sentence.
func (r *reader) read() {
	start := 0
	for i := 0; i <= len(r.toks); i++ {
		if i == len(r.toks) || !r.keep[i] || isSentenceEnd(r.toks, i) {
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
		// Not after "dr", "st", "a.m." and the like; "check-up." and "see
		// you." end their sentence like any other word.
		if i > 0 && ts[i-1].kind == 'w' && (len([]rune(ts[i-1].w)) == 1 || abbreviations[ts[i-1].w]) {
			return false
		}
		return true
	}
	return false
}

// abbreviations are the short words written with a full stop that does
// not end the sentence: titles, "St.", "ca.", "no.".
var abbreviations = map[string]bool{
	"dr": true, "mr": true, "mrs": true, "ms": true, "st": true, "jr": true, "sr": true, "no": true, "nr": true,
	"ca": true, "vs": true, "approx": true, "tel": true, "mob": true, "ph": true, "eg": true, "ie": true,
	"bzw": true, "evtl": true, "ggf": true, "hr": true, "fr": true, "sra": true, "mme": true, "mlle": true,
	"dhr": true, "mevr": true, "tlf": true, "tfno": true,
}

// maxItems bounds the dates and times read per sentence.
const maxItems = 48

// requestWords open a request; after "and" or "but" they start a new
// clause (clauses).
var requestWords = map[string]bool{
	"would": true, "could": true, "can": true, "want": true, "wants": true, "need": true, "needs": true,
	"i'd": true, "we'd": true, "wondered": true, "wondering": true,
}

var pastWords = map[string]bool{
	"ago": true, "last": true, "since": true, "broke": true, "had": true, "tweaked": true, "saw": true, "did": true,
	"was": true, "happened": true, "hurt": true, "injured": true, "booked": true, "sold": true, "nothing": true,
	"went": true, "came": true, "cancelled": true, "canceled": true, "moved": true, "yesterday": true,
	// What someone else said is not what the requester asks for.
	"said": true, "told": true, "mentioned": true, "suggested": true, "recommended": true, "advised": true,
}

// asksAt reports whether the clause a..b asks for something ("could we",
// "I'd like", "please").
func (r *reader) asksAt(a, b int) bool {
	for i := a; i < b; i++ {
		if w := r.word(i, b); requestWords[w] || w == "please" || w == "like" || w == "book" || w == "love" {
			return true
		}
	}
	return false
}

// booksAt reports whether the clause a..b asks to book something for an
// occasion it names: "hoping to book dinner for our anniversary on".
func (r *reader) booksAt(a, b int) bool {
	for i := a; i < b; i++ {
		if w := r.word(i, b); w == "book" || w == "booking" || w == "reserve" {
			return true
		}
	}
	return false
}

// subjects are the pronouns a told past event starts with: "I chipped a
// tooth on Saturday", "we were in on 9/30".
var subjects = map[string]bool{"i": true, "we": true, "he": true, "she": true, "they": true, "it": true}

// politePast are the past forms a request is put in ("I wanted to ask
// about Friday", "we were hoping for Saturday"): not a told event.
var politePast = map[string]bool{
	"wanted": true, "hoped": true, "wondered": true, "needed": true, "liked": true, "preferred": true,
	"decided": true, "planned": true, "booked": true, "called": true, "emailed": true, "texted": true,
	"tried": true, "noticed": true, "used": true, "managed": true, "asked": true, "realised": true,
	"realized": true, "figured": true, "checked": true, "looked": true, "reckoned": true, "guessed": true,
	"enjoyed": true, "loved": true,
}

// politeAt reports "was" or "were" putting a request politely: "I was
// hoping for Friday", "we were wondering about next week".
func (r *reader) politeAt(i, b int) bool {
	w := r.word(i, b)
	return (w == "was" || w == "were") && strings.HasSuffix(r.word(i+1, b), "ing")
}

// pastVerbAt reports a told past event at i in English: a pronoun and a
// verb in the simple past ("I chipped", "we visited", "she rolled"), or
// "were" not followed by the -ing of a polite request ("we were hoping").
// Other languages mark the past with the words pastWords lists.
func (r *reader) pastVerbAt(i, b int) bool {
	w, nx := r.word(i, b), r.word(i+1, b)
	if w == "were" {
		return !r.politeAt(i, b) && nx != "you" && r.word(i-1, b) != "if" && r.word(i-1, b) != "you"
	}
	if (w == "suis" || w == "sommes") && r.word(i-1, b) != "me" && r.word(i-1, b) != "m'" && r.word(i-1, b) != "nous" {
		return false // "je suis intéressée", "je suis invitée": a state, not an event
	}
	if perfectAux[w] {
		// "je me suis blessé samedi", "ich bin am Samstag gestürzt", "ik
		// ben zaterdag gevallen", "me he torcido el tobillo el sábado".
		for k := i + 1; k < b && k <= i+6; k++ {
			if participle(r.word(k, b)) {
				return true
			}
		}
	}
	if r.droppedSubjectAt(i, b) {
		return true
	}
	if !subjects[w] || len(nx) < 5 || !strings.HasSuffix(nx, "ed") || politePast[nx] {
		return false
	}
	return r.toks[i+1].kind == 'w'
}

// pastObjects are the words a simple past takes its object with when a
// terse mail drops the pronoun: "Chipped a tooth", "Twisted my ankle".
var pastObjects = map[string]bool{"a": true, "an": true, "my": true, "our": true, "his": true, "her": true, "the": true, "it": true, "myself": true}

// droppedSubjectAt reports a told past event whose pronoun a terse mail
// left out: a sentence that opens on a simple past and its object
// ("Chipped a tooth at the weekend", "Pulled my back on Saturday").
func (r *reader) droppedSubjectAt(i, b int) bool {
	w := r.word(i, b)
	if i > 0 && !isSentenceEnd(r.toks, i-1) || len(w) < 6 || !strings.HasSuffix(w, "ed") || politePast[w] {
		return false
	}
	return r.toks[i].kind == 'w' && pastObjects[r.word(i+1, b)]
}

// perfectAux are the auxiliaries of the perfect tense in German, French,
// Spanish and Dutch ("habe", "suis", "he", "ben"): with a past participle
// after them, the clause tells a past event.
var perfectAux = map[string]bool{
	"habe": true, "hat": true, "haben": true, "bin": true, "ist": true, "sind": true,
	"ai": true, "avons": true, "avez": true, "suis": true, "sommes": true,
	"he": true, "ha": true, "hemos": true, "han": true,
	"heb": true, "hebben": true, "ben": true, "zijn": true,
}

// hopes are the participles of a request put in the perfect ("ich habe
// an Samstag gedacht", "he pensado en el sábado"): no past event.
var hopes = map[string]bool{
	"gedacht": true, "überlegt": true, "gehofft": true, "geplant": true, "gewünscht": true, "bedacht": true,
	"gehoopt": true, "gepland": true, "pensé": true, "espéré": true, "prévu": true, "souhaité": true,
	"pensado": true, "esperado": true, "previsto": true, "planeado": true,
	// States said with the same auxiliaries.
	"geïnteresseerd": true, "geinteresseerd": true, "gespannt": true, "gewend": true, "geöffnet": true,
	"geopend": true, "gesloten": true, "geschlossen": true,
	// Nouns that end like a participle.
	"marido": true, "pescado": true, "helado": true, "cuidado": true, "partido": true, "mercado": true,
}

// participle reports a past participle of those languages: "gestürzt",
// "gevallen", "blessé", "eu", "torcido", "roto".
func participle(w string) bool {
	if _, _, wd := weekdayOf(w); hopes[w] || wd {
		return false // "sábado" is no participle
	}
	n := len([]rune(w))
	switch {
	case n >= 6 && strings.HasPrefix(w, "ge") && (strings.HasSuffix(w, "t") || strings.HasSuffix(w, "d") || strings.HasSuffix(w, "en")):
		return !strings.HasPrefix(w, "gern") && !strings.HasPrefix(w, "geen") && !strings.HasPrefix(w, "geburt")
	case n >= 5 && (strings.HasSuffix(w, "ado") || strings.HasSuffix(w, "ido") || strings.HasSuffix(w, "ada") || strings.HasSuffix(w, "ida")):
		return true
	case n >= 4 && (strings.HasSuffix(w, "é") || strings.HasSuffix(w, "ée")):
		return true
	}
	return w == "eu" || w == "fait" || w == "pris" || w == "roto" || w == "vu" || w == "visto" || w == "hecho"
}

// contextWords mark a clause as background: an occasion, a trip, a new
// job. Its dates are read only when nothing else is.
var contextWords = map[string]bool{
	"birthday": true, "married": true, "wedding": true, "visiting": true, "anniversary": true, "staying": true,
	"start": true, "starts": true, "job": true, "interview": true, "exam": true, "fly": true, "flying": true,
	"flight": true, "arrive": true, "arriving": true, "arrives": true, "trip": true, "conference": true,
	// Events people name to explain when they want to come: a race, a
	// christening, a party at work, a match. The booking is around them.
	"race": true, "marathon": true, "10k": true, "5k": true, "triathlon": true, "running": true, "match": true,
	"tournament": true, "competition": true, "christening": true, "baptism": true, "funeral": true,
	"graduation": true, "ceremony": true, "gala": true, "prom": true, "concert": true, "gig": true,
	"moving": true, "operation": true, "finish": true, "finishes": true, "finishing": true, "shift": true, "shifts": true,
	"lauf": true, "wettkampf": true, "taufe": true, "beerdigung": true, "umzug": true,
	"baptême": true, "bapteme": true, "enterrement": true, "déménagement": true,
	"carrera": true, "maratón": true, "bautizo": true, "entierro": true, "mudanza": true,
	"wedstrijd": true, "doop": true, "begrafenis": true, "verhuizing": true, "marathonloop": true,
}

// awayWords say that the requester is away or busy, in every language
// (canonical has made "Urlaub", "vacances", "vacaciones" and "vakantie"
// "holiday"): the days of such a clause are when they cannot come.
var awayWords = map[string]bool{
	"away": true, "abroad": true, "travelling": true, "traveling": true, "unavailable": true, "hospital": true,
	"verreist": true, "unterwegs": true, "weg": true, "beschäftigt": true, "abwesend": true,
	"absent": true, "absente": true, "occupé": true, "occupée": true, "indisponible": true,
	"fuera": true, "ocupado": true, "ocupada": true, "ausente": true, "viaje": true,
	"afwezig": true, "druk": true, "bezet": true,
}

// busyWords say that the requester is busy when the clause is about
// them (personAt); said of a day ("if Friday is busy") they are not.
var busyWords = map[string]bool{"busy": true, "mad": true, "hectic": true, "swamped": true}

// personAt reports whether the clause a..b speaks of the requester: "I'm",
// "we", "my work".
func (r *reader) personAt(a, b int) bool {
	for i := a; i < b; i++ {
		switch r.word(i, b) {
		case "i", "i'm", "we", "we're", "work", "my", "our", "ich", "wir", "je", "j'", "nous", "yo", "ik", "wij":
			return true
		}
	}
	return false
}

// awayAt reports whether the clause a..b says the requester is away or
// busy: "I'm away over Christmas", "out of town until the end of the
// month", "work is mad until Christmas", "ik ben op vakantie", "je suis
// en vacances", "estoy de vacaciones".
func (r *reader) awayAt(a, b int) bool {
	for i := a; i < b; i++ {
		w := r.word(i, b)
		switch {
		case awayWords[w]:
			return true
		case busyWords[w] && r.personAt(a, b):
			return true // "work is mad until Christmas", not "Saturdays are busy"
		case (w == "school" || w == "work" || w == "college" || w == "class") && (r.word(i-1, b) == "in" || r.word(i-1, b) == "at"):
			return true // "he's in school until half three"
		case w == "holiday" || w == "holidays" || w == "leave" || w == "vacation":
			switch r.word(i-1, b) {
			case "on", "op", "im", "in", "en", "de", "auf", "annual":
				return true
			}
		case commitVerbs[w] && (commitSubjects[r.word(i-1, b)] || commitSubjects[r.word(i+1, b)]) && !r.workPlaceAt(i+1, b):
			return true // "I work till 4:30", "as I'm hosting from 2", "je travaille le matin"
		case r.refusedAt(i, b):
			return true // "the 21st doesn't work for me", "le 21 ne me convient pas"
		case w == "trabajo" || w == "trabajamos" || w == "trabaja":
			return true // "trabajo por la mañana": Spanish needs no pronoun
		case w == "out" && r.word(i+1, b) == "of" && (r.word(i+2, b) == "town" || r.word(i+2, b) == "the" && r.word(i+3, b) == "country" || r.word(i+2, b) == "office"):
			return true
		}
	}
	return false
}

// commitVerbs are what the requester says they are doing when they
// cannot come: working, hosting, teaching, on a shift, in a meeting.
// With a subject beside them (commitSubjects, before or, in German and
// Dutch, after: "vormittags arbeite ich") the clause's days and hours
// are when the requester is busy. "I work from home" is no commitment.
var (
	commitVerbs = map[string]bool{
		"work": true, "working": true, "hosting": true, "host": true, "teach": true, "teaching": true,
		"finish": true, "commute": true, "volunteer": true, "coaching": true,
		"arbeite": true, "arbeiten": true, "unterrichte": true, "travaille": true, "travaillons": true,
		"bosse": true, "werk": true, "werken": true, "les": true,
	}
	commitSubjects = map[string]bool{
		"i": true, "i'm": true, "we": true, "we're": true, "he": true, "she": true, "he's": true, "she's": true,
		"they": true, "they're": true, "ich": true, "wir": true, "je": true, "nous": true, "ik": true, "wij": true,
		"we'll": true, "i'll": true,
	}
)

// refusals are the negated verbs that turn a day down: "doesn't work",
// "won't suit", "passt nicht", "ne me convient pas", "no me va", "lukt
// niet". refusalVerbs are the verbs they negate.
var (
	refusals     = map[string]bool{"doesn't": true, "won't": true, "wouldn't": true, "isn't": true, "don't": true, "can't": true, "cannot": true}
	refusalVerbs = map[string]bool{
		"work": true, "suit": true, "good": true, "possible": true, "do": true, "make": true,
		"passt": true, "geht": true, "klappt": true, "convient": true, "marche": true, "va": true, "arrange": true,
		"viene": true, "sirve": true, "funciona": true, "lukt": true, "past": true, "gaat": true, "schikt": true,
	}
)

// contrastWords set what follows against what came before: "but",
// "aber", "mais", "pero", "maar".
var contrastWords = map[string]bool{"but": true, "aber": true, "mais": true, "pero": true, "maar": true}

// unsuitable are the words that, after a copula, turn a day down: "this
// week is hopeless", "Friday's impossible", "der Montag ist schlecht".
var unsuitable = map[string]bool{
	"hopeless": true, "impossible": true, "bad": true, "difficult": true, "tricky": true, "awkward": true,
	"schlecht": true, "unmöglich": true, "schwierig": true, "difficile": true, "compliqué": true,
	"imposible": true, "difícil": true, "complicado": true, "onmogelijk": true, "lastig": true, "slecht": true,
}

// refusedAt reports a refusal at i: a negation and a verb of suiting
// within three words ("the 21st doesn't work for me", "Friday is no good",
// "der 21. passt leider nicht", "le 21 ne me convient pas", "el 21 no me
// va bien", "de 21e lukt niet"). The clause's days are then turned down.
func (r *reader) refusedAt(i, b int) bool {
	w := r.word(i, b)
	switch {
	case refusals[w] || w == "not" || w == "no":
		for k := i + 1; k <= i+3 && k < b; k++ {
			if refusalVerbs[r.word(k, b)] {
				// "we can't do before 7" is a bound turned round, and
				// "no, do come" no refusal.
				bnd := boundWords[r.word(k+1, b)] || r.word(k+1, b) == "it" && boundWords[r.word(k+2, b)]
				return !bnd && !(w == "no" && r.word(k, b) == "do")
			}
		}
	}
	if (copulas[w] || w == "ist" || w == "est" || w == "es" || w == "c'est") && r.word(i+1, b) != "not" {
		// "this week is hopeless for me", "Freitag ist ganz schlecht".
		for k := i + 1; k <= i+2 && k < b; k++ {
			if unsuitable[r.word(k, b)] {
				return true
			}
		}
	}
	if w == "not" || w == "nicht" || w == "niet" || w == "pas" {
		// German, French and Dutch put the negation after the verb;
		// canonical has made "nicht", "pas" and "niet" "not".
		for k := i - 1; k >= i-3 && k >= 0; k-- {
			if refusalVerbs[r.word(k, b)] {
				return true
			}
		}
	}
	return false
}

// refusalIn reports a refusal anywhere in the clause a..b.
func (r *reader) refusalIn(a, b int) bool {
	for i := a; i < b; i++ {
		if r.refusedAt(i, b) {
			return true
		}
	}
	return false
}

// placeWords say where someone works ("I work in the city centre", "je
// travaille à côté"), which is no hour they are busy.
var placeWords = map[string]bool{
	"in": true, "at": true, "near": true, "nearby": true, "close": true, "for": true, "from": true,
	"round": true, "around": true, "locally": true, "à": true, "dans": true, "près": true, "bei": true,
	"im": true, "op": true, "bij": true, "vlakbij": true, "en": true, "cerca": true, "remotely": true,
}

// workPlaceAt reports a place, not an hour, after a commitment verb at i:
// "in the city centre", "from home", but not "at 9" nor "in the mornings".
func (r *reader) workPlaceAt(i, b int) bool {
	if !placeWords[r.word(i, b)] || i+1 >= b {
		return false
	}
	nx := r.toks[i+1]
	if nx.kind == 'n' || r.word(i+1, b) == "the" && partsOfDay[r.word(i+2, b)] || partsOfDay[nx.w] {
		return false
	}
	return true
}

// partsOfDay are the words for a part of the day that a commitment may be
// said of ("I work in the mornings").
var partsOfDay = map[string]bool{
	"morning": true, "mornings": true, "afternoon": true, "afternoons": true, "evening": true, "evenings": true,
	"night": true, "nights": true,
}

// firstPerson are the pronouns a requester starts a new clause with
// after "and" or "but": "... et j'aimerais", "... und ich würde".
var firstPerson = map[string]bool{
	"i": true, "i'm": true, "i'll": true, "we": true, "we're": true, "we'll": true, "je": true, "j'": true,
	"nous": true, "ich": true, "wir": true, "yo": true, "me": true, "nos": true, "ik": true, "wij": true,
}

// reasonWords open a clause that gives a reason ("as", "weil", "car",
// "porque", "omdat"); reasonSubjects are the pronouns after them.
var (
	reasonWords    = map[string]bool{"so": true, "as": true, "because": true, "cos": true, "since": true, "weil": true, "da": true, "car": true, "puisque": true, "porque": true, "ya": true, "omdat": true, "want": true}
	reasonSubjects = map[string]bool{
		"i": true, "i'm": true, "i've": true, "i'll": true, "we": true, "we're": true, "we've": true, "he": true,
		"she": true, "he's": true, "she's": true, "they": true, "they're": true, "work": true, "my": true, "our": true,
		"ich": true, "wir": true, "je": true, "j'": true, "nous": true, "yo": true, "estoy": true, "estamos": true,
		"ik": true, "wij": true, "we'll": true, "i'd": true, "we'd": true,
	}
)

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
		// "I've hurt my knee and would like ... next week": the request
		// after the "and" is a clause of its own, free of the past before it.
		turn := (t.w == "and" || t.w == "but") && i+1 < b && (requestWords[r.toks[i+1].w] || firstPerson[r.toks[i+1].w])
		// "any day before the 15th as I'm travelling after that": the
		// reason is a clause of its own, so that its days and its mood do
		// not spill into the request.
		turn = turn || reasonWords[t.w] && i+1 < b && reasonSubjects[r.toks[i+1].w]
		// "this week is hopeless but next week I'm free": the day turned
		// down and the one offered against it are clauses of their own.
		turn = turn || contrastWords[t.w] && r.refusalIn(start, i)
		// "20 - 23 April": a spaced dash between two numbers joins them.
		numbers := i > a && i+1 < b && r.toks[i-1].kind == 'n' && r.toks[i+1].kind == 'n'
		if turn || t.w == "," || t.w == "(" || t.w == ")" || t.w == ":" || (t.w == "-" && !numbers && t.space && i+1 < b && r.toks[i+1].space) {
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
	r.sentences++
	var items []*item
	var wins []tw
	prevPast, prevCtx := false, false
	for _, c := range r.clauses(a, b) {
		// "I was in back in November (the 14th I think)", "training for
		// the half marathon (it's on 16 May)": an aside in brackets
		// belongs to the told event or occasion it explains.
		aside := c[0] > a && r.toks[c[0]-1].w == "("
		past, ctx := prevPast && aside, prevCtx && aside
		for i := c[0]; i < c[1]; i++ {
			w := r.toks[i].w
			if pastWords[w] && !(w == "last" && (r.word(i+1, c[1]) == "minute" || r.weekOfMonthAt(i, c[1]) || r.lastOfMonthAt(i, c[1]))) && !r.politeAt(i, c[1]) || r.pastVerbAt(i, c[1]) {
				past = true
			}
			if contextWords[w] {
				ctx = true
			}
			// "I am in London from ...", "I'm around from the 30th", "we'll be in Madrid"
			if (w == "in" || w == "here" || w == "around" || w == "there") && i > c[0] && (r.toks[i-1].w == "am" || r.toks[i-1].w == "i'm" || r.toks[i-1].w == "we're" || r.toks[i-1].w == "are" || r.toks[i-1].w == "be") {
				ctx = true
			}
		}
		prevPast, prevCtx = past, false
		away := r.awayAt(c[0], c[1])
		r.away = away
		is, ws := r.clause(c[0], c[1], past)
		r.away = false
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
		if away && r.refusalIn(c[0], c[1]) {
			// "Wednesday doesn't work for me": a weekday turned down is
			// excluded, as "except Wednesday" is.
			kept := is[:0]
			for _, it := range is {
				if it.weekday && it.anchor == "" && !it.wdRange && !it.recurring && it.from.IsZero() {
					r.exclude[it.wd] = true
					continue
				}
				kept = append(kept, it)
			}
			is = kept
		}
		for _, it := range is {
			// A day said relative to another ("the day before") is what is
			// asked for, even when the day it counts from is an occasion.
			// An occasion in a clause that books ("we're hoping to book
			// dinner for our anniversary on Saturday May 8") is what the
			// booking is for, and its day is the one asked for.
			it.context = !it.relative && (it.context || ctx && !r.booksAt(c[0], c[1]) || it.soft || away)
			it.sentence = r.sentences
		}
		// An aside explains what was said just before it: background
		// when that is the occasion or its date, not when it is a day
		// asked for ("her birthday is May 3rd so that weekend (2nd or
		// 3rd)").
		prevCtx = ctx && !r.booksAt(c[0], c[1]) && (len(is) == 0 || is[len(is)-1].context && is[len(is)-1].end == c[1])
		items = append(items, is...)
		// "Morning if possible, it's for a christening at 1", "I start
		// work at 10": the time of an occasion is not the time asked
		// for, unless its clause asks ("could we have a table for my
		// birthday at 8").
		if (ctx || away) && !r.asksAt(c[0], c[1]) {
			continue
		}
		wins = append(wins, ws...)
	}
	if len(r.items)+len(items) > 4*maxItems {
		if len(items) > 0 || len(wins) > 0 {
			r.probs = append(r.probs, "too many dates and times to read them all")
		}
		return
	}
	// "Otherwise the 2nd": an alternative to what the sentence before
	// asked for, so what it named was asked for, not background.
	if w := r.word(a, b); (w == "otherwise" || w == "or" || w == "if" && r.word(a+1, b) == "not") && len(r.prev) > 0 {
		all := true
		for _, it := range r.prev {
			all = all && it.context
		}
		for _, it := range r.prev {
			if all {
				it.context = false
			}
		}
	}
	items = r.link(items)
	r.anchor(a, b, items)
	r.attach(a, b, items, wins)
	items = r.dropRepeats(items)
	r.items = append(r.items, items...)
	if len(items) > 0 {
		r.prev = items
	}
}

// dropRepeats leaves out the days a sentence names again as an earlier
// one asked for them, with no hours of their own ("brunch next weekend
// between 11 and 1? ... next weekend is the only time everyone's
// free"): said again, they ask for nothing new, and would otherwise
// undo the hours the first sentence gave them.
func (r *reader) dropRepeats(items []*item) []*item {
	out := items[:0]
	for _, it := range items {
		repeat := false
		for _, e := range r.items {
			if len(it.tods) == 0 && !it.recurring && !it.from.IsZero() && !e.context && e.from.Equal(it.from) && e.to.Equal(it.to) && len(e.tods) > 0 {
				repeat = true
			}
		}
		if !repeat {
			out = append(out, it)
		}
	}
	return out
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
		// "Monday until Thursday" is a range for link to join, not a bound.
		if k := len(items); k == 0 || items[k-1].end != i || !rangeWords[r.word(i, b)] {
			if n, ok := r.bound(i, b); ok {
				i = n
				continue
			}
		}
		if its, n := r.relative(i, b); its != nil {
			for _, it := range its {
				it.relative = true
				r.datedEnd = it.end
			}
			items = append(items, its...)
			i = n
			continue
		}
		if !past && r.unplaced(i, b) {
			i++
			continue
		}
		if n := len(items); n > 0 && !items[n-1].from.IsZero() && !items[n-1].weekday && items[n-1].from.Equal(items[n-1].to) {
			// "the 15 or 16": a bare number after a day of the month.
			switch r.word(i, b) {
			case "or", "and", "to", "until", "till", "-":
				if i+1 < b && r.toks[i+1].kind == 'n' && r.toks[i+1].clock < 0 && r.toks[i+1].ampm == 0 && !r.toks[i+1].ish && len(r.toks[i+1].w) <= 2 && r.toks[i+1].n >= 1 && r.toks[i+1].n <= 31 {
					_, ok := months[r.word(i+2, b)]
					if ofWords[r.word(i+2, b)] {
						_, ok = months[r.word(i+3, b)] // "o 8 de enero"
					}
					if !ok && !unitWord[r.word(i+2, b)] {
						if d, ok := r.resolveDM(r.toks[i+1].n, 0, 0); ok {
							items = append(items, r.newItem(d, d, i+1, i+2))
							i += 2
							continue
						}
					}
				}
			}
		}
		if it, n := r.bareDayRange(i, b); it != nil {
			items = append(items, it)
			r.datedEnd = n
			i = n
			continue
		}
		if its, n := r.dateAt(i, b); its != nil {
			// "Monday onwards", "the 20th onward": the first day, not the only one.
			if nx := r.word(n, b); (nx == "onwards" || nx == "onward") && len(its) == 1 && !its[0].recurring && !past {
				d := its[0].from
				if d.IsZero() {
					d = r.upcoming(its[0].wd)
				}
				if r.lower.IsZero() || d.After(r.lower) {
					r.lower = d
				}
				i = n + 1
				continue
			}
			for _, it := range its {
				if (!it.from.IsZero() || it.weekday && !it.wdRange) && !it.recurring && !past && !it.now {
					r.lastDay = it
				}
				if !it.from.IsZero() && !it.recurring {
					r.datedEnd = n
				}
			}
			items = append(items, its...)
			i = n
			continue
		}
		if w, n := r.timeAt(i, b); n > i {
			if !w.empty() {
				wins = append(wins, tw{w: w, pos: i, point: r.pointAt(i)})
			}
			i = n
			continue
		}
		i++
	}
	return items, wins
}

// bareDayRange reads "from 26 to 29", "du 26 au 29", "del 26 al 29",
// "van 26 tot 29": two bare numbers that cannot both be hours (the second
// is past 24) are days of one month, the next such days.
func (r *reader) bareDayRange(i, b int) (*item, int) {
	if w := r.word(i, b); w != "from" && w != "between" || i+3 >= b {
		return nil, i
	}
	bare := func(t tok) bool {
		return t.kind == 'n' && t.clock < 0 && t.ampm == 0 && !t.ish && len(t.w) <= 2 && t.n >= 1 && t.n <= 31
	}
	t1, t2 := r.toks[i+1], r.toks[i+3]
	switch r.word(i+2, b) {
	case "to", "until", "till", "-", "and":
	default:
		return nil, i
	}
	nx := r.word(i+4, b)
	if _, isMonth := months[nx]; isMonth || ofWords[nx] || unitWord[nx] || !bare(t1) || !bare(t2) || t2.n <= 24 || t1.n >= t2.n {
		return nil, i
	}
	from, ok := r.resolveDM(t1.n, 0, 0)
	if !ok {
		return nil, i
	}
	to := time.Date(from.Year(), from.Month(), t2.n, 0, 0, 0, 0, time.UTC)
	if to.Day() != t2.n {
		return nil, i
	}
	return r.newItem(from, to, i+1, i+4), i + 4
}

// occasions are days people name that move from year to year, or differ
// by place, so the parser does not place them; a request naming one says
// it was unsure.
var occasions = map[string]bool{
	"easter": true, "ostern": true, "pâques": true, "paques": true, "pascua": true, "pasen": true,
	"pinksteren": true, "pfingsten": true, "pentecôte": true, "whitsun": true, "thanksgiving": true,
	"ramadan": true, "eid": true, "diwali": true, "hanukkah": true, "passover": true, "karneval": true,
	"carnaval": true, "fasching": true,
}

var occasionPairs = map[[2]string]bool{
	{"half", "term"}: true, {"bank", "holiday"}: true, {"memorial", "day"}: true, {"labor", "day"}: true,
	{"labour", "day"}: true, {"spring", "break"}: true, {"mother's", "day"}: true, {"father's", "day"}: true,
	{"mothers", "day"}: true, {"fathers", "day"}: true, {"semana", "santa"}: true, {"school", "holidays"}: true,
}

// unplaced doubts an occasion at i that the parser cannot date.
func (r *reader) unplaced(i, b int) bool {
	w := r.word(i, b)
	switch {
	case occasionPairs[[2]string{w, r.word(i+1, b)}]:
		r.doubt(i, i+2)
	case occasions[w]:
		r.doubt(i, i+1)
	default:
		return false
	}
	return true
}

// rangeWords join two days into a range.
var rangeWords = map[string]bool{"to": true, "until": true, "till": true, "til": true, "through": true, "thru": true, "-": true}

// bound reads "before Friday", "until the 12th", "after the 20th", "from
// the 5th of May on" and "starting the 5th" ("ab dem 5.", "à partir du
// 5"). Of several bounds the tightest holds.
func (r *reader) bound(i, b int) (int, bool) {
	w := r.word(i, b)
	switch w {
	case "before", "until", "till", "til", "after", "from", "starting":
	case "through":
		if !r.away {
			return i, false
		}
	case "by":
		// "by Friday", "by the end of the month": a last day. Not "drop by
		// on Friday".
		switch r.word(i-1, b) {
		case "drop", "pop", "come", "swing", "stop", "call", "nip", "pass", "go":
			return i, false
		}
		if r.word(i+1, b) == "on" {
			return i, false
		}
	default:
		return i, false
	}
	// "until the end of the month", "by the end of May": the month's end
	// is a last day, not a span.
	at := i + 1
	if r.word(at, b) == "the" && r.word(at+1, b) == "end" {
		at++
	}
	its, n := r.occasionDate(at, b)
	if len(its) == 1 {
		r.lastDay = its[0] // "... wedding on 21 November. The Friday just before it"
	} else {
		its, n = r.dateAt(at, b)
	}
	monthEnd := its != nil && its[0].month && r.word(at, b) == "end"
	e := i + 1
	if endArticles[r.word(e, b)] && endWords[r.word(e+1, b)] {
		e++
	}
	if its == nil && endWords[r.word(e, b)] {
		// "before the end of next week": the week's last day, in every
		// language ("bis Ende nächster Woche", "jusqu'à la fin de la
		// semaine prochaine", "hasta finales de la semana que viene",
		// "tot eind volgende week").
		k := e + 1
		for endArticles[r.word(k, b)] {
			k++
		}
		if its, n = r.dateAt(k, b); len(its) == 1 && its[0].week && (w == "before" || w == "until" || w == "by") {
			its[0].week, monthEnd = false, true
			if w == "before" {
				its[0].from = addDays(its[0].to, 1)
			}
		}
	}
	if len(its) != 1 || its[0].recurring || its[0].week || its[0].month && w != "from" && w != "starting" && !monthEnd {
		return i, false
	}
	it := its[0]
	if it.from.IsZero() {
		it.from = r.upcoming(it.wd)
		it.to = it.from
	}
	lower := func(d day) {
		if r.lower.IsZero() || d.After(r.lower) {
			r.lower = d
		}
	}
	upper := func(d day) {
		if r.upper.IsZero() || d.Before(r.upper) {
			r.upper = d
		}
	}
	// "not before the 5th", "can't come until Friday", "I'm away until
	// the 5th": the day the requester can come from, not a last day.
	notYet := negations[r.word(i-1, b)] || negations[r.word(i-2, b)] && r.word(i-1, b) == "come"
	switch {
	case notYet && (w == "before" || w == "until" || w == "till" || w == "til"):
		lower(it.from)
	case r.away && (w == "until" || w == "till" || w == "til" || w == "through"):
		lower(addDays(it.to, 1))
	case r.away:
		return i, false
	}
	if notYet || r.away {
		return n, true
	}
	switch w {
	case "before":
		upper(addDays(it.from, -1))
	case "until", "till", "til", "by":
		upper(it.to)
	case "after":
		lower(addDays(it.to, 1))
	case "from", "starting":
		nx := r.word(n, b)
		onward := nx == "on" || nx == "onwards" || nx == "onward" || nx == "forward"
		// "any time from Monday", "I'm free from the 19th, ...": a day
		// that starts nothing after it starts the time asked for.
		open := it.from.Equal(it.to) && (n >= b || openEnds[nx])
		if !onward && !open && w == "from" {
			return i, false
		}
		lower(it.from)
		if onward {
			n++
		}
	}
	return n, true
}

// endWords name the end of a week after a bound, and endArticles the
// articles and "of" around them.
var (
	endWords    = map[string]bool{"end": true, "eind": true, "fin": true, "finales": true, "final": true}
	endArticles = map[string]bool{"the": true, "of": true, "la": true, "le": true, "el": true, "de": true, "del": true, "der": true, "des": true, "van": true, "het": true, "du": true}
)

// boundWords bound the time asked for by a day: "before the weekend".
var boundWords = map[string]bool{"before": true, "after": true, "until": true, "till": true, "by": true}

// possessives open the occasion a bound is said against ("before my
// holiday on the 28th", "vor meiner Hochzeit am 24.", "avant mon mariage
// le 24", "antes de mi boda el 24", "voor mijn bruiloft op 24 april").
var possessives = map[string]bool{
	"my": true, "our": true, "his": true, "her": true, "their": true,
	"mein": true, "meine": true, "meiner": true, "meinem": true, "meinen": true, "unser": true, "unsere": true,
	"unserer": true, "unserem": true, "mon": true, "ma": true, "mes": true, "notre": true, "nos": true,
	"mi": true, "mis": true, "nuestro": true, "nuestra": true, "mijn": true, "onze": true, "ons": true,
}

// occasionDate reads, after a bound word, an occasion and its date:
// "before my holiday on the 28th", "after my exams finish on the 20th",
// "before our wedding on Saturday 24th". The date is what the bound
// counts from; the occasion is background.
func (r *reader) occasionDate(i, b int) ([]*item, int) {
	if !possessives[r.word(i, b)] {
		return nil, i
	}
	for k := i + 1; k < b && k <= i+6; k++ {
		if r.toks[k].kind == 'p' {
			return nil, i
		}
		if its, n := r.dateAt(k, b); its != nil {
			if len(its) == 1 && !its[0].recurring && !its[0].from.IsZero() {
				return its, n
			}
			return nil, i
		}
	}
	return nil, i
}

// openEnds may follow "from <day>" when no end of a range follows.
var openEnds = map[string]bool{"so": true, "as": true, "if": true, "please": true, "would": true, "is": true, "works": true, "but": true}

// negatedFillers are the verbs a negation may stand before a time bound
// with: "we can't do before 7", "I can't make it before 6", "won't be
// there until 8".
var negatedFillers = map[string]bool{
	"do": true, "come": true, "make": true, "it": true, "get": true, "arrive": true, "in": true, "there": true,
	"be": true, "manage": true, "start": true, "go": true, "leave": true,
}

// negatedVerbBefore reports a negation up to three words before i with
// only such verbs between: the bound at i is turned round.
func (r *reader) negatedVerbBefore(i, b int) bool {
	for k := i - 1; k >= 0 && k >= i-4; k-- {
		w := r.word(k, b)
		if negations[w] {
			return k < i-1
		}
		if !negatedFillers[w] {
			return false
		}
	}
	return false
}

// negations turn a bound round: "not before", "can't come until".
var negations = map[string]bool{"not": true, "can't": true, "cannot": true, "cant": true, "won't": true, "unable": true}

// relative reads days said relative to another: "the day before", "the
// morning of", "the weekend after", "the Friday before", "the evening
// before", "that morning", "the one after" (the same weekday a week on),
// "the Thursday or Friday just before it". The day counted from is the
// last one named, or the date written after the phrase ("the night before
// Thanksgiving", "the day after the 14th"), which is then only the
// reference, not a day asked for.
func (r *reader) relative(i, b int) ([]*item, int) {
	if r.word(i, b) != "the" && r.word(i, b) != "that" {
		return nil, i
	}
	what := r.word(i+1, b)
	partOfDay := what == "morning" || what == "afternoon" || what == "evening" || what == "night"
	if r.word(i, b) == "that" {
		if r.lastDay == nil {
			return nil, i
		}
		it, n := r.relativeThat(i, b, what, partOfDay)
		if it == nil {
			return nil, i
		}
		return []*item{it}, n
	}
	// The weekdays of "the Thursday or Friday before".
	var wds []time.Weekday
	var wdPos []int
	k := i + 1
	for {
		wd, plural, ok := weekdayOf(r.word(k, b))
		if !ok || plural {
			break
		}
		wds, wdPos = append(wds, wd), append(wdPos, k)
		k++
		if c := r.word(k, b); (c == "or" || c == "and" || c == ",") && len(wds) < 7 {
			if _, _, ok := weekdayOf(r.word(k+1, b)); ok {
				k++
				continue
			}
		}
		break
	}
	if len(wds) == 0 {
		k = i + 2
	}
	switch r.word(k, b) {
	case "just", "right", "immediately", "directly":
		k++
	}
	rel := r.word(k, b)
	if rel != "before" && rel != "after" && rel != "of" {
		return nil, i
	}
	end := k + 1
	from, to, ok := r.lastDays()
	// The day counted from, when written after the phrase.
	switch nx := r.word(end, b); {
	case nx == "it" || nx == "that" || nx == "then":
		end++
	case nx != "":
		if its, n := r.dateAt(end, b); len(its) == 1 && !its[0].recurring && !its[0].from.IsZero() {
			from, to, ok, end = its[0].from, its[0].to, true, n
		}
	}
	if !ok {
		return nil, i
	}
	// "Saturday 6th March, the day before" or "(it's the day before
	// Mother's Day)": the phrase explains a day already named against an
	// occasion, so it asks for no day of its own.
	if what == "day" && len(wds) == 0 && (rel == "before" || rel == "after") && r.explainsAt(i, end, b) {
		return []*item{}, end
	}
	one := func(d day) ([]*item, int) { return []*item{r.newItem(d, d, i, end)}, end }
	switch {
	case len(wds) > 0 && (rel == "before" || rel == "after"):
		var out []*item
		for n, wd := range wds {
			d, step := addDays(from, -1), -1
			if rel == "after" {
				d, step = addDays(to, 1), 1
			}
			for d.Weekday() != wd {
				d = addDays(d, step)
			}
			pos := wdPos[n]
			if n == 0 {
				pos = i
			}
			out = append(out, r.newItem(d, d, pos, wdPos[n]+1))
		}
		out[len(out)-1].end = end
		return out, end
	case what == "one" && rel == "after" && from.Equal(to) && r.lastDay != nil && r.lastDay.weekday:
		return one(addDays(from, 7))
	case what == "one" && rel == "after" && r.lastDay != nil && (r.lastDay.span || r.lastDay.week):
		// "next weekend or the one after", "this week or the one after".
		it := r.newItem(addDays(from, 7), addDays(to, 7), i, end)
		it.span, it.week = r.lastDay.span, r.lastDay.week
		if it.week {
			it.from = addDays(r.weekStart(from), 7)
			it.to = addDays(it.from, 6)
		}
		return []*item{it}, end
	case what == "day" && rel == "before":
		return one(addDays(from, -1))
	case what == "day" && rel == "after":
		return one(addDays(to, 1))
	case partOfDay:
		d := from
		switch rel {
		case "before":
			d = addDays(from, -1)
		case "after":
			d = addDays(to, 1)
		}
		it := r.newItem(d, d, i, end)
		w, _ := r.timeAt(i+1, b)
		it.tods = []window{w}
		return []*item{it}, end
	case what == "weekend" && rel == "after":
		s := addDays(to, 1)
		for s.Weekday() != time.Saturday {
			s = addDays(s, 1)
		}
		return []*item{r.newItem(s, addDays(s, 1), i, end)}, end
	case what == "week" && rel == "after":
		s := addDays(r.weekStart(to), 7)
		it := r.newItem(s, addDays(s, 6), i, end)
		it.week = true
		return []*item{it}, end
	case what == "week" && rel == "before":
		// The days leading up to it: its own week up to the day before
		// when it falls at a weekend ("a half marathon on Sunday 21 June
		// ... the week before" is Monday 15 to Saturday 20), else the
		// Monday-to-Sunday week before its week.
		s := addDays(r.weekStart(from), -7)
		e := addDays(s, 6)
		if wd := from.Weekday(); wd == time.Saturday || wd == time.Sunday {
			s, e = r.weekStart(from), addDays(from, -1)
		}
		if s.Before(r.today) {
			s = r.today
		}
		if e.Before(s) {
			return nil, i
		}
		// A week, so that a range said inside it stands for it ("the week
		// before, so from Monday 31st to Thursday 3rd").
		it := r.newItem(s, e, i, end)
		it.week = true
		return []*item{it}, end
	}
	return nil, i
}

// copulas say that what follows explains something already named:
// "it's the day before", "which is the day after", "c'est la veille".
var copulas = map[string]bool{"it's": true, "its": true, "that's": true, "is": true, "was": true, "being": true}

// explainsAt reports whether "the day before/after" at i..end explains the
// day just named rather than asking for another: it stands in apposition
// right after a dated day ("on Saturday 6th March, the day before?",
// "Friday 12/18, the day after our party"), or after a copula ("it's the
// day before Mother's Day"). "Or the day after" still asks.
func (r *reader) explainsAt(i, end, b int) bool {
	if i > 0 && copulas[r.toks[i-1].w] {
		return true
	}
	return i > 1 && r.toks[i-1].w == "," && r.datedEnd == i-1
}

// lastDays are the days of the last day named, for a day said relative
// to it; a weekday not yet placed is the one it will be placed on when
// nothing else moves it (anchor).
func (r *reader) lastDays() (day, day, bool) {
	last := r.lastDay
	switch {
	case last == nil:
		return day{}, day{}, false
	case !last.from.IsZero():
		return last.from, last.to, true
	}
	d := r.upcoming(last.wd)
	if last.anchor == "next" {
		s, _ := r.nextWeek()
		d = addDays(s, (int(last.wd)+6)%7)
	}
	return d, d, true
}

// relativeThat reads "that day", "that morning", "that Friday": the day
// just named, which is then asked for as this item says ("Our party is
// on Friday 11 December and I'd like a blow-dry that day, at
// lunchtime"), not as its own whole day.
func (r *reader) relativeThat(i, b int, what string, partOfDay bool) (*item, int) {
	last := r.lastDay
	from, to, _ := r.lastDays()
	if what == "day" || partOfDay {
		last.context = true
	}
	switch {
	case what == "day":
		return r.newItem(from, from, i, i+2), i + 2
	case partOfDay:
		it := r.newItem(from, from, i, i+2)
		w, _ := r.timeAt(i+1, b)
		it.tods = []window{w}
		return it, i + 2
	}
	// "in twelve days? I'm off that Friday": the day just named, when
	// it is that weekday (or the first such day of the span named).
	if wd, plural, ok := weekdayOf(what); ok && !plural {
		for d := from; !d.After(to); d = addDays(d, 1) {
			if d.Weekday() == wd {
				return r.newItem(d, d, i, i+2), i + 2
			}
		}
	}
	return nil, i
}

var unitWord = map[string]bool{
	"people": true, "persons": true, "guests": true, "of": true, "weeks": true, "week": true, "days": true, "day": true,
	"min": true, "mins": true, "minutes": true, "hours": true, "hour": true, "years": true, "kids": true, "children": true,
	"adults": true, "months": true, "pm": true, "am": true, "o'clock": true,
	"personen": true, "personas": true, "personnes": true, "pers": true, "kinder": true, "kindern": true,
	"kinderen": true, "niños": true, "enfants": true, "gäste": true, "invitados": true,
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
// anyWords may stand before "but" in "any day but Friday", "any weekday
// but Monday", "any night but Sunday", "whenever but Friday".
var anyWords = map[string]bool{
	"day": true, "time": true, "anytime": true, "anything": true, "whenever": true, "weekday": true,
	"weekdays": true, "night": true, "evening": true, "morning": true, "afternoon": true, "date": true,
	"days": true, "nights": true, "evenings": true, "mornings": true, "afternoons": true,
}

func (r *reader) skipNegated(i, b int) (int, bool) {
	w := r.word(i, b)
	j := i + 1
	switch w {
	case "except", "excluding", "not", "no", "bar", "barring":
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
		if _, _, ok := weekdayOf(r.word(j+1, b)); ok && r.word(j, b) == "the" {
			j++ // "sauf le mercredi", "menos el miércoles"
		}
	case "can't", "cannot", "cant":
		if r.word(j, b) == "do" || r.word(j, b) == "make" || r.word(j, b) == "manage" {
			j++
		}
	case "but":
		// "but not Fridays"; "any day but Friday"
		switch {
		case r.word(j, b) == "not":
			j++
		case anyWords[r.word(i-1, b)]:
		default:
			return i, false
		}
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
		if r.word(j, b) == "the" && j+1 < b && r.toks[j+1].kind == 'n' || j < b && (r.toks[j].kind == 'n' && r.toks[j].ord || r.toks[j].kind == 'd') {
			if r.toks[j].kind == 'd' {
				r.probs = append(r.probs, "a date to avoid was named ("+r.quote(i, j+1)+"); check it by hand")
				return j + 1, true
			}
			r.probs = append(r.probs, "a date to avoid was named ("+r.quote(i, min(j+2, b))+"); check it by hand")
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

// quote is the text tokens a..b-1 were read from, as the requester wrote
// it, for a problem that names it.
func (r *reader) quote(a, b int) string {
	if a < 0 || b > len(r.toks) || a >= b {
		return ""
	}
	from, to := r.toks[a].from, r.toks[b-1].to
	if from < 0 || to > len(r.src) || from >= to {
		return r.span(a, b)
	}
	q := strings.Join(strings.Fields(string(r.src[from:to])), " ")
	if len(q) > 80 {
		q = clipText(q, 80) + "…"
	}
	return q
}

// doubt records a date phrase read with doubt, so that the proposal says
// so instead of passing a guess off as read.
func (r *reader) doubt(a, b int) {
	if q := r.quote(a, b); q != "" && len(r.unsure) < 8 {
		for _, u := range r.unsure {
			if u == q {
				return
			}
		}
		r.unsure = append(r.unsure, q)
	}
}

func (r *reader) newItem(from, to day, pos, end int) *item {
	return &item{from: from, to: to, pos: pos, end: end}
}

// ofWords stand between a day and its month: "the 3rd of May", "14 de
// octubre".
var ofWords = map[string]bool{"of": true, "de": true, "del": true, "van": true}

// dayNumAt reads a day of the month: "19th", "the 15", "3rd of", "the
// twenty-first".
func (r *reader) dayNumAt(i, b int) (int, int, bool) {
	j := i
	if r.word(j, b) == "the" {
		j++
	}
	if j >= b || r.toks[j].kind != 'n' || r.toks[j].clock >= 0 || r.toks[j].ampm != 0 {
		return 0, i, false
	}
	t := r.toks[j]
	if t.n < 1 || t.n > 31 || len(t.w) > 2 && !t.word {
		return 0, i, false
	}
	if !t.ord && j == i {
		return 0, i, false // a bare number needs "the" or a month beside it
	}
	if t.word {
		// "first" is a date only as "the first" or "first of May".
		_, monthNext := months[r.word(j+1, b)]
		if j == i && !monthNext && !(ofWords[r.word(j+1, b)] && months[r.word(j+2, b)] > 0) {
			return 0, i, false
		}
		if nx := r.word(j+1, b); j > i && len(nx) > 1 && r.toks[j+1].kind == 'w' && !monthNext && !ofWords[nx] && !dayFollowers[nx] {
			return 0, i, false // "the first appointment"
		}
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
	if r.word(j+1, b) == "of" && partyPronouns[r.word(j+2, b)] {
		return 0, i, false // "just the 3 of us" is a party
	}
	return t.n, j + 1, true
}

// partyPronouns count people after "the N of": "the 3 of us".
var partyPronouns = map[string]bool{"us": true, "you": true, "them": true, "we": true}

// dayFollowers may follow a day of the month written as a word.
var dayFollowers = map[string]bool{
	"or": true, "and": true, "to": true, "until": true, "till": true, "through": true, "at": true, "in": true,
	"if": true, "please": true, "would": true, "works": true, "is": true, "ideally": true, "preferably": true,
	"after": true, "before": true, "between": true, "from": true, "around": true, "morning": true,
	"afternoon": true, "evening": true, "night": true, "lunchtime": true, "for": true, "any": true,
	"free": true, "available": true, "ok": true, "okay": true, "good": true, "fine": true, "suit": true,
	"suits": true, "work": true, "possible": true, "be": true, "could": true, "too": true, "instead": true,
}

func (r *reader) monthAt(i, b int) (time.Month, bool) {
	m, ok := months[r.word(i, b)]
	if !ok {
		return 0, false
	}
	switch r.word(i, b) {
	case "may", "mar", "jan", "sun", "mars", "mai", "ago":
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

// weekNumbers are the ordinal words that count a month's weeks; "last"
// counts back from its end.
var weekNumbers = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}

// weekOfMonth reads "[the] first week of April" ("in April" too): the
// month's days 1-7, 8-14, 15-21 or 22-28, or its last seven. Like a part
// of a month, it starts from today when today is in it.
func (r *reader) weekOfMonth(i, b int) ([]*item, int) {
	j := i
	if r.word(j, b) == "the" {
		j++
	}
	n, ok := weekNumbers[r.word(j, b)]
	if !ok || r.word(j+1, b) != "week" || (r.word(j+2, b) != "of" && r.word(j+2, b) != "in") {
		return nil, i
	}
	m, ok := months[r.word(j+3, b)]
	if !ok {
		return nil, i
	}
	first, last := r.monthSpan(m, "")
	if first.Day() != 1 {
		first = time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	if n > 0 {
		first = addDays(first, 7*(n-1))
		last = addDays(first, 6)
	} else {
		first = addDays(last, -6)
	}
	if last.Before(r.today) {
		return nil, i
	}
	if first.Before(r.today) {
		first = r.today
	}
	it := r.newItem(first, last, i, j+4)
	it.month = true
	return []*item{it}, j + 4
}

// nthOrdinals count the weekdays of a month in each language; -1 is the
// last.
var nthOrdinals = map[string]int{
	"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
	"premier": 1, "première": 1, "deuxième": 2, "troisième": 3, "quatrième": 4,
	"primer": 1, "primero": 1, "segundo": 2, "tercer": 3, "tercero": 3, "cuarto": 4, "último": -1, "ultimo": -1,
	"erste": 1, "ersten": 1, "zweite": 2, "zweiten": 2, "dritte": 3, "dritten": 3, "vierte": 4, "vierten": 4,
	"eerste": 1, "tweede": 2, "derde": 3, "vierde": 4, "laatste": -1,
}

// monthArticles may open "the first Saturday in May" in each language.
var monthArticles = map[string]bool{"the": true, "le": true, "la": true, "el": true, "am": true, "den": true, "dem": true, "de": true, "het": true, "on": true}

// nthWeekday reads "the first Saturday in May", "the last Friday of the
// month", "le premier samedi de mai", "el primer sábado de mayo", "am
// ersten Samstag im Mai", "de eerste zaterdag van mei": that one day.
func (r *reader) nthWeekday(i, b int) ([]*item, int) {
	j := i
	if monthArticles[r.word(j, b)] {
		j++
	}
	n, ok := nthOrdinals[r.word(j, b)]
	if !ok && j < b && r.toks[j].kind == 'n' && r.toks[j].ord && r.toks[j].n >= 1 && r.toks[j].n <= 4 && r.toks[j].clock < 0 {
		n, ok = r.toks[j].n, true
	}
	wd, plural, isWd := weekdayOf(r.word(j+1, b))
	if !ok || !isWd || plural {
		return nil, i
	}
	k := j + 2
	switch r.word(k, b) {
	case "of", "in", "de", "du", "del", "im", "van", "in de":
		k++
	default:
		return nil, i
	}
	var m time.Month
	switch {
	case r.word(k, b) == "the" && r.word(k+1, b) == "month":
		m, k = r.today.Month(), k+2
	case r.word(k, b) == "next" && r.word(k+1, b) == "month":
		m, k = r.today.Month()%12+1, k+2
	default:
		mm, isMonth := months[r.word(k, b)]
		if !isMonth {
			return nil, i
		}
		m, k = mm, k+1
	}
	first, last := r.monthSpan(m, "")
	first = time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC)
	var d day
	if n > 0 {
		d = first
		for d.Weekday() != wd {
			d = addDays(d, 1)
		}
		d = addDays(d, 7*(n-1))
	} else {
		d = last
		for d.Weekday() != wd {
			d = addDays(d, -1)
		}
	}
	return []*item{r.newItem(d, d, i, k)}, k
}

// lastOfMonthAt reports whether "last <weekday> of" starts at i: the
// last such day of a month to come, not the past one.
func (r *reader) lastOfMonthAt(i, b int) bool {
	_, plural, ok := weekdayOf(r.word(i+1, b))
	return ok && !plural && (r.word(i+2, b) == "of" || r.word(i+2, b) == "in")
}

// weekOfMonthAt reports whether "last week of <month>" starts at i: a
// week to come, not the past week.
func (r *reader) weekOfMonthAt(i, b int) bool {
	_, isMonth := months[r.word(i+3, b)]
	return r.word(i+1, b) == "week" && (r.word(i+2, b) == "of" || r.word(i+2, b) == "in") && isMonth
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
	case "firsthalf":
		last = addDays(first, 14)
	case "secondhalf":
		first = addDays(first, 15)
	}
	if first.Before(r.today) && !last.Before(r.today) {
		first = r.today
	}
	return first, last
}

// nextMonth reads "next month" and "the next month" ("the following
// month"), or with part set the rest of "early next month", "late next
// month", "end of next month": the month after today's, or its part.
func (r *reader) nextMonth(j, b int, part string) ([]*item, int) {
	k := j
	if r.word(k, b) == "the" {
		k++
	}
	if nx := r.word(k, b); nx != "next" && nx != "following" && nx != "coming" || r.word(k+1, b) != "month" {
		return nil, j
	}
	f, t := r.monthSpan(r.today.Month()%12+1, part)
	it := r.newItem(f, t, j, k+2)
	it.month = true
	return []*item{it}, k + 2
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
	return r.weekAhead(1)
}

// weekAhead is the Monday-to-Sunday week n weeks after this one.
func (r *reader) weekAhead(n int) (day, day) {
	s := addDays(r.weekStart(r.today), 7*n)
	return s, addDays(s, 6)
}

var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "couple": 2, "few": 3, "several": 3,
}

// countAt reads how many of something: "2", "two", "a couple of".
func (r *reader) countAt(j, b int) (int, int, bool) {
	if j < b && r.toks[j].kind == 'n' && !r.toks[j].word && r.toks[j].clock < 0 && r.toks[j].ampm == 0 {
		return r.toks[j].n, j + 1, true
	}
	if w := r.word(j+1, b); r.word(j, b) == "a" && (w == "couple" || w == "few") {
		j++ // "a couple of weeks", "a few days"
	}
	if v, ok := numberWords[r.word(j, b)]; ok {
		j++
		if r.word(j, b) == "of" {
			j++
		}
		return v, j, true
	}
	return 0, j, false
}

// weeksOn reads a day whole weeks on from another: "a week on Tuesday"
// (the British way: a week after the coming Tuesday), "a week from
// Tuesday" (the American way of saying the same), "a week today", "a
// fortnight tomorrow", "two weeks on Friday". "A week from now" is "in a
// week": the week it falls in. The day counted from is read as a weekday
// alone is, so "a week on Tuesday" written on a Tuesday is doubted as
// "Tuesday" is.
func (r *reader) weeksOn(i, b int) ([]*item, int) {
	switch r.word(i-1, b) {
	case "once", "twice", "times", "per", "every", "for":
		return nil, i // "once a week on Tuesdays", "away for a week from Friday"
	}
	n, j, ok := r.countAt(i, b)
	if !ok {
		return nil, i
	}
	weeks := n
	switch r.word(j, b) {
	case "week", "weeks":
	case "fortnight", "fortnights":
		weeks = 2 * n
	default:
		return nil, i
	}
	if weeks < 1 || weeks > 12 {
		return nil, i
	}
	k := j + 1
	on := r.word(k, b) == "on" || r.word(k, b) == "from"
	if on {
		k++
	}
	var base day
	switch w := r.word(k, b); {
	case w == "today":
		base = r.today
	case w == "tomorrow":
		base = addDays(r.today, 1)
	case w == "now" && r.word(k-1, b) == "from":
		f, t := r.weekAhead(weeks)
		it := r.newItem(f, t, i, k+1)
		it.week = true
		return []*item{it}, k + 1
	default:
		d, plural, ok := weekdayOf(w)
		if !on || !ok || plural {
			return nil, i
		}
		base = r.upcoming(d)
		if base.Equal(r.today) {
			r.doubt(i, k+1)
		}
	}
	d := addDays(base, 7*weeks)
	return []*item{r.newItem(d, d, i, k+1)}, k + 1
}

// dateAt reads a date expression at i.
func (r *reader) dateAt(i, b int) ([]*item, int) {
	w := r.word(i, b)
	one := func(from, to day, end int) ([]*item, int) {
		return []*item{r.newItem(from, to, i, end)}, end
	}
	week := func(f, t day, end int) ([]*item, int) {
		its, n := one(f, t, end)
		its[0].week = true
		return its, n
	}
	switch w {
	case "today":
		return one(r.today, r.today, i+1)
	case "tonight", "tonite":
		it := r.newItem(r.today, r.today, i, i+1)
		it.tods = []window{{17 * 60, 1440}}
		return []*item{it}, i + 1
	case "tomorrow", "tmrw", "tmr", "tomorow", "tommorow", "tommorrow", "tomoz", "tomo", "2moro":
		return one(addDays(r.today, 1), addDays(r.today, 1), i+1)
	case "overmorrow":
		return one(addDays(r.today, 2), addDays(r.today, 2), i+1)
	case "weekafter":
		f, t := r.weekAhead(2)
		return week(f, t, i+1)
	case "that":
		// "after that", "before that": the day last named.
		p := r.word(i-1, b)
		from, _, ok := r.lastDays()
		if ok && (p == "after" || p == "before" || p == "until" || p == "till") && !r.lastDay.recurring {
			r.lastDay.context = true
			its, n := one(from, from, i+1)
			its[0].relative = true
			return its, n
		}
		return nil, i
	case "then":
		// "then" is the day last named, as the end of a range or bound:
		// "school holidays start 29 June, so any weekday from then until
		// 10 July", "between then and Friday", "until then".
		p, nx := r.word(i-1, b), r.word(i+1, b)
		from, _, ok := r.lastDays()
		if ok && (p == "from" && (rangeWords[nx] || nx == "on" || nx == "onwards") || p == "between" && nx == "and" || p == "until" || p == "till" || p == "before" || p == "after") {
			r.lastDay.context = true // the day is now said as this range's end
			its, n := one(from, from, i+1)
			its[0].relative = true
			return its, n
		}
		return nil, i
	case "now":
		// "now" is a day only as the start of a range: "between now and
		// Friday", "from now until the 20th", "now till Christmas". link
		// drops it when no range follows.
		p, nx := r.word(i-1, b), r.word(i+1, b)
		if p == "between" && nx == "and" || nx == "until" || nx == "till" || nx == "til" || nx == "through" || nx == "thru" ||
			p == "from" && nx == "to" {
			its, n := one(r.today, r.today, i+1)
			its[0].now = true
			return its, n
		}
		return nil, i
	}
	if its, n := r.weeksOn(i, b); its != nil {
		return its, n
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
			c := r.word(j, b)
			vague := c == "few" || c == "several" || c == "couple" || c == "a" && r.word(j+1, b) == "few"
			if v, k, ok := r.countAt(j, b); ok {
				n, j = v, k
			} else if vague {
				// "the next few weeks", "the coming couple of weeks": no
				// count is said, so the span is a guess to check.
				n, vague = 3, true
				if j++; c == "couple" {
					n = 2
					if r.word(j, b) == "of" {
						j++
					}
				}
			}
			if u := r.word(j, b); n == 1 && (u == "weeks" || u == "months" || u == "days") {
				vague = true // "in the coming weeks"
			}
			if vague {
				r.doubt(i, j+1)
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
		} else if w == "in" {
			// "in two weeks": the week that many weeks on; "in 3 days":
			// that day.
			if n, k, ok := r.countAt(i+1, b); ok && n >= 1 && n <= 52 {
				end := k + 1
				if r.word(end, b) == "'" && r.word(end+1, b) == "s" {
					end += 2
				}
				if r.word(end, b) == "time" {
					end++
				}
				switch r.word(k, b) {
				case "week", "weeks", "week's", "weeks'": // "in a week's time"
					f, t := r.weekAhead(n)
					return week(f, t, end)
				case "fortnight", "fortnight's":
					f, t := r.weekAhead(2 * n)
					return week(f, t, end)
				case "day", "days":
					d := addDays(r.today, n)
					return one(d, d, end)
				}
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
	case "this", "next", "the", "that", "any", "every", "a", "on", "coming":
		mod = w
		j++
		if r.word(j, b) == "coming" {
			j++ // "this coming week" is the next one, "this coming weekend" the coming one
			if mod == "this" && r.word(j, b) == "week" {
				mod = "next"
			}
		}
	}
	switch r.word(j, b) {
	case "week":
		switch mod {
		case "this":
			f, t := r.thisWeek()
			return week(f, t, j+1)
		case "next", "coming":
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
		weekend := func(s day, end int) ([]*item, int) {
			its, n := one(s, addDays(s, 1), end)
			its[0].span = true
			return its, n
		}
		if r.word(j+1, b) == "of" {
			// "the weekend of the 24th": the Saturday and Sunday of its week.
			if its, n := r.dateAt(j+2, b); len(its) == 1 && !its[0].recurring && !its[0].from.IsZero() {
				return weekend(addDays(r.weekStart(its[0].from), 5), n)
			}
		}
		if (mod == "the" || mod == "") && r.word(j+1, b) == "after" && r.word(j+2, b) == "next" {
			// "the weekend after next": the weekend of the week after next.
			s := addDays(r.weekStart(r.today), 14)
			return weekend(addDays(s, 5), j+3)
		}
		switch mod {
		case "this", "the", "on", "coming":
			if mod == "the" {
				if p := r.word(i-1, b); p != "at" && p != "over" && p != "on" && p != "for" && p != "this" && !boundWords[p] {
					return nil, i // "the weekend we're there", "the weekend after"
				}
			}
			s := r.weekStart(r.today)
			if r.today.Weekday() == time.Sunday {
				return one(r.today, r.today, j+1)
			}
			return weekend(addDays(s, 5), j+1)
		case "next":
			s := addDays(r.weekStart(r.today), 7)
			return weekend(addDays(s, 5), j+1)
		}
		switch mod {
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
	// the first Saturday in May, the last Friday of the month
	if its, n := r.nthWeekday(i, b); its != nil {
		return its, n
	}
	// the first / second / third / fourth / last week of <month>: seven
	// days counted from the month's first (or back from its last), not the
	// Monday-to-Sunday week holding them.
	if its, n := r.weekOfMonth(i, b); its != nil {
		return its, n
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
	case "first", "second", "latter", "back", "front":
		// "the first half of July", "the second half of next month".
		if r.word(i+1, b) == "half" {
			part = "firsthalf"
			if w != "first" && w != "front" {
				part = "secondhalf"
			}
			j += 2
		}
	case "end":
		part = "end"
		j++
	}
	if part != "" {
		if ofWords[r.word(j, b)] {
			j++ // "end of May", "principios de mayo", "begin van mei"
		}
		if r.word(j, b) == "the" && r.word(j+1, b) == "month" {
			f, t := r.monthSpan(r.today.Month(), part)
			its, n := one(f, t, j+2)
			its[0].month = true
			return its, n
		}
		if its, n := r.nextMonth(j, b, part); its != nil {
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
	if its, n := r.nextMonth(i, b, ""); its != nil {
		return its, n
	}
	// Weekday: [this|next|on|any|every|a|coming] Friday[s] [the 20th] [next week]
	j = i
	mod = ""
	switch w {
	case "this", "next", "on", "any", "every", "a", "an", "coming", "the":
		mod = w
		j++
		if r.word(j, b) == "coming" {
			mod = "coming"
			j++
		}
	}
	if d, plural, ok := weekdayOf(r.word(j, b)); ok && !r.frenchMon(j, b) {
		return r.weekdayAt(i, j, b, d, plural, mod)
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

// monFollowers may follow "Mon" the weekday; any other word after it
// makes it the French "mon" ("mon mari", "mon rendez-vous").
var monFollowers = map[string]bool{
	"or": true, "and": true, "to": true, "till": true, "until": true, "through": true, "morning": true,
	"afternoon": true, "evening": true, "night": true, "next": true, "this": true, "the": true, "week": true,
	"lunchtime": true, "after": true, "before": true, "at": true, "from": true, "is": true, "would": true,
}

// monthOfWeekday places a day of the month said with its weekday but no
// month ("Monday 17th") in the month after the coming one when it falls
// on that weekday there and not in the coming one: the weekday may say
// which month is meant, or be a slip, so the reader still doubts it.
func (r *reader) monthOfWeekday(it *item, d time.Weekday) (day, bool) {
	if it.anchor != "month?" || !it.from.Equal(it.to) || it.from.Weekday() == d {
		return day{}, false
	}
	x := time.Date(it.from.Year(), it.from.Month()+1, it.from.Day(), 0, 0, 0, 0, time.UTC)
	return x, x.Day() == it.from.Day() && x.Weekday() == d
}

// frenchMon reports "mon" at j read as the French "my", not Monday.
func (r *reader) frenchMon(j, b int) bool {
	if r.word(j, b) != "mon" || j+1 >= b {
		return false
	}
	nx := r.toks[j+1]
	_, isMonth := months[nx.w]
	return nx.kind == 'w' && !isMonth && !monFollowers[nx.w]
}

// weekdayAt reads the weekday at j (its modifier from i): "Thursday 16th",
// "Saturday 25 April", "mardi 15", "next Friday", "Tuesdays", "Friday
// next week". A weekday written with a date is that date; when the two
// disagree the date wins and the proposal says it was unsure.
func (r *reader) weekdayAt(i, j, b int, d time.Weekday, plural bool, mod string) ([]*item, int) {
	k := j + 1
	if r.word(k, b) == "," {
		k++
	}
	dated := func(its []*item, n int) ([]*item, int) {
		its[0].pos = i
		moved := false
		if x, ok := r.monthOfWeekday(its[0], d); ok {
			its[0].from, its[0].to, moved = x, x, true
		}
		if moved || its[0].from.Weekday() != d || !its[0].to.Equal(its[0].from) {
			r.doubt(i, n)
		}
		return its, n
	}
	if its, n := r.numericDate(k, b); its != nil {
		return dated(its, n)
	}
	// "mardi 15", "maandag 12": a bare day of the month beside its weekday,
	// when it falls on that weekday (otherwise "Friday 7" is a time).
	if k < b && r.toks[k].kind == 'n' && !r.toks[k].ord && r.toks[k].clock < 0 && r.toks[k].ampm == 0 && !r.toks[k].ish &&
		len(r.toks[k].w) <= 2 && r.toks[k].n >= 1 && r.toks[k].n <= 31 && !unitWord[r.word(k+1, b)] && r.word(k+1, b) != ":" && !plural && !r.hoursAt(k, b) {
		// "du lundi 4 au vendredi 8 janvier": the month comes at the end
		// of the range.
		if x, ok := r.dayInLaterMonth(r.toks[k].n, k+1, b, r.afterBetween(i)); ok && x.Weekday() == d {
			return []*item{r.newItem(x, x, i, k+1)}, k + 1
		}
		if x, ok := r.resolveDM(r.toks[k].n, 0, 0); ok && x.Weekday() == d {
			it := r.newItem(x, x, i, k+1)
			it.anchor = "month?"
			return []*item{it}, k + 1
		}
	}
	// "Saturday week": a week after the coming Saturday.
	if !plural && (mod == "" || mod == "on") && r.word(j+1, b) == "week" && !weekFollowers[r.word(j+2, b)] &&
		!(j+2 < b && r.toks[j+2].kind == 'n') {
		x := r.upcoming(d)
		if x.Equal(r.today) {
			r.doubt(i, j+2)
		}
		x = addDays(x, 7)
		return []*item{r.newItem(x, x, i, j+2)}, j + 2
	}
	it := &item{weekday: true, wd: d, pos: i, end: j + 1}
	switch {
	case plural || mod == "any" || mod == "every" || mod == "a" || mod == "an":
		it.recurring = true
		it.days = map[time.Weekday]bool{d: true}
	case mod == "next":
		it.anchor = "next"
	case mod == "this":
		it.anchor = "this"
	case mod == "coming":
		it.anchor = "coming"
	}
	end := j + 1
	if (r.word(end, b) == "next" || r.word(end, b) == "this") && r.word(end+1, b) == "week" {
		it.anchor = r.word(end, b) + " week"
		end += 2
	}
	it.end = end
	return []*item{it}, end
}

// weekFollowers make "week" after a weekday the start of another phrase
// ("Friday, week of the 5th"), not "Friday week".
var weekFollowers = map[string]bool{
	"of": true, "commencing": true, "starting": true, "beginning": true, "after": true, "before": true,
	"end": true, "ending": true, "long": true, "off": true, "'": true,
}

// laterMonth reads, at k just after the first day of a range, the rest of
// it when only its last day names the month: "to Friday 8 January", "-
// 8th May", "until Friday, the 8th of January" ("bis Freitag, den 8.
// Januar", "al viernes 8 de enero"); with between set, "and Friday 8
// January" too. It returns the month, the last day and the year written
// with it (0 when none).
func (r *reader) laterMonth(k, b int, between bool) (time.Month, int, int, bool) {
	if !rangeWords[r.word(k, b)] && !(between && r.word(k, b) == "and") {
		return 0, 0, 0, false
	}
	k++
	if _, plural, ok := weekdayOf(r.word(k, b)); ok && !plural {
		k++
		if r.word(k, b) == "," {
			k++
		}
	}
	if r.word(k, b) == "the" {
		k++
	}
	if k >= b || r.toks[k].kind != 'n' || r.toks[k].clock >= 0 || r.toks[k].ampm != 0 || r.toks[k].n < 1 || r.toks[k].n > 31 ||
		len(r.toks[k].w) > 2 && !r.toks[k].word {
		return 0, 0, 0, false
	}
	last := r.toks[k].n
	k++
	if ofWords[r.word(k, b)] {
		k++
	}
	m, ok := months[r.word(k, b)]
	if !ok {
		return 0, 0, 0, false
	}
	y := 0
	if k+1 < b && r.toks[k+1].kind == 'n' && len(r.toks[k+1].w) == 4 {
		y = r.toks[k+1].n
	}
	return m, last, y, true
}

// afterBetween reports whether the day at i, or the weekday written before
// it ("between Monday, 4th and ..."), follows "between".
func (r *reader) afterBetween(i int) bool {
	j := i - 1
	if r.word(j, len(r.toks)) == "," {
		j--
	}
	if _, _, ok := weekdayOf(r.word(j, len(r.toks))); ok {
		j--
	}
	return r.word(j, len(r.toks)) == "between"
}

// dayInLaterMonth places day d, the first of a range whose month is named
// only after its last day (laterMonth): in that month, or the one before
// when d is past the last day ("Monday 28 to Friday 1 January").
func (r *reader) dayInLaterMonth(d, k, b int, between bool) (day, bool) {
	m, last, y, ok := r.laterMonth(k, b, between)
	if !ok {
		return day{}, false
	}
	if d > last {
		if m--; m == 0 {
			m = 12
			if y > 0 {
				y--
			}
		}
	}
	return r.resolveDM(d, m, y)
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
// "15-17 May", "12 to 15 November", "04/02/2026", "2026-10-10", "28.11.".
func (r *reader) numericDate(i, b int) ([]*item, int) {
	if _, _, wd := weekdayOf(r.word(i-1, b)); wd && r.hoursAt(i, b) {
		return nil, i // "Friday 10-12": hours
	}
	if i < b && r.toks[i].kind == 'd' {
		return r.writtenDate(i)
	}
	// <month> [the] <n>[th]
	if m, ok := months[r.word(i, b)]; ok {
		j := i + 1
		if r.word(j, b) == "the" {
			j++
		}
		if j < b && r.toks[j].kind == 'n' && r.toks[j].clock < 0 && r.toks[j].ampm == 0 && r.toks[j].n >= 1 && r.toks[j].n <= 31 && (len(r.toks[j].w) <= 2 || r.toks[j].word) {
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
			r.doubt(i, k)
		}
		return nil, i
	}
	bare := func(k int) bool {
		return k < b && r.toks[k].kind == 'n' && r.toks[k].clock < 0 && r.toks[k].ampm == 0 && r.toks[k].n >= 1 && r.toks[k].n <= 31 && len(r.toks[k].w) <= 2
	}
	monthAfter := func(k int) (time.Month, int) {
		if ofWords[r.word(k, b)] {
			k++
		}
		m, ok := months[r.word(k, b)]
		if !ok {
			return 0, k
		}
		return m, k + 1
	}
	d, j, ok := r.dayNumAt(i, b)
	if !ok {
		// "14 April": a bare number with a month after it.
		if bare(i) {
			// "2-4pm", "10-11:30" are hours, not the 2nd to something.
			hours := i+2 < b && (r.toks[i+2].ampm != 0 || r.toks[i+2].clock >= 0)
			if m, _ := monthAfter(i + 1); m != 0 || r.word(i+1, b) == "-" && !hours {
				d, j, ok = r.toks[i].n, i+1, true
			}
			// "3 or 4 May", "3 of 4 mei": the first of two days, in the
			// month written after the second.
			if !ok && (r.word(i+1, b) == "or" || r.word(i+1, b) == "of" && months[r.word(i+3, b)] > 0) && bare(i+2) {
				if m, _ := monthAfter(i + 3); m != 0 {
					if x, ok := r.resolveDM(r.toks[i].n, m, 0); ok {
						return []*item{r.newItem(x, x, i, i+1)}, i + 1
					}
				}
			}
			// "12 to 15 November", "2 and 6 november": a range of bare days.
			if !ok && (rangeWords[r.word(i+1, b)] || r.word(i+1, b) == "and") && bare(i+2) {
				if m, k := monthAfter(i + 3); m != 0 {
					d, j, ok = r.toks[i].n, i+1, true
					_ = k
				}
			}
		}
		if !ok {
			return nil, i
		}
	}
	// "15-17 May", "12 to 15 November"
	if (r.word(j, b) == "-" && !r.toks[j].space || rangeWords[r.word(j, b)] || r.word(j, b) == "and" && r.word(i-1, b) == "between") && j+1 < b && r.toks[j+1].kind == 'n' && r.toks[j+1].n >= 1 && r.toks[j+1].n <= 31 && r.toks[j+1].clock < 0 && r.toks[j+1].ampm == 0 {
		d2 := r.toks[j+1].n
		if m, k := monthAfter(j + 2); m != 0 {
			f, ok1 := r.resolveDM(d, m, 0)
			t, ok2 := r.resolveDM(d2, m, 0)
			if ok1 && ok2 && !t.Before(f) {
				return []*item{r.newItem(f, t, i, k)}, k
			}
		}
	}
	k := j
	var m time.Month
	if mm, kk := monthAfter(j); mm != 0 {
		m, k = mm, kk
	}
	y := 0
	if m != 0 {
		kk := k
		if ofWords[r.word(kk, b)] {
			kk++
		}
		if kk < b && r.toks[kk].kind == 'n' && len(r.toks[kk].w) == 4 {
			y = r.toks[kk].n
			k = kk + 1
		}
	}
	if m == 0 {
		if x, ok := r.dayInLaterMonth(d, j, b, r.afterBetween(i)); ok {
			return []*item{r.newItem(x, x, i, j)}, j
		}
	}
	x, ok := r.resolveDM(d, m, y)
	if !ok {
		r.doubt(i, k)
		return nil, i
	}
	it := r.newItem(x, x, i, k)
	if m == 0 {
		it.anchor = "month?"
	}
	return []*item{it}, k
}

// writtenDate reads a numeric date token: 04/02/2026, 14.03., 2026-10-10
// or a holiday. 04/05 is read as the business's country writes it; when
// the country does not settle the order and either reading is a date, the
// proposal says it was unsure.
func (r *reader) writtenDate(i int) ([]*item, int) {
	t := r.toks[i]
	if t.soft && r.wishAt(i) {
		return nil, i
	}
	if t.movable != "" {
		x, ok := r.movableDay(t.movable)
		if !ok {
			r.doubt(i, i+1)
			return nil, i
		}
		it := r.newItem(x, x, i, i+1)
		it.soft = true
		return []*item{it}, i + 1
	}
	d, m := t.d1, t.d2
	switch {
	case t.ymd:
	case r.us:
		d, m = t.d2, t.d1
		if m > 12 && d <= 12 {
			d, m = m, d // 14/3 from someone writing day first
		}
	case t.d2 > 12 && t.d1 <= 12:
		d, m = t.d2, t.d1
	}
	if t.d1 > 31 || t.d2 > 31 || t.d3 > 0 && (t.d3 > 2200 || t.d3 >= 100 && t.d3 < 1900) {
		return nil, i // a phone number or a reference, not a date
	}
	if !t.ymd && !r.settled && t.d1 <= 12 && t.d2 <= 12 && t.d1 != t.d2 {
		r.doubt(i, i+1)
	}
	if m < 1 || m > 12 {
		r.doubt(i, i+1)
		return nil, i
	}
	x, ok := r.resolveDM(d, time.Month(m), t.d3)
	if !ok {
		r.doubt(i, i+1)
		return nil, i
	}
	it := r.newItem(x, x, i, i+1)
	it.soft = t.soft
	return []*item{it}, i + 1
}

// movableDay places a holiday whose date moves: the ones counted from
// Easter, and the American ones set on a weekday of their month. Like a
// date without a year, it is this year's unless that is more than two
// weeks past.
func (r *reader) movableDay(name string) (day, bool) {
	for y := r.today.Year(); y <= r.today.Year()+1; y++ {
		x, ok := movableIn(name, y, r.country)
		if !ok {
			return day{}, false
		}
		if !x.Before(addDays(r.today, -14)) {
			return x, true
		}
	}
	return day{}, false
}

// easterOffsets are the holidays counted from Easter Sunday, in days.
var easterOffsets = map[string]int{
	"easter": 0, "eastermonday": 1, "goodfriday": -2, "maundythursday": -3, "shrovetuesday": -47,
	"ashwednesday": -46, "motheringsunday": -21, "ascension": 39, "whitsun": 49, "whitmonday": 50,
}

func movableIn(name string, y int, country string) (day, bool) {
	if off, ok := easterOffsets[name]; ok {
		return addDays(easterSunday(y), off), true
	}
	nth := func(m time.Month, wd time.Weekday, n int) day {
		d := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		for d.Weekday() != wd {
			d = addDays(d, 1)
		}
		return addDays(d, 7*(n-1))
	}
	switch name {
	case "mothersday", "fathersday":
		return parentsDay(name == "mothersday", y, strings.ToUpper(country), nth)
	case "thanksgiving":
		return nth(time.November, time.Thursday, 4), true
	case "laborday":
		return nth(time.September, time.Monday, 1), true
	case "memorialday":
		d := addDays(time.Date(y, time.June, 1, 0, 0, 0, 0, time.UTC), -1)
		for d.Weekday() != time.Monday {
			d = addDays(d, -1)
		}
		return d, true
	}
	return day{}, false
}

// parentsDay places Mother's Day (mother) or Father's Day in y as the
// business's country keeps it; where the country is unknown it differs
// too much to guess.
func parentsDay(mother bool, y int, country string, nth func(time.Month, time.Weekday, int) day) (day, bool) {
	if mother {
		switch country {
		case "GB", "IE":
			return addDays(easterSunday(y), easterOffsets["motheringsunday"]), true
		case "ES":
			return nth(time.May, time.Sunday, 1), true
		case "FR":
			// The last Sunday of May, or the first of June when
			// Whitsun falls on it.
			d := addDays(nth(time.June, time.Sunday, 1), -7)
			if d.Equal(addDays(easterSunday(y), easterOffsets["whitsun"])) {
				d = addDays(d, 7)
			}
			return d, true
		case "US", "CA", "AU", "NZ", "DE", "AT", "CH", "NL", "BE", "IT":
			return nth(time.May, time.Sunday, 2), true
		}
		return day{}, false
	}
	switch country {
	case "US", "CA", "GB", "IE", "FR", "NL":
		return nth(time.June, time.Sunday, 3), true
	case "AU", "NZ":
		return nth(time.September, time.Sunday, 1), true
	case "DE":
		return addDays(easterSunday(y), easterOffsets["ascension"]), true
	case "ES":
		return time.Date(y, time.March, 19, 0, 0, 0, 0, time.UTC), true
	}
	return day{}, false
}

// easterSunday is Gregorian Easter (the anonymous algorithm in Meeus).
func easterSunday(y int) day {
	a, b, c := y%19, y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	dd := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), dd, 0, 0, 0, 0, time.UTC)
}

// wishes are the words that make a holiday a greeting: "Happy
// Christmas", "Frohe Weihnachten", "Joyeux Noël", "Feliz Navidad",
// "Fijne kerst", "Happy New Year".
var wishes = map[string]bool{
	"happy": true, "merry": true, "joyful": true, "blessed": true, "frohe": true, "frohes": true, "fröhliche": true,
	"schöne": true, "schönes": true, "gesegnete": true, "gutes": true, "guten": true, "joyeux": true,
	"joyeuses": true, "bonne": true, "bonnes": true, "heureuse": true, "feliz": true, "felices": true,
	"próspero": true, "prospero": true, "fijne": true, "prettige": true, "vrolijk": true, "vrolijke": true,
	"gelukkig": true, "zalig": true, "gelukkige": true,
}

// wishAt reports whether the holiday at i is named in a greeting ("Happy
// Christmas to you all", "hope you had a lovely Christmas"), not as a
// day.
func (r *reader) wishAt(i int) bool {
	p := r.word(i-1, len(r.toks))
	if wishes[p] {
		return true
	}
	switch p {
	case "good", "lovely", "nice", "great", "wonderful", "restful", "peaceful", "fab", "brilliant":
		pp := r.word(i-2, len(r.toks))
		return pp == "a" || pp == "had" || pp == "your"
	}
	return false
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
		if r.word(i-1, b) == "late" {
			return window{15 * 60, 17 * 60}, i + 1 // the afternoon's last two hours
		}
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
		// "noon to 2", "midday-3pm": a span from twelve.
		if sep := r.word(i+1, b); sep == "-" || sep == "to" || sep == "until" || sep == "till" {
			if t2, _, k2, ok := r.clockAt(i+2, b, true); ok {
				_, t2 = r.pair(i, 12*60, i+2, t2)
				return window{12 * 60, t2}, k2
			}
		}
		return window{11*60 + 30, 12*60 + 30}, i + 1
	case "after", "from", "starting", "since", "before", "until", "till", "til", "between", "at", "around", "about", "approx", "approximately", "circa", "ca", "by":
		j := i + 1
		// "after lunch", "before lunch": lunchtime's ends.
		if nx := r.word(j, b); nx == "lunch" || nx == "lunchtime" {
			if w == "after" {
				return window{14 * 60, 1440}, j + 1
			}
			if w == "before" {
				return window{0, 12 * 60}, j + 1
			}
		}
		if w == "after" && (r.word(j, b) == "school" || r.word(j, b) == "work") {
			if r.word(j, b) == "school" {
				return window{15 * 60, 1440}, j + 1
			}
			return window{17 * 60, 1440}, j + 1
		}
		if w == "by" {
			return window{}, i
		}
		if its, _ := r.dateAt(j, b); its != nil {
			return window{}, i // "from 12 to 15 November" is days, not hours
		}
		t1, approx1, k, ok := r.clockAt(j, b, true)
		if !ok {
			return window{}, i
		}
		// "not before 10am", "no later than 6": the bound turned round.
		notYet := negations[r.word(i-1, b)] || r.word(i-1, b) == "no" || r.word(i-1, b) == "nothing" || r.negatedVerbBefore(i, b)
		switch {
		case notYet && (w == "before" || w == "until" || w == "till" || w == "til"):
			return window{r.hour(j, t1), 1440}, k
		case notYet && (w == "after" || w == "since"):
			return window{0, r.hour(j, t1)}, k
		}
		switch w {
		case "before", "until", "till", "til":
			return window{0, r.hour(j, t1)}, k
		case "between", "from", "starting":
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
	// "Friday 10-12": hours beside a weekday.
	if _, _, wd := weekdayOf(r.word(i-1, b)); wd && r.hoursAt(i, b) {
		t2 := r.toks[i+2].n * 60
		switch {
		case r.toks[i+2].ampm == 'p' && t2 < 12*60:
			t2 += 12 * 60
		case r.toks[i+2].ampm == 'a' && t2 == 12*60:
			t2 = 0
		}
		t1, t2 := r.pair(i, r.toks[i].n*60, i+2, t2)
		return window{t1, t2}, i + 3
	}
	// "2-4pm", "10-11:30": a bare hour joined by a dash to a marked time
	// is a range of hours, with the marks of the second.
	if t := r.toks[i]; i+2 < b && t.kind == 'n' && !t.ord && t.clock < 0 && t.ampm == 0 && t.n >= 0 && t.n <= 23 && len(t.w) <= 2 &&
		r.word(i+1, b) == "-" && (r.toks[i+2].ampm != 0 || r.toks[i+2].clock >= 0) {
		if t2, _, k, ok := r.clockAt(i+2, b, false); ok {
			t1, t2 := r.pair(i, t.n*60, i+2, t2)
			if t1 < t2 {
				return window{t1, t2}, k
			}
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

// pointAt reports whether the time read at i is a moment rather than a
// span: "around 11", "at 7", "noon", "8ish", "7:30".
func (r *reader) pointAt(i int) bool {
	switch r.word(i, len(r.toks)) {
	case "around", "about", "approx", "approximately", "circa", "ca", "at", "noon", "midday":
		return true
	}
	t := r.toks[i]
	return t.kind == 'n' && (t.ish || t.clock >= 0 || t.ampm != 0)
}

// hoursAt reports two bare hours joined by a dash at i with no month
// after them ("10-12" in "Friday 10-12"): hours, where "10-12 May" would
// be days.
func (r *reader) hoursAt(i, b int) bool {
	bareHour := func(k int) bool {
		return k < b && r.toks[k].kind == 'n' && !r.toks[k].ord && r.toks[k].clock < 0 && r.toks[k].ampm == 0 && r.toks[k].n >= 1 && r.toks[k].n <= 12 && len(r.toks[k].w) <= 2
	}
	// "Friday 2-4pm": the second hour may carry the am or pm of both.
	second := bareHour(i+2) || i+2 < b && r.toks[i+2].ampm != 0 && r.toks[i+2].clock < 0 && r.toks[i+2].n >= 1 && r.toks[i+2].n <= 12
	if !bareHour(i) || r.word(i+1, b) != "-" || !second {
		return false
	}
	nx := r.word(i+3, b)
	_, isMonth := months[nx]
	return !isMonth && !ofWords[nx] && !unitWord[nx]
}

// clockAt reads a clock time at i. With loose set, a bare hour ("after
// 5") counts; without it, the time must carry am/pm, minutes, "ish" or
// "o'clock". The minutes returned keep am/pm unresolved for bare hours
// (hour() settles them).
func (r *reader) clockAt(i, b int, loose bool) (int, bool, int, bool) {
	if loose && (r.word(i, b) == "noon" || r.word(i, b) == "midday") {
		return 12 * 60, false, i + 1, true // "before noon"
	}
	if i >= b || r.toks[i].kind != 'n' || r.toks[i].ord {
		return 0, false, i, false
	}
	t := r.toks[i]
	next := r.word(i+1, b)
	switch next {
	case "people", "persons", "guests", "of", "weeks", "week", "days", "day", "min", "mins", "minutes", "hours", "hour", "hrs", "years", "year", "kids", "children", "adults", "months", "month", "people's", "%", "/":
		if t.clock < 0 && t.ampm == 0 || next == "%" || next == "/" {
			return 0, false, i, false // "4 of us", "2 weeks"; not "14:00 of zondag"
		}
	}
	if unitWord[next] && next != "pm" && next != "am" && next != "o'clock" && t.clock < 0 && t.ampm == 0 {
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
