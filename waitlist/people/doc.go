// Package people is a person's data on request: everything nextup holds
// about someone in one business, as a document (Export); the erasure of
// their personal data (Erase); and the retention rule that erases people
// by itself some months after their last entry ended (Retention).
//
// # Who is "the person"
//
// A person asks by email address or phone number. An email is compared
// lower-cased, as Entry.ContactKey normalises it; a phone number is read
// as the business reads numbers (E.164, or national in the business's
// country) and compared by its '+' and digits. Their entries are those
// with that email or that number (nextup.Contact.Matches); their offers,
// bookings, guests and audit rows are found through the entries; their
// messages, proposals from the inbox lane and opt-outs by their
// addresses. Nothing of another business is ever read: every lookup
// names the business.
//
// # What erasing keeps
//
// The rows stay, with their ids, kinds, states, times and counts: the
// audit trail keeps its shape and the summary and analytics their
// figures. What goes is what names the person: names (a pseudonym,
// "erased-" and a short hash, stands in for them, the same in every row
// of one erasure so that the trail still reads as one person's), email
// addresses and phone numbers, the text of messages sent to them (their
// bodies name them and carry their links), the status link, the words
// of a forwarded request, their guests' names, and any audit detail or
// hand-back note that names them.
//
// A person still on a waitlist is withdrawn first, the way leaving is
// (a live offer is cancelled and its seats roll on to the next person),
// and a booking of theirs for a slot not yet started is cancelled (its
// seats are freed and offered on): the owner should not keep a place for
// someone who asked to be forgotten, nor hold a booking under a name
// nobody can call. Bookings in the past stay booked, as history.
//
// Opt-outs (suppressions) are kept: the record that an address asked not
// to be messaged is what keeps it from being messaged again, and it is
// the one thing the law lets a business keep for that. The export shows
// them. Also kept: the rows of a mirrored sheet (the owner's sheet is the
// source of those; SheetVersionTrim drops old contents) and messages to
// the owner that quote the person (a hand-back's mail).
//
// # Splitting
//
// On PostgreSQL and SQLite an erasure is one transaction. A DynamoDB
// transaction takes at most 100 items, so on a bounded store the rows
// go in parts, each its own transaction, dependent rows first and the
// entries last (the rows are found through the entries): an erasure
// stopped halfway is finished by the next, and erasing again finds
// nothing left and changes nothing.
package people
