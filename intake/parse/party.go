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
		`|\b` + numRE + `\s+(?:people|persons|personen|guests|adults|pax|ppl|participants|attendees)\b|\bfor\s+` + numRE + `\s*(?:people|persons|guests)\b`)
	partyMeAnd     = regexp.MustCompile(`\b(?:me|myself)\s+and\s+` + numRE + `\s+(\pL+)`)
	partyCompanion = regexp.MustCompile(`\b(?:me|myself|i)\s+and\s+my\s+(?:` + numRE + `\s+)?(\pL+)|\bmy\s+(\pL+)\s+and\s+(?:i|me|myself)\b|\bwith\s+my\s+(?:` + numRE + `\s+)?(\pL+)`)
	partyUnit      = regexp.MustCompile(`(pm|am|:|\.\d|o'?clock|weeks?|days?|hours?|mins?|minutes|months?)$`)
	partyBoth      = regexp.MustCompile(`\bus both\b|\bboth of us\b|\bthe two of us\b|\bwe both\b`)
)

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
