// Package postgres is the nextup.Store on PostgreSQL, for running several
// nextup instances against one database. It passes the same conformance
// suite (store/storetest) as the SQLite store with the same nextup.Tx
// methods: store/internal/sqlstore's Tx, written once for both, with the
// same SQL shapes, error kinds, orders and stamps. This package keeps what
// is PostgreSQL's own and why:
//
//   - the pool, transactions, retries and LISTEN/NOTIFY (below): several
//     instances share the database, so locks, aborted transactions and
//     wake-ups are this store's concern alone;
//   - a runner of statements on pgx that rebinds the shared ? and ?N
//     placeholders to $N and gives each write its own savepoint (below);
//   - its dialect: rid for insertion order, FOR UPDATE on SlotGet and
//     EntryGet inside InTx, LIMIT NULL for no limit, arrays (= ANY) for IN
//     lists, no index hints (the planner has statistics), the batch claims
//     of timers, messages and expiring entries chosen with FOR UPDATE SKIP
//     LOCKED, and the mapping of its SQLSTATEs;
//   - migrations, whose SQL is PostgreSQL's (identity columns, bigint,
//     bytea), applied under an advisory lock, and Import for `nextup copy`.
//
// # Transactions and locks
//
// Open returns a store on a pgx pool; InTx runs fn in a READ COMMITTED
// transaction and Read in a REPEATABLE READ, READ ONLY one (one snapshot).
// Per-slot decisions are serialised by row locks, not by the isolation
// level: inside InTx, SlotGet and EntryGet read with SELECT ... FOR UPDATE,
// so a second transaction deciding about the same slot or entry waits for
// the first to end. InTx runs fn again, on a fresh connection and a bounded
// number of times, when PostgreSQL aborts the transaction (a serialization
// failure or a deadlock, 40001 and 40P01; the session shut down) or the
// connection breaks before the commit is sent; never when it breaks during
// the commit (ErrCommitUnknown). Open's options cap the pool (MaxConns) and
// bound statements and idle transactions on the server (StatementTimeout).
//
// The seat invariant is a CHECK constraint on slots plus the conditional
// UPDATEs of SlotSeats and SlotResize; the claim is one conditional
// UPDATE ... RETURNING; at most one live offer per entry is a partial
// unique index. Due timers and messages are claimed in batches chosen with
// FOR UPDATE SKIP LOCKED, leased until now+lease, and finished only under
// the lease still held (WHERE claimed_until = the lease). A transaction
// that scheduled a timer or queued a message notifies WakeChannel as it
// commits, and Listen turns those notifications into wake-ups of another
// instance's sweeper and relay.
//
// A failed statement aborts a PostgreSQL transaction, but the contract
// says a failed conditional write leaves the transaction usable. So inside
// InTx every statement that writes runs in a SAVEPOINT of its own, rolled
// back to when the statement fails; SAVEPOINT, statement and RELEASE are
// pipelined in one round trip. Errors map to the domain's kinds: no
// row is ErrNotFound, a unique or check violation (23505, 23514) is
// ErrConflict, a foreign-key violation (23503) is ErrNotFound.
//
// # Storage conventions
//
// As in the SQLite store (store/internal/sqlstore writes them down once):
// times are bigint microseconds since the Unix epoch, UTC (PostgreSQL's
// precision; leases are compared by equality), a zero Entry.Latest is the
// largest int64, optional strings are empty, not NULL, optional times NULL,
// and JSON values are text. Entry.Seq, audit ids and timer ids come from
// identity columns; offers, bookings, hand-backs and messages carry an
// identity column rid that breaks ties in listings.
//
// # Schema
//
// The schema is a series of numbered SQL files embedded from migrations/,
// applied by (*DB).Migrate, each in its own transaction and recorded in
// schema_migrations, in the first schema of the connection's search_path.
// Migrate holds a session advisory lock (one per schema) while it works, so
// instances starting at once migrate one after the other.
package postgres
