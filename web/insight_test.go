package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/insight"
)

// TestAnalyticsOverHTTP frees two slots — one claimed from the waitlist a
// few minutes later, one handed back — and reads the day's figures as
// JSON and as CSV; a bad range is refused.
func TestAnalyticsOverHTTP(t *testing.T) {
	t.Parallel()
	a := setup(t)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"services":[{"name":"Haircut","price_cents":4500}]}`), 200, nil)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	sl := a.slot(chair)
	var rel struct {
		Moves []struct {
			OfferID string `json:"offer_id"`
		} `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+sl["id"].(string)+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	if len(rel.Moves) != 1 || rel.Moves[0].OfferID == "" {
		t.Fatalf("release = %+v", rel)
	}
	a.clock.Advance(4 * time.Minute)
	a.must(a.do("POST", "/v1/claims/"+a.token(rel.Moves[0].OfferID)+":accept", "", ""), 200, nil)
	// Bob, the only one waiting for a colour, declines it: the slot is
	// handed back.
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Bob","email":"bob@example.com","service":"colour"}`), 201, nil)
	other := a.slot(`{"service":"colour","starts_at":"2026-12-02T14:00:00Z","ends_at":"2026-12-02T15:00:00Z"}`)
	a.must(a.do("POST", "/v1/slots/"+other["id"].(string)+":release", a.key, `{"reason":"no_show"}`), 200, &rel)
	if len(rel.Moves) != 1 {
		t.Fatalf("colour release = %+v", rel)
	}
	a.must(a.do("POST", "/v1/claims/"+a.token(rel.Moves[0].OfferID)+":decline", "", ""), 200, nil)

	path := "/v1/businesses/" + a.bid + "/analytics?from=2026-12-01&to=2026-12-01"
	var out struct {
		Figures map[string]any `json:"figures"`
	}
	a.must(a.do("GET", path, a.key, ""), 200, &out)
	f := out.Figures
	want := map[string]float64{"slots_freed": 2, "slots_filled": 1, "fill_rate": 0.5, "time_to_fill_p50_seconds": 240,
		"revenue_recovered_cents": 4500, "offers_made": 2, "offers_claimed": 1, "offers_declined": 1, "hand_backs": 1,
		"bookings": 1, "no_show_rate": 0, "waitlist_joined": 2, "waitlist_booked": 1}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("figures[%s] = %v, want %v", k, f[k], v)
		}
	}
	if by := f["freed_by"].(map[string]any); by["cancellation"] != 1.0 || by["no_show"] != 1.0 {
		t.Errorf("freed_by = %v", by)
	}
	if f["from"] != "2026-12-01T00:00:00Z" || f["to"] != "2026-12-02T00:00:00Z" {
		t.Errorf("range = %v to %v, want the day in London (UTC in December)", f["from"], f["to"])
	}
	// The next day holds none of it.
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/analytics?from=2026-12-02&to=2026-12-02", a.key, ""), 200, &out)
	if out.Figures["slots_freed"] != 0.0 || out.Figures["offers_made"] != 0.0 {
		t.Errorf("the next day's figures = %v", out.Figures)
	}

	r := a.do("GET", path+"&format=csv", a.key, "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, row := range rows[1:] {
		got[row[0]] = row[1]
	}
	if rows[0][0] != "figure" || got["slots_freed"] != "2" || got["revenue_recovered_cents"] != "4500" || got["fill_rate"] != "0.5" ||
		got["cancellations_Tuesday"] != "1" || got["cancellations_1000"] != "1" {
		t.Errorf("csv rows = %v", got)
	}

	for _, bad := range []string{"?from=2026-12-05&to=2026-12-01", "?from=yesterday", "?from=1999-01-01",
		"?from=2026-01-01&to=2027-06-01", "?format=xml"} {
		a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/analytics"+bad, a.key, ""), 400, "validation_failed")
	}
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/analytics", "", ""), 401, "unauthorized")
}

// TestSummariesOverHTTP reads the monthly summaries a business has: the
// list, newest first, and one month with the month before and the
// narrative; a month without one is 404.
func TestSummariesOverHTTP(t *testing.T) {
	t.Parallel()
	a := setup(t)
	loc, _ := time.LoadLocation("Europe/London")
	sent := time.Date(2026, 12, 7, 9, 0, 0, 0, loc)
	for _, s := range []nextup.Summary{
		{BusinessID: a.bid, Month: "2026-10", Figures: []byte(`{"month":"2026-10","figures":{"slots_freed":4,"slots_filled":3},"previous":{}}`),
			Narrative: "October.", NarrativeBy: "template", CreatedAt: sent.AddDate(0, -1, 0)},
		{BusinessID: a.bid, Month: "2026-11", Figures: []byte(`{"month":"2026-11","figures":{"slots_freed":19,"slots_filled":14,"fill_rate":0.737},"previous":{"slots_freed":4,"slots_filled":3}}`),
			Narrative: "You recovered 14 of 19 freed slots.", NarrativeBy: "model", CreatedAt: sent, SentAt: &sent, MessageID: "msg_1"},
	} {
		if err := a.store.InTx(context.Background(), func(tx nextup.Tx) error { return tx.SummaryCreate(context.Background(), s) }); err != nil {
			t.Fatal(err)
		}
	}
	var list struct {
		Summaries []map[string]any `json:"summaries"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/summaries", a.key, ""), 200, &list)
	if len(list.Summaries) != 2 || list.Summaries[0]["month"] != "2026-11" || list.Summaries[1]["month"] != "2026-10" ||
		list.Summaries[0]["sent_at"] != "2026-12-07T09:00:00Z" || list.Summaries[1]["sent_at"] != nil {
		t.Fatalf("summaries = %v", list.Summaries)
	}
	var one map[string]any
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/summaries/2026-11", a.key, ""), 200, &one)
	f, p := one["figures"].(map[string]any), one["previous"].(map[string]any)
	if f["slots_filled"] != 14.0 || f["fill_rate"] != 0.737 || p["slots_freed"] != 4.0 || one["narrative"] != "You recovered 14 of 19 freed slots." || one["narrative_by"] != "model" {
		t.Errorf("summary = %v", one)
	}
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/summaries/2026-09", a.key, ""), 404, "not_found")
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/summaries/november", a.key, ""), 404, "not_found")
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/summaries", "", ""), 401, "unauthorized")
}

// TestDashboardSummariesAndAnalytics signs in and opens the summaries
// list, one month's summary with its charts, and the analytics of a range
// with its CSV; a bad range says what is wrong.
func TestDashboardSummariesAndAnalytics(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	sl := sb.slot(chair)
	var rel struct {
		Moves []struct {
			OfferID string `json:"offer_id"`
		} `json:"moves"`
	}
	sb.must(sb.do("POST", "/v1/slots/"+sl["id"].(string)+":release", sb.key, `{"reason":"cancellation"}`), 200, &rel)
	sb.must(sb.do("POST", "/v1/claims/"+sb.token(rel.Moves[0].OfferID)+":accept", "", ""), 200, nil)
	rep, _ := json.Marshal(insight.Report{Month: "2026-11",
		Figures:  insight.Figures{SlotsFreed: 19, SlotsFilled: 14, FillRate: 0.737, RevenueRecoveredCents: 62000, FreedBy: map[string]int{"cancellation": 19}},
		Previous: insight.Figures{SlotsFreed: 4, SlotsFilled: 3}})
	if err := sb.store.InTx(context.Background(), func(tx nextup.Tx) error {
		return tx.SummaryCreate(context.Background(), nextup.Summary{BusinessID: sb.bid, Month: "2026-11", Figures: rep,
			Narrative: "You recovered 14 of 19 freed slots.", NarrativeBy: "template", CreatedAt: sb.clock.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)

	list := b.do("GET", "/dash/summaries", nil)
	if list.status != 200 || !strings.Contains(list.body, `<a href="/dash/summaries/2026-11">November 2026</a>`) || !strings.Contains(list.body, "74%") {
		t.Fatalf("summaries page: %d\n%s", list.status, list.body)
	}
	month := b.do("GET", "/dash/summaries/2026-11", nil)
	for _, want := range []string{"Your waitlist in November 2026", "You recovered 14 of 19 freed slots.", "<th>October 2026</th>",
		"<td>Filled from the waitlist</td><td><b>14</b></td><td class=\"muted\">3</td>", "<svg", "Cancellations by weekday"} {
		if !strings.Contains(month.body, want) {
			t.Errorf("the month's page lacks %q", want)
		}
	}
	if p := b.do("GET", "/dash/summaries/2026-10", nil); p.status != 404 {
		t.Errorf("a month without a summary: %d", p.status)
	}

	an := b.do("GET", "/dash/analytics?from=2026-12-01&to=2026-12-01", nil)
	for _, want := range []string{`value="2026-12-01"`, "<td>Slots freed</td><td><b>1</b></td>", "<td>Filled from the waitlist</td><td><b>1</b></td>",
		`<td>haircut</td><td data-label="Freed">1</td><td data-label="Filled">1</td><td data-label="Rate">100%</td>`, `href="/dash/analytics.csv?from=2026-12-01&amp;to=2026-12-01"`} {
		if !strings.Contains(an.body, want) {
			t.Errorf("the analytics page lacks %q:\n%s", want, an.body)
		}
	}
	csvPage := b.do("GET", "/dash/analytics.csv?from=2026-12-01&to=2026-12-01", nil)
	if csvPage.status != 200 || !strings.Contains(csvPage.body, "slots_filled,1\n") || !strings.HasPrefix(csvPage.header.Get("Content-Type"), "text/csv") {
		t.Errorf("csv: %d %s\n%s", csvPage.status, csvPage.header.Get("Content-Type"), csvPage.body)
	}
	if bad := b.do("GET", "/dash/analytics?from=2026-12-05&to=2026-12-01", nil); bad.status != 400 || !strings.Contains(bad.body, "Choose a range") {
		t.Errorf("a backwards range: %d", bad.status)
	}
}

// TestEventsAcrossAndFillLine: the events list gives each event's
// waitlist against its seats and its no-show rate, and the event page
// says how freed seats were refilled.
func TestEventsAcrossAndFillLine(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	ctx := context.Background()
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Supper club", sb.clock.Now().AddDate(0, 0, 7), sb.clock.Now().AddDate(0, 0, 7).Add(3*time.Hour), 2
	ev, err := sb.svc.CreateEvent(ctx, sb.bid, p)
	if err != nil {
		t.Fatal(err)
	}
	var ann string
	for _, name := range []string{"Ann", "Bob", "Cat", "Dee", "Eve"} {
		reg, _, err := sb.svc.Register(ctx, sb.bid, ev.ID, waitlist.RegisterParams{Name: name, Email: strings.ToLower(name) + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if name == "Ann" {
			ann = reg.Entry.ID
		}
	}
	_, moves, err := sb.svc.CancelRegistration(ctx, sb.bid, ev.ID, ann, nextup.ActorCustomer)
	if err != nil || len(moves) != 1 {
		t.Fatalf("cancel: %+v %v", moves, err)
	}
	sb.clock.Advance(2 * time.Minute)
	sb.must(sb.do("POST", "/v1/claims/"+sb.token(moves[0].OfferID)+":accept", "", ""), 200, nil)
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)
	list := b.do("GET", "/dash/events", nil)
	// Two still wait for two seats; nobody was marked yet.
	if !strings.Contains(list.body, `<td data-label="Waitlist ÷ seats">1.0×</td><td data-label="No-shows">–</td>`) || !strings.Contains(list.body, "Waitlist ÷ seats") {
		t.Errorf("the events list:\n%s", list.body)
	}
	page := b.do("GET", "/dash/events/"+ev.ID, nil)
	if !strings.Contains(page.body, `id="fill-line">Seats were freed once (1 seat in all); the waitlist took them up 1 of 1 times (100%), half within 2 minutes.`) {
		t.Errorf("the event page's fill line:\n%s", page.body)
	}
}

// TestHistoryAndWhyOverHTTP: Ann, Dan and Cat wait for a haircut, Cat
// with Bo only. A slot with Ana is freed: Ann is offered it. Dan's replay
// says someone earlier in line had it and his place moved up when Ann
// took the offer; Cat's says she asked for Bo; "why" says the same in a
// paragraph, and refuses a missing slot or another business's entry.
func TestHistoryAndWhyOverHTTP(t *testing.T) {
	t.Parallel()
	a := setup(t)
	ids := map[string]string{}
	for _, name := range []string{"Ann", "Cat", "Dan"} {
		var e struct {
			ID string `json:"id"`
		}
		staff := ""
		if name == "Cat" {
			staff = `,"staff":"Bo"`
		}
		a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
			`{"name":"`+name+`","email":"`+strings.ToLower(name)+`@example.com","service":"haircut"`+staff+`}`), 201, &e)
		ids[name] = e.ID
		a.clock.Advance(time.Minute)
	}
	sl := a.slot(chair)
	slotID := sl["id"].(string)
	a.must(a.do("POST", "/v1/slots/"+slotID+":release", a.key, `{"reason":"cancellation"}`), 200, nil)

	type history struct {
		EntryID   string `json:"entry_id"`
		Positions []struct {
			Position int    `json:"position"`
			InLine   bool   `json:"in_line"`
			Cause    string `json:"cause"`
		} `json:"positions"`
		Slots []struct {
			SlotID      string `json:"slot_id"`
			Outcome     string `json:"outcome"`
			Why         string `json:"why"`
			Explanation string `json:"explanation"`
		} `json:"slots"`
	}
	var dan history
	a.must(a.do("GET", "/v1/waitlist/"+ids["Dan"]+"/history", a.key, ""), 200, &dan)
	var places []string
	for _, p := range dan.Positions {
		places = append(places, fmt.Sprintf("%d:%s", p.Position, p.Cause))
	}
	if got := strings.Join(places, " "); got != "3:joined 2:ahead_offered" {
		t.Errorf("Dan's places = %s, want 3:joined 2:ahead_offered", got)
	}
	if len(dan.Slots) != 1 || dan.Slots[0].SlotID != slotID || dan.Slots[0].Outcome != "skipped" || dan.Slots[0].Why != "earlier_in_line" ||
		!strings.Contains(dan.Slots[0].Explanation, "someone earlier in line (place 1; you were at place 3)") {
		t.Errorf("Dan's slots = %+v", dan.Slots)
	}
	var cat history
	a.must(a.do("GET", "/v1/waitlist/"+ids["Cat"]+"/history", a.key, ""), 200, &cat)
	if len(cat.Slots) != 1 || cat.Slots[0].Why != "staff" {
		t.Errorf("Cat's slots = %+v", cat.Slots)
	}
	var ann history
	a.must(a.do("GET", "/v1/waitlist/"+ids["Ann"]+"/history", a.key, ""), 200, &ann)
	if n := len(ann.Positions); n != 2 || ann.Positions[1].Cause != "offered" || ann.Positions[1].InLine || len(ann.Slots) != 1 || ann.Slots[0].Outcome != "offered" {
		t.Errorf("Ann's history = %+v", ann)
	}

	var why struct {
		SlotID      string `json:"slot_id"`
		Offered     bool   `json:"offered"`
		Explanation string `json:"explanation"`
		Reasons     []struct {
			Code string `json:"code"`
		} `json:"reasons"`
	}
	a.must(a.do("GET", "/v1/waitlist/"+ids["Cat"]+"/why?slot_id="+slotID, a.key, ""), 200, &why)
	if why.Offered || len(why.Reasons) != 1 || why.Reasons[0].Code != "staff" || !strings.Contains(why.Explanation, "was with Ana; you asked for Bo") {
		t.Errorf("why not Cat = %+v", why)
	}
	a.must(a.do("GET", "/v1/waitlist/"+ids["Ann"]+"/why?slot_id="+slotID, a.key, ""), 200, &why)
	if !why.Offered {
		t.Errorf("why for Ann = %+v, want offered", why)
	}
	a.must(a.do("GET", "/v1/waitlist/"+ids["Dan"]+"/why", a.key, ""), 400, nil)
	a.must(a.do("GET", "/v1/waitlist/"+ids["Dan"]+"/why?slot_id=slot_nope", a.key, ""), 404, nil)
	// Another business on the same server sees nothing of Dan's.
	var biz2 map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"Europe/London"}`), 201, &biz2)
	key2 := biz2["api_key"].(string)
	a.must(a.do("GET", "/v1/waitlist/"+ids["Dan"]+"/history", key2, ""), 404, nil)
	a.must(a.do("GET", "/v1/waitlist/"+ids["Dan"]+"/why?slot_id="+slotID, key2, ""), 404, nil)
}
