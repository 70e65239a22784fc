package slots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// The booking tool's events: a business whose appointments live in a
// booking tool has it tell nextup when one is cancelled, is a no-show, is
// booked, or when a new opening appears, so staff need not keep the two
// in step by hand. The web layer checks the event's signature; these use
// cases apply it.
//
// The tool's appointment id maps to one nextup slot by name: the slot's id
// is derived from the business and the appointment id
// (nextup.ExternalID), so the first event about an appointment creates its
// slot and every later one finds it, with no table of its own, and two
// first events racing meet on the slot's primary key. The tool's event id
// is kept as an idempotency record of the business: a repeated event
// answers what the first did and changes nothing.

// Booking event types.
const (
	AppointmentCancelled = "appointment.cancelled"
	AppointmentNoShow    = "appointment.no_show"
	AppointmentCreated   = "appointment.created"
	OpeningCreated       = "opening.created"
)

// bookingEventsKept is how long an event id is remembered: far longer
// than any tool retries a delivery.
const bookingEventsKept = 30 * 24 * time.Hour

// ReasonBookedElsewhere is the audit reason of an offer ended because the
// booking tool booked its slot.
const ReasonBookedElsewhere = "booked_elsewhere"

// BookingEvent is one event of a business's booking tool.
type BookingEvent struct {
	ID          string // the tool's event id: the idempotency key
	Type        string
	Appointment Appointment
}

// Appointment is the booking tool's appointment (or opening) an event is
// about.
type Appointment struct {
	ID       string // the tool's own id
	Service  string
	Staff    string
	StartsAt time.Time
	EndsAt   time.Time
	Capacity int            // default 1
	Seating  nextup.Seating // default unit
	// Email and Phone are the customer of a booked appointment, when the
	// tool says: with the dedupe rule on, their waitlist entries the
	// booking makes pointless are withdrawn.
	Email, Phone string
}

// BookingEventResult is what an event did: the slot it maps to, the
// engine's moves, and Replayed when it is the first answer to an event
// seen before. Ignored says, in words, why an event changed nothing (an
// appointment that has ended).
type BookingEventResult struct {
	SlotID   string        `json:"slot_id"`
	Moves    []nextup.Move `json:"moves"`
	Ignored  string        `json:"ignored,omitempty"`
	Replayed bool          `json:"-"`
}

// BookingEventScope is the idempotency scope of a business's booking
// events.
func BookingEventScope(businessID string) string { return "booking-events:" + businessID }

// AppointmentSlotID is the id of the slot the booking tool's appointment
// id maps to in a business.
func AppointmentSlotID(businessID, appointmentID string) string {
	return nextup.ExternalID("slot", businessID, "appointment:"+appointmentID)
}

// Validate says what is wrong with an event, as field errors.
func (ev BookingEvent) Validate() []nextup.FieldError {
	var fs []nextup.FieldError
	bad := func(field, msg string) { fs = append(fs, nextup.FieldError{Field: field, Message: msg}) }
	if ev.ID == "" || len(ev.ID) > 200 {
		bad("id", "is required (the booking tool's event id), at most 200 characters")
	}
	switch ev.Type {
	case AppointmentCancelled, AppointmentNoShow, AppointmentCreated, OpeningCreated:
	default:
		bad("type", "must be appointment.cancelled, appointment.no_show, appointment.created or opening.created")
	}
	a := ev.Appointment
	if a.ID == "" || len(a.ID) > 200 {
		bad("appointment.id", "is required (the booking tool's appointment id), at most 200 characters")
	}
	if strings.TrimSpace(a.Service) == "" {
		bad("appointment.service", "is required")
	}
	if a.StartsAt.IsZero() {
		bad("appointment.starts_at", "is required")
	}
	if !a.EndsAt.After(a.StartsAt) {
		bad("appointment.ends_at", "must be after starts_at")
	}
	if a.Capacity < 0 || a.Capacity > 100000 {
		bad("appointment.capacity", "must be between 1 and 100000")
	}
	if a.Seating != "" && a.Seating != nextup.SeatingUnit && a.Seating != nextup.SeatingShared {
		bad("appointment.seating", "must be unit or shared")
	}
	return fs
}

// BookingEvent applies one event of the business's booking tool in one
// transaction, with the record of its id: a cancellation or no-show frees
// the appointment's seats and runs the engine; an opening is a slot with
// free seats; a booking takes the seats (ending any offer nextup had out
// on them: the tool is the truth) and, with the dedupe rule on and the
// customer named, withdraws the entries the booking makes pointless. A
// slot is created on the first event about its appointment. fingerprint
// (a hash of the raw event) is kept with the record.
func (s *Slots) BookingEvent(ctx context.Context, businessID string, ev BookingEvent, fingerprint string) (BookingEventResult, error) {
	if fs := ev.Validate(); len(fs) > 0 {
		return BookingEventResult{}, core.Invalid(fs...)
	}
	a := &ev.Appointment
	a.Capacity = max(a.Capacity, 1)
	if a.Seating == "" {
		a.Seating = nextup.SeatingUnit
	}
	a.Service, a.Staff = strings.TrimSpace(a.Service), strings.TrimSpace(a.Staff)
	var out BookingEventResult
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff // the business's own booking tool
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		rec := nextup.IdempotencyRecord{Scope: BookingEventScope(businessID), Key: ev.ID, Fingerprint: fingerprint,
			CreatedAt: w.Now, ExpiresAt: w.Now.Add(bookingEventsKept)}
		first, err := w.Tx.IdempotencyStart(ctx, rec)
		if errors.Is(err, nextup.ErrConflict) {
			if first.Status == 0 {
				return nextup.Errorf(nextup.ErrConflict, nextup.CodeRetryLater, "event %s is being handled; send it again", ev.ID)
			}
			out = BookingEventResult{}
			if err := json.Unmarshal(first.Body, &out); err != nil {
				return fmt.Errorf("first answer to event %s: %w", ev.ID, err)
			}
			out.Replayed = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("record event %s: %w", ev.ID, err)
		}
		if out, err = w.bookingEvent(ctx, bi, ev); err != nil {
			return err
		}
		if out.Moves == nil {
			out.Moves = []nextup.Move{}
		}
		rec.Status = 200
		if rec.Body, err = json.Marshal(out); err != nil {
			return err
		}
		return w.Tx.IdempotencyFinish(ctx, rec)
	})
	return out, err
}

func (w *work) bookingEvent(ctx context.Context, bi *core.Biz, ev BookingEvent) (BookingEventResult, error) {
	a := ev.Appointment
	out := BookingEventResult{SlotID: AppointmentSlotID(bi.ID, a.ID)}
	sl, err := w.Tx.SlotGet(ctx, out.SlotID)
	known := err == nil
	switch {
	case errors.Is(err, nextup.ErrNotFound):
	case err != nil:
		return out, err
	case sl.BusinessID != bi.ID:
		return out, core.NotFound("slot", out.SlotID, nil)
	}
	if !a.EndsAt.After(w.Now) || (known && !sl.EndsAt.After(w.Now)) {
		out.Ignored = "the appointment has ended"
		return out, nil
	}
	detail := map[string]any{"event_id": ev.ID, "event_type": ev.Type, "appointment_id": a.ID}
	if !known {
		// First sight: the slot as the tool had it before this event (an
		// opening is free; any appointment was booked).
		booked := a.Capacity
		if ev.Type == OpeningCreated {
			booked = 0
		}
		sl = nextup.Slot{ID: out.SlotID, BusinessID: bi.ID, Kind: nextup.KindSlot, Service: a.Service, Staff: a.Staff,
			StartsAt: a.StartsAt.UTC(), EndsAt: a.EndsAt.UTC(), Capacity: a.Capacity, Seating: a.Seating, MinParty: 1,
			BookedSeats: booked, CreatedAt: w.Now}
		if err := w.Tx.SlotCreate(ctx, sl); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return out, core.ErrRedecide // another first event made it: read it again
			}
			return out, fmt.Errorf("create slot: %w", err)
		}
		facts := core.SlotFacts(sl)
		facts["appointment_id"] = a.ID
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
			To: "created", Reason: "booking_tool", Detail: facts}); err != nil {
			return out, err
		}
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
		To: "booking_event", Reason: ev.Type, Detail: detail}); err != nil {
		return out, err
	}
	switch ev.Type {
	case AppointmentCancelled, AppointmentNoShow, OpeningCreated:
		reason := map[string]string{AppointmentCancelled: ReasonCancellation, AppointmentNoShow: ReasonNoShow, OpeningCreated: ReasonOpening}[ev.Type]
		n := min(a.Capacity, sl.BookedSeats)
		if sl.Seating == nextup.SeatingUnit {
			n = sl.BookedSeats // a unit slot is freed whole, or is free already
		}
		if n > 0 {
			if _, err := w.freeSeats(ctx, sl, n, reason, time.Time{}); err != nil {
				return out, err
			}
		}
	case AppointmentCreated:
		if known {
			if err := w.bookedElsewhere(ctx, bi, sl, a.Capacity); err != nil {
				return out, err
			}
		}
		if a.Email != "" || a.Phone != "" {
			person := nextup.Entry{BusinessID: bi.ID, Email: a.Email, Phone: a.Phone}
			if err := w.Dedupe(ctx, bi, person, sl); err != nil {
				return out, err
			}
		}
	}
	if err := w.DecideSlot(ctx, sl.ID); err != nil {
		return out, err
	}
	out.Moves = w.Moves
	return out, nil
}

// bookedElsewhere takes n seats of a known slot (all of a unit slot) as
// booked in the booking tool. Offers nextup has out on them end first,
// their people back in line with their places: the slot is kept from the
// engine meanwhile (handed back), so the seats they free are not offered
// again, and an open hand-back of the slot is resolved, as staff filled
// it.
func (w *work) bookedElsewhere(ctx context.Context, bi *core.Biz, sl nextup.Slot, n int) error {
	if sl.Seating == nextup.SeatingUnit {
		n = sl.Capacity
	}
	if sl.FreeSeats() < n && sl.HeldSeats > 0 {
		if err := w.Tx.SlotSetHandedBack(ctx, sl.ID, true); err != nil {
			return err
		}
		offers, err := w.Tx.OfferListBySlot(ctx, sl.ID)
		if err != nil {
			return err
		}
		for _, o := range offers {
			if !o.State.Live() {
				continue
			}
			if _, err := w.EndOffer(ctx, o, nextup.OfferCancelled, ReasonBookedElsewhere, nextup.EntryWaiting); err != nil {
				return err
			}
		}
		if sl, err = w.Tx.SlotGet(ctx, sl.ID); err != nil {
			return err
		}
	}
	take := min(n, sl.FreeSeats())
	if take > 0 {
		if _, err := w.Tx.SlotSeats(ctx, sl.ID, nextup.SeatDelta{Booked: take}); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return core.ErrRedecide
			}
			return fmt.Errorf("book %d seats of slot %s: %w", take, sl.ID, err)
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
			From: fmt.Sprintf("booked=%d", sl.BookedSeats), To: fmt.Sprintf("booked=%d", sl.BookedSeats+take), Reason: ReasonBookedElsewhere,
			Detail: map[string]any{"seats": take}}); err != nil {
			return err
		}
	}
	return w.reopen(ctx, bi, sl)
}
