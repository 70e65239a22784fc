// Package sqlite is the embedded nextup.Store: one SQLite file, no server,
// the default for a single binary.
//
// # Connections
//
// Open keeps two database/sql pools on the file. The writer pool has one
// connection and begins every transaction with BEGIN IMMEDIATE, so InTx
// transactions of this process run one at a time and take the file's write
// lock up front (another process on the same file waits up to the busy
// timeout). The read pool has several query_only connections; in WAL mode
// a Read transaction sees one consistent snapshot and neither waits for nor
// delays the writer. Nothing that changes a row can run inside Read.
//
// Because all writes are serialised, the row locks that Tx promises for
// SlotGet and EntryGet inside InTx are implied: no other write can
// interleave. The invariant booked+held <= capacity is enforced twice: by
// the conditional UPDATE in SlotSeats and by a CHECK constraint on slots.
//
// # SQL
//
// The column lists, row mapping and storage conventions, and the query
// text that is the same on PostgreSQL, are shared with store/postgres
// through store/internal/sqlstore. This package runs them and holds what
// is SQLite's own: index hints (INDEXED BY, unary +), IN lists, rowid for
// insertion order, the single-writer batch claims, INSERT OR REPLACE, and
// the mapping of its errors.
//
// # Storage conventions
//
// Times are INTEGER microseconds since the Unix epoch, UTC (the precision
// PostgreSQL keeps; finer parts are truncated) and come back in UTC. A zero
// Entry.Latest is stored as the largest int64 so that "no upper bound"
// needs no NULL handling in the candidate filter. Rules, availability, audit
// details and response headers are JSON text. Entry.Seq is the entries
// rowid (AUTOINCREMENT: monotonic, never reused).
//
// # Schema
//
// The schema is a series of numbered SQL files embedded from migrations/,
// applied by Open (unless SkipMigrate) and by `nextup migrate` through
// (*DB).Migrate, each in its own transaction and recorded in
// schema_migrations.
package sqlite
