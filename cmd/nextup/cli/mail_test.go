package cli

import (
	"bytes"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
)

// TestServeMailsOffersInvitesReminders: `nextup serve --notify=smtp`
// delivers to a real SMTP server an offer (text and HTML, the claim link in
// both, one-click unsubscribe headers), the confirmation with a valid
// iCalendar invite, and the booking's reminders at 24 h and 1 h before it,
// as the clock reaches them; the mail's unsubscribe link works in one POST.
func TestServeMailsOffersInvitesReminders(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t)
	in := startInstance(t, "mail", filepath.Join(t.TempDir(), "n.db"), mail.Addr, "--notify", "capture,smtp")
	c := &cluster{t: t, all: []*instance{in}, client: apiClient(t)}
	start := time.Date(2031, 3, 10, 10, 0, 0, 0, time.UTC)
	c.setClock(start)
	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Corner Cuts","timezone":"Europe/London"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	c.must(0, "PATCH", "/v1/businesses/"+bid, key, `{"owner_email":"owner@cornercuts.example"}`, 200)
	at := time.Date(2031, 3, 12, 15, 0, 0, 0, time.UTC)
	sl := c.must(0, "POST", "/v1/businesses/"+bid+"/slots", key, fmt.Sprintf(`{"service":"cut","staff":"Anna","starts_at":%q,"ends_at":%q}`,
		at.Format(time.RFC3339), at.Add(45*time.Minute).Format(time.RFC3339)), 201)
	c.must(0, "POST", "/v1/businesses/"+bid+"/waitlist:join", key, `{"name":"Ann <Lee>","email":"ann@example.com","service":"cut"}`, 201)
	c.must(0, "POST", "/v1/slots/"+sl["id"].(string)+":release", key, `{"reason":"cancellation"}`, 200)

	c.setClock(start.Add(time.Second)) // the fake clock's relay runs when the clock is set
	offer := mail.Wait(t, 1, 20*time.Second)[0]
	tok := claimLink.FindStringSubmatch(offer.Text)
	if offer.To[0] != "ann@example.com" || tok == nil || !strings.Contains(offer.HTML, tok[0]) {
		t.Fatalf("offer mail to %v:\ntext %q\nhtml %q", offer.To, offer.Text, offer.HTML)
	}
	if !strings.Contains(offer.HTML, "Hi Ann &lt;Lee&gt;") || !strings.Contains(offer.Text, "held for you for 10 minutes, until 10:10 am") {
		t.Errorf("offer wording:\n%s\n%s", offer.Text, offer.HTML)
	}
	unsub := strings.Trim(offer.Header.Get("List-Unsubscribe"), "<>")
	if !strings.HasPrefix(unsub, in.base+"/u/"+bid+"/") || offer.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Errorf("unsubscribe headers %q, %q", unsub, offer.Header.Get("List-Unsubscribe-Post"))
	}

	c.must(0, "POST", "/v1/claims/"+tok[1]+":accept", "", "", 200)
	c.setClock(start.Add(2 * time.Second))
	confirm := mail.Wait(t, 2, 20*time.Second)[1]
	if !strings.HasPrefix(confirm.Subject, "Booked: cut on Wed 12 Mar at 3:00 pm") || confirm.Header.Get("List-Unsubscribe") != "" {
		t.Fatalf("confirmation %q, unsubscribe %q", confirm.Subject, confirm.Header.Get("List-Unsubscribe"))
	}
	if len(confirm.Attachments) != 1 || confirm.Attachments[0].Filename != "invite.ics" || confirm.Attachments[0].ContentType != "text/calendar" {
		t.Fatalf("confirmation attachments %+v", confirm.Attachments)
	}
	cal, err := ics.ParseCalendar(bytes.NewReader(confirm.Attachments[0].Body))
	if err != nil {
		t.Fatalf("invite: %v\n%s", err, confirm.Attachments[0].Body)
	}
	evs := cal.Events()
	if len(evs) != 1 {
		t.Fatalf("invite has %d events", len(evs))
	}
	if s, err := evs[0].GetStartAt(); err != nil || !s.Equal(at) {
		t.Errorf("invite starts %v (%v), want %v", s, err, at)
	}
	if e, err := evs[0].GetEndAt(); err != nil || !e.Equal(at.Add(45*time.Minute)) {
		t.Errorf("invite ends %v (%v)", e, err)
	}
	if p := evs[0].GetProperty(ics.ComponentPropertySummary); p == nil || !strings.Contains(p.Value, "cut with Anna") {
		t.Errorf("invite summary %v", p)
	}

	// The reminders: nothing before their time, then one at 24 h, one at 1 h.
	c.setClock(at.Add(-24*time.Hour - time.Minute))
	if n := len(mail.Mails()); n != 2 {
		t.Fatalf("%d mails a minute before the first reminder, want 2", n)
	}
	c.setClock(at.Add(-24*time.Hour + time.Second))
	r1 := mail.Wait(t, 3, 20*time.Second)[2]
	c.setClock(at.Add(-time.Hour + time.Second))
	r2 := mail.Wait(t, 4, 20*time.Second)[3]
	for _, r := range []smtptest.Mail{r1, r2} {
		if !strings.HasPrefix(r.Subject, "Reminder: cut on Wed 12 Mar at 3:00 pm") || r.To[0] != "ann@example.com" || r.HTML == "" {
			t.Errorf("reminder %q to %v", r.Subject, r.To)
		}
	}
	if d, _ := r1.Header.Date(); !d.Equal(at.Add(-24 * time.Hour)) {
		t.Errorf("first reminder dated %v, want %v", d, at.Add(-24*time.Hour))
	}

	// One click on the mail client's unsubscribe button.
	res, err := c.client.PostForm(unsub, url.Values{"List-Unsubscribe": {"One-Click"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("one-click unsubscribe: %d", res.StatusCode)
	}
	if n := len(mail.Mails()); n != 4 {
		t.Errorf("%d mails, want 4", n)
	}
}
