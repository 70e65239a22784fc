package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestSummaryInBrowser is the owner reading December's summary and the
// analytics of a range in real Chromium, at phone and desktop widths: the
// narrative, the figures, the charts drawn with text of at least 11 px as
// shown, no page wider than the screen, and no accessibility violation.
func TestSummaryInBrowser(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	ctx := context.Background()
	services := []nextup.Service{{Name: "haircut", PriceCents: 3500}, {Name: "colour", PriceCents: 8000}}
	country := "GB"
	if _, err := sb.svc.UpdateProfile(ctx, sb.bid, waitlist.ProfilePatch{Services: &services, Country: &country}); err != nil {
		t.Fatal(err)
	}
	// A morning of December: five chairs freed, most taken from the list.
	for i, name := range []string{"Ann", "Bob", "Cat", "Dee", "Eve", "Fay"} {
		service := []string{"haircut", "colour"}[i%2]
		if _, err := sb.svc.Join(ctx, sb.bid, waitlist.JoinParams{Name: name, Email: strings.ToLower(name) + "@example.com", Service: service}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		service := []string{"haircut", "colour"}[i%2]
		start := time.Date(2026, 12, 3+i, 14, 0, 0, 0, time.UTC)
		sl, _, err := sb.svc.CreateSlot(ctx, sb.bid, waitlist.SlotParams{Service: service, StartsAt: start, EndsAt: start.Add(45 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		sb.clock.Advance(time.Duration(20+7*i) * time.Minute)
		_, moves, err := sb.svc.Release(ctx, sb.bid, sl.ID, 0, []string{"cancellation", "cancellation", "no_show", "opening", "cancellation"}[i])
		if err != nil || len(moves) != 1 {
			t.Fatalf("release: %v %v", moves, err)
		}
		sb.clock.Advance(time.Duration(3+i) * time.Minute)
		if i == 3 {
			if _, _, err := sb.svc.Decline(ctx, sb.token(moves[0].OfferID)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := sb.svc.Claim(ctx, sb.token(moves[0].OfferID)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sb.svc.SummarizeMonth(ctx, sb.bid, "2026-12"); err != nil {
		t.Fatal(err)
	}

	bctx := browser(t)
	do := func(steps ...chromedp.Action[struct{}]) {
		t.Helper()
		for _, step := range steps {
			if _, err := runStale(bctx, step); err != nil {
				t.Fatal(err)
			}
		}
	}
	do(chromedp.Navigate(sb.srv.URL + "/dash/summaries"))
	waitFor(t, bctx, "the sign-in page", `location.pathname === "/login"`)
	do(chromedp.SendKeys(chromedp.ID("email"), sb.email), chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, bctx, "the summaries", `location.pathname === "/dash/summaries" && !!document.getElementById("summaries")`)
	do(chromedp.Click(chromedp.CSS(`#summaries a[href="/dash/summaries/2026-12"]`)))
	waitFor(t, bctx, "December's summary", `location.pathname === "/dash/summaries/2026-12" && !!document.getElementById("narrative")`)
	if n := run(t, bctx, chromedp.Text(chromedp.ID("narrative"))); !strings.Contains(n, "You recovered 4 of them from the waitlist (80%), worth £185.") {
		t.Errorf("narrative %q", n)
	}
	shots := os.Getenv("NEXTUP_SCREENSHOTS")
	for _, width := range []int{390, 1280} {
		do(chromedp.EmulateViewport(int64(width), 900))
		for _, path := range []string{"/dash/summaries/2026-12", "/dash/analytics?from=2026-12-01&to=2026-12-31"} {
			do(chromedp.Navigate(sb.srv.URL + path))
			waitFor(t, bctx, path, `!!document.getElementById("figures")`)
			if over := run(t, bctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); over {
				t.Errorf("%s at %d px: the page is wider than the screen (%v px): %s", path, width,
					run(t, bctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)),
					run(t, bctx, chromedp.Evaluate[string](`[...document.querySelectorAll("body *")].filter(el => el.getBoundingClientRect().right > window.innerWidth + 0.5).slice(0, 5).map(el => el.tagName + (el.id ? "#" + el.id : "") + " " + Math.round(el.getBoundingClientRect().right)).join(", ")`)))
			}
			// The charts: four drawn, with bars, and every text in them at
			// least 11 px as shown (its size times the drawing's scale).
			if n := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll(".charts svg[role=img]").length`)); n != 3 {
				t.Errorf("%s: %d charts", path, n)
			}
			if n := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll(".charts svg rect.bar, .charts svg .bar").length`)); n == 0 {
				t.Errorf("%s: no bars drawn", path)
			}
			smallest := run(t, bctx, chromedp.Evaluate[float64](`Math.min(...[...document.querySelectorAll(".charts svg")].flatMap(svg => {
				const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
				return [...svg.querySelectorAll("text")].map(el => parseFloat(el.getAttribute("font-size")) * scale);
			}))`))
			if smallest < 10.9 {
				t.Errorf("%s at %d px: chart text drawn at %.1f px", path, width, smallest)
			}
			axeClean(t, bctx, path)
			if shots != "" {
				name := map[bool]string{true: "summary", false: "analytics"}[strings.HasPrefix(path, "/dash/summaries")]
				_ = os.WriteFile(filepath.Join(shots, name+map[int]string{390: "-phone.png", 1280: ".png"}[width]), run(t, bctx, chromedp.FullScreenshot(100)), 0o644)
			}
		}
	}
	if rev := run(t, bctx, chromedp.Text(chromedp.ID("by-service"))); !strings.Contains(rev, "colour") || !strings.Contains(rev, "haircut") {
		t.Errorf("by service: %q", rev)
	}
}

// TestReplayInBrowser is support answering "I was next and I was
// skipped" in real Chromium, at phone and desktop widths: Zoe, who only
// wants Ben, waits behind Ann and Bob; Ana's slot goes to Ann (Zoe asked
// for Ben), Ben's to Bob (earlier in line), Pat joins ahead of her with
// priority, and Bob declines Ben's slot, which comes to Zoe, who lets it
// lapse. The staff open her replay from the waitlist: the place chart
// and every slot with why, no page wider than the screen, chart text at
// least 11 px, no accessibility violation. Her own status page says why
// those slots went to someone else, without naming anyone, and the
// estimated wait the business chose to show.
func TestReplayInBrowser(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	ctx := context.Background()
	on := true
	if _, err := sb.svc.UpdateProfile(ctx, sb.bid, waitlist.ProfilePatch{WaitEstimate: &on}); err != nil {
		t.Fatal(err)
	}
	release := func(staff string, day int) nextup.Move {
		t.Helper()
		start := sb.clock.Now().Add(time.Duration(day) * 24 * time.Hour).Truncate(time.Hour)
		sl, _, err := sb.svc.CreateSlot(ctx, sb.bid, waitlist.SlotParams{Service: "haircut", Staff: staff, StartsAt: start, EndsAt: start.Add(45 * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		_, moves, err := sb.svc.Release(ctx, sb.bid, sl.ID, 0, "cancellation")
		if err != nil || len(moves) != 1 {
			t.Fatalf("release: %v %v", moves, err)
		}
		return moves[0]
	}
	join := func(name, staff string, priority bool) waitlist.JoinResult {
		t.Helper()
		sb.clock.Advance(time.Minute)
		res, err := sb.svc.Join(ctx, sb.bid, waitlist.JoinParams{Name: name, Email: strings.ToLower(name) + "@example.com", Service: "haircut", Staff: staff, Priority: priority})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Last weeks' haircuts, booked 1 to 5 days after joining: the history
	// of the estimate.
	for i := range 5 {
		join(fmt.Sprintf("Past%d", i), "", false)
		sb.clock.Advance(time.Duration(1+i) * 24 * time.Hour)
		if _, err := sb.svc.Claim(ctx, sb.token(release("Ana", 2).OfferID)); err != nil {
			t.Fatal(err)
		}
	}
	join("Ann", "", false)
	join("Bob", "", false)
	zoe := join("Zoe", "Ben", false)
	sb.clock.Advance(time.Hour)
	if _, err := sb.svc.Claim(ctx, sb.token(release("Ana", 2).OfferID)); err != nil { // Ann's
		t.Fatal(err)
	}
	sb.clock.Advance(time.Hour)
	if _, err := sb.svc.Claim(ctx, sb.token(release("Ben", 2).OfferID)); err != nil { // Bob's
		t.Fatal(err)
	}
	join("Pat", "", true)
	sb.clock.Advance(time.Hour)
	pat := release("Ben", 3)
	sb.clock.Advance(10 * time.Minute)
	if _, _, err := sb.svc.Decline(ctx, sb.token(pat.OfferID)); err != nil { // rolls on to Zoe
		t.Fatal(err)
	}
	sb.clock.Advance(24 * time.Hour) // she lets it lapse
	for sw := (&timer.Sweeper{Store: sb.store, Clock: sb.clock, Handler: sb.svc, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}); ; {
		n, err := sw.RunDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	h, err := sb.svc.History(ctx, sb.bid, zoe.Entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	var whys []string
	for _, so := range h.Slots {
		whys = append(whys, so.Outcome+":"+so.Why)
	}
	if got := strings.Join(whys, " "); got != "skipped:staff skipped:earlier_in_line offered:expired" {
		v, _ := sb.svc.GetEntry(ctx, sb.bid, zoe.Entry.ID)
		var ts []nextup.Timer
		_ = sb.store.Read(ctx, func(tx nextup.Tx) error {
			ts, _ = tx.TimerList(ctx, nextup.TimerFilter{BusinessID: sb.bid})
			return nil
		})
		t.Fatalf("Zoe's slots: %s\n%+v\n%+v\nnow %v timers %+v", got, v.Entry, v.Offer, sb.clock.Now(), ts)
	}

	bctx := browser(t)
	do := func(steps ...chromedp.Action[struct{}]) {
		t.Helper()
		for _, step := range steps {
			if _, err := runStale(bctx, step); err != nil {
				t.Fatal(err)
			}
		}
	}
	do(chromedp.Navigate(sb.srv.URL + "/dash/waitlist"))
	waitFor(t, bctx, "the sign-in page", `location.pathname === "/login"`)
	do(chromedp.SendKeys(chromedp.ID("email"), sb.email), chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, bctx, "the waitlist", `location.pathname === "/dash/waitlist" && !!document.getElementById("entries")`)
	do(chromedp.Click(chromedp.CSS(`#entry-` + zoe.Entry.ID + ` a[href$="/history"]`)))
	path := "/dash/waitlist/" + zoe.Entry.ID + "/history"
	waitFor(t, bctx, "Zoe's replay", `location.pathname === "`+path+`" && !!document.getElementById("places")`)
	places := run(t, bctx, chromedp.Text(chromedp.ID("places")))
	for _, want := range []string{"Joined the list at place 3.", "Someone joined ahead of you with priority.", "Offered a slot", "lapsed unanswered; back on the list at your place"} {
		if !strings.Contains(places, want) {
			t.Errorf("places %q lack %q", places, want)
		}
	}
	if slots := run(t, bctx, chromedp.Text(chromedp.ID("slots"))); !strings.Contains(slots, "was with Ana; you asked for Ben.") || !strings.Contains(slots, "and left unanswered") {
		t.Errorf("slots %q", slots)
	}
	shots := os.Getenv("NEXTUP_SCREENSHOTS")
	for _, width := range []int{390, 1280} {
		do(chromedp.EmulateViewport(int64(width), 900), chromedp.Navigate(sb.srv.URL+path))
		waitFor(t, bctx, path, `!!document.getElementById("place-chart")`)
		if over := run(t, bctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); over {
			t.Errorf("%s at %d px: the page is wider than the screen", path, width)
		}
		if n := run(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#place-chart svg line.step").length`)); n == 0 {
			t.Errorf("%s: no steps drawn", path)
		}
		smallest := run(t, bctx, chromedp.Evaluate[float64](`Math.min(...[...document.querySelectorAll("#place-chart svg")].flatMap(svg => {
			const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
			return [...svg.querySelectorAll("text")].map(el => parseFloat(el.getAttribute("font-size")) * scale);
		}))`))
		if smallest < 10.9 {
			t.Errorf("%s at %d px: chart text drawn at %.1f px", path, width, smallest)
		}
		axeClean(t, bctx, path)
		if shots != "" {
			_ = os.WriteFile(filepath.Join(shots, "replay"+map[int]string{390: "-phone.png", 1280: ".png"}[width]), run(t, bctx, chromedp.FullScreenshot(100)), 0o644)
		}
	}
	// Zoe's own page.
	do(chromedp.EmulateViewport(390, 900), chromedp.Navigate(sb.srv.URL+"/s/"+zoe.StatusToken))
	waitFor(t, bctx, "Zoe's status page", `!!document.getElementById("passed")`)
	passed := run(t, bctx, chromedp.Text(chromedp.ID("passed")))
	if !strings.Contains(passed, "was with Ana; you asked for Ben.") || strings.Contains(passed, "Ann") || strings.Contains(passed, "Bob") {
		t.Errorf("status page, passed over: %q", passed)
	}
	if est := run(t, bctx, chromedp.Text(chromedp.ID("estimate"))); !strings.Contains(est, "from the last 7 bookings: people waiting for haircut booked 1–4 days after joining") {
		t.Errorf("estimate %q", est)
	}
	if over := run(t, bctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); over {
		t.Error("the status page is wider than the phone")
	}
	axeClean(t, bctx, "the status page")
	if shots != "" {
		_ = os.WriteFile(filepath.Join(shots, "status-passed-phone.png"), run(t, bctx, chromedp.FullScreenshot(100)), 0o644)
	}
}
