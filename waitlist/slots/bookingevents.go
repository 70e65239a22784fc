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
	// OccurredAt, when the tool says, is when the event happened in it:
	// an event older than one applied already to its appointment (two
	// delivered out of order) changes nothing.
	OccurredAt time.Time
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
	var out BookingEventResult
	m, rec, known, err := w.appointment(ctx, bi, a)
	if err != nil {
		return out, err
	}
	var sl nextup.Slot
	adopted := false
	if known {
		if sl, err = w.Tx.SlotGet(ctx, m.SlotID); err != nil || sl.BusinessID != bi.ID {
			return out, core.NotFound("slot", m.SlotID, err)
		}
		if !ev.OccurredAt.IsZero() && ev.OccurredAt.Before(m.OccurredAt) {
			out.SlotID, out.Ignored = sl.ID, "a later event about this appointment was applied already"
			return out, nil
		}
	} else if sl, adopted, err = w.chairOf(ctx, bi, a); err != nil {
		return out, err
	}
	out.SlotID = sl.ID
	if !a.EndsAt.After(w.Now) || (sl.ID != "" && !sl.EndsAt.After(w.Now)) {
		out.Ignored = "the appointment has ended"
		if rec.Status == 0 { // nothing to keep of an appointment that is over
			return out, w.Tx.IdempotencyDelete(ctx, rec.Scope, rec.Key)
		}
		return out, nil
	}
	detail := map[string]any{"event_id": ev.ID, "event_type": ev.Type, "appointment_id": a.ID}
	if adopted {
		detail["adopted"] = true // a slot nextup had for the same chair and time
	}
	if sl.ID == "" {
		// First sight, and no slot for this chair: made as the tool had it
		// before this event (an opening is free; any appointment was
		// booked).
		booked := a.Capacity
		if ev.Type == OpeningCreated {
			booked = 0
		}
		sl = nextup.Slot{ID: AppointmentSlotID(bi.ID, a.ID), BusinessID: bi.ID, Kind: nextup.KindSlot, Service: a.Service, Staff: a.Staff,
			StartsAt: a.StartsAt.UTC(), EndsAt: a.EndsAt.UTC(), Capacity: a.Capacity, Seating: a.Seating, MinParty: 1,
			BookedSeats: booked, CreatedAt: w.Now}
		if err := w.Tx.SlotCreate(ctx, sl); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return out, core.ErrRedecide // another first event made it: read it again
			}
			return out, fmt.Errorf("create slot: %w", err)
		}
		out.SlotID = sl.ID
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
		if known || adopted {
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
	m.SlotID = sl.ID
	if ev.OccurredAt.After(m.OccurredAt) {
		m.OccurredAt = ev.OccurredAt
	}
	return out, w.keepAppointment(ctx, rec, m, known)
}

// appointmentMap is what nextup keeps of a booking tool's appointment:
// its slot, and the time of the latest event applied to it (when the tool
// says when its events happened), kept as an idempotency record of the
// business keyed by the appointment id, for as long as the slot lasts and
// a month more.
type appointmentMap struct {
	SlotID     string    `json:"slot_id"`
	OccurredAt time.Time `json:"occurred_at"`
}

func appointmentScope(businessID string) string { return "booking-appointments:" + businessID }

// appointment reads what nextup keeps of appointment a, or says it is
// its first sight (a slot made by an earlier version of this code, named
// after the appointment, counts as known).
func (w *work) appointment(ctx context.Context, bi *core.Biz, a Appointment) (appointmentMap, nextup.IdempotencyRecord, bool, error) {
	rec := nextup.IdempotencyRecord{Scope: appointmentScope(bi.ID), Key: a.ID, CreatedAt: w.Now, ExpiresAt: a.EndsAt.Add(bookingEventsKept)}
	var m appointmentMap
	old, err := w.Tx.IdempotencyStart(ctx, rec)
	switch {
	case errors.Is(err, nextup.ErrConflict):
		if err := json.Unmarshal(old.Body, &m); err != nil || m.SlotID == "" {
			return m, rec, false, fmt.Errorf("appointment %s's record: %v", a.ID, err)
		}
		return m, old, true, nil
	case err != nil:
		return m, rec, false, fmt.Errorf("appointment %s: %w", a.ID, err)
	}
	if _, err := w.Tx.SlotGet(ctx, AppointmentSlotID(bi.ID, a.ID)); err == nil {
		m.SlotID = AppointmentSlotID(bi.ID, a.ID)
		return m, rec, true, nil
	} else if !errors.Is(err, nextup.ErrNotFound) {
		return m, rec, false, err
	}
	return m, rec, false, nil
}

// keepAppointment stores m as appointment rec's record: finishing the
// record IdempotencyStart just made, or replacing the one there was.
func (w *work) keepAppointment(ctx context.Context, rec nextup.IdempotencyRecord, m appointmentMap, existed bool) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if existed && rec.Status != 0 {
		if err := w.Tx.IdempotencyDelete(ctx, rec.Scope, rec.Key); err != nil {
			return err
		}
		rec.Status = 0
		if _, err := w.Tx.IdempotencyStart(ctx, rec); err != nil {
			return fmt.Errorf("appointment record: %w", err)
		}
	}
	rec.Status, rec.Body = 200, body
	return w.Tx.IdempotencyFinish(ctx, rec)
}

// chairOf finds the slot nextup already has for the chair and time of an
// appointment it has never seen (a booking the tool made under a new id
// into a slot it had freed, or a slot staff made by hand), so that one
// chair is one slot: the same service and staff, kind slot, starting at
// the same moment, or — for a named staff member, whose chair is theirs —
// overlapping it. None is the zero slot.
func (w *work) chairOf(ctx context.Context, bi *core.Biz, a Appointment) (nextup.Slot, bool, error) {
	slots, err := w.Tx.SlotList(ctx, nextup.SlotFilter{BusinessID: bi.ID, From: a.StartsAt.Add(-24 * time.Hour), To: a.EndsAt})
	if err != nil {
		return nextup.Slot{}, false, err
	}
	var overlap nextup.Slot
	for _, sl := range slots {
		if sl.Kind != nextup.KindSlot || !strings.EqualFold(sl.Service, a.Service) || !strings.EqualFold(sl.Staff, a.Staff) ||
			!sl.StartsAt.Before(a.EndsAt) || !a.StartsAt.Before(sl.EndsAt) {
			continue
		}
		if sl.StartsAt.Equal(a.StartsAt) {
			s, err := w.Tx.SlotGet(ctx, sl.ID) // locked, as the use cases read a slot they change
			return s, err == nil, err
		}
		if a.Staff != "" && overlap.ID == "" {
			overlap = sl
		}
	}
	if overlap.ID == "" {
		return nextup.Slot{}, false, nil
	}
	s, err := w.Tx.SlotGet(ctx, overlap.ID)
	return s, err == nil, err
}

// bookedElsewhere takes n seats of a known slot (all of a unit slot) as
// booked in the booking tool. When fewer are free, offers nextup has out
// on the slot end first, the newest first and only as many as the seats
// need, their people back in line with their places: the slot is kept
// from the engine meanwhile, within this transaction only, so the seats
// they free are not offered again. An open hand-back of the slot is
// resolved, as staff filled it.
func (w *work) bookedElsewhere(ctx context.Context, bi *core.Biz, sl nextup.Slot, n int) error {
	if sl.Seating == nextup.SeatingUnit {
		n = sl.Capacity
	}
	wasHandedBack := sl.HandedBack
	if need := min(n, sl.Capacity-sl.BookedSeats) - sl.FreeSeats(); need > 0 && sl.HeldSeats > 0 {
		if !wasHandedBack {
			if err := w.Tx.SlotSetHandedBack(ctx, sl.ID, true); err != nil {
				return err
			}
		}
		offers, err := w.Tx.OfferListBySlot(ctx, sl.ID)
		if err != nil {
			return err
		}
		for i := len(offers) - 1; i >= 0 && need > 0; i-- { // newest first
			o := offers[i]
			if !o.State.Live() {
				continue
			}
			if _, err := w.EndOffer(ctx, o, nextup.OfferCancelled, ReasonBookedElsewhere, nextup.EntryWaiting); err != nil {
				return err
			}
			need -= o.Seats
		}
		if !wasHandedBack {
			if err := w.Tx.SlotSetHandedBack(ctx, sl.ID, false); err != nil {
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
