// Package sqlstore is what the SQLite and PostgreSQL stores have in
// common: the column lists and the functions that read a row of them into
// a domain type (and turn one into the arguments of its INSERT), the
// storage conventions for times and flags, the text of the queries that
// are the same in both dialects, and the loading of numbered migration
// files.
//
// Queries are written with SQLite's placeholders, ? and ?N; the PostgreSQL
// store rebinds them to $N. Where the dialects really differ (an IN list
// against an array, rowid against rid, index hints, FOR UPDATE, SKIP
// LOCKED batches, ON CONFLICT details) each store keeps its own text, next
// to the method that runs it; this package has no dialect switch. Running
// statements, and mapping the drivers' errors to the domain's kinds, stay
// in each store too.
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
