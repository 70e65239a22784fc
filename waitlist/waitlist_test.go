package waitlist_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// bundle is the test bundle of a waitlist test: a real SQLite store in a
// temporary directory, a fake clock and a business.
type bundle struct {
	ctx     context.Context
	store   nextup.Store
	clock   *nextup.FakeClock
	svc     *waitlist.Service
	sweeper *timer.Sweeper
	biz     nextup.Business
	loc     *time.Location
}

// setup opens a fresh store with a business in Europe/London and the clock
// at Tuesday 1 Dec 2026, 10:00 local. rules may adjust the default rules.
func setup(t *testing.T, rules func(*nextup.Rules)) *bundle {
	t.Helper()
	return setupTB(t, rules)
}

func setupTB(t testing.TB, rules func(*nextup.Rules)) *bundle {
	t.Helper()
	b := newBundle(t, t.TempDir(), rules)
	t.Cleanup(func() { b.store.Close() })
	return b
}

// newBundle opens a store in dir; the caller closes it.
func newBundle(t testing.TB, dir string, rules func(*nextup.Rules)) *bundle {
	t.Helper()
	st, err := sqlite.Open(context.Background(), dir+"/nextup.db")
	if err != nil {
		t.Fatal(err)
	}
	return newBundleOn(t, st, rules)
}

// newBundleOn is newBundle on a store the caller opened.
func newBundleOn(t testing.TB, st nextup.Store, rules func(*nextup.Rules)) *bundle {
	t.Helper()
	ctx := context.Background()
	loc, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	clock := nextup.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, loc))
	svc := waitlist.New(st, clock, "https://nextup.test")
	svc.Random = nextup.NewRandom(rand.NewChaCha8([32]byte{1}))
	r := nextup.DefaultRules()
	if rules != nil {
		rules(&r)
	}
	biz, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Salon", Timezone: "Europe/London", Rules: &r})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{ctx: ctx, store: st, clock: clock, svc: svc, sweeper: &timer.Sweeper{Store: st, Clock: clock, Handler: svc}, biz: biz, loc: loc}
}

func (b *bundle) at(day, hour, min int) time.Time {
	return time.Date(2026, 12, 1+day, hour, min, 0, 0, b.loc)
}

func (b *bundle) slot(t testing.TB, p waitlist.SlotParams) nextup.Slot {
	t.Helper()
	if p.Service == "" {
		p.Service = "haircut"
	}
	if p.StartsAt.IsZero() {
		p.StartsAt = b.at(0, 14, 0)
	}
	if p.EndsAt.IsZero() {
		p.EndsAt = p.StartsAt.Add(45 * time.Minute)
	}
	s, _, err := b.svc.CreateSlot(b.ctx, b.biz.ID, p)
	if err != nil {
		t.Fatalf("create slot: %v", err)
	}
	return s
}

func (b *bundle) join(t testing.TB, name string, p waitlist.JoinParams) nextup.Entry {
	t.Helper()
	p.Name = name
	if p.Email == "" && p.Phone == "" {
		p.Email = strings.ToLower(name) + "@example.com"
	}
	if p.Service == "" && p.EventID == "" {
		p.Service = "haircut"
	}
	b.clock.Advance(time.Second) // distinct joined-at times
	res, err := b.svc.Join(b.ctx, b.biz.ID, p)
	if err != nil {
		t.Fatalf("join %s: %v", name, err)
	}
	return res.Entry
}

func (b *bundle) messages(t testing.TB, offerID string) []nextup.Message {
	t.Helper()
	var msgs []nextup.Message
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		msgs, err = tx.MessageList(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID, OfferID: offerID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// token returns the claim token of the live offer message sent to an entry.
func (b *bundle) token(t testing.TB, offerID string) string {
	t.Helper()
	var msgs []nextup.Message
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		msgs, err = tx.MessageList(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID, OfferID: offerID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Kind == nextup.MessageOffer {
			return m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]
		}
	}
	t.Fatalf("no offer message for offer %s", offerID)
	return ""
}

func (b *bundle) entry(t testing.TB, id string) waitlist.EntryView {
	t.Helper()
	v, err := b.svc.GetEntry(b.ctx, b.biz.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (b *bundle) getSlot(t testing.TB, id string) waitlist.SlotView {
	t.Helper()
	v, err := b.svc.GetSlot(b.ctx, b.biz.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func onlyMove(t *testing.T, moves []nextup.Move, kind nextup.MoveKind) nextup.Move {
	t.Helper()
	if len(moves) != 1 || moves[0].Move != kind {
		t.Fatalf("moves = %+v, want one %s", moves, kind)
	}
	return moves[0]
}

func TestCancellationOfferedToFirstFittingInFairOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	sl := b.slot(t, waitlist.SlotParams{Staff: "Ana"})
	b.join(t, "Ben", waitlist.JoinParams{Staff: "Cy"})                                   // wrong staff
	b.join(t, "Dee", waitlist.JoinParams{Earliest: b.at(0, 15, 0)})                      // too late in the day
	b.join(t, "Eve", waitlist.JoinParams{Service: "colour"})                             // other service
	fay := b.join(t, "Fay", waitlist.JoinParams{})                                       // first that fits
	gus := b.join(t, "Gus", waitlist.JoinParams{Priority: true, Phone: "+447700900123"}) // priority, joined last
	_ = fay

	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, waitlist.ReasonCancellation)
	if err != nil {
		t.Fatal(err)
	}
	m := onlyMove(t, moves, nextup.MoveOffer)
	if m.EntryID != gus.ID {
		t.Fatalf("offer went to %s, want Gus (priority first)", m.EntryID)
	}
	v := b.getSlot(t, sl.ID)
	if v.Slot.HeldSeats != 1 || v.Slot.BookedSeats != 0 || v.Slot.State(b.clock.Now()) != nextup.SlotOffered {
		t.Fatalf("slot after offer = %+v", v.Slot)
	}
	if v.Offers[0].Channel != nextup.ChannelSMS {
		t.Fatalf("Gus has a phone: offer channel = %s, want sms", v.Offers[0].Channel)
	}
	if want := b.clock.Now().Add(10 * time.Minute); !v.Offers[0].ExpiresAt.Equal(want) {
		t.Fatalf("expires at %v, want %v", v.Offers[0].ExpiresAt, want)
	}
}

func TestExpiryRollsOnThenDeclineThenClaim(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	sl := b.slot(t, waitlist.SlotParams{})
	ann := b.join(t, "Ann", waitlist.JoinParams{})
	bob := b.join(t, "Bob", waitlist.JoinParams{})
	cat := b.join(t, "Cat", waitlist.JoinParams{})

	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	first := onlyMove(t, moves, nextup.MoveOffer)
	if first.EntryID != ann.ID {
		t.Fatalf("first offer to %s, want Ann", first.EntryID)
	}
	annToken := b.token(t, first.OfferID)

	// Ann's window ends: the timer expires her offer and the slot rolls on to Bob.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	v := b.getSlot(t, sl.ID)
	if len(v.Offers) != 2 || v.Offers[0].State != nextup.OfferExpired || v.Offers[1].EntryID != bob.ID || v.Offers[1].State != nextup.OfferOffered {
		t.Fatalf("after expiry offers = %+v", v.Offers)
	}
	if e := b.entry(t, ann.ID); e.Entry.State != nextup.EntryWaiting || e.Position != 1 {
		t.Fatalf("Ann after expiry = %+v, want waiting at position 1 (place kept)", e)
	}
	if _, err := b.svc.Claim(b.ctx, annToken); nextup.ErrorCode(err) != nextup.CodeOfferExpired {
		t.Fatalf("Ann's stale claim: err = %v, want offer_expired", err)
	}

	// Bob declines: rolls on to Cat at once.
	_, moves, err = b.svc.Decline(b.ctx, b.token(t, v.Offers[1].ID))
	if err != nil {
		t.Fatal(err)
	}
	roll := moves[0]
	if roll.Move != nextup.MoveRollOn || roll.EntryID != cat.ID {
		t.Fatalf("after decline moves = %+v, want roll_on to Cat", moves)
	}
	catToken := b.token(t, roll.OfferID)
	res, err := b.svc.Claim(b.ctx, catToken)
	if err != nil {
		t.Fatal(err)
	}
	if res.Booking.SlotID != sl.ID || res.Booking.Seats != 1 || res.Repeat {
		t.Fatalf("booking = %+v", res)
	}
	again, err := b.svc.Claim(b.ctx, catToken)
	if err != nil || !again.Repeat || again.Booking.ID != res.Booking.ID {
		t.Fatalf("repeat claim = %+v, %v; want the same booking", again, err)
	}
	if _, err := b.svc.Claim(b.ctx, annToken); nextup.ErrorCode(err) != nextup.CodeSlotTaken {
		t.Fatalf("Ann's stale link after the slot filled: err = %v, want slot_taken", err)
	}
	v = b.getSlot(t, sl.ID)
	if v.Slot.BookedSeats != 1 || v.Slot.HeldSeats != 0 || v.Slot.State(b.clock.Now()) != nextup.SlotFull {
		t.Fatalf("slot after claim = %+v", v.Slot)
	}
	if e := b.entry(t, cat.ID); e.Entry.State != nextup.EntryBooked {
		t.Fatalf("Cat = %s, want booked", e.Entry.State)
	}
	// No expiry timer is left for Cat's claimed offer.
	var timers []nextup.Timer
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		timers, err = tx.TimerList(b.ctx, nextup.TimerFilter{SubjectID: roll.OfferID, PendingOnly: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(timers) != 0 {
		t.Fatalf("claimed offer still has timers %+v", timers)
	}
}

func TestListExhaustedHandsBackWithNote(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	sl := b.slot(t, waitlist.SlotParams{})
	b.join(t, "Ann", waitlist.JoinParams{})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	m := onlyMove(t, moves, nextup.MoveOffer)
	_, moves, err = b.svc.Decline(b.ctx, b.token(t, m.OfferID))
	if err != nil {
		t.Fatal(err)
	}
	hb := onlyMove(t, moves, nextup.MoveHandBack)
	if hb.Reason != nextup.HandBackListExhausted {
		t.Fatalf("hand-back reason %q", hb.Reason)
	}
	var hbs []nextup.HandBack
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		hbs, err = tx.HandBackList(b.ctx, b.biz.ID, nextup.HandBackOpen)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(hbs) != 1 || !strings.Contains(hbs[0].Note, "Ann (declined)") {
		t.Fatalf("hand-backs = %+v", hbs)
	}
	if st := b.getSlot(t, sl.ID).Slot.State(b.clock.Now()); st != nextup.SlotHandedBack {
		t.Fatalf("slot state %s", st)
	}
	// A new joiner does not take a handed-back slot: staff have it.
	e := b.join(t, "Bea", waitlist.JoinParams{})
	if v := b.entry(t, e.ID); v.Entry.State != nextup.EntryWaiting {
		t.Fatalf("Bea = %s, want waiting", v.Entry.State)
	}
}

func TestNobodyFitsThenJoinerIsMatched(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	_, moves, err := b.svc.CreateSlot(b.ctx, b.biz.ID, waitlist.SlotParams{Service: "haircut",
		StartsAt: b.at(0, 16, 0), EndsAt: b.at(0, 17, 0), BookedSeats: new(int)})
	if err != nil {
		t.Fatal(err)
	}
	onlyMove(t, moves, nextup.MoveNobodyFits)
	res, err := b.svc.Join(b.ctx, b.biz.ID, waitlist.JoinParams{Name: "Zed", Email: "zed@example.com", Service: "haircut"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entry.State != nextup.EntryOffered || len(res.Moves) != 1 || res.Moves[0].Move != nextup.MoveOffer {
		t.Fatalf("joiner = %+v moves %+v, want offered at once (reverse matching)", res.Entry, res.Moves)
	}
}

func TestTooSoonAndTryCapHandBack(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.MaxOffersPerSlot = 1 })
	soon := b.slot(t, waitlist.SlotParams{StartsAt: b.at(0, 10, 10)}) // 10 minutes away, lead is 15
	b.join(t, "Ann", waitlist.JoinParams{})
	b.join(t, "Bob", waitlist.JoinParams{})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, soon.ID, 0, waitlist.ReasonNoShow)
	if err != nil {
		t.Fatal(err)
	}
	if m := onlyMove(t, moves, nextup.MoveHandBack); m.Reason != nextup.HandBackTooSoon {
		t.Fatalf("reason %q, want too_soon", m.Reason)
	}
	later := b.slot(t, waitlist.SlotParams{StartsAt: b.at(0, 15, 0)})
	_, moves, err = b.svc.Release(b.ctx, b.biz.ID, later.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	m := onlyMove(t, moves, nextup.MoveOffer)
	_, moves, err = b.svc.Decline(b.ctx, b.token(t, m.OfferID))
	if err != nil {
		t.Fatal(err)
	}
	if hb := moves[0]; hb.Move != nextup.MoveHandBack || hb.Reason != nextup.HandBackTryCap {
		t.Fatalf("moves after decline = %+v, want hand_back try_cap", moves)
	}
}

func TestQuietHoursHoldOfferUntilMorning(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.clock.Set(b.at(0, 22, 30)) // inside quiet hours 21:00–08:00
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 12, 0)})
	ann := b.join(t, "Ann", waitlist.JoinParams{})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	m := onlyMove(t, moves, nextup.MoveOffer)
	o, err := b.svc.GetOffer(b.ctx, b.biz.ID, m.OfferID)
	if err != nil {
		t.Fatal(err)
	}
	morning := b.at(1, 8, 0)
	if o.State != nextup.OfferPending || !o.SendAt.Equal(morning) || !o.ExpiresAt.Equal(morning.Add(10*time.Minute)) {
		t.Fatalf("offer in quiet hours = %+v, want pending until 08:00, expiring 08:10", o)
	}
	if msgs := b.messages(t, o.ID); len(msgs) != 0 {
		t.Fatalf("a pending offer has messages before quiet hours end: %+v", msgs)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, morning.Sub(b.clock.Now())+time.Minute); err != nil {
		t.Fatal(err)
	}
	o, _ = b.svc.GetOffer(b.ctx, b.biz.ID, o.ID)
	if o.State != nextup.OfferOffered || o.SentAt == nil || !o.SentAt.Equal(morning) {
		t.Fatalf("offer after quiet hours = %+v, want offered at 08:00", o)
	}
	msgs := b.messages(t, o.ID)
	if len(msgs) != 1 || !msgs[0].NotBefore.Equal(morning) || !strings.Contains(msgs[0].Body, "until 8:10 am") {
		t.Fatalf("offer messages after quiet hours = %+v, want one, due 08:00, saying until 8:10 am", msgs)
	}
	if _, err := b.svc.Claim(b.ctx, b.token(t, o.ID)); err != nil {
		t.Fatalf("claim at 08:01: %v", err)
	}
	if v := b.entry(t, ann.ID); v.Entry.State != nextup.EntryBooked {
		t.Fatalf("Ann = %s", v.Entry.State)
	}
}

func TestSharedSlotBatchPromotion(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	class := b.slot(t, waitlist.SlotParams{Service: "yoga", Seating: nextup.SeatingShared, Capacity: 6})
	a := b.join(t, "Ann", waitlist.JoinParams{Service: "yoga", PartySize: 2})
	big := b.join(t, "Big", waitlist.JoinParams{Service: "yoga", PartySize: 4})
	c := b.join(t, "Cat", waitlist.JoinParams{Service: "yoga", PartySize: 1})
	_, moves, err := b.svc.Resize(b.ctx, b.biz.ID, class.ID, 10) // 4 free seats
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range moves {
		if m.Move != nextup.MoveOffer {
			t.Fatalf("moves = %+v", moves)
		}
		got[m.EntryID] = true
	}
	// Ann (2) fits, Big (4) no longer fits in the 2 left, Cat (1) does.
	if len(got) != 2 || !got[a.ID] || !got[c.ID] || got[big.ID] {
		t.Fatalf("batch offers to %v, want Ann and Cat", got)
	}
	v := b.getSlot(t, class.ID)
	if v.Slot.HeldSeats != 3 || v.Slot.FreeSeats() != 1 {
		t.Fatalf("class = %+v", v.Slot)
	}
	if _, _, err := b.svc.Resize(b.ctx, b.biz.ID, class.ID, 8); nextup.ErrorCode(err) != nextup.CodeCapacityBelowTaken {
		t.Fatalf("shrinking below taken: %v", err)
	}
	if _, _, err := b.svc.Release(b.ctx, b.biz.ID, class.ID, 7, ""); nextup.ErrorCode(err) != nextup.CodeNotEnoughBooked {
		t.Fatalf("releasing more than booked: %v", err)
	}
	if after := b.getSlot(t, class.ID); after.Slot != v.Slot {
		t.Fatalf("refused changes changed the slot: %+v → %+v", v.Slot, after.Slot)
	}
}

func TestLeaveCancelsLiveOfferAndRollsOn(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	sl := b.slot(t, waitlist.SlotParams{})
	ann := b.join(t, "Ann", waitlist.JoinParams{})
	bob := b.join(t, "Bob", waitlist.JoinParams{})
	if _, _, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, ""); err != nil {
		t.Fatal(err)
	}
	_, moves, err := b.svc.Leave(b.ctx, b.biz.ID, ann.ID, nextup.ActorCustomer)
	if err != nil {
		t.Fatal(err)
	}
	if m := onlyMove(t, moves, nextup.MoveRollOn); m.EntryID != bob.ID {
		t.Fatalf("rolled on to %s, want Bob", m.EntryID)
	}
	v := b.getSlot(t, sl.ID)
	if v.Offers[0].State != nextup.OfferCancelled || v.Offers[0].Reason != "entry_left" {
		t.Fatalf("Ann's offer = %+v", v.Offers[0])
	}
	if e := b.entry(t, ann.ID); e.Entry.State != nextup.EntryLeft {
		t.Fatalf("Ann = %s", e.Entry.State)
	}
}

func TestJoinValidationAndDuplicates(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, p := range []waitlist.JoinParams{
		{Service: "haircut", Email: "a@example.com"},             // no name
		{Name: "A", Service: "haircut"},                          // no contact
		{Name: "A", Service: "haircut", Email: "not-an-address"}, // bad email
		{Name: "A", Email: "a@example.com"},                      // no service
		{Name: "A", Email: "a@example.com", Service: "haircut", PartySize: -1},
		{Name: "A", Email: "a@example.com", Service: "haircut", Earliest: b.at(2, 0, 0), Latest: b.at(1, 0, 0)},
		{Name: "A", Email: "a@example.com", Service: "haircut", Latest: b.at(-1, 0, 0)},
	} {
		if _, err := b.svc.Join(b.ctx, b.biz.ID, p); !errors.Is(err, nextup.ErrInvalid) {
			t.Errorf("Join(%+v) err = %v, want invalid", p, err)
		}
	}
	first := b.join(t, "Ann", waitlist.JoinParams{Email: "ann@example.com"})
	_, err := b.svc.Join(b.ctx, b.biz.ID, waitlist.JoinParams{Name: "Ann again", Email: "ANN@example.com", Service: "haircut"})
	var e *nextup.Error
	if !errors.As(err, &e) || e.Code != nextup.CodeAlreadyWaiting || e.Data["entry_id"] != first.ID {
		t.Fatalf("duplicate join err = %v, want already_waiting naming %s", err, first.ID)
	}
	list, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: b.biz.ID})
	if err != nil || len(list) != 1 {
		t.Fatalf("entries after refused joins = %d (%v), want 1", len(list), err)
	}
}

func TestAuditTellsTheSlotsStory(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	sl := b.slot(t, waitlist.SlotParams{})
	b.join(t, "Ann", waitlist.JoinParams{})
	_, moves, _ := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	tok := b.token(t, moves[0].OfferID)
	if _, err := b.svc.ViewClaim(b.ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Claim(b.ctx, tok); err != nil {
		t.Fatal(err)
	}
	evs, err := b.svc.SlotAudit(b.ctx, b.biz.ID, sl.ID)
	if err != nil {
		t.Fatal(err)
	}
	var story []string
	for _, ev := range evs {
		story = append(story, ev.SubjectType+":"+ev.To+":"+ev.Reason)
		if ev.RuleVersion != 1 {
			t.Errorf("audit row %+v has rule version %d", ev, ev.RuleVersion)
		}
	}
	want := []string{"slot:created:", "slot:booked=0:cancellation", "offer:offered:offer", "entry:offered:offer",
		"offer:offered:seen", "offer:claimed:claim", "entry:booked:claim", "booking:booked:claim"}
	if strings.Join(story, " ") != strings.Join(want, " ") {
		t.Fatalf("story\n got %v\nwant %v", story, want)
	}
}

func TestRulesPatchBumpsVersion(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	r, err := b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(`{"claim_window_seconds":300}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 2 || r.ClaimWindow != 5*time.Minute {
		t.Fatalf("rules = %+v", r)
	}
	if _, err := b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(`{"claim_window_seconds":1}`)); !errors.Is(err, nextup.ErrInvalid) {
		t.Fatalf("bad rules: %v", err)
	}
	if _, err := b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(`{"claim_windw_seconds":300}`)); !errors.Is(err, nextup.ErrInvalid) {
		t.Fatalf("misspelt field: %v", err)
	}
	if r, err := b.svc.UpdateRules(b.ctx, b.biz.ID, []byte(`{"claim_window_seconds":300}`)); err != nil || r.Version != 2 {
		t.Fatalf("a patch that changes nothing: %+v %v, want version 2 kept", r, err)
	}
	got, _ := b.svc.GetBusiness(b.ctx, b.biz.ID)
	if got.Rules.Version != 2 {
		t.Fatalf("version after refused patch = %d", got.Rules.Version)
	}
}

func TestLateQuietHoursReleaseStillGivesWholeWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.clock.Set(b.at(0, 23, 0))
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 15, 0)})
	b.join(t, "Ann", waitlist.JoinParams{})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	m := onlyMove(t, moves, nextup.MoveOffer)
	// The process was down all morning: it comes back at 09:30 and the
	// sweeper finds the 08:00 release (and the 08:10 expiry) overdue.
	b.clock.Set(b.at(1, 9, 30))
	if _, err := b.sweeper.RunDue(b.ctx); err != nil {
		t.Fatal(err)
	}
	o, err := b.svc.GetOffer(b.ctx, b.biz.ID, m.OfferID)
	if err != nil {
		t.Fatal(err)
	}
	if o.State != nextup.OfferOffered || !o.SentAt.Equal(b.at(1, 9, 30)) || !o.ExpiresAt.Equal(b.at(1, 9, 40)) {
		t.Fatalf("late-sent offer = %+v, want offered at 09:30 with its whole window to 09:40", o)
	}
	if msgs := b.messages(t, o.ID); len(msgs) != 1 || !strings.Contains(msgs[0].Body, "until 9:40 am") {
		t.Fatalf("late-sent offer messages = %+v, want one saying until 9:40 am", msgs)
	}
	if _, err := b.svc.Claim(b.ctx, b.token(t, o.ID)); err != nil {
		t.Fatalf("claim within the window: %v", err)
	}
}

func TestLateReleaseBackInQuietHoursWaitsForMorning(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.clock.Set(b.at(0, 22, 0))
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(3, 15, 0)})
	b.join(t, "Ann", waitlist.JoinParams{})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	id := onlyMove(t, moves, nextup.MoveOffer).OfferID
	// Down from 22:00 until 23:30 the next night: quiet hours again.
	b.clock.Set(b.at(1, 23, 30))
	if _, err := b.sweeper.RunDue(b.ctx); err != nil {
		t.Fatal(err)
	}
	if o, _ := b.svc.GetOffer(b.ctx, b.biz.ID, id); o.State != nextup.OfferPending || len(b.messages(t, id)) != 0 {
		t.Fatalf("offer released into quiet hours: %+v", o)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 8*time.Hour+35*time.Minute); err != nil { // to 08:05
		t.Fatal(err)
	}
	o, _ := b.svc.GetOffer(b.ctx, b.biz.ID, id)
	if o.State != nextup.OfferOffered || !o.SentAt.Equal(b.at(2, 8, 0)) || !o.ExpiresAt.Equal(b.at(2, 8, 10)) {
		t.Fatalf("offer = %+v, want sent 08:00 the next morning, expiring 08:10", o)
	}
}

func TestCriteriaFrozenWhileOfferLive(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	class := b.slot(t, waitlist.SlotParams{Service: "yoga", Seating: nextup.SeatingShared, Capacity: 4,
		BookedSeats: func() *int { n := 2; return &n }()})
	ann := b.join(t, "Ann", waitlist.JoinParams{Service: "yoga", PartySize: 2})
	if v := b.entry(t, ann.ID); v.Entry.State != nextup.EntryOffered {
		t.Fatalf("Ann = %s, want offered", v.Entry.State)
	}
	six := 6
	if _, _, err := b.svc.UpdateEntry(b.ctx, b.biz.ID, ann.ID, waitlist.EntryPatch{PartySize: &six}); nextup.ErrorCode(err) != nextup.CodeEntryHasLiveOffer {
		t.Fatalf("changing party size under a live offer: %v", err)
	}
	yes := true
	if e, _, err := b.svc.UpdateEntry(b.ctx, b.biz.ID, ann.ID, waitlist.EntryPatch{Priority: &yes}); err != nil || !e.Priority {
		t.Fatalf("priority change under a live offer: %+v %v", e, err)
	}
	if v := b.entry(t, ann.ID); v.Entry.PartySize != 2 || b.getSlot(t, class.ID).Slot.HeldSeats != 2 {
		t.Fatalf("refused change changed something: %+v", v.Entry)
	}
}

// A joiner who does not fit an open slot must not trigger a decision on it:
// here that decision would have handed the slot back and kept it from the
// next joiner, who does fit.
func TestNonFittingJoinerLeavesOpenSlotAlone(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	class := b.slot(t, waitlist.SlotParams{Service: "yoga", Seating: nextup.SeatingShared, Capacity: 3,
		BookedSeats: func() *int { n := 1; return &n }()}) // Tue 1 Dec 14:00
	ann := b.join(t, "Ann", waitlist.JoinParams{Service: "yoga"})
	bob := b.join(t, "Bob", waitlist.JoinParams{Service: "yoga"})
	for _, e := range []nextup.Entry{ann, bob} {
		o := b.entry(t, e.ID).Offer
		if o == nil {
			t.Fatalf("%s has no offer", e.Name)
		}
		if _, err := b.svc.Claim(b.ctx, b.token(t, o.ID)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := b.svc.Release(b.ctx, b.biz.ID, class.ID, 1, ""); err != nil { // one seat free, list empty
		t.Fatal(err)
	}
	before, _ := b.svc.SlotAudit(b.ctx, b.biz.ID, class.ID)
	b.join(t, "Cat", waitlist.JoinParams{Service: "yoga", Availability: []nextup.Availability{{Days: []time.Weekday{time.Monday}, From: 9 * 60, To: 18 * 60}}})
	after, _ := b.svc.SlotAudit(b.ctx, b.biz.ID, class.ID)
	if len(after) != len(before) {
		t.Fatalf("Cat (Mondays only) changed the Tuesday class's story: %+v", after[len(before):])
	}
	dan := b.join(t, "Dan", waitlist.JoinParams{Service: "yoga"})
	if v := b.entry(t, dan.ID); v.Entry.State != nextup.EntryOffered {
		t.Fatalf("Dan fits the free seat but is %s", v.Entry.State)
	}
}

func TestHousekeepingExpiresEntriesPastTheirWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	short := b.join(t, "Ann", waitlist.JoinParams{Latest: b.at(1, 12, 0)})
	long := b.join(t, "Bob", waitlist.JoinParams{Latest: b.at(9, 12, 0)})
	// Housekeeping runs daily at 03:00 London time; by the 3rd at 03:00
	// Ann's window (to the 2nd, noon) has passed.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 48*time.Hour); err != nil {
		t.Fatal(err)
	}
	if v := b.entry(t, short.ID); v.Entry.State != nextup.EntryExpired {
		t.Fatalf("Ann = %s, want expired", v.Entry.State)
	}
	if v := b.entry(t, long.ID); v.Entry.State != nextup.EntryWaiting || v.Position != 1 {
		t.Fatalf("Bob = %+v, want waiting first in line", v)
	}
	var pending []nextup.Timer
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		pending, err = tx.TimerList(b.ctx, nextup.TimerFilter{BusinessID: b.biz.ID, Kind: nextup.TimerHousekeeping, PendingOnly: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || !pending[0].DueAt.Equal(b.at(3, 3, 0)) {
		t.Fatalf("pending housekeeping = %+v, want one, due the 4th at 03:00", pending)
	}
}
