package business

import (
	"strings"

	"golang.org/x/text/language"
)

// validCountry reports whether s is an officially assigned ISO 3166-1
// alpha-2 code in upper case, such as GB. CLDR's regions (golang.org/x/text)
// hold more than that, which are refused: macro-regions (EU), private use
// (XX, ZZ), codes ISO reserves but does not assign (UK, AC, EA; they have no
// UN M.49 number), codes since replaced (DD, ZR, TP: they canonicalise to
// another), and the few withdrawn or user-assigned ones CLDR still keeps.
func validCountry(s string) bool {
	if len(s) != 2 || strings.ToUpper(s) != s || notAssigned[s] {
		return false
	}
	r, err := language.ParseRegion(s)
	return err == nil && r.IsCountry() && r.String() == s && r.Canonicalize() == r && r.M49() != 0 && r.ISO3() != "ZZZ"
}

// notAssigned are the regions CLDR keeps as countries, with a UN M.49 number
// of their own, that ISO 3166-1 no longer assigns (Soviet Union, Yugoslavia,
// Netherlands Antilles, Serbia and Montenegro, the Neutral Zone) or never
// did (Kosovo's user-assigned XK).
var notAssigned = map[string]bool{"SU": true, "YU": true, "AN": true, "CS": true, "NT": true, "XK": true}
