package csvrows

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"

	"github.com/nextup-dev/nextup"
)

// NormalizePhone returns a phone number in E.164 (+447700900123), reading a
// number without an international prefix as one of country (ISO 3166-1
// alpha-2; "" accepts only international numbers). A number in a range in
// service passes; so does one of a possible length in its country, so that
// ranges newer than the metadata, and the fictional ones of tests and films
// (+44 7700 900123), go through.
func NormalizePhone(s, country string) (string, error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "'")) // Excel's "keep as text" mark
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' ' // no-break spaces from copied numbers
		}
		return r
	}, s)
	if s == "" {
		return "", nil
	}
	if len(s) > 40 {
		return "", errors.New("is too long to be a phone number")
	}
	if mantissa, _, ok := strings.Cut(strings.ToUpper(s), "E+"); ok && strings.Contains(mantissa, ".") {
		return "", fmt.Errorf("%q is a number the spreadsheet shortened, and its digits are lost: format the column as text and export again", s)
	}
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0:
		case strings.ContainsRune(" -().", r):
		default:
			return "", fmt.Errorf("%q is not a phone number", s)
		}
	}
	if digits < 6 || digits > 17 {
		return "", fmt.Errorf("%q is not a phone number", s)
	}
	international := strings.HasPrefix(s, "+") || strings.HasPrefix(s, "00")
	region := strings.ToUpper(country)
	if !international && region == "" {
		return "", fmt.Errorf("%q has no country code: write it as +44 7700 900123, or set the business's country", s)
	}
	if region == "" {
		region = "ZZ" // unknown region: only +-prefixed numbers parse
		if rest, ok := strings.CutPrefix(s, "00"); ok {
			s = "+" + rest
		}
	}
	n, err := phonenumbers.Parse(s, region)
	if err != nil {
		return "", fmt.Errorf("%q is not a phone number", s)
	}
	// A number possible only without its area code reaches nobody; a
	// leading zero the national prefix could not be stripped from
	// (+44 0 7700 9001) is a short number, unless it is a real one (Italy).
	possible := phonenumbers.IsPossibleNumberWithReason(n) == phonenumbers.IS_POSSIBLE
	if !phonenumbers.IsValidNumber(n) && (!possible || n.GetItalianLeadingZero()) {
		return "", fmt.Errorf("%q is not a phone number", s)
	}
	return phonenumbers.Format(n, phonenumbers.E164), nil
}

// parseParty reads a party size: a whole number, perhaps followed by a
// word ("4 people") or written by a spreadsheet as "4.0".
func parseParty(s string) (int, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	rest := strings.TrimSpace(s[i:])
	rest = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(rest, "."), ","), "0")
	if i == 0 || i > 4 || strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) && r != ' ' }) >= 0 {
		return 0, fmt.Errorf("%q is not a number of people", s)
	}
	n, _ := strconv.Atoi(s[:i])
	if n < 1 {
		return 0, errors.New("must be at least 1")
	}
	return n, nil
}

var yes = map[string]bool{
	"yes": true, "y": true, "true": true, "1": true, "x": true, "✓": true, "✔": true, "☑": true, "priority": true,
	"vip": true, "urgent": true, "high": true, "ja": true, "oui": true, "si": true, "sí": true,
}

var no = map[string]bool{
	"no": true, "n": true, "false": true, "0": true, "-": true, "✗": true, "☐": true, "normal": true, "low": true,
	"nein": true, "non": true,
}

// parseYes reads a yes/no cell; blank is no.
func parseYes(s string) (bool, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch {
	case v == "" || no[v]:
		return false, nil
	case yes[v]:
		return true, nil
	}
	return false, fmt.Errorf("%q is neither yes nor no", s)
}

// parseChannel reads a preferred channel; blank lets nextup choose.
func parseChannel(s string) (nextup.Channel, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "":
		return "", nil
	case "email", "e-mail", "mail":
		return nextup.ChannelEmail, nil
	case "sms", "text", "texts", "text message", "phone", "mobile", "cell":
		return nextup.ChannelSMS, nil
	}
	return "", fmt.Errorf("%q: must be email or sms", s)
}

// oneLine collapses a cell's runs of white space, line breaks included.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// catalogue maps names and synonyms, any case, to the catalogue's spelling.
type catalogue map[string]string

func newCatalogue(services []nextup.Service, staff []string) (svc, stf catalogue) {
	svc, stf = catalogue{}, catalogue{}
	for _, s := range services {
		for _, n := range append([]string{s.Name}, s.Synonyms...) {
			if k := strings.ToLower(oneLine(n)); k != "" {
				if _, taken := svc[k]; !taken {
					svc[k] = s.Name
				}
			}
		}
	}
	for _, n := range staff {
		if k := strings.ToLower(oneLine(n)); k != "" {
			if _, taken := stf[k]; !taken {
				stf[k] = n
			}
		}
	}
	return svc, stf
}

// canon returns the catalogue's spelling of s, or s as it is.
func (c catalogue) canon(s string) string {
	s = oneLine(s)
	if n, ok := c[strings.ToLower(s)]; ok {
		return n
	}
	return s
}
