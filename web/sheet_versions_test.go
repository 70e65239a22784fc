package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/option"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/sheet"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// googleSheet is a Google Sheet behind the Sheets v4 wire format the
// official client speaks: values.get of spreadsheet sheet-1 (from A1 of
// its first tab) and values.batchUpdate, applied to its rows. With a
// code, it reads as having one more row below its rows, whose only cell
// is the code (the owner's connection code).
type googleSheet struct {
	mu     sync.Mutex
	rows   [][]string
	code   string
	writes []string // "A1 range=value" of every cell written
	srv    *httptest.Server
}

func newGoogleSheet(t testing.TB, rows ...[]string) *googleSheet {
	g := &googleSheet{rows: rows}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v4/spreadsheets/sheet-1/values/"):
			values := make([][]any, len(g.rows))
			for i, row := range g.rows {
				for _, c := range row {
					values[i] = append(values[i], c)
				}
			}
			if g.code != "" {
				values = append(values, []any{g.code})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"range": "Sheet1!A1:Z1000", "majorDimension": "ROWS", "values": values})
		case r.Method == http.MethodPost && r.URL.Path == "/v4/spreadsheets/sheet-1/values:batchUpdate":
			var body struct {
				Data []struct {
					Range  string     `json:"range"`
					Values [][]string `json:"values"`
				} `json:"data"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			for _, d := range body.Data {
				g.writes = append(g.writes, d.Range+"="+d.Values[0][0])
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"spreadsheetId": "sheet-1"})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`))
		}
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *googleSheet) set(rows ...[]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rows = rows
}

// setCode puts a connection code in the sheet ("" takes it out).
func (g *googleSheet) setCode(code string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.code = code
}

// codeOf is the connection code of business bid.
func codeOf(t testing.TB, svc *waitlist.Service, bid string) string {
	t.Helper()
	biz, err := svc.GetBusiness(context.Background(), bid)
	if err != nil {
		t.Fatal(err)
	}
	return waitlist.SheetCode(biz)
}

// reader is a sheet reader that reaches g through the official client.
func (g *googleSheet) reader(t testing.TB) *sheet.Reader {
	svc, err := sheet.NewSheets(context.Background(), option.WithEndpoint(g.srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return &sheet.Reader{Sheets: svc}
}

// The versions of a Google Sheet over the API, every exchange held to
// openapi.json: a version opens with its rows, two versions compare row by
// row, a read that lost most rows at once holds them back (held_back)
// until they are confirmed, and the owner's column mapping is kept on the
// sheet's settings.
func TestSheetVersionEndpoints(t *testing.T) {
	t.Parallel()
	g := newGoogleSheet(t, []string{"Name", "Email", "Service", "Party"},
		[]string{"Ann", "ann@example.com", "haircut", "1"},
		[]string{"Bob", "bob@example.com", "haircut", "2"},
		[]string{"Cy", "cy@example.com", "haircut", "1"},
		[]string{"Dee", "dee@example.com", "haircut", "1"})
	a := setup(t, func(s *web.Server) { s.Svc.Sheets = g.reader(t) })
	var set map[string]any
	a.must(a.do("PUT", "/v1/businesses/"+a.bid+"/sheet", a.key, `{"url":"https://docs.google.com/spreadsheets/d/sheet-1/edit#gid=0",
		"columns":[{"header":"Name","field":"name"},{"header":"Email","field":"email"},{"header":"Service","field":"service"},{"header":"Party","field":"party_size"}]}`), 200, &set)
	if s := set["sheet"].(map[string]any); s["spreadsheet_id"] != "sheet-1" || len(s["columns"].([]any)) != 4 {
		t.Fatalf("sheet %v", set)
	}
	// Not read until the sheet holds the business's connection code,
	// which the answer gives.
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 409, "sheet_not_verified")
	code, _ := set["connection_code"].(string)
	if !strings.HasPrefix(code, "nextup-") {
		t.Fatalf("connection code %q", code)
	}
	g.setCode(code)
	a.problem(a.do("PUT", "/v1/businesses/"+a.bid+"/sheet", a.key, `{"spreadsheet_id":"sheet-1","columns":[{"header":"Name","field":"name"}]}`), 400, "validation_failed")
	var first, second map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 200, &first)
	g.set([]string{"Name", "Email", "Service", "Party"},
		[]string{"Bob", "bob@example.com", "haircut", "3"},
		[]string{"Cy", "cy@example.com", "haircut", "1"},
		[]string{"Dee", "dee@example.com", "haircut", "1"},
		[]string{"Eve", "eve@example.com", "haircut", "1"})
	a.clock.Advance(60e9)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 200, &second)
	v2 := second["version"].(map[string]any)
	if v2["missing"].([]any)[0].(map[string]any)["name"] != "Ann" || v2["held_back"] != float64(0) {
		t.Fatalf("the second version: %v", v2)
	}
	vid := v2["id"].(string)

	var v map[string]any
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/sheet/versions/"+vid, a.key, ""), 200, &v)
	content := v["content"].(map[string]any)
	rows := content["rows"].([]any)
	// (Row 6 holds the connection code, read as an empty cell.)
	if v["id"] != vid || content["header_row"] != float64(1) || len(rows) != 5 ||
		rows[0].(map[string]any)["key"] != "email:bob@example.com|haircut" || rows[0].(map[string]any)["row"] != float64(2) ||
		slices.ContainsFunc(rows[4].(map[string]any)["cells"].([]any), func(c any) bool { return c != "" }) {
		t.Fatalf("version with rows: %v", v)
	}
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/sheet/versions/shv_nope", a.key, ""), 404, "not_found")

	var d struct {
		From, To                map[string]any
		Columns                 []string
		Added, Removed, Changed []struct {
			Key            string
			FromRow, ToRow int
			Cells          []struct {
				Before, After string
				Changed       bool
			}
		}
		Same int
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/sheet/versions/"+vid+"/diff", a.key, ""), 200, &d)
	if d.From["id"] != first["version"].(map[string]any)["id"] || d.To["id"] != vid || d.Same != 2 ||
		len(d.Added) != 1 || d.Added[0].Cells[0].After != "Eve" || len(d.Removed) != 1 || d.Removed[0].Cells[0].Before != "Ann" ||
		len(d.Changed) != 1 || d.Changed[0].Key != "email:bob@example.com|haircut" || !d.Changed[0].Cells[3].Changed || d.Changed[0].Cells[0].Changed {
		t.Fatalf("diff %+v", d)
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/sheet/versions/"+vid+"/diff?from="+vid, a.key, ""), 200, &d)
	if len(d.Added)+len(d.Removed)+len(d.Changed) != 0 || d.Same != 4 {
		t.Fatalf("a version against itself: %+v", d)
	}
	// Most rows vanish at once: held back, nothing withdrawn, until confirmed.
	g.set([]string{"Name", "Email", "Service", "Party"}, []string{"Bob", "bob@example.com", "haircut", "3"})
	a.clock.Advance(60e9)
	var third map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 200, &third)
	v3 := third["version"].(map[string]any)
	if v3["held_back"] != float64(4) {
		t.Fatalf("a mass vanish: %v", v3)
	}
	var list struct{ Entries []map[string]any }
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/waitlist", a.key, ""), 200, &list)
	if len(list.Entries) != 5 {
		t.Fatalf("%d waiting after a mass vanish", len(list.Entries))
	}
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/sheet/versions/"+vid+":confirm", a.key, ""), 409, "conflict")
	var confirmed map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/sheet/versions/"+v3["id"].(string)+":confirm", a.key, ""), 200, &confirmed)
	if cv := confirmed["version"].(map[string]any); cv["held_back"] != float64(0) || len(cv["missing"].([]any)) != 4 {
		t.Fatalf("confirmed %v", confirmed)
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/waitlist", a.key, ""), 200, &list)
	if len(list.Entries) != 1 || list.Entries[0]["name"] != "Bob" {
		t.Fatalf("after confirming: %v", list.Entries)
	}
	var vs struct{ Versions []map[string]any }
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/sheet/versions", a.key, ""), 200, &vs)
	if len(vs.Versions) != 4 {
		t.Fatalf("%d versions", len(vs.Versions))
	}
}

// The dashboard's sheet page over HTTP: a pasted Google Sheets link shows
// the sheet's columns with the field each would fill; saving with one
// column changed connects the sheet with that mapping and reads it; Read
// now, a version's page with its rows and what changed, and Stop. The
// page speaks the owner's words, and a form without its token is refused.
func TestDashSheetPage(t *testing.T) {
	t.Parallel()
	g := newGoogleSheet(t, []string{"Name", "Email", "Treatment", "Guests", "Comments"},
		[]string{"Ann", "ann@example.com", "haircut", "2", "mornings"})
	sb := setupStaff(t)
	sb.svc.Sheets = g.reader(t)
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)
	code := codeOf(t, sb.svc, sb.bid)

	p := b.do("GET", "/dash/settings", nil)
	if !strings.Contains(p.body, `href="/dash/sheet"`) {
		t.Fatal("no way from the settings to the sheet page")
	}
	p = b.do("GET", "/dash/sheet", nil)
	if p.status != 200 || !strings.Contains(p.body, `id="link-form"`) || strings.Contains(p.body, `id="mapping"`) ||
		!strings.Contains(p.body, `<code class="sheet-code" id="sheet-code">`+code+`</code>`) {
		t.Fatalf("the sheet page, no sheet yet: %d\n%s", p.status, p.body)
	}
	link := "https://docs.google.com/spreadsheets/d/sheet-1/edit#gid=0"
	// The sheet does not hold the code yet: no column shown, and the page
	// says what to do.
	p = b.do("GET", "/dash/sheet?link="+url.QueryEscape(link), nil)
	if !strings.Contains(p.body, `id="not-verified"`) || strings.Contains(p.body, `id="mapping"`) || strings.Contains(p.body, "Treatment") {
		t.Fatalf("the columns of a sheet without the code:\n%s", p.body)
	}
	g.setCode(code)
	p = b.do("GET", "/dash/sheet?link="+url.QueryEscape(link), nil)
	for _, want := range []string{`id="mapping"`, `name="header_2" value="Treatment"`, `<option value="service" selected>Service</option>`,
		`<option value="party_size" selected>Party size</option>`, `<option value="notes" selected>Notes</option>`, "e.g. mornings",
		`value="https://docs.google.com/spreadsheets/d/sheet-1/edit"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the columns of a pasted link lack %s", want)
		}
	}
	for _, dev := range []string{"spreadsheet_id", "PUT ", "/v1/", "every_seconds", "party_size<", "googleapi"} {
		if strings.Contains(p.body, dev) {
			t.Errorf("the page shows %q", dev)
		}
	}
	form := url.Values{"csrf": {p.csrf(t)}, "link": {"https://docs.google.com/spreadsheets/d/sheet-1/edit"}, "tab": {""}, "every_minutes": {"10"},
		"columns": {"5"}, "header_0": {"Name"}, "field_0": {"name"}, "header_1": {"Email"}, "field_1": {"email"},
		"header_2": {"Treatment"}, "field_2": {"service"}, "header_3": {"Guests"}, "field_3": {"party_size"},
		"header_4": {"Comments"}, "field_4": {""}} // the owner drops the comments
	if r := b.do("POST", "/dash/sheet", url.Values{"link": {link}}); r.status != http.StatusForbidden {
		t.Errorf("a save without its form token: %d", r.status)
	}
	r := b.do("POST", "/dash/sheet", form)
	if r.status != http.StatusSeeOther || !strings.Contains(r.location, "notice=") {
		t.Fatalf("save: %d %q\n%s", r.status, r.location, r.body)
	}
	biz, err := sb.svc.GetBusiness(context.Background(), sb.bid)
	if err != nil {
		t.Fatal(err)
	}
	c := biz.Profile.Sheet
	if c == nil || c.SpreadsheetID != "sheet-1" || c.EverySeconds != 600 || len(c.Columns) != 5 || c.Columns[4] != (nextup.SheetColumn{Header: "Comments"}) {
		t.Fatalf("the sheet saved: %+v", c)
	}
	// Saving read the sheet; the mirror's timer reads it next an interval
	// on, not at once beside that read.
	var ts []nextup.Timer
	if err := sb.store.Read(context.Background(), func(tx nextup.Tx) error {
		ts, err = tx.TimerList(context.Background(), nextup.TimerFilter{Kind: nextup.TimerSheetSync, PendingOnly: true})
		return err
	}); err != nil || len(ts) != 1 || !ts[0].DueAt.Equal(sb.clock.Now().Add(10*time.Minute)) {
		t.Fatalf("the sheet's timer after saving: %+v %v", ts, err)
	}
	p = b.do("GET", r.location, nil)
	if !strings.Contains(p.body, "Read now: 1 new on the list.") || !strings.Contains(p.body, `id="connected"`) ||
		!strings.Contains(p.body, "Read every 10 minutes") || !strings.Contains(p.body, "Bookings are marked in the sheet") {
		t.Fatalf("after saving:\n%s", p.body)
	}
	// The saved mapping is what the page shows now: Comments not used.
	if !strings.Contains(p.body, `<select id="field-4" name="field_4"><option value="" selected>not used</option>`) {
		t.Errorf("the saved mapping is not shown:\n%s", p.body)
	}
	g.set([]string{"Name", "Email", "Treatment", "Guests", "Comments"},
		[]string{"Ann", "ann@example.com", "haircut", "3", "mornings"},
		[]string{"Bo", "bo@example.com", "haircut", "1", ""})
	sb.clock.Advance(60e9)
	r = b.do("POST", "/dash/sheet/sync", url.Values{"csrf": {p.csrf(t)}})
	p = b.do("GET", r.location, nil)
	if !strings.Contains(p.body, "Read: 1 new on the list, 1 updated.") {
		t.Fatalf("read now:\n%s", p.body)
	}
	vs, err := sb.svc.SheetVersions(context.Background(), sb.bid)
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions %+v %v", vs, err)
	}
	if !strings.Contains(p.body, `href="/dash/sheet/versions/`+vs[0].ID+`"`) || !strings.Contains(p.body, `href="/dash/sheet/versions/`+vs[0].ID+`#changes"`) {
		t.Errorf("the versions are not listed:\n%s", p.body)
	}
	p = b.do("GET", "/dash/sheet/versions/"+vs[0].ID, nil)
	for _, want := range []string{`<tr class="added" data-kind="added"><td class="kind">added</td><td data-label="Row">3</td><td data-label="Name">Bo</td>`,
		`<td data-label="Guests" class="changed"><del>2</del>3</td>`, "0 rows are the same", `id="rows"`, `<th>Comments</th>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the version page lacks %s:\n%s", want, p.body)
		}
	}
	if p := b.do("GET", "/dash/sheet/versions/shv_nope", nil); p.status != http.StatusNotFound {
		t.Errorf("an unknown version: %d", p.status)
	}
	r = b.do("POST", "/dash/sheet/stop", url.Values{"csrf": {p.csrf(t)}})
	p = b.do("GET", r.location, nil)
	if !strings.Contains(p.body, "no longer read") || strings.Contains(p.body, `id="connected"`) {
		t.Fatalf("after stopping:\n%s", p.body)
	}
	if biz, _ := sb.svc.GetBusiness(context.Background(), sb.bid); biz.Profile.Sheet != nil {
		t.Error("the sheet is still set")
	}
	// A sheet published as CSV: read, and said to be read only.
	pub := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("Name,Email,Service\nCy,cy@example.com,haircut\n"))
	}))
	defer pub.Close()
	rd := g.reader(t)
	rd.HTTP = pub.Client()
	sb.svc.Sheets = rd
	p = b.do("GET", "/dash/sheet?link="+url.QueryEscape(pub.URL+"/pub.csv"), nil)
	if !strings.Contains(p.body, "can only be read: bookings will not be marked in it") || !strings.Contains(p.body, `<option value="email" selected>Email</option>`) {
		t.Fatalf("a CSV link's columns:\n%s", p.body)
	}
	r = b.do("POST", "/dash/sheet", url.Values{"csrf": {p.csrf(t)}, "link": {pub.URL + "/pub.csv"}, "every_minutes": {"5"}, "columns": {"3"},
		"header_0": {"Name"}, "field_0": {"name"}, "header_1": {"Email"}, "field_1": {"email"}, "header_2": {"Service"}, "field_2": {"service"}})
	p = b.do("GET", r.location, nil)
	// (Ann and Bo came from the other sheet: not in this one, they are
	// held back for the owner, not withdrawn.)
	if !strings.Contains(p.body, "Read now: 1 new on the list, held back: 2 rows missing.") || !strings.Contains(p.body, `id="held"`) ||
		!strings.Contains(p.body, "it can only be read, so bookings are not marked in it") {
		t.Fatalf("a CSV sheet connected:\n%s", p.body)
	}
}
