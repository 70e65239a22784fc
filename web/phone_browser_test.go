package web_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// TestPhoneLayout opens every dashboard page and the public pages in real
// Chromium at 390 px, a phone, with a business that has something on
// each: no page is wider than the screen (tables become stacked cards),
// and every page's buttons and links are inside it. The join form fits
// at 360 px. On the phone the owner then rewords the offer with a preview
// and changes a setting. Screenshots of Today, Waitlist, Settings and the
// wording pages go to $NEXTUP_SCREENSHOTS.
func TestPhoneLayout(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	ctx := context.Background()
	services := []nextup.Service{{Name: "Cut and blow-dry, long hair", DurationMinutes: 45, PriceCents: 3500}, {Name: "colour", PriceCents: 8000}}
	staff, slug, country := []string{"Ana", "Ben"}, "corner-cuts", "GB"
	if _, err := sb.svc.UpdateProfile(ctx, sb.bid, waitlist.ProfilePatch{Services: &services, Staff: &staff, Slug: &slug, Country: &country}); err != nil {
		t.Fatal(err)
	}
	var entries []waitlist.JoinResult
	for _, name := range []string{"Annabelle Featherstonehaugh-Worthington", "Bob", "Cat", "Dee"} {
		sb.clock.Advance(time.Minute)
		res, err := sb.svc.Join(ctx, sb.bid, waitlist.JoinParams{Name: name, Email: strings.ToLower(strings.Fields(name)[0]) + ".someone.with.a.long.address@example.com",
			Phone: "+447700900123", Service: services[0].Name, Staff: "Ana"})
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, res)
	}
	start := sb.clock.Now().Add(26 * time.Hour).Truncate(time.Hour)
	sl, _, err := sb.svc.CreateSlot(ctx, sb.bid, waitlist.SlotParams{Service: services[0].Name, Staff: "Ana", StartsAt: start, EndsAt: start.Add(45 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	_, moves, err := sb.svc.Release(ctx, sb.bid, sl.ID, 0, waitlist.ReasonCancellation)
	if err != nil || len(moves) != 1 {
		t.Fatalf("release: %v %v", moves, err)
	}
	claim := sb.token(moves[0].OfferID)
	// A slot nobody can take: handed back to staff.
	lone, _, err := sb.svc.CreateSlot(ctx, sb.bid, waitlist.SlotParams{Service: "colour", StartsAt: start.Add(2 * time.Hour), EndsAt: start.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sb.svc.Release(ctx, sb.bid, lone.ID, 0, waitlist.ReasonCancellation); err != nil {
		t.Fatal(err)
	}
	p := waitlist.NewEventParams()
	evSlug := "open-evening"
	p.Title, p.Capacity, p.StartsAt, p.EndsAt = "Open evening with a rather long title", 2, start.Add(48*time.Hour), start.Add(51*time.Hour)
	p.Settings.Slug = evSlug
	ev, err := sb.svc.CreateEvent(ctx, sb.bid, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Gus", "Hal", "Ivy"} {
		if _, _, err := sb.svc.Register(ctx, sb.bid, ev.ID, waitlist.RegisterParams{Name: name, Email: strings.ToLower(name) + "@example.com"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := sb.svc.Propose(ctx, sb.bid, waitlist.ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: "<1@x>",
		Excerpt: "Hi, could I get a haircut some time next week? Any morning works. Thanks, Jo", Fields: nextup.ProposalFields{Name: "Jo", Email: "jo@example.com", Service: "hiarcut"},
		Problems: []string{"service not in the catalogue"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.svc.SummarizeMonth(ctx, sb.bid, "2026-12"); err != nil {
		t.Fatal(err)
	}

	// Every page the dashboard has, its ids filled in.
	fill := strings.NewReplacer("{sid}", sl.ID, "{eid}", entries[0].Entry.ID, "{id}", ev.ID, "{month}", "2026-12", "{kind}", "offer",
		"{slug}", slug, "{event}", evSlug)
	var pages []string
	for _, rt := range (&web.Server{}).StaffPages() {
		method, path, _ := strings.Cut(rt, " ")
		// Not pages: the CSV downloads, the live fragments the pages
		// poll (checked inside their pages) and the email preview's
		// frame (checked in its page, below).
		if method != "GET" || !strings.HasPrefix(path, "/dash") || strings.HasSuffix(path, ".csv") || strings.HasSuffix(path, "/live") || strings.HasSuffix(path, "/preview") {
			continue
		}
		path = fill.Replace(path)
		if strings.Contains(path, "{vid}") {
			continue // a sheet version's page: TestSheetInBrowser opens it at 390 px, with a sheet to show
		}
		if strings.Contains(path, "{") {
			t.Fatalf("no id to fill in %s", path)
		}
		pages = append(pages, path)
	}
	if len(pages) < 15 {
		t.Fatalf("only %d dashboard pages: %v", len(pages), pages)
	}
	t.Logf("%d dashboard pages and %d public pages at 390 px", len(pages), 7)
	public := []string{"/", "/login", "/login/forgot", "/b/" + slug + "/join", "/e/" + slug + "/" + evSlug, "/c/" + claim, "/s/" + entries[1].StatusToken}

	bctx := browser(t)
	do := func(steps ...chromedp.Action[struct{}]) {
		t.Helper()
		for _, step := range steps {
			if _, err := runStale(bctx, step); err != nil {
				t.Fatal(err)
			}
		}
	}
	shots := os.Getenv("NEXTUP_SCREENSHOTS")
	shot := func(name string) {
		if shots != "" {
			_ = os.WriteFile(filepath.Join(shots, name), run(t, bctx, chromedp.FullScreenshot(100)), 0o644)
		}
	}
	var check func(path string, width int)
	fits := func(path string, width int) {
		t.Helper()
		do(chromedp.EmulateViewport(int64(width), 844), chromedp.Navigate(sb.srv.URL+path))
		waitFor(t, bctx, path, `document.readyState === "complete"`)
		check(path, width)
	}
	check = func(path string, width int) {
		t.Helper()
		if w := run(t, bctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > width {
			// Name the widest thing, to say what to fix.
			culprit := run(t, bctx, chromedp.Evaluate[string](`(() => { let w = null; for (const el of document.body.querySelectorAll("*")) {
				const r = el.getBoundingClientRect(); if (r.right > innerWidth + 1 && (!w || r.width < w.getBoundingClientRect().width)) w = el; }
				return w ? w.tagName + (w.id ? "#" + w.id : "") + (w.className ? "." + w.className : "") + " " + w.outerHTML.slice(0, 160) : "?" })()`))
			t.Errorf("%s at %d px is %d px wide: %s", path, width, w, culprit)
		}
		// Charts are readable: no text drawn under 11 px as shown.
		if small := run(t, bctx, chromedp.Evaluate[string](`[...document.querySelectorAll("svg[viewBox]")].flatMap(svg => {
			const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
			return [...svg.querySelectorAll("text")].filter(el => el.textContent.trim() !== "" &&
				parseFloat(el.getAttribute("font-size") || getComputedStyle(el).fontSize) * scale < 10.9).map(el => el.textContent + " at " +
				(parseFloat(el.getAttribute("font-size") || getComputedStyle(el).fontSize) * scale).toFixed(1) + " px")
		}).join(" | ")`)); small != "" {
			t.Errorf("%s at %d px: chart text too small: %s", path, width, small)
		}
		// A choice shows its words whole: the chosen option's text fits
		// its select (measured in the select's own font, beside the arrow).
		if cut := run(t, bctx, chromedp.Evaluate[string](`(() => { const c = document.createElement("canvas").getContext("2d");
			return [...document.querySelectorAll("select")].filter(el => el.offsetParent && el.selectedOptions.length).filter(el => {
				const cs = getComputedStyle(el); c.font = cs.font;
				const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 18;
				return c.measureText(el.selectedOptions[0].text).width > room }).map(el => el.id + ": " + el.selectedOptions[0].text).join(" | ") })()`)); cut != "" {
			t.Errorf("%s at %d px: cut-off choices: %s", path, width, cut)
		}
		// Every button and link is on the screen, not off its side.
		if off := run(t, bctx, chromedp.Evaluate[string](`[...document.querySelectorAll("button, a, input, select, textarea")].filter(el => !el.closest("[aria-hidden=true]")).filter(el => {
			const r = el.getBoundingClientRect(); return r.width > 0 && (r.left < -1 || r.right > innerWidth + 1) }).map(el => el.outerHTML.slice(0, 80)).join(" | ")`)); off != "" {
			t.Errorf("%s at %d px: off the screen: %s", path, width, off)
		}
	}
	for _, path := range public {
		fits(path, 390)
	}
	fits("/b/"+slug+"/join", 360)
	shotOf := map[string]string{"/dash": "today-phone.png", "/dash/waitlist": "waitlist-phone.png", "/dash/settings": "settings-phone.png",
		"/dash/templates": "templates-phone.png", "/dash/templates/offer": "template-edit-phone.png"}

	do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(sb.srv.URL+"/login"))
	do(chromedp.SendKeys(chromedp.ID("email"), sb.email), chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, bctx, "the dashboard", `location.pathname === "/dash"`)
	for _, path := range pages {
		fits(path, 390)
		if name := shotOf[path]; name != "" {
			shot(name)
		}
	}

	// On the phone: the offer reworded, previewed, saved.
	do(chromedp.Navigate(sb.srv.URL + "/dash/templates/offer"))
	waitFor(t, bctx, "the offer's wording", `!!document.getElementById("subject")`)
	run(t, bctx, chromedp.Evaluate[string](`document.getElementById("subject").value = "{{.Name}}, your {{.Service}} is waiting"; ""`))
	do(chromedp.Click(chromedp.ID("preview-button")))
	waitFor(t, bctx, "the preview", `!!document.getElementById("preview-subject") && document.getElementById("preview-subject").textContent === "Ada, your Cut is waiting"`)
	if src := run(t, bctx, chromedp.Evaluate[string](`document.getElementById("preview-html").getAttribute("sandbox")`)); src != "" {
		t.Errorf("the HTML preview's frame allows %q", src)
	}
	// The frame loads the email from its own URL, under its own narrow
	// CSP (a srcdoc would live under the dashboard's, which blocks an
	// email's inline styles), and shows it.
	if doc := run(t, bctx, chromedp.Evaluate[string](`fetch(document.getElementById("preview-html").src).then(async r => r.headers.get("content-security-policy") + "\n" + await r.text())`,
		chromedp.EvalAwaitPromise)); !strings.Contains(doc, "<p>Hi Ada,</p>") || !strings.Contains(doc, "sandbox") || !strings.Contains(doc, "style-src 'unsafe-inline'") {
		t.Errorf("the HTML preview's frame loads %q", doc)
	}
	frame := frameOf(t, bctx, "/dash/templates/offer/preview")
	waitFor(t, frame, "the email in the frame", `document.body && document.body.textContent.includes("Hi Ada,")`)
	// The email's inline styles apply (the frame's CSP allows them; the
	// dashboard's would not).
	if styled := run(t, frame, chromedp.Evaluate[string](`[...document.querySelectorAll("[style]")].map(el => getComputedStyle(el).color).join(" ")`)); !strings.Contains(styled, "rgb(85, 85, 85)") {
		t.Errorf("the email's inline styles in the frame: colours %q, want rgb(85, 85, 85) (#555)", styled)
	}
	check("the preview", 390)
	shot("template-preview-phone.png")
	if b, _ := sb.svc.GetBusiness(ctx, sb.bid); b.Profile.TemplatesVersion != 0 {
		t.Fatal("the preview saved")
	}
	do(chromedp.Click(chromedp.ID("save-button")))
	waitFor(t, bctx, "saved", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("version 1")`)
	if b, _ := sb.svc.GetBusiness(ctx, sb.bid); b.Profile.Templates["offer"].Subject != "{{.Name}}, your {{.Service}} is waiting" {
		t.Fatalf("saved %+v", b.Profile.Templates)
	}

	// And a setting: the time to claim, in minutes.
	do(chromedp.Navigate(sb.srv.URL + "/dash/settings"))
	waitFor(t, bctx, "the settings", `!!document.getElementById("claim")`)
	run(t, bctx, chromedp.Evaluate[string](`document.getElementById("claim").value = "25"; ""`))
	do(chromedp.Click(chromedp.CSS(`form[action="/dash/settings/rules"] button.primary`)))
	waitFor(t, bctx, "the new rules", `!!document.getElementById("notice")`)
	if b, _ := sb.svc.GetBusiness(ctx, sb.bid); b.Rules.ClaimWindow != 25*time.Minute {
		t.Fatalf("time to claim %v, want 25 minutes", b.Rules.ClaimWindow)
	}
	if text := run(t, bctx, chromedp.Text(chromedp.CSS("main"))); regexp.MustCompile(`PATCH|/v1/|seconds|fcfs|policy`).MatchString(text) {
		t.Errorf("the settings page speaks to developers: %q", regexp.MustCompile(`PATCH|/v1/|seconds|fcfs|policy`).FindString(text))
	}
}
