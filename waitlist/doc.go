// Package waitlist holds nextup's use cases: join, release, resize, claim,
// decline, expire, withdraw, leave, cancel, no-show and the timer handlers.
// Each opens one store transaction, asks the engine for a decision and
// applies it there — offers, seat holds, audit rows, outbox messages and
// timers — so that everything a decision changes commits together or not at
// all. It is the one place the web layer, the timer sweeper and the CLI call.
//
// The use cases live in packages named after what they are about, and
// Service composes them (their methods are its methods):
//
//	business   a business as a tenant: create, API key, profile, rules, housekeeping
//	staff      staff accounts and sessions
//	slots      slots and their bookings: create, release, resize, hand-backs, reminders scheduled
//	entries    the waitlist itself: join, change, leave, an entry with its place
//	offers     an offer's life: claim (and the booking-system saga), decline, withdraw, expire
//	events     events (RSVP): registrations, promotion, check-in, the cancel link, figures
//	payments   paid events' payments: checkout link, completed payments, late refunds
//	messages   the outbox and answers to it: follow-ups, reminders, fallback, texts, unsubscribe
//	intake     requests from elsewhere: proposals, forwarded mail, the sheet, import, join form
//	templates  the words of every message (below all of them)
//	internal/core  what they all build on: the configuration, one request one transaction,
//	           a transaction's Work (audit, outbox, timers), the engine's decisions applied
//
// They build on core (and templates for their words), and use each other
// only downwards: offers and events use slots; events, intake and
// messages use entries; payments and messages use offers. This package adds the timer handler dispatch
// (HandleTimer, which needs them all) and keeps the names callers know
// (names.go) in one place.
package waitlist
