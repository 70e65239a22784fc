package people

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nextup-dev/nextup"
)

func TestParseContact(t *testing.T) {
	t.Parallel()
	gb := nextup.Business{Profile: nextup.Profile{Country: "GB"}}
	for _, c := range []struct {
		in   string
		want nextup.Contact
	}{
		{" Ann@Example.COM ", nextup.Contact{Email: "ann@example.com"}},
		{"+447700900123", nextup.Contact{Phone: "+447700900123"}},
		{"+44 7700 900123", nextup.Contact{Phone: "+447700900123"}},
		{"07700 900123", nextup.Contact{Phone: "+447700900123"}}, // national, in the business's country
	} {
		got, err := ParseContact(gb, c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseContact(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "nobody", "ann@", "Ann <ann@example.com>", "12", "+44 7700 900123 ext"} {
		_, err := ParseContact(gb, in)
		var e *nextup.Error
		if !errors.As(err, &e) || e.Code != nextup.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Field != "contact" {
			t.Errorf("ParseContact(%q) = %v, want validation_failed on contact", in, err)
		}
	}
}

func TestScrubber(t *testing.T) {
	t.Parallel()
	sc := scrubber{exact: []string{"ann@example.com", "+447700900123"}, names: []string{"Ann Lee", "Bo"}}
	for _, c := range []struct{ in, want string }{
		{"ANN@example.com", "X"},
		{"+44 7700 900123", "X"},
		{"Handed back after trying 2: Ann Lee (declined), Anne Leeds (expired).", "Handed back after trying 2: X (declined), Anne Leeds (expired)."},
		{"write to ann@example.com today", "write to X today"},
		{"Bo (expired)", "Bo (expired)"}, // names under three letters are left: too likely a word
		{"", ""},
		{"X", "X"},
	} {
		if got, changed := sc.text(c.in, "X"); got != c.want || changed != (c.in != c.want) {
			t.Errorf("text(%q) = %q, %v; want %q", c.in, got, changed, c.want)
		}
	}
	d, changed := sc.detail(map[string]any{"email": map[string]any{"from": "ann@example.com", "to": "new@example.com"},
		"seats": 2.0, "list": []any{"Ann Lee", "x"}}, "X")
	want := map[string]any{"email": map[string]any{"from": "X", "to": "new@example.com"}, "seats": 2.0, "list": []any{"X", "x"}}
	if !changed || !equalJSON(d, want) {
		t.Errorf("detail = %v, want %v", d, want)
	}
}

func TestTakeKeepsEntriesLast(t *testing.T) {
	t.Parallel()
	e := nextup.Erasure{Entries: []string{"e1", "e2"}, Offers: []string{"o1"}, Messages: []string{"m1", "m2"},
		Audit: []nextup.AuditEvent{{ID: 1}}, HandBacks: []nextup.HandBack{{ID: "h1"}}}
	var parts []nextup.Erasure
	for rest := e; rest.Rows() > 0; {
		var part nextup.Erasure
		part, rest = take(rest, 3)
		parts = append(parts, part)
	}
	if len(parts) != 3 || parts[0].Rows() != 3 || len(parts[0].Audit) != 1 || len(parts[0].Messages) != 2 ||
		len(parts[1].HandBacks) != 1 || len(parts[1].Offers) != 1 || len(parts[1].Entries) != 1 || len(parts[2].Entries) != 1 {
		t.Errorf("parts %+v", parts)
	}
}

func equalJSON(a, b any) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// FuzzParseContact: whatever staff type, ParseContact does not panic,
// refuses with a validation error on "contact" or gives exactly one of an
// email address or an E.164 number, and what it gives reads back as
// itself.
func FuzzParseContact(f *testing.F) {
	for _, s := range []string{"ann@example.com", " Ann@Example.COM ", "+447700900123", "07700 900123", "(212) 555-0100", "+1 212 555 0100", "ann@", "12", "ann@例え.jp", "\x00@x", "+44 7700 900123 ext"} {
		f.Add(s, "GB")
	}
	f.Add("06 12 34 56 78", "FR")
	f.Add("(212) 555-0100", "US")
	f.Fuzz(func(t *testing.T, raw, country string) {
		b := nextup.Business{Profile: nextup.Profile{Country: country}}
		c, err := ParseContact(b, raw)
		if err != nil {
			var e *nextup.Error
			if !errors.As(err, &e) || e.Code != nextup.CodeValidation || len(e.Fields) != 1 || e.Fields[0].Field != "contact" {
				t.Fatalf("ParseContact(%q) = %v, want validation_failed on contact", raw, err)
			}
			return
		}
		if (c.Email == "") == (c.Phone == "") {
			t.Fatalf("ParseContact(%q) = %+v: not exactly one of email and phone", raw, c)
		}
		again, err := ParseContact(b, c.Email+c.Phone)
		if err != nil || again != c {
			t.Fatalf("ParseContact(%q) = %+v, which reads back as %+v, %v", raw, c, again, err)
		}
	})
}
