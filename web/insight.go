package web

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/insight"
)

// maxAnalyticsSpan is the longest range one analytics request reads.
const maxAnalyticsSpan = 366 * 24 * time.Hour

// analytics is GET /v1/businesses/{bid}/analytics?from=&to=: the figures
// of any range ({"figures"}), or with format=csv the same as a CSV of
// figure,value rows. from and to are dates (YYYY-MM-DD, in the business's
// timezone; to is the last day included) or RFC 3339 times (to excluded);
// from defaults to the first of this month, to to now.
func (s *Server) analytics(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	loc := bizLoc(b)
	now := s.Svc.Clock.Now().In(loc)
	q := r.URL.Query()
	from, err := rangeBound("from", q.Get("from"), loc, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	to, err := rangeBound("to", q.Get("to"), loc, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if from.IsZero() {
		from = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
		if !now.After(from) {
			from = from.AddDate(0, -1, 0) // at midnight on the first: the month before
		}
	}
	if to.IsZero() {
		to = now
	}
	switch {
	case !from.Before(to):
		s.writeError(w, r, invalidf("to", "must be after from"))
		return
	case to.Sub(from) > maxAnalyticsSpan:
		s.writeError(w, r, invalidf("to", "a range is at most 366 days"))
		return
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "csv" {
		s.writeError(w, r, invalidf("format", "must be json or csv"))
		return
	}
	f, err := s.Svc.Figures(r.Context(), b.ID, from, to)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	f.From, f.To = f.From.In(loc), f.To.In(loc)
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="nextup-%s-%s.csv"`,
			f.From.Format("2006-01-02"), f.To.Format("2006-01-02")))
		cw := csv.NewWriter(w)
		_ = cw.WriteAll(FiguresCSV(f))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"figures": f})
}

// rangeBound reads one end of an analytics range: a date in loc (for the
// end, the day after it, so that the day is included) or an RFC 3339 time.
func rangeBound(field, v string, loc *time.Location, end bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return checkYear(field, d)
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, invalidf(field, "want a date (2026-10-01) or an RFC 3339 time with an offset")
	}
	return checkYear(field, t)
}

func checkYear(field string, t time.Time) (time.Time, error) {
	if t.Year() < 2000 || t.Year() > 2100 {
		return time.Time{}, invalidf(field, "must be between the years 2000 and 2100")
	}
	return t, nil
}

// FiguresCSV is the figures as CSV rows: a header, then figure,value.
func FiguresCSV(f insight.Figures) [][]string {
	rows := [][]string{{"figure", "value"}}
	add := func(name string, v any) { rows = append(rows, []string{name, fmt.Sprint(v)}) }
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	add("from", f.From.Format(time.RFC3339))
	add("to", f.To.Format(time.RFC3339))
	add("slots_freed", f.SlotsFreed)
	add("seats_freed", f.SeatsFreed)
	for _, k := range []string{insight.FreedCancellation, insight.FreedNoShow, insight.FreedOpening} {
		add("freed_by_"+k, f.FreedBy[k])
	}
	add("slots_filled", f.SlotsFilled)
	add("fill_rate", num(f.FillRate))
	add("time_to_fill_p50_seconds", num(f.TimeToFillP50Seconds))
	add("time_to_fill_p90_seconds", num(f.TimeToFillP90Seconds))
	add("seats_claimed", f.SeatsClaimed)
	add("revenue_recovered_cents", f.RevenueRecoveredCents)
	add("offers_made", f.OffersMade)
	add("offers_claimed", f.OffersClaimed)
	add("offers_declined", f.OffersDeclined)
	add("offers_lapsed", f.OffersLapsed)
	add("offers_cancelled", f.OffersCancelled)
	for _, p := range f.AcceptanceByPlace {
		add("offers_at_place_"+p.Places, p.Offers)
		add("claimed_at_place_"+p.Places, p.Claimed)
	}
	add("hand_backs", f.HandBacks)
	add("bookings", f.Bookings)
	add("no_shows", f.NoShows)
	add("no_show_rate", num(f.NoShowRate))
	add("waitlist_joined", f.WaitlistJoined)
	add("waitlist_left", f.WaitlistLeft)
	add("waitlist_booked", f.WaitlistBooked)
	add("waitlist_expired", f.WaitlistExpired)
	for _, m := range f.Messages {
		add("messages_"+m.Channel+"_made", m.Made)
		add("messages_"+m.Channel+"_sent", m.Sent)
		add("messages_"+m.Channel+"_failed", m.Failed)
	}
	for d, n := range f.CancellationsByWeekday {
		add("cancellations_"+time.Weekday(d).String(), n)
	}
	for h, n := range f.CancellationsByHour {
		add(fmt.Sprintf("cancellations_%02d00", h), n)
	}
	return rows
}

// summaries is GET /v1/businesses/{bid}/summaries: every monthly summary,
// newest first.
func (s *Server) summaries(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	all, err := s.Svc.Summaries(r.Context(), b.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	loc := bizLoc(b)
	out := make([]map[string]any, 0, len(all))
	for _, v := range all {
		out = append(out, summaryOut(v, loc, false))
	}
	writeJSON(w, http.StatusOK, map[string]any{"summaries": out})
}

// summary is GET /v1/businesses/{bid}/summaries/{month}: one month's
// figures, the month before's and the narrative.
func (s *Server) summary(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	v, err := s.Svc.Summary(r.Context(), b.ID, r.PathValue("month"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, summaryOut(v, bizLoc(b), true))
}

func summaryOut(v insight.SummaryView, loc *time.Location, whole bool) map[string]any {
	f, p := v.Report.Figures, v.Report.Previous
	f.From, f.To, p.From, p.To = f.From.In(loc), f.To.In(loc), p.From.In(loc), p.To.In(loc)
	out := map[string]any{"month": v.Month, "figures": f, "created_at": v.CreatedAt.In(loc), "sent_at": nil}
	if v.SentAt != nil {
		out["sent_at"] = v.SentAt.In(loc)
	}
	if whole {
		out["previous"] = p
		out["narrative"] = v.Narrative
		out["narrative_by"] = v.NarrativeBy
	}
	return out
}

// entryHistory is GET /v1/waitlist/{eid}/history: the entry's place in
// line over time and every slot of its list decided while it was on it,
// replayed from the audit trail.
func (s *Server) entryHistory(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	h, err := s.Svc.History(r.Context(), b.ID, r.PathValue("eid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	loc := bizLoc(b)
	for i := range h.Positions {
		h.Positions[i].At = h.Positions[i].At.In(loc)
	}
	for i := range h.Slots {
		h.Slots[i].StartsAt, h.Slots[i].At = h.Slots[i].StartsAt.In(loc), h.Slots[i].At.In(loc)
	}
	writeJSON(w, http.StatusOK, h)
}

// entryWhy is GET /v1/waitlist/{eid}/why?slot_id=: whether the entry was
// offered the slot, and why not, in a paragraph support can paste.
func (s *Server) entryWhy(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	slotID := r.URL.Query().Get("slot_id")
	if slotID == "" {
		s.writeError(w, r, invalidf("slot_id", "is required"))
		return
	}
	v, err := s.Svc.WhyNot(r.Context(), b.ID, r.PathValue("eid"), slotID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
