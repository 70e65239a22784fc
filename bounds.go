package nextup

import (
	"fmt"
	"strings"
	"time"
)

// ParseBound reads an `earliest` or `latest` bound of a waitlist entry: an
// RFC 3339 time with an offset, or a date (2026-12-01) meaning that whole
// day in the business timezone — its first instant for earliest, its last
// for latest. An empty string is an open bound (the zero time).
func ParseBound(s string, loc *time.Location, latest bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if loc == nil {
		loc = time.UTC
	}
	if len(s) == len("2006-01-02") {
		d, err := time.ParseInLocation("2006-01-02", s, loc)
		if err != nil {
			return time.Time{}, fmt.Errorf("date %q: want YYYY-MM-DD or an RFC 3339 time with an offset", s)
		}
		if d.Year() < 2000 || d.Year() > 9998 {
			return time.Time{}, fmt.Errorf("date %q: year out of range", s)
		}
		if latest {
			// The last instant of that local day, DST-correct.
			next := time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc)
			return next.Add(-time.Microsecond).UTC(), nil
		}
		return d.UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: want an RFC 3339 time with an offset, or a date", s)
	}
	if t.Year() < 2000 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("time %q: year out of range", s)
	}
	return t.UTC(), nil
}
