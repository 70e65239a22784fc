package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/store/sqlite"
)

// bookingEvent posts a booking-tool event signed with secret at t ("" for
// no signature header).
func (a *api) bookingEvent(secret string, t time.Time, body string) resp {
	a.t.Helper()
	req, err := http.NewRequest("POST", a.srv.URL+"/v1/businesses/"+a.bid+"/booking-events", strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Nextup-Signature", nextup.Signature([]byte(secret), t, []byte(body)))
	}
	return a.send(req)
}

// footprint counts what an event could change: slots, offers, entries
// not waiting, audit rows and messages.
func (a *api) footprint() [5]int {
	a.t.Helper()
	var out [5]int
	ctx := context.Background()
	err := a.store.Read(ctx, func(tx nextup.Tx) error {
		sls, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: a.bid})
		if err != nil {
			return err
		}
		out[0] = len(sls)
		for _, sl := range sls {
			os, err := tx.OfferListBySlot(ctx, sl.ID)
			if err != nil {
				return err
			}
			out[1] += len(os)
		}
		es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: a.bid})
		for _, e := range es {
			if e.State != nextup.EntryWaiting {
				out[2]++
			}
		}
		if err != nil {
			return err
		}
		evs, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: a.bid})
		out[3] = len(evs)
		if err != nil {
			return err
		}
		ms, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: a.bid})
		out[4] = len(ms)
		return err
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return out
}

func (a *api) slotByID(id string) nextup.Slot {
	a.t.Helper()
	var sl nextup.Slot
	if err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		var err error
		sl, err = tx.SlotGet(context.Background(), id)
		return err
	}); err != nil {
		a.t.Fatalf("slot %s: %v", id, err)
	}
	return sl
}

func (a *api) entry(id string) nextup.Entry {
	a.t.Helper()
	var e nextup.Entry
	if err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		var err error
		e, err = tx.EntryGet(context.Background(), id)
		return err
	}); err != nil {
		a.t.Fatalf("entry %s: %v", id, err)
	}
	return e
}

func cancelled(eventID, apptID string) string {
	return `{"id":"` + eventID + `","type":"appointment.cancelled","appointment":{"id":"` + apptID +
		`","service":"haircut","staff":"Ana","starts_at":"2026-12-01T15:00:00Z","ends_at":"2026-12-01T15:45:00Z"}}`
}

// TestBookingEvents drives the booking tool's webhook through HTTP on
// SQLite and PostgreSQL: the secret, the first sight of an appointment
// (its slot made, freed and offered), a repeated event answered the same
// and changing nothing, each refusal changing nothing, a booking in the
// tool ending nextup's offer on the same chair, an opening, a direct
// booking withdrawing the person's pointless entry (dedupe), and a new
// secret retiring the old.
func TestBookingEvents(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var st nextup.Store
			ctx := context.Background()
			if backend == "sqlite" {
				db, err := sqlite.Open(ctx, t.TempDir()+"/nextup.db")
				if err != nil {
					t.Fatal(err)
				}
				st = db
			} else {
				db, err := postgres.Open(ctx, pgtest.NewSchema(t, 8).DSN)
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				st = db
			}
			testBookingEvents(t, setupOn(t, st))
		})
	}
}

func testBookingEvents(t *testing.T, a *api) {
	now := a.clock.Now()
	base := "/v1/businesses/" + a.bid + "/booking-events"

	// No secret yet: refused, whoever signs.
	a.problem(a.bookingEvent("guess", now, cancelled("ev_0", "appt_1")), 401, nextup.CodeBadSignature)
	// The secret is the business key's to make.
	a.problem(a.do("POST", base+":secret", "", ""), 401, nextup.CodeUnauthorized)
	var made struct{ Secret, URL string }
	a.must(a.do("POST", base+":secret", a.key, ""), 201, &made)
	if !strings.HasPrefix(made.Secret, "nbe_") || len(made.Secret) < 36 || !strings.HasSuffix(made.URL, base) {
		t.Fatalf("secret %+v", made)
	}
	var biz map[string]any
	a.must(a.do("GET", "/v1/businesses/"+a.bid, a.key, ""), 200, &biz)
	if be, _ := biz["booking_events"].(map[string]any); be == nil || be["since"] == nil || be["secret"] != nil {
		t.Fatalf("the business shows %v as booking_events, want since and no secret", biz["booking_events"])
	}

	var ann map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &ann)
	annID := ann["id"].(string)

	// Every refusal is 401 bad_signature and changes nothing.
	before := a.footprint()
	body := cancelled("ev_1", "appt_1")
	for name, r := range map[string]resp{
		"unsigned":        a.bookingEvent("", now, body),
		"other secret":    a.bookingEvent("nbe_not-the-secret", now, body),
		"six minutes old": a.bookingEvent(made.Secret, now.Add(-6*time.Minute), body),
		"from the future": a.bookingEvent(made.Secret, now.Add(6*time.Minute), body),
	} {
		t.Run(name, func(t *testing.T) { a.problem(r, 401, nextup.CodeBadSignature) })
	}
	// Signed, then changed on the way.
	req, _ := http.NewRequest("POST", a.srv.URL+base, strings.NewReader(strings.Replace(body, "15:00", "16:00", 1)))
	req.Header.Set("Nextup-Signature", nextup.Signature([]byte(made.Secret), now, []byte(body)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("a tampered body is %d, want 401", res.StatusCode)
	}
	// Signed but unknown or malformed: 400, nothing changed.
	a.problem(a.bookingEvent(made.Secret, now, strings.Replace(body, "appointment.cancelled", "appointment.moved", 1)), 400, nextup.CodeValidation)
	a.problem(a.bookingEvent(made.Secret, now, `{"id":"ev_x","type":"appointment.cancelled","appointment":{"id":"a"}}`), 400, nextup.CodeValidation)
	a.problem(a.bookingEvent(made.Secret, now, `[1,2]`), 400, nextup.CodeValidation)
	if after := a.footprint(); after != before {
		t.Fatalf("refused events changed %v to %v", before, after)
	}

	// First sight of appt_1, cancelled: its slot is made (booked, then
	// freed) and offered to Ann, four minutes after the tool signed.
	r := a.bookingEvent(made.Secret, now.Add(-4*time.Minute), body)
	var first struct {
		SlotID string        `json:"slot_id"`
		Moves  []nextup.Move `json:"moves"`
	}
	a.must(r, 200, &first)
	if len(first.Moves) != 1 || first.Moves[0].Move != nextup.MoveOffer || first.Moves[0].EntryID != annID {
		t.Fatalf("moves %+v, want one offer to Ann", first.Moves)
	}
	sl := a.slotByID(first.SlotID)
	if sl.Service != "haircut" || sl.Staff != "Ana" || sl.Capacity != 1 || sl.BookedSeats != 0 || sl.HeldSeats != 1 ||
		!sl.StartsAt.Equal(time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)) {
		t.Fatalf("slot %+v", sl)
	}
	// The same event again: the first answer, nothing more.
	before = a.footprint()
	again := a.bookingEvent(made.Secret, now, body)
	if again.status != 200 || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat: %d %s %v, want the first answer %s", again.status, again.body, again.header, r.body)
	}
	// A second cancellation of the same appointment under a new id
	// finds the slot (one slot per appointment) and, the chair being
	// free already, frees nothing.
	var second struct {
		SlotID string        `json:"slot_id"`
		Moves  []nextup.Move `json:"moves"`
	}
	a.must(a.bookingEvent(made.Secret, now, cancelled("ev_2", "appt_1")), 200, &second)
	if second.SlotID != first.SlotID || len(second.Moves) != 0 {
		t.Fatalf("second cancellation %+v", second)
	}
	if after := a.footprint(); after[0] != before[0] || after[1] != before[1] || after[4] != before[4] {
		t.Fatalf("repeats changed %v to %v", before, after)
	}

	// The receptionist books the chair by phone while Ann's offer is
	// out, and the tool calls it a new appointment: nextup finds its slot
	// for that chair and time, Ann's offer ends (she keeps her place),
	// the chair is full and offered to nobody — nobody is double-booked.
	booked := `{"id":"ev_3","type":"appointment.created","occurred_at":"2026-12-01T10:02:00Z","appointment":{"id":"appt_2","service":"haircut","staff":"Ana","starts_at":"2026-12-01T15:00:00Z","ends_at":"2026-12-01T15:45:00Z"}}`
	var took struct {
		SlotID string        `json:"slot_id"`
		Moves  []nextup.Move `json:"moves"`
	}
	a.must(a.bookingEvent(made.Secret, now, booked), 200, &took)
	sl = a.slotByID(first.SlotID)
	if took.SlotID != first.SlotID || sl.BookedSeats != 1 || sl.HeldSeats != 0 || sl.HandedBack || len(took.Moves) != 0 {
		t.Fatalf("after the booking: slot %s %+v, moves %+v", took.SlotID, sl, took.Moves)
	}
	if e := a.entry(annID); e.State != nextup.EntryWaiting {
		t.Fatalf("Ann is %s, want waiting", e.State)
	}
	var offer map[string]any
	a.must(a.do("GET", "/v1/offers/"+first.Moves[0].OfferID, a.key, ""), 200, &offer)
	if offer["state"] != string(nextup.OfferCancelled) {
		t.Fatalf("Ann's offer %v", offer)
	}
	// The same appointment's cancellation, sent earlier but delivered
	// late: older than the booking applied, it changes nothing.
	before = a.footprint()
	var late map[string]any
	a.must(a.bookingEvent(made.Secret, now, `{"id":"ev_3a","type":"appointment.cancelled","occurred_at":"2026-12-01T10:01:00Z","appointment":{"id":"appt_2","service":"haircut","staff":"Ana","starts_at":"2026-12-01T15:00:00Z","ends_at":"2026-12-01T15:45:00Z"}}`), 200, &late)
	if late["ignored"] == nil || a.slotByID(first.SlotID).BookedSeats != 1 {
		t.Fatalf("a stale cancellation: %v, slot %+v", late, a.slotByID(first.SlotID))
	}
	if after := a.footprint(); after[0] != before[0] || after[1] != before[1] || after[2] != before[2] || after[4] != before[4] {
		t.Fatalf("a stale event changed %v to %v", before, after)
	}

	// A shared class with two seats, both offered; the tool books one
	// seat of it: only the newest offer ends.
	for _, name := range []string{"Cy", "Di"} {
		a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"`+name+`","email":"`+strings.ToLower(name)+`@example.com","service":"yoga"}`), 201, nil)
	}
	var class struct {
		SlotID string        `json:"slot_id"`
		Moves  []nextup.Move `json:"moves"`
	}
	a.must(a.bookingEvent(made.Secret, now, `{"id":"ev_c1","type":"opening.created","appointment":{"id":"class_1","service":"yoga","starts_at":"2026-12-02T18:00:00Z","ends_at":"2026-12-02T19:00:00Z","capacity":2,"seating":"shared"}}`), 200, &class)
	if len(class.Moves) != 2 {
		t.Fatalf("the class's opening: %+v", class.Moves)
	}
	a.must(a.bookingEvent(made.Secret, now, `{"id":"ev_c2","type":"appointment.created","appointment":{"id":"class_1","service":"yoga","starts_at":"2026-12-02T18:00:00Z","ends_at":"2026-12-02T19:00:00Z","capacity":1,"seating":"shared"}}`), 200, nil)
	cl := a.slotByID(class.SlotID)
	var o1, o2 map[string]any
	a.must(a.do("GET", "/v1/offers/"+class.Moves[0].OfferID, a.key, ""), 200, &o1)
	a.must(a.do("GET", "/v1/offers/"+class.Moves[1].OfferID, a.key, ""), 200, &o2)
	if cl.BookedSeats != 1 || cl.HeldSeats != 1 || o1["state"] != string(nextup.OfferOffered) || o2["state"] != string(nextup.OfferCancelled) {
		t.Fatalf("one seat booked in the tool: class %+v, offers %v / %v; want the older offer kept", cl, o1["state"], o2["state"])
	}

	// A new opening: a free slot, offered to Ann.
	opening := `{"id":"ev_4","type":"opening.created","appointment":{"id":"open_9","service":"haircut","starts_at":"2026-12-02T09:00:00Z","ends_at":"2026-12-02T09:45:00Z"}}`
	var opened struct {
		SlotID string        `json:"slot_id"`
		Moves  []nextup.Move `json:"moves"`
	}
	a.must(a.bookingEvent(made.Secret, now, opening), 200, &opened)
	if opened.SlotID == first.SlotID || len(opened.Moves) != 1 || opened.Moves[0].EntryID != annID {
		t.Fatalf("opening %+v", opened)
	}

	// Dedupe: Bob waits for a haircut; he books one directly in the
	// tool, which names him: his entry is withdrawn and he is told.
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid+"/rules", a.key, `{"dedupe":"same_service"}`), 200, nil)
	var bob map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Bob","email":"bob@example.com","service":"haircut"}`), 201, &bob)
	direct := `{"id":"ev_5","type":"appointment.created","appointment":{"id":"appt_7","service":"haircut","starts_at":"2026-12-03T11:00:00Z","ends_at":"2026-12-03T11:45:00Z","customer":{"email":"Bob@Example.com"}}}`
	a.must(a.bookingEvent(made.Secret, now, direct), 200, nil)
	if e := a.entry(bob["id"].(string)); e.State != nextup.EntryLeft {
		t.Fatalf("Bob is %s after booking directly, want left", e.State)
	}
	if len(a.outbox("deduped")) != 1 {
		t.Fatalf("Bob was not told: %v", a.outbox("deduped"))
	}
	if sl := a.slotByID(nextupSlot(t, a, direct)); sl.BookedSeats != 1 {
		t.Fatalf("the direct booking's slot %+v", sl)
	}

	// A new secret retires the old one.
	var rolled struct{ Secret string }
	a.must(a.do("POST", base+":secret", a.key, ""), 201, &rolled)
	a.problem(a.bookingEvent(made.Secret, now, cancelled("ev_6", "appt_8")), 401, nextup.CodeBadSignature)
	a.must(a.bookingEvent(rolled.Secret, now, cancelled("ev_6", "appt_8")), 200, nil)
}

// nextupSlot is the slot id a signed event's appointment maps to, read
// back from the answer to the same event (a replay).
func nextupSlot(t *testing.T, a *api, body string) string {
	t.Helper()
	var biz nextup.Business
	if err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		var err error
		biz, err = tx.BusinessGet(context.Background(), a.bid)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		SlotID string `json:"slot_id"`
	}
	a.must(a.bookingEvent(biz.Profile.BookingEvents.Secret, a.clock.Now(), body), 200, &out)
	return out.SlotID
}

// TestBookingEventREADMEExample runs the README's example: its payload,
// signed as its shell lines sign it, is accepted and frees the chair.
func TestBookingEventREADMEExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- booking-event-example -->\\s*```json\\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README has no booking-event example (a ```json block after <!-- booking-event-example -->)")
	}
	payload := strings.TrimSpace(string(m[1]))
	var ev map[string]any
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		t.Fatalf("the README's payload is not JSON: %v", err)
	}
	// The shell lines sign "<t>.<body>" with openssl: the README must say so.
	if !strings.Contains(string(readme), `openssl dgst -sha256 -hmac "$SECRET"`) || !strings.Contains(string(readme), "Nextup-Signature: t=$T,v1=$SIG") {
		t.Fatal("the README's example does not show how to sign the payload")
	}
	a := setup(t)
	var made struct{ Secret string }
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/booking-events:secret", a.key, ""), 201, &made)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Ann","email":"ann@example.com","service":"Haircut"}`), 201, nil)
	var out struct {
		SlotID string        `json:"slot_id"`
		Moves  []nextup.Move `json:"moves"`
	}
	a.must(a.bookingEvent(made.Secret, a.clock.Now(), payload), 200, &out)
	if out.SlotID == "" || len(out.Moves) != 1 || out.Moves[0].Move != nextup.MoveOffer {
		t.Fatalf("the README's cancellation did %+v, want an offer", out)
	}
}
