package slots

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// Slots are the use cases of slots and their bookings: creating a slot,
// freeing and resizing its seats, hand-backs, the engine's dry run, and
// the bookings staff read, cancel or mark a no-show.
type Slots struct {
	*core.Service
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Slots) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// SlotParams are the inputs of CreateSlot.
type SlotParams struct {
	Kind        nextup.SlotKind // default slot
	Title       string
	Service     string
	Staff       string
	StartsAt    time.Time
	EndsAt      time.Time
	Capacity    int // default 1
	Seating     nextup.Seating
	MinParty    int  // default 1
	BookedSeats *int // default: capacity (the slot is booked; a release frees it)
	Event       *nextup.EventSettings
}

// CreateSlot adds a slot. A slot created with free seats is a new opening
// and the engine runs at once.
func (s *Slots) CreateSlot(ctx context.Context, businessID string, p SlotParams) (nextup.Slot, []nextup.Move, error) {
	if p.Kind == "" {
		p.Kind = nextup.KindSlot
	}
	if p.Capacity == 0 {
		p.Capacity = 1
	}
	if p.Seating == "" {
		p.Seating = nextup.SeatingUnit
		if p.Kind == nextup.KindEvent {
			p.Seating = nextup.SeatingShared
		}
	}
	if p.MinParty == 0 {
		p.MinParty = 1
	}
	booked := p.Capacity
	if p.BookedSeats != nil {
		booked = *p.BookedSeats
	}
	p.Service = strings.TrimSpace(p.Service)
	var fields []nextup.FieldError
	if p.Kind != nextup.KindSlot && p.Kind != nextup.KindEvent {
		fields = append(fields, nextup.FieldError{Field: "kind", Message: "must be slot or event"})
	}
	if p.Service == "" && p.Kind == nextup.KindSlot {
		fields = append(fields, nextup.FieldError{Field: "service", Message: "is required"})
	}
	for _, c := range []struct{ field, v string }{{"service", p.Service}, {"staff", p.Staff}, {"title", p.Title}} {
		if fe := nextup.CheckName(c.field, c.v, 0); fe != nil {
			fields = append(fields, *fe)
		}
	}
	fields = append(fields, nextup.CheckSlotTimes(p.StartsAt, p.EndsAt, s.Clock.Now())...)
	if p.Capacity < 1 || p.Capacity > 100000 {
		fields = append(fields, nextup.FieldError{Field: "capacity", Message: "must be between 1 and 100000"})
	}
	if p.Seating != nextup.SeatingUnit && p.Seating != nextup.SeatingShared {
		fields = append(fields, nextup.FieldError{Field: "seating", Message: "must be unit or shared"})
	}
	if p.MinParty < 1 || p.MinParty > p.Capacity {
		fields = append(fields, nextup.FieldError{Field: "min_party", Message: "must be between 1 and capacity"})
	}
	if booked < 0 || booked > p.Capacity || (p.Seating == nextup.SeatingUnit && booked != 0 && booked != p.Capacity) {
		fields = append(fields, nextup.FieldError{Field: "booked_seats", Message: "must be between 0 and capacity (0 or capacity for unit seating)"})
	}
	if len(fields) > 0 {
		return nextup.Slot{}, nil, core.Invalid(fields...)
	}
	var out nextup.Slot
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		sl := nextup.Slot{
			ID: w.s.Random.ID("slot"), BusinessID: businessID, Kind: p.Kind, Title: p.Title,
			Service: p.Service, Staff: strings.TrimSpace(p.Staff), StartsAt: p.StartsAt.UTC(), EndsAt: p.EndsAt.UTC(),
			Capacity: p.Capacity, Seating: p.Seating, MinParty: p.MinParty, BookedSeats: booked, CreatedAt: w.Now,
			Event: p.Event,
		}
		if sl.Kind == nextup.KindEvent && sl.Event == nil {
			sl.Event = DefaultEvent()
		}
		if err := w.Tx.SlotCreate(ctx, sl); err != nil {
			return fmt.Errorf("create slot: %w", err)
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
			To: "created", Detail: core.SlotFacts(sl)}); err != nil {
			return err
		}
		if sl.FreeSeats() > 0 {
			if err := w.DecideSlot(ctx, sl.ID); err != nil {
				return err
			}
		}
		moves = w.Moves
		out, err = w.Tx.SlotGet(ctx, sl.ID)
		return err
	})
	return out, moves, err
}

// Release reasons.
const (
	ReasonCancellation = "cancellation"
	ReasonNoShow       = "no_show"
	ReasonOpening      = "opening"
)

// Release frees booked seats of a slot (a cancellation, a no-show, a new
// opening) and runs the engine. seats 0 means the default: one seat of a
// shared slot, the whole of a unit slot.
func (s *Slots) Release(ctx context.Context, businessID, slotID string, seats int, reason string) (nextup.Slot, []nextup.Move, error) {
	switch reason {
	case ReasonCancellation, ReasonNoShow, ReasonOpening:
	case "":
		reason = ReasonCancellation
	default:
		return nextup.Slot{}, nil, core.Invalid(nextup.FieldError{Field: "reason", Message: "must be cancellation, no_show or opening"})
	}
	if seats < 0 {
		return nextup.Slot{}, nil, core.Invalid(nextup.FieldError{Field: "seats", Message: "must be positive"})
	}
	// On a bounded store (nextup.Bounded) a release that ends more
	// bookings than one transaction takes goes in parts, each a release
	// of its own: it frees what its transaction has room for, offers
	// those seats, and commits (Checkpoint) before the next part. A
	// request with an Idempotency-Key that stops halfway resumes with the
	// seats it had freed (a note kept with its record).
	note, asOfNote := releasedNote(slotID), releaseAsOfNote(slotID)
	done, _ := strconv.Atoi(s.Stashed(ctx, note))
	// The bookings a release ends are those that stood when it began: a
	// booking made between its parts (a claim of a seat an earlier part
	// offered) is not ended by a later one.
	asOf, _ := time.Parse(time.RFC3339Nano, s.Stashed(ctx, asOfNote))
	var out nextup.Slot
	var moves []nextup.Move
	for total := -1; total < 0 || done < total; {
		if total >= 0 {
			if err := s.Checkpoint(ctx); err != nil {
				return out, moves, err
			}
		}
		var n, freed int
		var partMoves []nextup.Move
		err := s.tx(ctx, func(w *work) error {
			w.Actor = nextup.ActorStaff
			sl, err := w.SlotOf(ctx, businessID, slotID)
			if err != nil {
				return err
			}
			n = seats
			if n == 0 {
				n = 1
				if sl.Seating == nextup.SeatingUnit {
					n = sl.Capacity
				}
			}
			if sl.Seating == nextup.SeatingUnit && n != sl.Capacity {
				return core.Invalid(nextup.FieldError{Field: "seats", Message: "a unit slot is released whole"})
			}
			if n-done > sl.BookedSeats {
				return nextup.Errorf(nextup.ErrConflict, nextup.CodeNotEnoughBooked, "slot has %d booked seats, cannot release %d", sl.BookedSeats, n-done)
			}
			if asOf.IsZero() && s.TxWrites > 0 {
				asOf = w.Now // only a bounded store's release goes in parts
			}
			if freed, err = w.freeSeats(ctx, sl, n-done, reason, asOf); err != nil {
				return err
			}
			if err := w.DecideSlot(ctx, sl.ID); err != nil {
				return err
			}
			partMoves = w.Moves
			out, err = w.Tx.SlotGet(ctx, sl.ID)
			return err
		})
		if err != nil {
			return out, moves, err
		}
		if freed == 0 && done < n {
			// Nothing left that stood when the release began: stop
			// rather than go round.
			break
		}
		total, done = n, done+freed
		moves = append(moves, partMoves...)
		s.StashNote(ctx, note, strconv.Itoa(done))
		if !asOf.IsZero() {
			s.StashNote(ctx, asOfNote, asOf.Format(time.RFC3339Nano))
		}
	}
	return out, moves, nil
}

// releasedNote names the seats a release of slotID has freed so far, in
// the notes of its request.
func releasedNote(slotID string) string { return "released:" + slotID }

// releaseAsOfNote names when a release of slotID began, in the notes of
// its request.
func releaseAsOfNote(slotID string) string { return "released-as-of:" + slotID }

// freeSeats releases n booked seats of a slot and returns how many it
// freed. Seats booked outside nextup go first; then bookings made through
// nextup, newest first, are ended, so the booking rows always account for
// no more seats than are booked (a booking's seats are freed whole). On a
// bounded store it ends only the bookings its transaction has room for,
// and frees fewer seats (at least one booking's): the caller frees the
// rest in another. It also ends an open hand-back: fresh capacity goes
// through the engine again.
func (w *work) freeSeats(ctx context.Context, sl nextup.Slot, n int, reason string, asOf time.Time) (int, error) {
	bi, err := w.Business(ctx, sl.BusinessID)
	if err != nil {
		return 0, err
	}
	bookings, err := w.Tx.BookingListBySlot(ctx, sl.ID)
	if err != nil {
		return 0, err
	}
	inNextup := 0
	for _, b := range bookings {
		if b.State == nextup.BookingBooked {
			inNextup += b.Seats
		}
	}
	toEnd := n - (sl.BookedSeats - inNextup) // seats that must come from nextup bookings
	bookingTo := nextup.BookingCancelled
	if reason == ReasonNoShow {
		bookingTo = nextup.BookingNoShow
	}
	outside, ended := n-max(toEnd, 0), 0 // seats booked outside nextup freed; seats of bookings ended
	for i := len(bookings) - 1; i >= 0 && toEnd > 0; i-- {
		b := bookings[i]
		if b.State != nextup.BookingBooked || (!asOf.IsZero() && b.CreatedAt.After(asOf)) {
			continue
		}
		if ended > 0 && w.Room(bookingEndWrites) == 0 {
			// A bounded store (nextup.Bounded): this transaction has
			// no room to end another booking. Free the seats of those
			// ended; the caller frees the rest in another.
			n = outside + ended
			break
		}
		if _, err := w.setBookingEnded(ctx, b.ID, bookingTo); err != nil {
			return 0, err
		}
		if err := w.Tx.TimerCancel(ctx, core.BookingSyncKey(b.ID)); err != nil {
			return 0, fmt.Errorf("cancel timer %s: %w", core.BookingSyncKey(b.ID), err)
		}
		// by_release: the seats are counted once, on the release's own row
		// below (insight).
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: b.ID, SlotID: sl.ID,
			From: string(nextup.BookingBooked), To: string(bookingTo), Reason: reason,
			Detail: map[string]any{"seats": b.Seats, "by_release": true}}); err != nil {
			return 0, err
		}
		if err := w.registrationEnded(ctx, bi, sl, b, reason); err != nil {
			return 0, err
		}
		ended += b.Seats
		toEnd -= b.Seats
		if toEnd < 0 {
			n -= toEnd // the whole booking is freed, not part of it
		}
	}
	if _, err := w.Tx.SlotSeats(ctx, sl.ID, nextup.SeatDelta{Booked: -n}); err != nil {
		if errors.Is(err, nextup.ErrConflict) {
			return 0, core.ErrRedecide
		}
		return 0, fmt.Errorf("release %d seats of slot %s: %w", n, sl.ID, err)
	}
	if err := w.reopen(ctx, bi, sl); err != nil {
		return 0, err
	}
	return n, w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
		From: fmt.Sprintf("booked=%d", sl.BookedSeats), To: fmt.Sprintf("booked=%d", sl.BookedSeats-n), Reason: reason,
		Detail: map[string]any{"seats": n}})
}

// bookingEndWrites is the most that ending one booking in a release
// writes: the booking, its sync timer and key, an audit row, and for an
// event's registration the entry and a message.
const bookingEndWrites = 7

// reopen takes a handed-back slot back from staff when fresh capacity
// frees up, so the engine tries the list again: its open hand-backs are
// resolved and the slot is open, both audited.
func (w *work) reopen(ctx context.Context, bi *core.Biz, sl nextup.Slot) error {
	if !sl.HandedBack {
		return nil
	}
	open, err := w.Tx.HandBackList(ctx, sl.BusinessID, nextup.HandBackOpen)
	if err != nil {
		return err
	}
	if err := w.Tx.HandBackResolve(ctx, "", sl.ID, w.Now); err != nil {
		return fmt.Errorf("resolve hand-backs of slot %s: %w", sl.ID, err)
	}
	for _, h := range open {
		if h.SlotID != sl.ID {
			continue
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectHandBack, SubjectID: h.ID, SlotID: sl.ID,
			From: string(nextup.HandBackOpen), To: string(nextup.HandBackResolved), Reason: "seats_freed"}); err != nil {
			return err
		}
	}
	if err := w.Tx.SlotSetHandedBack(ctx, sl.ID, false); err != nil {
		return fmt.Errorf("reopen slot %s: %w", sl.ID, err)
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
		From: string(nextup.SlotHandedBack), To: string(nextup.SlotOpen), Reason: "seats_freed"})
}

// Resize changes a slot's capacity. Growing it promotes in batch; shrinking
// below booked + held seats is refused.
func (s *Slots) Resize(ctx context.Context, businessID, slotID string, capacity int) (nextup.Slot, []nextup.Move, error) {
	if capacity < 1 || capacity > 100000 {
		return nextup.Slot{}, nil, core.Invalid(nextup.FieldError{Field: "capacity", Message: "must be between 1 and 100000"})
	}
	var out nextup.Slot
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		sl, err := w.SlotOf(ctx, businessID, slotID)
		if err != nil {
			return err
		}
		if err := w.resize(ctx, sl, capacity); err != nil {
			return err
		}
		moves = w.Moves
		out, err = w.Tx.SlotGet(ctx, sl.ID)
		return err
	})
	return out, moves, err
}

// resize is Resize inside the transaction, on a validated capacity.
func (w *work) resize(ctx context.Context, sl nextup.Slot, capacity int) error {
	if sl.Seating == nextup.SeatingUnit && sl.BookedSeats+sl.HeldSeats > 0 && capacity != sl.Capacity {
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeCapacityBelowTaken, "a unit slot that is booked or held cannot be resized")
	}
	if capacity < sl.MinParty {
		return core.Invalid(nextup.FieldError{Field: "capacity", Message: "must be at least the slot's min_party"})
	}
	resized, err := w.Tx.SlotResize(ctx, sl.ID, capacity)
	if err != nil {
		if errors.Is(err, nextup.ErrConflict) {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeCapacityBelowTaken,
				"capacity %d is below the %d seats booked or held", capacity, sl.BookedSeats+sl.HeldSeats)
		}
		return fmt.Errorf("resize slot %s: %w", sl.ID, err)
	}
	bi, err := w.Business(ctx, sl.BusinessID)
	if err != nil {
		return err
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
		From: fmt.Sprintf("capacity=%d", sl.Capacity), To: fmt.Sprintf("capacity=%d", capacity), Reason: "resize"}); err != nil {
		return err
	}
	if capacity > sl.Capacity || sl.Seating == nextup.SeatingUnit { // a unit slot of another size fits other parties
		if err := w.reopen(ctx, bi, sl); err != nil {
			return err
		}
		if resized.FreeSeats() > 0 {
			return w.DecideSlot(ctx, sl.ID)
		}
	}
	return nil
}

// SlotView is a slot with its offers, as GET /v1/slots/{sid} shows it.
type SlotView struct {
	Slot   nextup.Slot
	Offers []nextup.Offer
}

// GetSlot returns a slot of a business with every offer made for it.
func (s *Slots) GetSlot(ctx context.Context, businessID, slotID string) (SlotView, error) {
	var v SlotView
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		v.Slot, err = tx.SlotGet(ctx, slotID)
		if err != nil || (businessID != "" && v.Slot.BusinessID != businessID) {
			return core.NotFound("slot", slotID, err)
		}
		v.Offers, err = tx.OfferListBySlot(ctx, slotID)
		return err
	})
	return v, err
}

// SlotAudit returns the whole story of a slot, in order of occurrence.
func (s *Slots) SlotAudit(ctx context.Context, businessID, slotID string) ([]nextup.AuditEvent, error) {
	var evs []nextup.AuditEvent
	err := s.Read(ctx, func(tx nextup.Tx) error {
		sl, err := tx.SlotGet(ctx, slotID)
		if err != nil || (businessID != "" && sl.BusinessID != businessID) {
			return core.NotFound("slot", slotID, err)
		}
		evs, err = tx.AuditList(ctx, nextup.AuditFilter{BusinessID: sl.BusinessID, SlotID: slotID})
		return err
	})
	return evs, err
}

// ResolveHandBack marks a hand-back dealt with by staff. The slot stays with
// staff until seats are freed again.
func (s *Slots) ResolveHandBack(ctx context.Context, businessID, id string) (nextup.HandBack, error) {
	var out nextup.HandBack
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		h, err := w.Tx.HandBackGet(ctx, id)
		if err != nil || (businessID != "" && h.BusinessID != businessID) {
			return core.NotFound("hand-back", id, err)
		}
		if h.State == nextup.HandBackResolved {
			out = h
			return nil
		}
		if err := w.Tx.HandBackResolve(ctx, id, "", w.Now); err != nil {
			return err
		}
		bi, err := w.Business(ctx, h.BusinessID)
		if err != nil {
			return err
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectHandBack, SubjectID: h.ID, SlotID: h.SlotID,
			From: string(nextup.HandBackOpen), To: string(nextup.HandBackResolved)}); err != nil {
			return err
		}
		out, err = w.Tx.HandBackGet(ctx, id)
		return err
	})
	return out, err
}

// ListSlots returns a business's slots (soonest first) with their offers.
func (s *Slots) ListSlots(ctx context.Context, f nextup.SlotFilter) ([]SlotView, error) {
	var out []SlotView
	err := s.Read(ctx, func(tx nextup.Tx) error {
		slots, err := tx.SlotList(ctx, f)
		if err != nil {
			return err
		}
		for _, sl := range slots {
			offers, err := tx.OfferListBySlot(ctx, sl.ID)
			if err != nil {
				return err
			}
			out = append(out, SlotView{Slot: sl, Offers: offers})
		}
		return nil
	})
	return out, err
}

// ListHandBacks returns a business's hand-backs in a state ("" means open).
func (s *Slots) ListHandBacks(ctx context.Context, businessID string, state nextup.HandBackState) ([]nextup.HandBack, error) {
	if state == "" {
		state = nextup.HandBackOpen
	}
	var out []nextup.HandBack
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.HandBackList(ctx, businessID, state)
		return err
	})
	return out, err
}

// Preview returns what the engine would decide for a slot right now,
// without changing anything: a dry run for staff, and the "decide" that
// the benchmarks measure on its own.
func (s *Slots) Preview(ctx context.Context, businessID, slotID string) (engine.Decision, error) {
	var d engine.Decision
	err := s.Read(ctx, func(tx nextup.Tx) error {
		w := wrap(s.WorkIn(tx))
		slot, err := w.SlotOf(ctx, businessID, slotID)
		if err != nil {
			return err
		}
		bi, err := w.Business(ctx, slot.BusinessID)
		if err != nil {
			return err
		}
		history, err := tx.OfferListBySlot(ctx, slot.ID)
		if err != nil {
			return err
		}
		var readErr error
		d = engine.Decide(engine.Input{Now: w.Now, Rules: bi.Rules, Loc: bi.Loc, Slot: slot, History: history,
			Candidates: w.Candidates(ctx, bi, slot, &readErr)})
		return readErr
	})
	return d, err
}

// DefaultEvent is the settings an event starts from.
func DefaultEvent() *nextup.EventSettings {
	return &nextup.EventSettings{
		ClaimWindow:       nextup.DefaultEventClaimWindow,
		ReminderOffsets:   nextup.DefaultEventReminderOffsets(),
		ReminderMorningOf: nextup.DefaultEventMorningOf,
		Currency:          nextup.DefaultEventCurrency,
	}
}

// ResizeIn is Resize in w, on a validated capacity: an event's update
// resizes it too.
func ResizeIn(ctx context.Context, w *core.Work, sl nextup.Slot, capacity int) error {
	return wrap(w).resize(ctx, sl, capacity)
}
