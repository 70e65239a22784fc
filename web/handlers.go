package web

import (
	"io"
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

func (s *Server) now() time.Time { return s.Svc.Clock.Now() }

func (s *Server) createBusiness(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name     string          `json:"name"`
		Timezone string          `json:"timezone"`
		Rules    *rulesPatchJSON `json:"rules"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	p := waitlist.CreateBusinessParams{Name: in.Name, Timezone: in.Timezone}
	if in.Rules != nil {
		rules := nextup.DefaultRules()
		if err := rules.UnmarshalJSON(in.Rules.raw); err != nil {
			s.writeError(w, r, invalidf("rules", err.Error()))
			return
		}
		p.Rules = &rules
	}
	b, key, err := s.Svc.CreateBusiness(r.Context(), p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, businessJSON{ID: b.ID, Name: b.Name, Timezone: b.Timezone, Rules: b.Rules, APIKey: key})
}

// rulesPatchJSON keeps a rules object raw so nextup.Rules can decode it
// onto the defaults (or the current rules) with its own strictness.
type rulesPatchJSON struct{ raw []byte }

func (p *rulesPatchJSON) UnmarshalJSON(b []byte) error {
	p.raw = append([]byte(nil), b...)
	return nil
}

func (s *Server) getBusiness(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	p := b.Profile
	if p.BookingEvents != nil { // the booking tool's secret is shown once, when made
		p.BookingEvents = &nextup.BookingEventsConfig{Since: p.BookingEvents.Since.In(bizLoc(b))}
	}
	writeJSON(w, http.StatusOK, businessJSON{ID: b.ID, Name: b.Name, Timezone: b.Timezone, Rules: b.Rules, Profile: p})
}

// patchBusiness is PATCH /v1/businesses/{bid}: the profile and catalogue.
func (s *Server) patchBusiness(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Slug            *string                            `json:"slug"`
		OwnerEmail      *string                            `json:"owner_email"`
		Country         *string                            `json:"country"`
		InboundSenders  *[]string                          `json:"inbound_senders"`
		Services        *[]nextup.Service                  `json:"services"`
		Staff           *[]string                          `json:"staff"`
		WebhookURL      *string                            `json:"webhook_url"`
		BookingURL      *string                            `json:"booking_url"`
		Templates       *map[string]nextup.MessageTemplate `json:"templates"`
		WaitEstimate    *bool                              `json:"wait_estimate"`
		RetentionMonths *int                               `json:"retention_months"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.Svc.UpdateProfile(r.Context(), b.ID, waitlist.ProfilePatch{Slug: in.Slug, OwnerEmail: in.OwnerEmail,
		Country: in.Country, InboundSenders: in.InboundSenders, Services: in.Services, Staff: in.Staff, WebhookURL: in.WebhookURL,
		Templates: in.Templates, BookingURL: in.BookingURL, WaitEstimate: in.WaitEstimate,
		RetentionMonths: in.RetentionMonths})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.getBusiness(w, r, out)
}

func (s *Server) patchRules(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	raw, err := readBody(r, s.maxBody())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rules, err := s.Svc.UpdateRules(r.Context(), b.ID, raw)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rules)
}

func (s *Server) createSlot(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Service     string `json:"service"`
		Staff       string `json:"staff"`
		StartsAt    string `json:"starts_at"`
		EndsAt      string `json:"ends_at"`
		Capacity    *int   `json:"capacity"`
		Seating     string `json:"seating"`
		MinParty    int    `json:"min_party"`
		BookedSeats *int   `json:"booked_seats"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Omitted is the default of one seat; zero is not a size (the use
	// case reads 0 as "omitted", so it is refused here).
	if in.Capacity != nil && *in.Capacity < 1 {
		s.writeError(w, r, invalidf("capacity", "must be between 1 and 100000"))
		return
	}
	startsAt, err := parseTime("starts_at", in.StartsAt)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	endsAt, err := parseTime("ends_at", in.EndsAt)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sl, moves, err := s.Svc.CreateSlot(r.Context(), b.ID, waitlist.SlotParams{Service: in.Service, Staff: in.Staff,
		StartsAt: startsAt, EndsAt: endsAt, Capacity: deref(in.Capacity), Seating: nextup.Seating(in.Seating),
		MinParty: in.MinParty, BookedSeats: in.BookedSeats})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.Svc.GetSlot(r.Context(), b.ID, sl.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		slotJSON
		Moves []nextup.Move `json:"moves,omitempty"`
	}{slotOut(v.Slot, v.Offers, s.now()), moves}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) listSlots(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	f := nextup.SlotFilter{BusinessID: b.ID}
	for name, dst := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if v := r.URL.Query().Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				s.writeError(w, r, invalidf(name, "want an RFC 3339 time with an offset"))
				return
			}
			*dst = t
		}
	}
	slots, err := s.Svc.ListSlots(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Slots []slotJSON `json:"slots"`
	}{Slots: []slotJSON{}}
	for _, v := range slots {
		out.Slots = append(out.Slots, slotOut(v.Slot, v.Offers, s.now()))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSlot(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	v, err := s.Svc.GetSlot(r.Context(), b.ID, r.PathValue("sid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, slotOut(v.Slot, v.Offers, s.now()))
}

func (s *Server) slotAudit(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	evs, err := s.Svc.SlotAudit(r.Context(), b.ID, r.PathValue("sid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	type eventJSON struct {
		At          time.Time      `json:"at"`
		Actor       string         `json:"actor"`
		SubjectType string         `json:"subject_type"`
		SubjectID   string         `json:"subject_id"`
		From        string         `json:"from"`
		To          string         `json:"to"`
		Reason      string         `json:"reason"`
		RuleVersion int            `json:"rule_version"`
		Detail      map[string]any `json:"detail"`
	}
	out := struct {
		Events []eventJSON `json:"events"`
	}{Events: []eventJSON{}}
	for _, ev := range evs {
		out.Events = append(out.Events, eventJSON{ev.At, ev.Actor, ev.SubjectType, ev.SubjectID, ev.From, ev.To, ev.Reason, ev.RuleVersion, ev.Detail})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) slotMoves(w http.ResponseWriter, r *http.Request, b nextup.Business, sl nextup.Slot, moves []nextup.Move) {
	v, err := s.Svc.GetSlot(r.Context(), b.ID, sl.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if moves == nil {
		moves = []nextup.Move{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"slot": slotOut(v.Slot, v.Offers, s.now()), "moves": moves})
}

func (s *Server) releaseSlot(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Seats  *int   `json:"seats"`
		Reason string `json:"reason"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Omitted is the default (one seat of a shared slot, a unit slot
	// whole); zero frees nothing, so it is refused rather than read as
	// the default (the use case reads 0 so).
	if in.Seats != nil && *in.Seats < 1 {
		s.writeError(w, r, invalidf("seats", "must be at least 1 (omit it to free one seat, or a unit slot whole)"))
		return
	}
	// Why the seats are free is the audit's and the summary's; a request
	// that does not say (an empty body, a client's mistake) frees nothing.
	if in.Reason == "" {
		s.writeError(w, r, invalidf("reason", "is required: cancellation, no_show or opening"))
		return
	}
	start := time.Now()
	sl, moves, err := s.Svc.Release(r.Context(), b.ID, r.PathValue("sid"), deref(in.Seats), in.Reason)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.Metrics.promoted(moves, start)
	s.slotMoves(w, r, b, sl, moves)
}

func (s *Server) resizeSlot(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Capacity int `json:"capacity"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	start := time.Now()
	sl, moves, err := s.Svc.Resize(r.Context(), b.ID, r.PathValue("sid"), in.Capacity)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.Metrics.promoted(moves, start)
	s.slotMoves(w, r, b, sl, moves)
}

// deref is *p, or zero for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// discard drains a body that a handler does not read, so keep-alive works.
func discard(r *http.Request) { _, _ = io.Copy(io.Discard, io.LimitReader(r.Body, DefaultMaxBody)) }

// parseTime reads an RFC 3339 time with an offset, naming the field when it
// is not one ("" is the zero time; the use case says whether it is required).
func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, invalidf(field, "want an RFC 3339 time with an offset, e.g. 2026-12-01T14:00:00+01:00")
	}
	return t, nil
}
