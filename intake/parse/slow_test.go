package parse_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/intake/parse"
)

// TestProposeWorstCase keeps Propose linear on the largest texts it reads,
// every word a service, a staff name, a date or a time. The bound is loose
// on purpose: it is there to catch quadratic work, not to time a busy
// machine.
func TestProposeWorstCase(t *testing.T) {
	b := salon(t)
	sent := time.Date(2026, 3, 5, 10, 0, 0, 0, b.Location)
	for _, unit := range []string{"cut ", "Anna ", "tuesday or ", "the 3rd to the 5th ", "after 5 or ", "between 11 and 1 ", "07911 123456 ", "me and my sister ", "a ",
		"a week on tuesday, monday 4 to ", "between now and ", "du lundi 4 au ", "wir sind zu "} {
		text := strings.Repeat(unit, parse.MaxText/len(unit)+1)
		start := time.Now()
		parse.Propose(parse.Input{Text: text, Signature: text, Subject: text, FromName: text, FromAddress: text, Sent: sent}, b)
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%q repeated: %s", unit, d)
		}
	}
}
