package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestDashboardPages: the waitlist in fair order with positions and
// filters, adding, editing and removing people; hand-backs with their note
// and resolving them; messages with retry; the rules form making a new
// version with its history. All behind the sign-in, with CSRF.
func TestDashboardPages(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	sb.must(sb.do("PATCH", "/v1/businesses/"+sb.bid, sb.key, `{"slug":"salon","services":[{"name":"haircut"},{"name":"colour"}],"staff":["Ana","Ben"]}`), 200, nil)
	for _, body := range []string{
		`{"name":"Ann","email":"ann@example.com","service":"haircut"}`,
		`{"name":"Bob","email":"bob@example.com","service":"haircut","staff":"Ben"}`,
		`{"name":"Cat","email":"cat@example.com","service":"colour","earliest":"2026-12-10","latest":"2026-12-12"}`,
	} {
		sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, body), 201, nil)
	}
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)

	wl := b.do("GET", "/dash/waitlist", nil)
	ann, bob, cat := strings.Index(wl.body, ">Ann"), strings.Index(wl.body, ">Bob"), strings.Index(wl.body, ">Cat")
	if wl.status != 200 || ann < 0 || bob < ann || cat < 0 || !strings.Contains(wl.body, "How the order works") {
		t.Fatalf("waitlist page: %d\n%s", wl.status, wl.body)
	}
	if f := b.do("GET", "/dash/waitlist?staff=Ana", nil); strings.Contains(f.body, ">Bob") || !strings.Contains(f.body, ">Ann") {
		t.Errorf("filter by staff Ana shows Bob (who wants Ben) or hides Ann")
	}
	if f := b.do("GET", "/dash/waitlist?date=2026-12-05", nil); strings.Contains(f.body, ">Cat") || !strings.Contains(f.body, ">Ann") {
		t.Errorf("filter by 5 Dec shows Cat (10–12 Dec) or hides Ann")
	}
	if f := b.do("GET", "/dash/waitlist?service=colour", nil); strings.Contains(f.body, ">Ann") || !strings.Contains(f.body, ">Cat") {
		t.Errorf("filter by colour")
	}
	csrf := wl.csrf(t)
	// Add Dee as a priority: she goes to the front of the haircut line.
	p := b.do("POST", "/dash/waitlist", url.Values{"csrf": {csrf}, "name": {"Dee"}, "phone": {"+447700900555"}, "service": {"haircut"}, "priority": {"1"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "Dee+is+on+the+list") {
		t.Fatalf("add: %d %q %s", p.status, p.location, p.body)
	}
	wl = b.do("GET", "/dash/waitlist?service=haircut", nil)
	if dee, ann := strings.Index(wl.body, ">Dee"), strings.Index(wl.body, ">Ann"); dee < 0 || dee > ann {
		t.Fatalf("Dee (priority) is not first:\n%s", wl.body)
	}
	// Give Bob priority too, then remove Ann.
	var entries struct {
		Entries []map[string]any `json:"entries"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+sb.bid+"/waitlist", sb.key, ""), 200, &entries)
	ids := map[string]string{}
	for _, e := range entries.Entries {
		ids[e["name"].(string)] = e["id"].(string)
	}
	if p := b.do("POST", "/dash/waitlist/"+ids["Bob"], url.Values{"csrf": {csrf}, "priority": {"1"}, "latest": {"2026-12-31"}}); p.status != http.StatusSeeOther {
		t.Fatalf("edit Bob: %d %s", p.status, p.body)
	}
	if p := b.do("POST", "/dash/waitlist/"+ids["Ann"]+"/remove", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther {
		t.Fatalf("remove Ann: %d", p.status)
	}
	if p := b.do("POST", "/dash/waitlist/"+ids["Ann"]+"/remove", url.Values{}); p.status != http.StatusForbidden {
		t.Fatalf("remove without csrf: %d", p.status)
	}
	var bobNow map[string]any
	sb.must(sb.do("GET", "/v1/waitlist/"+ids["Bob"], sb.key, ""), 200, &bobNow)
	var annNow map[string]any
	sb.must(sb.do("GET", "/v1/waitlist/"+ids["Ann"], sb.key, ""), 200, &annNow)
	if bobNow["priority"] != true || annNow["state"] != "left" {
		t.Fatalf("Bob %v, Ann %v", bobNow, annNow)
	}
	// A bad date is explained, nothing changes.
	p = b.do("POST", "/dash/waitlist", url.Values{"csrf": {csrf}, "name": {"Eve"}, "email": {"eve@example.com"}, "service": {"haircut"}, "earliest": {"soon"}})
	if p.status != http.StatusSeeOther || !strings.Contains(b.do("GET", p.location, nil).body, "dates must look like 2026-12-24") {
		t.Fatalf("bad date: %d %q", p.status, p.location)
	}
	if strings.Contains(b.do("GET", "/dash/waitlist", nil).body, "eve@example.com") { // not ">Eve": the nav's "Events" has it
		t.Fatal("a refused add put Eve on the list")
	}

	// A slot nobody fits is handed back; staff resolve it.
	sl := sb.slot(`{"service":"massage","starts_at":"2026-12-02T10:00:00Z","ends_at":"2026-12-02T11:00:00Z"}`)
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, `{"name":"Fay","email":"fay@example.com","service":"massage"}`), 201, nil)
	_, tok := sb.offerFor(sl["id"].(string))
	sb.must(sb.do("POST", "/v1/claims/"+tok+":decline", "", ""), 200, nil)
	hb := b.do("GET", "/dash/handbacks", nil)
	if !strings.Contains(hb.body, "list exhausted") || !strings.Contains(hb.body, "Fay") {
		t.Fatalf("hand-backs page:\n%s", hb.body)
	}
	var hbs struct {
		HandBacks []map[string]any `json:"handbacks"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+sb.bid+"/handbacks", sb.key, ""), 200, &hbs)
	if p := b.do("POST", "/dash/handbacks/"+hbs.HandBacks[0]["id"].(string)+"/resolve", url.Values{"csrf": {hb.csrf(t)}}); p.status != http.StatusSeeOther {
		t.Fatalf("resolve: %d", p.status)
	}
	if hb := b.do("GET", "/dash/handbacks", nil); !strings.Contains(hb.body, "Nothing handed back") {
		t.Fatalf("after resolving:\n%s", hb.body)
	}

	// Messages: what went to whom.
	ms := b.do("GET", "/dash/messages", nil)
	if !strings.Contains(ms.body, "fay@example.com") || !strings.Contains(ms.body, "offer") {
		t.Fatalf("messages page:\n%s", ms.body)
	}

	// Rules: a new version, told to customers, in the history.
	st := b.do("GET", "/dash/settings", nil)
	if !strings.Contains(st.body, "Rules — version 1") || !strings.Contains(st.body, "/b/salon/join") {
		t.Fatalf("settings:\n%s", st.body)
	}
	p = b.do("POST", "/dash/settings/rules", url.Values{"csrf": {st.csrf(t)}, "claim_window_minutes": {"15"}, "min_lead_minutes": {"15"},
		"max_offers_per_person_per_day": {"3"}, "quiet": {"on"}, "quiet_start": {"22:00"}, "quiet_end": {"07:30"}, "position_visibility": {"band"},
		"ladder_hours": {"2", "", "24"}, "ladder_minutes": {"5", "", "60"}, "follow_up_percent": {"25"}, "follow_up_same_channel": {"1"}, "dedupe": {"all"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "version+2") {
		t.Fatalf("rules: %d %q", p.status, p.location)
	}
	st = b.do("GET", "/dash/settings", nil)
	for _, want := range []string{"Rules — version 2", "yours for 15 minutes", "between 22:00 and 07:30", "version 2, by staff: shorter times to claim, time to claim, when someone books",
		"5 minutes for a slot starting in less than 2 hours; 1 hour for a slot starting in less than 24 hours; otherwise 15 minutes",
		`name="ladder_hours" type="number" min="1" step="any" value="24"`, `value="25"`, `<option value="all" selected>`} {
		if !strings.Contains(st.body, want) {
			t.Errorf("settings after the change lack %q", want)
		}
	}
	biz, err := sb.svc.GetBusiness(context.Background(), sb.bid)
	if r := biz.Rules; err != nil || r.ClaimWindow != 15*time.Minute || len(r.ClaimWindowLadder) != 2 || r.ClaimWindowLadder[1].Window != time.Hour ||
		r.FollowUp != (nextup.FollowUp{AfterShare: 0.25, SameChannelWhenNoOther: true}) || r.Dedupe != nextup.DedupeAll {
		t.Errorf("rules after the form: %+v %v", biz.Rules, err)
	}
	p = b.do("POST", "/dash/settings/rules", url.Values{"csrf": {st.csrf(t)}, "claim_window_minutes": {"0.05"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "error=") {
		t.Fatalf("bad rules: %d %q", p.status, p.location)
	}
	// The status page's estimated wait, on and off.
	for _, on := range []bool{true, false} {
		v := url.Values{"csrf": {st.csrf(t)}}
		if on {
			v.Set("wait_estimate", "1")
		}
		if p = b.do("POST", "/dash/settings/status-page", v); p.status != http.StatusSeeOther {
			t.Fatalf("status page setting: %d", p.status)
		}
		biz, err := sb.svc.GetBusiness(context.Background(), sb.bid)
		if err != nil || biz.Profile.WaitEstimate != on {
			t.Errorf("wait estimate = %v, want %v (%v)", biz.Profile.WaitEstimate, on, err)
		}
		st = b.do("GET", "/dash/settings", nil)
	}
	if strings.Contains(st.body, "PATCH") || strings.Contains(st.body, "API") || strings.Contains(st.body, "rules/v") {
		t.Errorf("the settings page speaks to developers:\n%s", st.body)
	}

	// The business's details: services with their other names, minutes
	// and prices, and the staff, from the form.
	p = b.do("POST", "/dash/settings/business", url.Values{"csrf": {st.csrf(t)}, "slug": {"salon"}, "owner_email": {"owner@salon.example"},
		"country": {"gb"}, "service_name": {"Haircut", "Colour", ""}, "service_synonyms": {"cut, trim", "", ""},
		"service_minutes": {"45", "90", ""}, "service_price": {"35", "£80.50", ""}, "staff": {"Ana\r\n\r\nBen \r\n"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "notice=") {
		t.Fatalf("business details: %d %q", p.status, p.location)
	}
	biz, err = sb.svc.GetBusiness(context.Background(), sb.bid)
	if pr := biz.Profile; err != nil || pr.Country != "GB" || len(pr.Services) != 2 || pr.Services[0].Synonyms[1] != "trim" ||
		pr.Services[1].DurationMinutes != 90 || pr.Services[1].PriceCents != 8050 || fmt.Sprint(pr.Staff) != "[Ana Ben]" {
		t.Fatalf("profile after the form: %+v %v", biz.Profile, err)
	}
	st = b.do("GET", "/dash/settings", nil)
	if !strings.Contains(st.body, `value="cut, trim"`) || !strings.Contains(st.body, `value="80.50"`) || !strings.Contains(st.body, "Ana\nBen</textarea>") {
		t.Errorf("the form does not show what was saved:\n%s", st.body)
	}
	// What is wrong is said in the form's words, and nothing is saved.
	for _, bad := range []url.Values{
		{"service_name": {"", "Colour"}, "service_minutes": {"30", ""}},
		{"service_name": {"Haircut", "haircut"}},
		{"service_name": {"Haircut"}, "service_price": {"lots"}},
		{"slug": {"Not A Slug"}, "service_name": {"Haircut"}},
	} {
		bad.Set("csrf", st.csrf(t))
		p = b.do("POST", "/dash/settings/business", bad)
		if p.status != http.StatusSeeOther || !strings.Contains(p.location, "error=") || strings.Contains(p.location, "services%5B") {
			t.Errorf("bad details %v: %d %q", bad, p.status, p.location)
		}
	}
	if after, _ := sb.svc.GetBusiness(context.Background(), sb.bid); len(after.Profile.Services) != 2 || after.Profile.Slug != "salon" {
		t.Errorf("a refused form changed the profile: %+v", after.Profile)
	}
	// The booking tool: connected from the page, its secret shown once.
	bt := b.do("POST", "/dash/settings/booking-tool", url.Values{"csrf": {st.csrf(t)}})
	biz, _ = sb.svc.GetBusiness(context.Background(), sb.bid)
	if bt.status != 200 || biz.Profile.BookingEvents == nil || !strings.Contains(bt.body, biz.Profile.BookingEvents.Secret) {
		t.Fatalf("booking tool: %d\n%s", bt.status, bt.body)
	}
	if st = b.do("GET", "/dash/settings", nil); strings.Contains(st.body, biz.Profile.BookingEvents.Secret) || !strings.Contains(st.body, "connected since") {
		t.Errorf("the settings page shows the secret again, or not that the tool is connected")
	}
}

// TestDashboardRequests: the open proposed rows on the Requests page with
// what the parser read and its doubts; approving with a corrected service
// puts the person on the waitlist, rejecting takes the request away.
func TestDashboardRequests(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	sb.must(sb.do("PATCH", "/v1/businesses/"+sb.bid, sb.key, `{"services":[{"name":"haircut"},{"name":"colour"}]}`), 200, nil)
	for i, name := range []string{"Ann", "Bob"} {
		if _, _, err := sb.svc.Propose(context.Background(), sb.bid, waitlist.ProposeParams{Source: nextup.ProposalFromEmail,
			SourceRef: fmt.Sprintf("<%d@x>", i), Excerpt: name + " here, a hiarcut please",
			Fields:   nextup.ProposalFields{Name: name, Email: strings.ToLower(name) + "@example.com", Service: "hiarcut"},
			Problems: []string{"service not in the catalogue"}}); err != nil {
			t.Fatal(err)
		}
	}
	b := sb.client()
	if p := b.do("GET", "/dash/requests", nil); p.status != http.StatusSeeOther && p.status != http.StatusOK {
		t.Fatalf("signed out: %d", p.status)
	}
	sb.signIn(b, sb.email, sb.pass)
	page := b.do("GET", "/dash/requests", nil)
	if page.status != 200 || !strings.Contains(page.body, "Ann — hiarcut") || !strings.Contains(page.body, "Check: service not in the catalogue") ||
		!strings.Contains(page.body, "a hiarcut please") {
		t.Fatalf("requests page: %d\n%s", page.status, page.body)
	}
	var list struct {
		Proposals []map[string]any `json:"proposals"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+sb.bid+"/proposals?state=open", sb.key, ""), 200, &list)
	ids := map[string]string{}
	for _, p := range list.Proposals {
		ids[p["fields"].(map[string]any)["name"].(string)] = p["id"].(string)
	}
	// Without the CSRF token nothing happens.
	if p := b.do("POST", "/dash/requests/"+ids["Ann"]+"/approve", url.Values{"service": {"haircut"}}); p.status != http.StatusForbidden {
		t.Errorf("approve without CSRF: %d", p.status)
	}
	p := b.do("POST", "/dash/requests/"+ids["Ann"]+"/approve", url.Values{"csrf": {page.csrf(t)}, "name": {"Ann"}, "service": {"haircut"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "Ann+is+on+the+waitlist") {
		t.Fatalf("approve: %d %q", p.status, p.location)
	}
	p = b.do("POST", "/dash/requests/"+ids["Bob"]+"/reject", url.Values{"csrf": {page.csrf(t)}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("reject: %d", p.status)
	}
	if page := b.do("GET", "/dash/requests", nil); !strings.Contains(page.body, "No requests waiting") {
		t.Errorf("after deciding both:\n%s", page.body)
	}
	var entries struct {
		Entries []map[string]any `json:"entries"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+sb.bid+"/waitlist", sb.key, ""), 200, &entries)
	if len(entries.Entries) != 1 || entries.Entries[0]["name"] != "Ann" || entries.Entries[0]["service"] != "haircut" {
		t.Fatalf("waitlist after the requests: %v", entries.Entries)
	}
}
