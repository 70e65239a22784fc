package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/internal/missing"
	"github.com/nextup-dev/nextup/web"
)

// browser starts headless Debian Chromium for a test. Without it the test
// skips loudly, and fails when NEXTUP_REQUIRE_ALL=1 (as CI sets). Every
// page the test opens is held to its Content-Security-Policy: a violation
// Chromium reports (a blocked script, style, frame, fetch or form) fails
// the test at its end.
func browser(t *testing.T) context.Context {
	t.Helper()
	ctx, csp := newBrowser(t)
	t.Cleanup(func() {
		if v := csp.violations(); len(v) > 0 {
			t.Errorf("Chromium reported %d Content-Security-Policy violations:\n%s", len(v), strings.Join(v, "\n"))
		}
	})
	return ctx
}

// newBrowser is browser without the CSP check at the end: the caller
// reads what Chromium reported.
func newBrowser(t *testing.T) (context.Context, *cspWatch) {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		missing.Skip(t, "Chromium", "no chromium, chromium-browser or google-chrome on PATH", "apt-get install -y chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(390, 844)) // a phone
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	csp := &cspWatch{}
	// No timeout on this context: it owns the browser (see chromedp.Run).
	// The listener is on from the tab's first message, so no page's
	// report is missed.
	ctx, cancel2 := chromedp.NewContext(actx, chromedp.WithListener(csp.listen))
	t.Cleanup(cancel2)
	return ctx, csp
}

// frameOf attaches to the frame of the tab whose URL contains part: a
// sandboxed frame runs in its own process, as a target of its own, which
// the tab's queries and events do not reach. What the frame reports from
// then on is held to the same CSP check as browser's (its load came
// before: a test checks what the frame shows, such as its styles).
func frameOf(t *testing.T, ctx context.Context, part string) context.Context {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) { // the frame's target appearing, not a timer
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type != "iframe" || !strings.Contains(info.URL, part) {
				continue
			}
			csp := &cspWatch{}
			fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID), chromedp.WithListener(csp.listen))
			t.Cleanup(func() {
				cancel()
				if v := csp.violations(); len(v) > 0 {
					t.Errorf("Chromium reported %d Content-Security-Policy violations in the frame %s:\n%s", len(v), info.URL, strings.Join(v, "\n"))
				}
			})
			return fctx
		}
	}
	t.Fatalf("no frame of the tab loads %s", part)
	return nil
}

// cspWatch collects the Content-Security-Policy violations Chromium
// reports, for every frame of the tab: each is an entry of the browser
// log ("Refused to execute inline script because it violates the
// following Content Security Policy directive: …").
type cspWatch struct {
	mu   sync.Mutex
	seen []string
}

// listen is the tab's event listener: it runs on the tab's reading
// goroutine, so it only notes the message.
func (w *cspWatch) listen(ev any) {
	var text, url string
	switch e := ev.(type) {
	case *cdplog.EventEntryAdded:
		text, url = e.Entry.Text, e.Entry.URL
	case *runtime.EventConsoleAPICalled:
		for _, a := range e.Args {
			text += " " + string(a.Value) + a.Description
		}
	default:
		return
	}
	if strings.Contains(text, "Content Security Policy") || strings.Contains(text, "Content-Security-Policy") {
		w.mu.Lock()
		w.seen = append(w.seen, strings.TrimSpace(text)+" ("+url+")")
		w.mu.Unlock()
	}
}

func (w *cspWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
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

	if _, err := runStale(ctx, chromedp.Navigate(a.srv.URL+"/c/"+tok)); err != nil {
		t.Fatal(err)
	}
	text := run(t, ctx, chromedp.Text(chromedp.CSS("main")))
	first := run(t, ctx, chromedp.Text(chromedp.ID("countdown")))
	// The page's own JavaScript countdown runs on the browser's clock.
	if _, err := runStale(ctx, chromedp.Sleep(2100*time.Millisecond)); err != nil {
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
	if _, err := runStale(ctx, chromedp.Click(chromedp.CSS("button.claim"))); err != nil {
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
	v, err := runStale(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// runStale runs a, again when it failed on a node of the document before
// a navigation: a form's POST and redirect commit the new page in
// Chromium before chromedp has fetched its document, and a query in
// between names a node of the old one ("No node with given id found").
// That error comes before the action acts (finding the node is its first
// step), so running it again does it once.
func runStale[T any](ctx context.Context, a chromedp.Action[T]) (T, error) {
	for deadline := time.Now().Add(3 * time.Second); ; {
		v, err := chromedp.Run(ctx, a)
		if err == nil || !staleNode(err) || time.Now().After(deadline) {
			return v, err
		}
		time.Sleep(50 * time.Millisecond) // the browser's document catching up, not a timer
	}
}

// staleNode reports an error of a node id chromedp held from the document
// before a navigation.
func staleNode(err error) bool {
	m := err.Error()
	return strings.Contains(m, "No node with given id found") || strings.Contains(m, "Could not find node with given id")
}

// waitFor polls the page until js is true (the page's own refresh or a
// form's navigation), failing after ten seconds.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	// A page still being parsed can show the element waited for before
	// the ones after it exist (the form's error sits above its fields),
	// so the wait holds until the document is whole.
	whole := `document.readyState === "complete" && (` + js + `)`
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](whole)); err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond) // polling the browser, not a timer
	}
	page, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	t.Fatalf("waited 10 s for %s; the page says:\n%s", what, page)
}

// TestDashboardInBrowser is the whole loop through pages: staff sign in
// and tap "Cancelled" on a booked slot; the customer, in a browser of
// their own, opens the claim link, sees the countdown and claims; the
// staff dashboard shows the slot booked again without a reload.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	sb.slot(`{"service":"haircut","staff":"Ben","starts_at":"2026-12-02T15:00:00Z","ends_at":"2026-12-02T15:45:00Z"}`)
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)

	staff := browser(t)
	shots := os.Getenv("NEXTUP_SCREENSHOTS")
	if _, err := runStale(staff, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	if _, err := runStale(staff, chromedp.Navigate(sb.srv.URL+"/dash")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, staff, "the sign-in page", `location.pathname === "/login"`)
	if shots != "" {
		_ = os.WriteFile(filepath.Join(shots, "login.png"), run(t, staff, chromedp.FullScreenshot(100)), 0o644)
	}
	for _, step := range []chromedp.Action[struct{}]{
		chromedp.SendKeys(chromedp.ID("email"), sb.email),
		chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")),
	} {
		if _, err := runStale(staff, step); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, staff, "the dashboard", `location.pathname === "/dash"`)
	// Staff add tomorrow's 2 pm haircut with Ana, booked already.
	for _, step := range []chromedp.Action[struct{}]{
		chromedp.SendKeys(chromedp.ID("service"), "haircut"),
		chromedp.SendKeys(chromedp.ID("staff"), "Ana"),
	} {
		if _, err := runStale(staff, step); err != nil {
			t.Fatal(err)
		}
	}
	run(t, staff, chromedp.Evaluate[string](`document.getElementById("date").value = "2026-12-02"; document.getElementById("time").value = "14:00"; document.getElementById("minutes").value = "45"`))
	if _, err := runStale(staff, chromedp.Click(chromedp.CSS(`form[action="/dash/slots"] button`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, staff, "the new slot", `!!document.getElementById("notice") && document.getElementById("notice").textContent.startsWith("Slot added")`)
	var slots struct {
		Slots []map[string]any `json:"slots"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+sb.bid+"/slots", sb.key, ""), 200, &slots)
	sid := ""
	for _, sl := range slots.Slots {
		if sl["staff"] == "Ana" && sl["starts_at"] == "2026-12-02T14:00:00Z" && sl["state"] == "full" {
			sid = sl["id"].(string)
		}
	}
	if sid == "" {
		t.Fatalf("the slot added in the browser is not there: %v", slots.Slots)
	}
	if _, err := runStale(staff, chromedp.Click(chromedp.CSS(`#slot-`+sid+` button`))); err != nil { // the first: "Cancelled"
		t.Fatal(err)
	}
	waitFor(t, staff, "the offer to Ann", `!!document.getElementById("notice") && document.querySelector("#slot-`+sid+`").dataset.state === "offered"`)
	notice := run(t, staff, chromedp.Text(chromedp.ID("notice")))
	if !strings.Contains(notice, "Offered to the next person") {
		t.Fatalf("notice after Cancelled: %q", notice)
	}
	if shots != "" {
		_ = os.WriteFile(filepath.Join(shots, "dashboard.png"), run(t, staff, chromedp.FullScreenshot(100)), 0o644)
	}

	// The customer's phone, a browser of its own.
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	sb.must(sb.do("GET", "/v1/businesses/"+sb.bid+"/messages?to=ann@example.com", sb.key, ""), 200, &msgs)
	link := msgs.Messages[0]["claim_url"].(string)
	customer := browser(t)
	if _, err := runStale(customer, chromedp.Navigate(sb.srv.URL+link[strings.Index(link, "/c/"):])); err != nil {
		t.Fatal(err)
	}
	if c := run(t, customer, chromedp.Text(chromedp.ID("countdown"))); !strings.Contains(c, "left") {
		t.Fatalf("countdown %q", c)
	}
	if _, err := runStale(customer, chromedp.Click(chromedp.CSS("button.claim"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, customer, "the booked page", `document.querySelector("h1").textContent.includes("booked")`)

	// The staff page catches up by itself.
	waitFor(t, staff, "the slot booked again without a reload",
		`document.querySelector("#slot-`+sid+`").dataset.state === "full" && !!document.getElementById("no-offers")`)
	if !strings.Contains(run(t, staff, chromedp.Text(chromedp.ID("notice"))), "Offered to the next person") {
		t.Fatal("the page was reloaded: the notice of the release is gone")
	}
	// The slot's story, in words.
	if _, err := runStale(staff, chromedp.Navigate(sb.srv.URL+"/dash/slots/"+sid)); err != nil {
		t.Fatal(err)
	}
	story := run(t, staff, chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"Seats freed: cancellation.", "Offered to Ann.", "Ann opened the link.", "Ann claimed it: booked."} {
		if !strings.Contains(story, want) {
			t.Errorf("the story lacks %q:\n%s", want, story)
		}
	}
	if shots != "" {
		_ = os.WriteFile(filepath.Join(shots, "story.png"), run(t, staff, chromedp.FullScreenshot(100)), 0o644)
	}
	// The waitlist, in fair order, with how the order works.
	for _, body := range []string{`{"name":"Bob Moss","email":"bob@example.com","service":"haircut","staff":"Ben"}`,
		`{"name":"Cat Diaz","phone":"+447700900321","service":"haircut","party_size":2,"earliest":"2026-12-03","latest":"2026-12-09"}`,
		`{"name":"Dev Shah","email":"dev@example.com","service":"haircut","priority":true}`} {
		sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, body), 201, nil)
	}
	if _, err := runStale(staff, chromedp.Navigate(sb.srv.URL+"/dash/waitlist")); err != nil {
		t.Fatal(err)
	}
	if h := run(t, staff, chromedp.Text(chromedp.CSS("main"))); !strings.Contains(h, "How the order works") || strings.Index(h, "Dev Shah") > strings.Index(h, "Bob Moss") {
		t.Fatalf("waitlist page:\n%s", h)
	}
	if shots != "" {
		_ = os.WriteFile(filepath.Join(shots, "waitlist.png"), run(t, staff, chromedp.FullScreenshot(100)), 0o644)
	}
}

// TestJoinAndLeaveInBrowser is the customer's side on a phone: the join
// form with a mistake (what was typed stays), the emailed confirmation,
// the status page; then, holding an offer, leaving from the status page
// rolls the offer on; and a stale claim link shows the expired page.
func TestJoinAndLeaveInBrowser(t *testing.T) {
	t.Parallel()
	a := setupJoin(t)
	sid := a.slot(`{"service":"colour","staff":"Ana","starts_at":"2026-12-02T14:00:00Z","ends_at":"2026-12-02T15:30:00Z"}`)["id"].(string)
	ctx := browser(t)
	shots := os.Getenv("NEXTUP_SCREENSHOTS")
	if _, err := runStale(ctx, chromedp.Navigate(a.srv.URL+"/b/corner-cuts/join")); err != nil {
		t.Fatal(err)
	}
	for _, step := range []chromedp.Action[struct{}]{
		chromedp.SendKeys(chromedp.ID("name"), "Maya Patel"),
		chromedp.SendKeys(chromedp.ID("service"), "colour"), // a select takes typing as a person does it
		chromedp.SendKeys(chromedp.ID("email"), "maya@"),
		chromedp.Click(chromedp.CSS("button.claim")),
	} {
		if _, err := runStale(ctx, step); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "the form's error", `!!document.getElementById("form-error")`)
	if v := run(t, ctx, chromedp.Evaluate[string](`document.getElementById("name").value + "|" + document.getElementById("service").value + "|" + document.getElementById("email").value`)); v != "Maya Patel|colour|maya@" {
		t.Fatalf("the form after a mistake kept %q", v)
	}
	if shots != "" {
		_ = os.WriteFile(filepath.Join(shots, "join-error.png"), run(t, ctx, chromedp.FullScreenshot(100)), 0o644)
	}
	// She corrects the address (select it all and type it again).
	run(t, ctx, chromedp.Evaluate[string](`document.getElementById("email").value = ""`))
	for _, step := range []chromedp.Action[struct{}]{
		chromedp.SendKeys(chromedp.ID("email"), "maya@example.com"),
		chromedp.Click(chromedp.CSS("button.claim")),
	} {
		if _, err := runStale(ctx, step); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "check your email", `document.querySelector("h1").textContent === "Check your email"`)
	link := confirmLink.FindStringSubmatch(a.outbox("join_confirm")[0].Body)[1]
	if _, err := runStale(ctx, chromedp.Navigate(a.srv.URL+link)); err != nil {
		t.Fatal(err)
	}
	if _, err := runStale(ctx, chromedp.Click(chromedp.CSS("button.claim"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the status page", `location.pathname.startsWith("/s/") && document.getElementById("state").textContent.includes("number 1 in line for colour")`)
	status := run(t, ctx, chromedp.Evaluate[string](`location.pathname`))
	if shots != "" {
		_ = os.WriteFile(filepath.Join(shots, "status.png"), run(t, ctx, chromedp.FullScreenshot(100)), 0o644)
	}

	// Bob joins behind her; the colour slot frees up and goes to Maya.
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Bob","email":"bob@example.com","service":"colour"}`), 201, nil)
	offerID, _ := a.offerFor(sid)
	if _, err := runStale(ctx, chromedp.Navigate(a.srv.URL+status)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "her offer on the status page", `document.querySelector("h1").textContent === "You have an offer"`)
	if _, err := runStale(ctx, chromedp.Click(chromedp.CSS(`form[action$="/leave"] button`))); err != nil { // Leave the waitlist
		t.Fatal(err)
	}
	waitFor(t, ctx, "the left page", `document.querySelector("h1").textContent === "You left the waitlist"`)
	var sl map[string]any
	a.must(a.do("GET", "/v1/slots/"+sid, a.key, ""), 200, &sl)
	offers := sl["offers"].([]any)
	if len(offers) != 2 || offers[0].(map[string]any)["id"] != offerID || offers[0].(map[string]any)["state"] != "cancelled" ||
		offers[1].(map[string]any)["state"] != "offered" {
		t.Fatalf("after Maya left, the slot's offers are %v", offers)
	}
	// Bob does not answer in time: his link, opened late, says so.
	bobOffer := offers[1].(map[string]any)["id"].(string)
	tok := a.token(bobOffer)
	a.clock.Advance(11 * time.Minute)
	if _, err := runStale(ctx, chromedp.Navigate(a.srv.URL+"/c/"+tok)); err != nil {
		t.Fatal(err)
	}
	if h := run(t, ctx, chromedp.Text(chromedp.CSS("h1"))); h != "This offer has expired" {
		t.Fatalf("a stale claim link shows %q", h)
	}
}

// TestBrowserSeesCSPViolations keeps browser's check honest: a page with
// an inline script and an inline style under nextup's page CSP is
// reported twice by Chromium, and neither runs.
func TestBrowserSeesCSPViolations(t *testing.T) {
	t.Parallel()
	ctx, csp := newBrowser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", web.PageCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><title>t</title><p id="p" style="color:red">x</p><script>document.title="ran"</script>`)
	}))
	t.Cleanup(srv.Close)
	if _, err := runStale(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(csp.violations()) < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // the browser's log catching up, not a timer
	}
	if v := csp.violations(); len(v) < 2 || !strings.Contains(strings.Join(v, "\n"), "script") || !strings.Contains(strings.Join(v, "\n"), "style") {
		t.Fatalf("Chromium reported %q, want the inline script and the inline style", v)
	}
	if title := run(t, ctx, chromedp.Evaluate[string](`document.title`)); title != "t" {
		t.Errorf("the inline script ran: the title is %q", title)
	}
}
