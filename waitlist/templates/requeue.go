package templates

import (
	"fmt"

	"github.com/nextup-dev/nextup"
)

// RequeueChoice is a re-queue rule in an organiser's words, as the
// dashboard offers it: what happens to someone who misses or declines an
// offer.
func RequeueChoice(q nextup.Requeue) string {
	switch {
	case q.DropAfter == 1:
		return "Remove them from the list"
	case q.Policy == nextup.RequeueBack && q.DropAfter > 1:
		return fmt.Sprintf("Move them to the back of the list; remove them after %d missed offers", q.DropAfter)
	case q.Policy == nextup.RequeueBack:
		return "Move them to the back of the list"
	case q.DropAfter > 1:
		return fmt.Sprintf("Keep their place; remove them after %d missed offers", q.DropAfter)
	}
	return "Keep their place"
}

// RequeueChoices are the rules the dashboard offers to choose from, in
// the order shown, with current among them.
func RequeueChoices(current nextup.Requeue) []nextup.Requeue {
	out := []nextup.Requeue{
		{Policy: nextup.RequeueKeep},
		{Policy: nextup.RequeueBack},
		{Policy: nextup.RequeueBack, DropAfter: 2},
		{Policy: nextup.RequeueDrop, DropAfter: 2},
		{Policy: nextup.RequeueDrop, DropAfter: 1},
	}
	for _, q := range out {
		if RequeueChoice(q) == RequeueChoice(current) {
			return out
		}
	}
	return append(out, current)
}

// requeueSentence finishes "If you decline an offer or do not answer in
// time, it goes to the next person": what then happens to you.
func requeueSentence(q nextup.Requeue) string {
	switch {
	case q.DropAfter == 1:
		return ", and you leave the list."
	case q.Policy == nextup.RequeueBack && q.DropAfter > 1:
		return fmt.Sprintf(", and you go to the back of the list; after %d offers you did not take, you leave it.", q.DropAfter)
	case q.Policy == nextup.RequeueBack:
		return ", and you go to the back of the list."
	case q.DropAfter > 1:
		return fmt.Sprintf(", and you keep your place; after %d offers you did not take, you leave the list.", q.DropAfter)
	}
	return ", and you keep your place."
}

// IfMissed is what an offer's message says becomes of the person's place
// should they decline it or let it run out, under the re-queue rule q of
// its slot (engine.RulesFor), lapses being how many they missed before.
func IfMissed(q nextup.Requeue, lapses int) string {
	switch {
	case q.DropAfter > 0 && lapses+1 >= q.DropAfter:
		return "If you decline it or it runs out, you leave the waitlist."
	case q.Policy == nextup.RequeueBack:
		return "If you decline it or it runs out, you go to the back of the waitlist."
	}
	return "You keep your place either way."
}
