package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/smtp"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
)

// TestServeInboxLane: a booking request forwarded by the business's desk
// to studio-nine@in.nextup.test, delivered by a real SMTP client to the
// listener of a running `nextup serve`, becomes a proposed row; the owner
// is mailed one-tap links; the Approve link's page changes nothing until
// its button is pressed, and then the requester is on the waitlist as of
// when she wrote, before the forward. The same mail posted to the inbox
// webhook proposes nothing new.
func TestServeInboxLane(t *testing.T) {
	t.Parallel()
	out := smtptest.Start(t)
	inbound := freeAddr(t)
	in := startInstance(t, "inbox", filepath.Join(t.TempDir(), "n.db"), out.Addr, "--notify", "capture,smtp",
		"--smtp-addr", inbound, "--inbound-domain", "in.nextup.test")
	c := &cluster{t: t, all: []*instance{in}, client: apiClient(t)}
	// The corpus mail was written in March 2026; the fake clock only moves
	// forward from today, so the mail is moved five years on.
	now := time.Date(2031, 3, 6, 10, 5, 0, 0, time.UTC)
	c.setClock(now)

	var corpus map[string]struct {
		Services json.RawMessage `json:"services"`
	}
	raw, err := os.ReadFile("../../../intake/testdata/inbox/businesses.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Studio Nine Hair","timezone":"Europe/London"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	c.must(0, "PATCH", "/v1/businesses/"+bid, key, fmt.Sprintf(`{"slug":"studio-nine","country":"GB","owner_email":"owner@studioninehair.co.uk",
		"inbound_senders":["hello@studioninehair.co.uk"],"services":%s}`, corpus["salon"].Services), 200)

	orig, err := os.ReadFile("../../../intake/testdata/inbox/002.eml")
	if err != nil {
		t.Fatal(err)
	}
	mail := []byte(strings.ReplaceAll(string(orig), "2026", "2031"))
	if err := smtp.SendMail(inbound, nil, "hello@studioninehair.co.uk", []string{"studio-nine@in.nextup.test"}, mail); err != nil {
		t.Fatalf("delivering the forwarded request: %v", err)
	}
	// A stranger may not forward to the address.
	if err := smtp.SendMail(inbound, nil, "someone@else.example", []string{"studio-nine@in.nextup.test"}, mail); err == nil ||
		!strings.Contains(err.Error(), "550") {
		t.Errorf("a stranger's mail: %v, want 550", err)
	}
	props := c.must(0, "GET", "/v1/businesses/"+bid+"/proposals?state=open", key, "", 200)["proposals"].([]any)
	if len(props) != 1 {
		t.Fatalf("proposals %v", props)
	}
	p := props[0].(map[string]any)
	f := p["fields"].(map[string]any)
	if f["name"] != "Priya Shah" || f["service"] != "Colour" || f["phone"] != "+447400123456" || p["source"] != "email" {
		t.Fatalf("proposal %v", p)
	}
	received, _ := time.Parse(time.RFC3339, p["received_at"].(string))
	if !received.Before(time.Date(2031, 3, 6, 10, 2, 40, 0, time.UTC)) {
		t.Errorf("received at %v: want when Priya wrote, before the forward", received)
	}

	// The webhook lane is the same lane: the same mail proposes nothing new.
	req, _ := http.NewRequest("POST", in.base+"/v1/businesses/"+bid+"/inbox", strings.NewReader(string(mail)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "message/rfc822")
	res, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var again map[string]any
	_ = json.Unmarshal(body, &again)
	if res.StatusCode != http.StatusAccepted || again["proposal_id"] != p["id"] || again["repeat"] != true {
		t.Fatalf("the same mail by webhook: %d %s", res.StatusCode, body)
	}

	c.setClock(now.Add(time.Second)) // the fake clock's relay sends the owner's mail
	owner := out.Wait(t, 1, 20*time.Second)[0]
	i := strings.Index(owner.Text, in.base+"/p/")
	if owner.To[0] != "owner@studioninehair.co.uk" || i < 0 || !strings.Contains(owner.Text, "Priya Shah") {
		t.Fatalf("owner mail to %v:\n%s", owner.To, owner.Text)
	}
	approve := strings.Fields(owner.Text[i:])[0]
	page := func(method string) string {
		t.Helper()
		req, _ := http.NewRequest(method, approve, nil)
		res, err := c.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("%s %s: %d\n%s", method, approve, res.StatusCode, b)
		}
		return string(b)
	}
	if b := page("GET"); !strings.Contains(b, "Approve this request?") {
		t.Fatalf("approve page:\n%s", b)
	}
	if n := len(c.must(0, "GET", "/v1/businesses/"+bid+"/proposals?state=open", key, "", 200)["proposals"].([]any)); n != 1 {
		t.Fatalf("opening the link decided it")
	}
	if b := page("POST"); !strings.Contains(b, "Approved") {
		t.Fatalf("after confirming:\n%s", b)
	}
	entries := c.must(0, "GET", "/v1/businesses/"+bid+"/waitlist", key, "", 200)["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("waitlist %v", entries)
	}
	e := entries[0].(map[string]any)
	joined, _ := time.Parse(time.RFC3339, e["joined_at"].(string))
	if e["name"] != "Priya Shah" || e["service"] != "Colour" || !joined.Equal(received) {
		t.Fatalf("entry %v, want Priya joined at %v", e, received)
	}
}
