package capacity

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/cost"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// salon is a business on a DynamoDB table of its own, as TestCapacity
// sets one up: a fake clock, default rules without quiet hours or a daily
// offer cap, a sweeper, and here also the outbox relay (a capture sender)
// and the web handler (the pages).
type salon struct {
	ctx   context.Context
	st    *dynamo.Store
	clock *nextup.FakeClock
	svc   *waitlist.Service
	sweep *timer.Sweeper
	relay *outbox.Relay
	web   http.Handler
	biz   nextup.Business
	c     *dynamo.Consumed
}

func newSalon(t *testing.T) *salon {
	t.Helper()
	ctx := context.Background()
	st := dynamo.New(dynotest.Client(t), dynotest.Table(t))
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := nextup.NewFakeClock(time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
	svc := waitlist.New(st, clock, "https://nextup.test")
	svc.Logger = slog.New(slog.DiscardHandler)
	rules := nextup.DefaultRules()
	rules.QuietHours, rules.MaxOffersPerPersonPerDay = nil, 0
	biz, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Salon", Timezone: "UTC", Rules: &rules})
	if err != nil {
		t.Fatal(err)
	}
	return &salon{ctx: ctx, st: st, clock: clock, svc: svc, biz: biz, c: st.Measure(),
		sweep: &timer.Sweeper{Store: st, Clock: clock, Handler: svc, Owner: "test", Logger: svc.Logger},
		relay: &outbox.Relay{Store: st, Clock: clock, Default: capture.New(), Batch: 1, Logger: svc.Logger},
		web:   (&web.Server{Svc: svc, Store: st, AdminToken: "adm", Logger: svc.Logger}).Handler()}
}

// figure is what one use case consumed.
type figure struct {
	read, write float64
	calls       int
}

// measure runs fn alone and returns what it consumed.
func (s *salon) measure(t *testing.T, fn func()) figure {
	t.Helper()
	s.c.Take()
	fn()
	n, r, w := s.c.TakeCalls()
	return figure{r, w, n}
}

func (s *salon) join(t *testing.T, i int) waitlist.JoinResult {
	t.Helper()
	res, err := s.svc.Join(s.ctx, s.biz.ID, waitlist.JoinParams{Name: fmt.Sprintf("P%d", i), Email: fmt.Sprintf("p%d@example.com", i), Service: "cut"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// slot is a slot of the salon's, booked outside nextup, starting in h
// hours.
func (s *salon) slot(t *testing.T, h time.Duration) nextup.Slot {
	t.Helper()
	sl, _, err := s.svc.CreateSlot(s.ctx, s.biz.ID, waitlist.SlotParams{Service: "cut", StartsAt: s.clock.Now().Add(h), EndsAt: s.clock.Now().Add(h + time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return sl
}

func (s *salon) release(t *testing.T, sl nextup.Slot) string {
	t.Helper()
	_, moves, err := s.svc.Release(s.ctx, s.biz.ID, sl.ID, 0, "cancellation")
	if err != nil || len(moves) != 1 {
		t.Fatalf("release: %v %v", moves, err)
	}
	return moves[0].OfferID
}

// token is the claim token of an offer, from its message.
func (s *salon) token(t *testing.T, offerID string) string {
	t.Helper()
	var msgs []nextup.Message
	if err := s.st.Read(s.ctx, func(tx nextup.Tx) error {
		var err error
		msgs, err = tx.MessageList(s.ctx, nextup.MessageFilter{BusinessID: s.biz.ID, OfferID: offerID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Kind == nextup.MessageOffer {
			return m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]
		}
	}
	t.Fatalf("no offer message for %s", offerID)
	return ""
}

func (s *salon) get(t *testing.T, path string) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.web.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body.String())
	}
}

// runDue runs the timers due now and wants n handled.
func (s *salon) runDue(t *testing.T, n int) {
	t.Helper()
	if got, err := s.sweep.RunDue(s.ctx); err != nil || got != n {
		t.Fatalf("timers due: %d handled (%v), want %d", got, err, n)
	}
}

// docTable is the capacity table of aws/store/dynamo/doc.go, by use case.
func docTable(t *testing.T) map[string]figure {
	t.Helper()
	f, err := os.Open("../../store/dynamo/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^//\s+(\S.*?\S)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9]+)\s*$`)
	out := map[string]figure{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "use case") && strings.Contains(line, "read units") {
			in = true
			continue
		}
		if !in {
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			break
		}
		r, _ := strconv.ParseFloat(m[2], 64)
		w, _ := strconv.ParseFloat(m[3], 64)
		n, _ := strconv.Atoi(m[4])
		out[m[1]] = figure{r, w, n}
	}
	if len(out) == 0 {
		t.Fatal("no capacity table found in aws/store/dynamo/doc.go")
	}
	return out
}

// near reports whether got is within a tenth of want, or a unit.
func near(got, want float64) bool {
	return math.Abs(got-want) <= math.Max(1, want/10)
}

// check compares a measured figure with the cost package's.
func check(t *testing.T, u cost.UseCase, got figure) {
	t.Helper()
	t.Logf("%-38s measured %5.1f read %5.1f write units %3d calls; cost package %4g %4g %3d", u.Name, got.read, got.write, got.calls, u.Read, u.Write, u.Calls)
	if !near(got.read, u.Read) || !near(got.write, u.Write) || !near(float64(got.calls), float64(u.Calls)) {
		t.Errorf("%s: measured %.1f read and %.1f write units in %d calls; the cost package says %g, %g, %d: update cost.%s (and doc.go's table if it is there)",
			u.Name, got.read, got.write, got.calls, u.Read, u.Write, u.Calls, u.Var)
	}
}

// TestDocTable: the cost package's figures for the use cases in
// aws/store/dynamo/doc.go's table are the table's, and the table is what
// TestCapacity's steps measure today.
func TestDocTable(t *testing.T) {
	t.Parallel()
	doc := docTable(t)
	byName := map[string]cost.UseCase{}
	for _, u := range cost.UseCases() {
		if u.InDoc {
			byName[u.Name] = u
			d, ok := doc[u.Name]
			if !ok {
				t.Errorf("cost.%s (%q) is not in doc.go's table %v", u.Var, u.Name, doc)
				continue
			}
			if d.read != u.Read || d.write != u.Write || d.calls != u.Calls {
				t.Errorf("cost.%s = %g/%g/%d; doc.go's table says %g/%g/%d", u.Var, u.Read, u.Write, u.Calls, d.read, d.write, d.calls)
			}
		}
	}
	for name := range doc {
		if _, ok := byName[name]; !ok {
			t.Errorf("doc.go's table has %q, which the cost package does not price", name)
		}
	}

	// TestCapacity's steps, as they are there.
	s := newSalon(t)
	var joins []figure
	for i := range 2 {
		joins = append(joins, s.measure(t, func() { s.join(t, i) }))
	}
	// doc.go gives one join: a join to a list someone is already on.
	check(t, cost.Join, joins[1])
	sl := s.slot(t, 26*time.Hour)
	var offerID string
	check(t, cost.ReleaseOffer, s.measure(t, func() { offerID = s.release(t, sl) }))
	tok := s.token(t, offerID)
	check(t, cost.Claim, s.measure(t, func() {
		if _, err := s.svc.Claim(s.ctx, tok); err != nil {
			t.Fatal(err)
		}
	}))
	s.release(t, s.slot(t, 26*time.Hour))
	check(t, cost.Expiry, s.measure(t, func() {
		if err := timer.Advance(s.ctx, s.clock, s.sweep, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
	}))
}

// TestModelUseCases measures, one at a time, the use cases the cost
// model adds to doc.go's four, and checks the cost package's figures.
func TestModelUseCases(t *testing.T) {
	t.Parallel()
	s := newSalon(t)
	// Three people join through the public form: the confirmation
	// message (the form's POST, after its checks), then the join itself
	// with its "you're on the list" message (the confirmation link).
	var status string
	for i := range 3 {
		f := s.measure(t, func() {
			p := waitlist.JoinParams{Name: fmt.Sprintf("P%d", i), Email: fmt.Sprintf("p%d@example.com", i), Service: "cut"}
			if err := s.svc.CheckJoin(s.ctx, s.biz.ID, &p); err != nil {
				t.Fatal(err)
			}
			if err := s.svc.QueueJoinConfirmation(s.ctx, s.biz.ID, nextup.ChannelEmail, p.Email, "Confirm", "Confirm: https://nextup.test/b/salon/confirm?t=x"); err != nil {
				t.Fatal(err)
			}
			p.Source, p.Notify = "form", true
			res, err := s.svc.Join(s.ctx, s.biz.ID, p)
			if err != nil {
				t.Fatal(err)
			}
			status = res.StatusToken
		})
		if i == 1 { // a list someone is on already, as doc.go's join
			check(t, cost.FormJoin, f)
		}
	}
	check(t, cost.StatusPage, s.measure(t, func() { s.get(t, "/s/"+status) }))

	// A decline rolls the slot on to the next person.
	sl := s.slot(t, 26*time.Hour)
	first := s.token(t, s.release(t, sl))
	check(t, cost.ClaimPage, s.measure(t, func() { s.get(t, "/c/"+first) }))
	check(t, cost.Decline, s.measure(t, func() {
		if _, moves, err := s.svc.Decline(s.ctx, first); err != nil || len(moves) != 1 {
			t.Fatalf("decline: %v %v", moves, err)
		}
	}))

	// The rolled-on offer's expiry at the end of its window (the default
	// 10 minutes: too short for a follow-up at half of it) rolls on to
	// the third person.
	s.clock.Advance(nextup.DefaultRules().ClaimWindow)
	check(t, cost.ExpiryTimer, s.measure(t, func() { s.runDue(t, 1) }))

	// The third person claims; their booking's first reminder (a day
	// before the start) is a timer too.
	var offers []nextup.Offer
	if err := s.st.Read(s.ctx, func(tx nextup.Tx) error {
		var err error
		offers, err = tx.OfferListBySlot(s.ctx, sl.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var live string
	for _, o := range offers {
		if o.State == nextup.OfferOffered {
			live = o.ID
		}
	}
	if live == "" {
		t.Fatalf("no live offer after the expiry rolled on: %+v", offers)
	}
	tok := s.token(t, live)
	if _, err := s.svc.Claim(s.ctx, tok); err != nil {
		t.Fatal(err)
	}
	s.clock.Set(sl.StartsAt.Add(-24 * time.Hour))
	check(t, cost.ReminderTimer, s.measure(t, func() { s.runDue(t, 1) }))

	// Sends: every message queued so far, one relay round each (a batch
	// of one: what one SQS record sends), averaged.
	var sends []figure
	for {
		var sent int
		f := s.measure(t, func() {
			n, _, err := s.relay.RunOnce(s.ctx)
			if err != nil {
				t.Fatal(err)
			}
			sent = n
		})
		if sent == 0 {
			break
		}
		sends = append(sends, f)
	}
	if len(sends) < 5 {
		t.Fatalf("%d messages sent, want the joins', offers', expiry's, confirmation's and reminder's", len(sends))
	}
	var avg figure
	for _, f := range sends {
		avg.read += f.read / float64(len(sends))
		avg.write += f.write / float64(len(sends))
		avg.calls += f.calls
	}
	avg.calls = int(math.Round(float64(avg.calls) / float64(len(sends))))
	check(t, cost.Send, avg)

	// The safety sweep with nothing due: the timers and the messages due.
	check(t, cost.IdleSweep, s.measure(t, func() {
		s.runDue(t, 0)
		if n, _, err := s.relay.RunOnce(s.ctx); err != nil || n != 0 {
			t.Fatalf("relay: %d %v", n, err)
		}
	}))
}
