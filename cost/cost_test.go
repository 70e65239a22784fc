package cost

import (
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

func estimate(t *testing.T, a Assumptions) Bill {
	t.Helper()
	b, err := Estimate(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func with(entries int, share float64) Assumptions {
	a := Defaults()
	a.Entries, a.SMSShare = entries, share
	return a
}

func TestLinesSumToTotal(t *testing.T) {
	t.Parallel()
	for _, a := range []Assumptions{with(0, 0), with(200, 0.25), with(2000, 1), with(10000, 0.5)} {
		for _, region := range Regions() {
			for _, mod := range []func(*Assumptions){
				func(*Assumptions) {},
				func(a *Assumptions) { a.SheetSync, a.ModelParser = true, true },
				func(a *Assumptions) { a.FreeTier = true },
				func(a *Assumptions) { a.Country = "GB" },
			} {
				a.Region = region
				mod(&a)
				b := estimate(t, a)
				var sum float64
				for _, l := range b.Lines {
					if l.Item == "" || l.USD < 0 || math.IsNaN(l.USD) {
						t.Errorf("%+v: a bad line %+v", a, l)
					}
					sum += l.USD
				}
				if math.Abs(sum-b.TotalUSD) > 1e-6 {
					t.Errorf("%d entries in %s: lines sum to %v, total %v", a.Entries, region, sum, b.TotalUSD)
				}
			}
		}
	}
}

// line returns the USD of the bill's line whose item starts with prefix.
func line(b Bill, prefix string) float64 {
	for _, l := range b.Lines {
		if strings.HasPrefix(l.Item, prefix) {
			return l.USD
		}
	}
	return 0
}

// TestSeedFigures: the seed (the product brief) puts the deployment at
// about $2 a month for 200 entries and $13 for 2,000. Under the defaults
// that result rests on — us-east-1, texts to the US for a quarter of the
// messages, 0.6 offers, 0.25 claims and 1.5 reminders per booking per
// entry, half the joins by the form, no free tier — the bill comes within
// half again of the seed's (between two thirds and one and a half times
// it) once the US number's $2 line, which the seed does not count, is set
// aside; with it, 200 entries cost about twice the seed. See the package
// doc, "The seed's figures".
func TestSeedFigures(t *testing.T) {
	t.Parallel()
	d := Defaults()
	if d.Region != "us-east-1" || d.Country != "US" || d.SMSShare != 0.25 || d.Offers() != 0.6 || d.Claims != 0.25 ||
		d.Reminders != 1.5 || d.FormShare != 0.5 || d.FreeTier {
		t.Fatalf("the defaults this test names have changed: %+v", d)
	}
	for _, c := range []struct {
		entries  int
		seed     float64
		min, max float64 // the whole bill
	}{
		{200, 2, 3, 6},
		{2000, 13, 15, 25},
	} {
		b := estimate(t, with(c.entries, d.SMSShare))
		number := line(b, "SMS origination")
		if number != 2 {
			t.Errorf("%d entries: the US number's line is $%.2f, want $2", c.entries, number)
		}
		without := b.TotalUSD - number
		t.Logf("%d entries: $%.2f ($%.2f without the US number); the seed says about $%g", c.entries, b.TotalUSD, without, c.seed)
		if without < c.seed/1.5 || without > c.seed*1.5 {
			t.Errorf("%d entries: $%.2f without the number, not near the seed's $%g", c.entries, without, c.seed)
		}
		if b.TotalUSD < c.min || b.TotalUSD > c.max {
			t.Errorf("%d entries: $%.2f in all, want $%g to $%g", c.entries, b.TotalUSD, c.min, c.max)
		}
		// Most of it is texts and the fixed costs (the secret, the
		// number), as the seed says.
		if most := line(b, "SNS texts") + number + line(b, "Secrets Manager"); most < 0.8*b.TotalUSD {
			t.Errorf("%d entries: texts, number and secret are $%.2f of $%.2f", c.entries, most, b.TotalUSD)
		}
	}
	// Without texts there is no number to rent, and the bill is small.
	if b := estimate(t, with(2000, 0)); b.TotalUSD > 3 || line(b, "SMS origination") != 0 {
		t.Errorf("2,000 entries by email alone: $%.2f", b.TotalUSD)
	}
}

// TestSeedFiguresReproduced: under the seed's own assumptions — texts
// without a number of one's own (--no-sms-number) and about one text part
// for every one and a half entries (--sms-share 0.15), the rest the
// defaults — the model gives the seed's figures: about $2 at 200 entries
// and about $13 at 2,000 (within 15%).
func TestSeedFiguresReproduced(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entries int
		seed    float64
	}{{200, 2}, {2000, 13}} {
		a := with(c.entries, 0.15)
		a.NoSMSNumber = true
		b := estimate(t, a)
		t.Logf("%d entries under the seed's assumptions: $%.2f; the seed says about $%g", c.entries, b.TotalUSD, c.seed)
		if b.TotalUSD < c.seed*0.85 || b.TotalUSD > c.seed*1.15 {
			t.Errorf("%d entries: $%.2f under the seed's assumptions, want within 15%% of $%g", c.entries, b.TotalUSD, c.seed)
		}
		if line(b, "SMS origination") != 0 {
			t.Errorf("%d entries: a number's line without a number", c.entries)
		}
	}
}

func TestMonotonic(t *testing.T) {
	t.Parallel()
	for _, country := range []string{"US", "GB"} {
		for _, share := range []float64{0, 0.25, 1} {
			prev := -1.0
			for n := 0; n <= 20000; n += 50 {
				a := with(n, share)
				a.Country = country
				b := estimate(t, a)
				if b.TotalUSD < prev {
					t.Fatalf("%s, share %v: %d entries cost $%v, less than %d entries' $%v", country, share, n, b.TotalUSD, n-50, prev)
				}
				prev = b.TotalUSD
			}
		}
		for _, n := range []int{0, 200, 2000, 10000} {
			prev := -1.0
			for i := 0; i <= 20; i++ {
				a := with(n, float64(i)/20)
				a.Country = country
				b := estimate(t, a)
				if b.TotalUSD < prev {
					t.Fatalf("%s, %d entries: share %v costs $%v, less than the share before's $%v", country, n, a.SMSShare, b.TotalUSD, prev)
				}
				prev = b.TotalUSD
			}
		}
	}
}

func TestOptionsAddTheirLines(t *testing.T) {
	t.Parallel()
	base := estimate(t, with(2000, 0.25))
	a := with(2000, 0.25)
	a.ModelParser, a.SheetSync = true, true
	more := estimate(t, a)
	if line(more, "Bedrock") <= 0 || line(base, "Bedrock") != 0 {
		t.Errorf("the model parser's line: %v on, %v off", line(more, "Bedrock"), line(base, "Bedrock"))
	}
	if line(more, "EventBridge Scheduler") <= line(base, "EventBridge Scheduler") {
		t.Error("the sheet mirror adds no Scheduler invocations")
	}
	a = with(2000, 0.25)
	a.FreeTier = true
	if free := estimate(t, a); free.TotalUSD >= base.TotalUSD || line(free, "SQS") != 0 {
		t.Errorf("the free tier: $%.2f against $%.2f, SQS $%v", free.TotalUSD, base.TotalUSD, line(free, "SQS"))
	}
	for _, r := range Regions() {
		a := with(2000, 0.25)
		a.Region = r
		if b := estimate(t, a); b.Region != r || b.TotalUSD <= 0 {
			t.Errorf("%s: %+v", r, b)
		}
	}
	for _, c := range Countries() {
		a := with(2000, 0.25)
		a.Country = strings.ToLower(c)
		if b := estimate(t, a); b.Country != c || line(b, "SNS texts") <= 0 {
			t.Errorf("%s: %+v", c, b)
		}
	}
}

func TestBadAssumptions(t *testing.T) {
	t.Parallel()
	for name, mod := range map[string]func(*Assumptions){
		"negative entries":   func(a *Assumptions) { a.Entries = -1 },
		"share above one":    func(a *Assumptions) { a.SMSShare = 1.01 },
		"negative share":     func(a *Assumptions) { a.SMSShare = -0.1 },
		"share not a number": func(a *Assumptions) { a.SMSShare = math.NaN() },
		"unknown region":     func(a *Assumptions) { a.Region = "mars-north-1" },
		"unknown country":    func(a *Assumptions) { a.Country = "ZZ" },
		"claims past releases": func(a *Assumptions) {
			a.Claims = a.Releases + 0.1
		},
		"form share above one": func(a *Assumptions) { a.FormShare = 2 },
	} {
		a := Defaults()
		mod(&a)
		if _, err := Estimate(a); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestDocAgreesWithExplain: the package doc's two tables (what an entry
// brings about, its messages) are the rows `nextup cost --help` prints.
func TestDocAgreesWithExplain(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	space := regexp.MustCompile(`\s+`)
	doc := space.ReplaceAllString(string(raw), " ")
	checked, in := 0, false
	for _, l := range strings.Split(Defaults().Explain(), "\n") {
		switch {
		case strings.HasPrefix(l, "What one waitlist entry"), strings.HasPrefix(l, "a text with a link"):
			in = true
		case l == "":
			in = false
		case in && strings.HasPrefix(l, "  "):
			checked++
			if row := space.ReplaceAllString(strings.TrimSpace(l), " "); !strings.Contains(doc, row) {
				t.Errorf("doc.go lacks the row %q of Explain", row)
			}
		}
	}
	if checked < 15 {
		t.Fatalf("%d rows checked, want both tables", checked)
	}
}
