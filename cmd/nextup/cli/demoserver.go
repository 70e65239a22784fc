package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// runDemoServer seeds the demo salon on a fresh store and serves it with
// the real clock, printing what a newcomer needs: the URL, the API key and
// three commands that free a slot and follow the offer it makes.
func runDemoServer(ctx context.Context, db, addr, admin string, stdout, logs io.Writer) error {
	// Listen first: the links of the messages seeded (last month's
	// summary among them) are on the server's own address.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	serving := false
	defer func() {
		if !serving {
			ln.Close()
		}
	}()
	base := baseURL(addr, ln)
	st, err := openStore(ctx, db)
	if err != nil {
		return err
	}
	svc := waitlist.New(st, nextup.RealClock{}, base)
	rules := nextup.DefaultRules()
	rules.QuietHours = nil // so the demo sends offers whatever the hour
	biz, key, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Demo Salon", Timezone: "Europe/London", Rules: &rules})
	if err != nil {
		st.Close()
		return err
	}
	slug, country, ownerEmail := "demo-salon", "GB", "owner@demo-salon.test"
	services := []nextup.Service{{Name: "haircut", Synonyms: []string{"cut", "trim"}, DurationMinutes: 45, PriceCents: 3500},
		{Name: "colour", DurationMinutes: 90, PriceCents: 8000}, {Name: "yoga", DurationMinutes: 60, PriceCents: 1200}}
	staff := []string{"Ana", "Ben"}
	if _, err := svc.UpdateProfile(ctx, biz.ID, waitlist.ProfilePatch{Slug: &slug, Country: &country, Services: &services, Staff: &staff,
		OwnerEmail: &ownerEmail}); err != nil {
		st.Close()
		return err
	}
	loc, _ := biz.Location()
	now := time.Now().In(loc) // seeding relative to the real day is the point of a demo
	// Last month, played on a fake clock, and its summary (emailed to the
	// owner: it is in the outbox too).
	past, rosa, err := seedPastMonth(ctx, st, biz.ID, base, now, loc)
	if err == nil {
		_, err = svc.SummarizeMonth(ctx, biz.ID, past)
	}
	if err != nil {
		st.Close()
		return fmt.Errorf("seed last month: %w", err)
	}
	at := func(day, hour, min int) time.Time {
		return time.Date(now.Year(), now.Month(), now.Day()+1+day, hour, min, 0, 0, loc) // from tomorrow
	}
	salon, err := seedSalon(ctx, svc, biz.ID, at, func() {}, func(string, ...any) {})
	if err != nil {
		st.Close()
		return err
	}
	supper, err := seedEvent(ctx, svc, biz.ID, at)
	if err != nil {
		st.Close()
		return err
	}
	// A staff account for the dashboard, with a fresh password each run.
	token, _ := svc.Random.Token()
	password := "demo-" + token[:12]
	owner, err := svc.AddStaff(ctx, waitlist.AddStaffParams{BusinessID: biz.ID, Email: "owner@demo-salon.test", Name: "Olive", Password: password})
	st.Close()
	if err != nil {
		return err
	}
	auth := fmt.Sprintf(`-H "Authorization: Bearer %s"`, key)
	fmt.Fprintf(stdout, `nextup demo — Demo Salon (Europe/London) on a fresh store: %s

  URL        %s
  dashboard  %s/login — sign in as %s with password %s
  API key    %s
  business   %s
  admin      %s

Tomorrow's 14:00 haircut with Ana is booked and a dozen people wait.
In the browser: sign in, tap "Cancelled" on tomorrow's 14:00 haircut, and watch
the offer appear under Live offers; its claim link is on %s/dev/outbox.
Or with curl:
1. Cancel it — the engine offers it to the first person in fair order who fits:
   curl -s -X POST %s/v1/slots/%s:release %s -d '{"reason":"cancellation"}'
2. See the offer that went out (and its claim link), or open %s/dev/outbox:
   curl -s %s/v1/businesses/%s/messages %s
3. Follow the slot: open the claim link to claim or decline, then
   curl -s %s/v1/slots/%s %s

An event: next week's supper club is sold out with people waiting. Its
organiser page is %s/dash/events/%s; cancel a place there or with
   curl -s -X DELETE %s/v1/events/%s/registrations/<id> %s
and the next person who fits is offered the seats.

Last month has happened too: its summary, as the owner got it by email, is
on %s/dash/summaries/%s, and any range of days on %s/dash/analytics.
Rosa, who wanted a haircut with Ben, saw his slots go to people ahead of her
before one came to her; her place in line, and why each slot went to someone
else, is on %s/dash/waitlist/%s/history, or in the terminal:
   nextup replay entry %s --db %s

OpenAPI: %s/v1/openapi.json   Metrics: %s/metrics   Stop: Ctrl-C
`, redactDSN(db), base, base, owner.Email, password, key, biz.ID, admin, base, base, salon.haircut.ID, auth, base, base, biz.ID, auth, base, salon.haircut.ID, auth,
		base, supper.ID, base, supper.ID, auth, base, past, base, base, rosa, rosa, redactDSN(db), base, base)
	serving = true
	return serve(ctx, serveConfig{Addr: addr, DB: db, BaseURL: base, AdminToken: admin, Clock: "real", Notify: "capture", DevOutbox: biz.ID,
		DemoLogin: &web.DemoLogin{Email: owner.Email, Password: password}}, ln, logs)
}

// seedEvent adds the demo's sold-out event: a supper club of 12 next week,
// a guest each allowed, with 10 registrations (some bringing a guest)
// filling it and four people on its waitlist.
func seedEvent(ctx context.Context, svc *waitlist.Service, bid string, at func(day, hour, min int) time.Time) (nextup.Slot, error) {
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Supper club", at(6, 19, 30), at(6, 23, 0), 12
	p.Settings.MaxGuests = 1
	ev, err := svc.CreateEvent(ctx, bid, p)
	if err != nil {
		return ev, err
	}
	for i, name := range []string{"Ada", "Bram", "Cleo", "Dev", "Ezra", "Fern", "Gil", "Hana", "Ines", "Jon", "Kai", "Lena", "Milo", "Nia"} {
		guests := 0
		if i%5 == 0 {
			guests = 1
		}
		if _, _, err := svc.Register(ctx, bid, ev.ID, waitlist.RegisterParams{Name: name, Email: strings.ToLower(name) + "@example.com",
			Guests: guests, Source: "demo"}); err != nil {
			return ev, fmt.Errorf("register %s: %w", name, err)
		}
	}
	return ev, nil
}
