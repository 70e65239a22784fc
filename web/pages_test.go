package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
)

func (a *api) page(method, path string) (int, http.Header, string) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.srv.URL+path, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func (a *api) offerFor(sid string) (offerID, token string) {
	a.t.Helper()
	var rel struct {
		Moves []nextup.Move `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+sid+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	return rel.Moves[0].OfferID, a.token(rel.Moves[0].OfferID)
}

func TestClaimPage(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sid := a.slot(chair)["id"].(string) // Tue 1 Dec, 14:00 UTC = 2:00 pm London
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Bob","email":"bob@example.com","service":"haircut"}`), 201, nil)
	_, tok := a.offerFor(sid)

	status, h, body := a.page("GET", "/c/"+tok)
	if status != 200 || h.Get("Referrer-Policy") != "no-referrer" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("claim page: %d %v", status, h)
	}
	for _, want := range []string{"haircut with Ana", "Tue 1 Dec at 2:00 pm", "until 10:10 am", "10 min left",
		`<form method="post" action="/c/` + tok + `/claim">`, `action="/c/` + tok + `/decline"`, `name="viewport"`} {
		if !strings.Contains(body, want) {
			t.Errorf("claim page lacks %q", want)
		}
	}
	// No auto-submit: the only script is the countdown, and it submits nothing.
	if strings.Contains(body, ".submit(") || strings.Contains(body, "fetch(") || strings.Contains(body, "http-equiv=\"refresh\"") {
		t.Error("the claim page must not submit anything by itself")
	}
	if status, _, _ := a.page("HEAD", "/c/"+tok); status != 200 {
		t.Fatalf("HEAD claim page: %d", status)
	}

	status, _, body = a.page("POST", "/c/"+tok+"/claim")
	if status != 200 || !strings.Contains(body, "You&#39;re booked") || !strings.Contains(body, "calendar.ics?token=") {
		t.Fatalf("claim result: %d\n%s", status, body)
	}
	if status, _, body = a.page("GET", "/c/"+tok); status != 200 || !strings.Contains(body, "You&#39;re booked") {
		t.Fatalf("claim page after claiming: %d %s", status, body)
	}

	// Bob is offered the next chair, declines from the page.
	sid2 := a.slot(`{"service":"haircut","starts_at":"2026-12-01T16:00:00Z","ends_at":"2026-12-01T16:45:00Z"}`)["id"].(string)
	_, tok2 := a.offerFor(sid2)
	if status, _, body = a.page("POST", "/c/"+tok2+"/decline"); status != 200 || !strings.Contains(body, "Thanks for letting us know") {
		t.Fatalf("decline result: %d %s", status, body)
	}
	if status, _, body = a.page("POST", "/c/"+tok2+"/claim"); status != 409 || !strings.Contains(body, "You declined this slot") {
		t.Fatalf("claim after decline: %d %s", status, body)
	}
	if status, _, body = a.page("GET", "/c/not-a-token"); status != 404 || !strings.Contains(body, "doesn&#39;t work") {
		t.Fatalf("unknown link: %d %s", status, body)
	}
}

var linkRe = regexp.MustCompile(`https?://[^\s"<>]+`)

// Mail scanners open every link: GET and HEAD of every link in every
// message must change nothing but the seen stamp.
func TestScannerSafety(t *testing.T) {
	t.Parallel()
	a := setup(t)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Bob","phone":"+447700900123","service":"haircut"}`), 201, nil)
	_, tok := a.offerFor(a.slot(chair)["id"].(string))
	a.must(a.do("POST", "/v1/claims/"+tok+":accept", "", ""), 200, nil) // a confirmation with a calendar link
	a.offerFor(a.slot(`{"service":"haircut","starts_at":"2026-12-01T16:00:00Z","ends_at":"2026-12-01T16:45:00Z"}`)["id"].(string))

	snapshot := func() string {
		var b strings.Builder
		err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
			slots, err := tx.SlotList(context.Background(), nextup.SlotFilter{BusinessID: a.bid})
			for _, sl := range slots {
				fmt.Fprintf(&b, "%s:%d/%d;", sl.ID, sl.BookedSeats, sl.HeldSeats)
				offers, _ := tx.OfferListBySlot(context.Background(), sl.ID)
				for _, o := range offers {
					b.WriteString(o.ID + "=" + string(o.State) + ";")
				}
			}
			entries, _ := tx.EntryList(context.Background(), nextup.EntryFilter{BusinessID: a.bid, State: nextup.EntryWaiting})
			fmt.Fprintf(&b, "waiting=%d", len(entries))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	before := snapshot()
	var links []string
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/messages", a.key, ""), 200, &msgs)
	for _, m := range msgs.Messages {
		links = append(links, linkRe.FindAllString(m["body"].(string), -1)...)
	}
	if len(links) < 3 {
		t.Fatalf("only %d links in %d messages", len(links), len(msgs.Messages))
	}
	for _, l := range links {
		u, err := url.Parse(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"GET", "HEAD"} {
			if status, _, _ := a.page(m, u.RequestURI()); status >= 500 {
				t.Errorf("%s %s: %d", m, u.RequestURI(), status)
			}
		}
	}
	if after := snapshot(); after != before {
		t.Fatalf("opening links changed state:\n%s\n%s", before, after)
	}
}

// TestStatusPage: a person's status page shows where they stand as the
// rules allow and how the order works; leaving from it while holding an
// offer rolls the offer on to the next person.
func TestStatusPage(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sid := a.slot(chair)["id"].(string)
	var ann, bob map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &ann)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Bob","email":"bob@example.com","service":"haircut"}`), 201, &bob)
	path := func(e map[string]any) string {
		u := e["status_url"].(string)
		return u[strings.Index(u, "/s/"):]
	}
	status, h, body := a.page("GET", path(bob))
	if status != 200 || h.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("status page: %d %v", status, h)
	}
	for _, want := range []string{"You&#39;re on the waitlist", "number 2 in line for haircut", "How the order works",
		"offered to the first person in line who fits", "yours for 10 minutes", "No offers are sent between 21:00 and 08:00",
		"rules, version 1", `action="` + path(bob) + `/leave"`} {
		if !strings.Contains(body, want) {
			t.Errorf("Bob's status page lacks %q", want)
		}
	}
	// Bands instead of numbers when the rules say so.
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, `{"position_visibility":"band"}`), 200, nil)
	if _, _, body := a.page("GET", path(bob)); !strings.Contains(body, "in the next few in line") || strings.Contains(body, "number 2") {
		t.Errorf("band visibility: %s", body)
	}

	offerID, _ := a.offerFor(sid) // Ann, first in line
	if _, _, body := a.page("GET", path(ann)); !strings.Contains(body, "You have an offer") || !strings.Contains(body, "held for you until 10:10 am") {
		t.Errorf("Ann's page with an offer: %s", body)
	}
	status, h, _ = a.page("POST", path(ann)+"/leave")
	if status != http.StatusOK { // the client follows the 303 to the page
		t.Fatalf("leave: %d %v", status, h)
	}
	if _, _, body := a.page("GET", path(ann)); !strings.Contains(body, "You left the waitlist") || strings.Contains(body, "Leave the waitlist</button>") {
		t.Errorf("Ann's page after leaving: %s", body)
	}
	var o map[string]any
	a.must(a.do("GET", "/v1/offers/"+offerID, a.key, ""), 200, &o)
	var sl map[string]any
	a.must(a.do("GET", "/v1/slots/"+sid, a.key, ""), 200, &sl)
	offers := sl["offers"].([]any)
	if o["state"] != "cancelled" || len(offers) != 2 || offers[1].(map[string]any)["entry_id"] != bob["id"] {
		t.Fatalf("after Ann left: her offer %v, the slot's offers %v", o["state"], offers)
	}
	// Leaving twice is harmless; an unknown link is the 404 page.
	if status, _, _ := a.page("POST", path(ann)+"/leave"); status != http.StatusOK {
		t.Fatalf("second leave: %d", status)
	}
	if status, _, _ := a.page("GET", "/s/not-a-token"); status != http.StatusNotFound {
		t.Fatalf("unknown status link: %d", status)
	}
}

// TestUnsubscribeOneClick: an offer email's List-Unsubscribe link shows a
// page that changes nothing, and a one-click POST (RFC 8058, as a mail
// client sends it) stops the business's email to that address at once;
// the business's own templates are patched and validated over HTTP.
func TestUnsubscribeOneClick(t *testing.T) {
	t.Parallel()
	a := setup(t)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"templates":{"offer":{"subject":"Yours: {{.Service}} until {{.Until}}"}}}`), 200, nil)
	a.problem(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"templates":{"offer":{"subject":"{{.Nope}}"}}}`), 400, "validation_failed")
	sid := a.slot(chair)["id"].(string)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	offerID, _ := a.offerFor(sid)
	var list struct {
		Messages []map[string]any `json:"messages"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/messages?offer_id="+offerID, a.key, ""), 200, &list)
	if len(list.Messages) != 1 || list.Messages[0]["subject"] != "Yours: haircut until 10:10 am" {
		t.Fatalf("messages %v", list.Messages)
	}
	var unsub string
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		m, err := tx.MessageGet(context.Background(), list.Messages[0]["id"].(string))
		unsub = m.UnsubscribeURL
		return err
	})
	if err != nil || !strings.HasPrefix(unsub, "https://nextup.test/u/") {
		t.Fatalf("unsubscribe link %q, %v", unsub, err)
	}
	path := strings.TrimPrefix(unsub, "https://nextup.test")
	suppressed := func() bool {
		var n int
		_ = a.store.Read(context.Background(), func(tx nextup.Tx) error {
			sups, err := tx.SuppressionList(context.Background(), a.bid, []string{"ann@example.com"})
			n = len(sups)
			return err
		})
		return n > 0
	}
	status, _, body := a.page("GET", path)
	if status != 200 || !strings.Contains(body, "a***@example.com") || !strings.Contains(body, `action="`+path+`"`) || suppressed() {
		t.Fatalf("unsubscribe page %d, suppressed %v:\n%s", status, suppressed(), body)
	}
	res, err := http.Post(a.srv.URL+path, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "You&#39;re unsubscribed") || !suppressed() {
		t.Fatalf("one-click: %d, suppressed %v:\n%s", res.StatusCode, suppressed(), b)
	}
	if status, _, _ := a.page("POST", "/u/"+a.bid+"/forged"); status != http.StatusNotFound {
		t.Errorf("forged link: %d", status)
	}
}
