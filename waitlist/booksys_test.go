package waitlist_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/booksys/httpbook"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// hang is a scripted answer of the fake booking system: no answer at all
// until the caller gives up.
const hang = 0

// bookingSystem is a fake of a business's booking system: every request
// takes the next answer of its script (an HTTP status, or hang), then the
// last one again, and is recorded with its Idempotency-Key, its body and
// whether its signature holds — checked as a booking system would, with
// the hex SHA-256 of the business's API key and the time nextup's clock
// read.
type bookingSystem struct {
	srv    *httptest.Server
	clock  *nextup.FakeClock
	key    []byte
	mu     sync.Mutex
	script []int
	calls  []bookingCall
}

type bookingCall struct {
	key    string
	body   map[string]any
	signed bool
}

func newBookingSystem(t *testing.T, clock *nextup.FakeClock, key string, script ...int) *bookingSystem {
	t.Helper()
	f := &bookingSystem{clock: clock, key: []byte(key), script: script}
	done := make(chan struct{})
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve(done)))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: no handler outlives the test
	return f
}

func (f *bookingSystem) serve(done chan struct{}) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		ts, sig, ok := strings.Cut(strings.TrimPrefix(r.Header.Get("Nextup-Signature"), "t="), ",v1=")
		mac := hmac.New(sha256.New, f.key)
		mac.Write([]byte(ts + "." + string(raw)))
		call := bookingCall{key: r.Header.Get("Idempotency-Key"),
			signed: ok && ts == strconv.FormatInt(f.clock.Now().Unix(), 10) && hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac.Sum(nil))))}
		_ = json.Unmarshal(raw, &call.body)
		f.mu.Lock()
		f.calls = append(f.calls, call)
		answer := f.script[min(len(f.calls), len(f.script))-1]
		f.mu.Unlock()
		switch answer {
		case hang:
			select {
			case <-r.Context().Done():
			case <-done:
			}
		case http.StatusCreated:
			w.WriteHeader(answer)
			_, _ = io.WriteString(w, `{"reference":"SALON-`+strconv.Itoa(len(f.calls))+`"}`)
		default:
			w.WriteHeader(answer)
		}
	}
}

func (f *bookingSystem) requests() []bookingCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

const owner = "owner@salon.example"

// withBookingSystem gives the bundle's business a booking system that
// answers by script, and an owner to tell; timeout bounds one request.
func (b *bundle) withBookingSystem(t *testing.T, timeout time.Duration, script ...int) *bookingSystem {
	t.Helper()
	f := newBookingSystem(t, b.clock, b.biz.APIKeyHash, script...)
	b.svc.BookingSystem = &httpbook.Client{Clock: b.clock, Timeout: timeout, Key: func(ctx context.Context, bid string) ([]byte, error) {
		biz, err := b.svc.GetBusiness(ctx, bid)
		return []byte(biz.APIKeyHash), err
	}}
	url, ownerEmail := f.srv.URL+"/bookings", owner
	biz, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{BookingURL: &url, OwnerEmail: &ownerEmail})
	if err != nil {
		t.Fatal(err)
	}
	b.biz = biz
	return f
}

// claimable is a chair tomorrow at 14:00 released to Ann (who joined
// before Bob): the slot, Ann, her offer and its claim token.
func (b *bundle) claimable(t *testing.T) (nextup.Slot, nextup.Entry, nextup.Move, string) {
	t.Helper()
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 14, 0)})
	ann := b.join(t, "Ann", waitlist.JoinParams{})
	b.join(t, "Bob", waitlist.JoinParams{})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, waitlist.ReasonCancellation)
	if err != nil {
		t.Fatal(err)
	}
	m := onlyMove(t, moves, nextup.MoveOffer)
	if m.EntryID != ann.ID {
		t.Fatalf("offer to %s, want Ann", m.EntryID)
	}
	return sl, ann, m, b.token(t, m.OfferID)
}

// invariant checks seats booked + held <= capacity on every slot.
func (b *bundle) invariant(t *testing.T) {
	t.Helper()
	slots, err := b.svc.ListSlots(b.ctx, nextup.SlotFilter{BusinessID: b.biz.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range slots {
		if s := v.Slot; s.BookedSeats < 0 || s.HeldSeats < 0 || s.BookedSeats+s.HeldSeats > s.Capacity {
			t.Fatalf("slot %s breaks the invariant: booked %d + held %d > capacity %d", s.ID, s.BookedSeats, s.HeldSeats, s.Capacity)
		}
	}
}

// story is a slot's audit log as "subject from→to reason (actor)" lines.
func (b *bundle) story(t *testing.T, slotID string) []string {
	t.Helper()
	evs, err := b.svc.SlotAudit(b.ctx, b.biz.ID, slotID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.SubjectType+" "+ev.From+"→"+ev.To+" "+ev.Reason+" ("+ev.Actor+")")
	}
	return out
}

func hasAll(t *testing.T, story []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(story, w) {
			t.Errorf("audit lacks %q:\n%s", w, strings.Join(story, "\n"))
		}
	}
}

// outbox lists the business's messages by kind.
func (b *bundle) outbox(t *testing.T) map[string][]nextup.Message {
	t.Helper()
	msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]nextup.Message{}
	for _, m := range msgs {
		out[m.Kind] = append(out[m.Kind], m)
	}
	return out
}

func (b *bundle) syncTimers(t *testing.T, bookingID string) []nextup.Timer {
	t.Helper()
	var ts []nextup.Timer
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		ts, err = tx.TimerList(b.ctx, nextup.TimerFilter{Kind: nextup.TimerBookingSync, SubjectID: bookingID, PendingOnly: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ts
}

func (b *bundle) booking(t *testing.T, offerID string) nextup.Booking {
	t.Helper()
	var bk nextup.Booking
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		bk, err = tx.BookingByOffer(b.ctx, offerID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return bk
}

// A 201 confirms: the claim returns the booking, the booking system got
// it signed with the booking id as Idempotency-Key, the confirmation goes
// out and the reference is on the record.
func TestBookingSystemConfirms(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusCreated)
	sl, ann, _, tok := b.claimable(t)

	res, err := b.svc.Claim(b.ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	calls := bs.requests()
	if len(calls) != 1 || !calls[0].signed || calls[0].key != res.Booking.ID || calls[0].body["booking_id"] != res.Booking.ID ||
		calls[0].body["name"] != "Ann" || calls[0].body["email"] != "ann@example.com" || calls[0].body["seats"] != float64(1) ||
		calls[0].body["slot"].(map[string]any)["starts_at"] != sl.StartsAt.UTC().Format(time.RFC3339) {
		t.Fatalf("booking system got %+v", calls)
	}
	if res.Repeat || res.CalendarToken == "" || res.Booking.State != nextup.BookingBooked {
		t.Fatalf("claim = %+v", res)
	}
	out := b.outbox(t)
	if c := out[nextup.MessageConfirmation]; len(c) != 1 || c[0].BookingID != res.Booking.ID || !strings.Contains(c[0].Body, "calendar.ics?token=") {
		t.Fatalf("confirmations %+v", c)
	}
	if len(out[waitlist.MessageBookingFailed]) != 0 || len(out[waitlist.MessageStaffNotice]) != 0 {
		t.Fatalf("unexpected messages %+v", out)
	}
	hasAll(t, b.story(t, sl.ID), "offer offered→claimed claim (customer)", "booking →booked claim (customer)",
		"booking booked→booked booking_system_confirmed (system)")
	evs, _ := b.svc.SlotAudit(b.ctx, b.biz.ID, sl.ID)
	if ev := evs[len(evs)-1]; ev.Detail["reference"] != "SALON-1" || ev.Detail["answer"] != "http 201" {
		t.Fatalf("confirmation audited as %+v", ev)
	}
	if ts := b.syncTimers(t, res.Booking.ID); len(ts) != 0 {
		t.Fatalf("booking_sync timers left: %+v", ts)
	}
	if v := b.entry(t, ann.ID); v.Entry.State != nextup.EntryBooked {
		t.Fatalf("Ann = %s", v.Entry.State)
	}
	if v := b.getSlot(t, sl.ID); v.Slot.BookedSeats != 1 || v.Slot.HeldSeats != 0 || v.Offers[0].State != nextup.OfferClaimed {
		t.Fatalf("slot %+v offers %+v", v.Slot, v.Offers)
	}
	b.invariant(t)

	// A double tap returns the same booking without asking again, and
	// the recovery timer's due time passes without a word.
	again, err := b.svc.Claim(b.ctx, tok)
	if err != nil || !again.Repeat || again.Booking.ID != res.Booking.ID {
		t.Fatalf("repeat = %+v, %v", again, err)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(bs.requests()); n != 1 {
		t.Fatalf("%d requests after a repeat and the timer, want 1", n)
	}
	if c := b.outbox(t)[nextup.MessageConfirmation]; len(c) != 1 {
		t.Fatalf("%d confirmations", len(c))
	}
}

// A 409: the slot is gone in the business's system. The booking is
// cancelled and the offer ends as slot_taken, Ann waits again with her
// place (and joined-at) kept and is told politely, the seats stay booked
// (taken there), and the claim is a slot_taken conflict.
func TestBookingSystemSlotTaken(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusConflict)
	sl, ann, m, tok := b.claimable(t)

	_, err := b.svc.Claim(b.ctx, tok)
	if nextup.ErrorCode(err) != nextup.CodeSlotTaken || !errors.Is(err, nextup.ErrConflict) {
		t.Fatalf("claim: %v, want slot_taken", err)
	}
	if calls := bs.requests(); len(calls) != 1 || !calls[0].signed {
		t.Fatalf("booking system got %+v", calls)
	}
	bk := b.booking(t, m.OfferID)
	if bk.State != nextup.BookingCancelled {
		t.Fatalf("booking %+v", bk)
	}
	v := b.getSlot(t, sl.ID)
	if v.Slot.BookedSeats != 1 || v.Slot.HeldSeats != 0 || v.Slot.HandedBack || len(v.Offers) != 1 ||
		v.Offers[0].State != nextup.OfferCancelled || v.Offers[0].Reason != waitlist.ReasonSlotTaken {
		t.Fatalf("slot %+v offers %+v", v.Slot, v.Offers)
	}
	e := b.entry(t, ann.ID)
	if e.Entry.State != nextup.EntryWaiting || e.Position != 1 || !e.Entry.JoinedAt.Equal(ann.JoinedAt) || e.Entry.Seq != ann.Seq {
		t.Fatalf("Ann = %+v at %d, want waiting first with joined-at %v", e.Entry, e.Position, ann.JoinedAt)
	}
	out := b.outbox(t)
	if len(out[nextup.MessageConfirmation]) != 0 || len(out[waitlist.MessageStaffNotice]) != 0 {
		t.Fatalf("messages %+v", out)
	}
	if f := out[waitlist.MessageBookingFailed]; len(f) != 1 || f[0].To != "ann@example.com" ||
		!strings.Contains(f[0].Body, "was taken just before your claim reached us") || !strings.Contains(f[0].Body, "You keep your place") {
		t.Fatalf("Ann was told %+v", f)
	}
	hasAll(t, b.story(t, sl.ID), "booking booked→cancelled slot_taken (system)", "offer claimed→cancelled slot_taken (system)",
		"entry booked→waiting slot_taken (system)")
	if ts := b.syncTimers(t, bk.ID); len(ts) != 0 {
		t.Fatalf("booking_sync timers left: %+v", ts)
	}
	hbs, err := b.svc.ListHandBacks(b.ctx, b.biz.ID, "")
	if err != nil || len(hbs) != 0 {
		t.Fatalf("hand-backs %+v, %v", hbs, err)
	}
	b.invariant(t)

	// Tapping again says the same without asking again.
	if _, err := b.svc.Claim(b.ctx, tok); nextup.ErrorCode(err) != nextup.CodeSlotTaken {
		t.Fatalf("repeat: %v", err)
	}
	if info, err := b.svc.ViewClaim(b.ctx, tok); err != nil || info.Offer.Reason != waitlist.ReasonSlotTaken || info.Confirming {
		t.Fatalf("claim page info %+v, %v", info, err)
	}
	if n := len(bs.requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	// Staff learn that the seats are free after all: the slot goes to the
	// waitlist again, and never to Ann, who was offered it already.
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, waitlist.ReasonOpening)
	if err != nil {
		t.Fatal(err)
	}
	if mv := onlyMove(t, moves, nextup.MoveRollOn); mv.EntryID == ann.ID {
		t.Fatalf("Ann offered the slot again: %+v", mv)
	}
	b.invariant(t)
}

// 503 then 201: the claim asks again at once, with the same key, and the
// booking is confirmed.
func TestBookingSystemUnavailableThenConfirms(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusServiceUnavailable, http.StatusCreated)
	sl, _, _, tok := b.claimable(t)

	res, err := b.svc.Claim(b.ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	calls := bs.requests()
	if len(calls) != 2 || calls[0].key != res.Booking.ID || calls[1].key != res.Booking.ID || !calls[0].signed || !calls[1].signed {
		t.Fatalf("booking system got %+v, want the same key twice", calls)
	}
	if c := b.outbox(t)[nextup.MessageConfirmation]; len(c) != 1 {
		t.Fatalf("%d confirmations", len(c))
	}
	evs, _ := b.svc.SlotAudit(b.ctx, b.biz.ID, sl.ID)
	if ev := evs[len(evs)-1]; ev.Reason != waitlist.ReasonBookingSystemConfirmed || ev.Detail["attempts"] != float64(2) ||
		ev.Detail["reference"] != "SALON-2" {
		t.Fatalf("confirmation audited as %+v", ev)
	}
	b.invariant(t)
}

// A booking system that never answers in time: after three attempts the
// claim fails gracefully. The booking is cancelled, Ann waits again with
// her place and is told the business will confirm with her, the slot is
// handed back with a note and the owner is told; the claim is 503
// booking_system_unavailable.
func TestBookingSystemTimeouts(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 300*time.Millisecond, hang)
	sl, ann, m, tok := b.claimable(t)

	_, err := b.svc.Claim(b.ctx, tok)
	if nextup.ErrorCode(err) != nextup.CodeBookingSystemUnavailable || !errors.Is(err, nextup.ErrUnavailable) {
		t.Fatalf("claim: %v, want booking_system_unavailable", err)
	}
	bk := b.booking(t, m.OfferID)
	calls := bs.requests()
	if len(calls) != 3 || calls[0].key != bk.ID || calls[2].key != bk.ID {
		t.Fatalf("booking system got %+v, want 3 requests for %s", calls, bk.ID)
	}
	if bk.State != nextup.BookingCancelled {
		t.Fatalf("booking %+v", bk)
	}
	v := b.getSlot(t, sl.ID)
	if v.Slot.BookedSeats != 1 || v.Slot.HeldSeats != 0 || !v.Slot.HandedBack || v.Offers[0].State != nextup.OfferCancelled ||
		v.Offers[0].Reason != waitlist.ReasonBookingSystemUnavailable {
		t.Fatalf("slot %+v offers %+v", v.Slot, v.Offers)
	}
	hbs, err := b.svc.ListHandBacks(b.ctx, b.biz.ID, "")
	if err != nil || len(hbs) != 1 || hbs[0].SlotID != sl.ID || hbs[0].Reason != waitlist.ReasonBookingSystemUnavailable ||
		!strings.Contains(hbs[0].Note, "Ann claimed it, but your booking system did not answer (no answer within 300ms, 3 attempts)") {
		t.Fatalf("hand-backs %+v, %v", hbs, err)
	}
	e := b.entry(t, ann.ID)
	if e.Entry.State != nextup.EntryWaiting || e.Position != 1 || !e.Entry.JoinedAt.Equal(ann.JoinedAt) {
		t.Fatalf("Ann = %+v at %d", e.Entry, e.Position)
	}
	out := b.outbox(t)
	if f := out[waitlist.MessageBookingFailed]; len(f) != 1 || f[0].To != "ann@example.com" || !strings.Contains(f[0].Body, "will get in touch to confirm it with you directly") {
		t.Fatalf("Ann was told %+v", f)
	}
	if n := out[waitlist.MessageStaffNotice]; len(n) != 1 || n[0].To != owner || n[0].Channel != nextup.ChannelEmail ||
		!strings.Contains(n[0].Body, "Ann claimed the haircut slot") || !strings.Contains(n[0].Body, "ann@example.com") {
		t.Fatalf("owner was told %+v", n)
	}
	if len(out[nextup.MessageConfirmation]) != 0 {
		t.Fatalf("a confirmation went out")
	}
	hasAll(t, b.story(t, sl.ID), "booking booked→cancelled booking_system_unavailable (system)",
		"offer claimed→cancelled booking_system_unavailable (system)", "entry booked→waiting booking_system_unavailable (system)",
		"slot full→handed_back booking_system_unavailable (system)")
	if ts := b.syncTimers(t, bk.ID); len(ts) != 0 {
		t.Fatalf("booking_sync timers left: %+v", ts)
	}
	b.invariant(t)
	if _, err := b.svc.Claim(b.ctx, tok); nextup.ErrorCode(err) != nextup.CodeBookingSystemUnavailable {
		t.Fatalf("repeat: %v", err)
	}
	if n := len(bs.requests()); n != 3 {
		t.Fatalf("%d requests after a repeat, want 3", n)
	}
}

// Another 4xx is final: no second attempt, and the claim fails as when
// the booking system is down.
func TestBookingSystemRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusBadRequest)
	sl, _, m, tok := b.claimable(t)
	if _, err := b.svc.Claim(b.ctx, tok); nextup.ErrorCode(err) != nextup.CodeBookingSystemUnavailable {
		t.Fatalf("claim: %v", err)
	}
	if n := len(bs.requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	if v := b.getSlot(t, sl.ID); v.Offers[0].Reason != waitlist.ReasonBookingSystemRefused || !v.Slot.HandedBack {
		t.Fatalf("slot %+v offers %+v", v.Slot, v.Offers)
	}
	if bk := b.booking(t, m.OfferID); bk.State != nextup.BookingCancelled {
		t.Fatalf("booking %+v", bk)
	}
	b.invariant(t)
}

// bookingFunc adapts a function to nextup.BookingSystem.
type bookingFunc func(ctx context.Context, url string, r nextup.BookRequest) nextup.BookReply

func (f bookingFunc) Book(ctx context.Context, url string, r nextup.BookRequest) nextup.BookReply {
	return f(ctx, url, r)
}

// crashAfterBooking is a booking system client in a process that dies
// right after the booking system answered: the claim's goroutine ends
// there, before the answer is stored.
func crashAfterBooking(real nextup.BookingSystem) nextup.BookingSystem {
	return bookingFunc(func(ctx context.Context, url string, r nextup.BookRequest) nextup.BookReply {
		real.Book(ctx, url, r)
		runtime.Goexit()
		return nextup.BookReply{}
	})
}

// claimAndCrash claims in a goroutine that dies after the booking system
// answered, as a process killed between the claim's transaction and the
// answer's.
func (b *bundle) claimAndCrash(t *testing.T, tok string) {
	t.Helper()
	real := b.svc.BookingSystem
	b.svc.BookingSystem = crashAfterBooking(real)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.svc.Claim(b.ctx, tok)
		t.Error("the claim went on after the crash")
	}()
	<-done
	b.svc.BookingSystem = real // the restarted process
}

// A crash after the booking system booked it but before the answer was
// stored: the booking stays booked and unconfirmed until the recovery
// timer asks again with the same key and confirms it.
func TestBookingSystemCrashRecovery(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusCreated)
	sl, ann, m, tok := b.claimable(t)
	b.claimAndCrash(t, tok)

	bk := b.booking(t, m.OfferID)
	if calls := bs.requests(); len(calls) != 1 || calls[0].key != bk.ID {
		t.Fatalf("booking system got %+v", calls)
	}
	if ts := b.syncTimers(t, bk.ID); len(ts) != 1 || !ts[0].DueAt.Equal(b.clock.Now().Add(2*time.Minute)) {
		t.Fatalf("booking_sync timers %+v", ts)
	}
	if info, err := b.svc.ViewClaim(b.ctx, tok); err != nil || !info.Confirming || info.Offer.State != nextup.OfferClaimed {
		t.Fatalf("claim page info %+v, %v", info, err)
	}
	if len(b.outbox(t)[nextup.MessageConfirmation]) != 0 {
		t.Fatal("confirmed before the booking system's answer was stored")
	}
	b.invariant(t)

	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	calls := bs.requests()
	if len(calls) != 2 || calls[1].key != bk.ID || !calls[1].signed {
		t.Fatalf("booking system got %+v, want the same key again", calls)
	}
	c := b.outbox(t)[nextup.MessageConfirmation]
	if len(c) != 1 || c[0].BookingID != bk.ID || c[0].To != "ann@example.com" {
		t.Fatalf("confirmations %+v", c)
	}
	hasAll(t, b.story(t, sl.ID), "booking booked→booked booking_system_confirmed (timer)")
	if ts := b.syncTimers(t, bk.ID); len(ts) != 0 {
		t.Fatalf("booking_sync timers left: %+v", ts)
	}
	if v := b.entry(t, ann.ID); v.Entry.State != nextup.EntryBooked {
		t.Fatalf("Ann = %s", v.Entry.State)
	}
	// A double tap now returns the booking as confirmed.
	if again, err := b.svc.Claim(b.ctx, tok); err != nil || !again.Repeat || again.Booking.ID != bk.ID {
		t.Fatalf("repeat = %+v, %v", again, err)
	}
	if n := len(bs.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	b.invariant(t)
}

// A double tap while the booking awaits its booking system asks it again
// (same key) and answers with what it says.
func TestBookingSystemRepeatWhileAwaiting(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusConflict)
	_, _, m, tok := b.claimable(t)
	b.claimAndCrash(t, tok)
	if _, err := b.svc.Claim(b.ctx, tok); nextup.ErrorCode(err) != nextup.CodeSlotTaken {
		t.Fatalf("repeat: %v, want slot_taken", err)
	}
	bk := b.booking(t, m.OfferID)
	if calls := bs.requests(); len(calls) != 2 || calls[0].key != bk.ID || calls[1].key != bk.ID {
		t.Fatalf("booking system got %+v", calls)
	}
	if f := b.outbox(t)[waitlist.MessageBookingFailed]; len(f) != 1 {
		t.Fatalf("Ann was told %d times", len(f))
	}
	// The recovery timer finds nothing left to do.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(bs.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	b.invariant(t)
}

// After a crash, a booking system that keeps failing is asked again with
// growing pauses, a bounded number of times, and then the claim fails as
// in the request: hand-back, owner and customer told.
func TestBookingSystemRecoveryGivesUp(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusServiceUnavailable)
	sl, ann, m, tok := b.claimable(t)
	b.claimAndCrash(t, tok)
	bk := b.booking(t, m.OfferID)

	// 2 minutes, then 4, 8, 16 and 32 more: five tries by the timer.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(bs.requests()); n != 1+4 {
		t.Fatalf("%d requests after 30 minutes, want 5", n)
	}
	if bk := b.booking(t, m.OfferID); bk.State != nextup.BookingBooked {
		t.Fatalf("given up too early: %+v", bk)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 40*time.Minute); err != nil {
		t.Fatal(err)
	}
	calls := bs.requests()
	if len(calls) != 1+5 {
		t.Fatalf("%d requests, want 6", len(calls))
	}
	for _, c := range calls {
		if c.key != bk.ID || !c.signed {
			t.Fatalf("request %+v", c)
		}
	}
	story := b.story(t, sl.ID)
	retries := 0
	for _, l := range story {
		if l == "booking booked→booked booking_system_retry (timer)" {
			retries++
		}
	}
	if retries != 4 {
		t.Errorf("%d retries audited, want 4", retries)
	}
	hasAll(t, story, "booking booked→cancelled booking_system_unavailable (timer)", "slot full→handed_back booking_system_unavailable (timer)")
	hbs, _ := b.svc.ListHandBacks(b.ctx, b.biz.ID, "")
	if len(hbs) != 1 || !strings.Contains(hbs[0].Note, "http 503, 5 attempts") {
		t.Fatalf("hand-backs %+v", hbs)
	}
	out := b.outbox(t)
	if len(out[waitlist.MessageBookingFailed]) != 1 || len(out[waitlist.MessageStaffNotice]) != 1 || len(out[nextup.MessageConfirmation]) != 0 {
		t.Fatalf("messages %+v", out)
	}
	if e := b.entry(t, ann.ID); e.Entry.State != nextup.EntryWaiting || e.Position != 1 {
		t.Fatalf("Ann = %+v at %d", e.Entry, e.Position)
	}
	if ts := b.syncTimers(t, bk.ID); len(ts) != 0 {
		t.Fatalf("booking_sync timers left: %+v", ts)
	}
	b.invariant(t)
}

// Staff cancelling a booking that awaits its booking system end the saga:
// the recovery timer no longer asks.
func TestBookingSystemStaffCancelEndsSaga(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	bs := b.withBookingSystem(t, 10*time.Second, http.StatusCreated)
	_, _, m, tok := b.claimable(t)
	b.claimAndCrash(t, tok)
	bk := b.booking(t, m.OfferID)
	if _, _, err := b.svc.CancelBooking(b.ctx, b.biz.ID, bk.ID, ""); err != nil {
		t.Fatal(err)
	}
	if ts := b.syncTimers(t, bk.ID); len(ts) != 0 {
		t.Fatalf("booking_sync timers left: %+v", ts)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(bs.requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	b.invariant(t)
}

// Without a booking URL nothing changes; a booking URL must be an
// absolute http(s) URL.
func TestBookingURLValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, bad := range []string{"ftp://book.example", "/bookings", "https://", "not a url"} {
		if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{BookingURL: &bad}); nextup.ErrorCode(err) != nextup.CodeValidation {
			t.Errorf("booking URL %q: %v", bad, err)
		}
	}
	good := "https://book.example/nextup"
	biz, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{BookingURL: &good})
	if err != nil || biz.Profile.BookingURL != good {
		t.Fatalf("good URL: %+v, %v", biz.Profile, err)
	}
	empty := ""
	if biz, err = b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{BookingURL: &empty}); err != nil || biz.Profile.BookingURL != "" {
		t.Fatalf("clearing: %+v, %v", biz.Profile, err)
	}
}

// A texted YES goes through the same saga; when the booking system turns
// it down, the text saying so is the outbox's, not a second reply.
func TestBookingSystemTextedYes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.withBookingSystem(t, 10*time.Second, http.StatusConflict)
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 14, 0)})
	gus := b.join(t, "Gus", waitlist.JoinParams{Phone: "+447700900123"})
	if _, _, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, ""); err != nil {
		t.Fatal(err)
	}
	reply, err := b.svc.InboundSMS(b.ctx, b.biz.ID, "+44 7700 900123", "yes")
	if err != nil || reply.Action != "claim_failed" || reply.Text != "" {
		t.Fatalf("reply %+v, %v", reply, err)
	}
	f := b.outbox(t)[waitlist.MessageBookingFailed]
	if len(f) != 1 || f[0].Channel != nextup.ChannelSMS || f[0].To != "+447700900123" || !strings.Contains(f[0].Body, "You keep your place") {
		t.Fatalf("Gus was told %+v", f)
	}
	if e := b.entry(t, gus.ID); e.Entry.State != nextup.EntryWaiting {
		t.Fatalf("Gus = %s", e.Entry.State)
	}
	b.invariant(t)
}
