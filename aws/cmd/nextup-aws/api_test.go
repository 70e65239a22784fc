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

// apiClient calls one nextup-aws server; every exchange is held to the
// OpenAPI document (webtest).
type apiClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func (c *apiClient) call(method, path, key, body string, want int) map[string]any {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, raw, want)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// page GETs a page and returns its text.
func (c *apiClient) page(path string, want int) string {
	c.t.Helper()
	res, err := c.http.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		c.t.Fatalf("GET %s: %d, want %d\n%s", path, res.StatusCode, want, raw)
	}
	return string(raw)
}

func list(m map[string]any, key string) []map[string]any {
	var out []map[string]any
	for _, v := range m[key].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestAPIOnDynamoDB walks the API as a salon and its customers use it,
// on DynamoDB: the business and its catalogue, slots, joins (and a
// duplicate), an entry changed, the status link and leaving by it, a
// release offered to the first who fits, the claim page, a decline rolling
// on, an expiry rolling on, a claim and its calendar, a withdrawal, a
// booking cancelled and a no-show, the list running out into a hand-back
// and its resolution, the audit trail, the outbox and a retry, a forwarded
// request approved into the list, and an event with registrations, a
// waitlist and a cancellation promoting. The fake clock moves time.
func TestAPIOnDynamoDB(t *testing.T) {
	t.Parallel()
	inst := serveOn(t, dynamoURL(t), "--clock", "fake")
	c := &apiClient{t: t, base: inst.base, http: &http.Client{Timeout: 60 * time.Second, Transport: webtest.Transport(t, nil)}}
	plain := &apiClient{t: t, base: inst.base, http: &http.Client{Timeout: 60 * time.Second}}
	now := c.call("POST", "/v1/debug/clock", "adm", `{"set":"2031-03-04T10:00:00Z"}`, 200)
	if now["now"] == nil {
		t.Fatalf("clock: %v", now)
	}
	biz := c.call("POST", "/v1/businesses", "adm", `{"name":"Corner Cuts","timezone":"Europe/London","rules":{"claim_window_seconds":900}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	c.call("PATCH", "/v1/businesses/"+bid, key, `{"slug":"corner-cuts","country":"GB","owner_email":"owner@corner.test","inbound_senders":["desk@corner.test"],
		"services":[{"name":"haircut","synonyms":["cut","trim"],"duration_minutes":45,"price_cents":3000}],"staff":["Ana","Ben"]}`, 200)
	if got := c.call("GET", "/v1/businesses/"+bid, key, "", 200); got["name"] != "Corner Cuts" {
		t.Fatalf("business: %v", got)
	}
	rules := c.call("PATCH", "/v1/businesses/"+bid+"/rules", key, `{"max_offers_per_person_per_day":0}`, 200)
	if rules["version"] != float64(2) {
		t.Errorf("rules after a change: %v", rules)
	}

	// Four people wait for a haircut; one of them twice.
	join := func(name, extra string) map[string]any {
		return c.call("POST", "/v1/businesses/"+bid+"/waitlist:join", key,
			fmt.Sprintf(`{"name":%q,"email":"%s@example.com","service":"haircut"%s}`, name, strings.ToLower(name), extra), 201)
	}
	ada, bo, cy, dee := join("Ada", ""), join("Bo", ""), join("Cy", `,"staff":"Ben"`), join("Dee", "")
	dup := c.call("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ada","email":"ada@example.com","service":"haircut"}`, 409)
	if dup["code"] != "already_waiting" {
		t.Errorf("a second join: %v", dup)
	}
	if dee["position"] != float64(4) {
		t.Errorf("Dee's place: %v, want 4", dee["position"])
	}
	c.call("PATCH", "/v1/waitlist/"+bo["id"].(string), key, `{"priority":true}`, 200)
	entries := list(c.call("GET", "/v1/businesses/"+bid+"/waitlist?service=haircut", key, "", 200), "entries")
	if len(entries) != 4 || entries[0]["id"] != bo["id"] {
		t.Fatalf("the list after Bo's priority: %v", entries)
	}
	// Dee leaves by her status link.
	status := dee["status_url"].(string)
	stok := status[strings.LastIndex(status, "/")+1:]
	if st := c.call("GET", "/v1/status/"+stok, "", "", 200); st["state"] != "waiting" {
		t.Errorf("Dee's status: %v", st)
	}
	if !strings.Contains(plain.page("/s/"+stok, 200), "haircut") {
		t.Error("the status page does not name the service")
	}
	c.call("DELETE", "/v1/status/"+stok, "", "", 200)
	if e := c.call("GET", "/v1/waitlist/"+dee["id"].(string), key, "", 200); e["state"] != "left" {
		t.Errorf("Dee after leaving: %v", e)
	}

	// Tomorrow 14:00 with Ana is booked; it is cancelled.
	slot := c.call("POST", "/v1/businesses/"+bid+"/slots", key, `{"service":"haircut","staff":"Ana","starts_at":"2031-03-05T14:00:00Z","ends_at":"2031-03-05T14:45:00Z"}`, 201)
	sid := slot["id"].(string)
	moves := list(c.call("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200), "moves")
	if len(moves) != 1 || moves[0]["move"] != "offer" || moves[0]["entry_id"] != bo["id"] {
		t.Fatalf("release: moves %v, want an offer to Bo (priority)", moves)
	}
	tokenOf := func(offerID string) string {
		for _, m := range list(c.call("GET", "/v1/businesses/"+bid+"/messages?offer_id="+offerID, key, "", 200), "messages") {
			if u, _ := m["claim_url"].(string); u != "" {
				return u[strings.LastIndex(u, "/")+1:]
			}
		}
		t.Fatalf("no claim link for offer %s", offerID)
		return ""
	}
	boTok := tokenOf(moves[0]["offer_id"].(string))
	if !strings.Contains(plain.page("/c/"+boTok, 200), "Claim") {
		t.Error("the claim page has no Claim button")
	}
	if cl := c.call("GET", "/v1/claims/"+boTok, "", "", 200); cl["offer_state"] != "offered" {
		t.Errorf("claim view: %v", cl)
	}
	// Bo declines: the slot rolls on to Ada (Cy wants Ben).
	c.call("POST", "/v1/claims/"+boTok+":decline", "", "", 200)
	sv := c.call("GET", "/v1/slots/"+sid, key, "", 200)
	var adaOffer string
	for _, o := range sv["offers"].([]any) {
		if o := o.(map[string]any); o["state"] == "offered" {
			adaOffer = o["id"].(string)
		}
	}
	if adaOffer == "" {
		t.Fatalf("after Bo declined, no live offer: %v", sv)
	}
	if o := c.call("GET", "/v1/offers/"+adaOffer, key, "", 200); o["entry_id"] != ada["id"] {
		t.Fatalf("rolled on to %v, want Ada", o["entry_id"])
	}
	// Ada lets the window pass: expired; nobody else fits Ana's chair
	// (Cy wants Ben): the slot is handed back to staff.
	c.call("POST", "/v1/debug/clock", "adm", `{"advance_seconds":1000}`, 200)
	if o := c.call("GET", "/v1/offers/"+adaOffer, key, "", 200); o["state"] != "expired" {
		t.Fatalf("Ada's offer after its window: %v", o["state"])
	}
	hbs := list(c.call("GET", "/v1/businesses/"+bid+"/handbacks?state=open", key, "", 200), "handbacks")
	if len(hbs) != 1 || hbs[0]["slot_id"] != sid {
		t.Fatalf("hand-backs: %v", hbs)
	}
	c.call("POST", "/v1/handbacks/"+hbs[0]["id"].(string)+":resolve", key, "", 200)
	if len(list(c.call("GET", "/v1/businesses/"+bid+"/handbacks?state=open", key, "", 200), "handbacks")) != 0 {
		t.Error("the hand-back is still open after resolving it")
	}

	// Ben's 16:00 frees up: Bo is offered it (priority; declining kept
	// his place), and claims it.
	ben := c.call("POST", "/v1/businesses/"+bid+"/slots", key, `{"service":"haircut","staff":"Ben","starts_at":"2031-03-05T16:00:00Z","ends_at":"2031-03-05T16:45:00Z"}`, 201)
	moves = list(c.call("POST", "/v1/slots/"+ben["id"].(string)+":release", key, `{"reason":"opening"}`, 200), "moves")
	if len(moves) != 1 || moves[0]["entry_id"] != bo["id"] {
		t.Fatalf("Ben's slot: moves %v, want an offer to Bo", moves)
	}
	claim := c.call("POST", "/v1/claims/"+tokenOf(moves[0]["offer_id"].(string))+":accept", "", "", 200)
	booking := claim["booking"].(map[string]any)
	bkg := booking["id"].(string)
	if got := c.call("GET", "/v1/bookings/"+bkg, key, "", 200); got["state"] != "booked" {
		t.Errorf("booking: %v", got)
	}
	if cal := claim["calendar_url"].(string); !strings.Contains(plain.page(strings.TrimPrefix(cal, inst.base), 200), "BEGIN:VCALENDAR") {
		t.Error("the calendar link does not give an iCalendar file")
	}
	// Bo cancels: the seat is offered on, to Ada; staff withdraw that
	// offer, and it rolls on to Cy, who wants Ben.
	r := c.call("POST", "/v1/bookings/"+bkg+":cancel", key, `{"reason":"changed plans"}`, 200)
	moves = list(r, "moves")
	if r["booking"].(map[string]any)["state"] != "cancelled" || len(moves) != 1 || moves[0]["entry_id"] != ada["id"] {
		t.Fatalf("cancel: %v, want the seat offered to Ada", r)
	}
	if w := c.call("POST", "/v1/offers/"+moves[0]["offer_id"].(string)+":withdraw", key, "", 200); w["state"] != "cancelled" {
		t.Errorf("withdraw: %v", w)
	}
	if e := c.call("GET", "/v1/waitlist/"+cy["id"].(string), key, "", 200); e["state"] != "offered" {
		t.Errorf("Cy after the withdrawal: %v, want offered", e["state"])
	}
	audit := list(c.call("GET", "/v1/slots/"+sid+"/audit", key, "", 200), "events")
	var story []string
	for _, e := range audit {
		story = append(story, fmt.Sprint(e["subject_type"], ":", e["to"]))
	}
	for _, want := range []string{"offer:declined", "offer:expired", "slot:handed_back"} {
		if !strings.Contains(strings.Join(story, " "), want) {
			t.Errorf("the slot's audit lacks %s: %v", want, story)
		}
	}

	// A request forwarded to the inbox becomes a proposal; approved, the
	// person joins the list.
	mail := "From: Eve Example <eve@example.com>\r\nTo: corner-cuts@in.test\r\nSubject: Haircut please\r\n" +
		"Date: Tue, 04 Mar 2031 10:30:00 +0000\r\nMessage-ID: <eve-1@example.com>\r\n\r\nHi, could I get a haircut this week? Eve\r\n"
	req, _ := http.NewRequest("POST", inst.base+"/v1/businesses/"+bid+"/inbox", strings.NewReader(mail))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "message/rfc822")
	res, err := c.http.Do(req)
	if err != nil || res.StatusCode != 202 {
		t.Fatalf("inbox: %v %v", res, err)
	}
	res.Body.Close()
	props := list(c.call("GET", "/v1/businesses/"+bid+"/proposals?state=open", key, "", 200), "proposals")
	if len(props) != 1 {
		t.Fatalf("proposals: %v", props)
	}
	eve := c.call("POST", "/v1/proposals/"+props[0]["id"].(string)+":approve", key, `{"service":"haircut"}`, 201)
	if eve["state"] != "waiting" {
		t.Errorf("Eve after approval: %v", eve)
	}
	// The public join form of the business.
	if !strings.Contains(plain.page("/b/corner-cuts/join", 200), "Corner Cuts") {
		t.Error("the join form does not name the business")
	}

	// An event of 3: three registrations, one waitlisted; a cancellation
	// promotes the waitlisted guest.
	ev := c.call("POST", "/v1/businesses/"+bid+"/events", key, `{"title":"Colour workshop","capacity":3,"max_guests_per_rsvp":1,
		"starts_at":"2031-03-10T18:00:00Z","ends_at":"2031-03-10T20:00:00Z"}`, 201)
	eid := ev["id"].(string)
	r1 := c.call("POST", "/v1/events/"+eid+"/registrations", key, `{"name":"Fay","email":"fay@example.com","guests":1}`, 201)
	c.call("POST", "/v1/events/"+eid+"/registrations", key, `{"name":"Gus","email":"gus@example.com"}`, 201)
	r3 := c.call("POST", "/v1/events/"+eid+"/registrations", key, `{"name":"Hal","email":"hal@example.com"}`, 201)
	if r1["state"] != "confirmed" || r3["state"] != "waitlisted" || r3["position"] != float64(1) {
		t.Fatalf("registrations: %v %v", r1, r3)
	}
	c.call("DELETE", "/v1/events/"+eid+"/registrations/"+r1["id"].(string), key, "", 200)
	regs := list(c.call("GET", "/v1/events/"+eid+"/registrations", key, "", 200), "registrations")
	states := map[string]string{}
	for _, r := range regs {
		states[r["name"].(string)] = r["state"].(string)
	}
	if states["Hal"] == "waitlisted" || states["Fay"] != "cancelled" {
		t.Errorf("after Fay cancelled: %v (Hal promoted)", states)
	}

	// The outbox holds what went out; nothing is stuck.
	msgs := list(c.call("GET", "/v1/businesses/"+bid+"/messages", key, "", 200), "messages")
	if len(msgs) < 8 {
		t.Errorf("the outbox: %d messages", len(msgs))
	}
	// The dashboard's sign-in page answers.
	if !strings.Contains(plain.page("/login", 200), "password") {
		t.Error("no sign-in form")
	}
}
