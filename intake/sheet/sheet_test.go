package sheet_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/option"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/sheet"
)

// fakeSheets speaks the Sheets v4 values.get JSON for one spreadsheet and
// checks the request the official client makes.
func fakeSheets(t *testing.T, values *[][]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/v4/spreadsheets/sheet-1/values/") {
			http.Error(w, `{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`, 404)
			return
		}
		if q := r.URL.Query(); q.Get("valueRenderOption") != "FORMATTED_VALUE" || q.Get("majorDimension") != "ROWS" || q.Get("key") != "k-123" {
			t.Errorf("query %v", q)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"range": "Sheet1!A1:D3", "majorDimension": "ROWS", "values": *values})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestReadGoogleSheet(t *testing.T) {
	t.Parallel()
	values := [][]any{{"Name", "Email", "Party"}, {"Ann", "ann@example.com", 2}, {"Bo"}}
	srv := fakeSheets(t, &values)
	svc, err := sheet.NewSheets(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithAPIKey("k-123"))
	if err != nil {
		t.Fatal(err)
	}
	r := &sheet.Reader{Sheets: svc}
	rows, err := r.Read(context.Background(), nextup.SheetSource{SpreadsheetID: "sheet-1", Range: "Sheet1!A1:D"})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"Name", "Email", "Party"}, {"Ann", "ann@example.com", "2"}, {"Bo"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	if _, err := r.Read(context.Background(), nextup.SheetSource{SpreadsheetID: "other"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown spreadsheet: %v", err)
	}
}

func TestReadCSVURL(t *testing.T) {
	t.Parallel()
	body := "\ufeffName;Email;Notes\r\nAnn;ann@example.com;\"first line\nsecond\"\r\n"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/pub.csv" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/csv")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	r := &sheet.Reader{HTTP: srv.Client()}
	rows, err := r.Read(context.Background(), nextup.SheetSource{URL: srv.URL + "/pub.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"Name", "Email", "Notes"}, {"Ann", "ann@example.com", "first line\nsecond"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	if _, err := r.Read(context.Background(), nextup.SheetSource{URL: srv.URL + "/gone.csv"}); err == nil {
		t.Error("a 404 read as a sheet")
	}
	// The client for businesses' URLs will not reach this machine.
	if _, err := (&sheet.Reader{HTTP: sheet.SafeHTTPClient(5 * time.Second)}).Read(context.Background(), nextup.SheetSource{URL: srv.URL + "/pub.csv"}); err == nil ||
		!strings.Contains(err.Error(), "not on the public internet") {
		t.Errorf("the safe client read a loopback URL: %v", err)
	}
	for _, bad := range []nextup.SheetSource{{}, {URL: "ftp://x/y.csv"}, {URL: "http://example.com/y.csv"}, {URL: srv.URL, SpreadsheetID: "x"}, {SpreadsheetID: "https://docs.google.com/x"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("source %+v accepted", bad)
		}
	}
	if _, err := (&sheet.Reader{}).Read(context.Background(), nextup.SheetSource{SpreadsheetID: "x"}); err == nil {
		t.Error("a spreadsheet id read without a Sheets client")
	}
}
