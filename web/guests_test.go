package web_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// guestsOf is a registration's "guests" as "name@checked_in_at" strings
// ("-" when not checked in), after checking each one's n is its place.
func guestsOf(t *testing.T, reg map[string]any) []string {
	t.Helper()
	list, ok := reg["guests"].([]any)
	if !ok {
		t.Fatalf("registration without a guests list: %v", reg)
	}
	out := []string{}
	for i, g := range list {
		g := g.(map[string]any)
		if g["n"] != float64(i+1) {
			t.Fatalf("guest %d has n %v: %v", i+1, g["n"], reg["guests"])
		}
		at := "-"
		if g["checked_in_at"] != nil {
			at = g["checked_in_at"].(string)
		}
		out = append(out, fmt.Sprint(g["name"], "@", at))
	}
	return out
}

// Guest names through the API: given with the registration (a count
// inferred from them when guests is absent), refused with nothing stored
// when they are too many or not names, shown by the registration, its
// read and the guest list; one guest checked in and undone on their own,
// the party all at once; not_found for a place the party lacks,
// not_confirmed for a registration on the waitlist. Every answer is held
// to openapi.json (webtest).
func TestGuestNamesAPI(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":6,"max_guests_per_rsvp":3`)["id"].(string)
	post := func(body string) map[string]any {
		t.Helper()
		var r map[string]any
		a.must(a.do("POST", "/v1/events/"+id+"/registrations", a.key, body), 201, &r)
		return r
	}
	ann := post(`{"name":"Ann","email":"ann@example.com","guest_names":["Bea Ó'Brien","","=HYPERLINK(\"x\")"]}`)
	if ann["guest_count"] != 3.0 || ann["seats"] != 4.0 || ann["state"] != "confirmed" ||
		strings.Join(guestsOf(t, ann), "|") != `Bea Ó'Brien@-|@-|=HYPERLINK("x")@-` {
		t.Fatalf("Ann with three named guests and no count: %v", ann)
	}
	ben := post(`{"name":"Ben","email":"ben@example.com","guests":1}`)
	if strings.Join(guestsOf(t, ben), "|") != "@-" {
		t.Fatalf("Ben with an unnamed guest: %v", ben)
	}
	dee := post(`{"name":"Dee","email":"dee@example.com","guests":1,"guest_names":["Eve"]}`)
	if dee["state"] != "waitlisted" || strings.Join(guestsOf(t, dee), "|") != "Eve@-" {
		t.Fatalf("Dee, waitlisted with her guest: %v", dee)
	}

	for _, c := range []struct{ body, field string }{
		{`"guests":1,"guest_names":["A","B"]`, "guest_names"},
		{`"guests":0,"guest_names":["A"]`, "guest_names"},
		{`"guest_names":["A\u0007"]`, "guest_names"},
		{`"guest_names":["Ann\nSmith"]`, "guest_names"},
		{`"guest_names":["` + strings.Repeat("a", 101) + `"]`, "guest_names"},
		{`"guest_names":["A","B","C","D"]`, "guests"},
		{`"guest_names":"Bea"`, "guest_names"},
	} {
		p := a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Zed","email":"zed@example.com",`+c.body+`}`),
			400, nextup.CodeValidation)
		if !strings.Contains(fmt.Sprint(p["errors"]), "field:"+c.field) {
			t.Errorf("%s: errors %v, want one on %s", c.body, p["errors"], c.field)
		}
	}
	_, regs := a.guestList(id, "")
	if len(regs) != 3 {
		t.Fatalf("after the refusals the guest list has %d registrations, want 3", len(regs))
	}
	for i, want := range [][]string{guestsOf(t, ann), guestsOf(t, ben), guestsOf(t, dee)} {
		if got := guestsOf(t, regs[i]); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("guest list: %s's guests %q, want %q", regs[i]["name"], got, want)
		}
	}

	guest := func(rid, n, body string) map[string]any {
		t.Helper()
		var r map[string]any
		a.must(a.do("POST", "/v1/events/"+id+"/registrations/"+rid+"/guests/"+n+":check_in", a.key, body), 200, &r)
		return r
	}
	a.clock.Advance(time.Hour)
	at := a.clock.Now().UTC().Format(time.RFC3339)
	r := guest(ann["id"].(string), "3", "")
	if strings.Join(guestsOf(t, r), "|") != `Bea Ó'Brien@-|@-|=HYPERLINK("x")@`+at || r["checked_in"] != false {
		t.Fatalf("guest 3 checked in: %v", r)
	}
	a.clock.Advance(time.Minute)
	if r = guest(ann["id"].(string), "3", ""); guestsOf(t, r)[2] != `=HYPERLINK("x")@`+at {
		t.Errorf("guest 3 checked in again: %v, want the first time kept", r["guests"])
	}
	var one map[string]any
	a.must(a.do("GET", "/v1/events/"+id+"/registrations/"+ann["id"].(string), a.key, ""), 200, &one)
	if strings.Join(guestsOf(t, one), "|") != strings.Join(guestsOf(t, r), "|") {
		t.Errorf("GET the registration: %v, want %v", one["guests"], r["guests"])
	}
	if r = guest(ben["id"].(string), "1", `{"undo":true}`); strings.Join(guestsOf(t, r), "|") != "@-" {
		t.Errorf("undo of a guest never checked in: %v", r["guests"])
	}
	at2 := a.clock.Now().UTC().Format(time.RFC3339)
	var party map[string]any
	a.must(a.do("POST", "/v1/events/"+id+"/registrations/"+ann["id"].(string)+":check_in", a.key, ""), 200, &party)
	if party["checked_in"] != true || strings.Join(guestsOf(t, party), "|") != `Bea Ó'Brien@`+at2+`|@`+at2+`|=HYPERLINK("x")@`+at {
		t.Errorf("the party's check-in: %v", party)
	}
	if r = guest(ann["id"].(string), "1", `{"undo":true}`); guestsOf(t, r)[0] != "Bea Ó'Brien@-" || r["checked_in"] != true {
		t.Errorf("Bea's check-in undone: %v", r)
	}
	for _, n := range []string{"4", "0", "x", "-1"} {
		a.problem(a.do("POST", "/v1/events/"+id+"/registrations/"+ann["id"].(string)+"/guests/"+n+":check_in", a.key, ""), 404, nextup.CodeNotFound)
	}
	a.problem(a.do("POST", "/v1/events/"+id+"/registrations/"+dee["id"].(string)+"/guests/1:check_in", a.key, ""), 409, nextup.CodeNotConfirmed)
	a.problem(a.do("POST", "/v1/events/"+id+"/registrations/ent_missing/guests/1:check_in", a.key, ""), 404, nextup.CodeNotFound)

	// The CSV: a row per guest under their registrant.
	req, _ := http.NewRequest("GET", a.srv.URL+"/v1/events/"+id+"/registrations?format=csv", nil)
	req.Header.Set("Authorization", "Bearer "+a.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(res.Body).ReadAll()
	res.Body.Close()
	if err != nil || len(rows) != 1+4+2+2 {
		t.Fatalf("csv: %d rows, %v: %q", len(rows), err, rows)
	}
	annRow := rows[1]
	want := [][]string{
		{"Ann", "ann@example.com", "", "3", "4", "confirmed", "", annRow[7], at2, ann["id"].(string), "", ""},
		{"Bea Ó'Brien", "", "", "", "", "confirmed", "", annRow[7], "", ann["id"].(string), "1", "Ann"},
		{"", "", "", "", "", "confirmed", "", annRow[7], at2, ann["id"].(string), "2", "Ann"},
		{`'=HYPERLINK("x")`, "", "", "", "", "confirmed", "", annRow[7], at, ann["id"].(string), "3", "Ann"},
	}
	for i, w := range want {
		if got := rows[1+i]; strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("csv row %d:\n got %q\nwant %q", 1+i, got, w)
		}
	}
	if rows[7][0] != "Dee" || rows[8][0] != "Eve" || rows[8][5] != "waitlisted" || rows[8][6] != "1" || rows[8][11] != "Dee" {
		t.Errorf("Dee's rows: %q %q", rows[7], rows[8])
	}
}

// The organiser's guest list shows each registrant's guests under them,
// named or "Guest n", each with a check-in form of its own that works
// without JavaScript (a POST and a redirect back), and its undo.
func TestOrganiserGuestCheckIn(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	ctx := t.Context()
	ev, err := eb.svc.GetEvent(ctx, eb.bid, eb.eid)
	if err != nil {
		t.Fatal(err)
	}
	p := waitlist.EventParamsOf(ev)
	p.Capacity, p.Settings.MaxGuests = 6, 2
	if _, _, err := eb.svc.UpdateEvent(ctx, eb.bid, eb.eid, p); err != nil {
		t.Fatal(err)
	}
	ann, _, err := eb.svc.Register(ctx, eb.bid, eb.eid, waitlist.RegisterParams{Name: "Ann Lee", Email: "ann@example.com",
		Guests: 2, GuestNames: []string{"Bea <b>Bold</b>"}})
	if err != nil {
		t.Fatal(err)
	}
	page := eb.b.do("GET", "/dash/events/"+eb.eid, nil)
	for _, want := range []string{
		`id="guest-` + ann.Entry.ID + `-1"`, `Bea &lt;b&gt;Bold&lt;/b&gt; <span class="muted">· Ann Lee's guest</span>`,
		`id="guest-` + ann.Entry.ID + `-2"`, `Guest 2 <span class="muted">· Ann Lee's guest</span>`,
		`action="/dash/events/` + eb.eid + `/guests/` + ann.Entry.ID + `/1/check-in"`,
		`aria-label="Check in Bea &lt;b&gt;Bold&lt;/b&gt; (Ann Lee's guest)"`, `aria-label="Check in guest 2 (Ann Lee's guest)"`,
		"Check in all 3",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the event page lacks %q", want)
		}
	}

	p2 := eb.post("/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/2/check-in", url.Values{})
	if !strings.Contains(p2.body, "Ann Lee&#39;s guest 2 is checked in.") {
		t.Errorf("after checking in guest 2, the page lacks the notice:\n%s", p2.body)
	}
	reg := eb.regState(ann.Entry.ID)
	if g := guestsOf(t, reg); !strings.HasPrefix(g[0], "Bea <b>Bold</b>@-") || strings.HasSuffix(g[1], "@-") || reg["checked_in"] != false {
		t.Errorf("after guest 2's button: %v", reg)
	}
	row := p2.body[strings.Index(p2.body, `id="guest-`+ann.Entry.ID+`-2"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `class="undo"`) || !strings.Contains(row, `name="undo" value="1"`) {
		t.Errorf("guest 2's row after the check-in has no undo: %s", row)
	}
	p3 := eb.post("/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/1/check-in", url.Values{})
	if !strings.Contains(p3.body, "Bea &lt;b&gt;Bold&lt;/b&gt; (Ann Lee&#39;s guest) is checked in.") {
		t.Errorf("after checking in Bea, the page lacks the notice")
	}
	eb.post("/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/2/check-in", url.Values{"undo": {"1"}})
	if g := guestsOf(t, eb.regState(ann.Entry.ID)); strings.HasSuffix(g[0], "@-") || !strings.HasSuffix(g[1], "@-") {
		t.Errorf("after Bea in and guest 2 undone: %v", g)
	}
	var guestRows int
	for _, a := range eb.audit() {
		if a.Reason == "guest_check_in" {
			guestRows++
		}
	}
	if guestRows != 3 {
		t.Errorf("%d guest check-ins audited, want 3", guestRows)
	}

	// A place the party lacks is the error page; the form needs its token.
	if r := eb.b.do("POST", "/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/3/check-in", url.Values{"csrf": {eb.csrf}}); r.status != http.StatusNotFound {
		t.Errorf("guest 3 of 2: %d", r.status)
	}
	if r := eb.b.do("POST", "/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/2/check-in", url.Values{}); r.status == http.StatusSeeOther {
		t.Errorf("a check-in without its CSRF token: %d %q", r.status, r.location)
	}
}
