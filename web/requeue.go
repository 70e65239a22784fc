package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// requeueOption is one choice of the re-queue rule on the dashboard, in
// the organiser's words ("Move them to the back of the list"); Value is
// "policy:drop_after".
type requeueOption struct {
	Value, Label string
	Selected     bool
}

// requeueOptions are the re-queue rules a form offers, current selected.
func requeueOptions(current nextup.Requeue) []requeueOption {
	var out []requeueOption
	for _, q := range templates.RequeueChoices(current) {
		out = append(out, requeueOption{Value: fmt.Sprintf("%s:%d", q.Policy, q.DropAfter), Label: templates.RequeueChoice(q),
			Selected: templates.RequeueChoice(q) == templates.RequeueChoice(current)})
	}
	return out
}

// requeuePatch is the rules' "requeue" of a form's choice ("policy:n"), or
// false for none; a malformed one goes through as it is, for the rules'
// validation to refuse in words.
func requeuePatch(v string) (map[string]any, bool) {
	if v == "" {
		return nil, false
	}
	policy, n, _ := strings.Cut(v, ":")
	dropAfter, err := strconv.Atoi(n)
	if err != nil {
		return map[string]any{"policy": policy, "drop_after": n}, true
	}
	return map[string]any{"policy": policy, "drop_after": dropAfter}, true
}

// standing says where a person stands on the waitlist after their offer
// o ended unclaimed, from their entry e as it is now: in their place, at
// the back of the line (the re-queue rule moved them: their place in line
// is later than the offer), or off the list. "" when they are booked.
func standing(e nextup.Entry, o nextup.Offer) string {
	switch {
	case e.State == nextup.EntryLeft || e.State == nextup.EntryExpired:
		return "You are no longer on the waitlist."
	case e.State == nextup.EntryBooked:
		return ""
	case e.JoinedAt.After(o.CreatedAt):
		return "You are now at the back of the waitlist."
	}
	return "You keep your place on the waitlist."
}
