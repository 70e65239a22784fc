package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/web/webtest"
)

// TestBoundedTransactionsOverHTTP drives the requests that would write more
// than one DynamoDB transaction takes (100 actions) through nextup-aws:
// a CSV import of 80 rows is committed a few rows at a time and keeps
// them all; a release that ends 30 registrations at once goes in parts
// and offers all 30 seats; growing the event offers the rest of its
// waitlist.
func TestBoundedTransactionsOverHTTP(t *testing.T) {
	t.Parallel()
	inst := serveOn(t, dynamoURL(t))
	client := &http.Client{Timeout: 60 * time.Second, Transport: webtest.Transport(t, nil)}
	call := func(method, path, key, ctype, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, inst.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return res.StatusCode, out
	}
	const js = "application/json"
	code, biz := call("POST", "/v1/businesses", "adm", js, `{"name":"Big Hall","timezone":"Europe/London","rules":{"quiet_hours":null,"max_offers_per_person_per_day":0}}`)
	if code != 201 {
		t.Fatalf("create business: %d %v", code, biz)
	}
	bid, key := biz["id"].(string), biz["api_key"].(string)

	// 80 rows in one file.
	var csv strings.Builder
	csv.WriteString("name,email,service\n")
	for i := range 80 {
		fmt.Fprintf(&csv, "Row %02d,row%02d@example.com,cut\n", i, i)
	}
	code, res := call("POST", "/v1/businesses/"+bid+"/waitlist:import", key, "text/csv", csv.String())
	if code != 200 || res["imported"] != float64(80) {
		t.Fatalf("import of 80 rows: %d %v", code, res)
	}
	_, list := call("GET", "/v1/businesses/"+bid+"/waitlist?service=cut", key, "", "")
	if n := len(list["entries"].([]any)); n != 80 {
		t.Fatalf("after the import: %d entries waiting, want 80", n)
	}

	// An event of 40, full, with 40 more waiting.
	start := time.Now().UTC().Add(96 * time.Hour).Truncate(time.Hour)
	code, ev := call("POST", "/v1/businesses/"+bid+"/events", key, js, fmt.Sprintf(`{"title":"Gala","capacity":40,"starts_at":%q,"ends_at":%q}`,
		start.Format(time.RFC3339), start.Add(3*time.Hour).Format(time.RFC3339)))
	if code != 201 {
		t.Fatalf("create event: %d %v", code, ev)
	}
	eid := ev["id"].(string)
	for i := range 80 {
		if code, out := call("POST", "/v1/events/"+eid+"/registrations", key, js, fmt.Sprintf(`{"name":"Guest %02d","email":"g%02d@example.com"}`, i, i)); code != 201 {
			t.Fatalf("register %d: %d %v", i, code, out)
		}
	}
	seats := func() (booked, held float64) {
		_, s := call("GET", "/v1/slots/"+eid, key, "", "")
		return s["booked_seats"].(float64), s["held_seats"].(float64)
	}
	if b, h := seats(); b != 40 || h != 0 {
		t.Fatalf("the full event: booked %v held %v, want 40 and 0", b, h)
	}

	// 30 registrations ended at once: more than one transaction takes
	// (each ends its booking and entry, with a message, an audit row and
	// a timer): the release goes in parts, and answers once all 30 seats
	// are free.
	code, out := call("POST", "/v1/slots/"+eid+":release", key, js, `{"seats":30,"reason":"cancellation"}`)
	if code != 200 || out["slot"].(map[string]any)["booked_seats"] != float64(10) {
		t.Fatalf("release of 30 registrations at once: %d %v; want 200 with 10 booked", code, out)
	}
	// Each release offers what is left of its transaction; a seat it
	// has no room for is offered by the slot_decide timer it commits,
	// which the server's sweeper runs at once.
	settle := func(what string, booked, held float64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			b, h := seats()
			if b == booked && h == held {
				return
			}
			if b+h > booked+held || time.Now().After(deadline) {
				t.Fatalf("%s: booked %v held %v, want %v and %v (never over)", what, b, h, booked, held)
			}
			time.Sleep(100 * time.Millisecond) // the sweeper runs on the real clock
		}
	}
	settle("after releasing 30", 10, 30)
	// 10 more seats: the 10 still waiting are offered.
	if code, out := call("POST", "/v1/slots/"+eid+":resize", key, js, `{"capacity":50}`); code != 200 {
		t.Fatalf("resize to 50: %d %v", code, out)
	}
	settle("after growing to 50", 10, 40)
}
