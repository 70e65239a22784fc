package insight

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/anthropic"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

func TestSummaryAtFirstMondayNine(t *testing.T) {
	t.Parallel()
	loc, _ := time.LoadLocation("Europe/London")
	ny, _ := time.LoadLocation("America/New_York")
	for _, c := range []struct {
		now  time.Time
		want time.Time
	}{
		// 1 Dec 2026 is a Tuesday: the first Monday is the 7th.
		{time.Date(2026, 12, 1, 10, 0, 0, 0, loc), time.Date(2026, 12, 7, 9, 0, 0, 0, loc)},
		// At 09:00 on that Monday it is the next month's: 1 Jan 2027 is
		// a Friday, so Monday 4 January.
		{time.Date(2026, 12, 7, 9, 0, 0, 0, loc), time.Date(2027, 1, 4, 9, 0, 0, 0, loc)},
		{time.Date(2026, 12, 7, 8, 59, 0, 0, loc), time.Date(2026, 12, 7, 9, 0, 0, 0, loc)},
		// February 2027 begins on a Monday.
		{time.Date(2027, 1, 20, 0, 0, 0, 0, loc), time.Date(2027, 2, 1, 9, 0, 0, 0, loc)},
		// In the business's own timezone: 05:00 UTC on 7 Dec is midnight
		// in New York, before its 09:00.
		{time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC).In(ny), time.Date(2026, 12, 7, 9, 0, 0, 0, ny)},
	} {
		if got := NextSummaryAt(c.now, c.now.Location()); !got.Equal(c.want) {
			t.Errorf("NextSummaryAt(%v) = %v, want %v", c.now, got, c.want)
		}
	}
	b := nextup.Business{ID: "biz_1", Timezone: "Europe/London"}
	tm := SummaryTimer(b, time.Date(2026, 12, 1, 10, 0, 0, 0, loc))
	if tm.Key != "monthly_summary:biz_1:2026-12" || tm.Kind != nextup.TimerMonthlySummary {
		t.Errorf("timer %+v", tm)
	}
}

func report() (nextup.Business, Report) {
	b := nextup.Business{ID: "biz_1", Name: "Salon", Timezone: "Europe/London", Profile: nextup.Profile{Country: "GB"}}
	r := Report{Month: "2026-11",
		Figures: Figures{SlotsFreed: 19, SlotsFilled: 14, FillRate: 0.737, RevenueRecoveredCents: 62000,
			FreedBy: map[string]int{FreedCancellation: 12, FreedNoShow: 4, FreedOpening: 3}, TimeToFillP50Seconds: 720, TimeToFillP90Seconds: 4 * 3600,
			OffersMade: 30, OffersClaimed: 14, OffersDeclined: 9, OffersLapsed: 7, HandBacks: 2, Bookings: 14, NoShows: 1, WaitlistJoined: 41},
		Previous: Figures{SlotsFreed: 15, SlotsFilled: 9, RevenueRecoveredCents: 38000, FreedBy: map[string]int{}}}
	return b, r
}

func TestTemplateNarrative(t *testing.T) {
	t.Parallel()
	b, r := report()
	text := Narrative(b, r)
	for _, want := range []string{"In November 2026 19 slots were freed up (12 cancellations, 4 no-shows and 3 new openings).",
		"You recovered 14 of them from the waitlist (74%), worth £620.", "Half were filled within 12 minutes.",
		"Of 30 offers, 14 were claimed, 9 declined and 7 lapsed.", "2 slots went back to your team",
		"That is more than October 2026, when 9 of 15 were recovered."} {
		if !strings.Contains(text, want) {
			t.Errorf("narrative %q lacks %q", text, want)
		}
	}
	// The template says only what the figures say.
	if err := CheckNumbers(text, b, r); err != nil {
		t.Errorf("the template's own narrative: %v", err)
	}
	for cents, want := range map[int64]string{0: "£0", 5: "£0.05", 62000: "£620", 108500: "£1,085", 123456789: "£1,234,567.89"} {
		if got := money(b, cents); got != want {
			t.Errorf("money(%d) = %q, want %q", cents, got, want)
		}
	}
	quiet := Narrative(b, Report{Month: "2026-08"})
	if quiet != "August 2026 was quiet: no slot was freed and nobody joined the waitlist." {
		t.Errorf("quiet month: %q", quiet)
	}
}

func TestCheckNumbers(t *testing.T) {
	t.Parallel()
	b, r := report()
	for text, ok := range map[string]bool{
		"You won back 14 of 19 freed slots in November 2026, worth £620.":       true,
		"Cancellations (12) led, and half the slots were filled in 12 minutes.": true,
		"You won back 14 of 19 freed slots, worth £640.":                        false,
		"A fill rate of 73.7% this month.":                                      false, // the facts say 74%
		"That is 5 more than October.":                                          false, // a difference of its own
	} {
		if err := CheckNumbers(text, b, r); (err == nil) != ok {
			t.Errorf("CheckNumbers(%q) = %v, want ok=%v", text, err, ok)
		}
	}
}

// messagesAPI is a local fake of Anthropic's Messages API that answers
// every request with text, recording the request's facts.
func messagesAPI(t *testing.T, text string) (*httptest.Server, *string) {
	t.Helper()
	var facts string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "sk-test" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, http.StatusNotFound)
			return
		}
		var body struct {
			System   []struct{ Text string }
			Messages []struct {
				Content []struct{ Text string }
			}
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil || len(body.Messages) != 1 || len(body.System) != 1 {
			t.Errorf("request %s: %v", raw, err)
		} else {
			facts = body.Messages[0].Content[0].Text
		}
		answer, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
			"usage":{"input_tokens":10,"output_tokens":10},"content":[{"type":"text","text":` + string(answer) + `}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &facts
}

func TestNarrativeByTheModelIsChecked(t *testing.T) {
	t.Parallel()
	b, r := report()
	good := "November 2026 went well for Salon: 14 of the 19 slots that freed up went to people on your waitlist, worth £620."
	wrong := "November 2026 went well for Salon: 16 of the 19 slots that freed up went to people on your waitlist, worth £620."
	for _, c := range []struct {
		answer, want, by string
	}{{good, good, "model"}, {wrong, Narrative(b, r), "template"}} {
		srv, facts := messagesAPI(t, c.answer)
		s := &Insight{Service: &core.Service{Config: &core.Config{Narrator: anthropic.New("sk-test", srv.URL, "claude-test")}}}
		text, by := s.Narrate(context.Background(), b, r)
		if text != c.want || by != c.by {
			t.Errorf("model answered %q: narrative %q by %s, want %q by %s", c.answer, text, by, c.want, c.by)
		}
		if !strings.Contains(*facts, "filled from the waitlist: 14, that is 74%") || !strings.Contains(*facts, "revenue recovered: £620") {
			t.Errorf("the model was given %q", *facts)
		}
	}
	// A model that fails: the template's.
	s := &Insight{Service: &core.Service{Config: &core.Config{Narrator: anthropic.New("sk-wrong", "http://127.0.0.1:1", "claude-test")}}}
	if text, by := s.Narrate(context.Background(), b, r); by != "template" || text != Narrative(b, r) {
		t.Errorf("a failing model: %q by %s", text, by)
	}
}

func TestSummaryEmail(t *testing.T) {
	t.Parallel()
	b, r := report()
	r.Figures.CancellationsByWeekday[1] = 5
	r.Figures.CancellationsByHour[17] = 3
	r.Figures.AcceptanceByPlace = []PlaceFigure{{Places: "1", Offers: 10, Claimed: 7, Rate: 0.7}}
	m := SummaryEmail(b, r, "The narrative.", "https://nextup.test/dash/summaries/2026-11")
	if m.Subject != "Your waitlist in November 2026: 14 of 19 freed slots recovered" || m.Kind != MessageSummary || m.Channel != nextup.ChannelEmail {
		t.Errorf("message %+v", m)
	}
	for _, want := range []string{"The narrative.", "£620", "£380", "74%", "Cancellations by weekday", `width="240"`, "Mon", "17:00",
		"place 1", "70%", "https://nextup.test/dash/summaries/2026-11"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	for _, want := range []string{"The narrative.", "Revenue recovered", "£620", "https://nextup.test/dash/summaries/2026-11"} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("text lacks %q", want)
		}
	}
}
