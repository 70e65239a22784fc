package cost

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Assumptions are what the bill depends on besides the prices: the
// deployment's options, and what one waitlist entry brings about in its
// month. Defaults returns the ones `nextup cost` uses; the package doc
// says why each is what it is.
type Assumptions struct {
	// Entries is how many people join a waitlist in the month.
	Entries int
	// SMSShare is the share of the messages to people that go by text
	// (0..1): a person gets every message on the channel they chose.
	SMSShare float64
	// Region is the AWS region whose prices apply; Country the one texts
	// go to.
	Region, Country string
	// SheetSync is the sheet mirror (a sync every 3 minutes); ModelParser
	// the Bedrock model reading forwarded booking requests.
	SheetSync, ModelParser bool
	// FreeTier subtracts the always-free monthly allowances (not the
	// first-year ones); the bill is without them otherwise.
	FreeTier bool
	// NoSMSNumber leaves out the number of one's own that texts to some
	// countries need (the US and Canada: a toll-free number): texts from
	// SNS's shared pool, as before 2023. The seed's figures assume it; a
	// US deployment today cannot.
	NoSMSNumber bool

	// Per entry, in its month:
	FormShare     float64 // joins through the public form, not by staff, the API or an import
	Releases      float64 // slots released to the list (a cancellation), per entry
	Claims        float64 // offers claimed: a slot filled
	Declines      float64 // offers declined (the slot rolls on)
	Expiries      float64 // offers whose window lapsed (rolls on, or the slot goes back to staff)
	Reminders     float64 // reminders per booking (the defaults: a day and an hour before)
	StatusViews   float64 // views of the person's status page
	ClaimViews    float64 // views of the claim page per offer
	StaffRequests float64 // dashboard pages and API calls by staff
	InboundMail   float64 // booking requests forwarded to the inbound address

	// Sizes and times.
	HistoryMonths   int     // months of history kept in DynamoDB
	KBPerEntry      float64 // DynamoDB storage per entry with its offers, messages, audit and indexes
	KBPerMail       float64 // an inbound mail in S3 (kept 30 days)
	LogBytesPerCall float64 // CloudWatch Logs per invocation (Lambda's START/END/REPORT lines and ours)
	KBPerResponse   float64 // data out per Function URL response
	DynamoLatency   time.Duration
	ProviderLatency time.Duration // an SES or SNS send
	IdleMinutes     float64       // a container kept warm this long after its last invocation
	OpenHours       float64       // the hours a day people and staff are about (cold starts)
	SQSIdlePolls    float64       // ReceiveMessage calls a month of the SQS trigger's long polling
}

// Defaults are the assumptions `nextup cost` starts from: a salon's month
// (see the package doc).
func Defaults() Assumptions {
	return Assumptions{
		Entries: 200, SMSShare: 0.25, Region: "us-east-1", Country: "US",
		FormShare: 0.5, Releases: 0.3, Claims: 0.25, Declines: 0.1, Expiries: 0.25, Reminders: 1.5,
		StatusViews: 1, ClaimViews: 0.8, StaffRequests: 2, InboundMail: 0.1,
		HistoryMonths: 12, KBPerEntry: 16, KBPerMail: 50, LogBytesPerCall: 600, KBPerResponse: 10,
		DynamoLatency: 5 * time.Millisecond, ProviderLatency: 60 * time.Millisecond,
		IdleMinutes: 10, OpenHours: 12, SQSIdlePolls: 648000,
	}
}

// Line is one line of the bill.
type Line struct {
	Item     string  `json:"item"`
	USD      float64 `json:"usd"`
	Quantity string  `json:"quantity"`
	// Approx says a price this line uses is approximate.
	Approx bool `json:"approx"`
}

// Bill is the month's bill.
type Bill struct {
	Entries   int     `json:"entries"`
	TotalUSD  float64 `json:"total_usd"`
	Lines     []Line  `json:"lines"`
	Region    string  `json:"region"`
	Country   string  `json:"country"`
	SMSShare  float64 `json:"sms_share"`
	FreeTier  bool    `json:"free_tier"`
	PriceDate string  `json:"price_date"`
}

// The model's constants, not assumptions about a salon.
const (
	memoryGB        = 0.25         // 256 MB functions
	cpuScale        = 1769.0 / 256 // Lambda gives one vCPU at 1,769 MB, a share of it below
	daysInMonth     = 30
	sweepsPerMonth  = 8640  // the safety sweep, every 5 minutes
	syncsPerMonth   = 14400 // the sheet mirror, every 3 minutes
	chunkKB         = 256   // SES inbound is billed per 256 KB chunk
	bedrockIn       = 2000  // tokens in per forwarded mail: prompt, schema, the mail
	bedrockOut      = 300   // tokens out: the proposed row
	staffReadRRU    = 20    // a dashboard page: lists of about fifty items (not measured)
	housekeepingRRU = 200   // the daily housekeeping's reads and purges (not measured)
)

// Validate reports assumptions the model cannot price.
func (a Assumptions) Validate() error {
	var errs []error
	if a.Entries < 0 {
		errs = append(errs, fmt.Errorf("entries must not be negative, not %d", a.Entries))
	}
	if !(a.SMSShare >= 0 && a.SMSShare <= 1) {
		errs = append(errs, fmt.Errorf("the SMS share must be between 0 and 1, not %v", a.SMSShare))
	}
	if _, ok := RegionPrices(a.Region); !ok {
		errs = append(errs, fmt.Errorf("no prices for region %q (known: %s)", a.Region, strings.Join(Regions(), ", ")))
	}
	if _, ok := CountrySMS(a.Country); !ok {
		errs = append(errs, fmt.Errorf("no text prices for country %q (known: %s)", a.Country, strings.Join(Countries(), ", ")))
	}
	if a.Claims > a.Releases {
		errs = append(errs, fmt.Errorf("claims (%v) cannot outnumber releases (%v): a claim fills a released slot", a.Claims, a.Releases))
	}
	if a.Offers() < a.Releases {
		errs = append(errs, fmt.Errorf("offers (%v: claims, declines, expiries) cannot be fewer than releases (%v)", a.Offers(), a.Releases))
	}
	for name, v := range map[string]float64{"form share": a.FormShare, "releases": a.Releases, "claims": a.Claims, "declines": a.Declines,
		"expiries": a.Expiries, "reminders": a.Reminders, "status views": a.StatusViews, "claim views": a.ClaimViews,
		"staff requests": a.StaffRequests, "inbound mail": a.InboundMail} {
		if !(v >= 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s must be a number of zero or more, not %v", name, v))
		}
	}
	if a.FormShare > 1 {
		errs = append(errs, fmt.Errorf("the form share must be at most 1, not %v", a.FormShare))
	}
	return errors.Join(errs...)
}

// Offers is how many offers an entry gets: each is claimed, declined or
// lapses.
func (a Assumptions) Offers() float64 { return a.Claims + a.Declines + a.Expiries }

// message is one kind of message to a person.
type message struct {
	kind  string
	count float64 // per entry
	parts float64 // parts of a text (160 GSM characters; 153 each when longer)
}

// messages are what an entry brings about, by kind. A text with a link
// (the status, claim or calendar link: about 110 characters on a
// Function URL, a 43-character token after the host) takes two parts.
func (a Assumptions) messages() []message {
	return []message{
		{"contact confirmation (form)", a.FormShare, 1}, // a code by text, a link by email
		{"you're on the list (form)", a.FormShare, 2},
		{"offer", a.Offers(), 2},
		{"hold lapsed", a.Expiries, 1},
		{"booked", a.Claims, 2},
		{"reminder", a.Claims * a.Reminders, 1},
	}
}

// invocation kinds priced, with their CPU and waits.
type kind struct {
	count float64 // a month
	inv   Invocation
	cold  bool // counted for cold starts (a function not kept warm)
}

// Estimate prices a month under a.
func Estimate(a Assumptions) (Bill, error) {
	if err := a.Validate(); err != nil {
		return Bill{}, err
	}
	p, _ := RegionPrices(a.Region)
	sms, _ := CountrySMS(a.Country)
	n := float64(a.Entries)
	b := Bill{Entries: a.Entries, Region: p.Region, Country: sms.Country, SMSShare: a.SMSShare, FreeTier: a.FreeTier, PriceDate: PriceDate}
	add := func(item, qty string, usd float64, approx bool) {
		b.Lines = append(b.Lines, Line{Item: item, Quantity: qty, USD: math.Round(usd*1e6) / 1e6, Approx: approx})
	}
	free := func(q, allowance float64) float64 {
		if a.FreeTier {
			return math.Max(0, q-allowance)
		}
		return q
	}

	// Messages.
	var toPeople, parts float64
	for _, m := range a.messages() {
		toPeople += n * m.count
		parts += n * m.count * a.SMSShare * m.parts
	}
	texts := toPeople * a.SMSShare
	handbacks := n * (a.Releases - a.Claims)
	emails := toPeople*(1-a.SMSShare) + handbacks + n*a.InboundMail // staff: hand-backs, proposals
	mails := n * a.InboundMail

	// Invocations by function.
	form := a.FormShare
	api := n * (form*3 + (1 - form) + a.StatusViews + a.Offers()*a.ClaimViews + a.Claims + a.Declines + a.StaffRequests + a.Releases)
	timers := n * (a.Expiries + a.Claims*a.Reminders)
	sends := toPeople + handbacks + n*a.InboundMail
	feedback := emails * 0.01 // bounces and complaints, about 1% of mail (approximate)
	syncs := 0.0
	if a.SheetSync {
		syncs = syncsPerMonth
	}
	kinds := []kind{
		{n * (1 - form), InvJoin, true},
		{n * form * 3, InvFormStep, true},
		{n * (a.StatusViews + a.StaffRequests), InvPage, true},
		{n * a.Offers() * a.ClaimViews, InvClaimPage, true},
		{n * a.Releases, InvRelease, true},
		{n * a.Claims, InvClaim, true},
		{n * a.Declines, InvDecline, true},
		{n * a.Expiries, InvExpiry, false},
		{n * a.Claims * a.Reminders, InvReminder, false},
		{sweepsPerMonth, InvSweep, false},
		{daysInMonth + 1, InvHousekeeping, false}, // daily, and the monthly summary
		{syncs, InvSheetSync, false},
		{sends, InvSend, true},
		{mails, InvInbound, true},
		{feedback, InvFeedback, true},
	}
	if a.ModelParser {
		kinds[13].inv.Other += BedrockLatency
	}
	var invocations, gbs float64
	for _, k := range kinds {
		invocations += k.count
		ms := math.Ceil(float64(k.inv.duration(a)) / float64(time.Millisecond)) // billed by the millisecond, up
		gbs += k.count * ms / 1000 * memoryGB
	}
	// Cold starts: arrivals spread over the open hours, a container kept
	// IdleMinutes; the timer function is kept warm by the sweep.
	openMinutes := a.OpenHours * 60 * daysInMonth
	coldOf := func(count float64) float64 {
		if count <= 0 {
			return 0
		}
		return count * math.Exp(-count/openMinutes*a.IdleMinutes)
	}
	apiCount, sendCount := api, sends
	colds := coldOf(apiCount) + coldOf(sendCount) + coldOf(mails) + coldOf(feedback) + 1 // + the timer function's
	initMS := math.Ceil(float64(InitDuration()) / float64(time.Millisecond))
	gbs += colds * initMS / 1000 * memoryGB

	add("Lambda requests", fmt.Sprintf("%s invocations", count(invocations)),
		free(invocations, 1e6)/1e6*p.LambdaPerMillionRequests, p.approx("LambdaPerMillionRequests"))
	add("Lambda compute (arm64, 256 MB)", fmt.Sprintf("%s GB-s, %s cold starts", count(gbs), count(colds)),
		free(gbs, 400000)*p.LambdaPerGBSecondARM, true)

	// DynamoDB.
	use := func(u UseCase, times float64) (r, w float64) { return u.Read * times, u.Write * times }
	var rru, wru float64
	for _, x := range []struct {
		u UseCase
		t float64
	}{
		{Join, n * (1 - form)}, {FormJoin, n * form}, {StatusPage, n * (a.StatusViews + form*2)},
		{ClaimPage, n * a.Offers() * a.ClaimViews}, {ReleaseOffer, n * a.Releases}, {Claim, n * a.Claims},
		{Decline, n * a.Declines}, {ExpiryTimer, n * a.Expiries}, {ReminderTimer, n * a.Claims * a.Reminders},
		{Send, sends}, {IdleSweep, sweepsPerMonth + syncs}, {FormJoin, mails}, // a forwarded request becomes a proposal, about a form join
	} {
		r, w := use(x.u, x.t)
		rru, wru = rru+r, wru+w
	}
	rru += n*a.StaffRequests*staffReadRRU + (daysInMonth+1)*housekeepingRRU
	add("DynamoDB reads (on-demand)", fmt.Sprintf("%s read request units", count(rru)), rru/1e6*p.DynamoPerMillionRRU, p.approx("DynamoPerMillionRRU"))
	add("DynamoDB writes (on-demand)", fmt.Sprintf("%s write request units", count(wru)), wru/1e6*p.DynamoPerMillionWRU, p.approx("DynamoPerMillionWRU"))
	gb := n * float64(a.HistoryMonths) * a.KBPerEntry / 1e6
	add("DynamoDB storage and point-in-time recovery", fmt.Sprintf("%.2f GB (%d months of history)", gb, a.HistoryMonths),
		free(gb, 25)*p.DynamoPerGBMonth+gb*p.DynamoPITRPerGBMonth, true)

	// EventBridge Scheduler: one-time schedules that fire (a claimed or
	// declined offer's is deleted first), the sweep, the daily and monthly
	// ticks, the sheet mirror.
	sched := timers + sweepsPerMonth + daysInMonth + 1 + syncs
	add("EventBridge Scheduler", fmt.Sprintf("%s invocations", count(sched)), free(sched, 14e6)/1e6*p.SchedulerPerMillion, p.approx("SchedulerPerMillion"))

	add("SES outbound email", fmt.Sprintf("%s emails", count(emails)), emails/1000*p.SESPerThousandOut, p.approx("SESPerThousandOut"))
	add("SES inbound email", fmt.Sprintf("%s emails", count(mails)),
		mails/1000*p.SESPerThousandIn+mails*math.Ceil(a.KBPerMail/chunkKB)/1000*p.SESPerThousandInChunk, p.approx("SESPerThousandIn"))
	add(fmt.Sprintf("SNS texts to %s", sms.Name), fmt.Sprintf("%s texts, %s parts at $%.4f", count(texts), count(parts), sms.PerPart),
		parts*sms.PerPart, sms.Approx)
	if sms.OriginMonth > 0 && a.SMSShare > 0 && !a.NoSMSNumber {
		add("SMS origination: "+sms.Origination, "1 a month", sms.OriginMonth, sms.Approx)
	}

	// S3: inbound mail (an SES put, our get), kept 30 days.
	add("S3 (inbound mail)", fmt.Sprintf("%s objects", count(mails)),
		mails/1000*(p.S3PerThousandPut+p.S3PerThousandGet)+mails*a.KBPerMail/1e6*p.S3PerGBMonth, p.approx("S3PerGBMonth"))

	// SQS: each send is a SendMessage, a ReceiveMessage and a
	// DeleteMessage; the trigger's long polls go on while the queue is
	// empty.
	sqs := sends*3 + a.SQSIdlePolls
	add("SQS (sends, and the trigger's polling)", fmt.Sprintf("%s requests", count(sqs)), free(sqs, 1e6)/1e6*p.SQSPerMillion, true)

	// CloudWatch Logs, kept 7 days: about 7/30 of a month's logs stored.
	logGB := (invocations + colds) * a.LogBytesPerCall / 1e9
	freeLogs := 0.0
	if a.FreeTier {
		freeLogs = 5
	}
	add("CloudWatch Logs ingestion", fmt.Sprintf("%.3f GB", logGB), math.Max(0, logGB-freeLogs)*p.LogsPerGBIngested, true)
	add("CloudWatch Logs storage (7 days)", fmt.Sprintf("%.3f GB-month", logGB*7/daysInMonth),
		logGB*7/daysInMonth*p.LogsPerGBMonth, p.approx("LogsPerGBMonth"))

	// Secrets Manager: one secret (the keys as a JSON object), read once
	// per container start.
	add("Secrets Manager (1 secret, read at each cold start)", fmt.Sprintf("1 secret, %s reads", count(colds)),
		p.SecretPerMonth+colds/1e4*p.SecretPerTenThousandAPI, p.approx("SecretPerMonth"))

	if a.ModelParser {
		add("Bedrock model parser (Claude Haiku 4.5)", fmt.Sprintf("%s forwarded requests", count(mails)),
			mails*(bedrockIn*p.BedrockPerMillionIn+bedrockOut*p.BedrockPerMillionOut)/1e6, true)
	}
	dataGB := api * a.KBPerResponse / 1e6
	add("Data transfer out (Function URL responses)", fmt.Sprintf("%.3f GB", dataGB), free(dataGB, 100)*p.DataOutPerGB, p.approx("DataOutPerGB"))
	add("AWS Budgets (1 budget; an account's first two are free)", "1 budget", 0, false)

	for _, l := range b.Lines {
		b.TotalUSD += l.USD
	}
	b.TotalUSD = math.Round(b.TotalUSD*1e6) / 1e6
	return b, nil
}

// duration is what an invocation takes on Lambda: its CPU stretched to a
// 256 MB function's share of a vCPU, and its waits.
func (i Invocation) duration(a Assumptions) time.Duration {
	return time.Duration(float64(i.CPU)*cpuScale) + time.Duration(i.Calls)*a.DynamoLatency + i.Other + time.Duration(i.Providers)*a.ProviderLatency
}

// count formats a quantity: 1,234 or 0.5.
func count(x float64) string {
	if x < 10 && x != math.Trunc(x) {
		return fmt.Sprintf("%.1f", x)
	}
	s := fmt.Sprintf("%.0f", x)
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	return string(out)
}
