package sheet_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
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

// TestUpdateGoogleSheet: Update reads the sheet, lets the caller pick the
// cells by their place among the rows read, and writes them in one
// values.batchUpdate of the official client, named in A1 from the range
// the read covered (a tab with a space in its name, data from C3).
func TestUpdateGoogleSheet(t *testing.T) {
	t.Parallel()
	var got []map[string]any
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v4/spreadsheets/sheet-1/values/'Wait list'!C3:Z":
			_ = json.NewEncoder(w).Encode(map[string]any{"range": "'Wait list'!C3:Z1000", "majorDimension": "ROWS",
				"values": [][]any{{"Name", "Email"}, {"Ann", "ann@example.com"}, {"Bo", "bo@example.com"}}})
		case r.Method == http.MethodPost && r.URL.Path == "/v4/spreadsheets/sheet-1/values:batchUpdate":
			var body map[string]any
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Error(err)
			}
			mu.Lock()
			got = append(got, body)
			mu.Unlock()
			_ = json.NewEncoder(w).Encode(map[string]any{"spreadsheetId": "sheet-1", "totalUpdatedCells": 2})
		default:
			http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, 404)
		}
	}))
	defer srv.Close()
	svc, err := sheet.NewSheets(context.Background(), option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	r := &sheet.Reader{Sheets: svc}
	src := nextup.SheetSource{SpreadsheetID: "sheet-1", Range: "'Wait list'!C3:Z"}
	err = r.Update(context.Background(), src, func(rows [][]string) ([]nextup.SheetCell, error) {
		if len(rows) != 3 || rows[2][0] != "Bo" {
			t.Errorf("rows handed to edit: %q", rows)
		}
		return []nextup.SheetCell{{Row: 0, Col: 2, Value: "Status"}, {Row: 2, Col: 2, Value: "=Booked"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"valueInputOption": "RAW", "data": []any{
		map[string]any{"range": "'Wait list'!E3", "majorDimension": "ROWS", "values": []any{[]any{"Status"}}},
		map[string]any{"range": "'Wait list'!E5", "majorDimension": "ROWS", "values": []any{[]any{"=Booked"}}},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batchUpdate bodies\n got %v\nwant %v", got, want)
	}
	// Nothing to write: no request. An edit's error is Update's.
	if err := r.Update(context.Background(), src, func([][]string) ([]nextup.SheetCell, error) { return nil, nil }); err != nil || len(got) != 1 {
		t.Errorf("an empty edit: %v, %d requests", err, len(got))
	}
	if err := r.Update(context.Background(), src, func([][]string) ([]nextup.SheetCell, error) { return nil, errors.New("no such row") }); err == nil || err.Error() != "no such row" {
		t.Errorf("an edit's error: %v", err)
	}
	if err := (&sheet.Reader{}).Update(context.Background(), nextup.SheetSource{URL: "https://example.com/x.csv"},
		func([][]string) ([]nextup.SheetCell, error) { return nil, nil }); err == nil {
		t.Error("a CSV link was written to")
	}
}

// TestServiceAccountKeyScope: only a service account's key is taken, and
// its tokens are asked for the read-write spreadsheets scope (the mirror
// writes claimed rows back).
func TestServiceAccountKeyScope(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(key))})
	var scope string
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		parts := strings.Split(r.PostForm.Get("assertion"), ".")
		if len(parts) == 3 {
			claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
			var c struct {
				Scope string `json:"scope"`
			}
			_ = json.Unmarshal(claims, &c)
			scope = c.Scope
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`))
	}))
	defer tokens.Close()
	values := [][]any{{"Name", "Email", "Party"}, {"Ann", "ann@example.com", 2}}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":{"code":401,"message":"no token","status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"range": "Sheet1!A1:C2", "values": values})
	}))
	defer api.Close()
	dir := t.TempDir()
	sa, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "p", "private_key_id": "k1",
		"private_key": string(pemKey), "client_email": "mirror@p.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokens.URL})
	if err := os.WriteFile(filepath.Join(dir, "sa.json"), sa, 0o600); err != nil {
		t.Fatal(err)
	}
	opt, err := sheet.ServiceAccountKey(filepath.Join(dir, "sa.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := sheet.NewSheets(context.Background(), opt, option.WithEndpoint(api.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&sheet.Reader{Sheets: svc}).Read(context.Background(), nextup.SheetSource{SpreadsheetID: "sheet-1"}); err != nil {
		t.Fatal(err)
	}
	if scope != "https://www.googleapis.com/auth/spreadsheets" {
		t.Errorf("token asked for scope %q", scope)
	}
	// Another kind of credentials file is refused before it is used.
	user, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "1", "client_secret": "s", "refresh_token": "r"})
	if err := os.WriteFile(filepath.Join(dir, "user.json"), user, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sheet.ServiceAccountKey(filepath.Join(dir, "user.json")); err == nil {
		t.Error("an authorized_user file was taken for a service account's key")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
