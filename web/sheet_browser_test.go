package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/nextup-dev/nextup"
)

// TestDashSheetInBrowser: on a phone, the owner signs in, pastes the link
// of a Google Sheet (served by a local fake through the official client),
// sees its columns, maps the one nextup could not tell ("Visit" is the
// service), saves — the sheet is read and its people are on the list —
// reads it again after an edit, and opens that version: its rows and what
// changed, in tables that scroll inside their box, never the page.
func TestDashSheetInBrowser(t *testing.T) {
	t.Parallel()
	g := newGoogleSheet(t, []string{"Name", "Email", "Visit", "Party"},
		[]string{"Ann Lee", "ann@example.com", "haircut", "2"},
		[]string{"Bo Diaz", "bo@example.com", "haircut", "1"})
	sb := setupStaff(t)
	sb.svc.Sheets = g.reader(t)
	g.setCode(codeOf(t, sb.svc, sb.bid))
	ctx := browser(t)
	shots := os.Getenv("NEXTUP_SCREENSHOTS")
	shot := func(name string) {
		if shots != "" {
			_ = os.WriteFile(filepath.Join(shots, name+".png"), run(t, ctx, chromedp.FullScreenshot(100)), 0o644)
		}
	}
	fits := func(where string) {
		t.Helper()
		if over := run(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); over {
			t.Errorf("%s is wider than a 390 px phone: %d px", where, run(t, ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)))
		}
	}
	do := func(actions ...chromedp.Action[struct{}]) {
		t.Helper()
		for _, a := range actions {
			if _, err := runStale(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(sb.srv.URL+"/dash/sheet"))
	waitFor(t, ctx, "the sign-in page", `location.pathname === "/login"`)
	do(chromedp.SendKeys(chromedp.ID("email"), sb.email), chromedp.SendKeys(chromedp.ID("password"), sb.pass),
		chromedp.Click(chromedp.CSS("button.primary")))
	waitFor(t, ctx, "the sheet page", `location.pathname === "/dash/sheet" && !!document.getElementById("link-form")`)
	fits("the sheet page")

	do(chromedp.SendKeys(chromedp.ID("link"), "https://docs.google.com/spreadsheets/d/sheet-1/edit#gid=0"),
		chromedp.Click(chromedp.ID("show-columns")))
	waitFor(t, ctx, "the sheet's columns", `!!document.getElementById("mapping")`)
	got := run(t, ctx, chromedp.Evaluate[string](`[0,1,2,3].map(i => document.getElementById("field-" + i).value).join(",")`))
	if got != "name,email,,party_size" {
		t.Fatalf("the columns as nextup reads them: %q", got)
	}
	fits("the sheet's columns")
	shot("sheet-columns-phone")
	// "Visit" is the service: a select takes typing as a person does it.
	do(chromedp.SendKeys(chromedp.ID("field-2"), "Service"))
	if v := run(t, ctx, chromedp.Evaluate[string](`document.getElementById("field-2").value`)); v != "service" {
		t.Fatalf("the Visit column's field after choosing: %q", v)
	}
	do(chromedp.Click(chromedp.ID("save-sheet")))
	waitFor(t, ctx, "the sheet read", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("Read now: 2 new on the list")`)
	fits("the connected sheet")
	shot("sheet-connected-phone")
	list, err := sb.svc.ListEntries(context.Background(), nextup.EntryFilter{BusinessID: sb.bid})
	if err != nil || len(list) != 2 || list[0].Service != "haircut" || list[0].PartySize != 2 {
		t.Fatalf("the waitlist after saving: %+v %v", list, err)
	}
	biz, _ := sb.svc.GetBusiness(context.Background(), sb.bid)
	if c := biz.Profile.Sheet; c == nil || len(c.Columns) != 4 || c.Columns[2] != (nextup.SheetColumn{Header: "Visit", Field: "service"}) {
		t.Fatalf("the mapping saved: %+v", biz.Profile.Sheet)
	}

	// Bo's party grows; Read now.
	g.set([]string{"Name", "Email", "Visit", "Party"},
		[]string{"Ann Lee", "ann@example.com", "haircut", "2"},
		[]string{"Bo Diaz", "bo@example.com", "haircut", "4"})
	sb.clock.Advance(time.Minute)
	do(chromedp.Click(chromedp.ID("read-now")))
	waitFor(t, ctx, "the second read", `!!document.getElementById("notice") && document.getElementById("notice").textContent.includes("Read: 1 updated")`)
	if n := run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#versions li").length`)); n != 2 {
		t.Fatalf("%d versions listed", n)
	}
	do(chromedp.Click(chromedp.CSS("#versions li a")))
	waitFor(t, ctx, "the version page", `location.pathname.startsWith("/dash/sheet/versions/") && !!document.getElementById("diff")`)
	changed := run(t, ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#diff tr.changed td.changed")).map(td => td.textContent).join("|")`))
	if changed != "14" { // the old value struck through, then the new
		t.Errorf("the changed cells: %q", changed)
	}
	if rows := run(t, ctx, chromedp.Text(chromedp.ID("rows"))); !strings.Contains(rows, "Bo Diaz") || !strings.Contains(rows, "Ann Lee") {
		t.Errorf("the version's rows: %q", rows)
	}
	fits("the version page")
	shot("sheet-version-phone")
}
