package cli

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nextup-dev/nextup"
)

// serviceAccountKey writes a service account's key file whose token
// endpoint is tokenURL, and returns its path.
func serviceAccountKey(t *testing.T, tokenURL string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writeJSON(t, map[string]any{
		"type":           "service_account",
		"project_id":     "nextup-test",
		"private_key_id": "k1",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "mirror@nextup-test.iam.gserviceaccount.com",
		"client_id":      "1",
		"token_uri":      tokenURL,
	})
}

func writeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSheetsServiceAccount: --google-credentials-file takes a service
// account's key, and the official client reads a sheet with it (the fake
// sees an authorised request). A credentials file of another type — here
// an external account, which would have the client fetch a token from a
// URL the file names — is refused, and that URL is never asked.
func TestSheetsServiceAccount(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var auth []string
	subjectAsked := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/token", "/sts": // a token exchange, if the client makes one
			_, _ = w.Write([]byte(`{"access_token":"tok-1","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":3600}`))
		case "/subject":
			mu.Lock()
			subjectAsked = true
			mu.Unlock()
			_, _ = w.Write([]byte(`subject-token`))
		case "/v4/spreadsheets/sheet-1/values/A:Z":
			_, _ = w.Write([]byte(`{"range":"Sheet1!A1:B2","majorDimension":"ROWS","values":[["Name","Email"],["Ann","ann@example.com"]]}`))
		default:
			http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	c := serveConfig{GoogleCredentialsFile: serviceAccountKey(t, srv.URL+"/token"), SheetsEndpoint: srv.URL + "/"}
	r, err := c.sheetReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := r.Read(ctx, nextup.SheetSource{SpreadsheetID: "sheet-1"})
	if err != nil || len(rows) != 2 || rows[1][0] != "Ann" {
		t.Fatalf("rows %v, %v", rows, err)
	}
	mu.Lock()
	last := auth[len(auth)-1]
	mu.Unlock()
	if !strings.HasPrefix(last, "Bearer ") || len(last) < len("Bearer ")+3 {
		t.Fatalf("the sheet was read without credentials: Authorization %q", last)
	}

	c.GoogleCredentialsFile = writeJSON(t, map[string]any{
		"type":               "external_account",
		"audience":           "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
		"token_url":          srv.URL + "/sts",
		"credential_source":  map[string]any{"url": srv.URL + "/subject"},
	})
	if r, err := c.sheetReader(ctx); err == nil {
		_, err = r.Read(ctx, nextup.SheetSource{SpreadsheetID: "sheet-1"})
		t.Errorf("a credentials file that is not a service account's key was taken at start-up (reading with it: %v)", err)
	} else if !strings.Contains(err.Error(), `expected type "service_account", found "external_account"`) {
		t.Errorf("refused for another reason: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if subjectAsked {
		t.Error("the URL named in an external account's file was asked for a token")
	}
}
