package cli

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// TestCostJSON: `nextup cost --json` is {"entries","total_usd","lines":
// [{"item","usd"}]} (API.md), its lines add up to its total, and several
// --entries give one object a line.
func TestCostJSON(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "cost", "--entries", "2000", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, k := range []string{"entries", "total_usd", "lines"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("no %q in %s", k, out)
		}
	}
	var bill struct {
		Entries  int     `json:"entries"`
		TotalUSD float64 `json:"total_usd"`
		Lines    []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &bill); err != nil {
		t.Fatal(err)
	}
	if bill.Entries != 2000 || len(bill.Lines) < 10 {
		t.Fatalf("bill: %+v", bill)
	}
	var sum float64
	for _, l := range bill.Lines {
		item, ok1 := l["item"].(string)
		usd, ok2 := l["usd"].(float64)
		if !ok1 || !ok2 || item == "" {
			t.Errorf("a line without its item and usd: %v", l)
		}
		sum += usd
	}
	if math.Abs(sum-bill.TotalUSD) > 1e-5 {
		t.Errorf("the lines add up to %v, the total is %v", sum, bill.TotalUSD)
	}

	out, err = runCLI(t, "cost", "--entries", "200,2000,10000", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d objects for three --entries:\n%s", len(lines), out)
	}
	prev := 0.0
	for i, l := range lines {
		var b struct {
			Entries  int     `json:"entries"`
			TotalUSD float64 `json:"total_usd"`
		}
		if err := json.Unmarshal([]byte(l), &b); err != nil {
			t.Fatal(err)
		}
		if b.Entries != []int{200, 2000, 10000}[i] || b.TotalUSD <= prev {
			t.Errorf("object %d: %+v after a total of %v", i, b, prev)
		}
		prev = b.TotalUSD
	}
}

func TestCostText(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "cost")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"waitlist entries a month", "200", "Lambda requests", "DynamoDB writes", "EventBridge Scheduler",
		"SES outbound", "SNS texts to United States", "Secrets Manager", "AWS Budgets", "total", "$", "nextup cost --help"} {
		if !strings.Contains(out, want) {
			t.Errorf("the bill lacks %q:\n%s", want, out)
		}
	}
	out, err = runCLI(t, "cost", "--entries", "200,2000,10000", "--region", "eu-west-2", "--country", "gb", "--model-parser")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"eu-west-2", "United Kingdom", "10,000", "Bedrock"} {
		if !strings.Contains(out, want) {
			t.Errorf("the bill lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SMS origination") {
		t.Errorf("a UK sender ID costs nothing, yet:\n%s", out)
	}
}

// TestCostHelp: --help lists the flags and every assumption, with where
// the prices come from.
func TestCostHelp(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "cost", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-sms-share", "-region", "-entries", "offers", "claimed", "reminders per booking",
		"status page views", "claim page views", "text parts", "approximate", "as of 2026", "Free tiers", "make coldstart"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestCostBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--region", "mars-north-1"}, {"--sms-share", "1.5"}, {"--sms-share", "-0.1"}, {"--sms-share", "lots"},
		{"--entries", "many"}, {"--entries", "-5"}, {"--entries", "200,"}, {"--country", "ZZ"}, {"--nope"}, {"extra"},
	} {
		_, err := runCLI(t, append([]string{"cost"}, args...)...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("cost %v: err = %v, want a usage error (exit 2)", args, err)
		}
	}
}

// TestCostREADME: the table in README.md's "What it costs on AWS" is what
// the command it names prints today.
func TestCostREADME(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "`nextup cost --entries 200,2000,10000`:\n\n```text\n"
	readme := string(raw)
	i := strings.Index(readme, cmd)
	if i < 0 {
		t.Fatal("README.md has no table of `nextup cost --entries 200,2000,10000`")
	}
	table, _, _ := strings.Cut(readme[i+len(cmd):], "```")
	out, err := runCLI(t, "cost", "--entries", "200,2000,10000")
	if err != nil {
		t.Fatal(err)
	}
	if table != out {
		t.Errorf("README.md's table is not what the command prints now; paste this:\n%s", out)
	}
}
