package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nextup-dev/nextup/cost"
)

// runCost prints the reference AWS deployment's monthly bill (package
// cost) for one or more numbers of waitlist entries a month.
func runCost(args []string, stdout io.Writer) error {
	d := cost.Defaults()
	fs := newFlagSet("cost")
	entries := fs.String("entries", strconv.Itoa(d.Entries), "waitlist entries a month; several, comma-separated, print side by side")
	smsShare := fs.Float64("sms-share", d.SMSShare, "share of the messages to people that go by text, 0..1")
	region := fs.String("region", d.Region, "AWS region of the prices: "+strings.Join(cost.Regions(), ", "))
	country := fs.String("country", d.Country, "country the texts go to: "+strings.Join(cost.Countries(), ", "))
	sheet := fs.Bool("sheet-sync", false, "the sheet mirror is on (a sync every 3 minutes)")
	model := fs.Bool("model-parser", false, "forwarded booking requests are read by a Bedrock model")
	free := fs.Bool("free-tier", false, "subtract AWS's always-free monthly allowances")
	noNumber := fs.Bool("no-sms-number", false, "texts from SNS's shared pool, without the number of one's own that US and Canadian texts need since 2023 (the seed's assumption)")
	asJSON := fs.Bool("json", false, `print {"entries","total_usd","lines":[{"item","usd",…}],…} (one object a line for several)`)
	if err := parseFlags(fs, args); err != nil {
		var help helpRequest
		if errors.As(err, &help) {
			help.print(stdout)
			fmt.Fprint(stdout, "\n"+d.Explain())
			return nil
		}
		return err
	}
	var ns []int
	for _, f := range strings.Split(*entries, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return usageError{fmt.Sprintf("cost: --entries wants whole numbers of zero or more, not %q", f)}
		}
		ns = append(ns, n)
	}
	var bills []cost.Bill
	for _, n := range ns {
		a := d
		a.Entries, a.SMSShare, a.Region, a.Country = n, *smsShare, *region, strings.ToUpper(*country)
		a.SheetSync, a.ModelParser, a.FreeTier, a.NoSMSNumber = *sheet, *model, *free, *noNumber
		b, err := cost.Estimate(a)
		if err != nil {
			return usageError{"cost: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
		}
		bills = append(bills, b)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, b := range bills {
			if err := enc.Encode(b); err != nil {
				return err
			}
		}
		return nil
	}
	return printBills(stdout, bills)
}

// printBills writes the bills as one table, a column of dollars per bill.
func printBills(w io.Writer, bills []cost.Bill) error {
	b0 := bills[0]
	sms, _ := cost.CountrySMS(b0.Country)
	free := "free tiers not applied"
	if b0.FreeTier {
		free = "always-free allowances subtracted"
	}
	fmt.Fprintf(w, "nextup's AWS deployment, a month's bill in USD (%s; %.0f%% of messages by text, to %s; %s)\n\n",
		b0.Region, b0.SMSShare*100, sms.Name, free)
	items := []string{"waitlist entries a month"}
	for _, l := range b0.Lines {
		mark := ""
		if l.Approx {
			mark = " ~"
		}
		items = append(items, l.Item+mark)
	}
	items = append(items, "total")
	width := 0
	for _, it := range items {
		width = max(width, utf8.RuneCountInString(it))
	}
	for i, it := range items {
		fmt.Fprintf(w, "  %s%s", it, strings.Repeat(" ", width-utf8.RuneCountInString(it)))
		for _, b := range bills {
			switch {
			case i == 0:
				fmt.Fprintf(w, " %9s", thousands(b.Entries))
			case i == len(items)-1:
				fmt.Fprintf(w, " %9s", dollars(b.TotalUSD))
			default:
				fmt.Fprintf(w, " %9s", dollars(b.Lines[i-1].USD))
			}
		}
		if len(bills) == 1 && i > 0 && i < len(items)-1 {
			fmt.Fprintf(w, "   %s", b0.Lines[i-1].Quantity)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n~ an approximate price. Public list prices as of %s; where each comes from, and every\n"+
		"assumption (per entry: offers, messages, claims, page views…): nextup cost --help.\n", b0.PriceDate)
	return nil
}

// dollars is $1.23, or <$0.01 for a line too small to show.
func dollars(usd float64) string {
	switch {
	case usd == 0:
		return "$0.00"
	case usd < 0.005:
		return "<$0.01"
	}
	return fmt.Sprintf("$%.2f", usd)
}

// thousands is n with thousands separated: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
