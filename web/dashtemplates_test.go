package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestDashboardTemplates: the owner rewords the offer on the dashboard —
// a preview on sample details that saves nothing, a save that is version
// 1 and words the next offer (whose message says so), a wording that
// drops the claim link refused in plain words, and version 0 restored as
// version 2.
func TestDashboardTemplates(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)

	list := b.do("GET", "/dash/templates", nil)
	if list.status != 200 || !strings.Contains(list.body, `href="/dash/templates/offer"`) || !strings.Contains(list.body, "nextup&#39;s own wording") {
		t.Fatalf("templates page: %d\n%s", list.status, list.body)
	}
	ed := b.do("GET", "/dash/templates/offer", nil)
	if ed.status != 200 || !strings.Contains(ed.body, "It is held for you for {{.Countdown}}") || !strings.Contains(ed.body, `id="preview-subject"`) {
		t.Fatalf("editor: %d\n%s", ed.status, ed.body)
	}
	if nf := b.do("GET", "/dash/templates/nonsense", nil); nf.status != http.StatusNotFound {
		t.Fatalf("an unknown kind is %d", nf.status)
	}
	form := url.Values{"csrf": {ed.csrf(t)}, "subject": {"{{.Name}}, a {{.Service}} is yours"},
		"text": {"Hi {{.Name}}, take it here: {{.Link}} (until {{.Until}})"}, "html": {`<p><a href="{{.Link}}">Take it</a></p>`},
		"sms": {"{{.Business}}: {{.Link}}"}}
	form.Set("do", "preview")
	pv := b.do("POST", "/dash/templates/offer", form)
	if pv.status != 200 || !strings.Contains(pv.body, "Ada, a Cut is yours") || !strings.Contains(pv.body, "Preview only") {
		t.Fatalf("preview: %d\n%s", pv.status, pv.body)
	}
	biz, _ := sb.svc.GetBusiness(context.Background(), sb.bid)
	if biz.Profile.TemplatesVersion != 0 || len(biz.Profile.Templates) != 0 {
		t.Fatalf("a preview saved: %+v", biz.Profile)
	}
	// Without the claim link: refused, nothing saved.
	bad := url.Values{"csrf": form["csrf"], "do": {"save"}, "subject": form["subject"], "text": {"Hi {{.Name}}"}, "html": form["html"], "sms": form["sms"]}
	if r := b.do("POST", "/dash/templates/offer", bad); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "must contain the claim link") {
		t.Fatalf("a wording without the link: %d\n%s", r.status, r.body)
	}
	form.Set("do", "save")
	if r := b.do("POST", "/dash/templates/offer", form); r.status != http.StatusSeeOther || !strings.Contains(r.location, "version+1") {
		t.Fatalf("save: %d %q", r.status, r.location)
	}
	// The next offer is in the new words, and says which version wrote it.
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	sl, _, err := sb.svc.CreateSlot(context.Background(), sb.bid, waitlist.SlotParams{Service: "haircut",
		StartsAt: sb.clock.Now().Add(26 * time.Hour), EndsAt: sb.clock.Now().Add(27 * time.Hour), BookedSeats: new(int)})
	if err != nil {
		t.Fatal(err)
	}
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+sb.bid+"/messages", sb.key, ""), 200, &msgs)
	var offer map[string]any
	for _, m := range msgs.Messages {
		if m["kind"] == nextup.MessageOffer {
			offer = m
		}
	}
	if offer == nil || offer["subject"] != "Ann, a haircut is yours" || offer["template_version"] != float64(1) {
		t.Fatalf("the offer for %s: %v", sl.ID, offer)
	}
	if ms := b.do("GET", "/dash/messages", nil); !strings.Contains(ms.body, "your wording, version 1") {
		t.Errorf("the messages page does not say which wording:\n%s", ms.body)
	}
	// Back to version 0: a new version, nextup's words again.
	list = b.do("GET", "/dash/templates", nil)
	if !strings.Contains(list.body, "offer reworded") || !strings.Contains(list.body, `id="version-1"`) {
		t.Fatalf("history:\n%s", list.body)
	}
	if r := b.do("POST", "/dash/templates/revert", url.Values{"csrf": {list.csrf(t)}, "version": {"0"}}); r.status != http.StatusSeeOther || !strings.Contains(r.location, "as+version+2") {
		t.Fatalf("revert: %d %q", r.status, r.location)
	}
	biz, _ = sb.svc.GetBusiness(context.Background(), sb.bid)
	if biz.Profile.TemplatesVersion != 2 || len(biz.Profile.Templates) != 0 {
		t.Fatalf("after the revert: %+v", biz.Profile)
	}
	if list = b.do("GET", "/dash/templates", nil); !strings.Contains(list.body, "back to version 0") {
		t.Errorf("the revert is not in the history:\n%s", list.body)
	}
}
