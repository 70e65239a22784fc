package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemoServerProcess runs `nextup demo` as a newcomer would: it reads
// the printed URL, API key and first command, releases the slot, finds the
// offer on /dev/outbox, and claims it on the claim page.
func TestDemoServerProcess(t *testing.T) {
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "demo", "--addr", addr, "--db", filepath.Join(t.TempDir(), "demo.db"))
	cmd.Env = append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1")
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
	if key == nil || release == nil || !strings.Contains(text, "/dev/outbox") {
		t.Fatalf("demo did not print the API key and the release command:\n%s", text)
	}
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
	api := apiClient(t)
	// Last month happened on a fake clock and is summed up.
	bid := regexp.MustCompile(`business\s+(biz_\S+)`).FindStringSubmatch(text)
	if bid == nil || !strings.Contains(text, "/dash/summaries/") {
		t.Fatalf("demo did not print the business and its summary:\n%s", text)
	}
	req, _ := http.NewRequest("GET", base+"/v1/businesses/"+bid[1]+"/summaries", nil)
	req.Header.Set("Authorization", "Bearer "+key[1])
	res, err := api.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sums struct {
		Summaries []struct {
			Month   string
			SentAt  *time.Time `json:"sent_at"`
			Figures struct {
				SlotsFreed  int `json:"slots_freed"`
				SlotsFilled int `json:"slots_filled"`
			}
		}
	}
	err = json.NewDecoder(res.Body).Decode(&sums)
	res.Body.Close()
	if err != nil || len(sums.Summaries) != 1 || sums.Summaries[0].Figures.SlotsFreed < 10 || sums.Summaries[0].Figures.SlotsFilled == 0 ||
		sums.Summaries[0].SentAt == nil || sums.Summaries[0].Month != time.Now().AddDate(0, 0, -time.Now().Day()).Format("2006-01") {
		t.Fatalf("last month's summary: %+v %v", sums, err)
	}
	// Rosa was passed over last month: her replay says for which slots
	// and why (Ben's, that went to people ahead of her).
	rosa := regexp.MustCompile(`/dash/waitlist/(ent_\S+)/history`).FindStringSubmatch(text)
	if rosa == nil || !strings.Contains(text, "nextup replay entry "+rosa[1]) {
		t.Fatalf("demo did not print Rosa's replay:\n%s", text)
	}
	req, _ = http.NewRequest("GET", base+"/v1/waitlist/"+rosa[1]+"/history", nil)
	req.Header.Set("Authorization", "Bearer "+key[1])
	res, err = api.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var hist struct {
		Positions []struct{ Cause string }
		Slots     []struct{ Outcome, Why string }
	}
	err = json.NewDecoder(res.Body).Decode(&hist)
	res.Body.Close()
	whys := map[string]int{}
	for _, so := range hist.Slots {
		whys[so.Outcome+":"+so.Why]++
	}
	if err != nil || len(hist.Positions) < 3 || whys["skipped:earlier_in_line"] == 0 {
		t.Fatalf("Rosa's replay: %v %+v", whys, hist)
	}
	req, _ = http.NewRequest("POST", release[1]+":release", strings.NewReader(`{"reason":"cancellation"}`))
	req.Header.Set("Authorization", "Bearer "+key[1])
	res, err = api.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("release: %v %v", res, err)
	}
	res.Body.Close()
	// The relay runs on its own: wait for the offer to show on /dev/outbox.
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
	// The same loop from the dashboard alone, with the printed credentials:
	// sign in, tap Cancelled on the haircut (booked again by the claim
	// above), and see the offer it made under Live offers.
	cred := regexp.MustCompile(`sign in as (\S+) with password (\S+)`).FindStringSubmatch(text)
	if cred == nil {
		t.Fatalf("demo did not print dashboard credentials:\n%s", text)
	}
	jar, _ := cookiejar.New(nil)
	web := &http.Client{Jar: jar}
	csrfRe := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
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
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		res, err := web.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, string(b)
	}
	// The front door says what this is, with the same credentials and
	// the outbox.
	if front := get("/"); !strings.Contains(front, cred[2]) || !strings.Contains(front, `href="/dev/outbox"`) || !strings.Contains(front, `action="/login"`) {
		t.Errorf("the demo's front door lacks the credentials, the outbox or the sign-in:\n%s", front)
	}
	login := get("/login")
	status, dash := post("/login", url.Values{"csrf": {csrfRe.FindStringSubmatch(login)[1]}, "email": {cred[1]}, "password": {cred[2]}})
	sid := release[1][strings.LastIndex(release[1], "/")+1:]
	if status != 200 || !strings.Contains(dash, "Demo Salon") || !strings.Contains(dash, `id="slot-`+sid+`" data-state="full"`) {
		t.Fatalf("dashboard after signing in with the printed credentials: %d\n%s", status, dash)
	}
	status, dash = post("/dash/slots/"+sid+"/release", url.Values{"csrf": {csrfRe.FindStringSubmatch(dash)[1]}, "reason": {"cancellation"}})
	if status != 200 || !strings.Contains(dash, "Offered to the next person in line.") || !strings.Contains(dash, `id="slot-`+sid+`" data-state="offered"`) {
		t.Fatalf("Cancelled from the dashboard: %d\n%s", status, dash)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("demo exited with %v after SIGTERM", err)
	}
}
