package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestProposalsOverHTTP: proposed rows are listed in the API's shape,
// approved with corrections (201, the entry joined as of the request) or
// rejected; the owner's one-tap link opens a page that changes nothing
// until its Confirm button is pressed, once.
func TestProposalsOverHTTP(t *testing.T) {
	t.Parallel()
	var svc *waitlist.Service
	a := setup(t)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"owner_email":"owner@example.com"}`), 200, nil)
	svc = waitlist.New(a.store, a.clock, "https://nextup.test")
	received := a.clock.Now().Add(-3 * time.Hour)
	for i, f := range []nextup.ProposalFields{
		{Name: "Ann", Email: "ann@example.com", Service: "hiarcut", Earliest: a.clock.Now().Add(24 * time.Hour)},
		{Name: "Bo", Phone: "+447700900123", Service: "haircut"},
		{Name: "Cy", Phone: "+447700900124", Service: "haircut", Earliest: a.clock.Now().Add(48 * time.Hour)},
	} {
		conf := map[string]float64{"name": 0.9}
		if f.Name == "Cy" { // dates the parser was unsure of
			conf["earliest"], conf["latest"] = 0.3, 0.3
		}
		if _, _, err := svc.Propose(context.Background(), a.bid, waitlist.ProposeParams{Source: nextup.ProposalFromEmail,
			SourceRef: "<" + string(rune('a'+i)) + "@x>", ReceivedAt: received.Add(time.Duration(i) * time.Minute),
			Excerpt: "please", Fields: f, Confidence: conf, Problems: []string{"service spelled oddly"}}); err != nil {
			t.Fatal(err)
		}
	}
	var list struct {
		Proposals []map[string]any `json:"proposals"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/proposals?state=open", a.key, ""), 200, &list)
	if len(list.Proposals) != 3 {
		t.Fatalf("proposals %v", list.Proposals)
	}
	bo, ann := list.Proposals[1], list.Proposals[2] // newest first
	fields := ann["fields"].(map[string]any)
	if ann["source"] != "email" || fields["name"] != "Ann" || fields["phone"] != nil || fields["earliest"] == nil ||
		ann["confidence"].(map[string]any)["name"] != 0.9 || len(ann["problems"].([]any)) != 1 || ann["state"] != "open" {
		t.Fatalf("Ann's proposal %v", ann)
	}
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/proposals?state=maybe", a.key, ""), 400, "validation_failed")
	a.problem(a.do("POST", "/v1/proposals/"+ann["id"].(string)+":approve", a.key, `{"colour":"red"}`), 400, "validation_failed")

	var entry map[string]any
	a.must(a.do("POST", "/v1/proposals/"+ann["id"].(string)+":approve", a.key, `{"service":"haircut"}`), 201, &entry)
	if j, _ := time.Parse(time.RFC3339, entry["joined_at"].(string)); !j.Equal(received) || entry["state"] != "waiting" {
		t.Fatalf("approved entry %v", entry)
	}
	a.problem(a.do("POST", "/v1/proposals/"+ann["id"].(string)+":approve", a.key, ``), 409, nextup.CodeProposalDecided)
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	a.problem(a.do("POST", "/v1/proposals/"+bo["id"].(string)+":reject", other["api_key"].(string), ``), 404, "not_found")

	// Bo's request by the owner's link.
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/messages?to=owner@example.com", a.key, ""), 200, &msgs)
	var link, annLink, cyLink string
	for _, m := range msgs.Messages {
		body := m["body"].(string)
		i := strings.Index(body, "https://nextup.test/p/")
		switch {
		case strings.Contains(body, "Name: Bo"):
			link = strings.Fields(body[i:])[0]
		case strings.Contains(body, "Name: Cy"):
			cyLink = strings.Fields(body[i:])[0]
		case strings.Contains(body, "Name: Ann"):
			annLink = strings.Fields(body[i:])[0]
		}
	}
	// Dates read with doubt are flagged on the page that confirms them.
	if _, _, body := a.page("GET", strings.TrimPrefix(cyLink, "https://nextup.test")); !strings.Contains(body, "the dates were unclear") {
		t.Errorf("the approve page for unsure dates does not say so:\n%s", body)
	}
	if _, _, body := a.page("GET", strings.TrimPrefix(annLink, "https://nextup.test")); !strings.Contains(body, "Approved") || strings.Contains(body, "the dates were unclear") {
		t.Errorf("the approve page flags dates nobody doubted:\n%s", body)
	}
	path := strings.TrimPrefix(strings.Replace(link, "/approve", "/reject", 1), "https://nextup.test")
	status, _, body := a.page("GET", path)
	if status != 200 || !strings.Contains(body, "Reject this request?") || !strings.Contains(body, `action="`+path+`"`) {
		t.Fatalf("reject page %d:\n%s", status, body)
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/proposals?state=open", a.key, ""), 200, &list)
	if len(list.Proposals) != 2 {
		t.Fatalf("opening the page decided it: %v", list.Proposals)
	}
	for range 2 { // a second press says how it stands
		status, _, body = a.page("POST", path)
		if status != http.StatusOK || !strings.Contains(body, "Rejected") {
			t.Fatalf("confirm: %d\n%s", status, body)
		}
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/proposals?state=rejected", a.key, ""), 200, &list)
	if len(list.Proposals) != 1 || list.Proposals[0]["id"] != bo["id"] {
		t.Fatalf("rejected %v", list.Proposals)
	}
	if status, _, _ := a.page("GET", "/p/forged/approve"); status != http.StatusNotFound {
		t.Errorf("forged link: %d", status)
	}
}
