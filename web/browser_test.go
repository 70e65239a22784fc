package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup"
)

// browser starts headless Debian Chromium for a test. Without it the test
// skips loudly, and fails when NEXTUP_REQUIRE_ALL=1 (as CI sets).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("NEXTUP_REQUIRE_ALL") == "1" {
			t.Fatal("no Chromium found and NEXTUP_REQUIRE_ALL=1 (apt-get install -y chromium)")
		}
		t.Skip("SKIPPING browser test: no Chromium found (apt-get install -y chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(390, 844)) // a phone
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	// No timeout on this context: it owns the browser (see chromedp.Run).
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	return ctx
}

// TestClaimPageInBrowser opens a claim link in real Chromium: the page
// shows the slot and a ticking countdown, nothing happens until a real
// click, and the Claim button books the slot.
func TestClaimPageInBrowser(t *testing.T) {
	t.Parallel()
	a := setup(t)
	ctx := browser(t)
	sid := a.slot(chair)["id"].(string)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	oid, tok := a.offerFor(sid)

	if err := chromedp.Do(ctx, chromedp.Navigate(a.srv.URL+"/c/"+tok)); err != nil {
		t.Fatal(err)
	}
	text := run(t, ctx, chromedp.Text(chromedp.CSS("main")))
	first := run(t, ctx, chromedp.Text(chromedp.ID("countdown")))
	// The page's own JavaScript countdown runs on the browser's clock.
	if err := chromedp.Do(ctx, chromedp.Sleep(2100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	later := run(t, ctx, chromedp.Text(chromedp.ID("countdown")))
	shot := run(t, ctx, chromedp.FullScreenshot(100))
	for _, want := range []string{"haircut with Ana", "Tue 1 Dec at 2:00 pm", "until 10:10 am", "Claim this slot", "Decline"} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q:\n%s", want, text)
		}
	}
	if first == later || !strings.Contains(later, "left") {
		t.Errorf("countdown did not tick: %q then %q", first, later)
	}
	if dir := os.Getenv("NEXTUP_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "claim.png"), shot, 0o644)
	}
	// Opening the page (and waiting on it) claimed nothing.
	var o map[string]any
	a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &o)
	if o["state"] != string(nextup.OfferOffered) {
		t.Fatalf("viewing the page changed the offer: %v", o)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("button.claim"))); err != nil {
		t.Fatal(err)
	}
	// Wait for the form's navigation to the result page.
	result := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if result, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1"))); strings.Contains(result, "booked") {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling a browser navigation, not a timer
	}
	a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &o)
	if !strings.Contains(result, "booked") || o["state"] != string(nextup.OfferClaimed) {
		t.Fatalf("after clicking Claim: %q, offer %v", result, o["state"])
	}
}

func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
