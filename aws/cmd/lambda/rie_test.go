package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/internal/missing"
)

// rieVersion is the emulator's version, as DEPENDENCIES.md and .ci/run
// name it (tagged versions are not served).
const rieVersion = "v0.0.0-20261030222936-bef5c4ba774d"

// rie finds the Lambda Runtime Interface Emulator.
func rie(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	gopath, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(gopath)), "bin", "aws-lambda-rie")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	missing.Skip(t, "Lambda Runtime Interface Emulator", "aws-lambda-rie is not on PATH nor in $(go env GOPATH)/bin",
		"go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@"+rieVersion)
	return ""
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a bytes.Buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBootstrapUnderRuntimeEmulator runs the bootstrap binary, unmodified,
// behind the Lambda Runtime API of AWS's Runtime Interface Emulator, on
// DynamoDB (dynoxide): Function URL events create a business, queue a
// person and release a slot to them; the emulator reports the cold
// start (Init Duration).
func TestBootstrapUnderRuntimeEmulator(t *testing.T) {
	t.Parallel()
	emulator := rie(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	db := fmt.Sprintf("dynamodb://%s/%s-?region=us-east-1", dynotest.Addr(t), dynotest.Table(t))
	st, err := dynamo.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	addr, api := freePort(t), freePort(t)
	cmd := exec.Command(emulator, "--runtime-interface-emulator-address", addr, "--runtime-api-address", api, bin)
	cmd.Env = append(os.Environ(), "NEXTUP_DB="+db, "NEXTUP_BASE_URL=https://abc.lambda-url.eu-west-2.on.aws",
		"NEXTUP_ADMIN_TOKEN=adm", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1")
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("emulator:\n%s", logs.String())
		}
	})
	invokeURL := "http://" + addr + "/2015-03-31/functions/function/invocations"
	// The emulator listens at once and starts the bootstrap at the first
	// invocation: wait for it to listen, so that the first invocation's
	// time is the cold start and the request.
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator never listened: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling a process start
	}
	invoke := func(method, path, key, body string) (int, map[string]any) {
		t.Helper()
		ev := events.LambdaFunctionURLRequest{Version: "2.0", RawPath: path, Body: body,
			Headers: map[string]string{"content-type": "application/json"},
			RequestContext: events.LambdaFunctionURLRequestContext{
				HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: path, SourceIP: "203.0.113.7"}}}
		if key != "" {
			ev.Headers["authorization"] = "Bearer " + key
		}
		payload, _ := json.Marshal(ev)
		var res *http.Response
		deadline := time.Now().Add(30 * time.Second)
		for {
			res, err = http.Post(invokeURL, "application/json", bytes.NewReader(payload))
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond) // polling the emulator's start
		}
		if err != nil {
			t.Fatalf("invoke: %v", err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out events.LambdaFunctionURLResponse
		if err := json.Unmarshal(raw, &out); err != nil || out.StatusCode == 0 {
			t.Fatalf("%s %s: the emulator answered %d %s", method, path, res.StatusCode, raw)
		}
		var body2 map[string]any
		_ = json.Unmarshal([]byte(out.Body), &body2)
		return out.StatusCode, body2
	}
	start := time.Now() // measurement, not logic
	code, biz := invoke("POST", "/v1/businesses", "adm", `{"name":"Emulated Cuts","timezone":"Europe/London","rules":{"quiet_hours":null}}`)
	cold := time.Since(start)
	if code != 201 {
		t.Fatalf("create business: %d %v", code, biz)
	}
	bid, key := biz["id"].(string), biz["api_key"].(string)
	start = time.Now()
	if code, out := invoke("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ada","email":"ada@example.com","service":"haircut"}`); code != 201 {
		t.Fatalf("join: %d %v", code, out)
	}
	warm := time.Since(start)
	code, slot := invoke("POST", "/v1/businesses/"+bid+"/slots", key, `{"service":"haircut","starts_at":"2099-03-05T14:00:00Z","ends_at":"2099-03-05T14:45:00Z"}`)
	if code != 201 {
		t.Fatalf("slot: %d %v", code, slot)
	}
	code, rel := invoke("POST", "/v1/slots/"+slot["id"].(string)+":release", key, `{"reason":"cancellation"}`)
	if moves, _ := rel["moves"].([]any); code != 200 || len(moves) != 1 {
		t.Fatalf("release: %d %v", code, rel)
	}
	m := regexp.MustCompile(`Init Duration: ([0-9.]+) ms`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("the emulator reported no Init Duration:\n%s", logs.String())
	}
	t.Logf("first invocation (process start, init, a business created): %v; a warm one (a join): %v; the emulator's Init Duration: %s ms",
		cold.Round(time.Millisecond), warm.Round(time.Millisecond), m[1])
}
