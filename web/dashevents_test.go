package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// eventBundle is a signed-in organiser with an event made through the
// New event form.
type eventBundle struct {
	*staffBundle
	b    *formClient
	eid  string
	csrf string
}

// eventIDOf is the event id in a redirect to its page.
func eventIDOf(t *testing.T, p page) string {
	t.Helper()
	rest, ok := strings.CutPrefix(p.location, "/dash/events/")
	if p.status != http.StatusSeeOther || !ok {
		t.Fatalf("not a redirect to an event page: %d %q\n%s", p.status, p.location, p.body)
	}
	id, _, _ := strings.Cut(rest, "?")
	return id
}

// register registers a person through the service, as the API or a
// site would.
func (eb *eventBundle) register(name string, guests int) waitlist.Registration {
	eb.t.Helper()
	reg, _, err := eb.svc.Register(context.Background(), eb.bid, eb.eid, waitlist.RegisterParams{Name: name,
		Email: strings.ToLower(strings.Fields(name)[0]) + "@example.com", Guests: guests})
	if err != nil {
		eb.t.Fatalf("register %s: %v", name, err)
	}
	return reg
}

func (eb *eventBundle) regState(rid string) map[string]any {
	eb.t.Helper()
	var reg map[string]any
	eb.must(eb.do("GET", "/v1/events/"+eb.eid+"/registrations/"+rid, eb.key, ""), 200, &reg)
	return reg
}

func (eb *eventBundle) audit() []nextup.AuditEvent {
	eb.t.Helper()
	var evs []nextup.AuditEvent
	err := eb.store.Read(context.Background(), func(tx nextup.Tx) error {
		var err error
		evs, err = tx.AuditList(context.Background(), nextup.AuditFilter{BusinessID: eb.bid, SlotID: eb.eid})
		return err
	})
	if err != nil {
		eb.t.Fatal(err)
	}
	return evs
}

// post posts a form of the event page (with its CSRF token) and expects
// the redirect back to the page; it returns the page it redirects to.
func (eb *eventBundle) post(path string, form url.Values) page {
	eb.t.Helper()
	form.Set("csrf", eb.csrf)
	p := eb.b.do("POST", path, form)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/dash/events/"+eb.eid+"?") {
		eb.t.Fatalf("POST %s: %d %q\n%s", path, p.status, p.location, p.body)
	}
	return eb.b.do("GET", p.location, nil)
}

func setupEvent(t *testing.T) *eventBundle {
	t.Helper()
	sb := setupStaff(t)
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)
	list := b.do("GET", "/dash/events", nil)
	if list.status != 200 || !strings.Contains(list.body, `id="no-events"`) || !strings.Contains(list.body, `href="/dash/events"`) {
		t.Fatalf("events page: %d\n%s", list.status, list.body)
	}
	eb := &eventBundle{staffBundle: sb, b: b, csrf: list.csrf(t)}
	p := b.do("POST", "/dash/events", url.Values{"csrf": {eb.csrf}, "title": {"Wine <b>tasting</b>"},
		"starts_at": {"2026-12-10T19:00"}, "ends_at": {"2026-12-10T21:30"}, "capacity": {"2"}, "max_guests": {"1"}, "price": {""}})
	eb.eid = eventIDOf(t, p)
	return eb
}

// TestOrganiserEventForm: the New event form makes the event in the
// business's time zone; a refused form says why, keeps what was typed and
// writes nothing; the form needs its CSRF token.
func TestOrganiserEventForm(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	var ev map[string]any
	eb.must(eb.do("GET", "/v1/events/"+eb.eid, eb.key, ""), 200, &ev)
	// London is on UTC in December.
	if ev["title"] != "Wine <b>tasting</b>" || ev["starts_at"] != "2026-12-10T19:00:00Z" || ev["ends_at"] != "2026-12-10T21:30:00Z" ||
		ev["capacity"] != float64(2) || ev["max_guests_per_rsvp"] != float64(1) || ev["price_cents"] != float64(0) {
		t.Fatalf("the event made by the form: %v", ev)
	}
	list := eb.b.do("GET", "/dash/events", nil)
	for _, want := range []string{`href="/dash/events/` + eb.eid + `"`, "Wine &lt;b&gt;tasting&lt;/b&gt;", "Thu 10 Dec 2026, 7:00 pm – 9:30 pm", "0 of 2", "Open"} {
		if !strings.Contains(list.body, want) {
			t.Errorf("the events list lacks %q", want)
		}
	}
	if strings.Contains(list.body, "<b>tasting") {
		t.Error("the title is not escaped")
	}
	// A paid event in the business's summer time.
	p := eb.b.do("POST", "/dash/events", url.Values{"csrf": {eb.csrf}, "title": {"Summer supper"},
		"starts_at": {"2027-07-01T19:30"}, "ends_at": {"2027-07-01T22:00"}, "capacity": {"30"}, "price": {"12,5"}})
	eb.must(eb.do("GET", "/v1/events/"+eventIDOf(t, p), eb.key, ""), 200, &ev)
	if ev["starts_at"] != "2027-07-01T18:30:00Z" || ev["price_cents"] != float64(1250) {
		t.Fatalf("summer event: %v", ev)
	}

	for _, c := range []struct {
		name string
		form url.Values
		want string
	}{
		{"no title", url.Values{"title": {" "}, "starts_at": {"2026-12-11T19:00"}, "ends_at": {"2026-12-11T20:00"}, "capacity": {"5"}}, "title: is required"},
		{"ends first", url.Values{"title": {"Backwards"}, "starts_at": {"2026-12-11T19:00"}, "ends_at": {"2026-12-11T18:00"}, "capacity": {"5"}}, "ends_at: must be after starts_at"},
		{"no start", url.Values{"title": {"Whenever"}, "starts_at": {""}, "ends_at": {"2026-12-11T18:00"}, "capacity": {"5"}}, "starts_at: give the date and time it starts"},
		{"capacity words", url.Values{"title": {"Lots"}, "starts_at": {"2026-12-11T19:00"}, "ends_at": {"2026-12-11T20:00"}, "capacity": {"lots"}}, "capacity: must be a whole number"},
		{"capacity zero", url.Values{"title": {"None"}, "starts_at": {"2026-12-11T19:00"}, "ends_at": {"2026-12-11T20:00"}, "capacity": {"0"}}, "capacity: must be between 1 and 100000"},
		{"bad price", url.Values{"title": {"Pricey"}, "starts_at": {"2026-12-11T19:00"}, "ends_at": {"2026-12-11T20:00"}, "capacity": {"5"}, "price": {"ten"}}, "price: must be an amount"},
	} {
		c.form.Set("csrf", eb.csrf)
		p := eb.b.do("POST", "/dash/events", c.form)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, c.want) || !strings.Contains(p.body, `role="alert"`) {
			t.Errorf("%s: %d, want 400 saying %q:\n%s", c.name, p.status, c.want, p.body)
		}
		if title := c.form.Get("title"); strings.TrimSpace(title) != "" && !strings.Contains(p.body, `value="`+title+`"`) {
			t.Errorf("%s: the typed title is not kept", c.name)
		}
	}
	if p := eb.b.do("POST", "/dash/events", url.Values{"title": {"Forged"}, "starts_at": {"2026-12-11T19:00"},
		"ends_at": {"2026-12-11T20:00"}, "capacity": {"5"}}); p.status != http.StatusForbidden {
		t.Errorf("New event without CSRF: %d", p.status)
	}
	var evs struct {
		Events []map[string]any `json:"events"`
	}
	eb.must(eb.do("GET", "/v1/businesses/"+eb.bid+"/events", eb.key, ""), 200, &evs)
	if len(evs.Events) != 2 {
		t.Fatalf("refused forms wrote events: %v", evs.Events)
	}
}

// TestOrganiserEventPage: the counts and charts, the override (audited with
// the staff member's email and the reason), check-in and its undo, no-show,
// capacity up and (refused) down, the promotion history, the CSV; each form
// needs its CSRF token.
func TestOrganiserEventPage(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	ann, bob := eb.register("Ann Lee", 0), eb.register("Bob Moss", 0)
	cat, dee := eb.register("Cat Diaz", 0), eb.register("Dee Park", 1)
	if ann.State != waitlist.RegConfirmed || bob.State != waitlist.RegConfirmed || cat.Position != 1 || dee.Position != 2 {
		t.Fatalf("registrations: %v %v %v/%d %v/%d", ann.State, bob.State, cat.State, cat.Position, dee.State, dee.Position)
	}
	ev := eb.b.do("GET", "/dash/events/"+eb.eid, nil)
	if ev.status != 200 {
		t.Fatalf("event page: %d\n%s", ev.status, ev.body)
	}
	for _, want := range []string{`id="count-confirmed">2 of 2<`, `id="count-held">0<`, `id="count-free">0<`, `id="count-waitlisted">2<`, "(3 seats)",
		"Seats: Confirmed 2, Held 0, Free 0, Waitlisted 3; capacity 2, 3 over capacity.", "Waitlist to capacity: 1.5× (3 to 2).",
		"Acceptance by waitlist position", "No-show rate", "Wine &lt;b&gt;tasting&lt;/b&gt;", `id="no-history"`} {
		if !strings.Contains(ev.body, want) {
			t.Errorf("the event page lacks %q", want)
		}
	}
	if n := strings.Count(ev.body, `role="img"`); n != 4 {
		t.Errorf("%d charts (role=img), want 4", n)
	}
	if c, d := strings.Index(ev.body, `id="wait-`+cat.Entry.ID+`"><td>1<`), strings.Index(ev.body, `id="wait-`+dee.Entry.ID+`"><td>2<`); c < 0 || d < c {
		t.Errorf("the queue is not Cat 1, Dee 2:\n%s", ev.body)
	}

	// Every form needs the CSRF token; nothing changes without it.
	before := len(eb.audit())
	for _, path := range []string{"/waitlist/" + dee.Entry.ID + "/promote", "/guests/" + ann.Entry.ID + "/check-in",
		"/guests/" + bob.Entry.ID + "/no-show", "/capacity"} {
		if p := eb.b.do("POST", "/dash/events/"+eb.eid+path, url.Values{"reason": {"forged"}, "capacity": {"5"}}); p.status != http.StatusForbidden {
			t.Errorf("POST %s without CSRF: %d", path, p.status)
		}
	}
	if n := len(eb.audit()); n != before || eb.regState(ann.Entry.ID)["checked_in"] != false {
		t.Fatalf("a form without its CSRF token changed something: %d audit rows, %d before", n, before)
	}

	// The override needs a reason; with one, Dee is first in line (no seats
	// are free), on the record as the signed-in staff member.
	p := eb.post("/dash/events/"+eb.eid+"/waitlist/"+dee.Entry.ID+"/promote", url.Values{"reason": {"  "}})
	if !strings.Contains(p.body, "reason: say why") {
		t.Errorf("promote without a reason:\n%s", p.body)
	}
	p = eb.post("/dash/events/"+eb.eid+"/waitlist/"+dee.Entry.ID+"/promote", url.Values{"reason": {"Sponsor's <guest>"}})
	if !strings.Contains(p.body, "Dee Park is first in line for the next seats freed.") {
		t.Errorf("after promoting Dee:\n%s", p.body)
	}
	var override *nextup.AuditEvent
	for _, a := range eb.audit() {
		if a.Reason == "override" {
			override = &a
		}
	}
	if override == nil || override.SubjectID != dee.Entry.ID || override.Actor != nextup.ActorStaff ||
		override.Detail["by"] != eb.email || override.Detail["reason"] != "Sponsor's <guest>" {
		t.Fatalf("the override's audit row: %+v", override)
	}
	for _, want := range []string{"Staff override</b> by " + eb.email + ": Sponsor&#39;s &lt;guest&gt;", "put first in line", "#2"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the history lacks %q:\n%s", want, p.body)
		}
	}

	// Check in, undo, check in again.
	p = eb.post("/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/check-in", url.Values{})
	if !strings.Contains(p.body, "Ann Lee is checked in.") || !strings.Contains(p.body, `id="count-checked-in">1<`) || !strings.Contains(p.body, `class="undo"`) {
		t.Errorf("after checking Ann in:\n%s", p.body)
	}
	p = eb.post("/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/check-in", url.Values{"undo": {"1"}})
	if !strings.Contains(p.body, "Ann Lee&#39;s check-in is undone.") || eb.regState(ann.Entry.ID)["checked_in"] != false {
		t.Errorf("after undoing:\n%s", p.body)
	}
	eb.post("/dash/events/"+eb.eid+"/guests/"+ann.Entry.ID+"/check-in", url.Values{})
	if eb.regState(ann.Entry.ID)["checked_in"] != true {
		t.Error("Ann is not checked in")
	}

	// Bob did not come: his seat goes to Cat (Dee, first in line, needs two).
	p = eb.post("/dash/events/"+eb.eid+"/guests/"+bob.Entry.ID+"/no-show", url.Values{})
	if !strings.Contains(p.body, "Bob Moss is marked a no-show. Offered to the next person in line.") {
		t.Errorf("after Bob's no-show:\n%s", p.body)
	}
	if eb.regState(bob.Entry.ID)["state"] != waitlist.RegNoShow || eb.regState(cat.Entry.ID)["state"] != waitlist.RegOffered {
		t.Fatalf("Bob %v, Cat %v", eb.regState(bob.Entry.ID)["state"], eb.regState(cat.Entry.ID)["state"])
	}
	for _, want := range []string{`id="count-held">1<`, `id="count-no-shows">1<`, "No-shows: 1 of 2 (50%)", "No-show rate: No-shows 50%",
		`id="guest-` + cat.Entry.ID + `" data-state="offered"`, `id="guest-` + bob.Entry.ID + `" data-state="no_show"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("after the no-show the page lacks %q", want)
		}
	}
	// The check-in (twice), its undo and the no-show are on the record.
	counts := map[string]int{}
	for _, a := range eb.audit() {
		counts[a.Reason+":"+a.To]++
	}
	if counts["check_in:checked_in"] != 2 || counts["check_in:not_checked_in"] != 1 || counts[waitlist.ReasonNoShow+":"+string(nextup.BookingNoShow)] != 1 {
		t.Errorf("audit of check-ins and the no-show: %v", counts)
	}

	// Fewer seats than are taken is refused, and says so; more promote Dee.
	p = eb.post("/dash/events/"+eb.eid+"/capacity", url.Values{"capacity": {"1"}})
	if !strings.Contains(p.body, "capacity 1 is below the 2 seats booked or held") {
		t.Errorf("capacity below taken:\n%s", p.body)
	}
	p = eb.post("/dash/events/"+eb.eid+"/capacity", url.Values{"capacity": {"many"}})
	if !strings.Contains(p.body, "capacity must be a whole number") {
		t.Errorf("capacity in words:\n%s", p.body)
	}
	p = eb.post("/dash/events/"+eb.eid+"/capacity", url.Values{"capacity": {"4"}})
	if !strings.Contains(p.body, "Capacity set to 4. Offered to the next person in line.") || eb.regState(dee.Entry.ID)["state"] != waitlist.RegOffered {
		t.Fatalf("capacity 4:\n%s", p.body)
	}
	if !strings.Contains(p.body, `id="count-confirmed">1 of 4<`) || !strings.Contains(p.body, `id="count-held">3<`) || !strings.Contains(p.body, `id="no-waitlist"`) {
		t.Errorf("counts after capacity 4:\n%s", p.body)
	}
	resized := false
	for _, a := range eb.audit() {
		resized = resized || a.Reason == "resize" && a.From == "capacity=2" && a.To == "capacity=4"
	}
	if !resized {
		t.Error("the capacity change is not audited")
	}
	// Cat claims: the acceptance chart counts it at place 2, where she was
	// when offered (Dee, put first in line, was place 1).
	var cr map[string]any
	eb.must(eb.do("GET", "/v1/events/"+eb.eid+"/registrations/"+cat.Entry.ID, eb.key, ""), 200, &cr)
	eb.must(eb.do("POST", "/v1/claims/"+eb.token(cr["offer_id"].(string))+":accept", "", ""), 200, nil)
	p = eb.b.do("GET", "/dash/events/"+eb.eid, nil)
	for _, want := range []string{"Acceptance by waitlist position: #1 no data; #2 100% (1 of 1).", ">claimed<", ">offered, waiting for an answer<"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("after Cat claims the page lacks %q:\n%s", want, p.body)
		}
	}

	// The CSV behind the sign-in is the API's CSV.
	csv := eb.b.do("GET", "/dash/events/"+eb.eid+"/guests.csv", nil)
	api := eb.do("GET", "/v1/events/"+eb.eid+"/registrations?format=csv", eb.key, "")
	lines := strings.Split(strings.TrimSpace(csv.body), "\n")
	if csv.status != 200 || !strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv") || csv.body != string(api.body) ||
		lines[0] != "name,email,phone,guests,seats,state,position,registered_at,checked_in_at,id,guest,guest_of" || len(lines) != 6 {
		t.Fatalf("guests.csv: %d %s\n%s\nthe API's:\n%s", csv.status, csv.header.Get("Content-Type"), csv.body, api.body)
	}
	for _, want := range []string{"Ann Lee,ann@example.com,,0,1,confirmed,,", "Bob Moss,bob@example.com,,0,1,no_show,",
		"Cat Diaz,cat@example.com,,0,1,confirmed,", "Dee Park,dee@example.com,,1,2,offered,"} {
		if !strings.Contains(csv.body, want) {
			t.Errorf("guests.csv lacks %q", want)
		}
	}
	signedOut := eb.client()
	if p := signedOut.do("GET", "/dash/events/"+eb.eid+"/guests.csv", nil); p.status != http.StatusSeeOther || strings.Contains(p.body, "Ann") {
		t.Errorf("guests.csv signed out: %d %q", p.status, p.location)
	}
}

// TestOrganiserOtherBusiness: another business's event is not listed, and
// its page, CSV and forms are 404s that change nothing.
func TestOrganiserOtherBusiness(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	var other, ev, reg map[string]any
	eb.must(eb.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	okey := other["api_key"].(string)
	eb.must(eb.do("POST", "/v1/businesses/"+other["id"].(string)+"/events", okey,
		`{"title":"Their gala","starts_at":"2026-12-12T19:00:00Z","ends_at":"2026-12-12T23:00:00Z","capacity":1}`), 201, &ev)
	oid := ev["id"].(string)
	eb.must(eb.do("POST", "/v1/events/"+oid+"/registrations", okey, `{"name":"Zed","email":"zed@example.com"}`), 201, &reg)
	eb.must(eb.do("POST", "/v1/events/"+oid+"/registrations", okey, `{"name":"Yan","email":"yan@example.com"}`), 201, nil)
	rid := reg["id"].(string)
	var wl struct {
		Waitlist []map[string]any `json:"waitlist"`
	}
	eb.must(eb.do("GET", "/v1/events/"+oid+"/waitlist", okey, ""), 200, &wl)
	wid := wl.Waitlist[0]["id"].(string)

	if l := eb.b.do("GET", "/dash/events", nil); strings.Contains(l.body, oid) || strings.Contains(l.body, "Their gala") {
		t.Error("the events list shows another business's event")
	}
	for _, path := range []string{"/dash/events/" + oid, "/dash/events/" + oid + "/guests.csv"} {
		if p := eb.b.do("GET", path, nil); p.status != http.StatusNotFound || strings.Contains(p.body, "Zed") {
			t.Errorf("GET %s of another business: %d", path, p.status)
		}
	}
	for _, path := range []string{"/waitlist/" + wid + "/promote", "/guests/" + rid + "/check-in", "/guests/" + rid + "/no-show", "/capacity"} {
		if p := eb.b.do("POST", "/dash/events/"+oid+path, url.Values{"csrf": {eb.csrf}, "reason": {"mine now"}, "capacity": {"5"}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s of another business: %d", path, p.status)
		}
	}
	// Nor through this business's own event's paths.
	if p := eb.b.do("POST", "/dash/events/"+eb.eid+"/guests/"+rid+"/check-in", url.Values{"csrf": {eb.csrf}}); p.status != http.StatusNotFound {
		t.Errorf("check in another business's registration through our event: %d", p.status)
	}
	eb.must(eb.do("GET", "/v1/events/"+oid, okey, ""), 200, &ev)
	eb.must(eb.do("GET", "/v1/events/"+oid+"/registrations/"+rid, okey, ""), 200, &reg)
	eb.must(eb.do("GET", "/v1/events/"+oid+"/waitlist", okey, ""), 200, &wl)
	if ev["capacity"] != float64(1) || reg["state"] != "confirmed" || reg["checked_in"] != false || len(wl.Waitlist) != 1 || wl.Waitlist[0]["id"] != wid {
		t.Fatalf("another business's event changed: %v %v %v", ev, reg, wl)
	}
}
