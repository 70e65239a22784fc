package storecopy

import (
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// kinds reads each copied table's rows into records: the columns the SQL
// stores' scanner reads, in its order, and the scanner.
var kinds = map[string]struct {
	cols string
	scan func(sqlstore.Scanner) (any, error)
}{
	"businesses":      {sqlstore.BusinessCols, scan(sqlstore.ScanBusiness)},
	"slots":           {sqlstore.SlotCols, scan(sqlstore.ScanSlot)},
	"entries":         {sqlstore.EntryCols, scan(sqlstore.ScanEntry)},
	"offers":          {sqlstore.OfferCols, scan(sqlstore.ScanOffer)},
	"bookings":        {sqlstore.BookingCols, scan(sqlstore.ScanBooking)},
	"handbacks":       {sqlstore.HandBackCols, scan(sqlstore.ScanHandBack)},
	"audit_events":    {sqlstore.AuditCols, scan(sqlstore.ScanAudit)},
	"messages":        {sqlstore.MessageCols, scan(sqlstore.ScanMessage)},
	"timers":          {sqlstore.TimerCols, scan(sqlstore.ScanTimer)},
	"suppressions":    {sqlstore.SuppressionCols, scan(sqlstore.ScanSuppression)},
	"staff":           {sqlstore.StaffCols, scan(sqlstore.ScanStaff)},
	"sessions":        {sqlstore.SessionCols, scan(sqlstore.ScanSession)},
	"password_resets": {sqlstore.PasswordResetCols, scan(sqlstore.ScanPasswordReset)},
	"proposals":       {sqlstore.ProposalCols, scan(sqlstore.ScanProposal)},
	"sheet_versions":  {sqlstore.SheetVersionCols, scan(sqlstore.ScanSheetVersion)},
	"payments":        {sqlstore.PaymentCols, scan(sqlstore.ScanPayment)},
	"guests":          {sqlstore.GuestCols, scan(sqlstore.ScanGuest)},
	"jobs":            {sqlstore.JobCols, scan(sqlstore.ScanJob)},
	"summaries":       {sqlstore.SummaryCols, scan(sqlstore.ScanSummary)},
}

func scan[T any](f func(sqlstore.Scanner) (T, error)) func(sqlstore.Scanner) (any, error) {
	return func(r sqlstore.Scanner) (any, error) { return f(r) }
}

// Record reads one exported row of a table (Source.ExportBusiness) into
// its record, as the SQL stores read it: a nextup.Business of a row of
// businesses, a nextup.Entry of entries, and so on (RecordDestination).
// Columns are matched by name; the row's other columns are ignored.
func Record(table string, cols []string, row []any) (any, error) {
	k, ok := kinds[table]
	if !ok {
		return nil, fmt.Errorf("copy %s: no record kind for the table", table)
	}
	at := make(map[string]int, len(cols))
	for i, c := range cols {
		at[c] = i
	}
	var vals []any
	for _, c := range strings.Split(k.cols, ",") {
		c = strings.TrimSpace(c)
		i, ok := at[c]
		if !ok || i >= len(row) {
			return nil, fmt.Errorf("copy %s: the row has no column %s", table, c)
		}
		vals = append(vals, row[i])
	}
	rec, err := k.scan(rowScanner{table, strings.Split(k.cols, ","), vals})
	if err != nil {
		return nil, fmt.Errorf("copy %s: %w", table, err)
	}
	return rec, nil
}

// rowScanner is a sqlstore.Scanner of values already read (by
// database/sql into any): it converts them as database/sql's Scan would.
type rowScanner struct {
	table string
	cols  []string
	vals  []any
}

func (r rowScanner) Scan(dest ...any) error {
	if len(dest) != len(r.vals) {
		return fmt.Errorf("scan of %d values into %d destinations", len(r.vals), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[i]); err != nil {
			return fmt.Errorf("column %s: %w", strings.TrimSpace(r.cols[i]), err)
		}
	}
	return nil
}

// assign stores src, a value of a database/sql driver (nil, int64,
// float64, bool, []byte, string or time.Time), in *dest: a sql.Scanner, a
// pointer (nil for NULL), or a string, integer, float or bool kind
// (named types too, e.g. nextup.EntryState). A NULL into a value that is
// not a pointer is an error, as in database/sql.
func assign(dest, src any) error {
	if s, ok := dest.(sql.Scanner); ok {
		return s.Scan(src)
	}
	v := reflect.ValueOf(dest)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("destination %T is not a pointer", dest)
	}
	return set(v.Elem(), src)
}

var timeType = reflect.TypeFor[time.Time]()

func set(v reflect.Value, src any) error {
	if src == nil {
		if v.Kind() == reflect.Pointer {
			v.SetZero()
			return nil
		}
		return fmt.Errorf("NULL into %s", v.Type())
	}
	if v.Kind() == reflect.Pointer {
		p := reflect.New(v.Type().Elem())
		if err := set(p.Elem(), src); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	if b, ok := src.([]byte); ok {
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(append([]byte(nil), b...))
			return nil
		}
		src = string(b)
	}
	bad := func() error { return fmt.Errorf("%T %v into %s", src, src, v.Type()) }
	switch s := src.(type) {
	case string:
		switch v.Kind() {
		case reflect.String:
			v.SetString(s)
			return nil
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				v.SetBytes([]byte(s))
				return nil
			}
		}
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return bad()
			}
			return setInt(v, n)
		case reflect.Float32, reflect.Float64:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return bad()
			}
			v.SetFloat(f)
			return nil
		case reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return bad()
			}
			v.SetBool(b)
			return nil
		}
	case int64:
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return setInt(v, s)
		case reflect.Float32, reflect.Float64:
			v.SetFloat(float64(s))
			return nil
		case reflect.Bool:
			v.SetBool(s != 0)
			return nil
		case reflect.String:
			v.SetString(strconv.FormatInt(s, 10))
			return nil
		}
	case float64:
		switch v.Kind() {
		case reflect.Float32, reflect.Float64:
			v.SetFloat(s)
			return nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if s != float64(int64(s)) {
				return bad()
			}
			return setInt(v, int64(s))
		}
	case bool:
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(s)
			return nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return setInt(v, int64(sqlstore.BoolInt(s)))
		}
	case time.Time:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(s))
			return nil
		}
	}
	return bad()
}

func setInt(v reflect.Value, n int64) error {
	if v.OverflowInt(n) {
		return fmt.Errorf("%d overflows %s", n, v.Type())
	}
	v.SetInt(n)
	return nil
}
