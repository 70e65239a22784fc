package nextup

import "time"

// Guest is one guest an event registration brings: a child row of the
// registration (its entry, whose PartySize is 1 + its guests). The guest
// is named by its registration and its place among the registration's
// guests (Index, from 1): that pair is what the organiser's check-in
// button and the API's route name, so a guest needs no id of its own.
//
// A name is optional (an empty Name is an unnamed guest), and each guest
// has a check-in of their own: a party rarely arrives all at once. The
// registrant's own check-in stays on their booking (Booking.CheckedInAt).
//
// Rows are kept when the registration is cancelled, like the entry and
// the booking they belong to: the guest list of a past event is history.
type Guest struct {
	BusinessID  string
	SlotID      string // the event
	EntryID     string // the registration
	Index       int    // 1-based place among the registration's guests
	Name        string // "" for an unnamed guest
	CheckedInAt *time.Time
}

// MaxGuestNameLen is the longest guest name kept, in characters: a name
// for a door list, not a note.
const MaxGuestNameLen = 100
