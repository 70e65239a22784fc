package parse_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/mailmsg"
	"github.com/nextup-dev/nextup/intake/parse"
)

const (
	corpus   = "../testdata/inbox"
	holdout  = "../testdata/inbox-holdout"
	holdout2 = "../testdata/inbox-holdout2"
	// after is a smaller set written once the parser changes for the
	// second held-out set were done; scored once unread, it has been
	// tuning data since (inbox-holdout2/README.md).
	after = "../testdata/inbox-holdout2/after"
	// holdout3 was written blind, by someone who had not seen the
	// parser's code or output; it was spent on 6 December 2026, when its
	// misses were read to tune the parser (its README).
	holdout3 = "../testdata/inbox-holdout3"
	// holdout4 was written blind too, and spent the same day (its
	// README).
	holdout4 = "../testdata/inbox-holdout4"
	// tune4 is a tuning set of phrasings the earlier sets lack, in all
	// five languages (inbox-tune4/README.md); it was written to tune on.
	tune4 = "../testdata/inbox-tune4"
	// tune5 is a second tuning set of phrasings the earlier sets lack
	// (inbox-tune5/README.md); it was written to tune on.
	tune5 = "../testdata/inbox-tune5"
	// holdout5 was written blind while the parser was tuned on holdout3
	// and holdout4, by someone who had seen neither the parser nor those
	// sets, and is scored on its totals only (its README).
	holdout5 = "../testdata/inbox-holdout5"
	// holdout6 was written blind while the parser was tuned on holdout5;
	// it was spent on 7 December 2026, when its misses were read to tune
	// the parser (its README).
	holdout6 = "../testdata/inbox-holdout6"
	// holdout7 was written blind while the parser was tuned on holdout6,
	// and is scored on its totals only (its README).
	holdout7 = "../testdata/inbox-holdout7"
)

type corpusBusiness struct {
	Timezone string           `json:"timezone"`
	Country  string           `json:"country"`
	Services []nextup.Service `json:"services"`
	Staff    []string         `json:"staff"`
}

type corpusCase struct {
	Business string         `json:"business"`
	Note     string         `json:"note"`
	Expect   map[string]any `json:"expect"`
}

// fields is every field the corpus states, each compared exactly.
var fields = []string{"name", "email", "phone", "service", "party_size", "earliest", "latest", "staff", "availability"}

func loadBusinesses(t testing.TB, dir string) map[string]parse.Business {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "businesses.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]corpusBusiness
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]parse.Business{}
	for k, v := range raw {
		loc, err := time.LoadLocation(v.Timezone)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = parse.Business{Location: loc, Country: v.Country, Services: v.Services, Staff: v.Staff}
	}
	return out
}

// input is how the inbox lane will feed the parser what mailmsg found.
func input(r mailmsg.Request) parse.Input {
	return parse.Input{
		Text: r.Body, Signature: r.Signature, Subject: r.Subject, Reply: r.Reply,
		FromName: r.From.Name, FromAddress: r.From.Address, Sent: r.Sent,
	}
}

// bound reads a corpus date: "" (none), "2026-03-10" (the start of that
// day, or its end for latest) or "2026-03-10T15:00" (that time), in the
// business timezone.
func bound(s string, loc *time.Location, latest bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04", s, loc); err == nil {
		return t, nil
	}
	return nextup.ParseBound(s, loc, latest)
}

var dayNames = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// formatAvailability writes windows the way the corpus does: "daily
// 17:00-24:00; Sat,Sun 00:00-24:00", Monday first, windows sorted.
func formatAvailability(av []nextup.Availability) string {
	var parts []string
	for _, a := range av {
		set := map[time.Weekday]bool{}
		for _, d := range a.Days {
			set[d] = true
		}
		var ds []string
		for _, d := range []time.Weekday{1, 2, 3, 4, 5, 6, 0} {
			if set[d] {
				ds = append(ds, dayNames[d])
			}
		}
		days := strings.Join(ds, ",")
		if len(ds) == 7 {
			days = "daily"
		}
		parts = append(parts, fmt.Sprintf("%s %s-%s", days, a.From, a.To))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func sortedParts(s string) string {
	if s == "" {
		return ""
	}
	p := strings.Split(s, "; ")
	sort.Strings(p)
	return strings.Join(p, "; ")
}

func got(p parse.Proposal, field string) string {
	switch field {
	case "name":
		return p.Name
	case "email":
		return p.Email
	case "phone":
		return p.Phone
	case "service":
		return p.Service
	case "party_size":
		return fmt.Sprint(p.PartySize)
	case "staff":
		return p.Staff
	case "availability":
		return formatAvailability(p.Availability)
	}
	panic(field)
}

// TestCorpusAccuracy runs every corpus email through mailmsg and parse and
// compares each stated field exactly. It reports the accuracy per field
// and fails below 90% of all fields right.
func TestCorpusAccuracy(t *testing.T) {
	s := score(t, corpus)
	if s.cases < 60 {
		t.Fatalf("corpus has %d emails, want at least 60", s.cases)
	}
	if s.acc < 0.90 {
		t.Errorf("corpus accuracy %.1f%% is below 90%%", 100*s.acc)
	}
}

// TestHoldoutAccuracy scores the emails written after the parser and kept
// out of its tuning until 6 December 2026, when their date misses were read
// with those of inbox-holdout3 and inbox-holdout4 to tune it; they are one
// more training set since. Its figure is reported, not enforced.
func TestHoldoutAccuracy(t *testing.T) {
	score(t, holdout)
}

// TestHoldout2DateAccuracy scores the second held-out set, written before
// the parser learnt the phrasings it uses and since read to tune it (see
// its README), on what the parser most often gets wrong on mail it has not
// seen: the dates. A mail counts when its earliest and its latest are both
// right; below 90% fails.
func TestHoldout2DateAccuracy(t *testing.T) {
	s := dateFigure(t, holdout2, 60)
	if dates := float64(s.datesRight) / float64(max(s.cases, 1)); dates < 0.90 {
		t.Errorf("date accuracy %.1f%% on the held-out set is below 90%%", 100*dates)
	}
}

// TestHoldout2AfterAccuracy scores the mails written after the parser
// changes (inbox-holdout2/README.md). They have been read to tune the
// parser since, so its figure guards against regressions and says nothing
// of unseen mail; it is reported, not enforced.
func TestHoldout2AfterAccuracy(t *testing.T) {
	dateFigure(t, after, 0)
}

// TestHoldout3DateAccuracy scores the third held-out set: 64 requests
// written without sight of the parser (inbox-holdout3/README.md). It is
// tuning data now: on 6 December 2026 its misses were read and the parser
// tuned on them, so its figure says nothing of unseen mail any more. Its
// clean figure was 40/64 (62.5%) at its first scoring, 43/64 before the
// tuning, 62/64 after it; the two left are a reading the conventions do not
// settle ("any day until the 20th", the README). The floor holds the
// tuning's figure against regressions.
func TestHoldout3DateAccuracy(t *testing.T) {
	holdFloor(t, holdout3, 60, holdout3Floor)
}

// holdout3Floor is how many of holdout3's mails had both dates right when
// its tuning was done.
const holdout3Floor = 62

// TestTune4Accuracy scores the fourth set, written to tune the parser on
// phrasings the earlier sets lack (inbox-tune4/README.md). Being tuning
// data, its figure says nothing of unseen mail; the floor holds what the
// tuning reached.
func TestTune4Accuracy(t *testing.T) {
	holdFloor(t, tune4, 40, tune4Floor)
}

// tune4Floor is the count of tune4 mails with both dates right when its
// tuning was done.
const tune4Floor = 61

// TestTune5Accuracy scores the fifth set, written to tune the parser on
// more phrasings the earlier sets lack (inbox-tune5/README.md). Like
// tune4 it is tuning data: the floor holds what the tuning reached.
func TestTune5Accuracy(t *testing.T) {
	holdFloor(t, tune5, 30, tune5Floor)
}

// tune5Floor is the count of tune5 mails with both dates right when its
// tuning was done.
const tune5Floor = 35

// TestHoldout4DateAccuracy scores the fourth held-out set, 60 requests
// written blind (inbox-holdout4/README.md). Its clean figure, on mail the
// parser had not seen, was 49/60 (81.7%). It is tuning data now: on 6
// December 2026 its misses were read and the parser tuned on them, so its
// figure guards against regressions and says nothing of unseen mail.
func TestHoldout4DateAccuracy(t *testing.T) {
	holdFloor(t, holdout4, 60, holdout4Floor)
}

// holdout4Floor is how many of holdout4's mails had both dates right when
// its tuning was done.
const holdout4Floor = 60

// TestHoldout5DateAccuracy scores the fifth held-out set, 64 requests
// written blind (inbox-holdout5/README.md). Its clean figure, on mail the
// parser had not seen, was 52/64 (81.2%). It is tuning data now: on 6
// December 2026 its misses were read and the parser tuned on them, so its
// figure guards against regressions and says nothing of unseen mail.
func TestHoldout5DateAccuracy(t *testing.T) {
	holdFloor(t, holdout5, 60, holdout5Floor)
}

// holdout5Floor is how many of holdout5's mails had both dates right when
// its tuning was done.
const holdout5Floor = 64

// TestHoldout6DateAccuracy scores the sixth held-out set, 64 requests
// written blind (inbox-holdout6/README.md). Its clean figure, on mail the
// parser had not seen, was 49/64 (76.6%). It is tuning data now: on 7
// December 2026 its misses were read and the parser tuned on them, so its
// figure guards against regressions and says nothing of unseen mail.
func TestHoldout6DateAccuracy(t *testing.T) {
	holdFloor(t, holdout6, 60, holdout6Floor)
}

// holdout6Floor is how many of holdout6's mails had both dates right when
// its tuning was done.
const holdout6Floor = 64

// TestHoldout7DateAccuracy scores the seventh held-out set, 64 requests
// written blind on 7 December 2026 and never read to tune the parser
// (inbox-holdout7/README.md): the clean figure on unseen mail, 55/64
// (85.9%). Its misses are not to be read; the floor is its scoring.
func TestHoldout7DateAccuracy(t *testing.T) {
	holdFloor(t, holdout7, 60, holdout7Floor)
}

// holdout7Floor is how many of holdout7's mails had both dates right at
// its scoring.
const holdout7Floor = 55

// holdFloor scores dir (dateFigure) and fails when fewer than floor of its
// emails have both dates right.
func holdFloor(t *testing.T, dir string, minCases, floor int) {
	t.Helper()
	if s := dateFigure(t, dir, minCases); s.datesRight < floor {
		t.Errorf("date accuracy on %s fell to %d/%d, below its floor of %d", filepath.Base(dir), s.datesRight, s.cases, floor)
	}
}

// dateFigure scores dir, fails when it holds fewer than minCases emails,
// and logs how many have their earliest and latest both right.
func dateFigure(t *testing.T, dir string, minCases int) scored {
	t.Helper()
	s := score(t, dir)
	if s.cases < minCases {
		t.Fatalf("%s has %d emails, want at least %d", dir, s.cases, minCases)
	}
	t.Logf("earliest and latest both right: %d/%d  %5.1f%%", s.datesRight, s.cases, 100*float64(s.datesRight)/float64(max(s.cases, 1)))
	return s
}

// scored is what score found over a directory of emails.
type scored struct {
	acc        float64 // share of all fields right
	cases      int
	datesRight int // emails with earliest and latest both right
}

func score(t *testing.T, dir string) scored {
	businesses := loadBusinesses(t, dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	right, total := map[string]int{}, map[string]int{}
	valued, valuedRight := 0, 0
	cases, datesRight := 0, 0
	for _, f := range files {
		if filepath.Base(f) == "businesses.json" {
			continue
		}
		cases++
		var c corpusCase
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		biz, ok := businesses[c.Business]
		if !ok {
			t.Fatalf("%s: unknown business %q", f, c.Business)
		}
		raw, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".eml")
		if err != nil {
			t.Fatal(err)
		}
		req, err := mailmsg.Extract(raw)
		if err != nil {
			t.Errorf("%s: extract: %v", filepath.Base(f), err)
			continue
		}
		p := parse.Propose(input(req), biz)
		dateMisses := 0
		for _, field := range fields {
			want, ok := c.Expect[field]
			if !ok {
				t.Fatalf("%s: no expected %s", f, field)
			}
			total[field]++
			var match bool
			var g, w string
			switch field {
			case "earliest", "latest":
				ws, _ := want.(string)
				wt, err := bound(ws, biz.Location, field == "latest")
				if err != nil {
					t.Fatalf("%s: %s: %v", f, field, err)
				}
				gt := p.Earliest
				if field == "latest" {
					gt = p.Latest
				}
				match = gt.Equal(wt)
				w, g = ws, ""
				if !gt.IsZero() {
					g = gt.In(biz.Location).Format("2006-01-02T15:04")
				}
			case "availability":
				w, g = sortedParts(fmt.Sprint(want)), got(p, field)
				match = w == g
			default:
				w, g = fmt.Sprint(want), got(p, field)
				match = w == g
			}
			if w != "" && w != "0" {
				valued++
			}
			if match {
				right[field]++
				if w != "" && w != "0" {
					valuedRight++
				}
			} else {
				t.Logf("%s %-12s want %q, got %q  (%s)", strings.TrimSuffix(filepath.Base(f), ".json"), field, w, g, c.Note)
				if field == "earliest" || field == "latest" {
					dateMisses++
				}
			}
		}
		if dateMisses == 0 {
			datesRight++
		}
	}
	all, allRight := 0, 0
	for _, field := range fields {
		all += total[field]
		allRight += right[field]
		t.Logf("%-12s %3d/%3d  %5.1f%%", field, right[field], total[field], 100*float64(right[field])/float64(max(total[field], 1)))
	}
	acc := float64(allRight) / float64(max(all, 1))
	t.Logf("all fields   %3d/%3d  %5.1f%% over %d emails; fields with a value: %d/%d %5.1f%%",
		allRight, all, 100*acc, cases, valuedRight, valued, 100*float64(valuedRight)/float64(max(valued, 1)))
	return scored{acc: acc, cases: cases, datesRight: datesRight}
}
