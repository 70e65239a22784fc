package slots

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// GetBooking returns a booking of a business.
func (s *Slots) GetBooking(ctx context.Context, businessID, id string) (nextup.Booking, error) {
	var b nextup.Booking
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		b, err = tx.BookingGet(ctx, id)
		if err != nil || (businessID != "" && b.BusinessID != businessID) {
			return core.NotFound("booking", id, err)
		}
		return nil
	})
	return b, err
}

// CancelBooking cancels a booking made through nextup: its seats are freed
// and the engine runs for the slot.
func (s *Slots) CancelBooking(ctx context.Context, businessID, id, reason string) (nextup.Booking, []nextup.Move, error) {
	return s.endBooking(ctx, businessID, id, nextup.BookingCancelled, reason)
}

// NoShow records that a booked person did not come: the seats are freed and
// the engine runs (usually handing the slot back as too soon).
func (s *Slots) NoShow(ctx context.Context, businessID, id string) (nextup.Booking, []nextup.Move, error) {
	return s.endBooking(ctx, businessID, id, nextup.BookingNoShow, ReasonNoShow)
}

func (s *Slots) endBooking(ctx context.Context, businessID, id string, to nextup.BookingState, reason string) (nextup.Booking, []nextup.Move, error) {
	if reason == "" {
		reason = ReasonCancellation
	}
	if fe := nextup.CheckText("reason", reason, 500); fe != nil {
		return nextup.Booking{}, nil, core.Invalid(*fe)
	}
	var out nextup.Booking
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		b, err := w.Tx.BookingGet(ctx, id)
		if err != nil || (businessID != "" && b.BusinessID != businessID) {
			return core.NotFound("booking", id, err)
		}
		if b.State != nextup.BookingBooked {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeBookingEnded, "booking is already %s", b.State)
		}
		if out, err = w.endBookingIn(ctx, b, to, reason); err != nil {
			return err
		}
		moves = w.Moves
		return nil
	})
	return out, moves, err
}

// endBookingIn ends a booked booking inside the transaction: its seats
// are freed, its reminders and booking-system timer cancelled, and the
// engine runs for the slot.
func (w *work) endBookingIn(ctx context.Context, b nextup.Booking, to nextup.BookingState, reason string) (nextup.Booking, error) {
	bi, err := w.Business(ctx, b.BusinessID)
	if err != nil {
		return b, err
	}
	out, err := w.setBookingEnded(ctx, b.ID, to)
	if err != nil {
		return out, err
	}
	// Ended here: whatever the business's booking system still has to
	// say about it no longer matters.
	if err := w.Tx.TimerCancel(ctx, core.BookingSyncKey(b.ID)); err != nil {
		return out, fmt.Errorf("cancel timer %s: %w", core.BookingSyncKey(b.ID), err)
	}
	freed, err := w.Tx.SlotSeats(ctx, b.SlotID, nextup.SeatDelta{Booked: -b.Seats})
	if err != nil {
		return out, fmt.Errorf("free %d seats of slot %s: %w", b.Seats, b.SlotID, err)
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: b.ID, SlotID: b.SlotID,
		From: string(nextup.BookingBooked), To: string(to), Reason: reason, Detail: map[string]any{"seats": b.Seats}}); err != nil {
		return out, err
	}
	if err := w.registrationEnded(ctx, bi, freed, b, reason); err != nil {
		return out, err
	}
	sl, err := w.Tx.SlotGet(ctx, b.SlotID)
	if err != nil {
		return out, err
	}
	if err := w.reopen(ctx, bi, sl); err != nil {
		return out, err
	}
	return out, w.DecideSlot(ctx, b.SlotID)
}

// registrationEnded takes the registration of an event booking that ended
// (cancelled, a no-show, released by staff) off the event: its entry
// leaves, so the person may register again and is counted once. A plain
// slot's entry stays booked, as its history.
func (w *work) registrationEnded(ctx context.Context, bi *core.Biz, sl nextup.Slot, b nextup.Booking, reason string) error {
	if sl.Kind != nextup.KindEvent || b.EntryID == "" {
		return nil
	}
	if err := w.Tx.EntrySetState(ctx, b.EntryID, []nextup.EntryState{nextup.EntryBooked}, nextup.EntryLeft, w.Now); err != nil {
		if errors.Is(err, nextup.ErrConflict) {
			return nil // not booked (a booking system undid it, or it left already)
		}
		return fmt.Errorf("registration %s to left: %w", b.EntryID, err)
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: b.EntryID, SlotID: sl.ID,
		From: string(nextup.EntryBooked), To: string(nextup.EntryLeft), Reason: reason, Detail: map[string]any{"booking_id": b.ID}})
}

// setBookingEnded moves a booked booking to its end state and cancels its
// pending reminders.
func (w *work) setBookingEnded(ctx context.Context, id string, to nextup.BookingState) (nextup.Booking, error) {
	b, err := w.Tx.BookingSetState(ctx, id, nextup.BookingBooked, to, w.Now)
	if err != nil {
		return b, fmt.Errorf("end booking %s: %w", id, err)
	}
	return b, w.cancelReminders(ctx, id)
}

// BookingCalendar returns a booking with its slot and business for the
// calendar link, which is authorised by the secret token in it alone.
func (s *Slots) BookingCalendar(ctx context.Context, id, token string) (nextup.Booking, nextup.Slot, nextup.Business, error) {
	var (
		b   nextup.Booking
		sl  nextup.Slot
		biz nextup.Business
	)
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		b, err = tx.BookingGet(ctx, id)
		if err != nil || token == "" || subtle.ConstantTimeCompare([]byte(nextup.HashToken(token)), []byte(b.TokenHash)) != 1 {
			return core.NotFound("booking", id, err)
		}
		if sl, err = tx.SlotGet(ctx, b.SlotID); err != nil {
			return err
		}
		biz, err = tx.BusinessGet(ctx, b.BusinessID)
		return err
	})
	return b, sl, biz, err
}

// EndBookingIn ends a booked booking in w (see endBookingIn): an event's
// cancellation and no-show end their bookings too.
func EndBookingIn(ctx context.Context, w *core.Work, bk nextup.Booking, to nextup.BookingState, reason string) (nextup.Booking, error) {
	return wrap(w).endBookingIn(ctx, bk, to, reason)
}

// SetBookingEnded moves a booked booking to its end state and cancels its
// reminders, in w (see setBookingEnded): a claim the business's booking
// system did not take ends its booking so.
func SetBookingEnded(ctx context.Context, w *core.Work, id string, to nextup.BookingState) (nextup.Booking, error) {
	return wrap(w).setBookingEnded(ctx, id, to)
}
