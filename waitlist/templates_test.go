package waitlist_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// A business's own offer wording is used (its HTML escaping what it fills
// in), the parts it left out keep the default, and the other kinds stay
// default.
func TestBusinessTemplates(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	own := map[string]nextup.MessageTemplate{
		waitlist.TemplateOffer: {
			Subject: "{{.Business}} has a {{.Service}} for you",
			HTML:    `<h2>Good news, {{.Name}}</h2><p><a href="{{.Link}}">Take it</a> ({{.Countdown}} left)</p>`,
		},
	}
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Templates: &own}); err != nil {
		t.Fatal(err)
	}
	b.join(t, `Zoë <script>`, waitlist.JoinParams{Email: "zoe@example.com"})
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 15, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	o := onlyMove(t, moves, nextup.MoveOffer)
	msgs := b.messages(t, o.OfferID)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if m.Subject != "Salon has a haircut for you" {
		t.Errorf("subject %q", m.Subject)
	}
	if !strings.Contains(m.HTML, "Good news, Zoë &lt;script&gt;") || strings.Contains(m.HTML, "<script>") {
		t.Errorf("HTML does not escape the name:\n%s", m.HTML)
	}
	if !strings.Contains(m.HTML, `href="`+m.ClaimURL+`"`) || !strings.Contains(m.HTML, "(10 minutes left)") {
		t.Errorf("HTML lacks the link or the countdown:\n%s", m.HTML)
	}
	// The text part was left out: the default's, with the link.
	if !strings.Contains(m.Body, m.ClaimURL) || !strings.Contains(m.Body, "held for you for 10 minutes") {
		t.Errorf("text part %q", m.Body)
	}
	// Mail a person may stop carries the one-click link, and the footer
	// offers it too.
	if !strings.HasPrefix(m.UnsubscribeURL, "https://nextup.test/u/"+b.biz.ID+"/") || !strings.Contains(m.HTML, m.UnsubscribeURL) {
		t.Errorf("unsubscribe link %q", m.UnsubscribeURL)
	}

	// The claim's confirmation keeps the default wording and carries the
	// invite, and no unsubscribe link (it is about a booking they made).
	if _, err := b.svc.Claim(b.ctx, b.token(t, o.OfferID)); err != nil {
		t.Fatal(err)
	}
	var conf nextup.Message
	for _, m := range b.messages(t, o.OfferID) {
		if m.Kind == nextup.MessageConfirmation {
			conf = m
		}
	}
	if !strings.HasPrefix(conf.Subject, "Booked: haircut on Wed 2 Dec at 3:00 pm") || conf.UnsubscribeURL != "" {
		t.Errorf("confirmation %q unsubscribe %q", conf.Subject, conf.UnsubscribeURL)
	}
	if !strings.Contains(conf.Calendar, "BEGIN:VEVENT") || !strings.Contains(conf.Calendar, "DTSTART:20261202T150000Z") ||
		!strings.Contains(conf.Calendar, "STATUS:CONFIRMED") {
		t.Errorf("confirmation invite:\n%s", conf.Calendar)
	}
}

// A template that does not parse, names a field that does not exist, or
// is of an unknown kind is refused when saved, and nothing changes.
func TestBusinessTemplatesValidated(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for name, c := range map[string]struct {
		ts    map[string]nextup.MessageTemplate
		field string
	}{
		"parse":   {map[string]nextup.MessageTemplate{"offer": {Text: "{{.Link"}}, "templates.offer.text"},
		"field":   {map[string]nextup.MessageTemplate{"reminder": {SMS: "{{.Discount}}"}}, "templates.reminder"},
		"kind":    {map[string]nextup.MessageTemplate{"birthday": {Text: "hi"}}, "templates.birthday"},
		"html":    {map[string]nextup.MessageTemplate{"offer": {HTML: "<a href='{{.Link}}>"}}, "templates.offer"},
		"toolong": {map[string]nextup.MessageTemplate{"joined": {Text: strings.Repeat("x", 17<<10)}}, "templates.joined.text"},
		"loop":    {map[string]nextup.MessageTemplate{"offer": {Text: "{{range 1000000000}}{{range 1000000000}}{{end}}{{end}}{{.Link}}"}}, "templates.offer.text"},
		"printf":  {map[string]nextup.MessageTemplate{"offer": {SMS: `{{printf "%099999999d" 1}}{{.Link}}`}}, "templates.offer.sms"},
		"with":    {map[string]nextup.MessageTemplate{"reminder": {HTML: `{{with .Name}}{{.}}{{end}}`}}, "templates.reminder.html"},
		"define":  {map[string]nextup.MessageTemplate{"joined": {Text: `{{define "x"}}{{template "x"}}{{end}}{{template "x"}}`}}, "templates.joined.text"},
		"nolink":  {map[string]nextup.MessageTemplate{"offer": {SMS: "A slot is free, call us"}}, "templates.offer.sms"},
	} {
		_, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Templates: &c.ts})
		var e *nextup.Error
		if !errors.As(err, &e) || e.Kind != nextup.ErrInvalid {
			t.Errorf("%s: err %v, want invalid", name, err)
			continue
		}
		found := false
		for _, f := range e.Fields {
			found = found || strings.HasPrefix(f.Field, c.field)
		}
		if !found {
			t.Errorf("%s: fields %+v, want %s", name, e.Fields, c.field)
		}
	}
	got, err := b.svc.GetBusiness(b.ctx, b.biz.ID)
	if err != nil || len(got.Profile.Templates) != 0 {
		t.Errorf("templates after refusals: %v, %v", got.Profile.Templates, err)
	}
}

// The one-click link opts the address out of the business's email at
// once: the page only shows it, the POST does it (once), and the next offer
// goes by text, or is skipped when the person has no other channel.
func TestUnsubscribeLink(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ann := b.join(t, "Ann", waitlist.JoinParams{Email: "Ann@Example.com", Phone: "+447700900123", Channel: nextup.ChannelEmail})
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 15, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	o := onlyMove(t, moves, nextup.MoveOffer)
	m := b.messages(t, o.OfferID)[0]
	if m.Channel != nextup.ChannelEmail || m.UnsubscribeURL == "" {
		t.Fatalf("offer message %s unsubscribe %q", m.Channel, m.UnsubscribeURL)
	}
	u, _ := url.Parse(m.UnsubscribeURL)
	parts := strings.Split(strings.TrimPrefix(u.Path, "/u/"), "/")
	bid, tok := parts[0], parts[1]
	if strings.Contains(m.UnsubscribeURL, "ann") || strings.Contains(m.UnsubscribeURL, "Ann") {
		t.Errorf("the link shows the address: %s", m.UnsubscribeURL)
	}
	st, err := b.svc.UnsubscribeStatus(b.ctx, bid, tok)
	if err != nil || st.Done || st.Address != "a***@example.com" || st.Business != "Salon" {
		t.Fatalf("status %+v, %v", st, err)
	}
	// A tampered token or another business is not found.
	for _, bad := range [][2]string{{bid, tok[:len(tok)-2] + "xx"}, {"biz_other", tok}, {bid, "!!"}} {
		if _, err := b.svc.Unsubscribe(b.ctx, bad[0], bad[1]); !errors.Is(err, nextup.ErrNotFound) {
			t.Errorf("unsubscribe %v: %v, want not found", bad, err)
		}
	}
	for range 2 {
		st, err = b.svc.Unsubscribe(b.ctx, bid, tok)
		if err != nil || !st.Done {
			t.Fatalf("unsubscribe: %+v, %v", st, err)
		}
	}
	// Ann declines; the next offer to her goes by text.
	if _, _, err := b.svc.Decline(b.ctx, b.token(t, o.OfferID)); err != nil {
		t.Fatal(err)
	}
	sl2 := b.slot(t, waitlist.SlotParams{StartsAt: b.at(2, 15, 0)})
	_, moves, err = b.svc.Release(b.ctx, b.biz.ID, sl2.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	o2 := onlyMove(t, moves, nextup.MoveOffer)
	if o2.EntryID != ann.ID {
		t.Fatalf("second offer to %s", o2.EntryID)
	}
	if m2 := b.messages(t, o2.OfferID)[0]; m2.Channel != nextup.ChannelSMS || m2.UnsubscribeURL != "" {
		t.Errorf("second offer goes by %s (unsubscribe %q), want sms", m2.Channel, m2.UnsubscribeURL)
	}
}

// The templates are versioned like the rules: a change is a new version
// (the same wording again is not), each message carries the version it
// was written with, every version is kept whole in the audit log, and a
// revert is a new version with an old one's wording.
func TestTemplatesVersions(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	offerSubject := func() (string, int) {
		t.Helper()
		b.clock.Advance(time.Minute)
		e := b.join(t, "Ada", waitlist.JoinParams{Email: fmt.Sprintf("ada%d@example.com", b.clock.Now().Unix())})
		sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(2, 15, 0)})
		_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		o := onlyMove(t, moves, nextup.MoveOffer)
		if o.EntryID != e.ID {
			t.Fatalf("offer to %s, want the newest joiner %s", o.EntryID, e.ID)
		}
		m := b.messages(t, o.OfferID)[0] // earlier joiners hold their offers: the newest is the one waiting
		return m.Subject, m.TemplateVersion
	}
	if subj, v := offerSubject(); v != 0 || !strings.Contains(subj, "opened up") {
		t.Fatalf("defaults: %q version %d", subj, v)
	}
	mine := map[string]nextup.MessageTemplate{waitlist.TemplateOffer: {Subject: "Yours if you want it: {{.Service}}"}}
	for range 2 { // the second save changes nothing
		biz, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Templates: &mine})
		if err != nil || biz.Profile.TemplatesVersion != 1 {
			t.Fatalf("save: version %d, %v; want 1", biz.Profile.TemplatesVersion, err)
		}
	}
	if subj, v := offerSubject(); v != 1 || subj != "Yours if you want it: haircut" {
		t.Fatalf("version 1: %q version %d", subj, v)
	}
	// Back to nextup's wording: version 2, with none of the business's own.
	biz, err := b.svc.RevertTemplates(b.ctx, b.biz.ID, 0)
	if err != nil || biz.Profile.TemplatesVersion != 2 || len(biz.Profile.Templates) != 0 {
		t.Fatalf("revert to 0: %+v, %v", biz.Profile, err)
	}
	if subj, v := offerSubject(); v != 2 || !strings.Contains(subj, "opened up") {
		t.Fatalf("version 2: %q version %d", subj, v)
	}
	// Version 1 again, read back from the audit log alone.
	if biz, err = b.svc.RevertTemplates(b.ctx, b.biz.ID, 1); err != nil || biz.Profile.TemplatesVersion != 3 {
		t.Fatalf("revert to 1: %+v, %v", biz.Profile, err)
	}
	if subj, v := offerSubject(); v != 3 || subj != "Yours if you want it: haircut" {
		t.Fatalf("version 3: %q version %d", subj, v)
	}
	history, err := b.svc.TemplatesHistory(b.ctx, b.biz.ID)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, v := range history {
		versions = append(versions, v.Version)
	}
	if fmt.Sprint(versions) != "[3 2 1 0]" || history[0].RevertedFrom == nil || *history[0].RevertedFrom != 1 ||
		history[2].Templates[waitlist.TemplateOffer] != mine[waitlist.TemplateOffer] || len(history[1].Templates) != 0 {
		t.Fatalf("history %+v", history)
	}
	if _, err := b.svc.RevertTemplates(b.ctx, b.biz.ID, 9); !errors.Is(err, nextup.ErrNotFound) {
		t.Fatalf("revert to a version that never was: %v", err)
	}
}

// Owners saving different kinds at once both keep theirs: TemplateKinds
// applies to the templates as the transaction reads them. All of a
// business's templates together stay under 96 KiB (every version is kept
// whole in one audit row).
func TestTemplateKinds(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	offer := nextup.MessageTemplate{Subject: "Yours: {{.Service}}"}
	conf := nextup.MessageTemplate{Subject: "Booked: {{.Service}}"}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, kind := range []string{waitlist.TemplateOffer, waitlist.TemplateConfirmation} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tmpl := map[string]*nextup.MessageTemplate{kind: &offer}
			if i == 1 {
				tmpl = map[string]*nextup.MessageTemplate{kind: &conf}
			}
			_, errs[i] = b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{TemplateKinds: tmpl})
		}()
	}
	wg.Wait()
	biz, err := b.svc.GetBusiness(b.ctx, b.biz.ID)
	if errors.Join(append(errs, err)...) != nil || biz.Profile.Templates[waitlist.TemplateOffer] != offer ||
		biz.Profile.Templates[waitlist.TemplateConfirmation] != conf || biz.Profile.TemplatesVersion != 2 {
		t.Fatalf("two kinds saved at once: %+v (version %d), %v", biz.Profile.Templates, biz.Profile.TemplatesVersion, errs)
	}
	// Back to the default for one kind keeps the other.
	if biz, err = b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{TemplateKinds: map[string]*nextup.MessageTemplate{waitlist.TemplateOffer: nil}}); err != nil ||
		len(biz.Profile.Templates) != 1 || biz.Profile.TemplatesVersion != 3 {
		t.Fatalf("offer back to the default: %+v, %v", biz.Profile, err)
	}
	big := map[string]*nextup.MessageTemplate{}
	for _, k := range []string{waitlist.TemplateFilled, waitlist.TemplateExpired, waitlist.TemplateJoined, waitlist.TemplateReminder, waitlist.TemplateHandback, waitlist.TemplateUnconfirmed, waitlist.TemplateRefunded} {
		big[k] = &nextup.MessageTemplate{Text: strings.Repeat("Hello {{.Name}}. ", 15<<10/17)}
	}
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{TemplateKinds: big}); !errors.Is(err, nextup.ErrInvalid) {
		t.Fatalf("templates of 105 KiB together: %v, want refused", err)
	}
}
