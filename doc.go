// Package nextup is the domain of the nextup waitlist manager: businesses and
// their rules, slots with seats, waitlist entries, offers, bookings,
// hand-backs, the audit log, outbox messages and durable timers, plus the
// seams the rest of the system plugs into (Store, Clock, Channel).
//
// The package imports no database, HTTP or SDK code. The pure decision engine
// lives in package engine; the use cases that apply its decisions inside one
// store transaction live in package waitlist; storage adapters live under
// store/.
//
// The one invariant, enforced by every Store: for every slot at every
// instant, seats booked + seats held by live offers <= capacity.
package nextup
