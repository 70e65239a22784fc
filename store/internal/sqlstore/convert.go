package sqlstore

import (
	"math"
	"strings"
	"time"
)

// Scanner reads one row into dest. *sql.Row, *sql.Rows, pgx.Row and
// pgx.Rows all are one, so a single Scan function serves both stores.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows is a result of many rows as Collect reads it: *sql.Rows is one,
// and so is a pgx.Rows behind a Close that returns an error.
type Rows interface {
	Scanner
	Next() bool
	Err() error
	Close() error
}

// Collect reads every row of rows with scan and then reports the error
// that ended the iteration, if any. On a scan error it returns no rows.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// TS returns t as stored: microseconds since the Unix epoch.
func TS(t time.Time) int64 { return t.UnixMicro() }

// FromTS returns the time stored as us, in UTC.
func FromTS(us int64) time.Time { return time.UnixMicro(us).UTC() }

// TSPtr returns an optional time as stored: NULL (a nil any) when t is nil.
func TSPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// FromNullTS returns the optional time scanned into us: nil for NULL.
func FromNullTS(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := FromTS(*us)
	return &t
}

// NoUpperBound is how a zero Entry.Latest is stored: after every slot
// start, so the candidate filter needs no NULL handling.
const NoUpperBound = math.MaxInt64

// LatestTS returns an entry's Latest as stored: NoUpperBound when it is
// zero.
func LatestTS(t time.Time) int64 {
	if t.IsZero() {
		return NoUpperBound
	}
	return TS(t)
}

// FromLatestTS returns the Latest stored as us: the zero time for
// NoUpperBound.
func FromLatestTS(us int64) time.Time {
	if us == NoUpperBound {
		return time.Time{}
	}
	return FromTS(us)
}

// BoolInt returns a flag as stored: 1 for true, 0 for false.
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Placeholders returns "?, ?, ?" for n values.
func Placeholders(n int) string {
	if n == 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// Exists is the query that tells whether table has a row with this id.
func Exists(table string) string {
	return "SELECT 1 FROM " + table + " WHERE id = ?"
}
