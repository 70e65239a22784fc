package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
	"github.com/nextup-dev/nextup/web/webtest"
)

const adminToken = "test-admin-token"

// api is the test bundle: the real server over a real SQLite file, a fake
// clock at Tuesday 1 Dec 2026 10:00 London, and one business.
type api struct {
	t     testing.TB
	srv   *httptest.Server
	store nextup.Store
	clock *nextup.FakeClock
	bid   string
	key   string
}

func setup(t testing.TB, opts ...func(*web.Server)) *api {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir()+"/nextup.db")
	if err != nil {
		t.Fatal(err)
	}
	return setupOn(t, st, opts...)
}

// setupOn is setup on a store of the caller's (closed with the test).
func setupOn(t testing.TB, st nextup.Store, opts ...func(*web.Server)) *api {
	t.Helper()
	t.Cleanup(func() { st.Close() })
	loc, _ := time.LoadLocation("Europe/London")
	clock := nextup.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, loc))
	svc := waitlist.New(st, clock, "https://nextup.test")
	svc.Random = nextup.NewRandom(rand.NewChaCha8([32]byte{7}))
	ws := &web.Server{Svc: svc, Store: st, AdminToken: adminToken, MaxBody: 8 << 10}
	for _, o := range opts {
		o(ws)
	}
	// Every exchange of every test is held to openapi.json.
	srv := httptest.NewServer(webtest.Handler(t, ws.Handler()))
	t.Cleanup(srv.Close)
	a := &api{t: t, srv: srv, store: st, clock: clock}
	var biz map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Salon","timezone":"Europe/London"}`), 201, &biz)
	a.bid, a.key = biz["id"].(string), biz["api_key"].(string)
	return a
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (a *api) do(method, path, key, body string) resp {
	a.t.Helper()
	req, err := http.NewRequest(method, a.srv.URL+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	return a.send(req)
}

// send makes a request and reads its whole answer.
func (a *api) send(req *http.Request) resp {
	a.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

func (a *api) must(r resp, status int, into any) {
	a.t.Helper()
	if r.status != status {
		a.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if into != nil {
		if err := json.Unmarshal(r.body, into); err != nil {
			a.t.Fatalf("decode %s: %v", r.body, err)
		}
	}
}

// problem asserts an RFC 9457 body with the given status and code.
func (a *api) problem(r resp, status int, code string) map[string]any {
	a.t.Helper()
	var p map[string]any
	if r.status != status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		a.t.Fatalf("got %d %s %s, want %d problem+json %s", r.status, r.header.Get("Content-Type"), r.body, status, code)
	}
	if err := json.Unmarshal(r.body, &p); err != nil || p["code"] != code || p["status"] != float64(status) || p["title"] == "" || p["type"] == "" {
		a.t.Fatalf("problem body %s, want code %s", r.body, code)
	}
	return p
}

func (a *api) token(offerID string) string {
	a.t.Helper()
	var tok string
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		ms, err := tx.MessageList(context.Background(), nextup.MessageFilter{BusinessID: a.bid, OfferID: offerID})
		for _, m := range ms {
			if m.Kind == nextup.MessageOffer {
				tok = m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]
			}
		}
		return err
	})
	if err != nil || tok == "" {
		a.t.Fatalf("no claim token for offer %s: %v", offerID, err)
	}
	return tok
}

func (a *api) slot(body string) map[string]any {
	a.t.Helper()
	var sl map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/slots", a.key, body), 201, &sl)
	return sl
}

const chair = `{"service":"haircut","staff":"Ana","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z"}`

func TestCancellationToBookingOverHTTP(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sl := a.slot(chair)
	if sl["state"] != "full" || sl["booked_seats"] != float64(1) {
		t.Fatalf("slot = %v", sl)
	}
	sid := sl["id"].(string)
	var ann, bob map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Ann","email":"ann@example.com","service":"haircut","earliest":"2026-12-01","latest":"2026-12-03"}`), 201, &ann)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Bob","phone":"+447700900123","service":"haircut","availability":[{"days":["tue"],"from":"09:00","to":"17:00"}]}`), 201, &bob)
	if ann["state"] != "waiting" || ann["position"] != float64(1) || bob["position"] != float64(2) || !strings.HasPrefix(ann["status_url"].(string), "https://nextup.test/s/") {
		t.Fatalf("joins = %v / %v", ann, bob)
	}

	var rel struct {
		Slot  map[string]any `json:"slot"`
		Moves []nextup.Move  `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+sid+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	if len(rel.Moves) != 1 || rel.Moves[0].Move != nextup.MoveOffer || rel.Moves[0].EntryID != ann["id"] || rel.Slot["state"] != "offered" {
		t.Fatalf("release = %+v", rel)
	}
	tok := a.token(rel.Moves[0].OfferID)

	var info map[string]any
	r := a.do("GET", "/v1/claims/"+tok, "", "")
	a.must(r, 200, &info)
	if info["offer_state"] != "offered" || info["seconds_left"] != float64(600) || r.header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("claim info = %v (%v)", info, r.header)
	}
	var claim map[string]any
	a.must(a.do("POST", "/v1/claims/"+tok+":accept", "", ""), 200, &claim)
	booking := claim["booking"].(map[string]any)
	if claim["state"] != "claimed" || booking["slot_id"] != sid || !strings.Contains(claim["calendar_url"].(string), "/calendar.ics?token=") {
		t.Fatalf("claim = %v", claim)
	}
	cal, err := http.Get(a.srv.URL + strings.TrimPrefix(claim["calendar_url"].(string), "https://nextup.test"))
	if err != nil {
		t.Fatal(err)
	}
	ics, _ := io.ReadAll(cal.Body)
	cal.Body.Close()
	if cal.StatusCode != 200 || !strings.Contains(string(ics), "BEGIN:VEVENT") || !strings.Contains(string(ics), "DTSTART") ||
		!strings.Contains(string(ics), "haircut with Ana") || !strings.HasPrefix(cal.Header.Get("Content-Type"), "text/calendar") {
		t.Fatalf("calendar: %d %s\n%s", cal.StatusCode, cal.Header, ics)
	}
	a.problem(a.do("GET", "/v1/bookings/"+booking["id"].(string)+"/calendar.ics?token=wrong", "", ""), 404, "not_found")
	a.problem(a.do("GET", "/v1/bookings/"+booking["id"].(string)+"/calendar.ics", "", ""), 404, "not_found")
	var again map[string]any
	a.must(a.do("POST", "/v1/claims/"+tok+":accept", "", ""), 200, &again)
	if again["booking"].(map[string]any)["id"] != booking["id"] {
		t.Fatalf("repeat accept = %v, want the same booking", again)
	}
	var got map[string]any
	a.must(a.do("GET", "/v1/slots/"+sid, a.key, ""), 200, &got)
	if got["state"] != "full" || got["booked_seats"] != float64(1) || got["held_seats"] != float64(0) || len(got["offers"].([]any)) != 1 {
		t.Fatalf("slot after claim = %v", got)
	}
	var audit struct {
		Events []map[string]any `json:"events"`
	}
	a.must(a.do("GET", "/v1/slots/"+sid+"/audit", a.key, ""), 200, &audit)
	if len(audit.Events) < 6 || audit.Events[len(audit.Events)-1]["subject_type"] != "booking" {
		t.Fatalf("audit = %v", audit.Events)
	}
	var list struct {
		Entries []map[string]any `json:"entries"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/waitlist?service=haircut", a.key, ""), 200, &list)
	if len(list.Entries) != 1 || list.Entries[0]["id"] != bob["id"] || list.Entries[0]["position"] != float64(1) {
		t.Fatalf("waitlist after Ann booked = %v", list.Entries)
	}
	// The booking is cancelled: the seat frees and goes to Bob.
	var cancel struct {
		Booking map[string]any `json:"booking"`
		Moves   []nextup.Move  `json:"moves"`
	}
	a.must(a.do("POST", "/v1/bookings/"+booking["id"].(string)+":cancel", a.key, `{"reason":"ill"}`), 200, &cancel)
	if cancel.Booking["state"] != "cancelled" || len(cancel.Moves) != 1 || cancel.Moves[0].EntryID != bob["id"] {
		t.Fatalf("cancel = %+v", cancel)
	}
	var status map[string]any
	a.must(a.do("GET", "/v1/status/"+tokenOf(bob["status_url"].(string)), "", ""), 200, &status)
	if status["state"] != "offered" || status["offer"] == nil {
		t.Fatalf("Bob's status = %v", status)
	}
	a.must(a.do("DELETE", "/v1/status/"+tokenOf(bob["status_url"].(string)), "", ""), 200, nil)
	a.must(a.do("GET", "/v1/waitlist/"+bob["id"].(string), a.key, ""), 200, &status)
	if status["state"] != "left" {
		t.Fatalf("Bob after leaving = %v", status)
	}
}

func tokenOf(u string) string { return u[strings.LastIndex(u, "/")+1:] }

func TestErrorsAreProblemsAndChangeNothing(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sid := a.slot(chair)["id"].(string)
	path := "/v1/businesses/" + a.bid + "/slots"
	a.problem(a.do("POST", path, "", chair), 401, "unauthorized")
	a.problem(a.do("POST", path, "nxk_wrong", chair), 401, "unauthorized")
	a.problem(a.do("POST", "/v1/businesses", a.key, `{"name":"X","timezone":"UTC"}`), 401, "unauthorized")
	p := a.problem(a.do("POST", path, a.key, `{"service":"haircut","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z","colour":"red"}`), 400, "validation_failed")
	if !strings.Contains(p["detail"].(string), "colour") {
		t.Errorf("unknown field problem = %v", p)
	}
	a.problem(a.do("POST", path, a.key, `{"service":`), 400, "validation_failed")
	p = a.problem(a.do("POST", path, a.key, `{"service":"haircut","starts_at":"2026-12-01 14:00","ends_at":"2026-12-01T14:45:00Z"}`), 400, "validation_failed")
	if errs, _ := p["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["field"] != "starts_at" {
		t.Errorf("bad time problem names %v, want starts_at", p["errors"])
	}
	a.problem(a.do("POST", path, a.key, `{"service":"haircut","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T13:00:00Z"}`), 400, "validation_failed")
	a.problem(a.do("POST", path, a.key, `{"service":"`+strings.Repeat("x", 9<<10)+`"}`), 413, "too_large")
	a.problem(a.do("POST", "/v1/slots/"+sid+":release", a.key, `{"seats":1,"reason":"tuesday"}`), 400, "validation_failed")
	a.problem(a.do("POST", "/v1/slots/"+sid+":explode", a.key, `{}`), 404, "not_found")
	a.problem(a.do("POST", "/v1/claims/nope:accept", "", ""), 404, "not_found")
	a.problem(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, `{"claim_window":60}`), 400, "validation_failed")
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","service":"haircut"}`), 400, "validation_failed")
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"a@example.com","service":"haircut","earliest":"next week"}`), 400, "validation_failed")

	var ann map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"a@example.com","service":"haircut"}`), 201, &ann)
	dup := a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"A@example.com","service":"haircut"}`), 409, "already_waiting")
	if dup["entry_id"] != ann["id"] {
		t.Errorf("already_waiting names %v, want %v", dup["entry_id"], ann["id"])
	}
	// A shared class: releasing more than booked is 409 and changes nothing.
	class := a.slot(`{"service":"yoga","seating":"shared","capacity":4,"starts_at":"2026-12-02T18:00:00Z","ends_at":"2026-12-02T19:00:00Z"}`)
	a.problem(a.do("POST", "/v1/slots/"+class["id"].(string)+":release", a.key, `{"seats":5,"reason":"cancellation"}`), 409, "not_enough_booked")
	a.problem(a.do("POST", "/v1/slots/"+class["id"].(string)+":resize", a.key, `{"capacity":3}`), 409, "capacity_below_taken")
	var after map[string]any
	a.must(a.do("GET", "/v1/slots/"+class["id"].(string), a.key, ""), 200, &after)
	if after["booked_seats"] != float64(4) || after["capacity"] != float64(4) {
		t.Fatalf("refused changes changed the class: %v", after)
	}
	var rules map[string]any
	a.must(a.do("GET", "/v1/businesses/"+a.bid, a.key, ""), 200, &rules)
	if rules["rules"].(map[string]any)["version"] != float64(1) {
		t.Fatalf("refused rules patch bumped the version: %v", rules)
	}
}

// Another business's objects are 404 on every keyed route, never 403.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sl := a.slot(`{"service":"haircut","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z","booked_seats":0}`)
	var ann map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"a@example.com","service":"haircut"}`), 201, &ann)
	var got map[string]any
	a.must(a.do("GET", "/v1/slots/"+sl["id"].(string), a.key, ""), 200, &got)
	oid := got["offers"].([]any)[0].(map[string]any)["id"].(string)
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/messages?offer_id="+oid, a.key, ""), 200, &msgs)
	if len(msgs.Messages) != 1 || msgs.Messages[0]["state"] != "queued" || msgs.Messages[0]["to"] != "a@example.com" {
		t.Fatalf("outbox = %v", msgs.Messages)
	}
	mid := msgs.Messages[0]["id"].(string)
	a.problem(a.do("POST", "/v1/messages/"+mid+":retry", a.key, ""), 409, "message_not_dead")
	// A booking of this business, on a second slot.
	sl2 := a.slot(`{"service":"haircut","starts_at":"2026-12-01T16:00:00Z","ends_at":"2026-12-01T16:45:00Z","booked_seats":0}`)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Bea","email":"bea@example.com","service":"haircut"}`), 201, nil)
	var got2 map[string]any
	a.must(a.do("GET", "/v1/slots/"+sl2["id"].(string), a.key, ""), 200, &got2)
	var claimed map[string]any
	a.must(a.do("POST", "/v1/claims/"+a.token(got2["offers"].([]any)[0].(map[string]any)["id"].(string))+":accept", "", ""), 200, &claimed)
	bkid := claimed["booking"].(map[string]any)["id"].(string)
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	key := other["api_key"].(string)
	sid, eid := sl["id"].(string), ann["id"].(string)
	for _, rt := range []struct{ method, path, body string }{
		{"GET", "/v1/businesses/" + a.bid, ""},
		{"PATCH", "/v1/businesses/" + a.bid + "/rules", `{"claim_window_seconds":900}`},
		{"POST", "/v1/businesses/" + a.bid + "/slots", chair},
		{"GET", "/v1/businesses/" + a.bid + "/slots", ""},
		{"GET", "/v1/slots/" + sid, ""},
		{"GET", "/v1/slots/" + sid + "/audit", ""},
		{"POST", "/v1/slots/" + sid + ":release", `{"reason":"cancellation"}`},
		{"POST", "/v1/slots/" + sid + ":resize", `{"capacity":2}`},
		{"POST", "/v1/businesses/" + a.bid + "/waitlist:join", `{"name":"Eve","email":"e@example.com","service":"haircut"}`},
		{"GET", "/v1/businesses/" + a.bid + "/waitlist", ""},
		{"GET", "/v1/waitlist/" + eid, ""},
		{"PATCH", "/v1/waitlist/" + eid, `{"priority":true}`},
		{"DELETE", "/v1/waitlist/" + eid, ""},
		{"GET", "/v1/offers/" + oid, ""},
		{"POST", "/v1/offers/" + oid + ":withdraw", ""},
		{"GET", "/v1/businesses/" + a.bid + "/messages", ""},
		{"PATCH", "/v1/businesses/" + a.bid, `{"slug":"theirs"}`},
		{"GET", "/v1/businesses/" + a.bid + "/handbacks", ""},
		{"GET", "/v1/bookings/" + bkid, ""},
		{"POST", "/v1/bookings/" + bkid + ":cancel", `{}`},
		{"POST", "/v1/bookings/" + bkid + ":no_show", ""},
		{"POST", "/v1/messages/" + mid + ":retry", ""},
	} {
		a.problem(a.do(rt.method, rt.path, key, rt.body), 404, "not_found")
	}
	a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &got)
	if got["state"] != "offered" {
		t.Fatalf("the other business's calls changed the offer: %v", got)
	}
	a.must(a.do("GET", "/v1/bookings/"+bkid, a.key, ""), 200, &got)
	if got["state"] != "booked" {
		t.Fatalf("the other business's calls changed the booking: %v", got)
	}
}

// One claim link accepted 16 times at once gives one booking; every
// response names it.
func TestConcurrentAcceptsOneBooking(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sl := a.slot(`{"service":"haircut","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z","booked_seats":0}`)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"a@example.com","service":"haircut"}`), 201, nil)
	var got map[string]any
	a.must(a.do("GET", "/v1/slots/"+sl["id"].(string), a.key, ""), 200, &got)
	tok := a.token(got["offers"].([]any)[0].(map[string]any)["id"].(string))
	var wg sync.WaitGroup
	ids := make(chan string, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Post(a.srv.URL+"/v1/claims/"+tok+":accept", "application/json", bytes.NewReader(nil))
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			var out map[string]any
			if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&out) != nil {
				t.Errorf("accept: %d", res.StatusCode)
				return
			}
			ids <- out["booking"].(map[string]any)["id"].(string)
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	a.must(a.do("GET", "/v1/slots/"+sl["id"].(string), a.key, ""), 200, &got)
	if len(seen) != 1 || got["booked_seats"] != float64(1) || got["held_seats"] != float64(0) {
		t.Fatalf("16 accepts gave bookings %v, slot %v", seen, got)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	a := setup(t)
	a.must(a.do("GET", "/healthz", "", ""), 200, nil)
	a.must(a.do("GET", "/readyz", "", ""), 200, nil)
	a.problem(a.do("GET", "/v1/nothing", "", ""), 404, "not_found")
}

func (a *api) doKey(method, path, key, idem, body string) resp {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", idem)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	a := setup(t)
	path := "/v1/businesses/" + a.bid + "/waitlist:join"
	body := `{"name":"Ann","email":"ann@example.com","service":"haircut"}`
	first := a.doKey("POST", path, a.key, "k-1", body)
	second := a.doKey("POST", path, a.key, "k-1", body)
	if first.status != 201 || second.status != 201 || !bytes.Equal(first.body, second.body) || second.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s", first.status, first.body, second.status, second.body)
	}
	var list struct {
		Entries []map[string]any `json:"entries"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/waitlist", a.key, ""), 200, &list)
	if len(list.Entries) != 1 {
		t.Fatalf("a replayed join made %d entries", len(list.Entries))
	}
	a.problem(a.doKey("POST", path, a.key, "k-1", `{"name":"Bob","email":"bob@example.com","service":"haircut"}`), 422, "idempotency_key_reuse")
	// A refusal is a response too: replayed, not re-run.
	dup := a.doKey("POST", path, a.key, "k-2", body)
	if dup.status != 409 || !bytes.Equal(a.doKey("POST", path, a.key, "k-2", body).body, dup.body) {
		t.Fatalf("refusal replay: %d %s", dup.status, dup.body)
	}
	// Another caller's key space is its own.
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	if r := a.doKey("POST", "/v1/businesses/"+other["id"].(string)+"/waitlist:join", other["api_key"].(string), "k-1", body); r.status != 201 {
		t.Fatalf("same key, other business: %d %s", r.status, r.body)
	}
	// A running record is what a request leaves when it committed a phase
	// before calling another system and then died: a retry resumes it (runs
	// the request, which picks up where it stopped), finishes the record,
	// and a third try replays that answer.
	running := `{"name":"Cy","email":"cy@example.com","service":"haircut"}`
	sum := sha256.Sum256([]byte("POST " + path + "\n" + running))
	if err := a.store.InTx(context.Background(), func(tx nextup.Tx) error {
		_, err := tx.IdempotencyStart(context.Background(), nextup.IdempotencyRecord{Scope: "caller:" + nextup.HashToken(a.key), Key: nextup.HashToken("idempotency-key:k-3"),
			Fingerprint: hex.EncodeToString(sum[:]), CreatedAt: a.clock.Now(), ExpiresAt: a.clock.Now().Add(time.Hour)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	resumed := a.doKey("POST", path, a.key, "k-3", running)
	again := a.doKey("POST", path, a.key, "k-3", running)
	if resumed.status != 201 || resumed.header.Get("Idempotent-Replayed") != "" || again.status != 201 ||
		!bytes.Equal(resumed.body, again.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("resumed running record: %d %s / replay %d %s", resumed.status, resumed.body, again.status, again.body)
	}
	// A new business's API key is replayed to the client that holds the
	// Idempotency-Key, and the store keeps neither the key nor the API key.
	b1 := a.doKey("POST", "/v1/businesses", adminToken, "k-biz", `{"name":"B","timezone":"UTC"}`)
	b2 := a.doKey("POST", "/v1/businesses", adminToken, "k-biz", `{"name":"B","timezone":"UTC"}`)
	var biz map[string]any
	if b1.status != 201 || !bytes.Equal(b1.body, b2.body) || json.Unmarshal(b1.body, &biz) != nil {
		t.Fatalf("business create replay: %d %s / %s", b1.status, b1.body, b2.body)
	}
	apiKey := biz["api_key"].(string)
	if err := a.store.InTx(context.Background(), func(tx nextup.Tx) error {
		rec, err := tx.IdempotencyStart(context.Background(), nextup.IdempotencyRecord{Scope: "caller:" + nextup.HashToken(adminToken),
			Key: nextup.HashToken("idempotency-key:k-biz"), Fingerprint: "probe", CreatedAt: a.clock.Now(), ExpiresAt: a.clock.Now().Add(time.Hour)})
		switch {
		case !errors.Is(err, nextup.ErrConflict):
			return fmt.Errorf("no record kept for the business create: %v", err)
		case rec.Status != 201 || len(rec.Body) == 0:
			return fmt.Errorf("record = %+v", rec)
		case bytes.Contains(rec.Body, []byte(apiKey)) || bytes.Contains(rec.Body, []byte("api_key")) || rec.Key == "k-biz":
			return fmt.Errorf("the store keeps the response or the key in plain text: key %q body %q", rec.Key, rec.Body)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	a.problem(a.doKey("POST", path, a.key, strings.Repeat("x", 300), running), 400, "validation_failed")
}

func TestHandBacksOverHTTP(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sid := a.slot(chair)["id"].(string)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	var rel struct {
		Moves []nextup.Move `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+sid+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	a.must(a.do("POST", "/v1/claims/"+a.token(rel.Moves[0].OfferID)+":decline", "", ""), 200, nil)
	var list struct {
		HandBacks []map[string]any `json:"handbacks"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/handbacks?state=open", a.key, ""), 200, &list)
	if len(list.HandBacks) != 1 || list.HandBacks[0]["reason"] != "list_exhausted" || !strings.Contains(list.HandBacks[0]["note"].(string), "Ann (declined)") {
		t.Fatalf("hand-backs = %v", list.HandBacks)
	}
	hid := list.HandBacks[0]["id"].(string)
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	a.problem(a.do("POST", "/v1/handbacks/"+hid+":resolve", other["api_key"].(string), ""), 404, "not_found")
	var h map[string]any
	a.must(a.do("POST", "/v1/handbacks/"+hid+":resolve", a.key, ""), 200, &h)
	if h["state"] != "resolved" {
		t.Fatalf("resolved = %v", h)
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/handbacks", a.key, ""), 200, &list)
	if len(list.HandBacks) != 0 {
		t.Fatalf("open hand-backs after resolving = %v", list.HandBacks)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	a := setup(t, func(s *web.Server) { s.Metrics = web.NewMetrics(s.Store) })
	sid := a.slot(chair)["id"].(string)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, nil)
	var rel struct {
		Moves []nextup.Move `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+sid+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	tok := a.token(rel.Moves[0].OfferID)
	a.must(a.do("POST", "/v1/claims/"+tok+":accept", "", ""), 200, nil)
	a.must(a.do("POST", "/v1/claims/"+tok+":accept", "", ""), 200, nil)
	a.problem(a.do("POST", "/v1/claims/unknown:accept", "", ""), 404, "not_found")
	// Three seats of a class freed at once: one promotion-lag sample per
	// offer, so a release of many seats shows its tail.
	class := a.slot(`{"service":"yoga","starts_at":"2026-12-02T18:00:00Z","ends_at":"2026-12-02T19:00:00Z","capacity":3,"seating":"shared"}`)["id"].(string)
	for _, who := range []string{"bea", "cy", "dee"} {
		a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"`+who+`","email":"`+who+`@example.com","service":"yoga"}`), 201, nil)
	}
	a.must(a.do("POST", "/v1/slots/"+class+":release", a.key, `{"seats":3,"reason":"cancellation"}`), 200, &rel)
	if len(rel.Moves) != 3 {
		t.Fatalf("the class's release: %+v", rel.Moves)
	}
	r := a.do("GET", "/metrics", "", "")
	if r.status != 200 {
		t.Fatalf("metrics: %d", r.status)
	}
	text := string(r.body)
	for _, want := range []string{
		`nextup_claims_total{outcome="booked"} 1`,
		`nextup_claims_total{outcome="repeat"} 1`,
		`nextup_claims_total{outcome="not_found"} 1`,
		`nextup_promotion_lag_seconds_count 4`,
		`nextup_outbox_messages{channel="email",state="queued"} 5`, // the offers and the confirmation
		`nextup_outbox_messages{channel="sms",state="queued"} 0`,
		`nextup_http_requests_total{route="POST /v1/slots/{rest}",status="200"} 2`,
		`nextup_http_requests_total{route="POST /v1/businesses/{bid}/waitlist:join",status="201"} 4`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}

// The relay's attempts show on /metrics: sent and failures by channel,
// the provider's time, and the queue latency in the relay's clock's time.
func TestOutboxMetrics(t *testing.T) {
	t.Parallel()
	var metrics *web.Metrics
	a := setup(t, func(s *web.Server) { metrics = web.NewMetrics(s.Store); s.Metrics = metrics })
	now := a.clock.Now()
	for _, m := range []struct {
		id string
		ch nextup.Channel
		to string
	}{
		{"msg_1", nextup.ChannelEmail, "ann@example.com"},
		{"msg_2", nextup.ChannelSMS, "+447700900123"},
		{"msg_3", nextup.ChannelSMS, "+447700900124"},
	} {
		if err := a.store.InTx(context.Background(), func(tx nextup.Tx) error {
			return tx.MessageCreate(context.Background(), nextup.Message{ID: m.id, BusinessID: a.bid, Kind: nextup.MessageOffer,
				Channel: m.ch, To: m.to, Body: "A slot opened", State: nextup.MessageQueued, NotBefore: now, NextAttemptAt: now, CreatedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
	}
	a.clock.Advance(90 * time.Second)
	relay := &outbox.Relay{Store: a.store, Clock: a.clock, Default: capture.New(), OnAttempt: metrics.OutboxAttempt,
		Senders: map[nextup.Channel]nextup.Sender{nextup.ChannelSMS: scripted{
			"msg_2": errors.New("provider unavailable"),
			"msg_3": fmt.Errorf("%w: not a mobile number", nextup.ErrInvalid),
		}}}
	if sent, failed, err := relay.RunOnce(context.Background()); sent != 1 || failed != 2 || err != nil {
		t.Fatalf("RunOnce = %d sent, %d failed, %v", sent, failed, err)
	}
	r := a.do("GET", "/metrics", "", "")
	text := string(r.body)
	for _, want := range []string{
		`nextup_outbox_sent_total{channel="email"} 1`,
		`nextup_offer_send_lag_seconds_sum{channel="email"} 90`,
		`nextup_outbox_failures_total{channel="sms",outcome="failed"} 1`,
		`nextup_outbox_failures_total{channel="sms",outcome="dead"} 1`,
		`nextup_outbox_queue_latency_seconds_bucket{channel="email",le="51.2"} 0`,
		`nextup_outbox_queue_latency_seconds_bucket{channel="email",le="102.4"} 1`,
		`nextup_outbox_queue_latency_seconds_sum{channel="email"} 90`,
		`nextup_outbox_send_duration_seconds_count{channel="email"} 1`,
		`nextup_outbox_send_duration_seconds_count{channel="sms"} 2`,
		`nextup_outbox_messages{channel="email",state="sent"} 1`,
		`nextup_outbox_messages{channel="sms",state="failed"} 1`,
		`nextup_outbox_messages{channel="sms",state="dead"} 1`,
		`nextup_outbox_messages{channel="webhook",state="queued"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `nextup_outbox_sent_total{channel="sms"}`) || strings.Contains(text, `nextup_outbox_queue_latency_seconds_count{channel="sms"}`) {
		t.Errorf("failed texts counted as sent")
	}
	if t.Failed() {
		t.Log(text)
	}
}

// scripted is a provider that fails the messages it is given an error for.
type scripted map[string]error

func (s scripted) Channel() nextup.Channel { return nextup.ChannelSMS }

func (s scripted) Send(_ context.Context, m nextup.Message) (string, error) {
	if err := s[m.ID]; err != nil {
		return "", err
	}
	return "sms-" + m.ID, nil
}

func TestBusinessCatalogue(t *testing.T) {
	t.Parallel()
	a := setup(t)
	var biz map[string]any
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"slug":"corner-cuts","owner_email":"owner@example.com","country":"gb",
		"services":[{"name":"haircut","synonyms":["cut","trim"],"duration_minutes":45,"price_cents":3500}],"staff":["Ana","Ben"]}`), 200, &biz)
	if biz["slug"] != "corner-cuts" || biz["country"] != "GB" || len(biz["services"].([]any)) != 1 || len(biz["staff"].([]any)) != 2 {
		t.Fatalf("patched business = %v", biz)
	}
	// A partial patch keeps the rest.
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"staff":["Ana","Ben","Cy"]}`), 200, &biz)
	if biz["slug"] != "corner-cuts" || len(biz["staff"].([]any)) != 3 || biz["services"] == nil {
		t.Fatalf("after a partial patch = %v", biz)
	}
	for _, bad := range []string{`{"slug":"Corner Cuts!"}`, `{"country":"GBR"}`, `{"owner_email":"nope"}`,
		`{"services":[{"name":"cut"},{"name":"Cut"}]}`, `{"services":[{"name":"x","price_cents":-1}]}`, `{"staff":["Ana","ana"]}`, `{"colour":"red"}`} {
		a.problem(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, bad), 400, "validation_failed")
	}
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	a.problem(a.do("PATCH", "/v1/businesses/"+other["id"].(string), other["api_key"].(string), `{"slug":"corner-cuts"}`), 409, "slug_taken")
	a.problem(a.do("PATCH", "/v1/businesses/"+a.bid, other["api_key"].(string), `{"slug":"mine"}`), 404, "not_found")
	a.must(a.do("GET", "/v1/businesses/"+a.bid, a.key, ""), 200, &biz)
	if biz["slug"] != "corner-cuts" || len(biz["staff"].([]any)) != 3 {
		t.Fatalf("refused patches changed the business: %v", biz)
	}
}

// Many releases and accepts at once over HTTP: every slot keeps
// booked + held <= capacity, held seats match live offers, and every
// accepted link made exactly one booking.
func TestConcurrentReleasesAndAccepts(t *testing.T) {
	t.Parallel()
	a := setup(t)
	class := a.slot(`{"service":"yoga","seating":"shared","capacity":8,"starts_at":"2026-12-02T18:00:00Z","ends_at":"2026-12-02T19:00:00Z"}`)["id"].(string)
	var chairs []string
	for h := 11; h < 17; h++ {
		chairs = append(chairs, a.slot(fmt.Sprintf(`{"service":"haircut","starts_at":"2026-12-02T%02d:00:00Z","ends_at":"2026-12-02T%02d:30:00Z"}`, h, h))["id"].(string))
	}
	for i := range 20 {
		svc := "yoga"
		if i%2 == 0 {
			svc = "haircut"
		}
		a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
			fmt.Sprintf(`{"name":"P%d","email":"p%d@example.com","service":%q}`, i, i, svc)), 201, nil)
	}
	var wg sync.WaitGroup
	release := func(path, body string) {
		defer wg.Done()
		req, _ := http.NewRequest("POST", a.srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+a.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		res.Body.Close()
		if res.StatusCode != 200 && res.StatusCode != 409 {
			t.Errorf("%s: %d", path, res.StatusCode)
		}
	}
	for range 6 { // six single-seat releases of the class at once, and every chair
		wg.Add(1)
		go release("/v1/slots/"+class+":release", `{"seats":1,"reason":"cancellation"}`)
	}
	for _, c := range chairs {
		wg.Add(1)
		go release("/v1/slots/"+c+":release", `{"reason":"cancellation"}`)
	}
	wg.Wait()
	// Accept every live offer, each link from two clients at once.
	var tokens []string
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		ms, err := tx.MessageList(context.Background(), nextup.MessageFilter{BusinessID: a.bid})
		for _, m := range ms {
			if m.Kind == nextup.MessageOffer {
				tokens = append(tokens, m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:])
			}
		}
		return err
	})
	if err != nil || len(tokens) < 8 {
		t.Fatalf("offers after the releases: %d (%v)", len(tokens), err)
	}
	booked := make(chan string, 2*len(tokens))
	for _, tok := range tokens {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := http.Post(a.srv.URL+"/v1/claims/"+tok+":accept", "application/json", nil)
				if err != nil {
					t.Error(err)
					return
				}
				defer res.Body.Close()
				var out map[string]any
				if res.StatusCode == 200 && json.NewDecoder(res.Body).Decode(&out) == nil {
					booked <- out["booking"].(map[string]any)["id"].(string)
				}
			}()
		}
	}
	wg.Wait()
	close(booked)
	bookings := map[string]bool{}
	for id := range booked {
		bookings[id] = true
	}
	var slots struct {
		Slots []map[string]any `json:"slots"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/slots", a.key, ""), 200, &slots)
	total := 0
	for _, sl := range slots.Slots {
		booked, held, capacity := sl["booked_seats"].(float64), sl["held_seats"].(float64), sl["capacity"].(float64)
		liveSeats := 0.0
		for _, o := range sl["offers"].([]any) {
			o := o.(map[string]any)
			if o["state"] == "offered" || o["state"] == "pending" {
				liveSeats += o["seats"].(float64)
			}
			if o["state"] == "claimed" {
				total++
			}
		}
		if booked+held > capacity || held != liveSeats || booked < 0 {
			t.Errorf("slot %s: booked %v + held %v > capacity %v, or held != live offers' %v", sl["id"], booked, held, capacity, liveSeats)
		}
	}
	if total != len(bookings) || total != len(tokens) {
		t.Fatalf("%d offers, %d claimed, %d distinct bookings answered", len(tokens), total, len(bookings))
	}
}
