package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// personDoc is the part of an export the tests read.
type personDoc struct {
	GeneratedAt time.Time `json:"generated_at"`
	Contact     struct {
		Email string `json:"email"`
		Phone string `json:"phone"`
	} `json:"contact"`
	Entries []struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Email    string `json:"email"`
		State    string `json:"state"`
		Position int    `json:"position"`
	} `json:"entries"`
	Offers       []map[string]any `json:"offers"`
	Bookings     []map[string]any `json:"bookings"`
	Messages     []map[string]any `json:"messages"`
	Audit        []map[string]any `json:"audit"`
	Proposals    []map[string]any `json:"proposals"`
	Suppressions []map[string]any `json:"suppressions"`
}

type erasedOut struct {
	Erased            map[string]int `json:"erased"`
	Withdrawn         int            `json:"withdrawn"`
	CancelledBookings int            `json:"cancelled_bookings"`
	Pseudonym         string         `json:"pseudonym"`
	Moves             []nextup.Move  `json:"moves"`
}

func (a *api) export(query string) personDoc {
	a.t.Helper()
	var d personDoc
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/people/export?"+query, a.key, ""), 200, &d)
	return d
}

func (a *api) erase(contact string) erasedOut {
	a.t.Helper()
	var out erasedOut
	body, _ := json.Marshal(map[string]string{"contact": contact})
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/people:erase", a.key, string(body)), 200, &out)
	return out
}

// businessAudit is the business's own audit rows of kind to.
func (a *api) businessAudit(to string) []nextup.AuditEvent {
	a.t.Helper()
	var out []nextup.AuditEvent
	if err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		evs, err := tx.AuditList(context.Background(), nextup.AuditFilter{BusinessID: a.bid,
			SubjectType: nextup.SubjectBusiness, SubjectID: a.bid})
		for _, ev := range evs {
			if ev.To == to {
				out = append(out, ev)
			}
		}
		return err
	}); err != nil {
		a.t.Fatal(err)
	}
	return out
}

// TestPersonExportAndErase: Ann joins twice (by email and phone), is
// offered a freed chair and claims it, and staff export what nextup holds
// about her by email and by phone (both routes), then erase her. The
// erasure leaves the trail's shape and the day's figures as they were,
// removes her name, addresses and messages' text everywhere, and erasing
// again changes nothing; both are audited without her contact.
func TestPersonExportAndErase(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"services":[{"name":"Haircut","price_cents":4500}]}`), 200, nil)
	var ann map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Ann Lovelace","email":"Ann@Example.com","phone":"+44 7700 900123","service":"haircut"}`), 201, &ann)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Bob","email":"bob@example.com","service":"haircut"}`), 201, nil)
	sl := a.slot(chair)
	sid := sl["id"].(string)
	var rel struct {
		Moves []nextup.Move `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+sid+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	if len(rel.Moves) != 1 || rel.Moves[0].EntryID != ann["id"] {
		t.Fatalf("release moves = %+v, want an offer to Ann", rel.Moves)
	}
	a.clock.Advance(3 * time.Minute)
	a.must(a.do("POST", "/v1/claims/"+a.token(rel.Moves[0].OfferID)+":accept", "", ""), 200, nil)
	// A second entry of hers, by phone only, that left.
	var ann2 map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Ann L.","phone":"+447700900123","service":"colour"}`), 201, &ann2)
	a.must(a.do("DELETE", "/v1/waitlist/"+ann2["id"].(string), a.key, ""), 200, nil)
	// The day passes: her booking is history.
	a.advance(26 * time.Hour)

	byEmail := a.export("contact=ann@EXAMPLE.com")
	if !byEmail.GeneratedAt.Equal(a.clock.Now()) {
		t.Errorf("generated_at %v, want the clock's %v", byEmail.GeneratedAt, a.clock.Now())
	}
	if byEmail.Contact.Email != "ann@example.com" || len(byEmail.Entries) != 1 || byEmail.Entries[0].State != "booked" ||
		len(byEmail.Offers) != 1 || len(byEmail.Bookings) != 1 || len(byEmail.Messages) == 0 || len(byEmail.Audit) == 0 {
		t.Fatalf("export by email = %+v", byEmail)
	}
	byPhone := a.export("contact=+447700900123")
	var byPath personDoc
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/people/+44%207700%20900123/export", a.key, ""), 200, &byPath)
	if len(byPhone.Entries) != 2 || byPhone.Contact.Phone != "+447700900123" || !reflect.DeepEqual(byPhone, byPath) {
		t.Fatalf("export by phone = %+v\nby path = %+v", byPhone, byPath)
	}
	for _, m := range byPhone.Messages {
		if m["body"] == "" {
			t.Errorf("exported message without its body: %v", m)
		}
	}
	if n := len(a.businessAudit("person_exported")); n != 3 {
		t.Errorf("%d person_exported rows, want 3", n)
	}

	figures := func() map[string]any {
		var out struct {
			Figures map[string]any `json:"figures"`
		}
		a.must(a.do("GET", "/v1/businesses/"+a.bid+"/analytics?from=2026-12-01&to=2026-12-02", a.key, ""), 200, &out)
		return out.Figures
	}
	type step struct{ At, Actor, Subject, From, To, Reason string }
	story := func() []step {
		var out struct {
			Events []struct {
				At          string `json:"at"`
				Actor       string `json:"actor"`
				SubjectType string `json:"subject_type"`
				SubjectID   string `json:"subject_id"`
				From        string `json:"from"`
				To          string `json:"to"`
				Reason      string `json:"reason"`
			} `json:"events"`
		}
		a.must(a.do("GET", "/v1/slots/"+sid+"/audit", a.key, ""), 200, &out)
		var s []step
		for _, e := range out.Events {
			s = append(s, step{e.At, e.Actor, e.SubjectType + ":" + e.SubjectID, e.From, e.To, e.Reason})
		}
		return s
	}
	figuresBefore, storyBefore := figures(), story()

	out := a.erase("+447700900123")
	if out.Erased["entries"] != 2 || out.Erased["offers"] != 1 || out.Erased["bookings"] != 1 || out.Erased["messages"] == 0 ||
		out.Withdrawn != 0 || out.CancelledBookings != 0 || !strings.HasPrefix(out.Pseudonym, "erased-") {
		t.Fatalf("erase = %+v", out)
	}
	if got := figures(); !reflect.DeepEqual(got, figuresBefore) {
		t.Errorf("figures after the erasure:\n\t%v\nbefore:\n\t%v", got, figuresBefore)
	}
	if got := story(); !reflect.DeepEqual(got, storyBefore) {
		t.Errorf("the slot's story after the erasure:\n\t%v\nbefore:\n\t%v", got, storyBefore)
	}
	e := a.entry(ann["id"].(string))
	if e.Name != out.Pseudonym || e.Email != "" || e.Phone != "" || e.State != nextup.EntryBooked {
		t.Errorf("Ann's entry after the erasure = %+v", e)
	}
	// Nothing left anywhere names her: not the slot's audit details, nor
	// the outbox, nor an export.
	var audit, msgs map[string]any
	a.must(a.do("GET", "/v1/slots/"+sid+"/audit", a.key, ""), 200, &audit)
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/messages", a.key, ""), 200, &msgs)
	for what, v := range map[string]any{"slot audit": audit, "messages": msgs} {
		b, _ := json.Marshal(v)
		for _, s := range []string{"Ann", "ann@example.com", "Ann@Example.com", "7700", "Lovelace"} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s still holds %q: %s", what, s, b)
			}
		}
	}
	for _, q := range []string{"contact=ann@example.com", "contact=%2B447700900123"} {
		if d := a.export(q); len(d.Entries)+len(d.Offers)+len(d.Bookings)+len(d.Messages)+len(d.Audit) != 0 {
			t.Errorf("export %s after the erasure = %+v, want empty lists", q, d)
		}
	}
	// Bob is untouched.
	if d := a.export("contact=bob@example.com"); len(d.Entries) != 1 || d.Entries[0].Name != "Bob" {
		t.Errorf("Bob after Ann's erasure = %+v", d)
	}

	again := a.erase("ann@example.com")
	for k, n := range again.Erased {
		if n != 0 {
			t.Errorf("erasing again rewrote %d %s", n, k)
		}
	}
	if got := a.entry(ann["id"].(string)); !reflect.DeepEqual(got, e) {
		t.Errorf("erasing again changed the entry:\n\t%+v\nwas\n\t%+v", got, e)
	}
	rows := a.businessAudit("person_erased")
	if len(rows) != 2 {
		t.Fatalf("%d person_erased rows, want 2", len(rows))
	}
	if rows[0].Actor != nextup.ActorStaff || rows[0].Detail["pseudonym"] != out.Pseudonym || rows[0].Detail["entries"] != float64(2) {
		t.Errorf("person_erased row = %+v", rows[0])
	}
	for _, r := range append(rows, a.businessAudit("person_exported")...) {
		b, _ := json.Marshal(r.Detail)
		if strings.Contains(string(b), "ann") || strings.Contains(string(b), "7700") {
			t.Errorf("audit row %s names the contact: %s", r.To, b)
		}
	}
}

// TestPersonEraseWithdrawsFirst: a person holding a live offer is
// withdrawn the way leaving is (the offer rolls on to the next person),
// and a booking of theirs for a slot not yet started is cancelled, its
// seat offered on.
func TestPersonEraseWithdrawsFirst(t *testing.T) {
	t.Parallel()
	a := setup(t)
	var cy, bob map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Cy","email":"cy@example.com","service":"haircut"}`), 201, &cy)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Bob","email":"bob@example.com","service":"haircut"}`), 201, &bob)
	sl := a.slot(chair)
	var rel struct {
		Moves []nextup.Move `json:"moves"`
	}
	a.must(a.do("POST", "/v1/slots/"+sl["id"].(string)+":release", a.key, `{"reason":"cancellation"}`), 200, &rel)
	if len(rel.Moves) != 1 || rel.Moves[0].EntryID != cy["id"] {
		t.Fatalf("release moves = %+v, want an offer to Cy", rel.Moves)
	}
	out := a.erase("cy@example.com")
	if out.Withdrawn != 1 || out.Erased["entries"] != 1 {
		t.Fatalf("erase = %+v", out)
	}
	var rolled bool
	for _, m := range out.Moves {
		rolled = rolled || (m.EntryID == bob["id"] && m.OfferID != "")
	}
	if !rolled {
		t.Errorf("moves %+v, want the offer rolled on to Bob", out.Moves)
	}
	if e := a.entry(cy["id"].(string)); e.State != nextup.EntryLeft || e.Email != "" {
		t.Errorf("Cy after the erasure = %+v", e)
	}

	// Bob claims; then he is erased: his booking tomorrow is cancelled
	// and the chair is free again.
	var off map[string]any
	for _, m := range out.Moves {
		if m.EntryID == bob["id"] {
			off = map[string]any{"id": m.OfferID}
		}
	}
	a.must(a.do("POST", "/v1/claims/"+a.token(off["id"].(string))+":accept", "", ""), 200, nil)
	out = a.erase("bob@example.com")
	if out.CancelledBookings != 1 || out.Erased["bookings"] != 1 {
		t.Fatalf("erase of Bob = %+v", out)
	}
	if got := a.slotByID(sl["id"].(string)); got.BookedSeats != 0 {
		t.Errorf("slot after Bob's erasure: %d booked, want 0", got.BookedSeats)
	}
}

// TestPersonBadContactAndAuth: a contact that is neither an email nor a
// phone number is 400 validation_failed naming the field, and changes
// nothing; the routes take the business's key, and another business's is
// 404.
func TestPersonBadContactAndAuth(t *testing.T) {
	t.Parallel()
	a := setup(t)
	var ann map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &ann)
	for _, body := range []string{`{"contact":"not a contact"}`, `{"contact":""}`, `{}`, `{"contact":"ann@"}`,
		`{"contact":"ann@example.com","extra":1}`, `{"contact":"12"}`} {
		p := a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/people:erase", a.key, body), 400, nextup.CodeValidation)
		if body != `{"contact":"ann@example.com","extra":1}` && !strings.Contains(string(mustJSON(p["errors"])), "contact") {
			t.Errorf("%s: errors %v do not name contact", body, p["errors"])
		}
	}
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/people/export?contact=nobody", a.key, ""), 400, nextup.CodeValidation)
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/people/export", a.key, ""), 400, nextup.CodeValidation)
	if e := a.entry(ann["id"].(string)); e.Name != "Ann" || e.Email != "ann@example.com" {
		t.Errorf("a refused erasure changed the entry: %+v", e)
	}
	if n := len(a.businessAudit("person_erased")) + len(a.businessAudit("person_exported")); n != 0 {
		t.Errorf("%d audit rows of refused requests", n)
	}

	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/people:erase", "", `{"contact":"ann@example.com"}`), 401, nextup.CodeUnauthorized)
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/people/export?contact=ann@example.com", "", ""), 401, nextup.CodeUnauthorized)
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"Europe/London"}`), 201, &other)
	key := other["api_key"].(string)
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/people:erase", key, `{"contact":"ann@example.com"}`), 404, nextup.CodeNotFound)
	a.problem(a.do("GET", "/v1/businesses/"+a.bid+"/people/ann@example.com/export", key, ""), 404, nextup.CodeNotFound)
	// The other business asking about Ann in its own name finds nothing.
	var d personDoc
	a.must(a.do("GET", "/v1/businesses/"+other["id"].(string)+"/people/export?contact=ann@example.com", key, ""), 200, &d)
	if len(d.Entries) != 0 {
		t.Errorf("another business's export holds %+v", d.Entries)
	}
	if e := a.entry(ann["id"].(string)); e.Email != "ann@example.com" {
		t.Errorf("another business's erasure changed Ann: %+v", e)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestPersonRetention: with a retention of one month, the daily sweep
// erases a person once every entry of theirs ended more than a month ago
// (by the fake clock) — not before, and never someone still waiting.
func TestPersonRetention(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	var biz map[string]any
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"retention_months":1}`), 200, &biz)
	if biz["retention_months"] != float64(1) {
		t.Fatalf("business after the patch = %v", biz)
	}
	a.problem(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"retention_months":-1}`), 400, nextup.CodeValidation)
	var ann, bob map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &ann)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Bob","email":"bob@example.com","service":"haircut"}`), 201, &bob)
	a.must(a.do("DELETE", "/v1/waitlist/"+ann["id"].(string), a.key, ""), 200, nil)

	a.advance(20 * 24 * time.Hour)
	if e := a.entry(ann["id"].(string)); e.Email != "ann@example.com" {
		t.Fatalf("Ann erased after 20 days: %+v", e)
	}
	a.advance(13 * 24 * time.Hour)
	e := a.entry(ann["id"].(string))
	if e.Email != "" || !strings.HasPrefix(e.Name, "erased-") || e.State != nextup.EntryLeft {
		t.Errorf("Ann after 33 days = %+v, want erased", e)
	}
	if b := a.entry(bob["id"].(string)); b.Name != "Bob" || b.Email != "bob@example.com" {
		t.Errorf("Bob, still waiting, after 33 days = %+v", b)
	}
	rows := a.businessAudit("retention_erased")
	if len(rows) != 1 || rows[0].Actor != nextup.ActorTimer || rows[0].Detail["retention_months"] != float64(1) ||
		rows[0].Detail["entries"] != float64(1) {
		t.Errorf("retention_erased rows = %+v", rows)
	}
}

// TestRetentionSetting: the settings page sets the retention in months,
// says in words what it does, and refuses what is not a number of months.
func TestRetentionSetting(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	b := sb.client()
	sb.signIn(b, sb.email, sb.pass)
	st := b.do("GET", "/dash/settings", nil)
	if !strings.Contains(st.body, `name="retention_months"`) || !strings.Contains(st.body, "kept until you erase them") {
		t.Fatalf("settings without the retention:\n%s", st.body)
	}
	p := b.do("POST", "/dash/settings/retention", url.Values{"csrf": {st.csrf(t)}, "retention_months": {"24"}})
	if p.status != http.StatusSeeOther || !strings.Contains(p.location, "notice=") {
		t.Fatalf("retention: %d %q", p.status, p.location)
	}
	biz, err := sb.svc.GetBusiness(context.Background(), sb.bid)
	if err != nil || biz.Profile.RetentionMonths != 24 {
		t.Errorf("retention = %d, want 24 (%v)", biz.Profile.RetentionMonths, err)
	}
	st = b.do("GET", "/dash/settings", nil)
	if !strings.Contains(st.body, `value="24"`) || !strings.Contains(st.body, "more than 24 months ago") {
		t.Errorf("settings do not show the retention back:\n%s", st.body)
	}
	for _, bad := range []string{"two", "-1", "500"} {
		p = b.do("POST", "/dash/settings/retention", url.Values{"csrf": {st.csrf(t)}, "retention_months": {bad}})
		if p.status != http.StatusSeeOther || !strings.Contains(p.location, "error=") {
			t.Errorf("retention %q: %d %q, want an error", bad, p.status, p.location)
		}
	}
	if biz, _ := sb.svc.GetBusiness(context.Background(), sb.bid); biz.Profile.RetentionMonths != 24 {
		t.Errorf("a refused retention changed it to %d", biz.Profile.RetentionMonths)
	}
}
