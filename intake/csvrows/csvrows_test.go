package csvrows_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
)

var london, _ = time.LoadLocation("Europe/London")

func parse(t *testing.T, file string, o csvrows.Options) csvrows.Sheet {
	t.Helper()
	recs, err := csvrows.ReadCSV(strings.NewReader(file))
	if err != nil {
		t.Fatalf("ReadCSV: %v", err)
	}
	if o.Location == nil {
		o.Location = london
	}
	if o.Country == "" {
		o.Country = "GB"
	}
	sh, err := csvrows.Parse(recs, o)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sh
}

func rowNumbers(sh csvrows.Sheet) []int {
	var out []int
	for _, r := range sh.Rows {
		out = append(out, r.Row)
	}
	return out
}

func problems(r csvrows.Row) string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Field+": "+p.Message)
	}
	return strings.Join(out, "; ")
}

func TestReadCSVEncodingsAndSeparators(t *testing.T) {
	t.Parallel()
	want := []string{"Zoë Müller", "zoe@example.com", "+447700900123"}
	utf16le := func(s string) string {
		b := []byte{0xFF, 0xFE}
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return string(b)
	}
	for name, file := range map[string]string{
		"comma":            "Name,Email,Phone\nZoë Müller,zoe@example.com,07700 900123\n",
		"BOM and CRLF":     "\uFEFFName,Email,Phone\r\nZoë Müller,zoe@example.com,07700 900123\r\n",
		"semicolon":        "Name;E-mail;Mobile\nZoë Müller;zoe@example.com;07700 900123\n",
		"semicolon quoted": "\"Full name\";\"E-mail\";Tel;Notes\n\"Zoë Müller\";zoe@example.com;\"07700 900123\";\"a; b\"\n",
		"tab":              "Name\tEmail\tPhone\nZoë Müller\tzoe@example.com\t07700 900123\n",
		"UTF-16 tab":       utf16le("Name\tEmail\tPhone\r\nZoë Müller\tzoe@example.com\t07700 900123\r\n"),
		"Windows-1252":     "Name;Email;Phone\nZo\xeb M\xfcller;zoe@example.com;07700 900123\n",
		"sep= line":        "sep=;\nName;Email;Phone\nZoë Müller;zoe@example.com;07700 900123\n",
		"title rows":       "Waitlist export\n1 December 2026\n\nName,Email,Phone\nZoë Müller,zoe@example.com,07700 900123\n",
		"classic Mac":      "Name,Email,Phone\rZoë Müller,zoe@example.com,07700 900123\r",
		"comma in a cell":  "Name,Email,Phone\n\"Müller, Zoë\",zoe@example.com,07700 900123\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sh := parse(t, file, csvrows.Options{})
			if len(sh.Rows) != 1 {
				t.Fatalf("rows %v, want one", rowNumbers(sh))
			}
			r := sh.Rows[0]
			got := []string{r.Name, r.Email, r.Phone}
			if name == "comma in a cell" {
				want := []string{"Müller, Zoë", "zoe@example.com", "+447700900123"}
				if !slices.Equal(got, want) {
					t.Fatalf("got %q, want %q", got, want)
				}
				return
			}
			if !slices.Equal(got, want) || len(r.Problems) > 0 {
				t.Fatalf("got %q (%s), want %q", got, problems(r), want)
			}
			wantRow := map[string]int{"title rows": 5}[name]
			if wantRow == 0 {
				wantRow = 2
			}
			if r.Row != wantRow {
				t.Errorf("row %d, want %d", r.Row, wantRow)
			}
		})
	}
}

// TestRowNumbersAsASpreadsheetShowsThem: a quoted line break stays inside
// its row, a blank line is a row, and a stray quote spoils only its row.
func TestRowNumbersAsASpreadsheetShowsThem(t *testing.T) {
	t.Parallel()
	file := "Name,Email,Notes\n" + // 1
		"Ann,ann@example.com,\"first line\nsecond line\"\n" + // 2 (two lines)
		"Ben,ben@example.com,\n" + // 3
		"\n" + // 4: blank
		",,\n" + // 5: blank cells
		"Cy \"The Cat\" Ray,cy@example.com,\n" + // 6: stray quote
		"\"Dee\nDawson\",dee@example.com,\"a\r\nb\r\nc\"\n" + // 7 (three lines)
		"Eve,eve@example.com,\n" // 8
	sh := parse(t, file, csvrows.Options{})
	if got, want := rowNumbers(sh), []int{2, 3, 6, 7, 8}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if r := sh.Rows[0]; r.Notes != "first line\nsecond line" || len(r.Problems) > 0 {
		t.Errorf("row 2: notes %q, problems %s", r.Notes, problems(r))
	}
	if r := sh.Rows[2]; len(r.Problems) != 1 || r.Problems[0].Field != "row" || !strings.Contains(r.Problems[0].Message, "quote") {
		t.Errorf("row 6: %s, want one quote problem", problems(r))
	}
	if r := sh.Rows[3]; r.Name != "Dee Dawson" || r.Notes != "a\nb\nc" {
		t.Errorf("row 7: name %q notes %q", r.Name, r.Notes)
	}
}

func TestUnclosedQuoteKeepsTheRowsBefore(t *testing.T) {
	t.Parallel()
	sh := parse(t, "Name,Email\nAnn,ann@example.com\n\"Ben,ben@example.com\nCy,cy@example.com\n", csvrows.Options{})
	if got := rowNumbers(sh); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("rows %v", got)
	}
	if len(sh.Rows[0].Problems) > 0 || !strings.Contains(problems(sh.Rows[1]), "never closed") {
		t.Fatalf("row 2: %s; row 3: %s", problems(sh.Rows[0]), problems(sh.Rows[1]))
	}
}

func TestHeaderSynonyms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header string
		want   []csvrows.Field
	}{
		{"Full name,E-mail address,Mobile number,Treatment,Covers,From,Until,With,Comments,VIP,Contact by,Timestamp",
			[]csvrows.Field{"name", "email", "phone", "service", "party_size", "earliest", "latest", "staff", "notes", "priority", "channel", "joined_at"}},
		{"Customer,Email,Tel.,Service,Party size,Earliest,Latest,Staff,Notes,Priority,Channel,Date added",
			[]csvrows.Field{"name", "email", "phone", "service", "party_size", "earliest", "latest", "staff", "notes", "priority", "channel", "joined_at"}},
		{"NAME*,EMAIL:,Phone (mobile),Guests,Date", []csvrows.Field{"name", "email", "phone", "party_size", "date"}},
		{"First name,Last name,Telephone,People,to", []csvrows.Field{"first_name", "last_name", "phone", "party_size", "latest"}},
		{"Vorname,Nachname,Telefon,Behandlung,Personen,Von,Bis", []csvrows.Field{"first_name", "last_name", "phone", "service", "party_size", "earliest", "latest"}},
	} {
		recs, err := csvrows.ReadCSV(strings.NewReader(tc.header + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		sh, err := csvrows.Parse(recs, csvrows.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.header, err)
		}
		for i, f := range tc.want {
			if cols := sh.Header.Columns[f]; !slices.Equal(cols, []int{i}) {
				t.Errorf("%s: %s in columns %v, want [%d]", tc.header, f, cols, i)
			}
		}
		if len(sh.Header.Ignored) > 0 {
			t.Errorf("%s: ignored %q", tc.header, sh.Header.Ignored)
		}
	}
	// Unknown columns are listed; "Date" next to "From" is left out.
	sh := parse(t, "Name,Email,Email opt-in,From,Date\n", csvrows.Options{})
	if !slices.Equal(sh.Header.Ignored, []string{"Email opt-in", "Date"}) {
		t.Errorf("ignored %q", sh.Header.Ignored)
	}
}

func TestNoHeaderIsInvalid(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"", "\n\n", "Ann,ann@example.com\nBen,ben@example.com\n", "Name\nAnn\n"} {
		recs, err := csvrows.ReadCSV(strings.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = csvrows.Parse(recs, csvrows.Options{})
		var ne *nextup.Error
		if !errors.As(err, &ne) || !errors.Is(err, nextup.ErrInvalid) || ne.Fields[0].Field != "file" {
			t.Errorf("%q: err %v, want invalid file", file, err)
		}
	}
}

func TestDates(t *testing.T) {
	t.Parallel()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, london).UTC() }
	endOf := func(y int, m time.Month, d int) time.Time { return day(y, m, d+1).Add(-time.Microsecond) }
	at := func(y int, m time.Month, d, h, mi int) time.Time {
		return time.Date(y, m, d, h, mi, 0, 0, london).UTC()
	}
	for _, tc := range []struct {
		cell, country string
		order         csvrows.DateOrder
		earliest      time.Time
		latest        time.Time // of the same cell as a latest bound
	}{
		{"2026-12-01", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"2026/12/01", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"01/12/2026", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"01/12/2026", "US", "", day(2026, 1, 12), endOf(2026, 1, 12)},
		{"12/01/2026", "US", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"12/01/2026", "DE", "", day(2026, 1, 12), endOf(2026, 1, 12)},
		{"12/01/2026", "GB", csvrows.MonthFirst, day(2026, 12, 1), endOf(2026, 12, 1)},
		{"01-12-2026", "FR", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"1.12.2026", "US", "", day(2026, 12, 1), endOf(2026, 12, 1)}, // dots are always day first
		{"1/12/26", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"12/1/26", "US", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"1 Dec 2026", "US", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"Dec 1, 2026", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"1-Dec-26", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"Tuesday, 1st December 2026", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"20261201", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"46357", "GB", "", day(2026, 12, 1), endOf(2026, 12, 1)},
		{"46357.5", "GB", "", at(2026, 12, 1, 12, 0), at(2026, 12, 1, 12, 0)},
		{"46357.6041666667", "US", "", at(2026, 12, 1, 14, 30), at(2026, 12, 1, 14, 30)},
		{"2026-12-01 14:30", "GB", "", at(2026, 12, 1, 14, 30), at(2026, 12, 1, 14, 30)},
		{"2026-12-01T14:30:00", "GB", "", at(2026, 12, 1, 14, 30), at(2026, 12, 1, 14, 30)},
		{"01/12/2026 14:30:00", "GB", "", at(2026, 12, 1, 14, 30), at(2026, 12, 1, 14, 30)},
		{"12/1/2026 2:30 PM", "US", "", at(2026, 12, 1, 14, 30), at(2026, 12, 1, 14, 30)},
		{"Dec 1, 2026 12:05 am", "GB", "", at(2026, 12, 1, 0, 5), at(2026, 12, 1, 0, 5)},
		{"1.12.2026 9:00", "DE", "", at(2026, 12, 1, 9, 0), at(2026, 12, 1, 9, 0)},
		{"2026-12-01T14:30:00Z", "GB", "", time.Date(2026, 12, 1, 14, 30, 0, 0, time.UTC), time.Date(2026, 12, 1, 14, 30, 0, 0, time.UTC)},
		{"2026-06-01 14:30:00+02:00", "GB", "", time.Date(2026, 6, 1, 12, 30, 0, 0, time.UTC), time.Date(2026, 6, 1, 12, 30, 0, 0, time.UTC)},
		{"2026-06-01 14:30", "GB", "", time.Date(2026, 6, 1, 13, 30, 0, 0, time.UTC), time.Date(2026, 6, 1, 13, 30, 0, 0, time.UTC)}, // BST
	} {
		file := fmt.Sprintf("Name,Email,From,To\nAnn,ann@example.com,%q,%q\n", tc.cell, tc.cell)
		sh := parse(t, file, csvrows.Options{Country: tc.country, DateOrder: tc.order})
		r := sh.Rows[0]
		if len(r.Problems) > 0 || !r.Earliest.Equal(tc.earliest) || !r.Latest.Equal(tc.latest) {
			t.Errorf("%q (%s %s): earliest %v latest %v %s; want %v and %v", tc.cell, tc.country, tc.order,
				r.Earliest, r.Latest, problems(r), tc.earliest, tc.latest)
		}
	}
}

func TestBadDates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cell, country, want string }{
		{"13/01/2027", "US", "month first"},
		{"01/13/2027", "GB", "day first"},
		{"31/02/2026", "GB", "has no day 31"},
		{"2026", "GB", "not a date"},
		{"14:30", "GB", "without a date"},
		{"tomorrow", "GB", "not a date"},
		{"1?2?2026", "GB", "not a date"},
		{"12/12/1999", "GB", "out of range"},
		{"99999999", "GB", "out of range"},
		{"25:00 1/1/2027", "GB", "not a date"},
		{"1/1/2027 13:00 pm", "GB", "12-hour"},
	} {
		sh := parse(t, "Name,Email,From\nAnn,ann@example.com,"+tc.cell+"\n", csvrows.Options{Country: tc.country})
		r := sh.Rows[0]
		if len(r.Problems) != 1 || r.Problems[0].Field != "earliest" || !strings.Contains(r.Problems[0].Message, tc.want) {
			t.Errorf("%q: %s, want an earliest problem saying %q", tc.cell, problems(r), tc.want)
		}
	}
}

// TestDateColumnIsAWholeDay: a "Date" column with no latest column is the
// whole day; with a time it is only the earliest.
func TestDateColumnIsAWholeDay(t *testing.T) {
	t.Parallel()
	sh := parse(t, "Name,Phone,Date\nAnn,07700900123,01/12/2026\nBen,07700900124,01/12/2026 15:00\n", csvrows.Options{})
	a, b := sh.Rows[0], sh.Rows[1]
	if !a.Earliest.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) || !a.Latest.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).Add(-time.Microsecond)) {
		t.Errorf("Ann: %v–%v", a.Earliest, a.Latest)
	}
	if !b.Earliest.Equal(time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)) || !b.Latest.IsZero() {
		t.Errorf("Ben: %v–%v", b.Earliest, b.Latest)
	}
	if !a.Has(csvrows.FieldEarliest) || !a.Has(csvrows.FieldLatest) || a.Has(csvrows.FieldStaff) {
		t.Error("Has is wrong")
	}
}

func TestCells(t *testing.T) {
	t.Parallel()
	o := csvrows.Options{
		Services: []nextup.Service{{Name: "Haircut", Synonyms: []string{"cut", "trim"}}, {Name: "Colour"}},
		Staff:    []string{"Ana", "Ben"},
	}
	file := "Name,Email,Phone,Service,Party,Staff,Priority,Channel\n" +
		"  Ann   Lee ,mailto:ann@example.com,'07700 900123,TRIM,4 people,ana,yes,text\n" +
		"Ben,,+1 (415) 555-2671,Colour,2.0,Carla,✓,E-mail\n" +
		"Cy,,00353 1 234 5678,haircut,,,FALSE,\n" +
		"Dee,,4.47700900123E+11,massage,0,,maybe,fax\n" +
		"Eve,,07700 9,cut,twelve,,,\n"
	sh := parse(t, file, o)
	if len(sh.Rows) != 5 {
		t.Fatalf("rows %v", rowNumbers(sh))
	}
	a, b, c, d, e := sh.Rows[0], sh.Rows[1], sh.Rows[2], sh.Rows[3], sh.Rows[4]
	if a.Name != "Ann Lee" || a.Email != "ann@example.com" || a.Phone != "+447700900123" || a.Service != "Haircut" ||
		a.PartySize != 4 || a.Staff != "Ana" || !a.Priority || a.Channel != nextup.ChannelSMS || len(a.Problems) > 0 {
		t.Errorf("Ann: %+v", a)
	}
	if b.Phone != "+14155552671" || b.Service != "Colour" || b.PartySize != 2 || b.Staff != "Carla" || !b.Priority ||
		b.Channel != nextup.ChannelEmail || len(b.Problems) > 0 {
		t.Errorf("Ben: %+v", b)
	}
	if c.Phone != "+35312345678" || c.Service != "Haircut" || c.PartySize != 0 || c.Priority || c.Channel != "" || len(c.Problems) > 0 {
		t.Errorf("Cy: %+v", c)
	}
	got := map[string]string{}
	for _, p := range d.Problems {
		got[p.Field] = p.Message
	}
	if d.Service != "massage" || !strings.Contains(got["phone"], "shortened") || !strings.Contains(got["party_size"], "at least 1") ||
		!strings.Contains(got["priority"], "neither yes nor no") || !strings.Contains(got["channel"], "email or sms") {
		t.Errorf("Dee: %+v", d)
	}
	if !strings.Contains(problems(e), "phone") || !strings.Contains(problems(e), "party_size") {
		t.Errorf("Eve: %s", problems(e))
	}
}

func TestOneServiceCatalogueFillsTheService(t *testing.T) {
	t.Parallel()
	sh := parse(t, "Name,Email\nAnn,ann@example.com\n", csvrows.Options{Services: []nextup.Service{{Name: "Table"}}})
	if sh.Rows[0].Service != "Table" || !sh.Rows[0].Has(csvrows.FieldService) {
		t.Fatalf("%+v", sh.Rows[0])
	}
}

func TestPhoneWithoutCountry(t *testing.T) {
	t.Parallel()
	if _, err := csvrows.NormalizePhone("07700 900123", ""); err == nil || !strings.Contains(err.Error(), "country") {
		t.Errorf("national number without a country: %v", err)
	}
	if p, err := csvrows.NormalizePhone("+44 (0) 7700 900123", ""); err != nil || p != "+447700900123" {
		t.Errorf("(0): %q %v", p, err)
	}
	if p, err := csvrows.NormalizePhone("0044 7700 900123", ""); err != nil || p != "+447700900123" {
		t.Errorf("00: %q %v", p, err)
	}
}

// TestBlankRowsAreSkipped: rows with nothing but checkboxes and defaults
// below the data are no rows.
func TestBlankRowsAreSkipped(t *testing.T) {
	t.Parallel()
	sh := parse(t, "Name,Email,Priority,Party,Notes\nAnn,ann@example.com,FALSE,1,\n,,FALSE,1,\n,,FALSE,,see above\n", csvrows.Options{})
	if got := rowNumbers(sh); !slices.Equal(got, []int{2}) {
		t.Fatalf("rows %v", got)
	}
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", csvrows.MaxBytes+1)
	if _, err := csvrows.ReadCSV(strings.NewReader(big)); !errors.Is(err, csvrows.ErrTooLarge) {
		t.Errorf("%d bytes: %v", len(big), err)
	}
	var b strings.Builder
	b.WriteString("Name,Email\n")
	for i := 0; i <= csvrows.MaxRows; i++ {
		fmt.Fprintf(&b, "P%d,p%d@example.com\n", i, i)
	}
	recs, err := csvrows.ReadCSV(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := csvrows.Parse(recs, csvrows.Options{}); !errors.Is(err, csvrows.ErrTooLarge) {
		t.Errorf("%d rows: %v", csvrows.MaxRows+1, err)
	}
}
