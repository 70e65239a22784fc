package dynamo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// A slot is the item slot#ID, listed by start in g2 (slots#BID) and, while
// it has free seats and is not handed back, in g3 (open#BID#SERVICE, plain
// slots only: an event is found by its id).

func slotPK(id string) string { return "slot#" + id }

func slotItem(s nextup.Slot) (item, error) {
	sk := ts(s.StartsAt) + "#" + s.ID
	var open string
	if s.Kind != nextup.KindEvent && s.FreeSeats() > 0 && !s.HandedBack {
		open = "open#" + s.BusinessID + "#" + s.Service
	}
	return newItem(s, "gsi2pk", "slots#"+s.BusinessID, "gsi2sk", sk, "gsi3pk", open, "gsi3sk", sk)
}

func (t *Tx) putSlot(s nextup.Slot) error {
	it, err := slotItem(s)
	if err != nil {
		return err
	}
	return t.put(slotPK(s.ID), it)
}

// SlotCreate stores a slot; booked over capacity, an id that exists or a
// missing business is refused.
func (t *Tx) SlotCreate(ctx context.Context, s nextup.Slot) error {
	what := "create slot " + s.ID
	if s.Kind == "" {
		s.Kind = nextup.KindSlot
	}
	if s.Seating == "" {
		s.Seating = nextup.SeatingUnit
	}
	if s.Capacity < 0 || s.BookedSeats < 0 || s.HeldSeats < 0 || s.BookedSeats+s.HeldSeats > s.Capacity {
		return conflict(fmt.Sprintf("%s: booked %d + held %d over capacity %d", what, s.BookedSeats, s.HeldSeats, s.Capacity))
	}
	if ok, err := t.exists(ctx, bizPK(s.BusinessID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": business "+s.BusinessID))
	}
	if ok, err := t.exists(ctx, slotPK(s.ID)); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	return t.putSlot(s)
}

// SlotGet reads a slot; inside InTx the commit checks it is unchanged.
func (t *Tx) SlotGet(ctx context.Context, id string) (nextup.Slot, error) {
	return loadLocked[nextup.Slot](ctx, t, slotPK(id), "get slot "+id)
}

// SlotList lists a business's slots by start.
func (t *Tx) SlotList(ctx context.Context, f nextup.SlotFilter) ([]nextup.Slot, error) {
	q := query{index: "gsi2", part: "slots#" + f.BusinessID, limit: f.Limit}
	if !f.From.IsZero() {
		q.from = ts(f.From)
	}
	if !f.To.IsZero() {
		q.to = ts(f.To)
	}
	its, err := t.query(ctx, q)
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Slot](its)
}

// SlotSeats changes the seat counters when the result keeps the invariant.
func (t *Tx) SlotSeats(ctx context.Context, id string, d nextup.SeatDelta) (nextup.Slot, error) {
	what := fmt.Sprintf("seats of slot %s (booked %+d, held %+d)", id, d.Booked, d.Held)
	s, err := load[nextup.Slot](ctx, t, slotPK(id), what)
	if err != nil {
		return s, err
	}
	booked, held := s.BookedSeats+d.Booked, s.HeldSeats+d.Held
	if booked < 0 || held < 0 || booked+held > s.Capacity {
		return nextup.Slot{}, conflict(what)
	}
	s.BookedSeats, s.HeldSeats = booked, held
	return s, t.putSlot(s)
}

// SlotResize sets a capacity of at least booked+held.
func (t *Tx) SlotResize(ctx context.Context, id string, capacity int) (nextup.Slot, error) {
	what := fmt.Sprintf("resize slot %s to %d", id, capacity)
	s, err := load[nextup.Slot](ctx, t, slotPK(id), what)
	if err != nil {
		return s, err
	}
	if capacity < 0 || capacity < s.BookedSeats+s.HeldSeats {
		return nextup.Slot{}, conflict(what)
	}
	s.Capacity = capacity
	return s, t.putSlot(s)
}

// SlotSetHandedBack marks or clears an open hand-back.
func (t *Tx) SlotSetHandedBack(ctx context.Context, id string, handedBack bool) error {
	s, err := load[nextup.Slot](ctx, t, slotPK(id), fmt.Sprintf("set slot %s handed back %t", id, handedBack))
	if err != nil {
		return err
	}
	s.HandedBack = handedBack
	return t.putSlot(s)
}

// SlotEventSet replaces an event's title and settings.
func (t *Tx) SlotEventSet(ctx context.Context, id, title string, ev nextup.EventSettings) error {
	what := "set event " + id
	s, err := load[nextup.Slot](ctx, t, slotPK(id), what)
	if err != nil {
		return err
	}
	if s.Kind != nextup.KindEvent {
		return notFound(what)
	}
	s.Title, s.Event = title, &ev
	return t.putSlot(s)
}

// SlotOpenFor lists future slots with free seats that could fit e, soonest
// first.
func (t *Tx) SlotOpenFor(ctx context.Context, e nextup.Entry, startsAfter time.Time, limit int) ([]nextup.Slot, error) {
	fits := func(s nextup.Slot) bool {
		return s.BusinessID == e.BusinessID && s.StartsAt.After(startsAfter) &&
			(e.Earliest.IsZero() || !s.StartsAt.Before(e.Earliest)) &&
			(e.Latest.IsZero() || !s.StartsAt.After(e.Latest)) &&
			!s.HandedBack && s.FreeSeats() >= max(e.PartySize, 1) &&
			(e.Staff == "" || s.Staff == e.Staff)
	}
	if e.EventID != "" {
		s, err := load[nextup.Slot](ctx, t, slotPK(e.EventID), "open slots for entry "+e.ID)
		if err != nil || !fits(s) || limit < 0 {
			return nil, ignoreNotFound(err)
		}
		return []nextup.Slot{s}, nil
	}
	q := query{index: "gsi3", part: "open#" + e.BusinessID + "#" + e.Service, from: ts(startsAfter), limit: limit,
		keep: func(it item) bool {
			var s nextup.Slot
			return decode(it, &s) == nil && s.Kind != nextup.KindEvent && fits(s)
		}}
	its, err := t.query(ctx, q)
	if err != nil {
		return nil, err
	}
	out, err := loadAll[nextup.Slot](its)
	return slices.Clip(out), err
}
