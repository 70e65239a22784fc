package mailmsg

import (
	"regexp"
	"strings"
)

var (
	// "On Tue, 3 Mar 2026 at 09:12, Jane <j@x> wrote:", possibly wrapped
	// over up to three lines, and its cousins: French "Le ..., Anne <a@x> a
	// écrit :", Spanish "El ..., Ana (<a@x>) escribió:", and German and
	// Dutch, which name the writer after the verb: "Am ... schrieb Jana
	// <j@x>:", "Op ... schreef Eva <e@x>:". The newer ones want a digit
	// (the date) before the verb, so that "Am Ende schrieb ich:" is no
	// introduction.
	replyIntro = regexp.MustCompile(`(?is)^\s*(on\b.{0,300}\bwrote|le\b.{0,300}\ba [ée]crit|am\b.{0,300}\bschrieb|el\b.{0,300}?\d.{0,300}\bescribi[óo]|(am\b.{0,300}?\d.{0,300}\bschrieb|op\b.{0,300}?\d.{0,300}\bschreef)\b.{0,300})\s*:\s*$`)
	// The signature delimiter, with or without its trailing space.
	sigDelim = regexp.MustCompile(`^--\s*$`)
	// Footers mail apps add, and the disclaimers companies add.
	sigFooter = regexp.MustCompile(`(?i)^\s*(sent from my \S.*|sent from (outlook|mail|yahoo|gmail|aol|samsung|windows|proton).*|sent via \S.*|sent with proton.*|get outlook for \S.*|download outlook for \S.*|envoy[ée] de mon \S.*|von meinem \S.* gesendet.*|(confidentiality|disclaimer)( notice)?\s*[:-].*|this (e-?mail|message)( and any (files|attachments).*)? (is|are|may be|contains?) .*confidential.*|the information (contained )?in this (e-?mail|message).*)$`)
)

// stripQuotesAndSignature splits text into the author's own words and the
// signature that ended them. Everything from the first reply introduction
// or Outlook reply header on is quoted history and is dropped, as are "> "
// lines the author left in between their own.
func stripQuotesAndSignature(text string) (body, signature string) {
	lines := strings.Split(text, "\n")
	cut := len(lines)
	for i := range lines {
		if isQuoteStart(lines, i) {
			cut = i
			break
		}
	}
	lines = lines[:cut]
	own := lines[:0:0]
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), ">") {
			continue
		}
		own = append(own, l)
	}
	sig := len(own)
	seen := false // a signature ends something: never cut at the first line
	for i, l := range own {
		if !seen {
			seen = strings.TrimSpace(l) != ""
			continue
		}
		if sigDelim.MatchString(l) || sigFooter.MatchString(l) {
			sig = i
			break
		}
	}
	body = tidy(own[:sig])
	if sig < len(own) {
		rest := own[sig:]
		if sigDelim.MatchString(rest[0]) {
			rest = rest[1:]
		}
		signature = tidy(rest)
	}
	return body, signature
}

// isQuoteStart reports whether line i starts the quoted history of a
// reply.
func isQuoteStart(lines []string, i int) bool {
	l := strings.TrimSpace(lines[i])
	if l == "" {
		return false
	}
	if weakMarker.MatchString(l) && i+1 < len(lines) {
		// Outlook's separators, when a header block follows.
		for j := i + 1; j < len(lines) && j <= i+3; j++ {
			if m := headerLine.FindStringSubmatch(lines[j]); m != nil {
				return true
			}
		}
		// A separator that names itself ("-----Original Message-----",
		// "-----Ursprüngliche Nachricht-----") is Outlook's, in any language.
		return strings.Trim(l, "-_ \t") != ""
	}
	if isBareHeaderStart(lines, i) {
		return true
	}
	low := strings.ToLower(l)
	if strings.HasPrefix(low, "on ") || strings.HasPrefix(low, "le ") || strings.HasPrefix(low, "am ") || strings.HasPrefix(low, "el ") || strings.HasPrefix(low, "op ") {
		// An introduction wraps over lines, never over a blank one: "On
		// Tuesday, please" above a blank line and an introduction is the
		// requester's.
		joined := l
		for j := i; j < len(lines) && j <= i+2; j++ {
			if j > i {
				if strings.TrimSpace(lines[j]) == "" {
					break
				}
				joined += " " + strings.TrimSpace(lines[j])
			}
			if replyIntro.MatchString(joined) {
				return true
			}
		}
	}
	return false
}

// tidy joins lines, trimming blank lines at both ends and squeezing runs
// of blank lines to one.
func tidy(lines []string) string {
	var out []string
	blankRun := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			blankRun++
			continue
		}
		if blankRun > 0 && len(out) > 0 {
			out = append(out, "")
		}
		blankRun = 0
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.Join(out, "\n")
}
