package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

var rsvpLink = regexp.MustCompile(`https://nextup\.test(/e/corner-cuts/wine/confirm\?t=\S+)`)

// rsvpEvent is an event of two seats at corner-cuts, its public page at
// /e/corner-cuts/wine; it returns its id.
func rsvpEvent(t *testing.T, a *api, extra string) string {
	t.Helper()
	var ev map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/events", a.key,
		`{"title":"Wine tasting","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T22:00:00Z","capacity":2,"max_guests_per_rsvp":2`+extra+`}`), 201, &ev)
	id := ev["id"].(string)
	var patched map[string]any
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"slug":"wine","public":{"place":"The back room","show_seats":"exact"}}`), 200, &patched)
	if patched["slug"] != "wine" || patched["public_url"] != "https://nextup.test/e/corner-cuts/wine" {
		t.Fatalf("the patched event: %v", patched)
	}
	return id
}

func (a *api) registrations(eventID string) []nextup.Entry {
	a.t.Helper()
	var es []nextup.Entry
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		for _, st := range []nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired} {
			some, err := tx.EntryList(context.Background(), nextup.EntryFilter{BusinessID: a.bid, EventID: eventID, State: st})
			if err != nil {
				return err
			}
			es = append(es, some...)
		}
		return nil
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return es
}

// rsvp fills the public page's form and confirms by the emailed link; it
// returns the status page's path.
func rsvp(t *testing.T, a *api, b *formClient, name, email string, form url.Values) string {
	t.Helper()
	p := b.do("GET", "/e/corner-cuts/wine", nil)
	if p.status != 200 {
		t.Fatalf("event page: %d\n%s", p.status, p.body)
	}
	v := url.Values{"csrf": {p.csrf(t)}, "name": {name}, "email": {email}}
	for k, vs := range form {
		v[k] = vs
	}
	before := len(a.outbox(waitlist.MessageJoinConfirm))
	if p = b.do("POST", "/e/corner-cuts/wine", v); p.status != 200 || !strings.Contains(p.body, "We sent a link to "+email) {
		t.Fatalf("rsvp: %d\n%s", p.status, p.body)
	}
	msgs := a.outbox(waitlist.MessageJoinConfirm)
	if len(msgs) != before+1 || msgs[0].To != email {
		t.Fatalf("confirmations: %d, the newest to %s", len(msgs), msgs[0].To)
	}
	link := rsvpLink.FindStringSubmatch(msgs[0].Body)
	if link == nil {
		t.Fatalf("no confirmation link in:\n%s", msgs[0].Body)
	}
	c := b.do("GET", link[1], nil)
	if c.status != 200 || !strings.Contains(c.body, "Confirm my place") {
		t.Fatalf("confirm page: %d\n%s", c.status, c.body)
	}
	token := regexp.MustCompile(`name="t" value="([^"]+)"`).FindStringSubmatch(c.body)[1]
	p = b.do("POST", "/e/corner-cuts/wine/confirm", url.Values{"csrf": {c.csrf(t)}, "t": {token}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/s/") {
		t.Fatalf("confirm: %d %q\n%s", p.status, p.location, p.body)
	}
	return p.location
}

// TestPublicEventRSVP: a guest RSVPs on the public page and confirms by
// the emailed link: nothing is stored before, the registration is made
// at the confirmation and the guest lands on their status page. Once the
// event is full a guest is waitlisted, told their place by message; when
// a confirmed guest cancels, the waitlisted guest's status page shows the
// offer, and they claim it there.
func TestPublicEventRSVP(t *testing.T) {
	t.Parallel()
	a := setupJoin(t)
	id := rsvpEvent(t, a, "")
	b := a.client()

	page := b.do("GET", "/e/corner-cuts/wine", nil)
	for _, want := range []string{"Wine tasting", "The back room", "2 seats left", "Save my place", `name="guest_name"`, "Guests you bring"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the event page lacks %q", want)
		}
	}
	if by := b.do("GET", "/e/corner-cuts/"+id, nil); by.status != 200 || !strings.Contains(by.body, "Wine tasting") {
		t.Errorf("the event page by id: %d", by.status)
	}
	if none := b.do("GET", "/e/corner-cuts/nope", nil); none.status != http.StatusNotFound {
		t.Errorf("an unknown event: %d", none.status)
	}

	// Refusals: explained, nothing sent, nothing stored.
	csrf := page.csrf(t)
	for _, c := range []struct {
		name string
		form url.Values
		want string
	}{
		{"no contact", url.Values{"name": {"Ana"}}, "or a mobile number is needed"},
		{"a bad email", url.Values{"name": {"Ana"}, "email": {"ana@"}}, "not an email address"},
		{"too many guests", url.Values{"name": {"Ana"}, "email": {"ana@example.com"}, "guests": {"3"}}, "must be a number from 0 to 2"},
		{"a control character in a guest's name", url.Values{"name": {"Ana"}, "email": {"ana@example.com"}, "guests": {"1"}, "guest_name": {"Bo\x07b"}}, "Guest names each at most"},
	} {
		c.form.Set("csrf", csrf)
		p := b.do("POST", "/e/corner-cuts/wine", c.form)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, c.want) {
			t.Errorf("%s: %d, want 400 saying %q\n%s", c.name, p.status, c.want, p.body)
		}
	}
	if p := b.do("POST", "/e/corner-cuts/wine", url.Values{"name": {"Ana"}, "email": {"ana@example.com"}}); p.status != http.StatusForbidden {
		t.Errorf("without the form's token: %d", p.status)
	}
	if p := b.do("POST", "/e/corner-cuts/wine", url.Values{"csrf": {csrf}, "name": {"Bot"}, "email": {"bot@example.com"}, "website": {"x"}}); p.status != 200 {
		t.Errorf("the honeypot: %d", p.status)
	}
	if n, m := len(a.registrations(id)), len(a.outbox(waitlist.MessageJoinConfirm)); n != 0 || m != 0 {
		t.Fatalf("after the refusals: %d registrations, %d confirmations sent", n, m)
	}

	// A tampered confirmation changes nothing.
	if p := b.do("POST", "/e/corner-cuts/wine/confirm", url.Values{"csrf": {csrf}, "t": {"AAAAtampered"}}); p.status != http.StatusNotFound || len(a.registrations(id)) != 0 {
		t.Fatalf("a tampered confirmation: %d, %d registrations", p.status, len(a.registrations(id)))
	}

	// Ana and her guest fill the two seats.
	ana := rsvp(t, a, b, "Ana Lima", "ana@example.com", url.Values{"guests": {"1"}, "guest_name": {"Rui Lima", ""}})
	if s := b.do("GET", ana, nil); !strings.Contains(s.body, "booked") && !strings.Contains(s.body, "You&#39;re booked") {
		t.Fatalf("Ana's status page:\n%s", s.body)
	}
	regs := a.registrations(id)
	if len(regs) != 1 || regs[0].PartySize != 2 || regs[0].Source != "form" {
		t.Fatalf("registrations: %+v", regs)
	}
	var names []string
	if err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		gs, err := tx.GuestListByEntry(context.Background(), regs[0].ID)
		for _, g := range gs {
			names = append(names, g.Name)
		}
		return err
	}); err != nil || len(names) != 1 || names[0] != "Rui Lima" {
		t.Fatalf("Ana's guests: %q (%v), want Rui Lima", names, err)
	}
	if p := b.do("GET", "/e/corner-cuts/wine", nil); !strings.Contains(p.body, "Full — join the waitlist") {
		t.Fatalf("the full event's page:\n%s", p.body)
	}

	// Cleo is waitlisted, and told her place.
	cleo := rsvp(t, a, b, "Cleo Park", "cleo@example.com", nil)
	if s := b.do("GET", cleo, nil); !strings.Contains(s.body, "number 1 in line for Wine tasting") {
		t.Fatalf("Cleo's status page:\n%s", s.body)
	}
	told := a.outbox(waitlist.MessageWaitlisted)
	if len(told) != 1 || told[0].To != "cleo@example.com" || !strings.Contains(told[0].Body, "1st in line") ||
		!strings.Contains(told[0].Body, "https://nextup.test"+cleo) {
		t.Fatalf("the waitlist confirmation: %+v", told)
	}

	// Confirming again is already_registered: Cleo, who has just proved
	// her address again, lands on her registration's status page under a
	// new link (sent to her too); the old link stops working, and no
	// second registration is made.
	again := b.do("GET", "/e/corner-cuts/wine", nil)
	p := b.do("POST", "/e/corner-cuts/wine", url.Values{"csrf": {again.csrf(t)}, "name": {"Cleo Park"}, "email": {"cleo@example.com"}})
	link := rsvpLink.FindStringSubmatch(a.outbox(waitlist.MessageJoinConfirm)[0].Body)[1]
	c := b.do("GET", link, nil)
	token := regexp.MustCompile(`name="t" value="([^"]+)"`).FindStringSubmatch(c.body)[1]
	if p = b.do("POST", "/e/corner-cuts/wine/confirm", url.Values{"csrf": {c.csrf(t)}, "t": {token}}); p.status != http.StatusSeeOther ||
		!strings.HasPrefix(p.location, "/s/") || strings.HasPrefix(p.location, cleo) || len(a.registrations(id)) != 2 {
		t.Fatalf("registering twice: %d %q, %d registrations\n%s", p.status, p.location, len(a.registrations(id)), p.body)
	}
	if s := b.do("GET", p.location, nil); s.status != 200 || !strings.Contains(s.body, "already registered: this is your place") ||
		!strings.Contains(s.body, "number 1 in line for Wine tasting") {
		t.Fatalf("the status page after registering twice: %d\n%s", s.status, s.body)
	}
	if old := b.do("GET", cleo, nil); old.status != http.StatusNotFound {
		t.Fatalf("the old status link after a new one: %d, want 404", old.status)
	}
	cleo = strings.TrimSuffix(p.location, "?again=1")
	if sent := a.outbox(waitlist.MessageStatusLink); len(sent) != 1 || sent[0].To != "cleo@example.com" || !strings.Contains(sent[0].Body, "https://nextup.test"+cleo) {
		t.Fatalf("the new status link's message: %+v", sent)
	}

	// Ana cancels: Cleo's status page shows the offer; she claims it there.
	var anaReg map[string]any
	for _, e := range a.registrations(id) {
		if e.Email == "ana@example.com" {
			a.must(a.do("DELETE", "/v1/events/"+id+"/registrations/"+e.ID, a.key, ""), 200, &anaReg)
		}
	}
	s := b.do("GET", cleo, nil)
	for _, want := range []string{"You have an offer", "Claim this place", "Decline", `id="countdown"`} {
		if !strings.Contains(s.body, want) {
			t.Fatalf("Cleo's status page with the offer lacks %q:\n%s", want, s.body)
		}
	}
	claimed := b.do("POST", cleo+"/claim", nil)
	if claimed.status != 200 || !strings.Contains(claimed.body, "It&#39;s yours") {
		t.Fatalf("claim from the status page: %d\n%s", claimed.status, claimed.body)
	}
	for _, e := range a.registrations(id) {
		if e.Email == "cleo@example.com" && e.State != nextup.EntryBooked {
			t.Fatalf("Cleo after claiming: %s", e.State)
		}
	}
	// Again: the offer has ended; nothing changes.
	if again := b.do("POST", cleo+"/claim", nil); again.status != 200 || !strings.Contains(again.body, "You keep your place") {
		t.Errorf("claiming twice: %d\n%s", again.status, again.body)
	}

	// Registration closes at the start: the page says so, the form is refused.
	a.clock.Set(time.Date(2026, 12, 31, 19, 0, 0, 0, time.UTC))
	closed := b.do("GET", "/e/corner-cuts/wine", nil)
	if !strings.Contains(closed.body, "Registration for this event has closed") || strings.Contains(closed.body, "<form method=\"post\" action=\"/e/") {
		t.Fatalf("the closed event's page:\n%s", closed.body)
	}
	if p := b.do("POST", "/e/corner-cuts/wine", url.Values{"csrf": {csrf}, "name": {"Dan"}, "email": {"dan@example.com"}}); p.status != http.StatusConflict {
		t.Fatalf("an RSVP after the close: %d", p.status)
	}
}

// TestEventSlugIsUniqueWithinTheBusiness: a second event cannot take a
// slug an upcoming event has; bad slugs and public settings are refused
// and change nothing.
func TestEventSlugIsUniqueWithinTheBusiness(t *testing.T) {
	t.Parallel()
	a := setupJoin(t)
	rsvpEvent(t, a, "")
	var ev map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/events", a.key,
		`{"title":"Cheese","starts_at":"2026-12-30T19:00:00Z","ends_at":"2026-12-30T22:00:00Z","capacity":5}`), 201, &ev)
	id := ev["id"].(string)
	if r := a.do("PATCH", "/v1/events/"+id, a.key, `{"slug":"wine"}`); r.status != http.StatusConflict || !strings.Contains(string(r.body), "slug_taken") {
		t.Fatalf("a taken slug: %d %s", r.status, r.body)
	}
	for _, body := range []string{`{"slug":"Not A Slug!"}`, `{"public":{"show_seats":"lots"}}`, `{"public":{"colour":"red"}}`} {
		if r := a.do("PATCH", "/v1/events/"+id, a.key, body); r.status != http.StatusBadRequest {
			t.Errorf("PATCH %s: %d, want 400", body, r.status)
		}
	}
	var got map[string]any
	a.must(a.do("GET", "/v1/events/"+id, a.key, ""), 200, &got)
	if got["slug"] != "" || got["public"].(map[string]any)["show_seats"] != "exact" || got["time_critical_through_quiet"] != nil {
		t.Fatalf("after the refused changes: %v %v %v", got["slug"], got["public"], got["time_critical_through_quiet"])
	}
	// The event's own time-critical choice, and back to the business's.
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"time_critical_through_quiet":true}`), 200, &got)
	if got["time_critical_through_quiet"] != true {
		t.Fatalf("time_critical_through_quiet after setting it: %v", got["time_critical_through_quiet"])
	}
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"time_critical_through_quiet":null}`), 200, &got)
	if got["time_critical_through_quiet"] != nil {
		t.Fatalf("time_critical_through_quiet after clearing it: %v", got["time_critical_through_quiet"])
	}
}

// TestStatusPageCancel: a confirmed registrant's status page says their
// place is confirmed and has Cancel until the cancellation cutoff; the
// cancel frees the seats to the next person, as the cancel link does.
// After the cutoff the page says cancellations closed, has no button, and
// a cancel posted anyway changes nothing.
func TestStatusPageCancel(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":2,"max_guests_per_rsvp":1,"cancellation_cutoff":"2026-12-20T12:00:00Z"`)["id"].(string)
	ann, bea, cy := a.register(id, "Ann", 1), a.register(id, "Bea", 0), a.register(id, "Cy", 1)
	wantState(t, ann, "confirmed", 0)
	wantState(t, bea, "waitlisted", 1)
	path := func(r map[string]any) string {
		return strings.TrimPrefix(r["status_url"].(string), "https://nextup.test")
	}

	status, _, page := a.page("GET", path(ann))
	for _, want := range []string{"You&#39;re registered", "Your place at Supper club on Thu 31 Dec at 7:00 pm is confirmed (2 seats).",
		"Cancel here until Sun 20 Dec at 12:00 pm", `action="` + path(ann) + `/cancel"`, "Cancel my place"} {
		if status != 200 || !strings.Contains(page, want) {
			t.Errorf("Ann's status page lacks %q: %d\n%s", want, status, page)
		}
	}
	// A waitlisted guest leaves; they have no Cancel button.
	if _, _, page := a.page("GET", path(bea)); strings.Contains(page, "Cancel my place") || !strings.Contains(page, "Leave the waitlist") {
		t.Errorf("Bea's status page:\n%s", page)
	}
	// Ann cancels from her page: one of her two seats is offered to Bea.
	status, _, page = a.page("POST", path(ann)+"/cancel")
	if status != 200 || !strings.Contains(page, "Your place is cancelled.") || !strings.Contains(page, "You&#39;re not registered") {
		t.Fatalf("Ann cancels from her status page: %d\n%s", status, page)
	}
	wantState(t, a.registration(id, ann["id"].(string)), "cancelled", 0)
	wantState(t, a.registration(id, bea["id"].(string)), "offered", 0)
	wantState(t, a.registration(id, cy["id"].(string)), "waitlisted", 1) // two seats do not fit the one left
	// Again: nothing more happens.
	if status, _, page = a.page("POST", path(ann)+"/cancel"); status != 200 || !strings.Contains(page, "You&#39;re not registered") {
		t.Fatalf("Ann cancels twice: %d\n%s", status, page)
	}

	// Bea takes the seat; after the cutoff she cannot cancel from her page.
	a.must(a.do("POST", "/s/"+strings.TrimPrefix(path(bea), "/s/")+"/claim", "", ""), 200, nil)
	wantState(t, a.registration(id, bea["id"].(string)), "confirmed", 0)
	a.clock.Set(time.Date(2026, 12, 20, 12, 0, 0, 0, time.UTC))
	status, _, page = a.page("GET", path(bea))
	if status != 200 || strings.Contains(page, "Cancel my place") || !strings.Contains(page, "Cancellations closed on Sun 20 Dec at 12:00 pm. If you can&#39;t come, please tell Salon.") {
		t.Fatalf("Bea's status page after the cutoff: %d\n%s", status, page)
	}
	status, _, page = a.page("POST", path(bea)+"/cancel")
	if status != 200 || !strings.Contains(page, "Cancellations for this event have closed, so your place stays booked.") {
		t.Fatalf("Bea cancels after the cutoff: %d\n%s", status, page)
	}
	wantState(t, a.registration(id, bea["id"].(string)), "confirmed", 0)
}
