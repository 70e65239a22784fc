package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// setupJoin is a business with a public slug and a catalogue.
func setupJoin(t *testing.T, opts ...func(*web.Server)) *api {
	t.Helper()
	a := setup(t, opts...)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"slug":"corner-cuts","services":[{"name":"haircut"},{"name":"colour"}],"staff":["Ana","Ben"]}`), 200, nil)
	return a
}

// outbox lists the business's messages of a kind, newest first.
func (a *api) outbox(kind string) []nextup.Message {
	a.t.Helper()
	var out []nextup.Message
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		ms, err := tx.MessageList(context.Background(), nextup.MessageFilter{BusinessID: a.bid})
		for _, m := range ms {
			if m.Kind == kind {
				out = append(out, m)
			}
		}
		return err
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return out
}

func (a *api) waiting() []nextup.Entry {
	a.t.Helper()
	var es []nextup.Entry
	err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		var err error
		es, err = tx.EntryList(context.Background(), nextup.EntryFilter{BusinessID: a.bid, State: nextup.EntryWaiting})
		return err
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return es
}

var confirmLink = regexp.MustCompile(`https://nextup\.test(/b/corner-cuts/confirm\?t=\S+)`)

func TestJoinFormByEmail(t *testing.T) {
	t.Parallel()
	a := setupJoin(t)
	b := a.client()
	form := b.do("GET", "/b/corner-cuts/join", nil)
	if form.status != 200 || !strings.Contains(form.body, `<option value="colour">colour</option>`) || !strings.Contains(form.body, "How the order works") {
		t.Fatalf("join form: %d\n%s", form.status, form.body)
	}
	csrf := form.csrf(t)
	good := url.Values{"csrf": {csrf}, "name": {"Maya Patel"}, "email": {"maya@example.com"}, "service": {"colour"},
		"party_size": {"1"}, "earliest": {"2026-12-02"}, "latest": {"2026-12-20"}, "days": {"tue", "thu"}, "from": {"09:00"}, "to": {"13:00"}, "channel": {"email"}}

	// Mistakes are explained next to their fields, and what was typed stays.
	bad := url.Values{}
	for k, v := range good {
		bad[k] = v
	}
	bad.Set("email", "maya@")
	bad.Set("party_size", "0")
	p := b.do("POST", "/b/corner-cuts/join", bad)
	for _, want := range []string{"Please check the fields marked below", `value="Maya Patel"`, `value="maya@"`, "The number of people must be a number from 1 to 50",
		`<option value="colour" selected>`, `value="tue" checked`, `value="2026-12-20"`, `aria-invalid="true"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the form after a mistake lacks %q", want)
		}
	}
	if p.status != http.StatusBadRequest || len(a.outbox(waitlist.MessageJoinConfirm)) != 0 {
		t.Fatalf("bad form: %d, %d confirmations sent", p.status, len(a.outbox(waitlist.MessageJoinConfirm)))
	}
	// Without the form's token, nothing happens.
	noCSRF := url.Values{}
	for k, v := range good {
		noCSRF[k] = v
	}
	noCSRF.Del("csrf")
	if p := b.do("POST", "/b/corner-cuts/join", noCSRF); p.status != http.StatusForbidden {
		t.Fatalf("join without csrf: %d", p.status)
	}
	// A bot that fills the honeypot is answered politely and ignored.
	bot := url.Values{"website": {"http://spam.example"}}
	for k, v := range good {
		bot[k] = v
	}
	if p := b.do("POST", "/b/corner-cuts/join", bot); p.status != 200 || !strings.Contains(p.body, "Check your email") || len(a.outbox(waitlist.MessageJoinConfirm)) != 0 {
		t.Fatalf("honeypot: %d, %d confirmations", p.status, len(a.outbox(waitlist.MessageJoinConfirm)))
	}

	p = b.do("POST", "/b/corner-cuts/join", good)
	if p.status != 200 || !strings.Contains(p.body, "We sent a link to maya@example.com") {
		t.Fatalf("join: %d\n%s", p.status, p.body)
	}
	if n := len(a.waiting()); n != 0 {
		t.Fatalf("%d entries before the confirmation; the place counts only once confirmed", n)
	}
	msgs := a.outbox(waitlist.MessageJoinConfirm)
	if len(msgs) != 1 || msgs[0].To != "maya@example.com" || msgs[0].Channel != nextup.ChannelEmail {
		t.Fatalf("confirmation messages: %+v", msgs)
	}
	link := confirmLink.FindStringSubmatch(msgs[0].Body)[1]

	// Opening the link (a mail scanner might) changes nothing; the button confirms.
	c := b.do("GET", link, nil)
	if c.status != 200 || !strings.Contains(c.body, "Confirm my place") || len(a.waiting()) != 0 {
		t.Fatalf("confirm page: %d, %d waiting", c.status, len(a.waiting()))
	}
	a.clock.Advance(time.Hour) // the place counts from the confirmation, not the form
	token := regexp.MustCompile(`name="t" value="([^"]+)"`).FindStringSubmatch(c.body)[1]
	p = b.do("POST", "/b/corner-cuts/confirm", url.Values{"csrf": {c.csrf(t)}, "t": {token}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/s/") {
		t.Fatalf("confirm: %d %q\n%s", p.status, p.location, p.body)
	}
	es := a.waiting()
	if len(es) != 1 || es[0].Name != "Maya Patel" || es[0].Source != "form" || !es[0].JoinedAt.Equal(a.clock.Now()) ||
		len(es[0].Availability) != 1 || len(es[0].Availability[0].Days) != 2 || es[0].Latest.Format("2006-01-02") != "2026-12-20" {
		t.Fatalf("the entry: %+v", es)
	}
	if s := b.do("GET", p.location, nil); !strings.Contains(s.body, "number 1 in line for colour") {
		t.Fatalf("status page after confirming:\n%s", s.body)
	}
	// Confirming again does not add a second place.
	if p := b.do("POST", "/b/corner-cuts/confirm", url.Values{"csrf": {c.csrf(t)}, "t": {token}}); p.status != 200 || !strings.Contains(p.body, "already on the list") || len(a.waiting()) != 1 {
		t.Fatalf("second confirm: %d, %d waiting", p.status, len(a.waiting()))
	}
	// A tampered link is unknown.
	if p := b.do("POST", "/b/corner-cuts/confirm", url.Values{"csrf": {c.csrf(t)}, "t": {token[:len(token)-2] + "AA"}}); p.status != http.StatusNotFound {
		t.Fatalf("tampered confirmation: %d", p.status)
	}
}

func TestJoinFormExpiryAndLimits(t *testing.T) {
	t.Parallel()
	a := setupJoin(t)
	b := a.client()
	csrf := b.do("GET", "/b/corner-cuts/join", nil).csrf(t)
	join := func(email string) page {
		return b.do("POST", "/b/corner-cuts/join", url.Values{"csrf": {csrf}, "name": {"Sam"}, "email": {email}, "service": {"haircut"}, "party_size": {"2"}})
	}
	if p := join("sam@example.com"); p.status != 200 {
		t.Fatalf("join: %d\n%s", p.status, p.body)
	}
	link := confirmLink.FindStringSubmatch(a.outbox(waitlist.MessageJoinConfirm)[0].Body)[1]
	c := b.do("GET", link, nil)
	a.clock.Advance(25 * time.Hour)
	token := regexp.MustCompile(`name="t" value="([^"]+)"`).FindStringSubmatch(c.body)[1]
	if p := b.do("POST", "/b/corner-cuts/confirm", url.Values{"csrf": {c.csrf(t)}, "t": {token}}); p.status != http.StatusGone || len(a.waiting()) != 0 {
		t.Fatalf("a day-old confirmation: %d, %d waiting", p.status, len(a.waiting()))
	}
	// Three confirmations an hour to one address, then it waits.
	for i := range 2 {
		if p := join("SAM@example.com"); p.status != 200 {
			t.Fatalf("join %d: %d", i+2, p.status)
		}
	}
	if p := join("sam@example.com"); p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "several confirmations") {
		t.Fatalf("fourth confirmation to one address: %d\n%s", p.status, p.body)
	}
	if p := b.do("GET", "/b/nowhere/join", nil); p.status != http.StatusNotFound {
		t.Fatalf("unknown business: %d", p.status)
	}
}

func TestJoinFormByText(t *testing.T) {
	t.Parallel()
	a := setupJoin(t)
	b := a.client()
	csrf := b.do("GET", "/b/corner-cuts/join", nil).csrf(t)
	p := b.do("POST", "/b/corner-cuts/join", url.Values{"csrf": {csrf}, "name": {"Tom"}, "phone": {"+44 7700 900123"},
		"service": {"haircut"}, "party_size": {"1"}, "channel": {"sms"}, "staff": {"Ana"}})
	if p.status != 200 || !strings.Contains(p.body, "Check your texts") || !strings.Contains(p.body, `name="code"`) {
		t.Fatalf("join by text: %d\n%s", p.status, p.body)
	}
	msgs := a.outbox(waitlist.MessageJoinConfirm)
	if len(msgs) != 1 || msgs[0].Channel != nextup.ChannelSMS || msgs[0].To != "+44 7700 900123" {
		t.Fatalf("texted code: %+v", msgs)
	}
	code := regexp.MustCompile(`code is (\d{6})`).FindStringSubmatch(msgs[0].Body)[1]
	token := regexp.MustCompile(`name="t" value="([^"]+)"`).FindStringSubmatch(p.body)[1]
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	if p := b.do("POST", "/b/corner-cuts/confirm", url.Values{"csrf": {csrf}, "t": {token}, "code": {wrong}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "not right") {
		t.Fatalf("wrong code: %d", p.status)
	}
	if p := b.do("POST", "/b/corner-cuts/confirm", url.Values{"csrf": {csrf}, "t": {token}, "code": {code}}); p.status != http.StatusSeeOther {
		t.Fatalf("right code: %d\n%s", p.status, p.body)
	}
	if es := a.waiting(); len(es) != 1 || es[0].Channel != nextup.ChannelSMS || es[0].Staff != "Ana" {
		t.Fatalf("entry: %+v", es)
	}
}
