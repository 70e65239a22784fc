package web_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/waitlist"
)

// eventSnapshot is everything a test reminder must leave as it was: the
// registrations, their reminder timers, the audit and every message but
// the test's own.
func (a *evAPI) eventSnapshot(evID string) string {
	a.t.Helper()
	var b strings.Builder
	b.WriteString(string(a.do("GET", "/v1/events/"+evID+"/registrations", a.key, "").body))
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		ts, err := tx.TimerList(context.Background(), nextup.TimerFilter{Kind: nextup.TimerBookingRemind, PendingOnly: true})
		if err != nil {
			return err
		}
		for _, t := range ts {
			b.WriteString("\ntimer " + t.Key + " " + t.DueAt.UTC().Format(time.RFC3339))
		}
		au, err := tx.AuditList(context.Background(), nextup.AuditFilter{BusinessID: a.bid})
		for _, e := range au {
			b.WriteString("\naudit " + e.Reason + " " + e.SubjectID)
		}
		if err != nil {
			return err
		}
		ms, err := tx.MessageList(context.Background(), nextup.MessageFilter{BusinessID: a.bid})
		for _, m := range ms {
			if m.Kind != waitlist.MessageReminderTest {
				b.WriteString("\nmessage " + m.ID + " " + m.Kind + " " + string(m.State))
			}
		}
		return err
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return b.String()
}

// TestTestReminder: POST /v1/events/{id}/reminders:test sends the event's
// reminder to the owner's address now, in the words a guest's reminder has
// (the business's own template; only the link's secret differs), marked as
// a test; it changes nothing else. Without an owner email it is 400
// no_owner_email, and another business's event is 404.
func TestTestReminder(t *testing.T) {
	t.Parallel()
	a := setupEvents(t)
	ev := a.event(`,"capacity":10`)
	id := ev["id"].(string)
	path := "/v1/events/" + id + "/reminders:test"

	// No owner email: refused, saying how to set one; nothing written.
	before := a.eventSnapshot(id)
	p := a.problem(a.do("POST", path, a.key, ""), 400, nextup.CodeNoOwnerEmail)
	if !strings.Contains(p["detail"].(string), "owner_email") {
		t.Errorf("no_owner_email does not say how to set it: %v", p["detail"])
	}
	if len(a.outbox(waitlist.MessageReminderTest)) != 0 || a.eventSnapshot(id) != before {
		t.Fatal("a refused test reminder wrote something")
	}

	// The business words its reminders itself: the test uses its template.
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"owner_email":"owner@salon.example","templates":{"reminder":{
		"text":"Dear {{.Name}}, {{.Service}} at {{.Business}} is on {{.When}}.{{if .CancelLink}} Cancel: {{.CancelLink}}{{end}} Ask {{.Contact}}."}}}`), 200, nil)
	sam := a.register(id, waitlist.SampleGuest, 0)
	wantState(t, sam, "confirmed", 0)
	before = a.eventSnapshot(id)

	var out map[string]string
	a.must(a.do("POST", path, a.key, ""), 202, &out)
	tests := a.outbox(waitlist.MessageReminderTest)
	if len(tests) != 1 || tests[0].ID != out["message_id"] {
		t.Fatalf("test reminders in the outbox: %+v, answered %v", tests, out)
	}
	test := tests[0]
	if test.To != "owner@salon.example" || test.Channel != nextup.ChannelEmail || test.State != nextup.MessageQueued ||
		test.NextAttemptAt.After(a.clock.Now()) || test.EntryID != "" || test.BookingID != "" {
		t.Fatalf("the test reminder: %+v", test)
	}
	if !strings.HasPrefix(test.Subject, "[Test] Reminder: Supper club on ") || !strings.Contains(test.HTML, "<title>[Test] Reminder: Supper club") {
		t.Errorf("the test reminder is not marked as a test: %q", test.Subject)
	}
	placeholder := "https://nextup.test/r/" + a.bid + "/test-reminder"
	if !strings.Contains(test.Body, "Dear "+waitlist.SampleGuest+", Supper club at Salon is on ") || !strings.Contains(test.Body, "Cancel: "+placeholder+" ") ||
		!strings.Contains(test.Body, "Ask owner@salon.example.") {
		t.Errorf("the test reminder's words: %q", test.Body)
	}
	if after := a.eventSnapshot(id); after != before {
		t.Fatalf("the test reminder changed the event:\nbefore %s\nafter %s", before, after)
	}
	// It goes now, through the outbox.
	sent := capture.New()
	relay := &outbox.Relay{Store: a.store, Clock: a.clock, Default: sent}
	if _, _, err := relay.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m, ok := sent.Get(test.ID); !ok || m.To != "owner@salon.example" {
		t.Fatalf("the test reminder was not sent at once: %+v", sent.Messages())
	}

	// Sam's own reminder, a week before, says the same but for the link.
	a.advance(time.Date(2026, 12, 24, 19, 1, 0, 0, time.UTC).Sub(a.clock.Now()))
	guest := slices.DeleteFunc(a.outbox(waitlist.MessageReminder), func(m nextup.Message) bool { return m.EntryID != sam["id"] })
	if len(guest) != 1 {
		t.Fatalf("Sam's reminders: %+v", guest)
	}
	link := regexp.MustCompile(`https://nextup\.test/r/[^\s"<]+`)
	if !link.MatchString(guest[0].Body) || link.FindString(guest[0].Body) == placeholder {
		t.Fatalf("Sam's reminder has no cancel link of his own: %q", guest[0].Body)
	}
	same := func(s string) string { return link.ReplaceAllString(s, "LINK") }
	if same(test.Body) != same(guest[0].Body) {
		t.Errorf("the test reminder's body\n%q\nis not the guest's\n%q", test.Body, guest[0].Body)
	}
	if test.Subject != "[Test] "+guest[0].Subject || same(test.HTML) != strings.Replace(same(guest[0].HTML), "<title>", "<title>[Test] ", 1) {
		t.Errorf("the test reminder's subject or HTML differ from the guest's:\n%s\n%s", test.HTML, guest[0].HTML)
	}

	// The test is not a reminder a guest was sent, and a second one is
	// another message.
	a.must(a.do("POST", path, a.key, ""), 202, &out)
	if n := len(a.outbox(waitlist.MessageReminderTest)); n != 2 || out["message_id"] == test.ID {
		t.Errorf("a second test: %d test messages, id %v", n, out["message_id"])
	}

	// Not an event, another business's event, no key.
	sl := a.slot(`{"service":"Cut","starts_at":"2027-01-05T10:00:00Z","ends_at":"2027-01-05T10:30:00Z"}`)
	a.problem(a.do("POST", "/v1/events/"+sl["id"].(string)+"/reminders:test", a.key, ""), 404, nextup.CodeNotFound)
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	a.problem(a.do("POST", path, other["api_key"].(string), ""), 404, nextup.CodeNotFound)
	a.problem(a.do("POST", path, "", ""), 401, nextup.CodeUnauthorized)
}
