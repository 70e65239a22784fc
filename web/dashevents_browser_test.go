package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup/waitlist"
)

// TestOrganiserInBrowser is the organiser's loop in real Chromium: sign in,
// add an event of two seats through the form, see four registrations as
// counts and charts, promote the second person waiting with a reason, add
// a seat, and find the override in the promotion history.
func TestOrganiserInBrowser(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	ctx := browser(t)
	do := func(steps ...chromedp.Action[struct{}]) {
		t.Helper()
		for _, step := range steps {
			if _, err := runStale(ctx, step); err != nil {
				t.Fatal(err)
			}
		}
	}
	do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(sb.srv.URL+"/dash"))
	waitFor(t, ctx, "the sign-in page", `location.pathname === "/login"`)
	do(chromedp.SendKeys(chromedp.ID("email"), sb.email), chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, ctx, "the dashboard", `location.pathname === "/dash"`)
	do(chromedp.Click(chromedp.CSS(`nav a[href="/dash/events"]`)))
	waitFor(t, ctx, "the events page", `location.pathname === "/dash/events" && !!document.getElementById("no-events")`)

	// The New event form: datetime-local fields take their value the way a
	// picker sets it.
	do(chromedp.SendKeys(chromedp.ID("e-title"), "Winter wine tasting"))
	run(t, ctx, chromedp.Evaluate[string](`document.getElementById("e-starts").value = "2026-12-10T19:00";
		document.getElementById("e-ends").value = "2026-12-10T21:30"; document.getElementById("e-capacity").value = "2"`))
	do(chromedp.Click(chromedp.CSS(`#new-event button`)))
	waitFor(t, ctx, "the new event's page", `location.pathname.startsWith("/dash/events/") && !!document.getElementById("notice")`)
	eid := strings.TrimPrefix(run(t, ctx, chromedp.Evaluate[string](`location.pathname`)), "/dash/events/")

	regs := map[string]waitlist.Registration{}
	for _, name := range []string{"Ann", "Bob", "Cat", "Dee"} {
		reg, _, err := sb.svc.Register(context.Background(), sb.bid, eid, waitlist.RegisterParams{Name: name + " Example",
			Email: strings.ToLower(name) + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		regs[name] = reg
	}
	if regs["Bob"].State != waitlist.RegConfirmed || regs["Dee"].Position != 2 {
		t.Fatalf("registrations: Bob %s, Dee %s at %d", regs["Bob"].State, regs["Dee"].State, regs["Dee"].Position)
	}
	do(chromedp.Navigate(sb.srv.URL + "/dash/events/" + eid))
	if c := run(t, ctx, chromedp.Text(chromedp.ID("count-confirmed"))); c != "2 of 2" {
		t.Errorf("confirmed: %q", c)
	}
	if w := run(t, ctx, chromedp.Text(chromedp.ID("count-waitlisted"))); w != "2" {
		t.Errorf("waitlisted: %q", w)
	}
	// The charts are drawn: the capacity bar has its confirmed segment
	// and the waitlisted beyond the capacity marker, with a real size.
	if n := run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg[role=img]").length`)); n < 3 {
		t.Errorf("%d charts on the page", n)
	}
	if w := run(t, ctx, chromedp.Evaluate[float64](`document.querySelector("#chart-capacity svg .seg-confirmed").getBoundingClientRect().width`)); w < 20 {
		t.Errorf("the capacity chart's confirmed segment is %v px wide", w)
	}
	if ok := run(t, ctx, chromedp.Evaluate[bool](`!!document.querySelector("#chart-capacity svg .cap-marker") && !!document.querySelector("#chart-capacity svg .seg-waitlisted")`)); !ok {
		t.Error("the capacity chart has no capacity marker or waitlisted segment")
	}

	// Promote the second person waiting, with a reason.
	dee := regs["Dee"].Entry.ID
	do(chromedp.SendKeys(chromedp.CSS(`#wait-`+dee+` input[name=reason]`), "Speaker's partner"),
		chromedp.Click(chromedp.CSS(`#wait-`+dee+` button`)))
	waitFor(t, ctx, "the promotion", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("Dee Example is first in line")`)
	if first := run(t, ctx, chromedp.Text(chromedp.CSS(`#waitlist tbody tr:first-child`))); !strings.Contains(first, "Dee Example") {
		t.Errorf("Dee is not first in the queue: %q", first)
	}

	// One more seat: it goes to Dee.
	run(t, ctx, chromedp.Evaluate[string](`document.getElementById("capacity").value = "3"`))
	do(chromedp.Click(chromedp.CSS(`#capacity-form button`)))
	waitFor(t, ctx, "the new capacity", `!!document.getElementById("notice") && document.getElementById("notice").textContent.startsWith("Capacity set to 3")`)
	if c := run(t, ctx, chromedp.Text(chromedp.ID("count-confirmed"))); c != "2 of 3" {
		t.Errorf("confirmed after capacity 3: %q", c)
	}
	history := run(t, ctx, chromedp.Text(chromedp.ID("history")))
	for _, want := range []string{"Staff override by " + sb.email + ": Speaker's partner", "put first in line", "offered, waiting for an answer", "Dee Example"} {
		if !strings.Contains(history, want) {
			t.Errorf("the promotion history lacks %q:\n%s", want, history)
		}
	}
	if held := run(t, ctx, chromedp.Evaluate[string](`document.getElementById("guest-`+dee+`").dataset.state`)); held != waitlist.RegOffered {
		t.Errorf("Dee on the guest list: %q", held)
	}
	if dir := os.Getenv("NEXTUP_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "organiser.png"), run(t, ctx, chromedp.FullScreenshot(100)), 0o644)
	}
}
