package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startServe runs serve in this process on a real listener, as `nextup
// serve` does (same constructor, default HTTP limits, baseURL the given
// one or the listener's), and returns its address once it is healthy.
func startServe(t *testing.T, baseURL string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if baseURL == "" {
		baseURL = "http://" + addr
	}
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, serveConfig{Addr: addr, DB: filepath.Join(t.TempDir(), "n.db"), BaseURL: baseURL,
			AdminToken: "adm", Clock: "fake", Notify: "capture", Instance: "http-test"}, ln, logs)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("never healthy: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a server's start, not waiting for a timer
	}
}

// trickle writes head at once, then rest a byte a second, until the
// connection fails or done closes.
func trickle(conn net.Conn, head, rest string, done <-chan struct{}) {
	if _, err := io.WriteString(conn, head); err != nil {
		return
	}
	for i := 0; i < len(rest); i++ {
		select {
		case <-done:
			return
		case <-time.After(time.Second):
		}
		if _, err := conn.Write([]byte{rest[i]}); err != nil {
			return
		}
	}
}

// cutOff is how long the server took to answer or close conn, and what it
// sent before closing.
func cutOff(t *testing.T, conn net.Conn, start time.Time) (time.Duration, string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // the test's own bound
	got, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server still held the connection after %v (sent %q)", time.Since(start), got)
	}
	return time.Since(start), string(got)
}

// TestServeCutsOffASlowBody sends a request's headers, then its body a
// byte a second: the server answers 400 and closes the connection a few
// seconds in (bodyGrace), long before the 1,000-byte body would be done.
func TestServeCutsOffASlowBody(t *testing.T) {
	t.Parallel()
	addr := startServe(t, "")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan struct{})
	defer close(done)
	start := time.Now()
	go trickle(conn, "POST /v1/businesses HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer adm\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
		`{"name":"`+strings.Repeat("x", 1000-len(`{"name":"`)), done)
	took, got := cutOff(t, conn, start)
	t.Logf("a body at 1 byte/s was cut off after %v: %q", took.Round(time.Millisecond), firstLine(got))
	if took > 15*time.Second || took < bodyGrace-time.Second {
		t.Errorf("cut off after %v, want about %v", took, bodyGrace)
	}
	if !strings.HasPrefix(got, "HTTP/1.1 400 ") {
		t.Errorf("the answer was %q, want a 400", firstLine(got))
	}
}

// TestServeCutsOffSlowHeaders sends a request's headers a byte a second:
// the server closes the connection at --read-header-timeout.
func TestServeCutsOffSlowHeaders(t *testing.T) {
	t.Parallel()
	addr := startServe(t, "")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan struct{})
	defer close(done)
	start := time.Now()
	go trickle(conn, "GET /healthz HTTP/1.1\r\n", "Host: "+addr+"\r\nX-Slow: "+strings.Repeat("y", 100)+"\r\n\r\n", done)
	took, got := cutOff(t, conn, start)
	t.Logf("headers at 1 byte/s were cut off after %v: %q", took.Round(time.Millisecond), firstLine(got))
	if took > 15*time.Second || took < DefaultReadHeaderTimeout-time.Second {
		t.Errorf("cut off after %v, want about %v", took, DefaultReadHeaderTimeout)
	}
	if strings.Contains(got, "200 OK") {
		t.Errorf("the slow request was served: %q", got)
	}
}

// TestServeTakesASteadyUpload sends a 640 KiB body in chunks over more
// than bodyGrace, far faster than minBodyRate: it arrives whole (the
// import answers, here 401 for a wrong key, instead of 400 for a body
// cut off), and a request right after on the same connection is served.
func TestServeTakesASteadyUpload(t *testing.T) {
	t.Parallel()
	addr := startServe(t, "")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const chunks, chunk = 10, 64 << 10
	go func() {
		fmt.Fprintf(conn, "POST /v1/businesses/b/waitlist:import HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer nope\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n", addr, chunks*chunk)
		line := strings.Repeat("name,email\n", chunk/11+1)[:chunk]
		for i := 0; i < chunks; i++ {
			if _, err := io.WriteString(conn, line); err != nil {
				return
			}
			time.Sleep(bodyGrace / chunks * 14 / 10) // 7 s in all: past the grace, at ~90 KiB/s
		}
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	}()
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(conn)
	for i, want := range []int{http.StatusUnauthorized, http.StatusOK} {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("response %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
}

// TestServeHTTPLimits: the server serve builds has the documented
// limits, and a flag changes each.
func TestServeHTTPLimits(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(http.NotFoundHandler(), httpLimits{})
	if srv.ReadHeaderTimeout != DefaultReadHeaderTimeout || srv.IdleTimeout != DefaultIdleTimeout || srv.MaxHeaderBytes != DefaultMaxHeaderBytes {
		t.Errorf("defaults: %v %v %d", srv.ReadHeaderTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("ReadTimeout %v, WriteTimeout %v: a whole-request deadline would cancel long handlers' contexts", srv.ReadTimeout, srv.WriteTimeout)
	}
	fs := newFlagSet("serve")
	var l httpLimits
	l.flags(fs)
	if err := fs.Parse([]string{"--read-header-timeout=3s", "--read-timeout=30s", "--idle-timeout=1m", "--max-header-bytes=8192"}); err != nil {
		t.Fatal(err)
	}
	if want := (httpLimits{ReadHeaderTimeout: 3 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 8192}); l != want {
		t.Errorf("flags: %+v, want %+v", l, want)
	}
	if err := (httpLimits{ReadTimeout: -time.Second}).check(); err == nil {
		t.Error("a negative limit was taken")
	}
}

// TestServeSecurityHeaders: behind an https base URL every answer has
// Strict-Transport-Security (and the page its CSP); behind http none has.
func TestServeSecurityHeaders(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"https://waitlist.example", ""} {
		addr := startServe(t, base)
		for _, path := range []string{"/", "/healthz", "/c/no-such-token"} {
			res, err := http.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			hsts := res.Header.Get("Strict-Transport-Security")
			if base != "" && hsts != "max-age=31536000; includeSubDomains" {
				t.Errorf("base %s, %s: Strict-Transport-Security %q", base, path, hsts)
			}
			if base == "" && hsts != "" {
				t.Errorf("http base, %s: Strict-Transport-Security %q", path, hsts)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("%s: Content-Security-Policy %q", path, csp)
			}
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}
