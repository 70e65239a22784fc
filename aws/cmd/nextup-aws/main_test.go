package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain lets a test run this binary as the real nextup-aws process.
func TestMain(m *testing.M) {
	if os.Getenv("NEXTUP_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestServeWithBedrock runs `nextup-aws serve` as a process: the command
// line is cmd/nextup's, and the Bedrock parser it registers reads a
// booking request posted to the inbox through the official SDK (signed
// with the credentials of the default chain, here from the environment)
// against a local fake of the Converse API.
func TestServeWithBedrock(t *testing.T) {
	t.Parallel()
	var asked atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/model/anthropic.claude-test/converse" {
			http.NotFound(w, r)
			return
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKTEST/") {
			t.Errorf("not signed with the environment's credentials: %q", r.Header.Get("Authorization"))
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"propose_waitlist_row",
			"input":{"name":"Sarah From Bedrock","email":"sarah@example.com","phone":"","service":"haircut","party_size":1,
			"earliest":"","latest":"","staff":"","confidence":{"name":0.9},"problems":[]}}}]}},
			"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`))
	}))
	defer fake.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--clock", "fake", "--db", filepath.Join(dir, "n.db"))
	cmd.Env = append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1", "NEXTUP_ADMIN_TOKEN=adm",
		"NEXTUP_BEDROCK_MODEL=anthropic.claude-test", "NEXTUP_BEDROCK_ENDPOINT="+fake.URL,
		"AWS_ACCESS_KEY_ID=AKTEST", "AWS_SECRET_ACCESS_KEY=secret", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("nextup-aws logs:\n%s", logs.String())
		}
	}()
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nextup-aws never became healthy: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling a process start, not waiting for a timer
	}
	call := func(method, path, key, contentType, body string, want int) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", contentType)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		if res.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, raw, want)
		}
		return out
	}
	biz := call("POST", "/v1/businesses", "adm", "application/json", `{"name":"Studio Nine","timezone":"Europe/London"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	call("PATCH", "/v1/businesses/"+bid, key, "application/json", `{"country":"GB","services":[{"name":"Haircut","synonyms":["trim"]}]}`, 200)
	mail := "From: Sarah Jones <sarah@example.com>\r\nTo: desk@studionine.test\r\nSubject: A trim\r\n" +
		"Date: " + time.Now().UTC().Format(time.RFC1123Z) + "\r\nMessage-ID: <trim-1@example.com>\r\n\r\nHello, could I come in for a trim next week?\r\nSarah\r\n"
	call("POST", "/v1/businesses/"+bid+"/inbox", key, "message/rfc822", mail, 202)
	if asked.Load() == 0 {
		t.Fatal("the Bedrock parser was not asked")
	}
	props := call("GET", "/v1/businesses/"+bid+"/proposals", key, "application/json", "", 200)
	list, _ := props["proposals"].([]any)
	if len(list) != 1 {
		t.Fatalf("proposals %v", props)
	}
	fields, _ := list[0].(map[string]any)["fields"].(map[string]any)
	if fields["name"] != "Sarah From Bedrock" {
		t.Fatalf("the proposal is not the model's: %v", list[0])
	}
}
