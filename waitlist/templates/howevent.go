package templates

import (
	"fmt"

	"github.com/nextup-dev/nextup"
)

// HowTheEventWaitlistWorks is an event's waitlist in plain words, for its
// guests (the public page, the status page): who gets a freed seat, how
// long an offer is held, what a lapse or a decline does, and the promotion
// cutoff; the rules' version and policy id only in the last line, the
// details.
func HowTheEventWaitlistWorks(r nextup.Rules, ev *nextup.EventSettings) []string {
	if ev == nil {
		ev = &nextup.EventSettings{}
	}
	window := ev.ClaimWindow
	if window <= 0 {
		window = nextup.DefaultEventClaimWindow
	}
	q := nextup.DefaultEventRequeue()
	if ev.Requeue != nil {
		q = *ev.Requeue
	}
	lines := []string{
		"When a seat frees up, it goes to the first person on the waitlist whose party fits the seats freed, in the order people joined.",
		fmt.Sprintf("It is held for %s. Claim it with the link we send you, or from your status page.", words(window)),
	}
	after := "If you decline it or do not answer in time, it goes to the next person"
	switch {
	case q.Policy == nextup.RequeueBack && q.DropAfter == 1,
		q.Policy == nextup.RequeueDrop && q.DropAfter == 1,
		q.Policy == nextup.RequeueKeep && q.DropAfter == 1:
		after += ", and you leave the waitlist."
	case q.Policy == nextup.RequeueBack && q.DropAfter > 1:
		after += fmt.Sprintf(" and you go to the back of the waitlist; after %d missed offers you leave it.", q.DropAfter)
	case q.Policy == nextup.RequeueBack:
		after += " and you go to the back of the waitlist."
	case q.DropAfter > 1:
		after += fmt.Sprintf(" and you keep your place; after %d missed offers you leave the waitlist.", q.DropAfter)
	default:
		after += " and you keep your place."
	}
	lines = append(lines, after)
	if ev.PromotionCutoff > 0 {
		lines = append(lines, fmt.Sprintf("Seats freed in the last %s before the start are not offered to the waitlist.", words(ev.PromotionCutoff)))
	}
	return append(lines, fmt.Sprintf("These are the business's rules, version %d; every offer records the version it was made under.", r.Version))
}
