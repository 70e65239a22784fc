package web_test

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"
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
