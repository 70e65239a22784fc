package csvrows

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DateOrder says how a date like 01/12/2026 is read.
type DateOrder string

// Date orders. The zero value reads dates as the business's country writes them.
const (
	DateOrderCountry DateOrder = ""
	DayFirst         DateOrder = "dmy"
	MonthFirst       DateOrder = "mdy"
)

// monthFirstCountries write numeric dates month first (ISO 3166-1 alpha-2).
var monthFirstCountries = map[string]bool{
	"US": true, "PR": true, "GU": true, "VI": true, "AS": true, "MP": true, "UM": true,
	"PH": true, "FM": true, "MH": true, "PW": true,
}

// OrderFor returns the date order of a country: month first where dates
// are written that way, day first everywhere else.
func OrderFor(country string) DateOrder {
	if monthFirstCountries[strings.ToUpper(country)] {
		return MonthFirst
	}
	return DayFirst
}

// stamp is a date read from a cell: a calendar day with an optional
// wall-clock time in the business timezone, or an instant (RFC 3339).
type stamp struct {
	y        int
	m        time.Month
	d        int
	clock    int // seconds since midnight
	hasClock bool
	instant  time.Time // set for a time that carried its own offset
}

// dayOnly reports whether the stamp is a date without a time: a whole day.
func (s stamp) dayOnly() bool { return s.instant.IsZero() && !s.hasClock }

// at returns the stamp as an instant in loc. For a whole day, latest picks
// its last instant instead of its first (as nextup.ParseBound does).
func (s stamp) at(loc *time.Location, latest bool) time.Time {
	switch {
	case !s.instant.IsZero():
		return s.instant.UTC()
	case s.hasClock:
		return time.Date(s.y, s.m, s.d, 0, 0, s.clock, 0, loc).UTC()
	case latest:
		return time.Date(s.y, s.m, s.d+1, 0, 0, 0, 0, loc).Add(-time.Microsecond).UTC()
	}
	return time.Date(s.y, s.m, s.d, 0, 0, 0, 0, loc).UTC()
}

// excelEpoch is day 0 of spreadsheet date numbers (Excel's 1900 system
// with its phantom 29 Feb 1900, and Google Sheets and LibreOffice alike,
// agree from March 1900 on).
var excelEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// Spreadsheet date numbers of 1 Jan 2000 and 31 Dec 9998: nextup's range
// of dates (nextup.ParseBound), and far from any other number in a cell.
const (
	minSerial = 36526
	maxSerial = 2958100
)

var (
	timeRe   = regexp.MustCompile(`(?i)^(.*?)(?:^|[ T,]+)(\d{1,2})[:h](\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?\s*(?:([ap])\.?\s*m\.?)?$`)
	serialRe = regexp.MustCompile(`^\d{5,8}(?:[.,]\d{1,15})?$`)
	tokenRe  = regexp.MustCompile(`\d+(?:st|nd|rd|th)?|\p{L}+`)
	ordinal  = regexp.MustCompile(`^(\d{1,2})(?:st|nd|rd|th)$`)
)

var months = map[string]time.Month{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
	"may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
	"september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

var weekdays = map[string]bool{
	"mon": true, "monday": true, "tue": true, "tues": true, "tuesday": true, "wed": true, "wednesday": true,
	"thu": true, "thur": true, "thurs": true, "thursday": true, "fri": true, "friday": true,
	"sat": true, "saturday": true, "sun": true, "sunday": true,
}

// parseStamp reads a date cell (see the package documentation).
func parseStamp(s string, order DateOrder) (stamp, error) {
	s = strings.TrimSpace(s)
	if len(s) > 64 {
		return stamp{}, errors.New("is too long to be a date")
	}
	// RFC 3339, with a T or a space, carries its own offset.
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04Z07:00", "2006-01-02 15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 2000 || t.Year() > 9998 {
				return stamp{}, fmt.Errorf("%q: the year is out of range", s)
			}
			return stamp{instant: t}, nil
		}
	}
	if serialRe.MatchString(s) {
		return serial(s)
	}
	var st stamp
	datePart := s
	if m := timeRe.FindStringSubmatch(s); m != nil {
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3])
		sec := 0
		if m[4] != "" {
			sec, _ = strconv.Atoi(m[4])
		}
		if m[5] != "" {
			if h < 1 || h > 12 {
				return stamp{}, fmt.Errorf("%q: %d is not an hour of a 12-hour clock", s, h)
			}
			h %= 12
			if strings.EqualFold(m[5], "p") {
				h += 12
			}
		}
		if h > 23 || mi > 59 || sec > 59 {
			return stamp{}, fmt.Errorf("%q: not a time of day", s)
		}
		st.clock, st.hasClock = h*3600+mi*60+sec, true
		datePart = strings.TrimRight(m[1], " ,T")
		if datePart == "" {
			return stamp{}, fmt.Errorf("%q is a time without a date", s)
		}
	}
	y, mo, d, err := parseDay(datePart, order)
	if err != nil {
		return stamp{}, fmt.Errorf("%q %v", s, err)
	}
	st.y, st.m, st.d = y, mo, d
	return st, nil
}

// serial reads a spreadsheet date number: whole days since excelEpoch,
// the fraction the time of day (rounded to the second).
func serial(s string) (stamp, error) {
	v, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	if err != nil || v < minSerial || v >= maxSerial+1 {
		if len(s) == 8 && !strings.ContainsAny(s, ".,") {
			return compactDay(s)
		}
		return stamp{}, fmt.Errorf("%q is neither a date nor a spreadsheet date number", s)
	}
	days := math.Floor(v)
	secs := int(math.Round((v - days) * 86400))
	t := excelEpoch.AddDate(0, 0, int(days))
	st := stamp{y: t.Year(), m: t.Month(), d: t.Day()}
	if secs > 0 {
		if secs >= 86400 { // 0.99999999 rounds to midnight: the next day
			t = t.AddDate(0, 0, 1)
			st = stamp{y: t.Year(), m: t.Month(), d: t.Day(), hasClock: true}
		} else {
			st.clock, st.hasClock = secs, true
		}
	}
	return st, nil
}

// compactDay reads 20261201.
func compactDay(s string) (stamp, error) {
	y, _ := strconv.Atoi(s[:4])
	m, _ := strconv.Atoi(s[4:6])
	d, _ := strconv.Atoi(s[6:])
	if err := checkDay(y, m, d); err != nil {
		return stamp{}, fmt.Errorf("%q %v", s, err)
	}
	return stamp{y: y, m: time.Month(m), d: d}, nil
}

// parseDay reads the date part of a cell.
func parseDay(s string, order DateOrder) (int, time.Month, int, error) {
	var nums []string
	month := 0
	dotted := strings.Count(s, ".") >= 2
	if strings.Trim(tokenRe.ReplaceAllString(s, ""), " -/.,'") != "" {
		return 0, 0, 0, errors.New("is not a date")
	}
	for i, tok := range tokenRe.FindAllString(strings.ToLower(s), -1) {
		if m := ordinal.FindStringSubmatch(tok); m != nil {
			tok = m[1]
		}
		switch {
		case tok[0] >= '0' && tok[0] <= '9':
			nums = append(nums, tok)
		case months[tok] != 0 && month == 0:
			month = int(months[tok])
			nums = append(nums, "") // the month's place
		case weekdays[tok] && i == 0:
		case tok == "of":
		default:
			return 0, 0, 0, errors.New("is not a date")
		}
	}
	if len(nums) != 3 {
		return 0, 0, 0, errors.New("is not a date")
	}
	var y, m, d string
	switch {
	case month != 0:
		// 1 Dec 2026, Dec 1 2026, 2026 Dec 1: the year is the number with
		// four digits, or the last one.
		var rest []string
		for _, n := range nums {
			if n != "" {
				rest = append(rest, n)
			}
		}
		if len(rest[0]) == 4 {
			y, d = rest[0], rest[1]
		} else {
			d, y = rest[0], rest[1]
		}
	case len(nums[0]) == 4:
		y, m, d = nums[0], nums[1], nums[2]
	case dotted || order != MonthFirst:
		d, m, y = nums[0], nums[1], nums[2]
	default:
		m, d, y = nums[0], nums[1], nums[2]
	}
	if len(y) != 4 && len(y) != 2 || len(d) > 2 || len(m) > 2 {
		return 0, 0, 0, errors.New("is not a date")
	}
	yi, _ := strconv.Atoi(y)
	if len(y) == 2 {
		yi += 2000
	}
	di, _ := strconv.Atoi(d)
	mi := month
	if mi == 0 {
		mi, _ = strconv.Atoi(m)
	}
	if err := checkDay(yi, mi, di); err != nil {
		if month == 0 && len(nums[0]) != 4 && !dotted {
			if order == MonthFirst {
				return 0, 0, 0, fmt.Errorf("%v (dates are read month first, as 12/31/2026)", err)
			}
			return 0, 0, 0, fmt.Errorf("%v (dates are read day first, as 31/12/2026)", err)
		}
		return 0, 0, 0, err
	}
	return yi, time.Month(mi), di, nil
}

func checkDay(y, m, d int) error {
	if y < 2000 || y > 9998 {
		return errors.New("has a year out of range")
	}
	if m < 1 || m > 12 {
		return errors.New("is not a date: there is no month " + strconv.Itoa(m))
	}
	if d < 1 || d > time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return fmt.Errorf("is not a date: %s %d has no day %d", time.Month(m), y, d)
	}
	return nil
}
