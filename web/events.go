package web

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// eventJSON is an event as the API shows it: its slot's seats and state,
// and its settings.
type eventJSON struct {
	ID                 string     `json:"id"`
	Kind               string     `json:"kind"`
	Title              string     `json:"title"`
	StartsAt           time.Time  `json:"starts_at"`
	EndsAt             time.Time  `json:"ends_at"`
	Capacity           int        `json:"capacity"`
	Seating            string     `json:"seating"`
	BookedSeats        int        `json:"booked_seats"`
	HeldSeats          int        `json:"held_seats"`
	FreeSeats          int        `json:"free_seats"`
	State              string     `json:"state"`
	MaxGuests          int        `json:"max_guests_per_rsvp"`
	WaitlistLimit      *int       `json:"waitlist_limit"`
	RegistrationCutoff *time.Time `json:"registration_cutoff"`
	CancellationCutoff *time.Time `json:"cancellation_cutoff"`
	PromotionCutoff    int64      `json:"promotion_cutoff_seconds"`
	ClaimWindow        int64      `json:"claim_window_seconds"`
	ReminderOffsets    []int64    `json:"reminder_offsets_seconds"`
	ReminderMorningOf  string     `json:"reminder_morning_of"`
	PriceCents         int64      `json:"price_cents"`
	Currency           string     `json:"currency"`
	Slug               string     `json:"slug"`
	Public             publicJSON `json:"public"`
	// PublicURL is the public event page: /e/{business slug}/{slug or id}
	// ("" while the business has no slug).
	PublicURL string `json:"public_url,omitempty"`
	// Requeue is the event's re-queue rule after a lapse or decline: its
	// own, or the events' default (back of the line, off it after 2).
	Requeue nextup.Requeue `json:"requeue"`
	// TimeCriticalThroughQuiet is the event's own choice of the rules'
	// time-critical exception to quiet hours; null: the business's rule.
	TimeCriticalThroughQuiet *bool `json:"time_critical_through_quiet"`
}

// publicJSON is what an event's public page shows (API.md "Events for
// guests").
type publicJSON struct {
	ShowSeats string `json:"show_seats"`
	Place     string `json:"place"`
	Notes     string `json:"notes"`
	NoIndex   bool   `json:"noindex"`
}

func eventOut(sl nextup.Slot, now time.Time) eventJSON {
	ev := sl.Event
	if ev == nil {
		ev = &nextup.EventSettings{}
	}
	out := eventJSON{ID: sl.ID, Kind: string(sl.Kind), Title: sl.Title, StartsAt: sl.StartsAt, EndsAt: sl.EndsAt,
		Capacity: sl.Capacity, Seating: string(sl.Seating), BookedSeats: sl.BookedSeats, HeldSeats: sl.HeldSeats,
		FreeSeats: sl.FreeSeats(), State: string(sl.State(now)), MaxGuests: ev.MaxGuests, WaitlistLimit: ev.WaitlistLimit,
		RegistrationCutoff: ev.RegistrationCutoff, CancellationCutoff: ev.CancellationCutoff,
		PromotionCutoff: int64(ev.PromotionCutoff / time.Second), ClaimWindow: int64(ev.ClaimWindow / time.Second),
		ReminderOffsets: []int64{}, ReminderMorningOf: ev.ReminderMorningOf, PriceCents: ev.PriceCents, Currency: ev.Currency,
		TimeCriticalThroughQuiet: ev.TimeCriticalThroughQuiet,
		Slug:                     ev.Slug, Public: publicJSON{ShowSeats: cmpOr(ev.Public.ShowSeats, nextup.ShowSeatsExact), Place: ev.Public.Place,
			Notes: ev.Public.Notes, NoIndex: ev.Public.NoIndex}}
	for _, o := range ev.ReminderOffsets {
		out.ReminderOffsets = append(out.ReminderOffsets, int64(o/time.Second))
	}
	out.Requeue = nextup.DefaultEventRequeue()
	if ev.Requeue != nil {
		out.Requeue = *ev.Requeue
	}
	return out
}

// applyEventJSON sets the fields present in a create or PATCH body onto
// p. A null clears what may be cleared (the limit and the cutoffs); an
// unknown field is refused, like everywhere else in the API.
func applyEventJSON(p *waitlist.EventParams, raw map[string]json.RawMessage) error {
	var fields []nextup.FieldError
	bad := func(field, msg string) { fields = append(fields, nextup.FieldError{Field: field, Message: msg}) }
	null := func(v json.RawMessage) bool { return strings.TrimSpace(string(v)) == "null" }
	num := func(field string, v json.RawMessage) (int64, bool) {
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			bad(field, "must be an integer")
			return 0, false
		}
		return n, true
	}
	when := func(field string, v json.RawMessage) (time.Time, bool) {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			bad(field, "must be an RFC 3339 time with an offset")
			return time.Time{}, false
		}
		t, err := parseTime(field, s)
		if err != nil || t.IsZero() {
			bad(field, "must be an RFC 3339 time with an offset, e.g. 2026-12-01T19:00:00+01:00")
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	ev := &p.Settings
	for k, v := range raw {
		switch k {
		case "public":
			var pub struct {
				ShowSeats *string `json:"show_seats"`
				Place     *string `json:"place"`
				Notes     *string `json:"notes"`
				NoIndex   *bool   `json:"noindex"`
			}
			dec := json.NewDecoder(strings.NewReader(string(v)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&pub); err != nil {
				bad(k, `must be an object of "show_seats", "place", "notes" and "noindex"`)
				continue
			}
			if pub.ShowSeats != nil {
				ev.Public.ShowSeats = *pub.ShowSeats
			}
			if pub.Place != nil {
				ev.Public.Place = *pub.Place
			}
			if pub.Notes != nil {
				ev.Public.Notes = *pub.Notes
			}
			if pub.NoIndex != nil {
				ev.Public.NoIndex = *pub.NoIndex
			}
		case "time_critical_through_quiet":
			if null(v) {
				ev.TimeCriticalThroughQuiet = nil
				continue
			}
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				bad(k, "must be true, false or null (the business's rule)")
				continue
			}
			ev.TimeCriticalThroughQuiet = &b
		case "requeue":
			// As in the rules; null goes back to the events' default.
			if null(v) {
				ev.Requeue = nil
				continue
			}
			q := nextup.DefaultEventRequeue()
			if ev.Requeue != nil {
				q = *ev.Requeue
			}
			dec := json.NewDecoder(strings.NewReader(string(v)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&q); err != nil {
				bad(k, `must be an object of "policy" (keep, back or drop) and "drop_after", or null`)
				continue
			}
			ev.Requeue = &q
		case "title", "reminder_morning_of", "currency", "slug":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				bad(k, "must be a string")
				continue
			}
			switch k {
			case "slug":
				ev.Slug = s
			case "title":
				p.Title = s
			case "reminder_morning_of":
				ev.ReminderMorningOf = s
			default:
				ev.Currency = s
			}
		case "starts_at":
			if t, ok := when(k, v); ok {
				p.StartsAt = t
			}
		case "ends_at":
			if t, ok := when(k, v); ok {
				p.EndsAt = t
			}
		case "registration_cutoff", "cancellation_cutoff":
			var tp *time.Time
			if !null(v) {
				t, ok := when(k, v)
				if !ok {
					continue
				}
				tp = &t
			}
			if k == "registration_cutoff" {
				ev.RegistrationCutoff = tp
			} else {
				ev.CancellationCutoff = tp
			}
		case "waitlist_limit":
			if null(v) {
				ev.WaitlistLimit = nil
			} else if n, ok := num(k, v); ok {
				l := int(n)
				ev.WaitlistLimit = &l
			}
		case "capacity", "max_guests_per_rsvp", "promotion_cutoff_seconds", "claim_window_seconds", "price_cents":
			n, ok := num(k, v)
			if !ok {
				continue
			}
			switch k {
			case "capacity":
				p.Capacity = int(min(max(n, -1), 1<<30))
			case "max_guests_per_rsvp":
				ev.MaxGuests = int(min(max(n, -1), 1<<30))
			case "promotion_cutoff_seconds":
				ev.PromotionCutoff = seconds(n)
			case "claim_window_seconds":
				ev.ClaimWindow = seconds(n)
			default:
				ev.PriceCents = n
			}
		case "reminder_offsets_seconds":
			var ns []int64
			if err := json.Unmarshal(v, &ns); err != nil {
				bad(k, "must be a list of integers")
				continue
			}
			ev.ReminderOffsets = []time.Duration{}
			for _, n := range ns {
				ev.ReminderOffsets = append(ev.ReminderOffsets, seconds(n))
			}
		default:
			bad(k, "unknown field")
		}
	}
	if len(fields) > 0 {
		return &nextup.Error{Kind: nextup.ErrInvalid, Code: nextup.CodeValidation, Message: "the request has invalid fields", Fields: fields}
	}
	return nil
}

// seconds is n seconds, bounded so that no input overflows a Duration
// (validation then refuses what is out of range).
func seconds(n int64) time.Duration {
	const limit = int64(1) << 32
	return time.Duration(min(max(n, -limit), limit)) * time.Second
}

func (s *Server) createEvent(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var raw map[string]json.RawMessage
	if err := s.body(r, &raw); err != nil {
		s.writeError(w, r, err)
		return
	}
	p := waitlist.NewEventParams()
	if err := applyEventJSON(&p, raw); err != nil {
		s.writeError(w, r, err)
		return
	}
	sl, err := s.Svc.CreateEvent(r.Context(), b.ID, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.eventOutOf(b, sl))
}

// eventOutOf is eventOut with the public page's address.
func (s *Server) eventOutOf(b nextup.Business, sl nextup.Slot) eventJSON {
	out := eventOut(sl, s.now())
	if b.Profile.Slug != "" {
		out.PublicURL = s.Svc.BaseURL + eventPagePath(b, sl)
	}
	return out
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	evs, err := s.Svc.ListEvents(r.Context(), nextup.SlotFilter{BusinessID: b.ID})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Events []eventJSON `json:"events"`
	}{[]eventJSON{}}
	for _, sl := range evs {
		out.Events = append(out.Events, s.eventOutOf(b, sl))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	sl, err := s.Svc.GetEvent(r.Context(), b.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.eventOutOf(b, sl))
}

func (s *Server) patchEvent(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var raw map[string]json.RawMessage
	if err := s.body(r, &raw); err != nil {
		s.writeError(w, r, err)
		return
	}
	sl, err := s.Svc.GetEvent(r.Context(), b.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := waitlist.EventParamsOf(sl)
	if err := applyEventJSON(&p, raw); err != nil {
		s.writeError(w, r, err)
		return
	}
	sl, moves, err := s.Svc.UpdateEvent(r.Context(), b.ID, sl.ID, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		eventJSON
		Moves []nextup.Move `json:"moves"`
	}{s.eventOutOf(b, sl), movesOut(moves)})
}

// writeRegistrationMoves answers 200 with a registration and what the
// engine did after the change (cancel, override, no-show).
func (s *Server) writeRegistrationMoves(w http.ResponseWriter, reg waitlist.Registration, moves []nextup.Move) {
	writeJSON(w, http.StatusOK, struct {
		registrationJSON
		Moves []nextup.Move `json:"moves"`
	}{s.registrationOut(reg), movesOut(moves)})
}

func movesOut(m []nextup.Move) []nextup.Move {
	if m == nil {
		return []nextup.Move{}
	}
	return m
}

// registrationJSON is a registration on the guest list.
type registrationJSON struct {
	ID           string       `json:"id"`
	EventID      string       `json:"event_id"`
	Name         string       `json:"name"`
	Email        string       `json:"email,omitempty"`
	Phone        string       `json:"phone,omitempty"`
	GuestCount   int          `json:"guest_count"`
	Guests       []guestJSON  `json:"guests"`
	Seats        int          `json:"seats"`
	State        string       `json:"state"`
	Position     int          `json:"position,omitempty"`
	RegisteredAt time.Time    `json:"registered_at"`
	CheckedIn    bool         `json:"checked_in"`
	CheckedInAt  *time.Time   `json:"checked_in_at,omitempty"`
	BookingID    string       `json:"booking_id,omitempty"`
	OfferID      string       `json:"offer_id,omitempty"`
	HoldExpires  *time.Time   `json:"hold_expires_at,omitempty"`
	StatusURL    string       `json:"status_url,omitempty"`
	CheckoutURL  string       `json:"checkout_url,omitempty"`
	Payment      *paymentJSON `json:"payment,omitempty"`
}

// paymentJSON is a paid event's checkout as the organiser sees it.
type paymentJSON struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Provider    string `json:"provider"`
	SessionID   string `json:"session_id"`
	RefundID    string `json:"refund_id,omitempty"`
}

func (s *Server) registrationOut(reg waitlist.Registration) registrationJSON {
	e := reg.Entry
	out := registrationJSON{ID: e.ID, EventID: e.EventID, Name: e.Name, Email: e.Email, Phone: e.Phone, GuestCount: reg.Guests(),
		Guests: guestsOut(reg.GuestList), Seats: e.PartySize, State: reg.State, Position: reg.Position, RegisteredAt: e.JoinedAt}
	if reg.Booking != nil {
		out.BookingID, out.CheckedInAt = reg.Booking.ID, reg.Booking.CheckedInAt
		out.CheckedIn = reg.Booking.CheckedInAt != nil
	}
	if reg.Offer != nil {
		out.OfferID = reg.Offer.ID
		t := reg.Offer.ExpiresAt
		out.HoldExpires = &t
	}
	if reg.StatusToken != "" {
		out.StatusURL = s.Svc.StatusURL(reg.StatusToken)
	}
	if p := reg.Payment; p != nil {
		out.Payment = &paymentJSON{ID: p.ID, State: string(p.State), AmountCents: p.AmountCents, Currency: p.Currency,
			Provider: p.Provider, SessionID: p.SessionID, RefundID: p.RefundID}
	}
	return out
}

func (s *Server) register(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Name       string   `json:"name"`
		Email      string   `json:"email"`
		Phone      string   `json:"phone"`
		Channel    string   `json:"channel"`
		Guests     *int     `json:"guests"`
		GuestNames []string `json:"guest_names"`
		Source     string   `json:"source"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Guest names without a count bring as many guests as names.
	guests := len(in.GuestNames)
	if in.Guests != nil {
		guests = *in.Guests
	}
	reg, _, err := s.Svc.Register(r.Context(), b.ID, r.PathValue("id"), waitlist.RegisterParams{Name: in.Name, Email: in.Email,
		Phone: in.Phone, Channel: nextup.Channel(in.Channel), Guests: guests, GuestNames: in.GuestNames, Source: in.Source})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := s.registrationOut(reg)
	if reg.Offer != nil {
		// A paid event's hold: the checkout is made now, so the person
		// can pay straight away (the claim link makes one too, if this
		// fails).
		if url, err := s.Svc.CheckoutForOffer(r.Context(), reg.Offer.ID); err == nil {
			out.CheckoutURL = url
		}
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) getRegistration(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	reg, err := s.Svc.GetRegistration(r.Context(), b.ID, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.registrationOut(reg))
}

func (s *Server) cancelRegistration(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	reg, moves, err := s.Svc.CancelRegistration(r.Context(), b.ID, r.PathValue("id"), r.PathValue("rid"), nextup.ActorStaff)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeRegistrationMoves(w, reg, moves)
}

// guestListColumns are the CSV export's columns. It is the door list: a
// row per person expected, each registrant followed by their guests
// (guests.go: guestCSVRows), whose rows carry their own name and check-in,
// their place ("guest") and their registrant's name ("guest_of"), both
// empty on a registrant's row.
var guestListColumns = []string{"name", "email", "phone", "guests", "seats", "state", "position", "registered_at", "checked_in_at", "id",
	"guest", "guest_of"}

func (s *Server) listRegistrations(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	if f := r.URL.Query().Get("format"); f != "" && f != "csv" {
		s.writeError(w, r, invalidf("format", "must be csv, or left out for JSON"))
		return
	}
	sl, regs, err := s.Svc.Registrations(r.Context(), b.ID, r.PathValue("id"), r.URL.Query().Get("state"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if wantsCSV(r) {
		s.writeGuestCSV(w, sl, regs)
		return
	}
	out := struct {
		Event         eventJSON          `json:"event"`
		Registrations []registrationJSON `json:"registrations"`
	}{eventOut(sl, s.now()), []registrationJSON{}}
	for _, reg := range regs {
		out.Registrations = append(out.Registrations, s.registrationOut(reg))
	}
	writeJSON(w, http.StatusOK, out)
}

// writeGuestCSV writes an event's guest list as a CSV download: the API's
// export and the dashboard's "Download CSV" (which is behind the staff
// sign-in, since a browser has no API key) write the same file.
func (s *Server) writeGuestCSV(w http.ResponseWriter, sl nextup.Slot, regs []waitlist.Registration) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="guests-%s.csv"`, sl.ID))
	cw := csv.NewWriter(w)
	_ = cw.Write(guestListColumns)
	for _, reg := range regs {
		o := s.registrationOut(reg)
		checked := ""
		if o.CheckedInAt != nil {
			checked = o.CheckedInAt.Format(time.RFC3339)
		}
		pos := ""
		if o.Position > 0 {
			pos = strconv.Itoa(o.Position)
		}
		registered := o.RegisteredAt.Format(time.RFC3339)
		_ = cw.Write([]string{csvSafe(o.Name), csvSafe(o.Email), csvSafe(o.Phone), strconv.Itoa(o.GuestCount), strconv.Itoa(o.Seats),
			o.State, pos, registered, checked, o.ID, "", ""})
		for _, row := range guestCSVRows(o, pos, registered) {
			_ = cw.Write(row)
		}
	}
	cw.Flush()
}

// wantsCSV reports whether the client asked for text/csv (Accept, or
// ?format=csv for a plain download link).
func wantsCSV(r *http.Request) bool {
	return r.URL.Query().Get("format") == "csv" || strings.Contains(r.Header.Get("Accept"), "text/csv")
}

// csvSafe keeps a cell that a spreadsheet would read as a formula
// (=, +, -, @, tab, CR at the start) as text, with a leading apostrophe.
func csvSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

func (s *Server) eventWaitlist(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	regs, err := s.Svc.EventWaitlist(r.Context(), b.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Waitlist []registrationJSON `json:"waitlist"`
	}{[]registrationJSON{}}
	for _, reg := range regs {
		out.Waitlist = append(out.Waitlist, s.registrationOut(reg))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) promote(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Reason string `json:"reason"`
		By     string `json:"by"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	// An API key names no person: the caller's own "by" is recorded as
	// such (the dashboard records the signed-in staff member).
	by := "api key"
	if strings.TrimSpace(in.By) != "" {
		by = "api key: " + strings.TrimSpace(in.By)
	}
	reg, moves, err := s.Svc.Promote(r.Context(), b.ID, r.PathValue("id"), r.PathValue("rid"), by, in.Reason)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeRegistrationMoves(w, reg, moves)
}

func (s *Server) checkIn(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Undo bool `json:"undo"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	reg, err := s.Svc.CheckIn(r.Context(), b.ID, r.PathValue("id"), r.PathValue("rid"), in.Undo)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.registrationOut(reg))
}

func (s *Server) registrationNoShow(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	reg, moves, err := s.Svc.MarkNoShow(r.Context(), b.ID, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeRegistrationMoves(w, reg, moves)
}

// eventStatsJSON is GET /v1/events/{id}/stats: the organiser's figures.
type eventStatsJSON struct {
	Event           eventJSON          `json:"event"`
	Confirmed       int                `json:"confirmed"`
	Held            int                `json:"held"`
	Waitlisted      int                `json:"waitlisted"`
	ConfirmedSeats  int                `json:"confirmed_seats"`
	HeldSeats       int                `json:"held_seats"`
	WaitlistedSeats int                `json:"waitlisted_seats"`
	Cancelled       int                `json:"cancelled"`
	CheckedIn       int                `json:"checked_in"`
	NoShows         int                `json:"no_shows"`
	WaitlistRatio   float64            `json:"waitlist_to_capacity"`
	NoShowRate      *float64           `json:"no_show_rate"`
	Acceptance      []positionRateJSON `json:"acceptance_by_position"`
	Promotions      []promotionJSON    `json:"promotions"`
}

type positionRateJSON struct {
	Position string   `json:"position"`
	Offered  int      `json:"offered"`
	Claimed  int      `json:"claimed"`
	Rate     *float64 `json:"rate"`
}

type promotionJSON struct {
	At       time.Time `json:"at"`
	EntryID  string    `json:"registration_id"`
	Name     string    `json:"name"`
	OfferID  string    `json:"offer_id,omitempty"`
	Position int       `json:"position,omitempty"`
	State    string    `json:"state"`
	Override bool      `json:"override"`
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason,omitempty"`
}

func ratio(n, d int) *float64 {
	if d <= 0 {
		return nil
	}
	r := float64(n) / float64(d)
	return &r
}

func (s *Server) eventStats(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	st, err := s.Svc.EventStats(r.Context(), b.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := eventStatsJSON{Event: eventOut(st.Event, s.now()), Confirmed: st.Confirmed, Held: st.Held, Waitlisted: st.Waitlisted,
		ConfirmedSeats: st.ConfirmedSeats, HeldSeats: st.HeldSeats, WaitlistedSeats: st.WaitlistedSeats, Cancelled: st.Cancelled,
		CheckedIn: st.CheckedIn, NoShows: st.NoShows, NoShowRate: ratio(st.NoShows, st.NoShows+st.CheckedIn),
		Acceptance: []positionRateJSON{}, Promotions: []promotionJSON{}}
	if wr := ratio(st.WaitlistedSeats, st.Event.Capacity); wr != nil {
		out.WaitlistRatio = *wr
	}
	for _, a := range st.Acceptance {
		out.Acceptance = append(out.Acceptance, positionRateJSON{Position: a.Label, Offered: a.Offered, Claimed: a.Claimed, Rate: ratio(a.Claimed, a.Offered)})
	}
	for _, p := range st.Promotions {
		out.Promotions = append(out.Promotions, promotionJSON{At: p.At, EntryID: p.EntryID, Name: p.Name, OfferID: p.OfferID,
			Position: p.Position, State: p.State, Override: p.Override, By: p.By, Reason: p.Reason})
	}
	writeJSON(w, http.StatusOK, out)
}
