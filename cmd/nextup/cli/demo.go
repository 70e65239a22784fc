package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/booksys/httpbook"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// demo is a guided run of the whole loop on a fresh embedded store, with a
// fake clock so claim windows pass in an instant: a salon with booked
// chairs, a yoga class, a dozen people waiting; a cancellation is offered,
// ignored, rolled on, declined, rolled on and claimed; the class grows and
// promotes in batch; and the slot's story is printed from the audit log.
type demo struct {
	out     io.Writer
	clock   *nextup.FakeClock
	store   nextup.Store
	svc     *waitlist.Service
	sweeper *timer.Sweeper
	relay   *outbox.Relay
	sent    *capture.Sender
	biz     nextup.Business
	loc     *time.Location
	names   map[string]string // entry id → name
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo")
	db := fs.String("db", "", "the demo's store: a fresh file (default: one in a temporary directory), or a URL of an empty database (postgres://…, or dynamodb://… in nextup-aws)")
	tour := fs.Bool("tour", false, "instead of a server: a guided run of the whole loop in the terminal, with a fake clock")
	addr := fs.String("addr", ":8080", "listen address of the demo server")
	admin := fs.String("admin-token", "demo-admin", "admin token of the demo server")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *db == "" {
		dir, err := os.MkdirTemp("", "nextup-demo-")
		if err != nil {
			return err
		}
		*db = filepath.Join(dir, "nextup-demo.db")
	} else if strings.Contains(*db, "://") {
		// A database server: the demo salon's slug is taken when it
		// is not empty, which stops the demo before anything is added.
	} else if _, err := os.Stat(*db); err == nil {
		return fmt.Errorf("%s exists: the demo wants a fresh store", *db)
	}
	if *tour {
		return runTour(ctx, *db, stdout)
	}
	return runDemoServer(ctx, *db, *addr, *admin, stdout, stderr)
}

// runTour is the guided run: the demo salon's day in the terminal.
func runTour(ctx context.Context, db string, stdout io.Writer) error {
	st, err := openStore(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	loc, err := time.LoadLocation("Europe/London")
	if err != nil {
		return err
	}
	// Tuesday 10:00 in London, the next one after today: a weekday morning,
	// outside quiet hours.
	now := time.Now().In(loc)
	start := time.Date(now.Year(), now.Month(), now.Day(), 10, 0, 0, 0, loc)
	for start.Weekday() != time.Tuesday || !start.After(now) {
		start = time.Date(start.Year(), start.Month(), start.Day()+1, 10, 0, 0, 0, loc)
	}
	clock := nextup.NewFakeClock(start)
	d := &demo{out: stdout, clock: clock, store: st, loc: loc, names: map[string]string{}, sent: capture.New()}
	d.svc = waitlist.New(st, clock, "http://localhost:8080")
	d.sweeper = &timer.Sweeper{Store: st, Clock: clock, Handler: d.svc}
	d.relay = &outbox.Relay{Store: st, Clock: clock, Default: d.sent}
	d.relay.OnDead = deadLetter(d.svc)
	d.relay.OnSent = d.svc.Handed
	if err := d.script(ctx); err != nil {
		return err
	}
	where := db + " (SQLite, WAL)"
	if strings.Contains(db, "://") {
		where = redactDSN(db)
	}
	fmt.Fprintf(stdout, "\nEverything above is stored in %s. The fake clock let the claim windows pass in an instant.\n", where)
	return nil
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, format+"\n", args...) }

func (d *demo) at(day, hour, min int) time.Time {
	n := d.clock.Now().In(d.loc)
	return time.Date(n.Year(), n.Month(), n.Day()+day, hour, min, 0, 0, d.loc)
}

func (d *demo) script(ctx context.Context) error {
	var err error
	d.biz, _, err = d.svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Demo Salon", Timezone: "Europe/London"})
	if err != nil {
		return err
	}
	d.say("== %s (%s), %s", d.biz.Name, d.biz.Timezone, d.clock.Now().In(d.loc).Format("Mon 2 Jan 2006, 15:04"))
	d.say("   rules v%d: claim window %s, quiet hours %s–%s, min lead %s, order %s",
		d.biz.Rules.Version, d.biz.Rules.ClaimWindow, d.biz.Rules.QuietHours.Start, d.biz.Rules.QuietHours.End,
		d.biz.Rules.MinLead, d.biz.Rules.OrderPolicy)

	salon, err := seedSalon(ctx, d.svc, d.biz.ID, d.at, func() { d.clock.Advance(time.Minute) }, d.say)
	if err != nil {
		return err
	}
	haircut, class := salon.haircut, salon.class
	maps.Copy(d.names, salon.names)

	d.clock.Advance(10 * time.Minute)
	d.say("\n== %s: the 14:00 haircut with Ana is cancelled.", d.now())
	_, moves, err := d.svc.Release(ctx, d.biz.ID, haircut.ID, 0, waitlist.ReasonCancellation)
	if err != nil {
		return err
	}
	d.moves(moves)
	first, err := d.deliver(ctx)
	if err != nil {
		return err
	}

	d.say("\n== %s has not answered. The clock moves on 11 minutes; the claim window ends.", d.names[first.EntryID])
	if err := timer.Advance(ctx, d.clock, d.sweeper, 11*time.Minute); err != nil {
		return err
	}
	second, err := d.deliver(ctx)
	if err != nil {
		return err
	}
	d.say("\n== %s taps Decline.", d.names[second.EntryID])
	_, moves, err = d.svc.Decline(ctx, tokenOf(second.ClaimURL))
	if err != nil {
		return err
	}
	d.moves(moves)
	third, err := d.deliver(ctx)
	if err != nil {
		return err
	}
	d.clock.Advance(2 * time.Minute)
	d.say("\n== %s: %s opens the link and taps Claim.", d.now(), d.names[third.EntryID])
	if _, err := d.svc.ViewClaim(ctx, tokenOf(third.ClaimURL)); err != nil {
		return err
	}
	res, err := d.svc.Claim(ctx, tokenOf(third.ClaimURL))
	if err != nil {
		return err
	}
	d.say("   booked: %s (%d seat)", res.Booking.ID, res.Booking.Seats)
	if _, err := d.deliver(ctx); err != nil {
		return err
	}
	d.say("   A second tap on the same link returns the same booking; the earlier links now say the slot was just filled:")
	if _, err := d.svc.Claim(ctx, tokenOf(first.ClaimURL)); err != nil {
		d.say("   %s's old link: %s", d.names[first.EntryID], nextup.ErrorCode(err))
	}

	d.say("\n== The yoga class grows from 8 to 12 seats: batch promotion, in fair order, never more seats than free.")
	_, moves, err = d.svc.Resize(ctx, d.biz.ID, class.ID, 12)
	if err != nil {
		return err
	}
	d.moves(moves)
	if _, err := d.deliver(ctx); err != nil {
		return err
	}

	if err := d.bookingSystemScene(ctx, salon.colour); err != nil {
		return err
	}

	d.say("\n== The haircut slot's story, from the audit log:")
	evs, err := d.svc.SlotAudit(ctx, d.biz.ID, haircut.ID)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(d.out, 0, 0, 2, ' ', 0)
	for _, ev := range evs {
		who := d.names[ev.SubjectID]
		if id, ok := ev.Detail["entry_id"].(string); ok && who == "" {
			who = d.names[id]
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s %s\t%s → %s\t%s\t%s\n", ev.At.In(d.loc).Format("15:04:05"), ev.Actor,
			ev.SubjectType, short(ev.SubjectID), dash(ev.From), ev.To, ev.Reason, who)
	}
	return tw.Flush()
}

// bookingSystemScene connects the salon's own booking system (a local
// stand-in that has just booked a walk-in) and shows a claim it turns
// down: the offer ends as slot_taken, and the person is told and keeps
// their place.
func (d *demo) bookingSystemScene(ctx context.Context, colour nextup.Slot) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"slot already booked"}`, http.StatusConflict)
	}), httpLimits{})
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	d.svc.BookingSystem = &httpbook.Client{Clock: d.clock, Timeout: 5 * time.Second, Key: func(ctx context.Context, bid string) ([]byte, error) {
		b, err := d.svc.GetBusiness(ctx, bid)
		return []byte(b.APIKeyHash), err
	}}
	defer func() { d.svc.BookingSystem = nil }()
	url := "http://" + ln.Addr().String() + "/bookings"
	if _, err := d.svc.UpdateProfile(ctx, d.biz.ID, waitlist.ProfilePatch{BookingURL: &url}); err != nil {
		return err
	}
	d.say("\n== The salon connects its own booking system (booking_url): each claim is booked there too.")
	d.say("   Tomorrow's 11:00 colour with Ben is cancelled.")
	_, moves, err := d.svc.Release(ctx, d.biz.ID, colour.ID, 0, waitlist.ReasonCancellation)
	if err != nil {
		return err
	}
	d.moves(moves)
	offer, err := d.deliver(ctx)
	if err != nil {
		return err
	}
	d.say("   %s taps Claim, but a walk-in took the chair in the salon's own system a moment earlier: it answers 409.", d.names[offer.EntryID])
	if _, err := d.svc.Claim(ctx, tokenOf(offer.ClaimURL)); err != nil {
		d.say("   %s's claim: %s — the booking system holds the truth; %s is told and keeps the same place on the waitlist.",
			d.names[offer.EntryID], nextup.ErrorCode(err), d.names[offer.EntryID])
	}
	_, err = d.deliver(ctx)
	return err
}

func (d *demo) now() string { return d.clock.Now().In(d.loc).Format("15:04") }

func (d *demo) moves(moves []nextup.Move) {
	for _, m := range moves {
		who := ""
		if m.EntryID != "" {
			who = " → " + d.names[m.EntryID]
		}
		reason := ""
		if m.Reason != "" {
			reason = " (" + m.Reason + ")"
		}
		d.say("   move: %s%s%s", m.Move, who, reason)
	}
}

// deliver runs the outbox relay (to the capture channel) and prints what
// went out; it returns the last offer message sent.
func (d *demo) deliver(ctx context.Context) (nextup.Message, error) {
	before := d.sent.Len()
	if _, _, err := d.relay.RunOnce(ctx); err != nil {
		return nextup.Message{}, err
	}
	var last nextup.Message
	for _, m := range d.sent.Messages()[before:] {
		d.say("   %s to %s (%s %s):", m.Kind, d.names[m.EntryID], m.Channel, m.To)
		for _, line := range strings.Split(strings.TrimSpace(m.Body), "\n") {
			if strings.TrimSpace(line) != "" {
				d.say("     | %s", line)
			}
		}
		if m.Kind == nextup.MessageOffer {
			last = m
		}
	}
	return last, nil
}

func tokenOf(claimURL string) string { return claimURL[strings.LastIndex(claimURL, "/")+1:] }

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// salon is what seedSalon made: the demo's slots and who is waiting.
type salon struct {
	haircut, colour, class nextup.Slot
	names                  map[string]string // entry id → name
}

// seedSalon fills a business with the demo salon: three booked slots (a
// haircut with Ana, a colour with Ben, a yoga class of 8) and a dozen
// people waiting with varied criteria. at places a time on a day relative
// to "today"; tick runs between joins (the tour's clock moves a minute).
func seedSalon(ctx context.Context, svc *waitlist.Service, bid string, at func(day, hour, min int) time.Time, tick func(), say func(string, ...any)) (salon, error) {
	out := salon{names: map[string]string{}}
	var err error
	if out.haircut, _, err = svc.CreateSlot(ctx, bid, waitlist.SlotParams{Service: "haircut", Staff: "Ana",
		StartsAt: at(0, 14, 0), EndsAt: at(0, 14, 45)}); err != nil {
		return out, err
	}
	if out.colour, _, err = svc.CreateSlot(ctx, bid, waitlist.SlotParams{Service: "colour", Staff: "Ben",
		StartsAt: at(1, 11, 0), EndsAt: at(1, 12, 30)}); err != nil {
		return out, err
	}
	if out.class, _, err = svc.CreateSlot(ctx, bid, waitlist.SlotParams{Service: "yoga", Seating: nextup.SeatingShared,
		Capacity: 8, StartsAt: at(0, 18, 0), EndsAt: at(0, 19, 0)}); err != nil {
		return out, err
	}
	say("== Slots: haircut with Ana at 14:00 (booked), colour with Ben the day after at 11:00 (booked), yoga class at 18:00 (8/8 booked)")
	type joiner struct {
		name, contact, service, staff string
		party                         int
		priority                      bool
		afterHour                     int
	}
	joiners := []joiner{
		{"Maya", "maya@example.com", "haircut", "", 1, false, 0},
		{"Noah", "+447700900001", "haircut", "Ben", 1, false, 0}, // wants Ben: passed over for Ana's chair
		{"Olivia", "olivia@example.com", "haircut", "", 1, false, 0},
		{"Priya", "+447700900002", "haircut", "", 1, false, 0},
		{"Quinn", "quinn@example.com", "haircut", "", 1, false, 16}, // only after 16:00: does not fit 14:00
		{"Rosa", "rosa@example.com", "colour", "", 1, false, 0},
		{"Sam", "+447700900003", "yoga", "", 2, false, 0},
		{"Tara", "tara@example.com", "yoga", "", 1, false, 0},
		{"Umar", "umar@example.com", "yoga", "", 3, false, 0},
		{"Vera", "vera@example.com", "yoga", "", 1, true, 0}, // priority: goes first
		{"Will", "+447700900004", "yoga", "", 1, false, 0},
		{"Xena", "xena@example.com", "haircut", "", 1, false, 0},
	}
	say("== A dozen people join the waitlist:")
	for i, j := range joiners {
		tick()
		p := waitlist.JoinParams{Name: j.name, Service: j.service, Staff: j.staff, PartySize: j.party, Priority: j.priority,
			Earliest: at(0, 0, 0), Latest: at(7, 23, 59)}
		if j.afterHour > 0 {
			p.Earliest = at(0, j.afterHour, 0)
		}
		if strings.HasPrefix(j.contact, "+") {
			p.Phone = j.contact
		} else {
			p.Email = j.contact
		}
		res, err := svc.Join(ctx, bid, p)
		if err != nil {
			return out, fmt.Errorf("join %s: %w", j.name, err)
		}
		out.names[res.Entry.ID] = j.name
		extra := ""
		if j.staff != "" {
			extra += ", wants " + j.staff
		}
		if j.afterHour > 0 {
			extra += fmt.Sprintf(", only after %d:00", j.afterHour)
		}
		if j.priority {
			extra += ", priority"
		}
		say("   %2d. %-7s %-8s party %d%s", i+1, j.name, j.service, j.party, extra)
	}
	return out, nil
}
