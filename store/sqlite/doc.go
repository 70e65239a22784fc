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
// The nextup.Tx methods are store/internal/sqlstore's Tx, written once for
// both stores. This package keeps what is SQLite's own and why:
//
//   - the connections and transactions above (Open, InTx, Read): the
//     single writer and BEGIN IMMEDIATE are how SQLite serialises writes;
//   - a runner of statements on database/sql, which needs no rebinding:
//     the shared queries are written with SQLite's placeholders;
//   - its dialect: rowid for insertion order, no row locks (the writer is
//     alone), LIMIT -1 for no limit, IN lists, index hints (INDEXED BY and
//     unary +, because without statistics the planner may pick a worse
//     index for a query that walks an index in order), the batch claims
//     of timers, messages and expiring entries as plain UPDATE ... WHERE
//     id IN (subquery) (the single writer is what SKIP LOCKED is on
//     PostgreSQL), and the mapping of its constraint errors;
//   - migrations, whose SQL is SQLite's (STRICT tables, WITHOUT ROWID,
//     AUTOINCREMENT), and the export of a business for `nextup copy`.
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
// # Backups and storage failures
//
// Backup, Restore and Verify (backup.go) are `nextup backup` and `nextup
// restore`: a consistent copy of a live file through SQLite's online
// backup API in one read transaction, checked against that same snapshot
// table by table, and a restore that checks a backup before it renames it
// into place. A full disk (SQLITE_FULL) and a file that cannot be written
// (SQLITE_READONLY) come back from InTx, and from the statement that met
// them, as the domain's storage_full and storage_read_only errors, and
// Healthy reports them until a probe shows they are over (storage.go). A
// file on a read-only disk is opened read-only: reads are served.
// docs/backup.md is the operator's page, with Litestream beside it.
//
// # Schema
//
// The schema is a series of numbered SQL files embedded from migrations/,
// applied by Open (unless SkipMigrate) and by `nextup migrate` through
// (*DB).Migrate, each in its own transaction and recorded in
// schema_migrations.
package sqlite
