// Package sqlstore is the one implementation of nextup.Tx that the SQLite
// and PostgreSQL stores share, and everything it is made of: the column
// lists and the functions that read a row of them into a domain type (and
// turn one into the arguments of its INSERT), the storage conventions for
// times and flags, the query text, and the loading of numbered migration
// files.
//
// # The seam
//
// A store opens a transaction its own way and hands fn a *Tx made by
// NewTx from two things:
//
//   - a Runner, which runs one statement on the driver's transaction
//     (Exec, QueryRow, Query). Queries are written with SQLite's
//     placeholders, ? and ?N; the PostgreSQL runner rebinds them to $N,
//     and is also where each of its writes gets a savepoint of its own.
//   - a Dialect, one package-level value per store, for the few fragments
//     that differ inside otherwise shared statements: the insertion-order
//     column (rowid, rid), the row lock of SlotGet and EntryGet inside
//     InTx (FOR UPDATE, or nothing under SQLite's single writer), the LIMIT
//     argument for "no limit", an IN list against an array, index hints
//     (SQLite's INDEXED BY and unary +), the mapping of the driver's
//     constraint errors to nextup.ErrConflict and nextup.ErrNotFound, and
//     the three batch claims whose SQL differs as a whole (SKIP LOCKED on
//     PostgreSQL).
//
// Tx implements every method of nextup.Tx once, on those two; no store
// overrides one. What a store keeps is what is not a statement of a
// transaction: connections, the transaction's begin, commit, retries and
// NOTIFY (Tx.Wake says when a transaction wrote work for another
// instance), migrations and their embedded files, and copying. The
// invariant is enforced here for both: the conditional UPDATE of
// SlotSeats, and work finished only under the lease still held (TimerDone,
// MessageFinish).
//
// The runners pass statements to the drivers as they come, so each driver
// prepares (and pgx caches) them as it does by default; this package adds
// no statement cache of its own.
//
// # Storage conventions
//
// Times are integer microseconds since the Unix epoch, UTC: the precision
// PostgreSQL keeps, sortable, wide enough for the zero time.Time (year 1),
// and compared exactly (leases are matched by equality). Anything finer
// than a microsecond is truncated; times come back in UTC. A zero
// Entry.Latest is stored as NoUpperBound, so that "no upper bound" needs no
// NULL handling in the candidate filter. Flags are integers 0 and 1, JSON
// values are text, optional strings are empty rather than NULL, and
// optional times and JSON values are NULL.
//
// A nullable column is scanned into a *int64 or *string (a destination of
// type **int64 or **string): database/sql and pgx both set it to nil for
// NULL and to a new value otherwise.
package sqlstore
