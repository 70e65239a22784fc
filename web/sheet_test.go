package web_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/nextup-dev/nextup/intake/sheet"
	"github.com/nextup-dev/nextup/web"
)

// TestSheetOverHTTP: a published CSV sheet is set, read now with
// sheet:sync (its import result and version), read again unchanged, and
// listed under sheet/versions once it changed.
func TestSheetOverHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	csv := "Name,Email,Service\nAnn,ann@example.com,haircut\n"
	pub := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write([]byte(csv))
	}))
	defer pub.Close()
	a := setup(t, func(s *web.Server) { s.Svc.Sheets = &sheet.Reader{HTTP: pub.Client()} })
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 409, "no_sheet")
	a.problem(a.do("PUT", "/v1/businesses/"+a.bid+"/sheet", a.key, `{"url":"not a url"}`), 400, "validation_failed")
	a.problem(a.do("PUT", "/v1/businesses/"+a.bid+"/sheet", a.key, `{"url":"http://example.com/pub.csv"}`), 400, "validation_failed")
	var set map[string]any
	a.must(a.do("PUT", "/v1/businesses/"+a.bid+"/sheet", a.key, `{"url":"`+pub.URL+`/pub.csv"}`), 200, &set)
	if s := set["sheet"].(map[string]any); s["every_seconds"] != float64(300) || set["connection_code"] != nil {
		t.Fatalf("sheet %v (a CSV needs no connection code)", set)
	}
	var res map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 200, &res)
	if res["changed"] != true || res["imported"] != float64(1) || res["version"].(map[string]any)["rows"] != float64(1) {
		t.Fatalf("first sync %v", res)
	}
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 200, &res)
	if res["changed"] != false {
		t.Fatalf("unchanged sync %v", res)
	}
	mu.Lock()
	csv += "Bob,bob@example.com,haircut\n"
	mu.Unlock()
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/sheet:sync", a.key, ""), 200, &res)
	if res["changed"] != true || res["imported"] != float64(1) || res["unchanged"] != float64(1) {
		t.Fatalf("changed sync %v", res)
	}
	var vs struct {
		Versions []map[string]any `json:"versions"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/sheet/versions", a.key, ""), 200, &vs)
	if len(vs.Versions) != 2 || vs.Versions[0]["rows"] != float64(2) || vs.Versions[0]["hash"] == vs.Versions[1]["hash"] {
		t.Fatalf("versions %v", vs.Versions)
	}
}
