package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/web"
)

// evAPI is the test bundle with a sweeper, to let timers fire on the fake
// clock (expiries, reminders).
type evAPI struct {
	*api
	ws    *web.Server
	sweep *timer.Sweeper
}

func setupEvents(t testing.TB, opts ...func(*web.Server)) *evAPI {
	t.Helper()
	var ws *web.Server
	a := setup(t, append(opts, func(s *web.Server) { ws = s })...)
	return &evAPI{api: a, ws: ws, sweep: &timer.Sweeper{Store: a.store, Clock: a.clock, Handler: ws.Svc}}
}

// advance moves the fake clock, firing every timer due on the way.
func (a *evAPI) advance(d time.Duration) {
	a.t.Helper()
	if err := timer.Advance(context.Background(), a.clock, a.sweep, d); err != nil {
		a.t.Fatal(err)
	}
}

// event creates an event from a JSON body's extra fields; it starts 30
// days after the clock's now (Tue 1 Dec 2026 10:00 London) at 19:00.
func (a *evAPI) event(extra string) map[string]any {
	a.t.Helper()
	body := `{"title":"Supper club","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z"` + extra + `}`
	var ev map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/events", a.key, body), 201, &ev)
	return ev
}

// register registers name (email name@example.com) with guests.
func (a *evAPI) register(evID, name string, guests int) map[string]any {
	a.t.Helper()
	var r map[string]any
	a.must(a.do("POST", "/v1/events/"+evID+"/registrations", a.key,
		fmt.Sprintf(`{"name":%q,"email":"%s@example.com","guests":%d}`, name, emailLocal(name), guests)), 201, &r)
	return r
}

// emailLocal is the letters and digits of name, lower-cased.
func emailLocal(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.ToLower(name))
}

func (a *evAPI) registration(evID, rid string) map[string]any {
	a.t.Helper()
	var r map[string]any
	a.must(a.do("GET", "/v1/events/"+evID+"/registrations/"+rid, a.key, ""), 200, &r)
	return r
}

func (a *evAPI) eventGet(evID string) map[string]any {
	a.t.Helper()
	var ev map[string]any
	a.must(a.do("GET", "/v1/events/"+evID, a.key, ""), 200, &ev)
	return ev
}

// cancel cancels a registration through the API and returns its moves.
func (a *evAPI) cancel(evID, rid string) []any {
	a.t.Helper()
	var out map[string]any
	a.must(a.do("DELETE", "/v1/events/"+evID+"/registrations/"+rid, a.key, ""), 200, &out)
	moves, _ := out["moves"].([]any)
	return moves
}

func wantState(t *testing.T, r map[string]any, state string, position float64) {
	t.Helper()
	if r["state"] != state || (position > 0 && r["position"] != position) || (position == 0 && r["position"] != nil) {
		t.Fatalf("registration %v: state %v position %v, want %s position %v", r["name"], r["state"], r["position"], state, position)
	}
}

// offeredEntries lists the entry ids of the offer moves.
func offeredEntries(moves []any) []string {
	var out []string
	for _, m := range moves {
		mv := m.(map[string]any)
		if mv["move"] == "offer" || mv["move"] == "roll_on" {
			out = append(out, mv["entry_id"].(string))
		}
	}
	return out
}

func TestEventCreate(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	ev := a.event(`,"capacity":30`)
	if ev["kind"] != "event" || ev["seating"] != "shared" || ev["capacity"] != 30.0 || ev["claim_window_seconds"] != 21600.0 ||
		ev["reminder_morning_of"] != "09:00" || fmt.Sprint(ev["reminder_offsets_seconds"]) != "[604800 86400]" ||
		ev["max_guests_per_rsvp"] != 0.0 || ev["waitlist_limit"] != nil || ev["price_cents"] != 0.0 || ev["currency"] != "eur" {
		t.Fatalf("event defaults: %v", ev)
	}
	// Its id works on the slot endpoints.
	var sl map[string]any
	a.must(a.do("GET", "/v1/slots/"+ev["id"].(string), a.key, ""), 200, &sl)
	if sl["kind"] != "event" || sl["free_seats"] != 30.0 {
		t.Fatalf("event as a slot: %v", sl)
	}
	// Bad input: a clear error naming the fields, and nothing written.
	for body, field := range map[string]string{
		`{"title":"","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3}`:                                               "title",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T18:00:00Z","capacity":3}`:                                              "ends_at",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":0}`:                                              "capacity",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"registration_cutoff":"2027-01-01T00:00:00Z"}`: "registration_cutoff",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"claim_window_seconds":5}`:                     "claim_window_seconds",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"reminder_morning_of":"9am"}`:                  "reminder_morning_of",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"currency":"euro"}`:                            "currency",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"waitlist_limit":-1}`:                          "waitlist_limit",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"price_cents":"ten"}`:                          "price_cents",
		`{"title":"x","starts_at":"yesterday","ends_at":"2026-12-31T23:00:00Z","capacity":3}`:                                                         "starts_at",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"colour":"red"}`:                               "colour",
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"promotion_cutoff_seconds":99999999999999999}`: "promotion_cutoff_seconds",
	} {
		p := a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/events", a.key, body), 400, "validation_failed")
		if !strings.Contains(fmt.Sprint(p["errors"]), "field:"+field) {
			t.Errorf("%s: errors %v, want field %s", body, p["errors"], field)
		}
	}
	var list map[string][]map[string]any
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/events", a.key, ""), 200, &list)
	if len(list["events"]) != 1 || list["events"][0]["id"] != ev["id"] {
		t.Fatalf("events after refused creates: %v", list)
	}
	// A plain slot is no event, and another business sees nothing.
	sl = a.slot(chair)
	a.problem(a.do("GET", "/v1/events/"+sl["id"].(string), a.key, ""), 404, "not_found")
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	a.problem(a.do("GET", "/v1/events/"+ev["id"].(string), other["api_key"].(string), ""), 404, "not_found")
	a.problem(a.do("POST", "/v1/events/"+ev["id"].(string)+"/registrations", other["api_key"].(string), `{"name":"X","email":"x@example.com"}`), 404, "not_found")
	// An event's time cannot be moved; its title and settings can.
	a.problem(a.do("PATCH", "/v1/events/"+ev["id"].(string), a.key, `{"starts_at":"2026-12-30T19:00:00Z","ends_at":"2026-12-30T23:00:00Z"}`), 400, "validation_failed")
	var patched map[string]any
	a.must(a.do("PATCH", "/v1/events/"+ev["id"].(string), a.key, `{"title":"Winter supper club","waitlist_limit":5,"reminder_offsets_seconds":[]}`), 200, &patched)
	if patched["title"] != "Winter supper club" || patched["waitlist_limit"] != 5.0 || fmt.Sprint(patched["reminder_offsets_seconds"]) != "[]" {
		t.Fatalf("patched: %v", patched)
	}
	a.must(a.do("PATCH", "/v1/events/"+ev["id"].(string), a.key, `{"waitlist_limit":null}`), 200, &patched)
	if patched["waitlist_limit"] != nil || patched["title"] != "Winter supper club" {
		t.Fatalf("patched limit back to none: %v", patched)
	}
}

func TestRegistrationRules(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	ev := a.event(`,"capacity":3,"max_guests_per_rsvp":1`)
	id := ev["id"].(string)
	ann := a.register(id, "Ann", 1) // 2 seats
	wantState(t, ann, "confirmed", 0)
	if ann["seats"] != 2.0 || ann["guest_count"] != 1.0 || len(ann["guests"].([]any)) != 1 || ann["booking_id"] == nil || !strings.HasPrefix(ann["status_url"].(string), "https://nextup.test/s/") {
		t.Fatalf("ann: %v", ann)
	}
	wantState(t, a.register(id, "Ben", 0), "confirmed", 0)
	cy := a.register(id, "Cy", 0)
	wantState(t, cy, "waitlisted", 1)
	wantState(t, a.register(id, "Dee", 0), "waitlisted", 2)
	if got := a.eventGet(id); got["booked_seats"] != 3.0 || got["free_seats"] != 0.0 || got["state"] != "full" {
		t.Fatalf("event after 3 seats: %v", got)
	}
	// Guests beyond the limit; a contact missing.
	p := a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Eve","email":"eve@example.com","guests":2}`), 400, "validation_failed")
	if !strings.Contains(fmt.Sprint(p["errors"]), "field:guests") {
		t.Fatalf("guests: %v", p)
	}
	a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Eve"}`), 400, "validation_failed")
	// The same person again: 409 naming their registration.
	p = a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Ann B","email":"ANN@example.com"}`), 409, "already_registered")
	if p["id"] != ann["id"] || p["state"] != "confirmed" || p["position"] != nil {
		t.Fatalf("already registered (confirmed): %v", p)
	}
	p = a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Cy","email":"cy@example.com"}`), 409, "already_registered")
	if p["id"] != cy["id"] || p["state"] != "waitlisted" || p["position"] != 1.0 {
		t.Fatalf("already registered (waitlisted): %v", p)
	}
	// Idempotency-Key: the same request again is the same answer, once.
	body := `{"name":"Fay","email":"fay@example.com"}`
	r1 := a.doKey("POST", "/v1/events/"+id+"/registrations", a.key, "fay-1", body)
	r2 := a.doKey("POST", "/v1/events/"+id+"/registrations", a.key, "fay-1", body)
	if r1.status != 201 || r2.status != 201 || string(r1.body) != string(r2.body) {
		t.Fatalf("idempotent registration: %d %s / %d %s", r1.status, r1.body, r2.status, r2.body)
	}
	a.problem(a.doKey("POST", "/v1/events/"+id+"/registrations", a.key, "fay-1", `{"name":"Gus","email":"gus@example.com"}`), 422, "idempotency_key_reuse")
	var wl map[string][]map[string]any
	a.must(a.do("GET", "/v1/events/"+id+"/waitlist", a.key, ""), 200, &wl)
	if names := regNames(wl["waitlist"]); fmt.Sprint(names) != "[Cy Dee Fay]" {
		t.Fatalf("waitlist %v, want Cy Dee Fay in order", names)
	}
	for i, r := range wl["waitlist"] {
		if r["position"] != float64(i+1) {
			t.Fatalf("waitlist positions: %v", wl)
		}
	}
	// A full waitlist.
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"waitlist_limit":3}`), 200, nil)
	a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Gus","email":"gus@example.com"}`), 409, "waitlist_full")
	// Registration closed.
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"waitlist_limit":null,"registration_cutoff":"2026-12-01T09:00:00Z"}`), 200, nil)
	a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Gus","email":"gus@example.com"}`), 409, "registration_closed")
	_, regs := a.guestList(id, "")
	if len(regs) != 5 {
		t.Fatalf("guest list after refusals: %d registrations, want 5", len(regs))
	}
}

func regNames(rs []map[string]any) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r["name"].(string))
	}
	return out
}

func (a *evAPI) guestList(evID, state string) (map[string]any, []map[string]any) {
	a.t.Helper()
	var out struct {
		Event         map[string]any   `json:"event"`
		Registrations []map[string]any `json:"registrations"`
	}
	path := "/v1/events/" + evID + "/registrations"
	if state != "" {
		path += "?state=" + state
	}
	a.must(a.do("GET", path, a.key, ""), 200, &out)
	return out.Event, out.Registrations
}

// The documented rule: freed seats go to the next registrant whose party
// fits them. A party of 3 is skipped when only 2 seats are free (and keeps
// its place); the single behind it is offered, for the event's claim
// window; a hold that lapses rolls on.
func TestCancellationPromotesWhoFits(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	ev := a.event(`,"capacity":4,"max_guests_per_rsvp":2`)
	id := ev["id"].(string)
	ann, ben := a.register(id, "Ann", 1), a.register(id, "Ben", 1) // 2 + 2 seats: full
	cy := a.register(id, "Cy", 2)                                  // a party of 3
	dee, eve := a.register(id, "Dee", 0), a.register(id, "Eve", 0)
	wantState(t, cy, "waitlisted", 1)
	wantState(t, dee, "waitlisted", 2)

	moves := a.cancel(id, ann["id"].(string))
	if got := offeredEntries(moves); !slices.Equal(got, []string{dee["id"].(string), eve["id"].(string)}) {
		t.Fatalf("2 seats free: offered %v, want Dee and Eve (Cy's party of 3 skipped)", got)
	}
	wantState(t, a.registration(id, cy["id"].(string)), "waitlisted", 1)
	wantState(t, a.registration(id, ann["id"].(string)), "cancelled", 0)
	d := a.registration(id, dee["id"].(string))
	wantState(t, d, "offered", 0)
	var offer map[string]any
	a.must(a.do("GET", "/v1/offers/"+d["offer_id"].(string), a.key, ""), 200, &offer)
	if exp, _ := time.Parse(time.RFC3339, offer["expires_at"].(string)); !exp.Equal(a.clock.Now().Add(6 * time.Hour)) {
		t.Fatalf("hold expires %v, want the event's 6-hour claim window from %v", offer["expires_at"], a.clock.Now())
	}
	// Dee claims; Eve lets hers lapse: it rolls on to nobody who fits
	// (Cy's 3 do not fit 1 seat), and Eve keeps her place.
	var claim map[string]any
	a.must(a.do("POST", "/v1/claims/"+a.token(d["offer_id"].(string))+":accept", "", ""), 200, &claim)
	wantState(t, a.registration(id, dee["id"].(string)), "confirmed", 0)
	a.advance(6*time.Hour + time.Second)
	wantState(t, a.registration(id, eve["id"].(string)), "waitlisted", 2)
	// Ben cancels: 3 seats free, and now Cy's party fits.
	moves = a.cancel(id, ben["id"].(string))
	if got := offeredEntries(moves); !slices.Equal(got, []string{cy["id"].(string)}) {
		t.Fatalf("3 seats free: offered %v, want Cy", got)
	}
	if got := a.eventGet(id); got["booked_seats"] != 1.0 || got["held_seats"] != 3.0 {
		t.Fatalf("event: %v", got)
	}
}

// Two cancellations at the same instant promote two different people, and
// the seats are never promised twice.
func TestTwoCancellationsAtOnce(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":2`)["id"].(string)
	ann, ben := a.register(id, "Ann", 0), a.register(id, "Ben", 0)
	cy, dee := a.register(id, "Cy", 0), a.register(id, "Dee", 0)
	var wg sync.WaitGroup
	results := make([]resp, 2)
	for i, r := range []map[string]any{ann, ben} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = a.do("DELETE", "/v1/events/"+id+"/registrations/"+r["id"].(string), a.key, "")
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.status != 200 {
			t.Fatalf("cancel: %d %s", r.status, r.body)
		}
	}
	wantState(t, a.registration(id, cy["id"].(string)), "offered", 0)
	wantState(t, a.registration(id, dee["id"].(string)), "offered", 0)
	if got := a.eventGet(id); got["held_seats"] != 2.0 || got["booked_seats"] != 0.0 {
		t.Fatalf("event: %v", got)
	}
	var sl map[string]any
	a.must(a.do("GET", "/v1/slots/"+id, a.key, ""), 200, &sl)
	if n := len(sl["offers"].([]any)); n != 2 {
		t.Fatalf("%d offers, want 2 (one each)", n)
	}
}

// After the promotion cutoff freed seats are not offered: the event goes
// back to staff (audited), and the seat stays open for direct
// registration and walk-ins.
func TestPromotionCutoff(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	// The event is 30 days out; promotions stop 2 days before it.
	id := a.event(`,"capacity":1,"promotion_cutoff_seconds":172800`)["id"].(string)
	ann, ben := a.register(id, "Ann", 0), a.register(id, "Ben", 0)
	a.advance(29 * 24 * time.Hour) // a day and 9 hours before the start
	moves := a.cancel(id, ann["id"].(string))
	if len(moves) != 1 || moves[0].(map[string]any)["move"] != "hand_back" || moves[0].(map[string]any)["reason"] != "promotion_cutoff" {
		t.Fatalf("moves %v, want a hand-back for the promotion cutoff", moves)
	}
	wantState(t, a.registration(id, ben["id"].(string)), "waitlisted", 1)
	var audit map[string][]map[string]any
	a.must(a.do("GET", "/v1/slots/"+id+"/audit", a.key, ""), 200, &audit)
	if !slices.ContainsFunc(audit["events"], func(e map[string]any) bool {
		return e["to"] == "handed_back" && e["reason"] == "promotion_cutoff"
	}) {
		t.Fatalf("no promotion_cutoff hand-back in the audit: %v", audit)
	}
	var hbs map[string][]map[string]any
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/handbacks?state=open", a.key, ""), 200, &hbs)
	if len(hbs["handbacks"]) != 1 || hbs["handbacks"][0]["reason"] != "promotion_cutoff" {
		t.Fatalf("hand-backs: %v", hbs)
	}
	// The free seat is there for whoever registers now.
	wantState(t, a.register(id, "Cat", 0), "confirmed", 0)
	wantState(t, a.registration(id, ben["id"].(string)), "waitlisted", 1)
}

// Growing capacity promotes in batch in fair order; shrinking below what
// is taken is refused.
func TestCapacityIncreasePromotesAll(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":20`)["id"].(string)
	for i := range 20 {
		wantState(t, a.register(id, fmt.Sprintf("Guest%02d", i), 0), "confirmed", 0)
	}
	var waiting []string
	for i := range 8 {
		r := a.register(id, fmt.Sprintf("Wait%02d", i), 0)
		wantState(t, r, "waitlisted", float64(i+1))
		waiting = append(waiting, r["id"].(string))
	}
	var out map[string]any
	a.must(a.do("PATCH", "/v1/events/"+id, a.key, `{"capacity":30}`), 200, &out)
	if got := offeredEntries(out["moves"].([]any)); !slices.Equal(got, waiting) {
		t.Fatalf("capacity 20 -> 30 offered %v, want all 8 in fair order %v", got, waiting)
	}
	if out["capacity"] != 30.0 || out["booked_seats"] != 20.0 || out["held_seats"] != 8.0 {
		t.Fatalf("event after growing: %v", out)
	}
	p := a.problem(a.do("PATCH", "/v1/events/"+id, a.key, `{"capacity":27}`), 409, "capacity_below_taken")
	if !strings.Contains(p["detail"].(string), "28") {
		t.Fatalf("detail: %v", p)
	}
	if got := a.eventGet(id); got["capacity"] != 30.0 {
		t.Fatalf("refused shrink changed capacity: %v", got)
	}
}

// The organiser's override: offer a named person next, audited with the
// staff member and the reason.
func TestPromoteOverride(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":1`)["id"].(string)
	ann := a.register(id, "Ann", 0)
	ben, cy, dee := a.register(id, "Ben", 0), a.register(id, "Cy", 0), a.register(id, "Dee", 0)
	path := "/v1/events/" + id + "/waitlist/" + dee["id"].(string) + ":promote"
	a.problem(a.do("POST", path, a.key, `{"reason":""}`), 400, "validation_failed")
	a.problem(a.do("POST", "/v1/events/"+id+"/waitlist/"+ann["id"].(string)+":promote", a.key, `{"reason":"x"}`), 409, "not_waitlisted")
	// No seat free: Dee is put first in line.
	var r map[string]any
	a.must(a.do("POST", path, a.key, `{"reason":"speaker's partner","by":"maria@club.example"}`), 200, &r)
	wantState(t, r, "waitlisted", 1)
	wantState(t, a.registration(id, ben["id"].(string)), "waitlisted", 2)
	if got := offeredEntries(a.cancel(id, ann["id"].(string))); !slices.Equal(got, []string{dee["id"].(string)}) {
		t.Fatalf("after the override the freed seat went to %v, want Dee", got)
	}
	// A seat free (after the promotion cutoff the engine leaves it to
	// staff): the override offers it at once, for the event's window.
	late := a.event(`,"capacity":1,"promotion_cutoff_seconds":2678400`)["id"].(string) // promotions closed already
	fay, gus := a.register(late, "Fay", 0), a.register(late, "Gus", 0)
	a.cancel(late, fay["id"].(string))
	wantState(t, a.registration(late, gus["id"].(string)), "waitlisted", 1)
	r = nil
	a.must(a.do("POST", "/v1/events/"+late+"/waitlist/"+gus["id"].(string)+":promote", a.key, `{"reason":"asked at the door"}`), 200, &r)
	wantState(t, r, "offered", 0)
	if r["hold_expires_at"] != a.clock.Now().Add(6*time.Hour).UTC().Format(time.RFC3339) {
		t.Fatalf("override hold: %v", r)
	}
	_ = cy
	var audit map[string][]map[string]any
	a.must(a.do("GET", "/v1/slots/"+id+"/audit", a.key, ""), 200, &audit)
	i := slices.IndexFunc(audit["events"], func(e map[string]any) bool { return e["reason"] == "override" })
	if i < 0 {
		t.Fatalf("no override in the audit: %v", audit)
	}
	o := audit["events"][i]
	det := o["detail"].(map[string]any)
	if o["actor"] != "staff" || o["subject_id"] != dee["id"] || det["by"] != "api key: maria@club.example" || det["reason"] != "speaker's partner" || det["position"] != 3.0 {
		t.Fatalf("override audit row: %v", o)
	}
}

// The guest list in JSON and CSV, check-in and no-show.
func TestGuestList(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":4,"max_guests_per_rsvp":2`)["id"].(string)
	ann, ben := a.register(id, "Ann", 2), a.register(id, "=cmd()", 0) // 4 seats; a name that would be a formula
	cy := a.register(id, "Cy", 0)
	var r map[string]any
	a.must(a.do("POST", "/v1/events/"+id+"/registrations/"+ann["id"].(string)+":check_in", a.key, ""), 200, &r)
	if r["checked_in"] != true || r["checked_in_at"] == nil {
		t.Fatalf("checked in: %v", r)
	}
	a.problem(a.do("POST", "/v1/events/"+id+"/registrations/"+cy["id"].(string)+":check_in", a.key, ""), 409, "not_confirmed")
	_, regs := a.guestList(id, "")
	if len(regs) != 3 || regs[0]["name"] != "Ann" || regs[0]["guest_count"] != 2.0 || regs[0]["checked_in"] != true ||
		regs[0]["email"] != "ann@example.com" || regs[0]["registered_at"] == nil || regs[2]["state"] != "waitlisted" {
		t.Fatalf("guest list: %v", regs)
	}
	if _, w := a.guestList(id, "waitlisted"); len(w) != 1 || w[0]["name"] != "Cy" {
		t.Fatalf("waitlisted only: %v", w)
	}
	a.problem(a.do("GET", "/v1/events/"+id+"/registrations?state=maybe", a.key, ""), 400, "validation_failed")
	// CSV.
	req, _ := http.NewRequest("GET", a.srv.URL+"/v1/events/"+id+"/registrations", nil)
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Accept", "text/csv")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(res.Body).ReadAll()
	res.Body.Close()
	if err != nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %v %s", err, res.Header.Get("Content-Type"))
	}
	// Ann's row, then one for each of her two (unnamed) guests, checked
	// in with her.
	if len(rows) != 6 || strings.Join(rows[0], ",") != "name,email,phone,guests,seats,state,position,registered_at,checked_in_at,id,guest,guest_of" ||
		rows[1][0] != "Ann" || rows[1][3] != "2" || rows[1][5] != "confirmed" || rows[1][8] == "" ||
		rows[2][0] != "" || rows[2][4] != "" || rows[2][8] != rows[1][8] || rows[2][9] != rows[1][9] || rows[2][10] != "1" || rows[2][11] != "Ann" ||
		rows[3][10] != "2" || rows[4][0] != "'=cmd()" || rows[5][5] != "waitlisted" || rows[5][6] != "1" {
		t.Fatalf("csv rows: %q", rows)
	}
	// A no-show frees the seats and promotes.
	var ns map[string]any
	a.must(a.do("POST", "/v1/events/"+id+"/registrations/"+ben["id"].(string)+":no_show", a.key, ""), 200, &ns)
	if ns["state"] != "no_show" || !slices.Equal(offeredEntries(ns["moves"].([]any)), []string{cy["id"].(string)}) {
		t.Fatalf("no-show: %v", ns)
	}
	// Undo a check-in.
	a.must(a.do("POST", "/v1/events/"+id+"/registrations/"+ann["id"].(string)+":check_in", a.key, `{"undo":true}`), 200, &r)
	if r["checked_in"] != false {
		t.Fatalf("undo check-in: %v", r)
	}
}

// Every confirmation carries the invite and a self-service cancel link;
// the link cancels until the cutoff; reminders go at the event's offsets
// and on its morning, and are cancelled with the registration.
func TestConfirmationCancelLinkAndReminders(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":1,"cancellation_cutoff":"2026-12-30T19:00:00Z"`)["id"].(string)
	ann := a.register(id, "Ann", 0)
	ben := a.register(id, "Ben", 0)
	confs := a.outbox(nextup.MessageConfirmation)
	if len(confs) != 1 || confs[0].EntryID != ann["id"] || !strings.Contains(confs[0].Calendar, "BEGIN:VEVENT") ||
		!strings.Contains(confs[0].Calendar, "SUMMARY:Supper club") {
		t.Fatalf("confirmation: %+v", confs)
	}
	i := strings.Index(confs[0].Body, "https://nextup.test/r/")
	if i < 0 || !strings.Contains(confs[0].HTML, "https://nextup.test/r/") {
		t.Fatalf("no cancel link in %q", confs[0].Body)
	}
	link := strings.Fields(confs[0].Body[i:])[0]
	path := strings.TrimPrefix(link, "https://nextup.test")
	// Reminders: a week and a day before, and 09:00 London on the day.
	timers := a.reminders(ann["booking_id"].(string))
	start := time.Date(2026, 12, 31, 19, 0, 0, 0, time.UTC)
	want := []time.Time{start.Add(-7 * 24 * time.Hour), start.Add(-24 * time.Hour), time.Date(2026, 12, 31, 9, 0, 0, 0, time.UTC)}
	if !slices.EqualFunc(timers, want, func(a, b time.Time) bool { return a.Equal(b) }) {
		t.Fatalf("reminders at %v, want %v", timers, want)
	}
	// Viewing the link changes nothing; a tampered link is 404.
	status, _, page := a.page("GET", path)
	if status != 200 || !strings.Contains(page, "Cancel my place") {
		t.Fatalf("cancel page: %d %s", status, page)
	}
	wantState(t, a.registration(id, ann["id"].(string)), "confirmed", 0)
	if status, _, _ := a.page("GET", path[:len(path)-2]+"xx"); status != 404 {
		t.Fatalf("tampered link: %d", status)
	}
	// The first reminder goes a week before.
	a.advance(start.Add(-7*24*time.Hour).Sub(a.clock.Now()) + time.Minute)
	if rs := a.outbox("reminder"); len(rs) != 1 || !strings.Contains(rs[0].Body, "/r/") {
		t.Fatalf("week-before reminder: %+v", rs)
	}
	// Ann cancels from her link: Ben is offered, her reminders are gone.
	status, _, page = a.page("POST", path)
	if status != 200 || !strings.Contains(page, "Your place is cancelled") {
		t.Fatalf("cancel by link: %d %s", status, page)
	}
	wantState(t, a.registration(id, ann["id"].(string)), "cancelled", 0)
	wantState(t, a.registration(id, ben["id"].(string)), "offered", 0)
	if rest := a.reminders(ann["booking_id"].(string)); len(rest) != 0 {
		t.Fatalf("reminders left after cancelling: %v", rest)
	}
	// After the cancellation cutoff: 409, by the API and by a link.
	var claim map[string]any
	a.must(a.do("POST", "/v1/claims/"+a.token(a.registration(id, ben["id"].(string))["offer_id"].(string))+":accept", "", ""), 200, &claim)
	a.advance(time.Date(2026, 12, 30, 19, 0, 1, 0, time.UTC).Sub(a.clock.Now()))
	a.problem(a.do("DELETE", "/v1/events/"+id+"/registrations/"+ben["id"].(string), a.key, ""), 409, "cancellation_closed")
	wantState(t, a.registration(id, ben["id"].(string)), "confirmed", 0)
	confs = a.outbox(nextup.MessageConfirmation)
	j := slices.IndexFunc(confs, func(m nextup.Message) bool { return m.EntryID == ben["id"] })
	if j < 0 {
		t.Fatalf("no confirmation for Ben's claim")
	}
	k := strings.Index(confs[j].Body, "https://nextup.test/r/")
	benPath := strings.TrimPrefix(strings.Fields(confs[j].Body[k:])[0], "https://nextup.test")
	if status, _, page := a.page("POST", benPath); status != 409 || !strings.Contains(page, "Cancellations have closed") {
		t.Fatalf("cancel by link after the cutoff: %d %s", status, page)
	}
}

// reminders lists the pending reminder times of a booking.
func (a *evAPI) reminders(bookingID string) []time.Time {
	a.t.Helper()
	var out []time.Time
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		ts, err := tx.TimerList(context.Background(), nextup.TimerFilter{Kind: nextup.TimerBookingRemind, SubjectID: bookingID, PendingOnly: true})
		for _, t := range ts {
			out = append(out, t.DueAt.UTC())
		}
		return err
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return out
}

// A registration whose booking ended by another door (the bookings API,
// a no-show) is over: the person may register again, once.
func TestRegisterAgainAfterBookingEnded(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	id := a.event(`,"capacity":3`)["id"].(string)
	ann := a.register(id, "Ann", 0)
	a.must(a.do("POST", "/v1/bookings/"+ann["booking_id"].(string)+":cancel", a.key, ""), 200, nil)
	wantState(t, a.registration(id, ann["id"].(string)), "cancelled", 0)
	again := a.register(id, "Ann", 0)
	wantState(t, again, "confirmed", 0)
	p := a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Ann","email":"ann@example.com"}`), 409, "already_registered")
	if p["id"] != again["id"] {
		t.Fatalf("already registered names %v, want the new registration %v", p["id"], again["id"])
	}
	a.must(a.do("POST", "/v1/events/"+id+"/registrations/"+again["id"].(string)+":no_show", a.key, ""), 200, nil)
	wantState(t, a.registration(id, again["id"].(string)), "no_show", 0)
	third := a.register(id, "Ann", 0)
	wantState(t, third, "confirmed", 0)
	a.problem(a.do("POST", "/v1/events/"+id+"/registrations", a.key, `{"name":"Ann","email":"ann@example.com"}`), 409, "already_registered")
	if _, regs := a.guestList(id, "confirmed"); len(regs) != 1 {
		t.Fatalf("Ann confirmed %d times", len(regs))
	}
}
