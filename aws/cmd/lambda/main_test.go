package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nextup-dev/nextup"

	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
)

// fn is the bootstrap's handler over a table of its own on the test
// server, invoked as Lambda invokes it: with the event's JSON.
type fn struct {
	t *testing.T
	h *handler
}

func newFn(t *testing.T, clock ...nextup.Clock) *fn {
	t.Helper()
	ctx := context.Background()
	db := fmt.Sprintf("dynamodb://%s/%s-?region=us-east-1", dynotest.Addr(t), dynotest.Table(t))
	st, err := dynamo.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := config{DB: db, BaseURL: "https://abc.lambda-url.eu-west-2.on.aws", AdminToken: "adm", Logger: slog.New(slog.DiscardHandler)}
	if len(clock) > 0 {
		c.Clock = clock[0]
	}
	h, err := newHandler(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return &fn{t: t, h: h}
}

// url sends a Function URL request (payload format 2.0) and returns the
// status and body.
func (f *fn) url(method, path, key, body string) (int, string) {
	f.t.Helper()
	raw, query, _ := strings.Cut(path, "?")
	ev := events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: raw, RawQueryString: query, Body: body,
		Headers: map[string]string{"content-type": "application/json", "host": "abc.lambda-url.eu-west-2.on.aws"},
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "abc.lambda-url.eu-west-2.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: raw, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "test"},
		},
	}
	if key != "" {
		ev.Headers["authorization"] = "Bearer " + key
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := f.h.Invoke(context.Background(), payload)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	var res events.LambdaFunctionURLResponse
	if err := json.Unmarshal(out, &res); err != nil {
		f.t.Fatalf("%s %s: the response is not a Function URL response: %v\n%s", method, path, err, out)
	}
	text := res.Body
	if res.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			f.t.Fatal(err)
		}
		text = string(b)
	}
	return res.StatusCode, text
}

func (f *fn) json(method, path, key, body string, want int) map[string]any {
	f.t.Helper()
	code, text := f.url(method, path, key, body)
	if code != want {
		f.t.Fatalf("%s %s: %d %s, want %d", method, path, code, text, want)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		f.t.Fatalf("%s %s: %v\n%s", method, path, err, text)
	}
	return out
}

// TestFunctionURL: the API and the claim page through Function URL events
// into the same web handler as nextup serve, on DynamoDB: a business, a
// slot released to the person waiting, the claim page, the claim.
func TestFunctionURL(t *testing.T) {
	t.Parallel()
	f := newFn(t)
	biz := f.json("POST", "/v1/businesses", "adm", `{"name":"Lambda Cuts","timezone":"Europe/London","rules":{"quiet_hours":null}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	f.json("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ada","email":"ada@example.com","service":"haircut"}`, 201)
	slot := f.json("POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"haircut","starts_at":"%[1]s-05T14:00:00Z","ends_at":"%[1]s-05T14:45:00Z"}`, monthAhead()), 201)
	rel := f.json("POST", "/v1/slots/"+slot["id"].(string)+":release", key, `{"reason":"cancellation"}`, 200)
	moves := rel["moves"].([]any)
	if len(moves) != 1 || moves[0].(map[string]any)["move"] != "offer" {
		t.Fatalf("release: %v", rel)
	}
	msgs := f.json("GET", "/v1/businesses/"+bid+"/messages", key, "", 200)["messages"].([]any)
	var link string
	for _, m := range msgs {
		if u, _ := m.(map[string]any)["claim_url"].(string); u != "" {
			link = u
		}
	}
	if !strings.HasPrefix(link, "https://abc.lambda-url.eu-west-2.on.aws/c/") {
		t.Fatalf("the offer's claim link %q is not on the Function URL", link)
	}
	tok := link[strings.LastIndex(link, "/")+1:]
	if code, page := f.url("GET", "/c/"+tok, "", ""); code != 200 || !strings.Contains(page, "Claim") {
		t.Fatalf("claim page: %d\n%s", code, page)
	}
	claim := f.json("POST", "/v1/claims/"+tok+":accept", "", "", 200)
	if claim["state"] != "claimed" {
		t.Fatalf("claim: %v", claim)
	}
	if code, _ := f.url("GET", "/v1/businesses/"+bid, "nxk_wrong", ""); code != 401 {
		t.Errorf("a wrong key: %d, want 401", code)
	}
}

func TestUnknownEventIsAnError(t *testing.T) {
	t.Parallel()
	f := newFn(t)
	if _, err := f.h.Invoke(context.Background(), []byte(`{"Records":[{"eventSource":"aws:kinesis"}]}`)); err == nil {
		t.Error("an event of no known kind was answered")
	}
	if _, err := f.h.Invoke(context.Background(), []byte(`not json`)); err == nil {
		t.Error("a payload that is not JSON was answered")
	}
}

// TestTimerEvent: the event a Scheduler schedule sends runs the timers
// due: an offer whose claim window has passed expires and the slot is
// handed back (nobody else waits); sent again, it finds nothing due.
func TestTimerEvent(t *testing.T) {
	t.Parallel()
	clock := nextup.NewFakeClock(time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
	f := newFn(t, clock)
	biz := f.json("POST", "/v1/businesses", "adm", `{"name":"Timed Cuts","timezone":"Europe/London","rules":{"quiet_hours":null,"claim_window_seconds":600}}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	f.json("POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ada","email":"ada@example.com","service":"haircut"}`, 201)
	slot := f.json("POST", "/v1/businesses/"+bid+"/slots", key, `{"service":"haircut","starts_at":"2031-03-05T14:00:00Z","ends_at":"2031-03-05T14:45:00Z"}`, 201)
	sid := slot["id"].(string)
	rel := f.json("POST", "/v1/slots/"+sid+":release", key, `{"reason":"cancellation"}`, 200)
	offer := rel["moves"].([]any)[0].(map[string]any)["offer_id"].(string)
	timers := func() float64 {
		t.Helper()
		out, err := f.h.Invoke(context.Background(), []byte(`{"nextup":"timers"}`))
		if err != nil {
			t.Fatalf("the timer event: %v", err)
		}
		var res map[string]float64
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		return res["handled"]
	}
	if n := timers(); n != 0 {
		t.Fatalf("before the window ends: %v timers handled, want 0", n)
	}
	clock.Advance(11 * time.Minute)
	if n := timers(); n < 1 {
		t.Fatalf("after the window: %v timers handled, want the offer's expiry", n)
	}
	if o := f.json("GET", "/v1/offers/"+offer, key, "", 200); o["state"] != "expired" {
		t.Fatalf("the offer after its window: %v", o["state"])
	}
	if s := f.json("GET", "/v1/slots/"+sid, key, "", 200); s["state"] != "handed_back" {
		t.Errorf("the slot after the expiry: %v, want handed_back (nobody else waits)", s["state"])
	}
	if n := timers(); n != 0 {
		t.Errorf("the event again: %v timers handled, want 0", n)
	}
}

// monthAhead is the month ("2006-01") two months from the real clock's
// now: slots there have not started, and are within the years ahead a
// slot may be (nextup.MaxYearsAhead).
func monthAhead() string { return time.Now().UTC().AddDate(0, 2, 0).Format("2006-01") }
