package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup/web"
)

// TestAdminTokenNotConfigured: a server started without an admin token
// still refuses every admin call with 401 — with or without a token, even
// an empty one — and says that no token is configured; a server with one
// says only that the token is required.
func TestAdminTokenNotConfigured(t *testing.T) {
	t.Parallel()
	call := func(s *web.Server, auth string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/v1/businesses", strings.NewReader(`{"name":"Corner Cuts","timezone":"Europe/London"}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("body %q: %v", rec.Body.String(), err)
		}
		return rec.Code, body
	}
	for _, auth := range []string{"", "Bearer ", "Bearer guess", "Basic YTpi"} {
		code, body := call(&web.Server{}, auth)
		if code != http.StatusUnauthorized || body["code"] != "unauthorized" {
			t.Errorf("no admin token, Authorization %q: %d %v, want 401 unauthorized", auth, code, body)
		}
		if d, _ := body["detail"].(string); !strings.Contains(d, "no admin token is configured") || !strings.Contains(d, "--admin-token") ||
			!strings.Contains(d, "NEXTUP_ADMIN_TOKEN") {
			t.Errorf("no admin token, Authorization %q: detail %q does not say the token is not configured", auth, d)
		}
	}
	code, body := call(&web.Server{AdminToken: "adm"}, "Bearer guess")
	if d, _ := body["detail"].(string); code != http.StatusUnauthorized || strings.Contains(d, "not configured") {
		t.Errorf("wrong admin token: %d %v, want 401 without the not-configured hint", code, body)
	}
}
