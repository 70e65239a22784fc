// Package core is what every use case of the waitlist builds on.
//
// One configuration (Config: the store, the clock, the links' base and
// the seams to other systems), shared by pointer, because cmd/ and tests
// set its fields after waitlist.New.
//
// One request, one transaction (request.go): Service.Tx runs a use case in
// a store transaction of its own, or, when the context carries a caller's
// Request (Begin), in a savepoint of the request's transaction, so that
// everything one HTTP request does commits with its Idempotency-Key
// record or not at all. Service.Read reads a snapshot, or the request's
// own writes once it has made some.
//
// A transaction's Work: the business it reads once, the audit rows (each
// with its webhook event, webhook.go), the outbox messages and the timers
// it writes, and what waits for its commit (waking the sweeper and relay,
// the checkouts of paid holds, paid.go).
//
// The engine's decisions applied (apply.go): DecideSlot asks the engine
// what to do with a slot's free seats and carries it out — offers made
// (with their messages, their follow-up and expiry timers), a hand-back
// to staff — and MatchEntry matches a waiting entry against open slots.
// EndOffer ends an offer and rolls the slot on. Every use case that frees
// seats or puts someone back in line calls these, so they live here and
// not with any one of them.
//
// And the links messages carry (links.go), with the sealing that lets an
// unsubscribe or cancel link name an address or a booking without a row
// of its own.
//
// It is internal: the use-case packages beside it (offers, events, ...)
// and waitlist, which composes them, are its only callers. It imports
// none of them.
package core
