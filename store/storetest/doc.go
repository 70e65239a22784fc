// Package storetest is the conformance suite every nextup.Store backend
// runs: written once against the nextup.Store and nextup.Tx contract (see
// store.go in the root package) and nothing else — no SQL, no file paths —
// so that SQLite, PostgreSQL and any later backend are held to the same
// behaviour. A backend's gaps are declared in its harness, not hidden.
//
// # Running it
//
// A backend calls it from one test of its own package:
//
//	func TestConformance(t *testing.T) {
//		storetest.RunHarness(t, storetest.Harness{
//			Open: func(t *testing.T) nextup.Store {
//				return openAt(t, filepath.Join(t.TempDir(), "nextup.db"))
//			},
//			Reopen: func(t *testing.T, s nextup.Store) nextup.Store {
//				return openAt(t, s.(*sqlite.DB).Path())
//			},
//		})
//	}
//
// where openAt opens (and migrates) a store and registers its Close with
// t.Cleanup. Run(t, open) is the short form for a backend that cannot
// reopen a database; the reopen subtest then skips, saying why.
//
// Open must hand every call a new, empty database of its own: every
// subtest calls t.Parallel and opens its own store, and several Tx
// methods (TimerClaimDue, MessageClaimDue, TimerNextDue,
// IdempotencyPurge) look across businesses, so stores must not share
// rows. For PostgreSQL that means a fresh schema or database per Open.
// Reopen is handed a store the suite has already closed and opens the
// same database again; the cleanup Open registered must therefore
// tolerate closing a closed store. A subtest the backend does not pass
// yet is declared in Harness.Gaps ("Store/ReadSnapshot": "why") and skips
// with that reason.
//
// # What it checks
//
// Every Tx method, in groups named after the part of the contract:
//
//   - Store: Ping; Read sees committed data, never uncommitted data, is one
//     snapshot even when a write commits while it runs, and neither waits
//     for nor holds up the writer; InTx rolls back everything when fn
//     returns an error or panics (and the store stays usable); a failed
//     conditional write or lookup leaves the transaction usable (on
//     PostgreSQL a failed statement aborts the transaction, so conditions
//     belong in WHERE clauses); data survives Close and Reopen.
//   - Round trips of every field of every type, with times carrying
//     microseconds and given in other locations (compared with Equal),
//     pointer times, Rules with and without quiet hours and
//     MaxOffersPerSlot, Availability, audit Detail maps.
//   - ErrNotFound for missing ids, ErrConflict for failed conditional
//     writes, and that a failed conditional write changes nothing.
//   - The seat invariant: SlotSeats keeps 0 <= booked, 0 <= held and
//     booked+held <= capacity, SlotResize refuses to go below booked+held,
//     SlotCreate refuses a slot over capacity.
//   - EntryCandidates, EntryPosition and EntryList against brute force
//     over 200 random entries, including paging with the After cursor;
//     the random seed is logged on failure and NEXTUP_STORETEST_SEED
//     replays it.
//   - Staff accounts: emails stored and compared lower-cased, unique
//     across businesses; sign-in failures and locks kept and cleared by a
//     new password; sessions found expired or not, ended one by one, by
//     staff member and by purge; a password reset used once, an expired
//     one refused (ErrConflict) and deleted with the transaction.
//   - Events and payments: an event's settings (cutoffs, limits,
//     reminders, price) kept with its slot through every slot write and
//     replaced by SlotEventSet, which a plain slot refuses (ErrNotFound);
//     a person's oldest entry on one waitlist in given states; a booked
//     booking's check-in; checkout sessions by session and by offer,
//     newest first, one per provider session (ErrConflict), moved between
//     states conditionally, keeping the payment intent once recorded.
//   - Monthly summaries: one per business and month (ErrConflict for a
//     second, which changes nothing), their figures kept byte for byte,
//     listed newest month first.
//   - The claim as one conditional write, claims racing each other and the
//     expiry, concurrent releases and holds of one slot, row locks taken
//     by SlotGet and EntryGet inside InTx, timer and message leases under
//     concurrent workers ("timers due twice").
//
// A zero Limit in a list filter (SlotFilter, EntryFilter, AuditFilter,
// MessageFilter, TimerFilter) means no limit; callers rely on it.
//
// Concurrency subtests expect every racing transaction to either succeed
// or fail with ErrConflict: a "database is locked" or serialization error
// that the caller would have to retry is a failure.
package storetest
