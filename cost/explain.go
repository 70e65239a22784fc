package cost

import (
	"fmt"
	"strings"
	"time"
)

// Explain is every assumption of a, with its value and why, and where the
// prices and the measured figures come from: what `nextup cost --help`
// prints after its flags.
func (a Assumptions) Explain() string {
	var b strings.Builder
	row := func(what string, v any, why string) {
		fmt.Fprintf(&b, "  %-46s %-8v %s\n", what, v, why)
	}
	b.WriteString("What one waitlist entry brings about in its month (defaults: a hair salon's):\n")
	row("joins through the public form", a.FormShare, "the rest are added by staff, the API or an import")
	row("slots released to the list", a.Releases, "cancellations handed to the waitlist, per entry")
	row("offers", fmt.Sprintf("%.2g", a.Offers()), "each claimed, declined or lapsed:")
	row("  claimed", a.Claims, "a slot filled; the rest of the releases go back to staff")
	row("  declined", a.Declines, "the slot rolls on to the next person")
	row("  lapsed (the 10-minute window)", a.Expiries, "rolls on, or goes back to staff; too short a window for a follow-up")
	row("reminders per booking", a.Reminders, "a day and an hour before; a slot under a day away gets one")
	row("status page views", a.StatusViews, "the link in the form's \"you're on the list\" message")
	row("claim page views per offer", a.ClaimViews, "most people open the link")
	row("staff requests (dashboard pages, API calls)", a.StaffRequests, "")
	row("forwarded booking requests", a.InboundMail, "mail to the inbound address (SES → S3 → the inbox lane)")
	b.WriteString("\nMessages per entry, each on the person's channel (a text for the --sms-share, an email otherwise);\n" +
		"a text with a link (about 110 characters: the host and a 43-character token) goes in two parts:\n")
	for _, m := range a.messages() {
		parts := "1 text part"
		if m.parts != 1 {
			parts = fmt.Sprintf("%g text parts", m.parts)
		}
		row(m.kind, fmt.Sprintf("%.3g", m.count), parts)
	}
	row("emails to staff", fmt.Sprintf("%.2g", a.Releases-a.Claims+a.InboundMail), "a slot handed back, a forwarded request to approve")
	fmt.Fprintf(&b, "\nThe deployment (deploy/aws/template.yaml): arm64 functions of 256 MB; a Function URL; one-time\n"+
		"EventBridge Scheduler schedules per timer (an offer's expiry, a reminder; deleted when not needed, so\n"+
		"unbilled), the safety sweep every 5 minutes (8,640 a month), housekeeping daily and a monthly summary,\n"+
		"the sheet mirror every 3 minutes (--sheet-sync); an SQS send queue (each send: send, receive, delete)\n"+
		"whose Lambda trigger long-polls it (about %s requests a month, approximate); one Secrets Manager\n"+
		"secret read at each cold start; Logs kept 7 days; one AWS Budget. Not included: CloudWatch alarms,\n"+
		"a custom domain, KMS keys of your own (the defaults are free), taxes.\n", count(a.SQSIdlePolls))
	b.WriteString("\nSizes and times:\n")
	row("history kept in DynamoDB", fmt.Sprintf("%d mo", a.HistoryMonths), "storage and point-in-time recovery grow with it")
	row("DynamoDB storage per entry", fmt.Sprintf("%g KB", a.KBPerEntry), "its offers, messages (2-4 KB each), audit and index entries")
	row("an inbound mail", fmt.Sprintf("%g KB", a.KBPerMail), "kept 30 days in S3")
	row("logs per invocation", fmt.Sprintf("%g B", a.LogBytesPerCall), "Lambda's START/END/REPORT lines (~400 B) and ours (~160 B, measured)")
	row("a Function URL response", fmt.Sprintf("%g KB", a.KBPerResponse), "data out")
	row("a DynamoDB call in the region", a.DynamoLatency, "approximate")
	row("an SES or SNS send", a.ProviderLatency, "approximate")
	row("a container kept after its last call", fmt.Sprintf("%g min", a.IdleMinutes), "approximate (AWS does not publish it): cold starts")
	row("hours a day people are about", a.OpenHours, "arrivals spread evenly over them: cold starts")
	fmt.Fprintf(&b, "\nDurations: each invocation's CPU time, measured by make coldstart on a full x86-64 core, is\n"+
		"stretched %.1f times (a 256 MB function gets 256/1,769 of a vCPU), and its DynamoDB calls (measured by\n"+
		"the store, aws/internal/capacity checks them) and sends waited out; a cold start adds the init\n"+
		"(measured %v CPU, so stretched: %v with the secret's read). DynamoDB request units per use case\n"+
		"are the store's measured figures (aws/store/dynamo/doc.go; cost.UseCases).\n",
		cpuScale, InitCPU, InitDuration().Round(time.Millisecond))
	b.WriteString("\nTexts, per message part, carrier fees included (--country; all approximate):\n")
	for _, c := range smsPrices {
		origin := c.Origination
		if c.OriginMonth > 0 {
			origin = fmt.Sprintf("a %s, $%.2f a month", c.Origination, c.OriginMonth)
		}
		row(c.Country+" "+c.Name, fmt.Sprintf("$%.4f", c.PerPart), origin)
	}
	fmt.Fprintf(&b, "\nPrices: public list prices of each service's pricing page (aws.amazon.com/<service>/pricing),\n"+
		"as of %s. Texts: AWS End User Messaging SMS prices per message part,\n"+
		"carrier fees included; every country's is approximate (they move often). A ~ marks a line\n"+
		"with an approximate price. Free tiers are not applied unless --free-tier, which subtracts the\n"+
		"always-free monthly allowances only (Lambda 1M requests and 400,000 GB-s, SQS 1M requests,\n"+
		"Scheduler 14M invocations, DynamoDB 25 GB, Logs 5 GB, 100 GB out); AWS Budgets' first two\n"+
		"budgets are free whatever the flag.\n", PriceDate)
	return b.String()
}
