package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestWrongMethodIs405: a path that exists answers another method with
// 405 problem+json and an Allow header listing the methods it has — the
// catch-all route, the custom-method dispatch ("{id}:verb") and a plain
// "{id}" route asked for "id:verb" alike; a path that does not exist stays
// 404.
func TestWrongMethodIs405(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sid := a.slot(chair)["id"].(string)
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/v1/businesses", "POST"},
		{"DELETE", "/v1/slots/" + sid, "GET, HEAD"},
		{"GET", "/v1/slots/" + sid + ":release", "POST"},
		{"DELETE", "/v1/slots/" + sid + ":release", "POST"},
		{"PUT", "/v1/businesses/" + a.bid + "/waitlist:join", "POST"},
		{"POST", "/v1/waitlist/ent_x", "GET, HEAD, PATCH, DELETE"},
		{"GET", "/v1/claims/tok:accept", "POST"},
		{"PATCH", "/healthz", "GET, HEAD"},
		{"DELETE", "/login", "GET, HEAD, POST"},
	} {
		r := a.do(c.method, c.path, a.key, "")
		a.problem(r, 405, nextup.CodeMethodNotAllowed)
		if got := r.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/nothing"},
		{"POST", "/v1/slots/" + sid + ":explode"},
		{"GET", "/v1/slots/" + sid + ":explode"},
		{"GET", "/v1/slots/"},
	} {
		r := a.do(c.method, c.path, a.key, "")
		a.problem(r, 404, nextup.CodeNotFound)
		if r.header.Get("Allow") != "" {
			t.Errorf("%s %s: a 404 with Allow %q", c.method, c.path, r.header.Get("Allow"))
		}
	}
	// A HEAD of a GET route is served as ServeMux does.
	if r := a.do("HEAD", "/healthz", "", ""); r.status != 200 {
		t.Errorf("HEAD /healthz: %d", r.status)
	}
}

// TestUnauthorizedNamesTheScheme: every 401 carries WWW-Authenticate:
// Bearer (RFC 9110 section 15.5.2).
func TestUnauthorizedNamesTheScheme(t *testing.T) {
	t.Parallel()
	a := setup(t)
	for _, c := range []struct{ method, path, key string }{
		{"GET", "/v1/businesses/" + a.bid, ""},
		{"GET", "/v1/businesses/" + a.bid, "nxk_wrong"},
		{"POST", "/v1/businesses", a.key},
	} {
		r := a.do(c.method, c.path, c.key, `{"name":"X","timezone":"UTC"}`)
		a.problem(r, 401, nextup.CodeUnauthorized)
		if got := r.header.Get("WWW-Authenticate"); got != "Bearer" {
			t.Errorf("%s %s: WWW-Authenticate %q", c.method, c.path, got)
		}
	}
}

// TestZeroSizesAreRefused: a capacity or party size of 0 is 400
// validation_failed naming the field, and changes nothing — on slots,
// events and their PATCH, joins, entry PATCH and proposal approval; an
// omitted one is still the default.
func TestZeroSizesAreRefused(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	field := func(p map[string]any) string {
		errs, _ := p["errors"].([]any)
		if len(errs) == 0 {
			return ""
		}
		return errs[0].(map[string]any)["field"].(string)
	}
	count := func(path, list string) int {
		var out map[string][]any
		a.must(a.do("GET", path, a.key, ""), 200, &out)
		return len(out[list])
	}
	slots := "/v1/businesses/" + a.bid + "/slots"

	// Slots: capacity 0 is refused; omitted is one seat.
	p := a.problem(a.do("POST", slots, a.key, `{"service":"haircut","capacity":0,"starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z"}`), 400, nextup.CodeValidation)
	if field(p) != "capacity" || count(slots, "slots") != 0 {
		t.Fatalf("capacity 0: %v, %d slots", p, count(slots, "slots"))
	}
	if sl := a.slot(chair); sl["capacity"] != float64(1) {
		t.Fatalf("omitted capacity: %v", sl)
	}

	// Events: capacity 0 is refused on create and on PATCH.
	p = a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/events", a.key,
		`{"title":"Supper","capacity":0,"starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z"}`), 400, nextup.CodeValidation)
	if field(p) != "capacity" || count("/v1/businesses/"+a.bid+"/events", "events") != 0 {
		t.Fatalf("event capacity 0: %v", p)
	}
	ev := a.event(`,"capacity":10`)
	p = a.problem(a.do("PATCH", "/v1/events/"+ev["id"].(string), a.key, `{"capacity":0}`), 400, nextup.CodeValidation)
	var got map[string]any
	a.must(a.do("GET", "/v1/events/"+ev["id"].(string), a.key, ""), 200, &got)
	if field(p) != "capacity" || got["capacity"] != float64(10) {
		t.Fatalf("event PATCH capacity 0: %v, then %v", p, got)
	}

	// Joins: party_size 0 is refused; omitted is a party of one.
	join := "/v1/businesses/" + a.bid + "/waitlist:join"
	p = a.problem(a.do("POST", join, a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut","party_size":0}`), 400, nextup.CodeValidation)
	if field(p) != "party_size" || count("/v1/businesses/"+a.bid+"/waitlist", "entries") != 0 {
		t.Fatalf("party_size 0: %v", p)
	}
	var ann map[string]any
	a.must(a.do("POST", join, a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &ann)
	eid := ann["id"].(string)
	a.must(a.do("GET", "/v1/waitlist/"+eid, a.key, ""), 200, &got)
	if got["party_size"] != float64(1) {
		t.Fatalf("omitted party_size: %v", got)
	}
	// Entry PATCH: party_size 0 is refused and the entry is unchanged.
	p = a.problem(a.do("PATCH", "/v1/waitlist/"+eid, a.key, `{"party_size":0}`), 400, nextup.CodeValidation)
	a.must(a.do("GET", "/v1/waitlist/"+eid, a.key, ""), 200, &got)
	if field(p) != "party_size" || got["party_size"] != float64(1) {
		t.Fatalf("entry PATCH party_size 0: %v, then %v", p, got)
	}

	// Approving a proposal with party_size 0 is refused, and it stays open.
	svc := waitlist.New(a.store, a.clock, "https://nextup.test")
	prop, _, err := svc.Propose(context.Background(), a.bid, waitlist.ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: "<z@x>",
		ReceivedAt: a.clock.Now().Add(-time.Hour), Excerpt: "a table for two", Fields: nextup.ProposalFields{Name: "Bo", Email: "bo@example.com", Service: "haircut", PartySize: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p = a.problem(a.do("POST", "/v1/proposals/"+prop.ID+":approve", a.key, `{"party_size":0}`), 400, nextup.CodeValidation)
	var props map[string][]map[string]any
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/proposals?state=open", a.key, ""), 200, &props)
	if field(p) != "party_size" || len(props["proposals"]) != 1 {
		t.Fatalf("approve with party_size 0: %v, open proposals %v", p, props)
	}
}

// TestStatusShowsTheOffer: the status view of an entry holding a live
// offer carries the offer as API.md has it — id, expires_at, seconds_left
// and the claim link.
func TestStatusShowsTheOffer(t *testing.T) {
	t.Parallel()
	a := setup(t)
	var ann map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &ann)
	var st map[string]any
	a.must(a.do("GET", "/v1/status/"+tokenOf(ann["status_url"].(string)), "", ""), 200, &st)
	if st["state"] != "waiting" || st["offer"] != nil {
		t.Fatalf("status before an offer: %v", st)
	}
	sl := a.slot(`{"service":"haircut","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z","booked_seats":0}`)
	oid := sl["moves"].([]any)[0].(map[string]any)["offer_id"].(string)
	a.must(a.do("GET", "/v1/status/"+tokenOf(ann["status_url"].(string)), "", ""), 200, &st)
	offer, _ := st["offer"].(map[string]any)
	if st["state"] != "offered" || offer["id"] != oid || offer["seconds_left"] != float64(600) ||
		offer["claim_url"] != "https://nextup.test/c/"+a.token(oid) || offer["expires_at"] == nil {
		t.Fatalf("status with an offer: %v", st)
	}
}

// TestSuccessesMatchTheContract walks the successful answers no other
// test asks for, so that the contract check (web/webtest, wired into
// setup) sees each of them: a withdraw, a resize, an entry's PATCH and
// DELETE, a booking's no-show, a proposal's reject and the payment return
// page.
func TestSuccessesMatchTheContract(t *testing.T) {
	t.Parallel()
	a := setup(t)
	var ann, bea map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &ann)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Bea","phone":"+447700900123","service":"haircut"}`), 201, &bea)
	a.must(a.do("PATCH", "/v1/waitlist/"+bea["id"].(string), a.key, `{"priority":true,"availability":[{"days":["tue","wed"],"from":"09:00","to":"17:00"}]}`), 200, nil)

	// Bea (priority) is offered the opening; staff withdraw it, and it rolls on to Ann.
	sl := a.slot(`{"service":"haircut","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z","booked_seats":0}`)
	move := sl["moves"].([]any)[0].(map[string]any)
	if move["entry_id"] != bea["id"] {
		t.Fatalf("moves %v", sl["moves"])
	}
	var withdrawn map[string]any
	a.must(a.do("POST", "/v1/offers/"+move["offer_id"].(string)+":withdraw", a.key, ""), 200, &withdrawn)
	next := withdrawn["moves"].([]any)[0].(map[string]any)
	if withdrawn["state"] != "cancelled" || next["entry_id"] != ann["id"] {
		t.Fatalf("withdraw %v", withdrawn)
	}
	var claimed map[string]any
	a.must(a.do("POST", "/v1/claims/"+a.token(next["offer_id"].(string))+":accept", "", ""), 200, &claimed)
	var noShow map[string]any
	a.must(a.do("POST", "/v1/bookings/"+claimed["booking"].(map[string]any)["id"].(string)+":no_show", a.key, ""), 200, &noShow)
	if noShow["booking"].(map[string]any)["state"] != "no_show" {
		t.Fatalf("no-show %v", noShow)
	}
	a.must(a.do("DELETE", "/v1/waitlist/"+bea["id"].(string), a.key, ""), 200, nil)

	// A class grows by two seats.
	class := a.slot(`{"service":"yoga","seating":"shared","capacity":4,"starts_at":"2026-12-02T18:00:00Z","ends_at":"2026-12-02T19:00:00Z"}`)
	var resized map[string]any
	a.must(a.do("POST", "/v1/slots/"+class["id"].(string)+":resize", a.key, `{"capacity":6}`), 200, &resized)
	if resized["slot"].(map[string]any)["free_seats"] != float64(2) {
		t.Fatalf("resize %v", resized)
	}

	svc := waitlist.New(a.store, a.clock, "https://nextup.test")
	prop, _, err := svc.Propose(context.Background(), a.bid, waitlist.ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: "<r@x>",
		ReceivedAt: a.clock.Now(), Excerpt: "any time", Fields: nextup.ProposalFields{Name: "Cy", Email: "cy@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	a.must(a.do("POST", "/v1/proposals/"+prop.ID+":reject", a.key, ""), 200, nil)

	if r := a.do("GET", "/pay/off_x", "", ""); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("payment return page: %d %s", r.status, r.header.Get("Content-Type"))
	}
}
