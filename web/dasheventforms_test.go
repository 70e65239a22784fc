package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// eventJSON is the event as the API has it.
func (eb *eventBundle) eventJSON() map[string]any {
	eb.t.Helper()
	var ev map[string]any
	eb.must(eb.do("GET", "/v1/events/"+eb.eid, eb.key, ""), 200, &ev)
	delete(ev, "booked_seats")
	delete(ev, "held_seats")
	delete(ev, "free_seats")
	delete(ev, "state")
	return ev
}

// settingsForm is the settings form as an organiser fills it in.
func settingsForm(change map[string][]string) url.Values {
	f := url.Values{"claim_window": {"6"}, "claim_unit": {"hours"}, "registration_cutoff": {""}, "cancellation_cutoff": {""},
		"promotion_cutoff": {"0"}, "reminder": {"10080", "1440"}, "other_reminders": {""}, "morning": {"1"}, "morning_at": {"09:00"},
		"max_guests": {"1"}, "waitlist_limit": {""}, "price": {""}, "quiet": {"business"}, "requeue": {"back"}, "drop_after": {"2"}}
	for k, v := range change {
		f[k] = v
	}
	return f
}

// TestOrganiserEventSettings: the settings form shows the event's
// settings in plain words (hours, dates in the business's zone, reminders
// as choices) and saves them through the event's update: seconds, policy
// ids and the API appear nowhere; a refused form says why beside it,
// keeps what was typed and changes nothing; empty cutoffs are the start.
func TestOrganiserEventSettings(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	p := eb.b.do("GET", "/dash/events/"+eb.eid, nil)
	for _, want := range []string{`id="settings-form"`, `name="claim_window" type="number" min="1" value="6"`, `<option value="hours" selected>hours</option>`,
		`name="registration_cutoff" type="datetime-local" value=""`, "Empty: when the event starts.", "Dates and times are in Europe/London.",
		`value="10080" class="check" checked> 1 week before`, `value="1440" class="check" checked> 1 day before`,
		`value="20160" class="check"> 2 weeks before`, `name="morning" value="1" class="check" checked>`, `name="morning_at" type="time" value="09:00"`,
		`name="max_guests" type="number" min="0" max="100" value="1"`, "Price per seat (EUR)",
		`<option value="business" selected>as my business setting</option>`, "Your quiet hours are 21:00–08:00; your business setting holds every offer until they end.",
		`<option value="back" selected>they go to the back of the waitlist</option>`, `name="drop_after" type="number" min="0" max="100" value="2"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the settings form lacks %s", want)
		}
	}
	for _, never := range []string{"second", "policy", "API", "fcfs"} {
		if strings.Contains(p.body, never) {
			t.Errorf("the organiser's event page says %q", never)
		}
	}

	// Every setting changed at once, in the organiser's words.
	p = eb.post("/dash/events/"+eb.eid+"/settings", settingsForm(map[string][]string{"claim_window": {"90"}, "claim_unit": {"minutes"},
		"registration_cutoff": {"2026-12-09T18:00"}, "cancellation_cutoff": {"2026-12-08T12:00"}, "promotion_cutoff": {"3"},
		"reminder": {"10080"}, "other_reminders": {"2 days, 6 hours"}, "morning": nil, "max_guests": {"3"}, "waitlist_limit": {"5"},
		"price": {"15,50"}, "quiet": {"through"}, "requeue": {"keep"}, "drop_after": {"3"}}))
	if !strings.Contains(p.body, "The settings are saved.") {
		t.Fatalf("after saving:\n%s", p.body)
	}
	ev := eb.eventJSON()
	if ev["claim_window_seconds"] != 5400.0 || ev["registration_cutoff"] != "2026-12-09T18:00:00Z" || ev["cancellation_cutoff"] != "2026-12-08T12:00:00Z" ||
		ev["promotion_cutoff_seconds"] != 10800.0 || fmt.Sprint(ev["reminder_offsets_seconds"]) != "[604800 172800 21600]" || ev["reminder_morning_of"] != "" ||
		ev["max_guests_per_rsvp"] != 3.0 || ev["waitlist_limit"] != 5.0 || ev["price_cents"] != 1550.0 || ev["currency"] != "eur" ||
		ev["title"] != "Wine <b>tasting</b>" || ev["capacity"] != 2.0 || ev["time_critical_through_quiet"] != true ||
		fmt.Sprint(ev["requeue"]) != "map[drop_after:3 policy:keep]" {
		t.Fatalf("the event after the form: %v", ev)
	}
	updated := false
	for _, a := range eb.audit() {
		updated = updated || a.Reason == "event_updated" && a.Actor == nextup.ActorStaff
	}
	if !updated {
		t.Error("the settings change is not on the record")
	}
	for _, want := range []string{`name="claim_window" type="number" min="1" value="90"`, `<option value="minutes" selected>minutes</option>`,
		`value="2026-12-09T18:00"`, `value="2026-12-08T12:00"`, `name="promotion_cutoff" type="number" min="0" step="any" value="3"`,
		`checked> 1 week before`, `checked> 2 days before`, `checked> 6 hours before`, `class="check"> 1 day before`,
		`name="morning" value="1" class="check">`, `name="waitlist_limit" type="number" min="0" value="5"`, `name="price" inputmode="decimal" value="15.50"`,
		`<option value="through" selected>`, `<option value="keep" selected>they keep their place</option>`, `name="drop_after" type="number" min="0" max="100" value="3"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the saved settings are not shown back: %s", want)
		}
	}

	// Refused: said beside the form in plain words, typed values kept,
	// nothing changed.
	before := eb.eventJSON()
	for _, c := range []struct {
		name   string
		change map[string][]string
		want   string
	}{
		{"no claim time", map[string][]string{"claim_window": {"0"}}, "from 1 minute to 14 days"},
		{"claim time in words", map[string][]string{"claim_window": {"an hour"}}, "whole number of minutes or hours"},
		{"fifteen days to claim", map[string][]string{"claim_window": {"360"}, "claim_unit": {"hours"}}, "from 1 minute to 14 days"},
		{"registration after the start", map[string][]string{"registration_cutoff": {"2026-12-11T10:00"}}, "Registration must close by the time the event starts."},
		{"cancellation not a date", map[string][]string{"cancellation_cutoff": {"next week"}}, "Give the date and time cancellation closes"},
		{"reminder in words", map[string][]string{"other_reminders": {"soon"}}, `&#34;soon&#34; is not a reminder time: write it like 2 days or 6 hours`},
		{"six reminders", map[string][]string{"reminder": {"20160", "10080", "4320", "2880", "1440", "180"}}, "at most 5 reminders"},
		{"reminder too early", map[string][]string{"other_reminders": {"14 weeks"}}, "between 1 minute and 90 days"},
		{"negative stop", map[string][]string{"promotion_cutoff": {"-1"}}, "between 0 and 8760 hours"},
		{"morning without a time", map[string][]string{"morning_at": {""}}, "time of the morning reminder"},
		{"guests in words", map[string][]string{"max_guests": {"two"}}, "whole number from 0 to 100"},
		{"limit in words", map[string][]string{"waitlist_limit": {"many"}}, "or empty for no limit"},
		{"price in words", map[string][]string{"price": {"ten"}}, "amount such as 12.50"},
		{"two at once", map[string][]string{"price": {"ten"}, "max_guests": {"-1"}}, "Please check the settings: guests per registration"},
		{"no quiet choice", map[string][]string{"quiet": {"sometimes"}}, "what happens to offers during quiet hours"},
		{"no re-queue choice", map[string][]string{"requeue": {"drop"}}, "what a missed offer does"},
		{"drop after in words", map[string][]string{"drop_after": {"twice"}}, "from 0 (never) to 100"},
	} {
		f := settingsForm(c.change)
		f.Set("csrf", eb.csrf)
		p := eb.b.do("POST", "/dash/events/"+eb.eid+"/settings", f)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="settings-error">`) || !strings.Contains(p.body, c.want) {
			t.Errorf("%s: %d, want 400 saying %q beside the form:\n%s", c.name, p.status, c.want, p.body)
			continue
		}
		if strings.Contains(p.body, "second") || strings.Contains(p.body, "_seconds") {
			t.Errorf("%s: the refusal speaks of seconds", c.name)
		}
		for k, v := range c.change {
			if len(v) == 1 && v[0] != "" && k != "claim_unit" && k != "quiet" && k != "requeue" && !strings.Contains(p.body, `value="`+v[0]+`"`) {
				t.Errorf("%s: the typed %s %q is not kept", c.name, k, v[0])
			}
		}
	}
	if after := eb.eventJSON(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused settings form changed the event:\n%v\n%v", before, after)
	}

	// Empty cutoffs are the start again; the morning reminder at 8:30.
	eb.post("/dash/events/"+eb.eid+"/settings", settingsForm(map[string][]string{"morning_at": {"08:30"}}))
	ev = eb.eventJSON()
	if _, ok := ev["registration_cutoff"]; ok && ev["registration_cutoff"] != nil {
		t.Errorf("registration cutoff after emptying it: %v", ev["registration_cutoff"])
	}
	if c, ok := ev["cancellation_cutoff"]; ok && c != nil || ev["reminder_morning_of"] != "08:30" || ev["claim_window_seconds"] != 21600.0 ||
		ev["waitlist_limit"] != nil || ev["price_cents"] != 0.0 {
		t.Errorf("after emptying the cutoffs: %v", ev)
	}

	// The form needs its CSRF token.
	if p := eb.b.do("POST", "/dash/events/"+eb.eid+"/settings", settingsForm(map[string][]string{"max_guests": {"9"}})); p.status != http.StatusForbidden {
		t.Errorf("settings without CSRF: %d", p.status)
	}
	if eb.eventJSON()["max_guests_per_rsvp"] != 1.0 {
		t.Error("settings without CSRF changed the event")
	}
}

// TestOrganiserAddRegistrant: staff add a registrant by hand (a phone
// booking) through the registration use case, with source staff: confirmed
// while seats are free, waitlisted after; each refusal is said beside the
// form, keeps what was typed and stores nothing.
func TestOrganiserAddRegistrant(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t) // 2 seats, 1 guest each at most
	add := func(form url.Values) page {
		t.Helper()
		form.Set("csrf", eb.csrf)
		return eb.b.do("POST", "/dash/events/"+eb.eid+"/registrations", form)
	}
	if p := eb.b.do("GET", "/dash/events/"+eb.eid, nil); !strings.Contains(p.body, `id="add-form"`) || !strings.Contains(p.body, `name="guests" type="number" min="0" value="0"`) {
		t.Fatalf("the event page has no Add a registrant form:\n%s", p.body)
	}

	p := eb.post("/dash/events/"+eb.eid+"/registrations", url.Values{"name": {" Ann Lee "}, "email": {"ann@example.com"}, "guests": {""}, "guest_names": {" Rui Lima \n"}})
	if !strings.Contains(p.body, "Ann Lee is confirmed (2 seats).") || !strings.Contains(p.body, `id="count-confirmed">2 of 2<`) {
		t.Fatalf("after adding Ann:\n%s", p.body)
	}
	p = eb.post("/dash/events/"+eb.eid+"/registrations", url.Values{"name": {"Bob Moss"}, "phone": {"+44 7700 900123"}, "guests": {""}})
	if !strings.Contains(p.body, "The event is full: Bob Moss is on the waitlist, number 1 in line (1 seat).") || !strings.Contains(p.body, `id="count-waitlisted">1<`) {
		t.Fatalf("after adding Bob:\n%s", p.body)
	}
	_, regs, err := eb.svc.Registrations(context.Background(), eb.bid, eb.eid, "")
	if err != nil || len(regs) != 2 {
		t.Fatalf("registrations: %v %v", regs, err)
	}
	for _, reg := range regs {
		if reg.Entry.Source != "staff" {
			t.Errorf("%s's source is %q", reg.Entry.Name, reg.Entry.Source)
		}
	}
	if regs[0].Entry.Name != "Ann Lee" || regs[0].State != waitlist.RegConfirmed || regs[0].Guests() != 1 || len(regs[0].GuestList) != 1 || regs[0].GuestList[0].Name != "Rui Lima" ||
		regs[1].Entry.Phone == "" || regs[1].State != waitlist.RegWaitlisted {
		t.Fatalf("registrations: %+v", regs)
	}
	// Ann got her confirmation as anyone registering does.
	if cs := eb.outbox(nextup.MessageConfirmation); len(cs) != 1 || cs[0].To != "ann@example.com" {
		t.Errorf("confirmations: %+v", cs)
	}

	// One may wait, and Bob does.
	eb.post("/dash/events/"+eb.eid+"/settings", settingsForm(map[string][]string{"waitlist_limit": {"1"}}))
	for _, c := range []struct {
		name   string
		form   url.Values
		status int
		want   string
	}{
		{"no name", url.Values{"name": {" "}, "email": {"cat@example.com"}}, 400, "name: is required"},
		{"no contact", url.Values{"name": {"Cat Diaz"}}, 400, "email: email or phone is required"},
		{"bad email", url.Values{"name": {"Cat Diaz"}, "email": {"cat at example"}}, 400, "email: is not an email address"},
		{"too many guests", url.Values{"name": {"Cat Diaz"}, "email": {"cat@example.com"}, "guests": {"2"}}, 400, "at most 1 guests per registration"},
		{"guests in words", url.Values{"name": {"Cat Diaz"}, "email": {"cat@example.com"}, "guests": {"two"}}, 400, "guests must be a whole number"},
		{"more names than guests", url.Values{"name": {"Cat Diaz"}, "email": {"cat@example.com"}, "guests": {"0"}, "guest_names": {"Dan, Eve"}}, 400, "guest names"},
		{"twice", url.Values{"name": {"Ann Again"}, "email": {"ann@example.com"}}, 409, "already registered"},
		{"waitlist full", url.Values{"name": {"Cat Diaz"}, "email": {"cat@example.com"}}, 409, "The event is full and so is its waitlist. To take more people, raise the waitlist limit under Settings."},
	} {
		p := add(c.form)
		if p.status != c.status || !strings.Contains(p.body, `id="add-error">`) || !strings.Contains(p.body, c.want) {
			t.Errorf("%s: %d, want %d saying %q beside the form:\n%s", c.name, p.status, c.status, c.want, p.body)
			continue
		}
		for _, k := range []string{"name", "email", "guests"} {
			if v := strings.TrimSpace(c.form.Get(k)); v != "" && !strings.Contains(p.body, `value="`+v+`"`) {
				t.Errorf("%s: the typed %s %q is not kept", c.name, k, v)
			}
		}
	}
	if _, regs, _ := eb.svc.Registrations(context.Background(), eb.bid, eb.eid, ""); len(regs) != 2 {
		t.Fatalf("a refused registrant was stored: %d registrations", len(regs))
	}
	// Closed (registration closed an hour ago): said beside the form too.
	eb.post("/dash/events/"+eb.eid+"/settings", settingsForm(map[string][]string{"registration_cutoff": {"2026-12-01T09:00"}}))
	if p := add(url.Values{"name": {"Late Larry"}, "email": {"larry@example.com"}}); p.status != http.StatusConflict ||
		!strings.Contains(p.body, `id="add-error">Registration for this event has closed. To take more people, change when registration closes under Settings.<`) {
		t.Errorf("after the start: %d\n%s", p.status, p.body)
	}
	if p := eb.b.do("POST", "/dash/events/"+eb.eid+"/registrations", url.Values{"name": {"Forged"}, "email": {"f@example.com"}}); p.status != http.StatusForbidden {
		t.Errorf("add without CSRF: %d", p.status)
	}
}

// TestOrganiserTestReminder: the event page's test reminder asks for the
// organiser's address when the business has none (and keeps it), then
// sends the event's reminder there through the same use case as the API.
func TestOrganiserTestReminder(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	test := func(form url.Values) page {
		t.Helper()
		form.Set("csrf", eb.csrf)
		return eb.b.do("POST", "/dash/events/"+eb.eid+"/test-reminder", form)
	}
	if p := eb.b.do("GET", "/dash/events/"+eb.eid, nil); !strings.Contains(p.body, `id="owner-email"`) || !strings.Contains(p.body, "Send me a test reminder") {
		t.Fatalf("the test reminder form without an owner email:\n%s", p.body)
	}
	if p := test(url.Values{}); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="test-error">Give the email address to send the test reminder to.`) {
		t.Errorf("no address: %d\n%s", p.status, p.body)
	}
	if p := test(url.Values{"owner_email": {"olive at salon"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "is not an email address") {
		t.Errorf("a bad address: %d\n%s", p.status, p.body)
	}
	if n := len(eb.outbox(waitlist.MessageReminderTest)); n != 0 {
		t.Fatalf("%d test reminders sent by refused forms", n)
	}

	p := eb.post("/dash/events/"+eb.eid+"/test-reminder", url.Values{"owner_email": {"olive@salon.example"}})
	if !strings.Contains(p.body, "A test reminder is on its way to olive@salon.example") || !strings.Contains(p.body, "it goes to <b>olive@salon.example</b> now") ||
		strings.Contains(p.body, `id="owner-email"`) {
		t.Fatalf("after the test reminder:\n%s", p.body)
	}
	var biz map[string]any
	eb.must(eb.do("GET", "/v1/businesses/"+eb.bid, eb.key, ""), 200, &biz)
	if biz["owner_email"] != "olive@salon.example" {
		t.Errorf("the owner email is not kept: %v", biz)
	}
	eb.post("/dash/events/"+eb.eid+"/test-reminder", url.Values{})
	ms := eb.outbox(waitlist.MessageReminderTest)
	if len(ms) != 2 || ms[0].To != "olive@salon.example" || !strings.HasPrefix(ms[0].Subject, "[Test] Reminder: Wine <b>tasting</b> on Thu 10 Dec") ||
		!strings.Contains(ms[0].Body, "Hi "+waitlist.SampleGuest+",") {
		t.Fatalf("test reminders: %+v", ms)
	}
	if p := eb.b.do("POST", "/dash/events/"+eb.eid+"/test-reminder", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("test reminder without CSRF: %d", p.status)
	}
}

// TestOrganiserEventLive: GET /dash/events/{id}/live is the page's counts
// as a fragment, as /dash/live is the Today page's; the page polls it.
func TestOrganiserEventLive(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	live := func() page {
		t.Helper()
		p := eb.b.do("GET", "/dash/events/"+eb.eid+"/live", nil)
		if p.status != 200 || strings.Contains(p.body, "<html") || !strings.Contains(p.body, `class="counts"`) {
			t.Fatalf("the live fragment: %d\n%s", p.status, p.body)
		}
		return p
	}
	if p := live(); !strings.Contains(p.body, `id="count-confirmed">0 of 2<`) || !strings.Contains(p.body, `id="count-free">2<`) {
		t.Errorf("before anyone registers:\n%s", p.body)
	}
	ann := eb.register("Ann Lee", 1)
	eb.register("Bob Moss", 0)
	if _, err := eb.svc.CheckIn(context.Background(), eb.bid, eb.eid, ann.Entry.ID, false); err != nil {
		t.Fatal(err)
	}
	p := live()
	for _, want := range []string{`id="count-confirmed">2 of 2<`, `id="count-free">0<`, `id="count-waitlisted">1<`, `id="count-checked-in">1<`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the live fragment lacks %s:\n%s", want, p.body)
		}
	}
	page := eb.b.do("GET", "/dash/events/"+eb.eid, nil)
	script := regexp.MustCompile(`<script src="(/static/[0-9a-f]+/event\.js)"></script>`).FindStringSubmatch(page.body)
	if !strings.Contains(page.body, `<div id="event-live" data-src="/dash/events/`+eb.eid+`/live">`) || script == nil {
		t.Errorf("the event page does not poll its counts:\n%s", page.body)
	} else if js := eb.b.do("GET", script[1], nil); !strings.Contains(js.body, "setInterval(refresh,2000)") || !strings.Contains(js.body, "live.dataset.src") {
		t.Errorf("the event page's script does not poll its counts:\n%s", js.body)
	}
	if p := eb.client().do("GET", "/dash/events/"+eb.eid+"/live", nil); p.status != http.StatusSeeOther || strings.Contains(p.body, "count-") {
		t.Errorf("signed out: %d %q", p.status, p.location)
	}
	if p := eb.b.do("GET", "/dash/events/evt_nope/live", nil); p.status != http.StatusNotFound {
		t.Errorf("no such event: %d", p.status)
	}
}

// TestOrganiserEventFormsOtherBusiness: another business's event is a 404
// to the event page's forms and its live counts, and nothing changes.
func TestOrganiserEventFormsOtherBusiness(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	var other, ev map[string]any
	eb.must(eb.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	okey := other["api_key"].(string)
	eb.must(eb.do("PATCH", "/v1/businesses/"+other["id"].(string), okey, `{"owner_email":"them@other.example"}`), 200, nil)
	eb.must(eb.do("POST", "/v1/businesses/"+other["id"].(string)+"/events", okey,
		`{"title":"Their gala","starts_at":"2026-12-12T19:00:00Z","ends_at":"2026-12-12T23:00:00Z","capacity":1}`), 201, &ev)
	oid := ev["id"].(string)
	if p := eb.b.do("GET", "/dash/events/"+oid+"/live", nil); p.status != http.StatusNotFound {
		t.Errorf("live counts of another business's event: %d", p.status)
	}
	for path, form := range map[string]url.Values{
		"/settings":      settingsForm(map[string][]string{"max_guests": {"7"}}),
		"/registrations": {"name": {"Intruder"}, "email": {"i@example.com"}},
		"/test-reminder": {},
	} {
		form.Set("csrf", eb.csrf)
		if p := eb.b.do("POST", "/dash/events/"+oid+path, form); p.status != http.StatusNotFound {
			t.Errorf("POST %s of another business's event: %d", path, p.status)
		}
	}
	var after, regs map[string]any
	eb.must(eb.do("GET", "/v1/events/"+oid, okey, ""), 200, &after)
	eb.must(eb.do("GET", "/v1/events/"+oid+"/registrations", okey, ""), 200, &regs)
	if after["max_guests_per_rsvp"] != 0.0 || len(regs["registrations"].([]any)) != 0 || len(eb.outbox(waitlist.MessageReminderTest)) != 0 {
		t.Fatalf("another business's event changed: %v %v", after, regs)
	}
}

// TestOrganiserPublicPage: the event page's Public page form. A business
// without a slug is asked for one, suggested from its name, and the
// event's part is suggested from its title; saved, the page gives the
// link to share, and the public page shows what the organiser chose.
// Refusals say why beside the form and change nothing.
func TestOrganiserPublicPage(t *testing.T) {
	t.Parallel()
	eb := setupEvent(t)
	p := eb.b.do("GET", "/dash/events/"+eb.eid, nil)
	for _, want := range []string{`id="public-form"`, `id="public-none"`, `name="business_slug" required maxlength="40" value="salon"`,
		`name="slug" maxlength="64" value="wine-b-tasting-b"`, `<option value="exact" selected>the number of seats left</option>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the public page form lacks %s", want)
		}
	}
	before := eb.eventJSON()
	form := func(change map[string][]string) url.Values {
		f := url.Values{"business_slug": {"salon-lane"}, "slug": {"wine-night"}, "show_seats": {"few"}, "place": {"The back room, 12 Mill Lane"},
			"notes": {"Bring a friend."}, "noindex": {"1"}}
		for k, v := range change {
			f[k] = v
		}
		f.Set("csrf", eb.csrf)
		return f
	}
	for _, c := range []struct {
		name   string
		change map[string][]string
		want   string
	}{
		{"bad business slug", map[string][]string{"business_slug": {"Salon Lane!"}}, "Your business&#39;s name in links takes lower-case letters"},
		{"no business slug", map[string][]string{"business_slug": {""}}, "Give your business&#39;s name as it should read in links."},
		{"bad event slug", map[string][]string{"slug": {"-wine-"}}, "The event&#39;s name in links takes lower-case letters"},
		{"no seats choice", map[string][]string{"show_seats": {"lots"}}, "Choose what the page says about the seats left."},
		{"long place", map[string][]string{"place": {strings.Repeat("x", 201)}}, "under 200 characters"},
	} {
		p := eb.b.do("POST", "/dash/events/"+eb.eid+"/public", form(c.change))
		if p.status < 400 || !strings.Contains(p.body, `id="public-error">`) || !strings.Contains(p.body, c.want) {
			t.Errorf("%s: %d, want a refusal saying %q beside the form:\n%s", c.name, p.status, c.want, p.body)
		}
	}
	if after := eb.eventJSON(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused public page form changed the event:\n%v\n%v", before, after)
	}
	var biz map[string]any
	eb.must(eb.do("GET", "/v1/businesses/"+eb.bid, eb.key, ""), 200, &biz)
	if biz["slug"] != nil && biz["slug"] != "" {
		t.Fatalf("a refused form gave the business the slug %v", biz["slug"])
	}

	p = eb.post("/dash/events/"+eb.eid+"/public", form(nil))
	link := "https://nextup.test/e/salon-lane/wine-night"
	if !strings.Contains(p.body, "The public page is saved. Share this link: "+link) || !strings.Contains(p.body, `id="public-url" target="_blank" rel="noopener">`+link+`</a>`) ||
		strings.Contains(p.body, `name="business_slug"`) {
		t.Fatalf("after saving the public page:\n%s", p.body)
	}
	ev := eb.eventJSON()
	if ev["slug"] != "wine-night" || fmt.Sprint(ev["public"]) != "map[noindex:true notes:Bring a friend. place:The back room, 12 Mill Lane show_seats:few]" {
		t.Fatalf("the event after the public page form: %v", ev)
	}
	pub := eb.client().do("GET", "/e/salon-lane/wine-night", nil)
	for _, want := range []string{"The back room, 12 Mill Lane", "Bring a friend."} {
		if pub.status != 200 || !strings.Contains(pub.body, want) {
			t.Errorf("the public page lacks %q: %d\n%s", want, pub.status, pub.body)
		}
	}
	if got := pub.header.Get("X-Robots-Tag"); got != "noindex" {
		t.Errorf("the public page's X-Robots-Tag is %q, want noindex", got)
	}

	// Another upcoming event may not take the same link.
	other := eb.b.do("POST", "/dash/events", url.Values{"csrf": {eb.csrf}, "title": {"Cheese night"},
		"starts_at": {"2026-12-12T19:00"}, "ends_at": {"2026-12-12T21:00"}, "capacity": {"10"}})
	oid := eventIDOf(t, other)
	p = eb.b.do("POST", "/dash/events/"+oid+"/public", form(nil))
	if p.status != http.StatusConflict || !strings.Contains(p.body, "Another of your upcoming events is at &#34;wine-night&#34;") {
		t.Fatalf("a second event at the same link: %d\n%s", p.status, p.body)
	}
}
