// Package events holds the use cases of events (RSVP): an event is a
// shared slot of kind event with its own waitlist, and a registration is
// an entry for it whose party is the person and their guests.
//
// Setting an event up and changing it (its time never changes once people
// are told it), registering (confirmed at once while seats are free and
// nobody waiting could take them first, else waitlisted with a place, up
// to the waitlist's limit; a paid event holds the seats to be paid for
// instead), cancelling (until the cancellation cutoff: the seats are freed
// and the engine promotes the next registrants whose party fits), the
// organiser's override that promotes someone by hand, check-in and
// no-shows, the self-service cancel link every confirmation carries
// (cancel.go), and the figures organisers ask for (stats.go). The rules,
// in the order they are checked, open events.go.
package events
