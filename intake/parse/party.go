package parse

import (
	"regexp"
	"strconv"
	"strings"
)

var numWords = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "twenty": 20,
	"a couple of": 2, "a couple": 2, "a pair of": 2, "zwei": 2, "drei": 3, "vier": 4,
}

// personNouns count one each, their plurals with a number before them.
var personNouns = map[string]bool{
	"sister": true, "brother": true, "son": true, "daughter": true, "husband": true, "wife": true, "partner": true,
	"mum": true, "mom": true, "mother": true, "dad": true, "father": true, "friend": true, "boyfriend": true,
	"girlfriend": true, "fiance": true, "fiancee": true, "fiancé": true, "colleague": true, "kid": true, "child": true,
	"boy": true, "girl": true, "grandma": true, "grandad": true, "granddad": true, "nan": true, "niece": true,
	"nephew": true, "cousin": true, "flatmate": true, "housemate": true, "mate": true, "baby": true, "teenager": true,
	"children": true, "kids": true, "boys": true, "girls": true, "friends": true, "sisters": true, "brothers": true,
	"sons": true, "daughters": true, "colleagues": true, "mates": true, "parents": true, "frau": true, "mann": true,
}

const numRE = `(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|twenty|a couple of|a couple|zwei|drei|vier)`

var (
	partyTotal    = regexp.MustCompile(`\b` + numRE + `\s+(?:of us|people|persons|guests)\s+(?:in\s+)?total\b|\btotal of\s+` + numRE + `\b`)
	partySum      = regexp.MustCompile(`\b` + numRE + `\s+(?:adults?|kids|children|guests|friends|people)\s*(?:,|\+|plus|and)\s*(?:` + numRE + `\s+(?:adults?|kids|children|guests)|(me and my \pL+|us|me|my husband and me|my wife and me))`)
	partyExplicit = regexp.MustCompile(`\b(?:table|booking|reservation|space|spaces|room|seats?|spots?|places?|dinner|lunch|brunch|breakfast)\s+for\s+` + numRE + `\b(?:\s*(?:pm|am|:|\.\d|o'?clock|weeks?|days?|hours?|mins?|minutes|months?))?` +
		`|\bparty\s+(?:size\s*:?\s*|of\s+)` + numRE + `\b|\b(?:group|team)\s+of\s+` + numRE + `\b|\b` + numRE + `\s+of\s+us\b` +
		`|\b` + numRE + `\s+(?:people|persons|personen|guests|adults|pax|ppl|participants|attendees|seats|covers)\b|\bfor\s+` + numRE + `\s*(?:people|persons|guests)\b` +
		// "dinner this Saturday at 8pm for three.": a number word alone
		// after "for" at the end of a clause counts people ("for two
		// weeks" goes on; a bare "for 8" is as likely a time).
		`|\bfor\s+(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s*(?:[.?!,;)]|$)`)
	partyMeAnd     = regexp.MustCompile(`\b(?:me|myself)\s+and\s+` + numRE + `\s+(\pL+)`)
	partyCompanion = regexp.MustCompile(`\b(?:me|myself|i)\s+and\s+my\s+(?:` + numRE + `\s+)?(\pL+)|\bmy\s+(\pL+)\s+and\s+(?:i|me|myself)\b|\bwith\s+my\s+(?:` + numRE + `\s+)?(\pL+)`)
	partyUnit      = regexp.MustCompile(`(pm|am|:|\.\d|o'?clock|weeks?|days?|hours?|mins?|minutes|months?)$`)
	partyBoth      = regexp.MustCompile(`\bus both\b|\bboth of us\b|\bthe two of us\b|\bwe both\b`)
)

// The other languages' counts: a number, or one written as a word, in the
// phrases that say it counts people ("mesa para cuatro", "nous serons
// trois", "für 4 Personen", "met z'n drieën"). Their number words are
// read only inside such phrases, where "once" is Spanish eleven and "sept"
// French seven.
var foreignNumWords = map[string]int{
	"zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
	"deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12,
	"dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12,
	"twee": 2, "drie": 3, "vijf": 5, "zes": 6, "zeven": 7, "negen": 9, "tien": 10, "twaalf": 12,
}

// foreignGroups are the Dutch and German words for "as a group of n":
// "met z'n drieën", "zu viert".
var foreignGroups = map[string]int{
	"tweeën": 2, "tweeen": 2, "drieën": 3, "drieen": 3, "vieren": 4, "vijven": 5, "zessen": 6, "zevenen": 7, "achten": 8,
	"tweetjes": 2, "zweit": 2, "dritt": 3, "viert": 4, "fünft": 5, "sechst": 6, "siebt": 7, "acht": 8, "neunt": 9, "zehnt": 10,
}

const fnumRE = `(\d{1,3}|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|twee|drie|vijf|zes|zeven|negen|tien|twaalf)`

var (
	partyForeign = regexp.MustCompile(
		// es
		`\b(?:mesa|sitio|reserva|cena|comida|almuerzo)\s+para\s+` + fnumRE + `\b|\b(?:somos|seremos|seríamos|seriamos)\s+(?:un grupo de\s+)?` + fnumRE + `\b|\bun grupo de\s+` + fnumRE + `\b` +
			// fr
			`|\b(?:table|réservation|reservation|dîner|diner|déjeuner|dejeuner)\s+pour\s+` + fnumRE + `\b|\b(?:nous|on)\s+(?:serons|sommes|serions|sera)\s+` + fnumRE + `\b|\bun groupe de\s+` + fnumRE + `\b` +
			// de
			`|\b(?:tisch|platz|plätze|reservierung|abendessen|mittagessen)\s+für\s+` + fnumRE + `\b|\bwir\s+(?:sind|wären|werden)\s+(?:zu\s+)?` + fnumRE + `\b|\bgruppe von\s+` + fnumRE + `\b` +
			// nl
			`|\b(?:tafel|reservering|plek|plekken|diner|lunch)\s+voor\s+` + fnumRE + `\b|\b(?:we|wij)\s+zijn\s+(?:met\s+)?` + fnumRE + `\b|\bgroep van\s+` + fnumRE + `\b` +
			// all: n people
			`|\b` + fnumRE + `\s+(?:personas|personnes|personen|pers|leute|mensen|comensales|couverts|gäste|invitados` +
			// people counted by who they are: "7 Frauen", "6 amigas"
			`|frauen|männer|freunde|freundinnen|erwachsene|femmes|hommes|amis|amies|adultes|mujeres|hombres|amigos|amigas|adultos|vrouwen|mannen|vrienden|vriendinnen|volwassenen)\b`)
	partyGroupWord = regexp.MustCompile(`\bmet\s+(?:z'n|zijn|ons)\s+(\pL+)|\bzu\s+(\pL+)`)
	// foreignUnit after a number says it counts something else: "wir sind
	// 5 Minuten entfernt", "somos 2 horas".
	foreignUnit = regexp.MustCompile(`^\s*(?:h\b|uhr|uur|heures?|horas?|minut|:|\.\d|tage|wochen|jours|semaines|días|dias|semanas|dagen|weken|jahre|ans|años|jaar)`)
	// Company in the other languages, as partyCompanion reads English:
	// "meine Freundin und ich", "für mich und meinen Mann", "avec mon
	// mari", "mi marido y yo", "met mijn vriendin".
	partyCompanionForeign = regexp.MustCompile(`\b(?:ich|mich|mir)\s+und\s+mein(?:e|en|em|er)?\s+(\pL+)|\bmein(?:e)?\s+(\pL+)\s+und\s+ich\b|\bmit\s+mein(?:em|er)\s+(\pL+)` +
		`|\bmoi\s+et\s+(?:mon|ma)\s+(\pL+)|\b(?:mon|ma)\s+(\pL+)\s+et\s+moi\b|\bavec\s+(?:mon|ma)\s+(\pL+)` +
		`|\b(?:yo|mí)\s+y\s+mi\s+(\pL+)|\bmi\s+(\pL+)\s+y\s+yo\b|\bcon\s+mi\s+(\pL+)` +
		`|\b(?:ik|mij|mezelf)\s+en\s+mijn\s+(\pL+)|\bmijn\s+(\pL+)\s+en\s+ik\b|\bmet\s+mijn\s+(\pL+)`)
)

// foreignPersonNouns are the companions partyCompanionForeign counts.
var foreignPersonNouns = map[string]bool{
	"mann": true, "frau": true, "freund": true, "freundin": true, "partner": true, "partnerin": true, "tochter": true,
	"sohn": true, "mutter": true, "vater": true, "schwester": true, "bruder": true, "kollegin": true, "kollege": true,
	"mari": true, "femme": true, "copain": true, "copine": true, "ami": true, "amie": true, "fille": true, "fils": true,
	"mère": true, "père": true, "sœur": true, "soeur": true, "frère": true, "compagnon": true, "compagne": true,
	"marido": true, "mujer": true, "esposo": true, "esposa": true, "novio": true, "novia": true, "amigo": true,
	"amiga": true, "hija": true, "hijo": true, "madre": true, "padre": true, "hermana": true, "hermano": true, "pareja": true,
	"man": true, "vrouw": true, "vriend": true, "vriendin": true, "dochter": true, "zoon": true, "moeder": true,
	"vader": true, "zus": true, "broer": true,
}

// foreignParty reads the counts and company partyForeign and
// partyCompanionForeign know.
func foreignParty(src string) (partyMatch, bool) {
	for _, m := range partyForeign.FindAllStringSubmatchIndex(src, 4) {
		var g string
		end := m[1]
		for k := 2; k < len(m); k += 2 {
			if m[k] >= 0 {
				g, end = src[m[k]:m[k+1]], m[k+1]
				break
			}
		}
		if foreignUnit.MatchString(src[end:]) {
			continue
		}
		n, err := strconv.Atoi(g)
		if err != nil {
			n = foreignNumWords[g]
		}
		if n > 0 && n <= 500 {
			return partyMatch{n: n, conf: 0.9}, true
		}
	}
	// "zu" and "mit meinem" say much else first ("bis zu", "mit meinem
	// Auto"), so a few matches are read, not only the first.
	for _, m := range partyGroupWord.FindAllStringSubmatch(src, 8) {
		if n := foreignGroups[firstGroup(m)]; n > 0 {
			return partyMatch{n: n, conf: 0.85}, true
		}
	}
	for _, m := range partyCompanionForeign.FindAllStringSubmatch(src, 8) {
		if foreignPersonNouns[firstGroup(m)] {
			return partyMatch{n: 2, conf: 0.75}, true
		}
	}
	return partyMatch{}, false
}

type partyMatch struct {
	n        int
	conf     float64
	problems []string
}

func toNum(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return numWords[s]
}

func firstGroup(m []string) string {
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return ""
}

// findPartySize reads how many people the booking is for. A stated total
// wins over a sum ("4 adults and 2 kids"), which wins over a number
// ("table for 4", "party of six"), which wins over company ("me and my
// sister", "my husband and I"). Nothing said means one person.
func findPartySize(text, subject string) partyMatch {
	for _, src := range []string{strings.ToLower(text), strings.ToLower(subject)} {
		if m := partyTotal.FindStringSubmatch(src); m != nil {
			if n := toNum(firstGroup(m)); n > 0 && n <= 500 {
				return partyMatch{n: n, conf: 0.95}
			}
		}
		if m := partySum.FindStringSubmatch(src); m != nil {
			a := toNum(m[1])
			b := toNum(m[2])
			if m[3] != "" {
				b = 1
				if strings.Contains(m[3], " and ") {
					b = 2
				}
			}
			if a > 0 && b > 0 && a+b <= 500 {
				return partyMatch{n: a + b, conf: 0.85}
			}
		}
		if m := partyExplicit.FindStringSubmatchIndex(src); m != nil {
			whole := src[m[0]:m[1]]
			var g string
			for k := 2; k < len(m); k += 2 {
				if m[k] >= 0 {
					g = src[m[k]:m[k+1]]
					break
				}
			}
			if !partyUnit.MatchString(whole) {
				if n := toNum(g); n > 0 && n <= 500 {
					return partyMatch{n: n, conf: 0.9}
				}
			}
		}
		if m, ok := foreignParty(src); ok {
			return m
		}
		if m := partyMeAnd.FindStringSubmatch(src); m != nil && personNouns[m[2]] {
			if n := toNum(m[1]); n > 0 && n < 100 {
				return partyMatch{n: n + 1, conf: 0.8}
			}
		}
		if m := partyCompanion.FindStringSubmatch(src); m != nil {
			num, noun := m[1], m[2]
			if noun == "" {
				noun = m[3]
			}
			if noun == "" {
				num, noun = m[4], m[5]
			}
			if personNouns[noun] {
				others := 1
				if num != "" {
					others = toNum(num)
				} else if noun == "parents" {
					others = 2
				}
				if others > 0 && others < 100 {
					return partyMatch{n: 1 + others, conf: 0.75}
				}
			}
		}
		if partyBoth.MatchString(src) {
			return partyMatch{n: 2, conf: 0.75}
		}
	}
	return partyMatch{n: 1, conf: 0.5}
}
