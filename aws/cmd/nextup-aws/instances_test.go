package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/web/webtest"
)

// instance is one nextup-aws serve process.
type instance struct{ base string }

// serveOn starts nextup-aws serve on db (with more flags) and waits until
// it is healthy.
func serveOn(t *testing.T, db string, flags ...string) instance {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := nextupAWS(append([]string{"serve", "--addr", addr, "--db", db, "--admin-token", "adm", "--notify", "capture"}, flags...)...)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("instance %s:\n%s", addr, logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return instance{"http://" + addr}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s never became healthy:\n%s", addr, logs.String())
		}
		time.Sleep(50 * time.Millisecond) // polling a process start
	}
}

// TestTwoInstancesOnDynamoDB runs two nextup-aws servers on one table and
// has them race: the same claim links tapped on both at once, releases
// and joins going to either. Exactly one tap of each link books; no slot
// ever holds or books more seats than it has; and each server sees what
// the other wrote.
func TestTwoInstancesOnDynamoDB(t *testing.T) {
	t.Parallel()
	db := dynamoURL(t)
	insts := []instance{serveOn(t, db), serveOn(t, db)}
	client := &http.Client{Timeout: 60 * time.Second, Transport: webtest.Transport(t, nil)}
	call := func(inst int, method, path, key, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, insts[inst%2].base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		if res.StatusCode >= 500 {
			t.Errorf("%s %s on instance %d: %d %s", method, path, inst%2, res.StatusCode, raw)
		}
		return res.StatusCode, out
	}
	code, biz := call(0, "POST", "/v1/businesses", "adm", `{"name":"Twin Salon","timezone":"Europe/London","rules":{"quiet_hours":null,"max_offers_per_person_per_day":0}}`)
	if code != 201 {
		t.Fatalf("create business: %d %v", code, biz)
	}
	bid, key := biz["id"].(string), biz["api_key"].(string)

	const slots, seats, people = 6, 3, 24
	start := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Hour)
	var slotIDs []string
	for i := range slots {
		code, s := call(i, "POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"cut","seating":"shared","capacity":%d,"starts_at":%q,"ends_at":%q}`,
			seats, start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), start.Add(time.Duration(i)*time.Hour+45*time.Minute).Format(time.RFC3339)))
		if code != 201 {
			t.Fatalf("create slot: %d %v", code, s)
		}
		slotIDs = append(slotIDs, s["id"].(string))
	}
	// Joins on both instances at once.
	var wg sync.WaitGroup
	for i := range people {
		wg.Go(func() {
			if code, out := call(i, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, fmt.Sprintf(`{"name":"P%02d","email":"p%02d@example.com","service":"cut"}`, i, i)); code != 201 {
				t.Errorf("join %d: %d %v", i, code, out)
			}
		})
	}
	wg.Wait()
	// Every slot releases all its seats, one at a time, from both
	// instances at once.
	for i := range slots * seats {
		wg.Go(func() {
			if code, out := call(i, "POST", "/v1/slots/"+slotIDs[i%slots]+":release", key, `{"seats":1,"reason":"cancellation"}`); code != 200 {
				t.Errorf("release %d: %d %v", i, code, out)
			}
		})
	}
	wg.Wait()
	// The offers' claim links, from the outbox.
	_, msgs := call(0, "GET", "/v1/businesses/"+bid+"/messages", key, "")
	var tokens []string
	for _, m := range msgs["messages"].([]any) {
		if u, _ := m.(map[string]any)["claim_url"].(string); u != "" {
			tokens = append(tokens, u[strings.LastIndex(u, "/")+1:])
		}
	}
	if len(tokens) != slots*seats {
		t.Fatalf("%d offers went out, want %d (every released seat offered to someone who fits)", len(tokens), slots*seats)
	}
	// Each link tapped three times at once, on both instances.
	type tap struct {
		code    int
		booking string
	}
	taps := make([][]tap, len(tokens))
	for i, tok := range tokens {
		taps[i] = make([]tap, 3)
		for j := range 3 {
			wg.Go(func() {
				code, out := call(i+j, "POST", "/v1/claims/"+tok+":accept", "", "")
				b, _ := out["booking"].(map[string]any)
				id, _ := b["id"].(string)
				taps[i][j] = tap{code, id}
			})
		}
	}
	wg.Wait()
	bookings := map[string]bool{}
	for i, ts := range taps {
		for _, tp := range ts {
			if tp.code != 200 || tp.booking == "" {
				t.Errorf("a tap of link %d: %d, booking %q; want 200 with the one booking", i, tp.code, tp.booking)
			}
			if tp.booking != ts[0].booking {
				t.Errorf("taps of link %d answered with bookings %s and %s", i, ts[0].booking, tp.booking)
			}
		}
		bookings[ts[0].booking] = true
	}
	if len(bookings) != len(tokens) {
		t.Errorf("%d distinct bookings for %d links", len(bookings), len(tokens))
	}
	// Every slot full again, read on each instance: never over capacity.
	for _, sid := range slotIDs {
		for inst := range 2 {
			_, s := call(inst, "GET", "/v1/slots/"+sid, key, "")
			booked, held, capacity := s["booked_seats"].(float64), s["held_seats"].(float64), s["capacity"].(float64)
			if booked+held > capacity || booked != capacity {
				t.Errorf("slot %s on instance %d: booked %v held %v of %v; want booked full, never over", sid, inst, booked, held, capacity)
			}
		}
	}
}
