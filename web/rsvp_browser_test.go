package web_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/internal/missing"
	"github.com/nextup-dev/nextup/notify/smtp"
	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// mailer sends the test business's outbox through a real SMTP server (an
// in-process go-smtp server) by the outbox relay, as nextup serve does.
type mailer struct {
	t     *testing.T
	smtp  *smtptest.Server
	relay *outbox.Relay
}

func newMailer(t *testing.T, a *api) *mailer {
	t.Helper()
	srv := smtptest.Start(t)
	host, port, _ := net.SplitHostPort(srv.Addr)
	p, _ := strconv.Atoi(port)
	sender, err := smtp.New(smtp.Config{Host: host, Port: p, TLS: "none", From: "Corner Cuts <events@nextup.test>"})
	if err != nil {
		t.Fatal(err)
	}
	return &mailer{t: t, smtp: srv, relay: &outbox.Relay{Store: a.store, Clock: a.clock,
		Senders: map[nextup.Channel]nextup.Sender{nextup.ChannelEmail: sender}}}
}

// deliver sends what is due and returns the mails to an address, oldest
// first.
func (m *mailer) deliver(to string) []smtptest.Mail {
	m.t.Helper()
	for {
		sent, failed, err := m.relay.RunOnce(context.Background())
		if err != nil {
			m.t.Fatal(err)
		}
		if sent+failed == 0 {
			break
		}
	}
	var out []smtptest.Mail
	for _, ml := range m.smtp.Mails() {
		for _, rcpt := range ml.To {
			if rcpt == to {
				out = append(out, ml)
			}
		}
	}
	return out
}

// axeSource is axe-core (npm, pinned in web/testdata/axe/package.json).
const axeSource = "testdata/axe/node_modules/axe-core/axe.min.js"

// axeClean runs axe-core on the page open in ctx and fails the test on any
// violation (WCAG 2 A and AA rules).
func axeClean(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	src, err := os.ReadFile(axeSource)
	if err != nil {
		missing.Skip(t, "axe-core", axeSource+" is not installed", "cd web/testdata/axe && npm ci")
	}
	run(t, ctx, chromedp.Evaluate[bool](string(src)+";true"))
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa"]}}).then(r => JSON.stringify(r.violations.map(v => v.id + ": " + v.help + " (" + v.nodes.map(n => n.target.join(" ")).join(", ") + ")")))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe on %s: %v", what, err)
	}
	if out != "[]" {
		t.Errorf("axe-core finds violations on %s: %s", what, out)
	}
}

// TestEventGuestInBrowser is an event run to the door with no code, on a
// phone, in real Chromium with mail through a real SMTP server. The
// organiser signs in, creates the event on the dashboard and gets its
// public link from the Public page form. A guest opens that link once the
// event is full, RSVPs with a named guest, confirms by the emailed link
// and sees they are 3rd on the waitlist; two confirmed guests cancel from
// their own links, and the guest's open status page shows 1st without a
// reload; when the person ahead declines, the same page shows the offer
// with its countdown, and the guest claims it there. The organiser's
// guest list then shows the guest with their named guest, and the
// organiser checks that guest in.
func TestEventGuestInBrowser(t *testing.T) {
	t.Parallel()
	var svc *waitlist.Service
	a := setupJoin(t, func(s *web.Server) {
		s.StatusPoll = 200 * time.Millisecond
		svc = s.Svc
		svc.PasswordCost = bcrypt.MinCost
	})
	m := newMailer(t, a)
	const email, pass = "olive@cornercuts.example", "correct horse battery"
	if _, err := svc.AddStaff(context.Background(), waitlist.AddStaffParams{BusinessID: a.bid, Email: email, Name: "Olive", Password: pass}); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	shots := os.Getenv("NEXTUP_SCREENSHOTS")
	shot := func(name string) {
		if shots != "" {
			_ = os.WriteFile(filepath.Join(shots, name), run(t, ctx, chromedp.FullScreenshot(100)), 0o644)
		}
	}
	do := func(steps ...chromedp.Action[struct{}]) {
		t.Helper()
		for _, step := range steps {
			if _, err := runStale(ctx, step); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The organiser makes the event on the dashboard and shares its page.
	do(chromedp.Navigate(a.srv.URL + "/login"))
	do(chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), pass), chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, ctx, "the dashboard", `location.pathname === "/dash"`)
	do(chromedp.Navigate(a.srv.URL + "/dash/events"))
	do(chromedp.SendKeys(chromedp.ID("e-title"), "Wine tasting"))
	run(t, ctx, chromedp.Evaluate[string](`document.getElementById("e-starts").value = "2026-12-31T19:00";
		document.getElementById("e-ends").value = "2026-12-31T22:00"; document.getElementById("e-capacity").value = "4";
		document.getElementById("e-guests").value = "2"`))
	do(chromedp.Click(chromedp.CSS(`#new-event button`)))
	waitFor(t, ctx, "the new event's page", `location.pathname.startsWith("/dash/events/") && !!document.getElementById("public-form")`)
	id := strings.TrimPrefix(run(t, ctx, chromedp.Evaluate[string](`location.pathname`)), "/dash/events/")
	run(t, ctx, chromedp.Evaluate[string](`document.getElementById("pub-slug").value = "wine"; "ok"`))
	do(chromedp.SendKeys(chromedp.ID("pub-place"), "The back room, 12 Mill Lane"), chromedp.Click(chromedp.CSS(`#public-form button`)))
	waitFor(t, ctx, "the public page saved", `!!document.getElementById("notice") && document.getElementById("notice").textContent.startsWith("The public page is saved") && !!document.getElementById("public-url")`)
	share := run(t, ctx, chromedp.Text(chromedp.ID("public-url")))
	if share != "https://nextup.test/e/corner-cuts/wine" {
		t.Fatalf("the link to share is %q", share)
	}
	status := map[string]string{}
	for _, who := range []string{"ana", "ben", "dee", "eli"} {
		var r map[string]any
		a.must(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"`+who+`","email":"`+who+`@example.com","guests":1}`), 201, &r)
		status[who] = r["status_url"].(string)
	}
	m.deliver("")

	if _, err := runStale(ctx, chromedp.Navigate(a.srv.URL+strings.TrimPrefix(share, "https://nextup.test"))); err != nil {
		t.Fatal(err)
	}
	page := run(t, ctx, chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"Wine tasting", "The back room, 12 Mill Lane", "Full — join the waitlist", "2 people waiting"} {
		if !strings.Contains(page, want) {
			t.Errorf("the public page lacks %q:\n%s", want, page)
		}
	}
	shot("event-public.png")
	axeClean(t, ctx, "the public event page")
	// Sent empty: the mistakes are marked, and the page stays accessible.
	if _, err := runStale(ctx, chromedp.Click(chromedp.CSS("button.claim"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the form's error", `!!document.getElementById("form-error")`)
	axeClean(t, ctx, "the public event page's error state")
	for _, step := range []chromedp.Action[struct{}]{
		chromedp.SendKeys(chromedp.ID("name"), "Cleo Park"),
		chromedp.SendKeys(chromedp.ID("email"), "cleo@example.com"),
		chromedp.SendKeys(chromedp.ID("guests"), "1"),
		chromedp.SendKeys(chromedp.ID("guest-1"), "Sam Park"),
		chromedp.Click(chromedp.CSS("button.claim")),
	} {
		if _, err := runStale(ctx, step); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "check your email", `document.querySelector("h1").textContent === "Check your email"`)
	axeClean(t, ctx, "the check-your-email page")
	mails := m.deliver("cleo@example.com")
	if len(mails) != 1 {
		t.Fatalf("%d mails to Cleo after the RSVP, want the confirmation", len(mails))
	}
	link := regexp.MustCompile(`https://nextup\.test(/e/corner-cuts/wine/confirm\?t=\S+)`).FindStringSubmatch(mails[0].Text)
	if link == nil {
		t.Fatalf("no confirmation link in:\n%s", mails[0].Text)
	}
	if _, err := runStale(ctx, chromedp.Navigate(a.srv.URL+link[1])); err != nil {
		t.Fatal(err)
	}
	if _, err := runStale(ctx, chromedp.Click(chromedp.CSS("button.claim"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the status page, 3rd", `location.pathname.startsWith("/s/") && document.getElementById("state").textContent.includes("number 3 in line for Wine tasting")`)
	shot("event-waitlisted.png")
	axeClean(t, ctx, "the status page")
	if told := m.deliver("cleo@example.com"); len(told) != 2 || !strings.Contains(told[1].Text, "3rd in line") {
		t.Fatalf("Cleo's waitlist confirmation: %d mails", len(told))
	}

	// Ana and Ben cancel from the links in their confirmations.
	cancel := regexp.MustCompile(`https://nextup\.test(/r/\S+)`)
	for _, who := range []string{"ana", "ben"} {
		var l []string
		for _, ml := range m.deliver(who + "@example.com") {
			if l = cancel.FindStringSubmatch(ml.Text); l != nil {
				break
			}
		}
		if l == nil {
			t.Fatalf("no cancel link in %s's mail", who)
		}
		c := a.client()
		p := c.do("GET", l[1], nil)
		if p.status != 200 {
			t.Fatalf("%s's cancel page: %d", who, p.status)
		}
		if p = c.do("POST", l[1], nil); p.status != 200 && p.status != 303 {
			t.Fatalf("%s cancels: %d\n%s", who, p.status, p.body)
		}
	}
	// The open page follows, without a reload.
	run(t, ctx, chromedp.Evaluate[bool](`window.__same = true`))
	waitFor(t, ctx, "1st, live", `document.getElementById("state").textContent.includes("number 1 in line for Wine tasting") && window.__same === true`)

	// Dee, ahead of her, declines from her own status page: Cleo's page
	// shows the offer with its countdown, and she claims it there.
	dee := a.client()
	if p := dee.do("POST", strings.TrimPrefix(status["dee"], "https://nextup.test")+"/decline", nil); p.status != 200 {
		t.Fatalf("Dee declines: %d\n%s", p.status, p.body)
	}
	waitFor(t, ctx, "the offer on the status page", `!!document.getElementById("countdown") && document.querySelector("h1").textContent === "You have an offer"`)
	shot("event-offer.png")
	axeClean(t, ctx, "the status page with an offer")
	if _, err := runStale(ctx, chromedp.Click(chromedp.CSS("button.claim"))); err != nil {
		t.Fatal(err)
	}
	// The page after the claim says so; if the page's own poll saw the
	// claim commit first and reloaded, it is the booked status page.
	waitFor(t, ctx, "claimed", `document.body.textContent.includes("It's yours") || document.querySelector("h1").textContent === "You're booked"`)
	var regs struct {
		Registrations []map[string]any `json:"registrations"`
	}
	a.must(a.do("GET", "/v1/events/"+id+"/registrations", a.key, ""), 200, &regs)
	cleo := ""
	for _, r := range regs.Registrations {
		if r["name"] == "Cleo Park" && r["state"] == "confirmed" {
			cleo = r["id"].(string)
		}
	}
	if cleo == "" {
		t.Fatalf("Cleo is not confirmed on the guest list: %v", regs.Registrations)
	}

	// At the door: the organiser's guest list has Cleo with Sam, her
	// named guest, and Sam arrives first.
	do(chromedp.Navigate(a.srv.URL + "/dash/events/" + id + "#guests"))
	if got := run(t, ctx, chromedp.Text(chromedp.ID("guest-"+cleo))); !strings.Contains(got, "Cleo Park") || !strings.Contains(got, "confirmed") {
		t.Fatalf("Cleo's row on the guest list: %q", got)
	}
	if got := run(t, ctx, chromedp.Text(chromedp.ID("guest-"+cleo+"-1"))); !strings.Contains(got, "Sam Park") || !strings.Contains(got, "Cleo Park's guest") {
		t.Fatalf("Sam's row on the guest list: %q", got)
	}
	do(chromedp.Click(chromedp.CSS("#guest-" + cleo + "-1 button.check-in")))
	waitFor(t, ctx, "Sam's check-in", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("Sam Park (Cleo Park's guest) is checked in")`)
	run(t, ctx, chromedp.Evaluate[bool](`document.getElementById("guests").scrollIntoView(); window.scrollTo(0, window.scrollY); true`))
	if shots != "" { // the guest list as the phone shows it, not the whole page
		_ = os.WriteFile(filepath.Join(shots, "event-guests.png"), run(t, ctx, chromedp.CaptureScreenshot()), 0o644)
	}
	r, err := svc.GetRegistration(context.Background(), a.bid, id, cleo)
	if err != nil || len(r.GuestList) != 1 || r.GuestList[0].CheckedInAt == nil || r.Booking.CheckedInAt != nil {
		t.Fatalf("after Sam's check-in: %+v (%v)", r.GuestList, err)
	}
}
