package insight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// The monthly summary. On the first Monday of a month at 09:00 in the
// business's timezone a keyed durable timer (TimerMonthlySummary, one per
// business) fires once across instances: the figures of the month before
// and of the month before that are computed, a narrative is written from
// them, and the summary is stored (one per business and month) and
// emailed to the owner, in one transaction with the timer's next firing.
//
// The narrative comes from a deterministic template. When a model is
// configured (core.Config.Narrator) it is asked to rewrite the paragraph
// from the figures alone, before the transaction, and its text is sent
// only if every number in it is one the figures give (CheckNumbers);
// otherwise the template's is.

// TimerMonthlySummary is the timer kind of a business's monthly summary.
const TimerMonthlySummary = nextup.TimerMonthlySummary

// MessageSummary is the kind of the summary's email.
const MessageSummary = "monthly_summary"

// Report is what a summary holds: the month's figures and the month
// before's, for the comparison.
type Report struct {
	Month    string  `json:"month"`
	Figures  Figures `json:"figures"`
	Previous Figures `json:"previous"`
}

// MonthSpan is the month named "2006-01" in loc, as [from, to).
func MonthSpan(month string, loc *time.Location) (time.Time, time.Time, error) {
	t, err := time.ParseInLocation("2006-01", month, loc)
	if err != nil {
		return time.Time{}, time.Time{}, core.Invalid(nextup.FieldError{Field: "month", Message: "want a month like 2026-11"})
	}
	return t, t.AddDate(0, 1, 0), nil
}

// SummaryAt is when the summary of the month before m's is sent: the
// first Monday of m's month, 09:00 in loc.
func SummaryAt(m time.Time, loc *time.Location) time.Time {
	m = m.In(loc)
	d := time.Date(m.Year(), m.Month(), 1, 9, 0, 0, 0, loc)
	for d.Weekday() != time.Monday {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// NextSummaryAt is the first summary time after now.
func NextSummaryAt(now time.Time, loc *time.Location) time.Time {
	at := SummaryAt(now, loc)
	if !at.After(now) {
		n := now.In(loc)
		at = SummaryAt(time.Date(n.Year(), n.Month()+1, 1, 0, 0, 0, 0, loc), loc)
	}
	return at
}

// SummaryTimer is the timer of a business's next summary after now.
func SummaryTimer(b nextup.Business, now time.Time) nextup.Timer {
	loc, err := b.Location()
	if err != nil {
		loc = time.UTC
	}
	at := NextSummaryAt(now, loc)
	// Keyed by the month it fires in: scheduling it again (every day's
	// housekeeping does) changes nothing, and one that fired is not
	// moved to next month by a schedule made before it was done.
	return nextup.Timer{BusinessID: b.ID, Kind: TimerMonthlySummary, SubjectID: b.ID,
		Key: TimerMonthlySummary + ":" + b.ID + ":" + at.Format("2006-01"), DueAt: at}
}

// Report computes the report of a month ("2006-01") of a business.
func (s *Insight) Report(ctx context.Context, businessID, month string) (Report, error) {
	var loc *time.Location
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		b, err := tx.BusinessGet(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		loc, err = b.Location()
		return err
	}); err != nil {
		return Report{}, err
	}
	from, to, err := MonthSpan(month, loc)
	if err != nil {
		return Report{}, err
	}
	r := Report{Month: month}
	if r.Figures, err = s.Figures(ctx, businessID, from, to); err != nil {
		return r, err
	}
	r.Previous, err = s.Figures(ctx, businessID, from.AddDate(0, -1, 0), from)
	return r, err
}

// SendSummary handles the summary timer t of a business: the report of
// the month before the one it fired in, its narrative (the model's, when
// one is configured and its numbers check), then in one transaction the
// timer done under its claim, the summary stored, the owner's email
// queued and the next summary's timer. A month summed up already (another
// instance, a timer fired twice) is left as it is.
func (s *Insight) SendSummary(ctx context.Context, t nextup.Timer) error {
	b, err := s.GetBusiness(ctx, t.BusinessID)
	if err != nil {
		return fmt.Errorf("summary of business %s: %w", t.BusinessID, err)
	}
	loc, err := b.Location()
	if err != nil {
		return err
	}
	at := t.DueAt.In(loc)
	month := time.Date(at.Year(), at.Month()-1, 1, 0, 0, 0, 0, loc).Format("2006-01")
	_, err = s.summarize(ctx, b, month, func(w *core.Work) error {
		if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
			return fmt.Errorf("finish timer %s: %w", t.Key, err)
		}
		return w.Schedule(ctx, SummaryTimer(b, w.Now))
	})
	return err
}

// SummarizeMonth sums up a business's month ("2006-01") now, as its timer
// would, and returns the summary: stored, and emailed to the owner when
// the business has an owner email. A month summed up already is
// ErrConflict. (The demo sums up its seeded month with it.)
func (s *Insight) SummarizeMonth(ctx context.Context, businessID, month string) (nextup.Summary, error) {
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return nextup.Summary{}, err
	}
	sum, err := s.summarize(ctx, b, month, nil)
	if err == nil && sum.Month == "" {
		err = nextup.Errorf(nextup.ErrConflict, nextup.CodeConflict, "%s was summed up already", month)
	}
	return sum, err
}

// summarize computes month's report and narrative outside any
// transaction, then in one runs first (the timer's part, if any), stores
// the summary and queues its email. A month summed up already returns no
// summary and no error.
func (s *Insight) summarize(ctx context.Context, b nextup.Business, month string, first func(w *core.Work) error) (nextup.Summary, error) {
	r, err := s.Report(ctx, b.ID, month)
	if err != nil {
		return nextup.Summary{}, err
	}
	text, by := s.Narrate(ctx, b, r)
	figures, err := json.Marshal(r)
	if err != nil {
		return nextup.Summary{}, err
	}
	var out nextup.Summary
	err = s.Tx(ctx, func(w *core.Work) error {
		w.Actor = nextup.ActorTimer
		out = nextup.Summary{}
		if first != nil {
			if err := first(w); err != nil {
				return err
			}
		}
		sum := nextup.Summary{BusinessID: b.ID, Month: month, Figures: figures, Narrative: text, NarrativeBy: by, CreatedAt: w.Now}
		var m nextup.Message
		if to := b.Profile.OwnerEmail; to != "" {
			m = SummaryEmail(b, r, text, s.URL("/dash/summaries/"+month))
			m.ID, m.To = s.Random.ID("msg"), to
			sum.SentAt, sum.MessageID = &w.Now, m.ID
		}
		if err := w.Tx.SummaryCreate(ctx, sum); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return nil // summed up already: the timer is done, the next one set
			}
			return fmt.Errorf("store the summary of %s: %w", month, err)
		}
		if m.ID != "" {
			if err := w.QueueWithID(ctx, m); err != nil {
				return err
			}
		}
		bi, err := w.Business(ctx, b.ID)
		if err != nil {
			return err
		}
		out = sum
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: b.ID,
			To: "summary_" + month, Reason: "monthly_summary", Detail: map[string]any{"narrative_by": by, "emailed": m.ID != ""}})
	})
	return out, err
}

// Narrate is a report's narrative and who wrote it: the model's text when
// a Narrator is configured and every number in its text checks, the
// template's otherwise.
func (s *Insight) Narrate(ctx context.Context, b nextup.Business, r Report) (string, string) {
	text := Narrative(b, r)
	if s.Narrator == nil {
		return text, "template"
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := s.Narrator.Narrate(ctx, NarratorSystem, Facts(b, r))
	if err != nil {
		s.Log().Warn("summary narrative: the model failed; the template's is sent", "business", b.ID, "month", r.Month, "err", err)
		return text, "template"
	}
	out = strings.TrimSpace(out)
	if err := CheckNumbers(out, b, r); err != nil || out == "" || len(out) > 2000 {
		s.Log().Warn("summary narrative: the model's text does not check; the template's is sent", "business", b.ID, "month", r.Month, "err", err)
		return text, "template"
	}
	return out, "model"
}

// NarratorSystem is the model's instruction.
const NarratorSystem = `You write the opening paragraph of a small business's monthly waitlist summary, for the owner.
Use only the facts given, in plain words, in at most four sentences, with no headings, lists or greetings.
Every number you write must appear in the facts exactly as given there; do not compute new numbers
(no sums, differences or percentages of your own) and do not round.`

// Facts are the figures a model may use, one per line, written as the
// template would write them.
func Facts(b nextup.Business, r Report) string {
	f, p := r.Figures, r.Previous
	var sb strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&sb, format+"\n", a...) }
	line("business: %s", b.Name)
	line("month: %s", monthName(r.Month))
	line("slots freed: %d (cancellations %d, no-shows %d, new openings %d)", f.SlotsFreed, f.FreedBy[FreedCancellation], f.FreedBy[FreedNoShow], f.FreedBy[FreedOpening])
	line("filled from the waitlist: %d, that is %d%%", f.SlotsFilled, pct(f.FillRate))
	line("revenue recovered: %s", money(b, f.RevenueRecoveredCents))
	if f.SlotsFilled > 0 {
		line("half of the filled slots were filled within %s, nine in ten within %s", human(f.TimeToFillP50Seconds), human(f.TimeToFillP90Seconds))
	}
	line("offers: %d made, %d claimed, %d declined, %d lapsed", f.OffersMade, f.OffersClaimed, f.OffersDeclined, f.OffersLapsed)
	line("handed back to staff: %d", f.HandBacks)
	line("no-shows: %d of %d bookings", f.NoShows, f.Bookings)
	line("waitlist: %d joined, %d left, %d booked, %d expired", f.WaitlistJoined, f.WaitlistLeft, f.WaitlistBooked, f.WaitlistExpired)
	line("the month before (%s): %d freed, %d filled, revenue recovered %s", monthName(prevMonth(r.Month)), p.SlotsFreed, p.SlotsFilled, money(b, p.RevenueRecoveredCents))
	return sb.String()
}

// Narrative is the template's paragraph.
func Narrative(b nextup.Business, r Report) string {
	f, p := r.Figures, r.Previous
	if f.SlotsFreed == 0 && f.WaitlistJoined == 0 && f.OffersMade == 0 {
		return fmt.Sprintf("%s was quiet: no slot was freed and nobody joined the waitlist.", monthName(r.Month))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "In %s %s freed up (%s).", monthName(r.Month), plural(f.SlotsFreed, "slot was", "slots were"), freedHow(f))
	if f.SlotsFreed > 0 {
		fmt.Fprintf(&sb, " You recovered %d of them from the waitlist (%d%%)", f.SlotsFilled, pct(f.FillRate))
		if f.RevenueRecoveredCents > 0 {
			fmt.Fprintf(&sb, ", worth %s", money(b, f.RevenueRecoveredCents))
		}
		sb.WriteString(".")
	}
	if f.SlotsFilled > 0 {
		fmt.Fprintf(&sb, " Half were filled within %s.", human(f.TimeToFillP50Seconds))
	}
	if f.OffersMade > 0 {
		fmt.Fprintf(&sb, " Of %s, %d %s claimed, %d declined and %d lapsed.", plural(f.OffersMade, "offer", "offers"), f.OffersClaimed,
			map[bool]string{true: "was", false: "were"}[f.OffersClaimed == 1], f.OffersDeclined, f.OffersLapsed)
	}
	if f.HandBacks > 0 {
		fmt.Fprintf(&sb, " %s went back to your team when the list ran out.", plural(f.HandBacks, "slot", "slots"))
	}
	switch {
	case p.SlotsFreed == 0 && p.SlotsFilled == 0:
	case f.SlotsFilled > p.SlotsFilled:
		fmt.Fprintf(&sb, " That is more than %s, when %d of %d were recovered.", monthName(prevMonth(r.Month)), p.SlotsFilled, p.SlotsFreed)
	case f.SlotsFilled < p.SlotsFilled:
		fmt.Fprintf(&sb, " That is fewer than %s, when %d of %d were recovered.", monthName(prevMonth(r.Month)), p.SlotsFilled, p.SlotsFreed)
	default:
		fmt.Fprintf(&sb, " As in %s, when %d of %d were recovered.", monthName(prevMonth(r.Month)), p.SlotsFilled, p.SlotsFreed)
	}
	return sb.String()
}

func freedHow(f Figures) string {
	var parts []string
	for _, k := range []struct{ key, one, many string }{
		{FreedCancellation, "cancellation", "cancellations"}, {FreedNoShow, "no-show", "no-shows"}, {FreedOpening, "new opening", "new openings"},
	} {
		if n := f.FreedBy[k.key]; n > 0 {
			parts = append(parts, plural(n, k.one, k.many))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func pct(r float64) int { return int(math.Round(r * 100)) }

// human is a duration in the largest whole unit that reads well.
func human(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	switch {
	case d < 90*time.Second:
		return plural(int(math.Round(d.Seconds())), "second", "seconds")
	case d < 90*time.Minute:
		return plural(int(math.Round(d.Minutes())), "minute", "minutes")
	case d < 36*time.Hour:
		return plural(int(math.Round(d.Hours())), "hour", "hours")
	}
	return plural(int(math.Round(d.Hours()/24)), "day", "days")
}

// currencies are the symbols of the countries' currencies, for the
// narrative; another country's amounts are written without one.
var currencies = map[string]string{"GB": "£", "US": "$", "CA": "$", "AU": "$", "NZ": "$", "IE": "€", "FR": "€", "DE": "€",
	"ES": "€", "IT": "€", "NL": "€", "BE": "€", "PT": "€", "AT": "€", "FI": "€", "GR": "€", "JP": "¥", "IN": "₹", "CH": "CHF "}

// money is an amount in the business's currency: whole units when it is
// whole, else with its cents.
func money(b nextup.Business, cents int64) string {
	sym := currencies[strings.ToUpper(b.Profile.Country)]
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if cents%100 == 0 {
		return sign + sym + whole
	}
	return fmt.Sprintf("%s%s%s.%02d", sign, sym, whole, cents%100)
}

func monthName(month string) string {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return month
	}
	return t.Format("January 2006")
}

func prevMonth(month string) string {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return month
	}
	return t.AddDate(0, -1, 0).Format("2006-01")
}

var numberRE = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)

// CheckNumbers reports the first number in text that the report's facts
// do not give: a model's narrative may say only what the figures say.
func CheckNumbers(text string, b nextup.Business, r Report) error {
	allowed := map[string]bool{}
	for _, n := range numberRE.FindAllString(Facts(b, r), -1) {
		allowed[strings.ReplaceAll(n, ",", "")] = true
	}
	for _, n := range numberRE.FindAllString(text, -1) {
		if !allowed[strings.ReplaceAll(n, ",", "")] {
			return fmt.Errorf("the number %s is not in the figures", n)
		}
	}
	return nil
}

// SummaryEmail is the owner's email of a report: the narrative, the
// figures against the month before, and the charts as HTML tables of
// bars (which every mail client shows; most show no SVG, and an image
// would be blocked until the reader allows it). link opens the summary
// on the dashboard.
func SummaryEmail(b nextup.Business, r Report, narrative, link string) nextup.Message {
	f, p := r.Figures, r.Previous
	m := nextup.Message{BusinessID: b.ID, Kind: MessageSummary, Channel: nextup.ChannelEmail,
		Subject: fmt.Sprintf("Your waitlist in %s: %d of %d freed slots recovered", monthName(r.Month), f.SlotsFilled, f.SlotsFreed)}
	type row struct {
		label     string
		now, then string
	}
	rows := []row{
		{"Slots freed", strconv.Itoa(f.SlotsFreed), strconv.Itoa(p.SlotsFreed)},
		{"Filled from the waitlist", strconv.Itoa(f.SlotsFilled), strconv.Itoa(p.SlotsFilled)},
		{"Fill rate", fmt.Sprintf("%d%%", pct(f.FillRate)), fmt.Sprintf("%d%%", pct(p.FillRate))},
		{"Revenue recovered", money(b, f.RevenueRecoveredCents), money(b, p.RevenueRecoveredCents)},
		{"Median time to fill", orDash(f.SlotsFilled, human(f.TimeToFillP50Seconds)), orDash(p.SlotsFilled, human(p.TimeToFillP50Seconds))},
		{"Offers made", strconv.Itoa(f.OffersMade), strconv.Itoa(p.OffersMade)},
		{"Claimed / declined / lapsed", fmt.Sprintf("%d / %d / %d", f.OffersClaimed, f.OffersDeclined, f.OffersLapsed),
			fmt.Sprintf("%d / %d / %d", p.OffersClaimed, p.OffersDeclined, p.OffersLapsed)},
		{"Handed back to staff", strconv.Itoa(f.HandBacks), strconv.Itoa(p.HandBacks)},
		{"No-show rate", fmt.Sprintf("%d%%", pct(f.NoShowRate)), fmt.Sprintf("%d%%", pct(p.NoShowRate))},
		{"Joined the waitlist", strconv.Itoa(f.WaitlistJoined), strconv.Itoa(p.WaitlistJoined)},
	}
	var text, h strings.Builder
	fmt.Fprintf(&text, "%s\n\n%s\n\n", m.Subject, narrative)
	fmt.Fprintf(&text, "%-30s %14s %14s\n", "", monthName(r.Month), monthName(prevMonth(r.Month)))
	for _, rw := range rows {
		fmt.Fprintf(&text, "%-30s %14s %14s\n", rw.label, rw.now, rw.then)
	}
	fmt.Fprintf(&text, "\nThe whole summary, with every past month: %s\n", link)

	esc := html.EscapeString
	h.WriteString(`<!doctype html><html><body style="margin:0;padding:16px;font-family:Helvetica,Arial,sans-serif;color:#1f2933;font-size:15px;line-height:1.5">`)
	fmt.Fprintf(&h, `<h1 style="font-size:20px;margin:0 0 12px">Your waitlist in %s</h1>`, esc(monthName(r.Month)))
	fmt.Fprintf(&h, `<p style="margin:0 0 16px">%s</p>`, esc(narrative))
	h.WriteString(`<table role="presentation" cellpadding="4" cellspacing="0" style="border-collapse:collapse;font-size:14px;max-width:560px;width:100%">`)
	fmt.Fprintf(&h, `<tr><th align="left"></th><th align="right">%s</th><th align="right" style="color:#52606d">%s</th></tr>`,
		esc(monthName(r.Month)), esc(monthName(prevMonth(r.Month))))
	for _, rw := range rows {
		fmt.Fprintf(&h, `<tr style="border-top:1px solid #e4e7eb"><td>%s</td><td align="right"><b>%s</b></td><td align="right" style="color:#52606d">%s</td></tr>`,
			esc(rw.label), esc(rw.now), esc(rw.then))
	}
	h.WriteString(`</table>`)
	weekdays := make([]bar, 7)
	for i := range 7 {
		d := (i + 1) % 7 // Monday first
		weekdays[i] = bar{time.Weekday(d).String()[:3], f.CancellationsByWeekday[d]}
	}
	h.WriteString(barTable("Cancellations by weekday", weekdays, ""))
	var hours []bar
	for hr, n := range f.CancellationsByHour {
		if n > 0 {
			hours = append(hours, bar{fmt.Sprintf("%02d:00", hr), n})
		}
	}
	if len(hours) > 0 {
		h.WriteString(barTable("Cancellations by hour", hours, ""))
	}
	var places []bar
	for _, pf := range f.AcceptanceByPlace {
		if pf.Offers > 0 {
			places = append(places, bar{"place " + pf.Places, pct(pf.Rate)})
		}
	}
	if len(places) > 0 {
		h.WriteString(barTable("Offers claimed, by place in line (%)", places, "%"))
	}
	fmt.Fprintf(&h, `<p style="margin:20px 0 0"><a href="%s" style="color:#1d4ed8">Open the whole summary, with every past month</a></p>`, esc(link))
	h.WriteString(`</body></html>`)
	m.Body, m.HTML = text.String(), h.String()
	return m
}

func orDash(n int, s string) string {
	if n == 0 {
		return "–"
	}
	return s
}

type bar struct {
	label string
	n     int
}

// barTable is a bar chart as an HTML table: a label, a bar as wide as
// its share of the largest (at most 240 px), and the count. With unit
// "%" the counts are percentages and the scale is 0 to 100.
func barTable(title string, bars []bar, unit string) string {
	top := 1
	for _, b := range bars {
		top = max(top, b.n)
	}
	if unit == "%" {
		top = 100
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<h2 style="font-size:16px;margin:20px 0 6px">%s</h2>`, html.EscapeString(title))
	sb.WriteString(`<table role="presentation" cellpadding="2" cellspacing="0" style="font-size:13px">`)
	for _, b := range bars {
		w := b.n * 240 / top
		cell := `<td style="font-size:0;line-height:0">&nbsp;</td>`
		if w > 0 {
			cell = fmt.Sprintf(`<td width="%d" style="background:#2563eb;width:%dpx;height:14px;font-size:0;line-height:0">&nbsp;</td>`, w, w)
		}
		fmt.Fprintf(&sb, `<tr><td style="padding-right:8px;white-space:nowrap">%s</td><td><table role="presentation" cellpadding="0" cellspacing="0"><tr>%s<td style="padding-left:6px">%d%s</td></tr></table></td></tr>`,
			html.EscapeString(b.label), cell, b.n, unit)
	}
	sb.WriteString(`</table>`)
	return sb.String()
}

// SummaryView is a stored summary with its report decoded.
type SummaryView struct {
	nextup.Summary
	Report Report
}

// Summaries lists a business's summaries, newest month first.
func (s *Insight) Summaries(ctx context.Context, businessID string) ([]SummaryView, error) {
	var out []SummaryView
	err := s.Read(ctx, func(tx nextup.Tx) error {
		if _, err := tx.BusinessGet(ctx, businessID); err != nil {
			return core.NotFound("business", businessID, err)
		}
		all, err := tx.SummaryList(ctx, businessID, 0)
		if err != nil {
			return err
		}
		for _, sm := range all {
			v, err := decodeSummary(sm)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// Summary reads a business's summary of a month ("2006-01").
func (s *Insight) Summary(ctx context.Context, businessID, month string) (SummaryView, error) {
	if _, err := time.Parse("2006-01", month); err != nil {
		return SummaryView{}, core.NotFound("summary", month, nil)
	}
	var out SummaryView
	err := s.Read(ctx, func(tx nextup.Tx) error {
		sm, err := tx.SummaryGet(ctx, businessID, month)
		if err != nil {
			return core.NotFound("summary", month, err)
		}
		out, err = decodeSummary(sm)
		return err
	})
	return out, err
}

func decodeSummary(sm nextup.Summary) (SummaryView, error) {
	v := SummaryView{Summary: sm}
	if err := json.Unmarshal(sm.Figures, &v.Report); err != nil {
		return v, fmt.Errorf("summary %s of %s: %w", sm.Month, sm.BusinessID, err)
	}
	v.Report.Figures.normalize()
	v.Report.Previous.normalize()
	return v, nil
}

// normalize gives every map and list of f a value, so that figures kept
// by an older nextup (with fewer fields) read as empty, never null.
func (f *Figures) normalize() {
	if f.FreedBy == nil {
		f.FreedBy = map[string]int{}
	}
	if f.HandBacksBy == nil {
		f.HandBacksBy = map[string]int{}
	}
	if f.AcceptanceByPlace == nil {
		f.AcceptanceByPlace = []PlaceFigure{}
	}
	if f.Messages == nil {
		f.Messages = []ChannelFigure{}
	}
	for _, g := range []*[]Group{&f.ByService, &f.ByStaff, &f.ByWeekday} {
		if *g == nil {
			*g = []Group{}
		}
	}
}

// Money is an amount in the business's currency, as the narrative writes it.
func Money(b nextup.Business, cents int64) string { return money(b, cents) }

// Human is a duration in seconds as the narrative writes it ("12 minutes").
func Human(seconds float64) string { return human(seconds) }

// MonthName is a month ("2006-01") as words ("November 2026").
func MonthName(month string) string { return monthName(month) }
