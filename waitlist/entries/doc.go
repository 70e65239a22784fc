// Package entries holds the use cases of a business's waitlist itself: a
// person joining it (matched against open slots at once, so an open slot
// never waits for the next cancellation, and told they are on the list
// with their status link), staff changing an entry's criteria (matched
// again), leaving (a live offer is cancelled and its slot rolls on), and
// reading an entry with its place in line, by staff or by the person's
// own status link.
//
// Joining is checked the same way wherever a person comes from: the API,
// the join form, an approved proposal, an imported row (ValidateJoin,
// JoinIn). An event's registrations are entries too (package events).
package entries
