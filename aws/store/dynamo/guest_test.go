package dynamo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestGuestsFitTheTransaction: a registration's guests are written in its
// one transaction, an item each, so on DynamoDB only so many fit in its
// 100 actions. The use case refuses more with validation_failed on
// guests (not the store's ErrTooLarge, a 500), writing nothing; a party
// of 40 named guests, a large RSVP, fits, and so does its check-in.
// Guests cost no call of their own: the guests of an entry made in the
// same transaction are blind creates.
func TestGuestsFitTheTransaction(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, svc, biz := h.ctx, h.st, h.svc, h.biz
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Gala", h.clock.Now().Add(72*3600e9), h.clock.Now().Add(74*3600e9), 200
	p.Settings.MaxGuests = 100
	ev, err := svc.CreateEvent(ctx, biz.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("Guest number %03d of a long table", i+1)
		}
		return out
	}

	_, _, err = svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: "Big", Email: "big@example.com", Guests: 100, GuestNames: names(100)})
	var ne *nextup.Error
	if !errors.As(err, &ne) || ne.Code != nextup.CodeValidation || len(ne.Fields) != 1 || ne.Fields[0].Field != "guests" {
		t.Fatalf("a party of 100 guests on DynamoDB: %v, want validation_failed on guests", err)
	}
	t.Logf("refused: %s", ne.Fields[0].Message)
	_, regs, err := svc.Registrations(ctx, biz.ID, ev.ID, "")
	if err != nil || len(regs) != 0 {
		t.Fatalf("after the refusal: %d registrations, %v; want none", len(regs), err)
	}

	// A registration of one guest against one of three, each after a
	// registration already made (so that both read a booking of the
	// event): the two guests more are two items more in the same
	// transaction, and no call.
	if _, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: "Solo", Email: "solo@example.com"}); err != nil {
		t.Fatal(err)
	}
	c := st.Measure()
	duo, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: "Duo", Email: "duo@example.com", Guests: 1, GuestNames: names(1)})
	if err != nil {
		t.Fatal(err)
	}
	oneCalls, _, oneW := c.TakeCalls()
	trio, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: "Quad", Email: "quad@example.com", Guests: 3, GuestNames: names(3)})
	if err != nil {
		t.Fatal(err)
	}
	threeCalls, _, threeW := c.TakeCalls()
	t.Logf("register with 1 named guest: %d calls, %.0f write units; with 3: %d calls, %.0f write units", oneCalls, oneW, threeCalls, threeW)
	// A guest is an item under 1 KB: 2 units for its transactional put
	// and 1 for each of its two index entries.
	if threeCalls != oneCalls || threeW != oneW+2*4 {
		t.Errorf("2 more guests cost %d more calls and %.0f more write units, want no call and 4 units a guest",
			threeCalls-oneCalls, threeW-oneW)
	}
	if len(duo.GuestList) != 1 || len(trio.GuestList) != 3 || trio.GuestList[2].Name != names(3)[2] {
		t.Errorf("registered: %+v, %+v", duo.GuestList, trio.GuestList)
	}

	big, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: "Forty", Email: "forty@example.com", Guests: 40, GuestNames: names(40)})
	if err != nil || len(big.GuestList) != 40 {
		t.Fatalf("a party of 40 named guests: %d guests, %v", len(big.GuestList), err)
	}
	// The party's check-in writes every guest too, and fits.
	r, err := svc.CheckIn(ctx, biz.ID, ev.ID, big.Entry.ID, false)
	if err != nil {
		t.Fatalf("checking in a party of 40: %v", err)
	}
	for _, g := range r.GuestList {
		if g.CheckedInAt == nil {
			t.Fatalf("guest %d not checked in with the party", g.Index)
		}
	}
}
