package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/web/webtest"
)

// dynamoURL is a --db URL of a table of its own on the test server.
func dynamoURL(t *testing.T) string {
	return fmt.Sprintf("dynamodb://%s/%s-?region=us-east-1", dynotest.Addr(t), dynotest.Table(t))
}

// nextupAWS runs this binary as nextup-aws with args.
func nextupAWS(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1")
	return cmd
}

// TestDemoTourOnDynamoDB runs the guided demo, the whole loop of the demo
// salon (offers, an expiry rolling on, a decline rolling on, a claim and
// its confirmation, a batch promotion, the booking system refusing a
// claim, the audit trail), on DynamoDB.
func TestDemoTourOnDynamoDB(t *testing.T) {
	t.Parallel()
	out, err := nextupAWS("demo", "--tour", "--db", dynamoURL(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("demo --tour on DynamoDB: %v\n%s", err, out)
	}
	for _, want := range []string{
		"move: offer → Maya",
		"offer to Olivia",
		"move: roll_on → Priya",
		"booked: bkg_",
		"confirmation to Priya",
		"Maya's old link: slot_taken",
		"move: offer → Vera",
		"offered → expired", "offered → declined", "offered → claimed",
		"Rosa's claim: slot_taken",
		"booking_failed to Rosa",
		"/c/",
		"Everything above is stored in dynamodb://",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("%s", out)
	}
}

// TestDemoServerOnDynamoDB serves the demo salon from DynamoDB as a
// newcomer meets it: release the booked haircut through the API, find
// the offer on /dev/outbox, claim it on the claim page, then sign in to
// the dashboard and see the day. Every API answer is checked against the
// OpenAPI document.
func TestDemoServerOnDynamoDB(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := nextupAWS("demo", "--addr", addr, "--db", dynamoURL(t))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	var printed strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Stop: Ctrl-C") {
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	text := printed.String()
	key := regexp.MustCompile(`API key\s+(\S+)`).FindStringSubmatch(text)
	release := regexp.MustCompile(`curl -s -X POST (\S+):release`).FindStringSubmatch(text)
	cred := regexp.MustCompile(`sign in as (\S+) with password (\S+)`).FindStringSubmatch(text)
	if key == nil || release == nil || cred == nil {
		t.Fatalf("demo did not print the API key, the release command and the dashboard credentials:\n%s", text)
	}
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if res, err := http.Get(base + "/healthz"); err == nil && res.StatusCode == 200 {
			res.Body.Close()
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("demo never became healthy")
		case <-time.After(50 * time.Millisecond): // polling a process start
		}
	}
	api := &http.Client{Timeout: 30 * time.Second, Transport: webtest.Transport(t, nil)}
	req, _ := http.NewRequest("POST", release[1]+":release", strings.NewReader(`{"reason":"cancellation"}`))
	req.Header.Set("Authorization", "Bearer "+key[1])
	req.Header.Set("Content-Type", "application/json")
	res, err := api.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("release: %v %v", res, err)
	}
	res.Body.Close()
	linkRe := regexp.MustCompile(`href="(http://[^"]+/c/[^"]+)"`)
	var link string
	for link == "" {
		res, err := api.Get(base + "/dev/outbox")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if m := linkRe.FindStringSubmatch(string(b)); m != nil && strings.Contains(string(b), "sent") {
			link = m[1]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no sent offer on /dev/outbox:\n%s", b)
		case <-time.After(100 * time.Millisecond): // the relay polls every 500 ms of real time
		}
	}
	res, err = api.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "haircut with Ana") || !strings.Contains(string(page), "Claim this slot") {
		t.Fatalf("claim page:\n%s", page)
	}
	res, err = api.Post(link+"/claim", "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(page), "booked") {
		t.Fatalf("claim: %d\n%s", res.StatusCode, page)
	}
	// The dashboard, signed in with the printed credentials.
	jar, _ := cookiejar.New(nil)
	web := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(path string) string {
		t.Helper()
		res, err := web.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return string(b)
	}
	login := get("/login")
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(login)
	if csrf == nil {
		t.Fatalf("no csrf on /login:\n%s", login)
	}
	res, err = web.PostForm(base+"/login", url.Values{"csrf": {csrf[1]}, "email": {cred[1]}, "password": {cred[2]}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	dash := get("/dash")
	if !strings.Contains(dash, "Demo Salon") || !strings.Contains(dash, "haircut") {
		t.Fatalf("dashboard after signing in:\n%s", dash)
	}
}
