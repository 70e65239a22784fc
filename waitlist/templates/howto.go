package templates

import (
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// HowTheOrderWorks explains a business's rules to the people on its
// waitlist and to its staff, in plain sentences, from the rules version in
// force: the same text on the status page, the join form and the
// dashboard, so what customers are told is what the engine does.
func HowTheOrderWorks(r nextup.Rules) []string {
	line := "The line is the order people joined in. People the business marks as a priority (an urgent case, say) go first, in the order they joined."
	if r.Requeue.Policy == nextup.RequeueBack {
		line += " Someone moved to the back of the line counts as joining at that moment."
	}
	lines := []string{
		"When a slot frees up, it is offered to the first person in line who fits it: the service, party size, dates, times and staff they asked for.",
		line,
		"If a slot does not fit you, you keep your place for the next one.",
		fmt.Sprintf("An offer is yours for %s. If you decline it or do not answer in time, it goes to the next person", words(r.ClaimWindow)) +
			requeueSentence(r.Requeue),
	}
	if len(r.ClaimWindowLadder) > 0 {
		var parts []string
		for _, s := range r.ClaimWindowLadder {
			parts = append(parts, fmt.Sprintf("%s for a slot starting in less than %s", words(s.Window), words(s.LeadUnder)))
		}
		lines = append(lines, "The time to answer is shorter when the slot is soon: "+strings.Join(parts, "; ")+
			fmt.Sprintf("; otherwise %s. It always ends in time to get there.", words(r.ClaimWindow)))
	}
	if r.MaxOffersPerPersonPerDay > 0 {
		lines = append(lines, fmt.Sprintf("Nobody gets more than %d offers a day, so that one person cannot hold up the line.", r.MaxOffersPerPersonPerDay))
	}
	if q := r.QuietHours; q != nil {
		line := fmt.Sprintf("No offers are sent between %s and %s; one that falls in those hours waits until the morning, with its full time to answer.", q.Start, q.End)
		if r.TimeCriticalThroughQuiet {
			line += " A slot that starts before then is offered anyway."
		}
		lines = append(lines, line)
	}
	if r.MinLead > 0 {
		lines = append(lines, fmt.Sprintf("Slots starting in less than %s are not offered: there would be no time to get there.", words(r.MinLead)))
	}
	return append(lines, fmt.Sprintf("These are the business's rules, version %d; every offer records the version it was made under.", r.Version))
}

// words says a duration as a person would: "10 minutes", "1 hour", "6 hours".
func words(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	}
	return plural(int(d/time.Second), "second")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
