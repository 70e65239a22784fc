package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// maxBookingEventBody bounds one booking-tool event (an appointment is a
// few hundred bytes).
const maxBookingEventBody = 64 << 10

// newBookingEventsSecret is POST /v1/businesses/{bid}/booking-events:secret
// → 201 {"secret"}: the secret the booking tool signs its events with,
// shown this once; a new one replaces the old.
func (s *Server) newBookingEventsSecret(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	secret, err := s.Svc.NewBookingEventsSecret(r.Context(), b.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"secret": secret,
		"url": s.Svc.BaseURL + "/v1/businesses/" + b.ID + "/booking-events"})
}

// bookingEventJSON is the booking tool's event on the wire.
type bookingEventJSON struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	OccurredAt  time.Time `json:"occurred_at"`
	Appointment struct {
		ID       string         `json:"id"`
		Service  string         `json:"service"`
		Staff    string         `json:"staff"`
		StartsAt time.Time      `json:"starts_at"`
		EndsAt   time.Time      `json:"ends_at"`
		Capacity int            `json:"capacity"`
		Seating  nextup.Seating `json:"seating"`
		Customer *struct {
			Email string `json:"email"`
			Phone string `json:"phone"`
		} `json:"customer"`
	} `json:"appointment"`
}

// bookingEvent is POST /v1/businesses/{bid}/booking-events: the business's
// booking tool says an appointment was cancelled, was a no-show, was
// booked, or that an opening appeared. It is signed, not keyed: the
// Nextup-Signature header over the raw body under the business's
// booking-events secret, its timestamp within five minutes. Anything
// unsigned, wrongly signed, stale, for a business without a secret or
// unknown is 401 bad_signature and changes nothing. Then 200
// {"slot_id","moves"}; a repeated event id answers the first time's.
// Fields the tool adds beyond these are ignored, so that its payloads
// may grow.
func (s *Server) bookingEvent(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r, maxBookingEventBody)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	refuse := func(why string) {
		s.writeError(w, r, nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeBadSignature, "%s", why))
	}
	b, err := s.Svc.GetBusiness(r.Context(), r.PathValue("bid"))
	switch {
	case errors.Is(err, nextup.ErrNotFound):
		refuse("no business has this id, so nothing can check the signature")
		return
	case err != nil:
		s.writeError(w, r, err)
		return
	case b.Profile.BookingEvents == nil || b.Profile.BookingEvents.Secret == "":
		refuse("the business has no booking-events secret yet: make one with POST /v1/businesses/{bid}/booking-events:secret")
		return
	}
	if err := nextup.VerifySignature([]byte(b.Profile.BookingEvents.Secret), r.Header.Get("Nextup-Signature"), body, s.now()); err != nil {
		refuse(err.Error())
		return
	}
	var in bookingEventJSON
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		s.writeError(w, r, invalidf("body", "the event is not a JSON object of the documented shape: "+err.Error()))
		return
	}
	a := in.Appointment
	ev := waitlist.BookingEvent{ID: in.ID, Type: in.Type, OccurredAt: in.OccurredAt, Appointment: waitlist.Appointment{ID: a.ID, Service: a.Service, Staff: a.Staff,
		StartsAt: a.StartsAt, EndsAt: a.EndsAt, Capacity: a.Capacity, Seating: a.Seating}}
	if a.Customer != nil {
		ev.Appointment.Email, ev.Appointment.Phone = a.Customer.Email, a.Customer.Phone
	}
	sum := sha256.Sum256(body)
	start := time.Now()
	res, err := s.Svc.BookingEvent(r.Context(), b.ID, ev, hex.EncodeToString(sum[:]))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !res.Replayed {
		s.Metrics.promoted(res.Moves, start)
	}
	out := map[string]any{"slot_id": res.SlotID, "moves": res.Moves}
	if res.Ignored != "" {
		out["ignored"] = res.Ignored
	}
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusOK, out)
}
