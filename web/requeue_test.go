package web_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestRulesRequeue: the rules' re-queue rule through the API. Slots keep
// today's behaviour by default; a bad policy, a negative or missing
// drop_after, an unknown field are 400 problem+json naming the field and
// change nothing; a patch of part of the rule keeps the rest; a patch
// that changes nothing keeps the version.
func TestRulesRequeue(t *testing.T) {
	t.Parallel()
	a := setup(t)
	rules := func() map[string]any {
		t.Helper()
		var b map[string]any
		a.must(a.do("GET", "/v1/businesses/"+a.bid, a.key, ""), 200, &b)
		return b["rules"].(map[string]any)
	}
	if r := rules(); fmt.Sprint(r["requeue"]) != "map[drop_after:0 policy:keep]" || r["version"] != 1.0 {
		t.Fatalf("default rules: %v", r)
	}
	for body, field := range map[string]string{
		`{"requeue":{"policy":"later"}}`:                  "requeue.policy",
		`{"requeue":{"policy":"back","drop_after":-1}}`:   "requeue.drop_after",
		`{"requeue":{"policy":"back","drop_after":1000}}`: "requeue.drop_after",
		`{"requeue":{"policy":"drop"}}`:                   "requeue.drop_after",
		`{"requeue":{"policy":"back","after":2}}`:         "rules",
	} {
		p := a.problem(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, body), 400, "validation_failed")
		if !strings.Contains(fmt.Sprint(p["errors"]), "field:"+field) {
			t.Errorf("%s: errors %v, want field %s", body, p["errors"], field)
		}
	}
	if r := rules(); r["version"] != 1.0 || fmt.Sprint(r["requeue"]) != "map[drop_after:0 policy:keep]" {
		t.Fatalf("refused patches changed the rules: %v", r)
	}
	var r map[string]any
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, `{"requeue":{"policy":"back","drop_after":2}}`), 200, &r)
	if r["version"] != 2.0 || fmt.Sprint(r["requeue"]) != "map[drop_after:2 policy:back]" {
		t.Fatalf("patched rules: %v", r)
	}
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, `{"requeue":{"policy":"back"}}`), 200, &r)
	if r["version"] != 2.0 || fmt.Sprint(r["requeue"]) != "map[drop_after:2 policy:back]" {
		t.Fatalf("a patch that changes nothing: %v, want version 2 kept", r)
	}
}

// TestEventRequeue: an event's re-queue rule is its own, back of the
// waitlist and off it after the second lapse unless the organiser
// chooses another (PATCH /v1/events/{id} "requeue", as in the rules; null
// goes back to the default). On the fake clock: the first of three
// waiting guests lets her hold lapse and is third; the hold goes round
// and comes back to her; her second lapse takes her off the list, and
// she is told how to join again.
func TestEventRequeue(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"slug":"salon"}`), 200, nil)
	ev := a.event(`,"capacity":1,"claim_window_seconds":3600`)
	id := ev["id"].(string)
	if fmt.Sprint(ev["requeue"]) != "map[drop_after:2 policy:back]" {
		t.Fatalf("an event's default rule: %v", ev["requeue"])
	}
	var patched map[string]any
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"requeue":{"policy":"keep"}}`), 200, &patched)
	if fmt.Sprint(patched["requeue"]) != "map[drop_after:2 policy:keep]" {
		t.Fatalf("patched to keep: %v", patched["requeue"])
	}
	p := a.problem(a.do("PATCH", "/v1/events/"+id, a.key, `{"requeue":{"policy":"drop","drop_after":0}}`), 400, "validation_failed")
	if !strings.Contains(fmt.Sprint(p["errors"]), "field:requeue.drop_after") {
		t.Fatalf("errors %v, want requeue.drop_after", p["errors"])
	}
	a.problem(a.do("PATCH", "/v1/events/"+id, a.key, `{"requeue":{"policy":"back","when":1}}`), 400, "validation_failed")
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"requeue":null}`), 200, &patched)
	if fmt.Sprint(patched["requeue"]) != "map[drop_after:2 policy:back]" {
		t.Fatalf("patched back to the default: %v", patched["requeue"])
	}

	xia := a.register(id, "Xia", 0)
	ann, bob, cat := a.register(id, "Ann", 0), a.register(id, "Bob", 0), a.register(id, "Cat", 0)
	a.cancel(id, xia["id"].(string))
	wantState(t, a.registration(id, ann["id"].(string)), "offered", 0)
	a.advance(time.Hour) // Ann's hold lapses: the back of the line; Bob has the seat
	wantState(t, a.registration(id, ann["id"].(string)), "waitlisted", 2)
	wantState(t, a.registration(id, bob["id"].(string)), "offered", 0)
	wantState(t, a.registration(id, cat["id"].(string)), "waitlisted", 1)
	if ms := a.outbox("requeued"); len(ms) != 1 || ms[0].To != "ann@example.com" || !strings.Contains(ms[0].Body, "at the back of it now") {
		t.Fatalf("requeued messages %+v, want one to Ann", ms)
	}
	a.advance(time.Hour) // Bob's lapses too; Cat has it
	a.advance(time.Hour) // Cat's; Ann has it again, after the others
	wantState(t, a.registration(id, ann["id"].(string)), "offered", 0)
	a.advance(time.Hour) // Ann's second lapse: off the waitlist
	if r := a.registration(id, ann["id"].(string)); r["state"] != "cancelled" || r["position"] != nil {
		t.Fatalf("Ann after her second lapse: %v", r)
	}
	ms := a.outbox("dropped")
	if len(ms) != 1 || ms[0].To != "ann@example.com" || !strings.Contains(ms[0].Body, "/e/salon/"+id) {
		t.Fatalf("dropped messages %+v, want one to Ann with the event page's link", ms)
	}
	wantState(t, a.registration(id, bob["id"].(string)), "offered", 0)

	// The slot's story says what the rule did, with its version.
	var story struct {
		Events []map[string]any `json:"events"`
	}
	a.must(a.do("GET", "/v1/slots/"+id+"/audit", a.key, ""), 200, &story)
	reasons := map[string]int{}
	for _, e := range story.Events {
		if e["subject_type"] == "entry" {
			reasons[e["reason"].(string)]++
			if e["reason"] == "dropped_after_lapses" && (e["to"] != "left" || e["rule_version"] != 1.0) {
				t.Errorf("the drop's audit row: %v", e)
			}
		}
	}
	if reasons["requeued_back"] != 3 || reasons["dropped_after_lapses"] != 1 {
		t.Fatalf("entry audit reasons %v, want 3 requeued_back and 1 dropped_after_lapses", reasons)
	}
}

// TestDashboardRequeue: the Settings page offers the re-queue rule as a
// choice in plain words; choosing one makes a new rules version, and the
// customers' explanation follows it.
func TestDashboardRequeue(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)
	st := b.do("GET", "/dash/settings", nil)
	for _, want := range []string{"When someone misses or declines an offer", `<option value="keep:0" selected>Keep their place</option>`,
		`<option value="back:0">Move them to the back of the list</option>`, "Remove them from the list", "and you keep your place."} {
		if !strings.Contains(html.UnescapeString(st.body), want) {
			t.Errorf("settings page lacks %q", want)
		}
	}
	p := b.do("POST", "/dash/settings/rules", url.Values{"csrf": {st.csrf(t)}, "requeue": {"back:2"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "version+2") {
		t.Fatalf("choosing back, off after 2: %d %q", p.status, p.location)
	}
	st = b.do("GET", "/dash/settings", nil)
	for _, want := range []string{`<option value="back:2" selected>Move them to the back of the list; remove them after 2 missed offers</option>`,
		"you go to the back of the list; after 2 offers you did not take, you leave it.", "counts as joining at that moment"} {
		if !strings.Contains(html.UnescapeString(st.body), want) {
			t.Errorf("settings page after the change lacks %q", want)
		}
	}
	p = b.do("POST", "/dash/settings/rules", url.Values{"csrf": {st.csrf(t)}, "requeue": {"drop:0"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "error=") {
		t.Fatalf("a bad choice: %d %q", p.status, p.location)
	}
}
