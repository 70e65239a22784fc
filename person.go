package nextup

import (
	"strings"
)

// Contact names a person the way they asked to be found (a data export
// or an erasure): by an email address, by a phone number, or both. Email
// is lower-cased and trimmed (as Entry.ContactKey normalises it) and
// Phone is in E.164; ContactOf makes one from what a person typed.
type Contact struct {
	Email string
	Phone string
}

// ContactOf normalises an email address and a phone number (already in
// E.164, or as a person wrote it: only its '+' and digits count) into a
// Contact.
func ContactOf(email, phone string) Contact {
	return Contact{Email: strings.ToLower(strings.TrimSpace(email)), Phone: PhoneDigits(phone)}
}

// PhoneDigits is a phone number reduced to its '+' and digits, the form
// in which stores compare numbers (Entry.ContactKey's): "+44 7700 900123"
// and "+447700900123" are the same number.
func PhoneDigits(phone string) string {
	return strings.Map(func(r rune) rune {
		if r == '+' || (r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, phone)
}

// Empty reports whether c names nobody.
func (c Contact) Empty() bool { return c.Email == "" && c.Phone == "" }

// Matches reports whether an entry is this person's: its email is c's
// (compared lower-cased), or its phone number is c's (compared as
// PhoneDigits). Every store's EntryListByContact keeps exactly the
// entries Matches keeps.
func (c Contact) Matches(e Entry) bool {
	if c.Email != "" && strings.ToLower(strings.TrimSpace(e.Email)) == c.Email {
		return true
	}
	return c.Phone != "" && e.Phone != "" && PhoneDigits(e.Phone) == c.Phone
}

// Erasure is what erasing a person's personal data rewrites, row by row
// (Tx.PersonErase). The use case (package waitlist/people) finds the
// rows and works out their new text; the store writes it. Rows keep their
// ids, kinds, states, times and counts: the audit trail keeps its shape
// and the figures their numbers.
//
// Entries and offers named here must have ended (no waiting or offered
// entry, no live offer): a person is withdrawn through the use cases
// before their data goes.
type Erasure struct {
	BusinessID string
	// Pseudonym stands in for the person's name and addresses
	// ("erased-<short hash>").
	Pseudonym string
	// Entries get Name = Pseudonym and lose Email, Phone, Channel and
	// their status link (StatusHash "").
	Entries []string
	// Offers lose their ContactKey: it becomes that of an erased entry
	// (Entry{}.ContactKey()).
	Offers []string
	// Bookings get Name = Pseudonym.
	Bookings []string
	// Guests (by EntryID and Index) get the Name given ("" unnamed).
	Guests []Guest
	// Messages get To = Pseudonym and lose Subject, Body, HTML, Calendar,
	// ClaimURL, UnsubscribeURL and LastError; one still queued or failed
	// is cancelled (it would go to nobody).
	Messages []string
	// Audit rows (by ID) get the Detail given; everything else stays.
	Audit []AuditEvent
	// Proposals (by ID) get the Fields and Excerpt given.
	Proposals []Proposal
	// HandBacks (by ID) get the Note given.
	HandBacks []HandBack
}

// Rows counts the rows e rewrites: what a transaction of a Bounded store
// must have room for.
func (e Erasure) Rows() int {
	return len(e.Entries) + len(e.Offers) + len(e.Bookings) + len(e.Guests) + len(e.Messages) +
		len(e.Audit) + len(e.Proposals) + len(e.HandBacks)
}
