package cli

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSaysWhenNoAdminToken: a server started without an admin token
// says so in its start-up log, naming the flag and the environment
// variable; one started with a token does not.
func TestServeSaysWhenNoAdminToken(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"", "adm"} {
		ctx, cancel := context.WithCancel(context.Background())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + ln.Addr().String()
		logs := &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- serve(ctx, serveConfig{Addr: ln.Addr().String(), DB: filepath.Join(t.TempDir(), "n.db"), BaseURL: base,
				AdminToken: token, Clock: "fake", Notify: "capture", Instance: "admin-test"}, ln, logs)
		}()
		deadline := time.Now().Add(30 * time.Second)
		for {
			res, err := http.Get(base + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("never healthy: %v\n%s", err, logs.String())
			}
			time.Sleep(20 * time.Millisecond) // polling a server's start, not waiting for a timer
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v", err)
		}
		warned := strings.Contains(logs.String(), "no admin token configured")
		named := strings.Contains(logs.String(), "--admin-token") && strings.Contains(logs.String(), "NEXTUP_ADMIN_TOKEN")
		switch {
		case token == "" && (!warned || !named):
			t.Errorf("started without an admin token, the log does not say so with the flag and env var:\n%s", logs.String())
		case token != "" && warned:
			t.Errorf("started with an admin token, the log says there is none:\n%s", logs.String())
		}
	}
}
