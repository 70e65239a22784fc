package web

import (
	"encoding/csv"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/insight"
	"github.com/nextup-dev/nextup/web/chart"
)

// The owner's pages of what the waitlist did: the monthly summaries (a
// list of every month, and one month's narrative, figures against the
// month before and charts) and the analytics of any range of days, with
// the same figures, the slots' figures by service, staff and weekday, and
// a CSV of it all. Charts are server-side SVG (package chart), text at
// least 11 px, readable at phone width.

type insightData struct {
	Title, Business, Staff, CSRF, Error string

	Heading string
	// The list of summaries.
	Listing bool
	Months  []monthRow
	Owner   string
	// The analytics' range form.
	Range    bool
	From, To string

	Narrative, NarrativeBy string
	Figures                []figureRow
	ThisLabel, PrevLabel   string
	Charts                 []template.HTML
	ByService              []groupRow
	Places                 []placeRow

	Back, BackLabel string
}

type monthRow struct{ Month, Label, Freed, Filled, FillRate, Revenue, Sent string }

type figureRow struct{ Label, Now, Then string }

type groupRow struct{ Label, Freed, Filled, FillRate, Revenue string }

type placeRow struct{ Places, Offers, Claimed, Rate string }

func (s *Server) insightBase(sc staffCtx, title string) insightData {
	return insightData{Title: title, Heading: title, Business: sc.Business.Name, Staff: sc.Staff.Email, CSRF: sc.CSRF}
}

// dashSummaries is GET /dash/summaries: every month summed up, newest first.
func (s *Server) dashSummaries(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	all, err := s.Svc.Summaries(r.Context(), sc.Business.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d := s.insightBase(sc, "Monthly summaries")
	d.Listing, d.Owner = true, sc.Business.Profile.OwnerEmail
	loc := bizLoc(sc.Business)
	for _, v := range all {
		f := v.Report.Figures
		sent := "not emailed"
		if v.SentAt != nil {
			sent = v.SentAt.In(loc).Format("Mon 2 Jan 15:04")
		}
		d.Months = append(d.Months, monthRow{Month: v.Month, Label: insight.MonthName(v.Month), Freed: fmt.Sprint(f.SlotsFreed),
			Filled: fmt.Sprint(f.SlotsFilled), FillRate: percent(f.FillRate), Revenue: insight.Money(sc.Business, f.RevenueRecoveredCents), Sent: sent})
	}
	s.renderStaff(w, http.StatusOK, "insight", d)
}

// dashSummary is GET /dash/summaries/{month}: one month as the owner's
// email told it, with the charts.
func (s *Server) dashSummary(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	v, err := s.Svc.Summary(r.Context(), sc.Business.ID, r.PathValue("month"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d := s.insightBase(sc, "Your waitlist in "+insight.MonthName(v.Month))
	d.Narrative = v.Narrative
	if v.NarrativeBy == "model" {
		d.NarrativeBy = "Written by the assistant from the figures below; every number in it was checked against them."
	}
	d.ThisLabel, d.PrevLabel = insight.MonthName(v.Month), "The month before"
	if m, err := time.Parse("2006-01", v.Month); err == nil {
		d.PrevLabel = insight.MonthName(m.AddDate(0, -1, 0).Format("2006-01"))
	}
	fillInsight(&d, sc.Business, v.Report.Figures, &v.Report.Previous)
	d.Back, d.BackLabel = "/dash/summaries", "Every month"
	s.renderStaff(w, http.StatusOK, "insight", d)
}

// analyticsRange reads the dashboard's range (dates, to included),
// defaulting to the last 30 days.
func (s *Server) analyticsRange(r *http.Request, b nextup.Business) (from, to time.Time, fromS, toS string, err error) {
	loc := bizLoc(b)
	now := s.Svc.Clock.Now().In(loc)
	fromS, toS = r.URL.Query().Get("from"), r.URL.Query().Get("to")
	if toS == "" {
		toS = now.Format(time.DateOnly)
	}
	if fromS == "" {
		fromS = now.AddDate(0, 0, -29).Format(time.DateOnly)
	}
	if from, err = rangeBound("from", fromS, loc, false); err != nil {
		return
	}
	if to, err = rangeBound("to", toS, loc, true); err != nil {
		return
	}
	switch {
	case !from.Before(to):
		err = invalidf("to", "must not be before from")
	case to.Sub(from) > maxAnalyticsSpan:
		err = invalidf("to", "a range is at most 366 days")
	}
	return
}

// dashAnalytics is GET /dash/analytics?from=&to=: the figures of a range
// of days.
func (s *Server) dashAnalytics(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d := s.insightBase(sc, "Analytics")
	d.Range = true
	from, to, fromS, toS, err := s.analyticsRange(r, sc.Business)
	d.From, d.To = fromS, toS
	if err != nil {
		d.Error = "Choose a range of at most a year, from a day to a day on or after it."
		s.renderStaff(w, http.StatusBadRequest, "insight", d)
		return
	}
	f, err := s.Svc.Figures(r.Context(), sc.Business.ID, from, to)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d.ThisLabel = fromS + " to " + toS
	fillInsight(&d, sc.Business, f, nil)
	s.renderStaff(w, http.StatusOK, "insight", d)
}

// dashAnalyticsCSV is GET /dash/analytics.csv?from=&to=: the same as CSV.
func (s *Server) dashAnalyticsCSV(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	from, to, fromS, toS, err := s.analyticsRange(r, sc.Business)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	f, err := s.Svc.Figures(r.Context(), sc.Business.ID, from, to)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	f.From, f.To = f.From.In(loc), f.To.In(loc)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="nextup-%s-%s.csv"`, fromS, toS))
	_ = csv.NewWriter(w).WriteAll(FiguresCSV(f))
}

func percent(r float64) string { return fmt.Sprintf("%.0f%%", r*100) }

// fillInsight sets the figures table (against prev, when given), the
// charts and the by-service table of f.
func fillInsight(d *insightData, b nextup.Business, f insight.Figures, prev *insight.Figures) {
	p := insight.Figures{FreedBy: map[string]int{}}
	if prev != nil {
		p = *prev
	}
	dash := func(n int, s string) string {
		if n == 0 {
			return "–"
		}
		return s
	}
	row := func(label string, now, then string) { d.Figures = append(d.Figures, figureRow{label, now, then}) }
	n := func(i int) string { return fmt.Sprint(i) }
	row("Slots freed", n(f.SlotsFreed), n(p.SlotsFreed))
	row("… by cancellation / no-show / new opening",
		fmt.Sprintf("%d / %d / %d", f.FreedBy[insight.FreedCancellation], f.FreedBy[insight.FreedNoShow], f.FreedBy[insight.FreedOpening]),
		fmt.Sprintf("%d / %d / %d", p.FreedBy[insight.FreedCancellation], p.FreedBy[insight.FreedNoShow], p.FreedBy[insight.FreedOpening]))
	row("Filled from the waitlist", n(f.SlotsFilled), n(p.SlotsFilled))
	row("Fill rate", percent(f.FillRate), percent(p.FillRate))
	row("Time to fill, median", dash(f.SlotsFilled, insight.Human(f.TimeToFillP50Seconds)), dash(p.SlotsFilled, insight.Human(p.TimeToFillP50Seconds)))
	row("Time to fill, 9 in 10 within", dash(f.SlotsFilled, insight.Human(f.TimeToFillP90Seconds)), dash(p.SlotsFilled, insight.Human(p.TimeToFillP90Seconds)))
	row("Revenue recovered", insight.Money(b, f.RevenueRecoveredCents), insight.Money(b, p.RevenueRecoveredCents))
	row("Offers made", n(f.OffersMade), n(p.OffersMade))
	row("… claimed / declined / lapsed", fmt.Sprintf("%d / %d / %d", f.OffersClaimed, f.OffersDeclined, f.OffersLapsed),
		fmt.Sprintf("%d / %d / %d", p.OffersClaimed, p.OffersDeclined, p.OffersLapsed))
	row("Handed back to your team", n(f.HandBacks), n(p.HandBacks))
	row("No-shows", fmt.Sprintf("%d of %d bookings (%s)", f.NoShows, f.Bookings, percent(f.NoShowRate)),
		fmt.Sprintf("%d of %d bookings (%s)", p.NoShows, p.Bookings, percent(p.NoShowRate)))
	row("Waitlist: joined / left / booked / expired", fmt.Sprintf("%d / %d / %d / %d", f.WaitlistJoined, f.WaitlistLeft, f.WaitlistBooked, f.WaitlistExpired),
		fmt.Sprintf("%d / %d / %d / %d", p.WaitlistJoined, p.WaitlistLeft, p.WaitlistBooked, p.WaitlistExpired))
	for _, m := range f.Messages {
		row("Messages by "+m.Channel+": sent / not delivered", fmt.Sprintf("%d / %d", m.Sent, m.Failed), "")
	}

	var weekdays []chart.Count
	for i := range 7 {
		wd := time.Weekday((i + 1) % 7)
		weekdays = append(weekdays, chart.Count{Label: wd.String()[:3], Value: f.CancellationsByWeekday[wd]})
	}
	var hours []chart.Count
	for h, c := range f.CancellationsByHour {
		label := "" // every third hour is labelled: 24 labels do not fit a phone
		if h%3 == 0 {
			label = fmt.Sprint(h)
		}
		hours = append(hours, chart.Count{Label: label, Value: c})
	}
	for _, pf := range f.AcceptanceByPlace {
		d.Places = append(d.Places, placeRow{Places: pf.Places, Offers: n(pf.Offers), Claimed: n(pf.Claimed), Rate: dash(pf.Offers, percent(pf.Rate))})
	}
	d.Charts = []template.HTML{
		chart.Counts("Slots freed, by how", []chart.Count{{Label: "Cancelled", Value: f.FreedBy[insight.FreedCancellation]},
			{Label: "No-show", Value: f.FreedBy[insight.FreedNoShow]}, {Label: "New opening", Value: f.FreedBy[insight.FreedOpening]}}),
		chart.Counts("Cancellations by weekday", weekdays),
		chart.Counts("Cancellations by hour of the day", hours),
	}
	for _, g := range f.ByService {
		d.ByService = append(d.ByService, groupRow{Label: g.Name, Freed: n(g.SlotsFreed), Filled: n(g.SlotsFilled), FillRate: percent(g.FillRate),
			Revenue: insight.Money(b, g.RevenueRecoveredCents)})
	}
}

type replayData struct {
	Title, Business, Staff, CSRF, Error string

	Summary string
	Chart   template.HTML
	Places  []replayPlace
	Slots   []replaySlot
}

type replayPlace struct {
	At       string
	InLine   bool
	Position int
	Text     string
}

type replaySlot struct {
	ID, Time, Staff, End, Why, Explanation string
	Offered                                bool
}

// whyLabels are the reason codes in a few words, for the replay page.
var whyLabels = map[string]string{
	insight.WhyEarlierInLine: "someone earlier in line", insight.WhyAlreadyOffered: "offered it before",
	insight.WhyHoldingOffer: "holding another offer", insight.WhyDailyCap: "daily offer limit",
	insight.WhyNoChannel: "no way to reach them", insight.WhyHandedBack: "went back to staff", insight.WhyQuietHours: "quiet hours",
	insight.WhyStaffChoice: "staff's choice", insight.WhyNotOnList: "never came up", insight.WhyUnexplained: "not explained by the record",
	"service": "another service", "event": "another event", "party": "party did not fit", "window": "outside their dates",
	"availability": "outside their times", "staff": "another staff member", "lead": "too close to its start",
}

// dashReplay is GET /dash/waitlist/{eid}/history: an entry's place in
// line over time and every slot of its list that came up while it was on
// it, offered or not and why — what support answers "I was next and I
// was skipped" with.
func (s *Server) dashReplay(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	ctx := r.Context()
	v, err := s.Svc.GetEntry(ctx, sc.Business.ID, r.PathValue("eid"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	h, err := s.Svc.History(ctx, sc.Business.ID, v.Entry.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	e := v.Entry
	what := e.Service
	if e.EventID != "" {
		what = "the event"
	}
	d := replayData{Title: e.Name + "'s place in line", Business: sc.Business.Name, Staff: sc.Staff.Email, CSRF: sc.CSRF}
	d.Summary = fmt.Sprintf("%s, waiting for %s since %s; now %s.", cmpOr(e.Name, "Someone"), what,
		e.JoinedAt.In(loc).Format("Mon 2 Jan 15:04"), entryStateWords(e, v.Position))
	var pts []chart.Place
	for _, p := range h.Positions {
		d.Places = append(d.Places, replayPlace{At: p.At.In(loc).Format("Mon 2 Jan 15:04"), InLine: p.InLine, Position: p.Position, Text: p.Detail})
		pts = append(pts, chart.Place{At: p.At, Place: p.Position})
	}
	d.Chart = chart.Places("Place in line, move by move", pts, loc)
	for i := len(h.Slots) - 1; i >= 0; i-- { // newest first
		so := h.Slots[i]
		rs := replaySlot{ID: so.SlotID, Time: so.StartsAt.In(loc).Format("15:04 Mon 2 Jan"), Staff: so.Staff,
			Offered: so.Outcome == insight.OutcomeOffered, Why: cmpOr(whyLabels[so.Why], so.Why), Explanation: so.Explanation}
		if rs.Offered {
			rs.End = map[string]string{"offered": "(open)", "claimed": "and booked", "declined": "and declined",
				"expired": "and left unanswered", "cancelled": "then withdrawn"}[so.Why]
		}
		d.Slots = append(d.Slots, rs)
	}
	s.renderStaff(w, http.StatusOK, "replay", d)
}

func entryStateWords(e nextup.Entry, position int) string {
	switch e.State {
	case nextup.EntryWaiting:
		return fmt.Sprintf("at place %d", position)
	case nextup.EntryOffered:
		return "holding an offer"
	case nextup.EntryBooked:
		return "booked"
	case nextup.EntryLeft:
		return "off the list"
	case nextup.EntryExpired:
		return "past their dates"
	}
	return string(e.State)
}
