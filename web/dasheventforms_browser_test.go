package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup/waitlist"
)

// TestOrganiserEventFormsInBrowser runs the event page's own forms in real
// Chromium: the counts follow a registration made elsewhere without a
// reload; a phone booking is added by hand; the settings are changed in
// minutes and reminder choices; the organiser sends themselves a test
// reminder, giving their address the first time.
func TestOrganiserEventFormsInBrowser(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	p := waitlist.NewEventParams()
	p.Title, p.Capacity, p.Settings.MaxGuests = "Winter wine tasting", 3, 1
	p.StartsAt = time.Date(2026, 12, 10, 19, 0, 0, 0, time.UTC)
	p.EndsAt = p.StartsAt.Add(150 * time.Minute)
	ev, err := sb.svc.CreateEvent(context.Background(), sb.bid, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	do := func(steps ...chromedp.Action[struct{}]) {
		t.Helper()
		for _, step := range steps {
			if _, err := runStale(ctx, step); err != nil {
				t.Fatal(err)
			}
		}
	}
	do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(sb.srv.URL+"/dash/events/"+ev.ID))
	waitFor(t, ctx, "the sign-in page", `location.pathname === "/login"`)
	do(chromedp.SendKeys(chromedp.ID("email"), sb.email), chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, ctx, "the event page", `location.pathname === "/dash/events/`+ev.ID+`" && !!document.getElementById("count-confirmed")`)
	if c := run(t, ctx, chromedp.Text(chromedp.ID("count-confirmed"))); c != "0 of 3" {
		t.Fatalf("confirmed: %q", c)
	}

	// Someone registers elsewhere: the counts change on the open page,
	// which is not reloaded (the mark set on it stays).
	run(t, ctx, chromedp.Evaluate[bool](`window.sameLoad = true`))
	if _, _, err := sb.svc.Register(context.Background(), sb.bid, ev.ID, waitlist.RegisterParams{Name: "Ann Example", Email: "ann@example.com", Guests: 0}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live counts", `document.getElementById("count-confirmed").textContent === "1 of 3" && document.getElementById("count-free").textContent === "2" && window.sameLoad === true`)

	// A phone booking, by hand.
	do(chromedp.SendKeys(chromedp.ID("add-name"), "Bob by phone"), chromedp.SendKeys(chromedp.ID("add-phone"), "+44 7700 900123"))
	run(t, ctx, chromedp.Evaluate[string](`document.getElementById("add-guests").value = "1"`))
	do(chromedp.Click(chromedp.CSS(`#add-form button`)))
	waitFor(t, ctx, "the registrant added", `!!document.getElementById("notice") && document.getElementById("notice").textContent === "Bob by phone is confirmed (2 seats)."`)
	if c := run(t, ctx, chromedp.Text(chromedp.ID("count-confirmed"))); c != "3 of 3" {
		t.Errorf("confirmed after the phone booking: %q", c)
	}

	// The settings: half an hour to take a freed seat, a reminder two
	// weeks before as well.
	run(t, ctx, chromedp.Evaluate[string](`document.getElementById("set-claim").value = "30"; document.getElementById("set-claim-unit").value = "minutes"`))
	do(chromedp.Click(chromedp.CSS(`#settings-form input[name=reminder][value="20160"]`)), chromedp.Click(chromedp.CSS(`#settings-form button`)))
	waitFor(t, ctx, "the settings saved", `!!document.getElementById("notice") && document.getElementById("notice").textContent === "The settings are saved."`)
	got, err := sb.svc.GetEvent(context.Background(), sb.bid, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Event.ClaimWindow != 30*time.Minute || len(got.Event.ReminderOffsets) != 3 || got.Event.ReminderOffsets[0] != 14*24*time.Hour {
		t.Errorf("settings after the form: %+v", got.Event)
	}

	// The test reminder asks for the organiser's address the first time.
	do(chromedp.SendKeys(chromedp.ID("owner-email"), "olive@salon.example"), chromedp.Click(chromedp.ID("test-reminder")))
	waitFor(t, ctx, "the test reminder", `!!document.getElementById("notice") && document.getElementById("notice").textContent.startsWith("A test reminder is on its way to olive@salon.example")`)
	if ms := sb.outbox(waitlist.MessageReminderTest); len(ms) != 1 || ms[0].To != "olive@salon.example" {
		t.Errorf("test reminders: %+v", ms)
	}
	if text := run(t, ctx, chromedp.Text(chromedp.CSS("main"))); strings.Contains(text, "second") || strings.Contains(text, "API") {
		t.Errorf("the organiser's page speaks of seconds or the API:\n%s", text)
	}
	if dir := os.Getenv("NEXTUP_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "organiser-event-forms.png"), run(t, ctx, chromedp.FullScreenshot(100)), 0o644)
	}
}
