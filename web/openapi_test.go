package web_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/web"
)

// TestOpenAPIMatchesRoutes checks, both ways, that every route the server
// serves is in /v1/openapi.json and every operation there is served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	a := setup(t)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	a.must(a.do("GET", "/v1/openapi.json", "", ""), 200, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Paths) == 0 {
		t.Fatalf("not an OpenAPI 3 document: %q, %d paths", doc.OpenAPI, len(doc.Paths))
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	// The debug clock is only served with --clock=fake, the metrics when
	// they are on and the demo outbox by nextup demo: list routes with them.
	srv := &web.Server{Debug: &web.DebugClock{Clock: nextup.NewFakeClock(a.clock.Now())}, Metrics: web.NewMetrics(a.store), DevOutbox: a.bid}
	served := srv.Routes()
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.json documents %s, which is not served", d)
		}
	}
	// And the debug clock is not served without a fake clock.
	a.problem(a.do("POST", "/v1/debug/clock", adminToken, `{"advance_seconds":1}`), 404, "not_found")
}
