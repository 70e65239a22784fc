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

// TestProposeGrammar covers the date phrasings beyond the issue's: other
// languages, relative days, ranges and numeric dates. Sent on Thursday 5
// March 2026 at 10:00, in the business's timezone.
func TestProposeGrammar(t *testing.T) {
	t.Parallel()
	day := func(loc *time.Location, m time.Month, d, h, min int) time.Time {
		return time.Date(2026, m, d, h, min, 0, 0, loc)
	}
	end := func(loc *time.Location, m time.Month, d int) time.Time {
		return day(loc, m, d+1, 0, 0).Add(-time.Microsecond)
	}
	for _, tc := range []struct {
		country, zone, text string
		from, to            [3]int // month, day, hour:minute as h*100+m; to's -1 is the end of the day
	}{
		{"GB", "Europe/London", "Could I come the day after tomorrow?", [3]int{3, 7, 0}, [3]int{3, 7, -1}},
		{"GB", "Europe/London", "In two weeks, any day.", [3]int{3, 16, 0}, [3]int{3, 22, -1}},
		{"GB", "Europe/London", "The week after next please", [3]int{3, 16, 0}, [3]int{3, 22, -1}},
		{"GB", "Europe/London", "Any morning next week", [3]int{3, 9, 0}, [3]int{3, 15, -1}},
		{"GB", "Europe/London", "I'm free from Monday until Thursday", [3]int{3, 9, 0}, [3]int{3, 12, -1}},
		{"GB", "Europe/London", "on 2026-03-20 before noon", [3]int{3, 20, 0}, [3]int{3, 20, 1200}},
		{"GB", "Europe/London", "Is the twenty-first free?", [3]int{3, 21, 0}, [3]int{3, 21, -1}},
		{"GB", "Europe/London", "Anything 12\u201315 March", [3]int{3, 12, 0}, [3]int{3, 15, -1}},
		{"US", "America/New_York", "Can we do 3/20 at 7pm?", [3]int{3, 20, 1830}, [3]int{3, 20, 1930}},
		{"DE", "Europe/Berlin", "Geht es nächste Woche, am liebsten abends?", [3]int{3, 9, 0}, [3]int{3, 15, -1}},
		{"DE", "Europe/Berlin", "Ab dem 12. März hätte ich Zeit, nur nicht am 20.03.", [3]int{3, 12, 0}, [3]int{0, 0, 0}},
		{"DE", "Europe/Berlin", "Vom 16. bis 18. März, ab 18 Uhr.", [3]int{3, 16, 0}, [3]int{3, 18, -1}},
		{"FR", "Europe/Paris", "La semaine prochaine, sauf le mercredi.", [3]int{3, 9, 0}, [3]int{3, 15, -1}},
		{"FR", "Europe/Paris", "Du 10 au 13 mars, après 17h30.", [3]int{3, 10, 0}, [3]int{3, 13, -1}},
		{"ES", "Europe/Madrid", "El próximo martes por la noche, sobre las 21:00.", [3]int{3, 10, 2030}, [3]int{3, 10, 2130}},
		{"ES", "Europe/Madrid", "Entre el 16 y el 19 de marzo.", [3]int{3, 16, 0}, [3]int{3, 19, -1}},
		{"NL", "Europe/Amsterdam", "Volgende week dinsdag of donderdag, na 17:00 uur.", [3]int{3, 10, 0}, [3]int{3, 12, -1}},
		{"NL", "Europe/Amsterdam", "Overmorgen 's ochtends?", [3]int{3, 7, 0}, [3]int{3, 7, 1200}},
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		at := func(x [3]int, latest bool) time.Time {
			switch {
			case x[0] == 0:
				return time.Time{}
			case x[2] < 0:
				return end(loc, time.Month(x[0]), x[1])
			case x[2] == 0 && latest:
				return day(loc, time.Month(x[0]), x[1], 0, 0)
			}
			return day(loc, time.Month(x[0]), x[1], x[2]/100, x[2]%100)
		}
		p := parse.Propose(parse.Input{Text: tc.text, FromAddress: "jo@example.com", Sent: day(loc, 3, 5, 10, 0)},
			parse.Business{Location: loc, Country: tc.country})
		if want, want2 := at(tc.from, false), at(tc.to, true); !p.Earliest.Equal(want) || !p.Latest.Equal(want2) {
			t.Errorf("%s %q: got %s..%s, want %s..%s", tc.country, tc.text, p.Earliest, p.Latest, want, want2)
		}
	}
}

// TestProposeWeeksAndRanges covers the phrasings that count weeks on from
// a day ("a week on Tuesday", "Saturday week", "mardi en huit"), ranges
// from now ("between now and Friday", "d'ici vendredi") and ranges whose
// month is named only at their end ("du lundi 4 au vendredi 8 janvier"),
// with the relatives already read beside them. Dates are written as the
// corpus writes them: a day alone is its whole day.
func TestProposeWeeksAndRanges(t *testing.T) {
	t.Parallel()
	const (
		mon9Nov = "2026-11-09T10:00" // a Monday
		wed2Dec = "2026-12-02T10:00" // a Wednesday
	)
	zones := map[string]string{"GB": "Europe/London", "US": "America/New_York", "DE": "Europe/Berlin", "FR": "Europe/Paris", "ES": "Europe/Madrid", "NL": "Europe/Amsterdam"}
	for _, tc := range []struct {
		country, sent, text string
		earliest, latest    string
		avail               string
	}{
		{"GB", mon9Nov, "Could I come a week on Tuesday? Mornings ideally.", "2026-11-17", "2026-11-17T12:00", ""},
		{"GB", mon9Nov, "Saturday week if you can", "2026-11-21", "2026-11-21", ""},
		{"GB", mon9Nov, "Tuesday week?", "2026-11-17", "2026-11-17", ""},
		{"GB", mon9Nov, "A week today would be ideal", "2026-11-16", "2026-11-16", ""},
		{"GB", mon9Nov, "a fortnight tomorrow", "2026-11-24", "2026-11-24", ""},
		{"GB", mon9Nov, "two weeks on Friday", "2026-11-27", "2026-11-27", ""},
		{"US", mon9Nov, "A week from Thursday works", "2026-11-19", "2026-11-19", ""},
		{"GB", mon9Nov, "a fortnight from now", "2026-11-23", "2026-11-29", ""},
		{"GB", mon9Nov, "I can come once a week on Tuesday", "2026-11-10", "2026-11-10", ""},
		{"GB", mon9Nov, "Sometime between now and Friday? After 4pm works.", "2026-11-09", "2026-11-13", "Sun,Mon,Tue,Wed,Thu,Fri,Sat 16:00-24:00"},
		{"GB", mon9Nov, "any time from now until the end of the month", "2026-11-09", "2026-11-30", ""},
		{"GB", mon9Nov, "from today until Friday", "2026-11-09", "2026-11-13", ""},
		{"GB", mon9Nov, "in ten days", "2026-11-19", "2026-11-19", ""},
		{"GB", mon9Nov, "any day until the 20th", "", "2026-11-20", ""},
		{"GB", mon9Nov, "any day after the 15th", "2026-11-16", "", ""},
		{"GB", mon9Nov, "this weekend", "2026-11-14", "2026-11-15", ""},
		{"GB", mon9Nov, "end of the month", "2026-11-21", "2026-11-30", ""},
		{"GB", mon9Nov, "the week after next", "2026-11-23", "2026-11-29", ""},
		{"GB", wed2Dec, "Monday 4 to Friday 8 January", "2027-01-04", "2027-01-08", ""},
		{"GB", wed2Dec, "between Monday 4th and Friday 8th January", "2027-01-04", "2027-01-08", ""},
		{"FR", wed2Dec, "Je suis disponible du lundi 4 au vendredi 8 janvier, de préférence le matin.", "2027-01-04", "2027-01-08", "Sun,Mon,Tue,Wed,Thu,Fri,Sat 00:00-12:00"},
		{"FR", wed2Dec, "du 4 janvier au 8 janvier", "2027-01-04", "2027-01-08", ""},
		{"DE", wed2Dec, "Ich kann von Montag, 4. bis Freitag, 8. Januar.", "2027-01-04", "2027-01-08", ""},
		{"ES", wed2Dec, "Puedo del lunes 4 al viernes 8 de enero.", "2027-01-04", "2027-01-08", ""},
		{"ES", wed2Dec, "del 4 de enero al 8 de enero", "2027-01-04", "2027-01-08", ""},
		{"NL", wed2Dec, "Ik kan van maandag 4 tot vrijdag 8 januari.", "2027-01-04", "2027-01-08", ""},
		{"FR", mon9Nov, "mardi en huit", "2026-11-17", "2026-11-17", ""},
		{"DE", mon9Nov, "Dienstag in einer Woche", "2026-11-17", "2026-11-17", ""},
		{"NL", mon9Nov, "dinsdag over een week", "2026-11-17", "2026-11-17", ""},
		{"FR", mon9Nov, "d'ici vendredi si possible", "2026-11-09", "2026-11-13", ""},
		{"DE", mon9Nov, "zwischen jetzt und Freitag", "2026-11-09", "2026-11-13", ""},
		{"ES", mon9Nov, "de aquí al viernes", "2026-11-09", "2026-11-13", ""},
		{"NL", mon9Nov, "tussen nu en vrijdag", "2026-11-09", "2026-11-13", ""},
		{"GB", mon9Nov, "Between now and then I'm busy, but Thursday works", "2026-11-12", "2026-11-12", ""},
		{"GB", mon9Nov, "sometime in the first week of December", "2026-12-01", "2026-12-07", ""},
		{"GB", mon9Nov, "the last week of December", "2026-12-25", "2026-12-31", ""},
		{"GB", mon9Nov, "the second week of November", "2026-11-09", "2026-11-14", ""},
		{"FR", mon9Nov, "la première semaine de décembre", "2026-12-01", "2026-12-07", ""},
		{"FR", mon9Nov, "la première semaine d'avril", "2027-04-01", "2027-04-07", ""},
		{"ES", mon9Nov, "la primera semana de diciembre", "2026-12-01", "2026-12-07", ""},
		{"NL", mon9Nov, "de eerste week van december", "2026-12-01", "2026-12-07", ""},
		{"DE", mon9Nov, "in der ersten Woche im Dezember", "2026-12-01", "2026-12-07", ""},
		{"GB", mon9Nov, "tomorrow, late afternoon", "2026-11-10T15:00", "2026-11-10T17:00", ""},
		{"FR", mon9Nov, "demain en fin d'après-midi", "2026-11-10T15:00", "2026-11-10T17:00", ""},
		{"DE", mon9Nov, "morgen am späten Nachmittag", "2026-11-10T15:00", "2026-11-10T17:00", ""},
		{"NL", mon9Nov, "morgen laat in de middag", "2026-11-10T15:00", "2026-11-10T17:00", ""},
		{"GB", mon9Nov, "a table the weekend after next", "2026-11-28", "2026-11-29", ""},
		{"GB", mon9Nov, "w/c 16/11 please", "2026-11-16", "2026-11-22", ""},
		{"NL", mon9Nov, "ergens vóór de 20e", "", "2026-11-19", ""},
		{"NL", mon9Nov, "kan het nog voor de 20e?", "", "2026-11-19", ""},
		{"GB", mon9Nov, "sometime in the next fortnight", "2026-11-09", "2026-11-23", ""},
		{"DE", mon9Nov, "Geht es in der ersten Dezemberwoche?", "2026-12-01", "2026-12-07", ""},
		{"GB", mon9Nov, "I hurt my back on Saturday and would like to come in on Thursday", "2026-11-12", "2026-11-12", ""},
		{"GB", mon9Nov, "I've hurt my knee and would like an assessment in the next fortnight", "2026-11-09", "2026-11-23", ""},
	} {
		loc, err := time.LoadLocation(zones[tc.country])
		if err != nil {
			t.Fatal(err)
		}
		sent, err := time.ParseInLocation("2006-01-02T15:04", tc.sent, loc)
		if err != nil {
			t.Fatal(err)
		}
		e, err1 := bound(tc.earliest, loc, false)
		l, err2 := bound(tc.latest, loc, true)
		if err1 != nil || err2 != nil {
			t.Fatalf("%q: bad expectation: %v %v", tc.text, err1, err2)
		}
		p := parse.Propose(parse.Input{Text: tc.text, FromAddress: "jo@example.com", Sent: sent}, parse.Business{Location: loc, Country: tc.country})
		var av []string
		for _, a := range p.Availability {
			var ds []string
			for _, x := range a.Days {
				ds = append(ds, x.String()[:3])
			}
			av = append(av, strings.Join(ds, ",")+" "+a.From.String()+"-"+a.To.String())
		}
		if !p.Earliest.Equal(e) || !p.Latest.Equal(l) || strings.Join(av, "; ") != tc.avail {
			t.Errorf("%s %q sent %s:\n got %s..%s avail %q\nwant %s..%s avail %q", tc.country, tc.text, tc.sent,
				p.Earliest, p.Latest, strings.Join(av, "; "), e, l, tc.avail)
		}
		for _, pr := range p.Problems {
			if strings.HasPrefix(pr, "I wasn't sure") {
				t.Errorf("%s %q: unsure without cause: %q", tc.country, tc.text, pr)
			}
		}
	}
}

// TestProposePartySizeForeign covers counts written in German, French,
// Spanish and Dutch, and numbers there that count something else.
func TestProposePartySizeForeign(t *testing.T) {
	t.Parallel()
	b := salon(t)
	sent := time.Date(2026, 3, 5, 10, 0, 0, 0, b.Location)
	for _, tc := range []struct {
		text string
		n    int
	}{
		{"¿Tendríais mesa para cuatro el sábado?", 4},
		{"Somos un grupo de 14 personas.", 14},
		{"¿Tenéis sitio mañana? Somos tres.", 3},
		{"Seríamos 6 personas, a partir de las 21h.", 6},
		{"Mi marido y yo queremos cenar.", 2},
		{"Une table pour deux samedi soir ?", 2},
		{"Nous serons trois.", 3},
		{"Un dîner pour deux personnes.", 2},
		{"Je viendrai avec ma fille.", 2},
		{"Einen Tisch für 4, bitte.", 4},
		{"Wir sind zu dritt.", 3},
		{"Ein Platz im Kurs für mich und meinen Mann.", 2},
		{"Meine Freundin und ich würden gern kommen.", 2},
		{"Een tafel voor twee personen graag.", 2},
		{"We komen met z'n drieën.", 3},
		{"Ik kom met mijn vriendin.", 2},
		{"We zijn met vier personen.", 4},
		{"Ich komme gern zu Ihnen, wir sind zu viert.", 4},
		{"Ich komme mit meinem Auto und mit meiner Schwester.", 2},
		{"Wir sind 5 Minuten entfernt.", 1},
		{"Nous sommes le 3 mars.", 1},
		{"Ich komme um zwölf.", 1},
		{"Somos 2 horas de viaje.", 1},
	} {
		p := parse.Propose(parse.Input{Text: tc.text, FromAddress: "jo@example.com", Sent: sent}, b)
		if p.PartySize != tc.n {
			t.Errorf("%q: party %d, want %d", tc.text, p.PartySize, tc.n)
		}
	}
}

// TestProposeUnsureDates: where the dates could be read more than one way,
// or not at all, the proposal says so in words and with a low confidence
// instead of passing its guess off as read.
func TestProposeUnsureDates(t *testing.T) {
	t.Parallel()
	b := salon(t)
	sent := time.Date(2026, 3, 5, 10, 0, 0, 0, b.Location) // a Thursday
	for _, tc := range []struct {
		country, text string
		unsure        string // the phrase quoted back, or "" when the dates are sure
	}{
		{"", "Could I come in on 04/05?", "04/05"},       // no country: day or month first?
		{"CA", "Could I come in on 04/05?", "04/05"},     // Canada writes both
		{"GB", "Could I come in on 04/05?", ""},          // the 4th of May
		{"US", "Could I come in on 04/05?", ""},          // the 5th of April
		{"GB", "Can I come in on Thursday?", "Thursday"}, // today, or a week today?
		{"GB", "Can I come in on Friday?", ""},
		{"GB", "next Saturday please", "next Saturday"}, // this Saturday is still to come
		{"GB", "next Tuesday please", ""},
		{"GB", "Friday 12th if you can", "Friday 12th"}, // the 12th is a Thursday
		{"GB", "Thursday 12th if you can", ""},
		{"GB", "on the 31st of April", "31st of April"},
		{"GB", "any day before Easter", "Easter"},
		{"GB", "Could I come on the 9th? The 30th would suit me too.", "the 9th"},
		{"GB", "tomorrow after 2", ""},
		{"GB", "a week on Thursday", "a week on Thursday"}, // written on a Thursday: which one?
		{"GB", "Thursday week", "Thursday week"},
		{"GB", "a week on Friday", ""},
		{"GB", "Monday 4th to Friday 8th May", ""}, // the 4th is a Monday once May is read
		{"DE", "von Montag, 4. bis Freitag, 8. Mai", ""},
	} {
		b.Country = tc.country
		p := parse.Propose(parse.Input{Text: tc.text, FromAddress: "jo@example.com", Sent: sent}, b)
		var said string
		for _, pr := range p.Problems {
			if strings.HasPrefix(pr, "I wasn't sure of the dates: ") && strings.HasSuffix(pr, "; please check them") {
				said = pr
			}
		}
		conf := p.Confidence[parse.FieldEarliest]
		switch {
		case tc.unsure == "" && said != "":
			t.Errorf("%s %q: unsure without cause: %q", tc.country, tc.text, said)
		case tc.unsure == "" && conf < 0.5:
			t.Errorf("%s %q: confidence %v for sure dates", tc.country, tc.text, conf)
		case tc.unsure != "" && !strings.Contains(said, tc.unsure):
			t.Errorf("%s %q: want a problem quoting %q, got %q", tc.country, tc.text, tc.unsure, p.Problems)
		case tc.unsure != "" && (conf > 0.3 || p.Confidence[parse.FieldLatest] > 0.3):
			t.Errorf("%s %q: confidence %v/%v for unsure dates", tc.country, tc.text, conf, p.Confidence[parse.FieldLatest])
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
	// The other languages and the shapes canonical and keepTokens read.
	f.Add("nächste Woche Dienstag, ab dem 5. Mai, nicht am 28.11., den 10. Geburtstag", "", "", "", "", int64(1773666120))
	f.Add("du 12 au 15 octobre, l'après-midi, sinon la veille au soir; après-demain à 17h30", "", "", "", "", int64(1773666120))
	f.Add("el próximo martes por la mañana, del 2 al 6 de enero, si no Nochevieja", "", "", "", "", int64(1773666120))
	f.Add("tussen 2 en 6 november 's middags, volgende week dinsdag t/m donderdag", "", "", "", "", int64(1773666120))
	f.Add("the twenty-first? 2026-10-10\nKind regards,\nJo\nOut of office 1-4 May\nP.S. or the day after tomorrow\nOn Mon, 5 Oct, X wrote:\n> 3rd", "", "", "", "", int64(1773666120))
	f.Add("From: a\nDate: ma 5 okt 2026\nSubject: b\n\nin two weeks' time, that morning, the Friday before", "", "", "", "", int64(1773666120))
	f.Add("a week on Tuesday, Saturday week, a fortnight from now, between now and Friday, now till the 20th; Monday 28 to Friday 1 January", "", "", "", "", int64(1773666120))
	f.Add("du lundi 4 au vendredi 8 janvier, mardi en huit, d'ici vendredi; von Montag, 4. bis Freitag, 8. Januar, wir sind zu dritt", "", "", "", "", int64(1773666120))
	f.Add("del lunes 4 al viernes 8 de enero, mesa para cuatro, somos 20; van maandag 4 tot vrijdag 8 januari, met z'n drieën", "", "", "", "", int64(1773666120))
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

// TestProposeTune4Rules covers the rules added for inbox-tune4: a part of
// next month, the week of a day in French and Spanish, counts of days in
// number words, French hour ranges, weekday evenings, "that Friday" after
// a day, phone numbers joined by a dash, and party sizes after a meal or
// a trailing "for three". Sent on Wednesday 14 April 2027 at 10:00.
func TestProposeTune4Rules(t *testing.T) {
	t.Parallel()
	b := salon(t)
	sent := time.Date(2027, 4, 14, 10, 0, 0, 0, b.Location)
	d := func(m time.Month, day, h, min int) time.Time {
		return time.Date(2027, m, day, h, min, 0, 0, b.Location)
	}
	end := func(m time.Month, day int) time.Time { return d(m, day+1, 0, 0).Add(-time.Microsecond) }
	for _, tc := range []struct {
		text             string
		earliest, latest time.Time
		party            int
		avail            string
	}{
		{"early next month", d(5, 1, 0, 0), end(5, 10), 1, ""},
		{"late next month", d(5, 21, 0, 0), end(5, 31), 1, ""},
		{"sometime next month", d(5, 1, 0, 0), end(5, 31), 1, ""},
		{"Anfang nächsten Monats", d(5, 1, 0, 0), end(5, 10), 1, ""},
		{"fin du mois prochain", d(5, 21, 0, 0), end(5, 31), 1, ""},
		{"début du mois prochain", d(5, 1, 0, 0), end(5, 10), 1, ""},
		{"a finales del mes que viene", d(5, 21, 0, 0), end(5, 31), 1, ""},
		{"begin volgende maand", d(5, 1, 0, 0), end(5, 10), 1, ""},
		{"la semaine du 26", d(4, 26, 0, 0), end(5, 2), 1, ""},
		{"la semana del 26", d(4, 26, 0, 0), end(5, 2), 1, ""},
		{"in zehn Tagen", d(4, 24, 0, 0), end(4, 24), 1, ""},
		{"dans dix jours", d(4, 24, 0, 0), end(4, 24), 1, ""},
		{"dentro de diez días", d(4, 24, 0, 0), end(4, 24), 1, ""},
		{"over tien dagen", d(4, 24, 0, 0), end(4, 24), 1, ""},
		{"in acht Tagen", d(4, 19, 0, 0), end(4, 25), 1, ""}, // a week, as before
		{"samedi de 12h à 14h", d(4, 17, 12, 0), d(4, 17, 14, 0), 1, ""},
		{"n'importe quel soir de semaine", time.Time{}, time.Time{}, 1, "Mon,Tue,Wed,Thu,Fri 17:00-24:00"},
		{"elke doordeweekse avond", time.Time{}, time.Time{}, 1, "Mon,Tue,Wed,Thu,Fri 17:00-24:00"},
		{"In twelve days? I'm off that Monday.", d(4, 26, 0, 0), end(4, 26), 1, ""},
		{"Kerkstraat 12\n06-12345678", time.Time{}, time.Time{}, 1, ""},
		{"Dinner on Saturday at 8pm for three.", d(4, 17, 19, 30), d(4, 17, 20, 30), 3, ""},
		{"Una cena para seis el sábado", d(4, 17, 0, 0), end(4, 17), 6, ""},
		{"Un dîner pour quatre samedi", d(4, 17, 0, 0), end(4, 17), 4, ""},
		{"We are staying for two weeks.", time.Time{}, time.Time{}, 1, ""},
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
		if !p.Earliest.Equal(tc.earliest) || !p.Latest.Equal(tc.latest) || p.PartySize != tc.party || strings.Join(av, "; ") != tc.avail {
			t.Errorf("%q:\n got %s..%s party %d avail %q\nwant %s..%s party %d avail %q",
				tc.text, p.Earliest, p.Latest, p.PartySize, strings.Join(av, "; "), tc.earliest, tc.latest, tc.party, tc.avail)
		}
	}
}
