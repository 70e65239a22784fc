package parse

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

type contact struct {
	name, email, phone             string
	nameConf, emailConf, phoneConf float64
	problems                       []string
}

var (
	labelName  = regexp.MustCompile(`(?im)^[ \t*]*(?:full name|your name|name)[ \t*]*:[ \t*]*([^\n]{2,80})$`)
	labelEmail = regexp.MustCompile(`(?im)^[ \t*]*(?:e-?mail(?: address)?|your e-?mail)[ \t*]*:[ \t*]*([^\s@]+@[^\s]+\.[a-z]{2,})`)
	emailIn    = regexp.MustCompile(`(?i)[a-z0-9._%+'-]+@[a-z0-9.-]+\.[a-z]{2,}`)
	emailSaid  = regexp.MustCompile(`(?i)(?:my e-?mail(?: address)? is|e-?mail me (?:at|on)|reply to|contact me (?:at|on))\s*:?\s*([a-z0-9._%+'-]+@[a-z0-9.-]+\.[a-z]{2,})`)
	nameSaid   = regexp.MustCompile(`(?:[Mm]y name is|[Mm]y name's|^[Tt]his is|[.!]\s+[Tt]his is|\bI'm|\bI am)\s+([A-Z][\pL'-]+(?:\s+[A-Z][\pL'-]+){0,2})`)
	nameHere   = regexp.MustCompile(`(?m)^([A-Z][\pL'-]+(?:\s+[A-Z][\pL'-]+){1,2}) here\b`)
	phoneLike  = regexp.MustCompile(`(?:\+\s?)?(?:\(\d{1,5}\)\s?)?\d[\d \t().-]{5,18}\d`)
	formSender = regexp.MustCompile(`(?i)no-?reply|do-?not-?reply|form|notification|mailer|wix|squarespace|typeform|jotform|wordpress`)
	titles     = map[string]bool{"dr": true, "mr": true, "mrs": true, "ms": true, "miss": true, "mx": true, "prof": true, "sir": true, "rev": true}
	postnoms   = map[string]bool{"phd": true, "md": true, "rn": true, "mba": true, "bsc": true, "msc": true, "ba": true, "ma": true, "jr": true, "sr": true, "esq": true, "dds": true, "cpa": true}
)

// notNames are capitalised words that follow "I'm" without being a name.
var notNames = map[string]bool{
	"Looking": true, "Free": true, "Available": true, "Happy": true, "Sorry": true, "Not": true, "Off": true, "Due": true,
	"Hoping": true, "Flexible": true, "Around": true, "Getting": true, "Organising": true, "Organizing": true, "After": true,
	"In": true, "On": true, "Also": true, "Still": true, "Just": true, "Afraid": true, "Writing": true, "Interested": true,
}

func findContact(in Input, text, sig, country string) contact {
	var c contact
	all := text + "\n" + sig
	form := formSender.MatchString(in.FromAddress) || formSender.MatchString(in.FromName) || in.FromAddress == ""

	// Email.
	switch {
	case form && labelEmail.MatchString(all):
		c.email, c.emailConf = strings.ToLower(labelEmail.FindStringSubmatch(all)[1]), 0.9
	case emailSaid.MatchString(all):
		c.email, c.emailConf = strings.ToLower(emailSaid.FindStringSubmatch(all)[1]), 0.85
	case in.FromAddress != "" && !form:
		c.email, c.emailConf = strings.ToLower(strings.TrimSpace(in.FromAddress)), 0.95
	default:
		if m := emailIn.FindString(all); m != "" {
			c.email, c.emailConf = strings.ToLower(m), 0.5
		}
	}

	// Name.
	c.name, c.nameConf = findName(in, text, sig, all, form)
	if c.name == "" {
		c.problems = append(c.problems, "no name found")
	}

	// Phone.
	c.phone, c.phoneConf = findPhone(text, sig, country, &c.problems)
	return c
}

func findName(in Input, text, sig, all string, form bool) (string, float64) {
	if form {
		if m := labelName.FindStringSubmatch(all); m != nil {
			if n := cleanName(m[1]); n != "" {
				return n, 0.9
			}
		}
	}
	if m := nameSaid.FindStringSubmatch(text); m != nil && !notNames[strings.Fields(m[1])[0]] && (strings.Contains(m[0], "name") || len(strings.Fields(m[1])) > 1) {
		return cleanName(m[1]), 0.85
	}
	if m := nameHere.FindStringSubmatch(text); m != nil {
		return cleanName(m[1]), 0.85
	}
	display := cleanName(in.FromName)
	couple := strings.Contains(in.FromName, "&") || strings.Contains(strings.ToLower(in.FromName), " and ")
	if display != "" && !form && !couple {
		if !strings.Contains(display, " ") {
			// A first name only: a sign-off may give the whole name.
			if full := signOffStarting(all, display); full != "" {
				return full, 0.8
			}
			return display, 0.7
		}
		return display, 0.9
	}
	if couple {
		parts := strings.Fields(display)
		if len(parts) > 0 {
			surname := parts[len(parts)-1]
			if full := signOffEnding(all, surname); full != "" {
				return full, 0.8
			}
		}
		return display, 0.5
	}
	// No display name: the words of the address that the text also uses
	// ("tom.b.walker" signing "tom walker").
	if n := nameFromLocalPart(in.FromAddress, all); n != "" {
		return n, 0.6
	}
	return "", 0
}

// cleanName turns a display name into the name staff would write: no
// quotes, titles or letters after it, "Last, First" turned round, and
// capitals where the sender typed none (or only capitals).
func cleanName(s string) string {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"'`))
	if i := strings.IndexByte(s, '('); i >= 0 {
		if j := strings.IndexByte(s[i:], ')'); j >= 0 {
			s = s[:i] + s[i+j+1:]
		}
	}
	if strings.Contains(s, "@") {
		return ""
	}
	if i := strings.IndexByte(s, ','); i >= 0 {
		left, right := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		if postnoms[strings.ToLower(strings.Trim(right, "."))] || right == "" {
			s = left
		} else if len(strings.Fields(left)) <= 2 && len(strings.Fields(right)) <= 2 {
			s = right + " " + left
		}
	}
	var words []string
	for _, w := range strings.Fields(s) {
		bare := strings.ToLower(strings.Trim(w, ".,"))
		if len(words) == 0 && titles[bare] {
			continue
		}
		if postnoms[bare] && len(words) > 0 {
			continue
		}
		if strings.Trim(w, ".,|-") == "" {
			continue
		}
		words = append(words, strings.Trim(w, ","))
	}
	if len(words) == 0 || len(words) > 5 {
		return ""
	}
	s = strings.Join(words, " ")
	if s == strings.ToLower(s) || s == strings.ToUpper(s) {
		s = titleCase(s)
	}
	return s
}

func titleCase(s string) string {
	rs := []rune(strings.ToLower(s))
	start := true
	for i, r := range rs {
		if start && unicode.IsLetter(r) {
			rs[i] = unicode.ToUpper(r)
		}
		start = r == ' ' || r == '-' || r == '\''
	}
	return string(rs)
}

// signOffStarting finds a line like "Priya Shah" that starts with first.
func signOffStarting(all, first string) string {
	for _, l := range strings.Split(all, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && len(f) <= 3 && f[0] == first && capitalised(f[1:]) {
			return cleanName(strings.Join(f, " "))
		}
	}
	return ""
}

// signOffEnding finds a line like "Linda Marino" that ends with surname.
func signOffEnding(all, surname string) string {
	for _, l := range strings.Split(all, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && len(f) <= 3 && f[len(f)-1] == surname && capitalised(f[:len(f)-1]) {
			return cleanName(strings.Join(f, " "))
		}
	}
	return ""
}

func capitalised(ws []string) bool {
	for _, w := range ws {
		r := []rune(w)
		if len(r) == 0 || !unicode.IsUpper(r[0]) {
			return false
		}
		for _, c := range r {
			if !unicode.IsLetter(c) && c != '\'' && c != '-' {
				return false
			}
		}
	}
	return true
}

var (
	wordRE    = regexp.MustCompile(`[\pL][\pL'-]*`)
	asciiWord = regexp.MustCompile(`[a-z]+`)
)

func nameFromLocalPart(addr, all string) string {
	at := strings.IndexByte(addr, '@')
	if at <= 0 {
		return ""
	}
	parts := map[string]bool{}
	for _, w := range asciiWord.FindAllString(strings.ToLower(addr[:at]), -1) {
		if len(w) >= 2 {
			parts[w] = true
		}
	}
	words := wordRE.FindAllString(all, -1)
	best := []string{}
	for i := range words {
		var run []string
		for j := i; j < len(words) && parts[strings.ToLower(words[j])] && len(run) < 3; j++ {
			run = append(run, words[j])
		}
		if len(run) > len(best) {
			best = run
		}
	}
	if len(best) == 0 {
		return ""
	}
	return titleCase(strings.Join(best, " "))
}

var (
	mobileLabel = regexp.MustCompile(`(?i)(\bm\s*[:.]?|\bmob(ile)?\b|\bcell\b|\bcel\b|\bhandy\b|\bwhatsapp\b|\btext\b)[^\n\d+(]{0,12}$`)
	officeLabel = regexp.MustCompile(`(?i)(\b[top]\s*[:.]|\btel\b|\btelephone\b|\boffice\b|\bwork\b|\blandline\b|\bdirect\b|\bswitchboard\b)[^\n\d+(]{0,12}$`)
	faxLabel    = regexp.MustCompile(`(?i)(\bfax\b|\bbleep\b|\bext\b|\bpager\b)[^\n\d+(]{0,12}$`)
)

type phoneCand struct {
	e164  string
	score float64
	order int
	valid bool
}

func findPhone(text, sig, country string, problems *[]string) (string, float64) {
	region := strings.ToUpper(strings.TrimSpace(country))
	var cands []phoneCand
	seen := map[string]bool{}
	for k, src := range []string{text, sig} {
		for _, loc := range phoneLike.FindAllStringIndex(src, 50) {
			raw := src[loc[0]:loc[1]]
			digits := 0
			for _, r := range raw {
				if r >= '0' && r <= '9' {
					digits++
				}
			}
			if digits < 7 || digits > 15 {
				continue
			}
			// Not part of a longer token (an address, an ID).
			if loc[0] > 0 && isWordByte(src[loc[0]-1]) || loc[1] < len(src) && isWordByte(src[loc[1]]) {
				continue
			}
			lineStart := strings.LastIndexByte(src[:loc[0]], '\n') + 1
			before := src[lineStart:loc[0]]
			if faxLabel.MatchString(before) {
				continue
			}
			n, err := phonenumbers.Parse(raw, region)
			if err != nil || !phonenumbers.IsPossibleNumber(n) {
				continue
			}
			// A number of the right length outside the ranges the
			// metadata knows is kept, but below any valid one: numbering
			// plans grow faster than libraries are updated.
			valid := phonenumbers.IsValidNumber(n)
			e := phonenumbers.Format(n, phonenumbers.E164)
			if seen[e] {
				continue
			}
			seen[e] = true
			score := 1.0
			switch {
			case mobileLabel.MatchString(before):
				score += 2
			case officeLabel.MatchString(before):
				score -= 1
			}
			switch phonenumbers.GetNumberType(n) {
			case phonenumbers.MOBILE:
				score += 0.5
			case phonenumbers.FIXED_LINE_OR_MOBILE:
				score += 0.25
			}
			if k == 1 {
				score -= 0.1
			}
			if !valid {
				score -= 10
			}
			cands = append(cands, phoneCand{e164: e, score: score, order: len(cands), valid: valid})
		}
	}
	if len(cands) == 0 {
		return "", 0
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if c.score > best.score {
			best = c
		}
	}
	if !best.valid {
		*problems = append(*problems, "the phone number "+best.e164+" is not in a range known to be in use; check it")
		return best.e164, 0.5
	}
	if len(cands) > 1 {
		*problems = append(*problems, "several phone numbers; proposed the one that looks like a mobile")
		return best.e164, 0.7
	}
	return best.e164, 0.9
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '@' || b == '_' || b == '/'
}
