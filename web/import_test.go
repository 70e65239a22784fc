package web_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// postCSV posts a file to the import endpoint with the given Content-Type
// and optional Idempotency-Key.
func (a *api) postCSV(path, contentType, idem, body string) resp {
	a.t.Helper()
	req, err := http.NewRequest("POST", a.srv.URL+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", contentType)
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

type importOut struct {
	Imported, Updated, Unchanged int
	Rejected                     []struct {
		Row      int
		Problems []struct{ Field, Message string }
	}
	Rows []struct {
		Row     int
		Outcome string
		EntryID string `json:"entry_id"`
	}
	IgnoredColumns []string `json:"ignored_columns"`
}

func TestImportCSVOverHTTP(t *testing.T) {
	t.Parallel()
	a := setup(t)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"country":"US"}`), 200, nil)
	path := "/v1/businesses/" + a.bid + "/waitlist:import"
	// A US sheet: month-first dates, a row with a line break in a cell, a
	// column nextup does not know, and a bad row. Bigger than the server's
	// JSON body limit (8 KiB here), as a real file is.
	var b strings.Builder
	b.WriteString("Name,Email,Phone,Service,Party size,Date,Notes,Loyalty card\n")
	b.WriteString("Ann,ann@example.com,(415) 555-2671,haircut,2,12/24/2026,\"call first\nthen text\",yes\n")
	b.WriteString("Ben,ben@example.com,,haircut,,13/24/2026,,\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "Guest %d,guest%d@example.com,,haircut,1,12/%d/2026,,\n", i, i, 2+i%28)
	}
	file := b.String()
	if len(file) < 8<<10 {
		t.Fatalf("the file is only %d bytes", len(file))
	}
	var out importOut
	a.must(a.postCSV(path, "text/csv; charset=utf-8", "", file), 200, &out)
	if out.Imported != 201 || out.Updated != 0 || out.Unchanged != 0 || len(out.Rejected) != 1 || len(out.Rows) != 201 {
		t.Fatalf("%+v", out)
	}
	if r := out.Rejected[0]; r.Row != 3 || // the quoted line break in row 2 starts no row
		r.Problems[0].Field != "earliest" || !strings.Contains(r.Problems[0].Message, "month first") {
		t.Errorf("rejected %+v", r)
	}
	if len(out.IgnoredColumns) != 1 || out.IgnoredColumns[0] != "Loyalty card" {
		t.Errorf("ignored columns %q", out.IgnoredColumns)
	}
	if out.Rows[0].Row != 2 || out.Rows[0].Outcome != "imported" {
		t.Errorf("rows[0] %+v", out.Rows[0])
	}
	var ann map[string]any
	a.must(a.do("GET", "/v1/waitlist/"+out.Rows[0].EntryID, a.key, ""), 200, &ann)
	if ann["name"] != "Ann" || ann["phone"] != "+14155552671" || ann["latest"] != "2026-12-24T23:59:59.999999Z" {
		t.Errorf("Ann: %v", ann)
	}

	// The same file again changes nothing, whatever type it comes as.
	a.must(a.postCSV(path, "application/vnd.ms-excel", "", file), 200, &out)
	if out.Imported != 0 || out.Updated != 0 || out.Unchanged != 201 || len(out.Rejected) != 1 {
		t.Fatalf("again: %+v", out)
	}

	// An Idempotency-Key replays the first answer, even for a big file.
	var first, replay importOut
	a.must(a.postCSV(path, "text/csv", "import-1", strings.Replace(file, "Ann,", "Ann Lee,", 1)), 200, &first)
	r := a.postCSV(path, "text/csv", "import-1", strings.Replace(file, "Ann,", "Ann Lee,", 1))
	a.must(r, 200, &replay)
	if first.Updated != 1 || replay.Updated != 1 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("first %+v, replay %+v", first, replay)
	}

	// Problems with the request itself.
	a.problem(a.postCSV(path, "application/json", "", `{"rows":[]}`), 400, "validation_failed")
	a.problem(a.postCSV(path+"?date_order=ymd", "text/csv", "", file), 400, "validation_failed")
	p := a.problem(a.postCSV(path, "text/csv", "", "just,some,words\n1,2,3\n"), 400, "validation_failed")
	if errs, _ := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["field"] != "file" {
		t.Errorf("no header: %v", p)
	}
	a.problem(a.postCSV(path, "text/csv", "", strings.Repeat("x", 2<<20+1)), 413, "too_large")
	a.problem(a.postCSV(path, "text/csv", "big", strings.Repeat("x", 2<<20+1)), 413, "too_large")
	var many strings.Builder
	many.WriteString("Name,Email\n")
	for i := 0; i <= 5000; i++ {
		fmt.Fprintf(&many, "P,p%d@example.com\n", i)
	}
	p = a.problem(a.postCSV(path, "text/csv", "", many.String()), 413, "too_large")
	if !strings.Contains(p["detail"].(string), "5000 rows") {
		t.Errorf("too many rows: %v", p)
	}
	// Another business's id is not found; no key is unauthorized.
	r = a.do("POST", "/v1/businesses/biz_other/waitlist:import", a.key, file)
	a.problem(r, 404, "not_found")
	a.problem(a.do("POST", path, "", file), 401, "unauthorized")
}

// TestImportDateOrderOverride: ?date_order=mdy reads a GB business's file
// month first.
func TestImportDateOrderOverride(t *testing.T) {
	t.Parallel()
	a := setup(t)
	path := "/v1/businesses/" + a.bid + "/waitlist:import"
	file := "Name,Email,Service,Date\nAnn,ann@example.com,haircut,12/24/2026\n"
	var out importOut
	a.must(a.postCSV(path, "text/csv", "", file), 200, &out)
	if len(out.Rejected) != 1 {
		t.Fatalf("day first: %+v", out)
	}
	a.must(a.postCSV(path+"?date_order=mdy", "text/csv", "", file), 200, &out)
	if out.Imported != 1 {
		t.Fatalf("month first: %+v", out)
	}
}
