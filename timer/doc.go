// Package timer runs nextup's durable timers.
//
// Every deadline (an offer's claim window, the end of quiet hours, daily
// housekeeping, ...) is a row in the store with a due time. A Sweeper keeps
// no state of its own: it asks the store for due rows, claims them in batches
// under a lease, and hands each to a Handler (package waitlist), which does
// the timer's effect and marks the timer done in one transaction of its own,
// only while the lease still holds. A timer therefore fires at least once:
// when the process dies mid-handler, or the handler fails, the lease lapses
// and a later sweep (in this process or another) claims it again. Handlers
// are conditional writes, so firing twice does no harm.
//
// Run polls every Poll (500ms by default), so a timer fires within a second
// of its due time while the process is up; Wake lets a use case that has just
// scheduled an earlier timer cut the wait short. Which timers are due is
// always decided by the injected nextup.Clock, never by the wall clock.
//
// Advance is deterministic time travel for tests, the simulation and
// `--clock=fake`: it steps a nextup.FakeClock from one due time to the next,
// so every timer fires with the clock reading its own due time, in due order.
package timer
