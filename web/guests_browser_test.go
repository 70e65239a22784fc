package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup/waitlist"
)

// TestGuestCheckInInBrowser is the door in real Chromium with JavaScript
// off: the organiser signs in, finds Ann's guests under her on the guest
// list, checks in her named guest alone with that guest's button, then the
// rest of the party with Ann's, and undoes one guest.
func TestGuestCheckInInBrowser(t *testing.T) {
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
	p := waitlist.NewEventParams()
	start := sb.clock.Now().Add(72 * time.Hour)
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Supper club", start, start.Add(3*time.Hour), 10
	p.Settings.MaxGuests = 3
	ev, err := sb.svc.CreateEvent(context.Background(), sb.bid, p)
	if err != nil {
		t.Fatal(err)
	}
	ann, _, err := sb.svc.Register(context.Background(), sb.bid, ev.ID, waitlist.RegisterParams{Name: "Ann Lee", Email: "ann@example.com",
		Guests: 2, GuestNames: []string{"Bea Ó'Brien"}})
	if err != nil {
		t.Fatal(err)
	}

	// Every page of this tab runs without scripts: the forms alone work.
	do(chromedp.EmulateViewport(1280, 900))
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	do(chromedp.Navigate(`data:text/html,<title>off</title><script>document.title = "on"</script>`))
	if title := run(t, ctx, chromedp.Evaluate[string](`document.title`)); title != "off" {
		t.Fatalf("scripts still run in the tab (title %q)", title)
	}
	do(chromedp.Navigate(sb.srv.URL + "/login"))
	waitFor(t, ctx, "the sign-in page", `location.pathname === "/login"`)
	do(chromedp.SendKeys(chromedp.ID("email"), sb.email), chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, ctx, "the dashboard", `location.pathname === "/dash"`)
	do(chromedp.Navigate(sb.srv.URL + "/dash/events/" + ev.ID))
	row := func(n string) string { return "#guest-" + ann.Entry.ID + n }
	text := func(sel string) string { return run(t, ctx, chromedp.Text(chromedp.CSS(sel))) }
	if got := text(row("-1")); !strings.Contains(got, "Bea Ó'Brien") || !strings.Contains(got, "Ann Lee's guest") {
		t.Fatalf("guest 1's row: %q", got)
	}
	if got := text(row("-2")); !strings.Contains(got, "Guest 2") {
		t.Fatalf("guest 2's row: %q", got)
	}

	do(chromedp.Click(chromedp.CSS(row("-1") + " button.check-in")))
	waitFor(t, ctx, "Bea's check-in", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("Bea Ó'Brien (Ann Lee's guest) is checked in")`)
	if got := text(row("-1") + " td:nth-child(4)"); got == "" {
		t.Errorf("Bea's row shows no check-in time")
	}
	if got := text(row("-2") + " td:nth-child(4)"); got != "" {
		t.Errorf("guest 2 checked in with Bea: %q", got)
	}
	if got := text(row("") + " td:nth-child(4)"); got != "" {
		t.Errorf("Ann checked in with her guest: %q", got)
	}

	do(chromedp.Click(chromedp.CSS(row("") + " button.check-in")))
	waitFor(t, ctx, "the party's check-in", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("Ann Lee is checked in")`)
	for _, r := range []string{"", "-1", "-2"} {
		if got := text(row(r) + " td:nth-child(4)"); got == "" {
			t.Errorf("row %s not checked in after the party's check-in", row(r))
		}
	}

	do(chromedp.Click(chromedp.CSS(row("-2") + " button.undo")))
	waitFor(t, ctx, "guest 2 undone", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("guest 2: check-in undone")`)
	if got := text(row("-2") + " td:nth-child(4)"); got != "" {
		t.Errorf("guest 2 still checked in: %q", got)
	}
	r, err := sb.svc.GetRegistration(context.Background(), sb.bid, ev.ID, ann.Entry.ID)
	if err != nil || r.GuestList[0].CheckedInAt == nil || r.GuestList[1].CheckedInAt != nil || r.Booking.CheckedInAt == nil {
		t.Errorf("stored after the door: %+v, %v", r.GuestList, err)
	}
}
