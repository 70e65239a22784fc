package csvrows_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/intake/csvrows"
)

// FuzzReadCSV: whatever the bytes, ReadCSV and Parse do not panic, and
// every row below the header that says anything comes back exactly once,
// with its row number, either read or with the problems that keep it out.
func FuzzReadCSV(f *testing.F) {
	for _, seed := range []string{
		"Name,Email,Phone\nAnn,ann@example.com,07700 900123\n",
		"\uFEFFName;E-mail;Mobile;Date\r\nAnn;ann@example.com;+44 7700 900123;01/12/2026\r\n",
		"sep=;\nName;Email\nAnn;ann@example.com\n",
		"Name\tEmail\tParty\tFrom\tTo\nAnn\tann@example.com\t4 people\t46357.5\t2026-12-24T18:00:00Z\n",
		"Title\n\nName,Email,Notes\n\"Ann\nLee\",ann@example.com,\"a \"\"b\"\" c\"\nBen \"B\" Bo,ben@example.com,\n\"Cy,cy@example.com\n",
		"First name,Last name,Phone,Priority,Channel,Timestamp\nAnn,Lee,(415) 555-2671,yes,text,12/1/2026 2:30 PM\n",
		"Name,Phone,Service,Staff,Date\nZo\xeb,4.47E+11,cut,ana,Tue 1st Dec 2026\n",
		"\xff\xfeN\x00a\x00m\x00e\x00\t\x00E\x00m\x00a\x00i\x00l\x00\n\x00",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := csvrows.ReadCSV(strings.NewReader(string(b)))
		if err != nil {
			return // too large
		}
		prev := 0
		for _, r := range recs {
			if r.Row <= prev {
				t.Fatalf("row numbers not increasing: %d after %d", r.Row, prev)
			}
			prev = r.Row
			if (r.Err == nil) == (len(r.Cells) == 0) {
				t.Fatalf("row %d: cells %q and err %v", r.Row, r.Cells, r.Err)
			}
		}
		o := csvrows.Options{Location: london, Country: "GB"}
		sh, err := csvrows.Parse(recs, o)
		if err != nil {
			return // no header, or too many rows
		}
		again, _ := csvrows.Parse(recs, o)
		if !reflect.DeepEqual(sh, again) {
			t.Fatal("Parse is not deterministic")
		}
		// Every record below the header with a person, contact, service,
		// date or staff cell, or one the reader could not read, is a row.
		var want []int
		for _, r := range recs {
			if r.Row <= sh.Header.Row {
				continue
			}
			says := r.Err != nil
			for _, f := range []csvrows.Field{"name", "first_name", "last_name", "email", "phone", "service", "earliest", "latest", "date", "staff"} {
				for _, col := range sh.Header.Columns[f] {
					if col < len(r.Cells) && strings.TrimSpace(r.Cells[col]) != "" {
						says = true
					}
				}
			}
			if says {
				want = append(want, r.Row)
			}
		}
		if got := rowNumbers(sh); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		for _, r := range sh.Rows {
			for _, p := range r.Problems {
				if p.Field == "" || p.Message == "" {
					t.Fatalf("row %d: empty problem %+v", r.Row, p)
				}
			}
			if r.Phone != "" && (r.Phone[0] != '+' || strings.Trim(r.Phone[1:], "0123456789") != "") {
				t.Fatalf("row %d: phone %q is not E.164", r.Row, r.Phone)
			}
			for _, tm := range []time.Time{r.Earliest, r.Latest, r.JoinedAt} {
				if !tm.IsZero() && (tm.Year() < 1999 || tm.Year() > 9999) {
					t.Fatalf("row %d: time %v out of range", r.Row, tm)
				}
			}
			if r.PartySize < 0 || strings.ContainsAny(r.Name, "\r\n") {
				t.Fatalf("row %d: party %d name %q", r.Row, r.PartySize, r.Name)
			}
		}
	})
}
