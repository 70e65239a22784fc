package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
)

// TestStrictInput sends values that make no sense, each to the route that
// takes them: every one is a 400 validation_failed problem naming the
// field, and the store holds exactly what it held before (slots, entries,
// offers, messages, bookings, audit rows, the business and its rules).
func TestStrictInput(t *testing.T) {
	t.Parallel()
	a := setup(t)
	sid := a.slot(chair)["id"].(string) // booked, Tuesday 14:00
	var ev map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/events", a.key,
		`{"title":"Pottery night","starts_at":"2026-12-10T18:00:00Z","ends_at":"2026-12-10T21:00:00Z","capacity":10}`), 201, &ev)
	evID := ev["id"].(string)
	// Ann takes a second chair, freed, so that there is a booking to
	// cancel; the first stays booked, to be released.
	_, _, booking := annTakesASecondChair(t, a)

	local65 := strings.Repeat("a", 65)
	long255 := strings.Repeat("a", 60) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + ".io"
	join := func(name, email string) string {
		b, _ := json.Marshal(map[string]any{"name": name, "email": email, "service": "haircut"})
		return string(b)
	}
	slotAt := func(start, end string) string {
		return fmt.Sprintf(`{"service":"haircut","starts_at":%q,"ends_at":%q}`, start, end)
	}
	eventAt := func(start, end string) string {
		return fmt.Sprintf(`{"title":"Class","starts_at":%q,"ends_at":%q,"capacity":5}`, start, end)
	}
	slots, events := "/v1/businesses/"+a.bid+"/slots", "/v1/businesses/"+a.bid+"/events"
	cases := []struct {
		name, method, path, body, field string
	}{
		{"release of zero seats", "POST", "/v1/slots/" + sid + ":release", `{"seats":0,"reason":"cancellation"}`, "seats"},
		{"release of minus one seat", "POST", "/v1/slots/" + sid + ":release", `{"seats":-1,"reason":"cancellation"}`, "seats"},
		{"slot that started yesterday", "POST", slots, slotAt("2026-11-30T14:00:00Z", "2026-11-30T15:00:00Z"), "starts_at"},
		{"slot that started a minute ago", "POST", slots, slotAt("2026-12-01T09:59:00Z", "2026-12-01T11:00:00Z"), "starts_at"},
		{"slot of eight days", "POST", slots, slotAt("2026-12-02T09:00:00Z", "2026-12-10T09:00:00Z"), "ends_at"},
		{"slot in 1999", "POST", slots, slotAt("1999-12-31T09:00:00Z", "1999-12-31T10:00:00Z"), "starts_at"},
		{"slot in 2040", "POST", slots, slotAt("2040-01-02T09:00:00Z", "2040-01-02T10:00:00Z"), "starts_at"},
		{"slot ending before it starts", "POST", slots, slotAt("2026-12-02T10:00:00Z", "2026-12-02T09:00:00Z"), "ends_at"},
		{"slot service with a control character", "POST", slots, `{"service":"hair\u0007cut","starts_at":"2026-12-02T09:00:00Z","ends_at":"2026-12-02T10:00:00Z"}`, "service"},
		{"event that ended before it started", "POST", events, eventAt("2026-12-12T18:00:00Z", "2026-12-12T17:00:00Z"), "ends_at"},
		{"event in the past", "POST", events, eventAt("2026-11-01T18:00:00Z", "2026-11-01T20:00:00Z"), "starts_at"},
		{"event of a fortnight", "POST", events, eventAt("2026-12-12T18:00:00Z", "2026-12-26T18:00:00Z"), "ends_at"},
		{"event title with an escape sequence", "POST", events, `{"title":"Class\u001b[2J","starts_at":"2026-12-12T18:00:00Z","ends_at":"2026-12-12T19:00:00Z","capacity":5}`, "title"},
		{"country XX", "PATCH", "/v1/businesses/" + a.bid, `{"country":"XX"}`, "country"},
		{"country UK (GB is the code)", "PATCH", "/v1/businesses/" + a.bid, `{"country":"UK"}`, "country"},
		{"country EU", "PATCH", "/v1/businesses/" + a.bid, `{"country":"EU"}`, "country"},
		{"owner email with a 65-octet local part", "PATCH", "/v1/businesses/" + a.bid, `{"owner_email":"` + local65 + `@example.com"}`, "owner_email"},
		{"staff name with a line break", "PATCH", "/v1/businesses/" + a.bid, `{"staff":["Ana\nBea"]}`, "staff[0]"},
		{"service name with a bidi override", "PATCH", "/v1/businesses/" + a.bid, `{"services":[{"name":"Cut\u202Etxt"}]}`, "services[0].name"},
		{"join: 65-octet local part", "POST", "/v1/businesses/" + a.bid + "/waitlist:join", join("Bea", local65+"@example.com"), "email"},
		{"join: 255-octet address", "POST", "/v1/businesses/" + a.bid + "/waitlist:join", join("Bea", long255), "email"},
		{"join: name with a NUL", "POST", "/v1/businesses/" + a.bid + "/waitlist:join", join("Bea\x00", "bea@example.com"), "name"},
		{"join: name with a bell", "POST", "/v1/businesses/" + a.bid + "/waitlist:join", join("Bea\a", "bea@example.com"), "name"},
		{"join: name with a right-to-left override", "POST", "/v1/businesses/" + a.bid + "/waitlist:join", join("Bea\u202Emoc.live", "bea@example.com"), "name"},
		{"join: name of 201 characters", "POST", "/v1/businesses/" + a.bid + "/waitlist:join", join(strings.Repeat("é", 201), "bea@example.com"), "name"},
		{"registration: name with a control character", "POST", "/v1/events/" + evID + "/registrations", `{"name":"Cy\u0008","email":"cy@example.com"}`, "name"},
		{"cancel reason with a control character", "POST", "/v1/bookings/" + booking + ":cancel", `{"reason":"gone\u0000"}`, "reason"},
		{"business name with a line break", "POST", "/v1/businesses", `{"name":"Salon\nInjected: yes","timezone":"Europe/London"}`, "name"},
		// Found by TestHostileInput: each of these was once acted on.
		{"cancel with a null body", "POST", "/v1/bookings/" + booking + ":cancel", `null`, "body"},
		{"release with an array body", "POST", "/v1/slots/" + sid + ":release", `[]`, "body"},
		{"release that does not say why", "POST", "/v1/slots/" + sid + ":release", `{}`, "reason"},
		{"rules: null in a list", "PATCH", "/v1/businesses/" + a.bid + "/rules", `{"reminder_offsets_seconds":[null]}`, "rules"},
		{"rules: a null body", "PATCH", "/v1/businesses/" + a.bid + "/rules", `null`, "rules"},
		{"rules: version -1", "PATCH", "/v1/businesses/" + a.bid + "/rules", `{"version":-1}`, "version"},
		{"guest list as xml", "GET", "/v1/events/" + evID + "/registrations?format=xml", ``, "format"},
	}
	before := a.fingerprint()
	for _, c := range cases {
		key := a.key
		if c.path == "/v1/businesses" {
			key = adminToken
		}
		r := a.do(c.method, c.path, key, c.body)
		if r.status != 400 {
			t.Errorf("%s: status %d, want 400: %s", c.name, r.status, r.body)
			continue
		}
		p := a.problem(r, 400, nextup.CodeValidation)
		if !namesField(p, c.field) {
			t.Errorf("%s: problem %s does not name field %s", c.name, r.body, c.field)
		}
		if after := a.fingerprint(); after != before {
			t.Fatalf("%s: refused, yet the store changed", c.name)
		}
	}

	// A rules PATCH that changes nothing keeps its version, and writes
	// nothing.
	var rules map[string]any
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, `{}`), 200, &rules)
	same := fmt.Sprintf(`{"claim_window_seconds":%v}`, rules["claim_window_seconds"])
	for _, body := range []string{`{}`, same} {
		var got map[string]any
		a.must(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, body), 200, &got)
		if got["version"] != float64(1) {
			t.Errorf("rules PATCH %s that changes nothing: version %v, want 1", body, got["version"])
		}
	}
	if after := a.fingerprint(); after != before {
		t.Errorf("rules PATCH that changes nothing changed the store")
	}
	// The same fields with sensible values pass, so that the refusals
	// above are of the values, not the routes.
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"country":"GB","owner_email":"`+strings.Repeat("a", 64)+`@example.com","staff":["Ana","Bea"]}`), 200, nil)
	a.must(a.do("POST", "/v1/slots/"+sid+":release", a.key, `{"reason":"cancellation"}`), 200, nil)
	a.must(a.do("POST", slots, a.key, slotAt("2026-12-02T09:00:00Z", "2026-12-09T09:00:00Z")), 201, nil)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, join("Zoë Ñúñez", "zoe@example.com")), 201, nil)
}

// namesField reports whether a validation problem lists field.
func namesField(p map[string]any, field string) bool {
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		if m, _ := e.(map[string]any); m["field"] == field {
			return true
		}
	}
	return false
}

// annTakesASecondChair joins Ann to the haircut list, frees a second
// chair (booked outside nextup) so that she is offered it, and has her
// accept: it returns her entry, the offer and the booking it made.
func annTakesASecondChair(t *testing.T, a *api) (entryID, offerID, bookingID string) {
	t.Helper()
	var entry map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &entry)
	second := a.slot(`{"service":"haircut","staff":"Bea","starts_at":"2026-12-01T15:00:00Z","ends_at":"2026-12-01T15:45:00Z"}`)["id"].(string)
	var rel struct {
		Moves []nextup.Move `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+second+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	if len(rel.Moves) != 1 {
		t.Fatalf("release of the second chair: moves %+v, want an offer to Ann", rel.Moves)
	}
	a.must(a.do("POST", "/v1/claims/"+a.token(rel.Moves[0].OfferID)+":accept", "", ""), 200, nil)
	return entry["id"].(string), rel.Moves[0].OfferID, bookingOf(t, a, second)
}

// bookingOf returns the id of the live booking of a slot.
func bookingOf(t *testing.T, a *api, slotID string) string {
	t.Helper()
	var id string
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		bs, err := tx.BookingListBySlot(context.Background(), slotID)
		for _, b := range bs {
			if b.State == nextup.BookingBooked {
				id = b.ID
			}
		}
		return err
	})
	if err != nil || id == "" {
		t.Fatalf("no live booking of slot %s: %v", slotID, err)
	}
	return id
}

// fingerprint hashes what the store holds for the test's business: its
// profile and rules, slots, entries, offers, bookings, messages and audit
// rows.
func (a *api) fingerprint() string {
	a.t.Helper()
	ctx := context.Background()
	h := sha256.New()
	err := a.store.Read(ctx, func(tx nextup.Tx) error {
		biz, err := tx.BusinessGet(ctx, a.bid)
		if err != nil {
			return err
		}
		parts := []any{biz}
		sl, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: a.bid})
		if err != nil {
			return err
		}
		parts = append(parts, sl)
		for _, s := range sl {
			os, err := tx.OfferListBySlot(ctx, s.ID)
			if err != nil {
				return err
			}
			bk, err := tx.BookingListBySlot(ctx, s.ID)
			if err != nil {
				return err
			}
			parts = append(parts, os, bk)
		}
		es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: a.bid})
		if err != nil {
			return err
		}
		parts = append(parts, es)
		ms, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: a.bid})
		if err != nil {
			return err
		}
		parts = append(parts, ms)
		au, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: a.bid})
		if err != nil {
			return err
		}
		parts = append(parts, au)
		return json.NewEncoder(h).Encode(parts)
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
