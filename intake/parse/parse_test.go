package parse_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/mailmsg"
	"github.com/nextup-dev/nextup/intake/parse"
)

func salon(t testing.TB) parse.Business {
	t.Helper()
	loc, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	return parse.Business{
		Location: loc, Country: "GB",
		Services: []nextup.Service{
			{Name: "Haircut", Synonyms: []string{"cut", "trim"}},
			{Name: "Colour", Synonyms: []string{"highlights", "balayage"}},
			{Name: "Beard trim", Synonyms: []string{"beard"}},
		},
		Staff: []string{"Anna", "Ben", "Dr Priya Patel"},
	}
}

// TestProposePhrases covers the phrasings the issue names, one each, sent
// on Thursday 5 March 2026 at 10:00 London time.
func TestProposePhrases(t *testing.T) {
	t.Parallel()
	b := salon(t)
	sent := time.Date(2026, 3, 5, 10, 0, 0, 0, b.Location)
	d := func(day, h, m int) time.Time { return time.Date(2026, 3, day, h, m, 0, 0, b.Location) }
	end := func(day int) time.Time { return d(day+1, 0, 0).Add(-time.Microsecond) }
	for _, tc := range []struct {
		text             string
		earliest, latest time.Time
		party            int
		service, staff   string
		avail            string
	}{
		{"Could I come in next Tuesday?", d(10, 0, 0), end(10), 1, "", "", ""},
		{"Any weekday next week for a cut", d(9, 0, 0), end(13), 1, "Haircut", "", ""},
		{"Anything between the 3rd and the 5th of April?", time.Date(2026, 4, 3, 0, 0, 0, 0, b.Location), time.Date(2026, 4, 6, 0, 0, 0, 0, b.Location).Add(-time.Microsecond), 1, "", "", ""},
		{"this Friday after 3pm please", d(6, 15, 0), end(6), 1, "", "", ""},
		{"Mornings are best for highlights", time.Time{}, time.Time{}, 1, "Colour", "", "Sun,Mon,Tue,Wed,Thu,Fri,Sat 00:00-12:00"},
		{"A table for 4 tomorrow", d(6, 0, 0), end(6), 4, "", "", ""},
		{"Two of us, Saturday", d(7, 0, 0), end(7), 2, "", "", ""},
		{"Me and my sister want a trim with Anna", time.Time{}, time.Time{}, 2, "Haircut", "Anna", ""},
		{"A beard trim, anybody but Ben", time.Time{}, time.Time{}, 1, "Beard trim", "", ""},
		{"Can I see Dr Patel on Tuesdays or Thursdays from 10?", time.Time{}, time.Time{}, 1, "", "Dr Priya Patel", "Tue,Thu 10:00-24:00"},
		{"I broke a tooth on Saturday; could I come Monday morning?", d(9, 0, 0), d(9, 12, 0), 1, "", "", ""},
	} {
		p := parse.Propose(parse.Input{Text: tc.text, FromName: "Jo Bloggs", FromAddress: "jo@example.com", Sent: sent}, b)
		var av []string
		for _, a := range p.Availability {
			var ds []string
			for _, x := range a.Days {
				ds = append(ds, x.String()[:3])
			}
			av = append(av, strings.Join(ds, ",")+" "+a.From.String()+"-"+a.To.String())
		}
		if !p.Earliest.Equal(tc.earliest) || !p.Latest.Equal(tc.latest) || p.PartySize != tc.party ||
			p.Service != tc.service || p.Staff != tc.staff || strings.Join(av, "; ") != tc.avail {
			t.Errorf("%q:\n got %s..%s party %d service %q staff %q avail %q\nwant %s..%s party %d service %q staff %q avail %q",
				tc.text, p.Earliest, p.Latest, p.PartySize, p.Service, p.Staff, strings.Join(av, "; "),
				tc.earliest, tc.latest, tc.party, tc.service, tc.staff, tc.avail)
		}
	}
}

func TestProposeContact(t *testing.T) {
	t.Parallel()
	b := salon(t)
	sent := time.Date(2026, 3, 5, 10, 0, 0, 0, b.Location)
	p := parse.Propose(parse.Input{
		Text:      "Hi, a trim please.\nThanks\nMark",
		Signature: "Mark Thompson\nT: 020 7946 0958 | M: 07825 443321",
		FromName:  "Thompson, Mark", FromAddress: "Mark.Thompson@Example.com", Sent: sent,
	}, b)
	if p.Name != "Mark Thompson" || p.Email != "mark.thompson@example.com" || p.Phone != "+447825443321" {
		t.Errorf("got %q %q %q", p.Name, p.Email, p.Phone)
	}
	if p.Confidence[parse.FieldPhone] <= 0 || p.Confidence[parse.FieldPhone] > 1 {
		t.Errorf("phone confidence %v", p.Confidence[parse.FieldPhone])
	}
	p = parse.Propose(parse.Input{Text: "hello", Sent: sent}, b)
	if len(p.Problems) == 0 || p.Confidence[parse.FieldService] != 0 {
		t.Errorf("an empty request should come with problems: %+v", p)
	}
}

// FuzzPropose feeds the corpus texts and mutations of them to Propose: it
// must not panic, must stay deterministic, and must keep its output
// bounded and its confidences in 0..1.
func FuzzPropose(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus, "*.eml"))
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		r, err := mailmsg.Extract(raw)
		if err != nil {
			continue
		}
		f.Add(r.Body, r.Signature, r.Subject, r.From.Name, r.From.Address, r.Sent.Unix())
	}
	f.Add("between the 31st and the 1st, 11-1, 9pm or after, except the 4th", "", "Re: x", "", "", int64(0))
	b := salon(f)
	f.Fuzz(func(t *testing.T, text, sig, subject, name, addr string, sent int64) {
		in := parse.Input{Text: text, Signature: sig, Subject: subject, FromName: name, FromAddress: addr, Sent: time.Unix(sent%(1<<35), 0)}
		p := parse.Propose(in, b)
		if q := parse.Propose(in, b); !reflect.DeepEqual(p, q) {
			t.Fatalf("not deterministic:\n%+v\n%+v", p, q)
		}
		if len(p.Problems) > 20 || len(p.Availability) > 16 {
			t.Fatalf("unbounded output: %d problems, %d windows", len(p.Problems), len(p.Availability))
		}
		for k, v := range p.Confidence {
			if v < 0 || v > 1 {
				t.Fatalf("confidence %s = %v", k, v)
			}
		}
		if !p.Earliest.IsZero() && !p.Latest.IsZero() && p.Latest.Before(p.Earliest) {
			t.Fatalf("latest %s before earliest %s", p.Latest, p.Earliest)
		}
		if p.PartySize < 1 || p.PartySize > 500 {
			t.Fatalf("party size %d", p.PartySize)
		}
		for _, a := range p.Availability {
			if a.From >= a.To || a.To > 1440 || len(a.Days) == 0 {
				t.Fatalf("bad window %+v", a)
			}
		}
	})
}
