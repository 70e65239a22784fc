package web

import (
	"fmt"
	"html/template"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/insight"
	"github.com/nextup-dev/nextup/web/chart"
)

// The organiser's pages: the business's events with a form for a new one,
// and one event's page with its live counts and charts, its waitlist (with
// the staff override), the guest list (check-in, no-show, the CSV) and the
// promotion history. Like the rest of the dashboard, every read and write
// goes through package waitlist for the signed-in staff member's business
// only, so another business's event is a 404; every form posts back here
// and is redirected (303) to the page it came from.

// eventsData fills the events list and the event page.
type eventsData struct {
	Title, Business, Staff, CSRF, Error, Notice string

	// The list page.
	Events []eventRow
	Form   eventForm

	// The event page.
	Event                                               eventRow
	Counts                                              eventCounts
	CapacityChart, RatioChart, AcceptChart, NoShowChart template.HTML
	NoShowRate                                          string
	// FillLine says how freed seats were refilled ("" when none were freed).
	FillLine string
	Waitlist []eventReg
	Guests   []eventReg
	History  []eventPromotion
	// The event page's forms (dasheventforms.go): each refused form is
	// shown again with what was typed and, beside it, why.
	Settings                eventSettingsForm
	Add                     registrantForm
	SettingsError, AddError string
	// Public is the Public page form (dasheventpublic.go).
	Public      eventPublicForm
	PublicError string
	// OwnerEmail is where test reminders go; without one the test
	// reminder's form asks for it.
	OwnerEmail, TestError string
}

// eventRow is an event as the organiser reads it.
type eventRow struct {
	ID, Title, When, State, StateLabel, Price string
	Ratio, NoShows                            string // the list's waitlist to seats and no-show rate
	Capacity, ConfirmedSeats, HeldSeats       int
	Waitlisted, WaitlistedSeats               int
	Past                                      bool
}

// eventForm is what was typed into the New event form, kept when it is
// refused so that nothing has to be typed again.
type eventForm struct {
	Title, StartsAt, EndsAt, Capacity, MaxGuests, Price string
}

type eventCounts struct {
	Confirmed, Held, Waitlisted                int
	ConfirmedSeats, HeldSeats, WaitlistedSeats int
	Free, Capacity, CheckedIn, NoShows         int
	Cancelled                                  int
}

// eventReg is one registration on the waitlist or the guest list.
type eventReg struct {
	ID, Name, Contact, State, StateLabel, Registered, CheckedIn, HeldUntil string
	Position, Guests, Seats                                                int
	Confirmed                                                              bool
	// Party is the guests the registrant brings, under them on the guest
	// list, each with a check-in of their own (guests.go).
	Party []eventGuest
}

// eventPromotion is one line of the promotion history.
type eventPromotion struct {
	At, Name, Outcome, By, Reason string
	Position                      int
	Override                      bool
}

var eventStateLabels = map[string]string{
	"open": "Open", "offered": "Seats on offer", "full": "Full", "handed_back": "Handed back to you", "past": "Past",
}

var regStateLabels = map[string]string{
	waitlist.RegConfirmed: "confirmed", waitlist.RegOffered: "held", waitlist.RegWaitlisted: "waitlisted",
	waitlist.RegNoShow: "no-show", waitlist.RegCancelled: "cancelled", waitlist.RegExpired: "expired",
}

// promotionOutcomes say an offer's end as organisers read it.
var promotionOutcomes = map[string]string{
	string(nextup.OfferPending): "held until quiet hours end", string(nextup.OfferOffered): "offered, waiting for an answer",
	string(nextup.OfferClaimed): "claimed", string(nextup.OfferDeclined): "declined", string(nextup.OfferExpired): "did not answer in time",
	string(nextup.OfferCancelled): "withdrawn",
}

func (s *Server) eventsBase(sc staffCtx, title string) eventsData {
	return eventsData{Title: title, Business: sc.Business.Name, Staff: sc.Staff.Email, CSRF: sc.CSRF}
}

// eventWhen is an event's date and times in the business's time zone.
func eventWhen(sl nextup.Slot, loc *time.Location) string {
	start, end := sl.StartsAt.In(loc), sl.EndsAt.In(loc)
	if start.Format("2006-01-02") == end.Format("2006-01-02") {
		return start.Format("Mon 2 Jan 2006, 3:04 pm") + " – " + end.Format("3:04 pm")
	}
	return start.Format("Mon 2 Jan 2006, 3:04 pm") + " – " + end.Format("Mon 2 Jan, 3:04 pm")
}

// priceWords is a price in cents as people write it ("12.50 EUR"), or ""
// for a free event.
func priceWords(ev *nextup.EventSettings) string {
	if ev == nil || ev.PriceCents <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%02d %s", ev.PriceCents/100, ev.PriceCents%100, strings.ToUpper(ev.Currency))
}

func (s *Server) eventRowOf(sl nextup.Slot, now time.Time, loc *time.Location) eventRow {
	state := string(sl.State(now))
	return eventRow{ID: sl.ID, Title: sl.Title, When: eventWhen(sl, loc), State: state, StateLabel: eventStateLabels[state],
		Price: priceWords(sl.Event), Capacity: sl.Capacity, ConfirmedSeats: sl.BookedSeats, HeldSeats: sl.HeldSeats,
		Past: state == string(nextup.SlotPast)}
}

// dashEvents is GET /dash/events: the business's events by start, and the
// New event form.
func (s *Server) dashEvents(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d, err := s.eventsList(r, sc)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d.Notice, d.Error = r.URL.Query().Get("notice"), r.URL.Query().Get("error")
	s.renderStaff(w, http.StatusOK, "events", d)
}

func (s *Server) eventsList(r *http.Request, sc staffCtx) (eventsData, error) {
	ctx := r.Context()
	d := s.eventsBase(sc, "Events")
	d.Form.Capacity, d.Form.MaxGuests = "20", "0"
	evs, err := s.Svc.ListEvents(ctx, nextup.SlotFilter{BusinessID: sc.Business.ID})
	if err != nil {
		return d, err
	}
	loc, now := bizLoc(sc.Business), s.now()
	for _, sl := range evs {
		row := s.eventRowOf(sl, now, loc)
		st, err := s.Svc.EventStats(ctx, sc.Business.ID, sl.ID)
		if err != nil {
			return d, err
		}
		row.Waitlisted, row.WaitlistedSeats = st.Waitlisted, st.WaitlistedSeats
		// Across events, to inform overbooking: the waitlist against the
		// seats, and the no-shows of those who were expected.
		row.Ratio = "–"
		if sl.Capacity > 0 {
			row.Ratio = strconv.FormatFloat(float64(st.WaitlistedSeats)/float64(sl.Capacity), 'f', 1, 64) + "×"
		}
		row.NoShows = "–"
		if n := st.NoShows + st.CheckedIn; n > 0 {
			row.NoShows = fmt.Sprintf("%d%% (%d of %d)", st.NoShows*100/n, st.NoShows, n)
		}
		d.Events = append(d.Events, row)
	}
	return d, nil
}

// datetimeLocal reads an <input type="datetime-local"> value (with or
// without seconds) as a time in loc.
func datetimeLocal(v string, loc *time.Location) (time.Time, bool) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

var priceForm = regexp.MustCompile(`^[0-9]{1,7}([.,][0-9]{1,2})?$`)

// priceCents reads a price as people type it ("12", "12.5", "12,50") in
// cents; empty is free.
func priceCents(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, true
	}
	if !priceForm.MatchString(v) {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(strings.Replace(v, ",", ".", 1))
	if !ok {
		return 0, false
	}
	r.Mul(r, big.NewRat(100, 1))
	return r.Num().Int64() / r.Denom().Int64(), true
}

// eventParamsOfForm reads the New event form onto the defaults; the
// service then checks the event as a whole.
func eventParamsOfForm(f eventForm, loc *time.Location) (waitlist.EventParams, error) {
	p := waitlist.NewEventParams()
	p.Title = f.Title
	var fields []nextup.FieldError
	bad := func(field, msg string) { fields = append(fields, nextup.FieldError{Field: field, Message: msg}) }
	var ok bool
	if p.StartsAt, ok = datetimeLocal(f.StartsAt, loc); !ok {
		bad("starts_at", "give the date and time it starts")
	}
	if p.EndsAt, ok = datetimeLocal(f.EndsAt, loc); !ok {
		bad("ends_at", "give the date and time it ends")
	}
	var err error
	if p.Capacity, err = strconv.Atoi(strings.TrimSpace(f.Capacity)); err != nil {
		bad("capacity", "must be a whole number of seats")
	}
	if p.Settings.MaxGuests, err = strconv.Atoi(cmpOr(f.MaxGuests, "0")); err != nil {
		bad("max_guests", "must be a whole number")
	}
	if p.Settings.PriceCents, ok = priceCents(f.Price); !ok {
		bad("price", "must be an amount such as 12.50, or empty for a free event")
	}
	if len(fields) > 0 {
		msg := "the event has invalid fields"
		if len(fields) == 1 {
			msg = fields[0].Field + ": " + fields[0].Message
		}
		return p, &nextup.Error{Kind: nextup.ErrInvalid, Code: nextup.CodeValidation, Message: msg, Fields: fields}
	}
	return p, nil
}

// dashCreateEvent is POST /dash/events: the New event form. A refused
// form is shown again with what was typed and why; nothing is written.
func (s *Server) dashCreateEvent(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	f := eventForm{Title: r.PostFormValue("title"), StartsAt: r.PostFormValue("starts_at"), EndsAt: r.PostFormValue("ends_at"),
		Capacity: r.PostFormValue("capacity"), MaxGuests: r.PostFormValue("max_guests"), Price: r.PostFormValue("price")}
	p, err := eventParamsOfForm(f, bizLoc(sc.Business))
	var sl nextup.Slot
	if err == nil {
		sl, err = s.Svc.CreateEvent(r.Context(), sc.Business.ID, p)
	}
	if err != nil {
		status := statusOf(err)
		if status >= 500 || status == http.StatusNotFound {
			s.errorPage(w, r, err)
			return
		}
		d, derr := s.eventsList(r, sc)
		if derr != nil {
			s.errorPage(w, r, derr)
			return
		}
		d.Form, d.Error = f, problemWords(err)
		s.renderStaff(w, status, "events", d)
		return
	}
	http.Redirect(w, r, "/dash/events/"+sl.ID+"?notice="+queryWords(sl.Title+" is added."), http.StatusSeeOther)
}

// dashEvent is GET /dash/events/{id}: the organiser's page for one event.
func (s *Server) dashEvent(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d, err := s.eventPage(r, sc)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d.Notice, d.Error = r.URL.Query().Get("notice"), r.URL.Query().Get("error")
	s.renderStaff(w, http.StatusOK, "event", d)
}

// eventPage fills the event page of {id}, its forms as the event is now.
func (s *Server) eventPage(r *http.Request, sc staffCtx) (eventsData, error) {
	ctx := r.Context()
	id := r.PathValue("id")
	st, err := s.Svc.EventStats(ctx, sc.Business.ID, id)
	if err != nil {
		return eventsData{}, err
	}
	_, regs, err := s.Svc.Registrations(ctx, sc.Business.ID, id, "")
	if err != nil {
		return eventsData{}, err
	}
	queue, err := s.Svc.EventWaitlist(ctx, sc.Business.ID, id)
	if err != nil {
		return eventsData{}, err
	}
	loc, now := bizLoc(sc.Business), s.now()
	sl := st.Event
	d := s.eventsBase(sc, sl.Title)
	d.Settings, d.OwnerEmail = eventSettingsOf(sl, loc, sc.Business.Rules), sc.Business.Profile.OwnerEmail
	d.Public = s.eventPublicOf(sc.Business, sl)
	d.Add.Guests = "0"
	d.Event = s.eventRowOf(sl, now, loc)
	d.Event.Waitlisted, d.Event.WaitlistedSeats = st.Waitlisted, st.WaitlistedSeats
	c := eventCountsOf(st)
	d.Counts = c

	// The seats booked through nextup are the confirmed registrations';
	// the slot's own count is the truth for what is free.
	d.CapacityChart = chart.Capacity("Seats", sl.Capacity, []chart.Segment{
		{Label: "Confirmed", Value: c.ConfirmedSeats, Class: "confirmed"},
		{Label: "Held", Value: c.HeldSeats, Class: "held"},
		{Label: "Free", Value: c.Free, Class: "free"},
		{Label: "Waitlisted", Value: c.WaitlistedSeats, Class: "waitlisted"},
	})
	d.RatioChart = chart.Ratio("Waitlist to capacity", c.WaitlistedSeats, sl.Capacity)
	var bars []chart.Bar
	for _, a := range st.Acceptance {
		bars = append(bars, chart.Bar{Label: "#" + a.Label, Value: a.Claimed, Of: a.Offered})
	}
	d.AcceptChart = chart.Rates("Acceptance by waitlist position", bars)
	d.NoShowChart = chart.Rates("No-show rate", []chart.Bar{{Label: "No-shows", Value: c.NoShows, Of: c.NoShows + c.CheckedIn}})
	if n := c.NoShows + c.CheckedIn; n > 0 {
		d.NoShowRate = fmt.Sprintf("%d of %d (%d%%)", c.NoShows, n, c.NoShows*100/n)
	}
	// How the seats freed since it was made were refilled from the
	// waitlist, from the event's audit trail.
	if f, err := s.Svc.SlotFigures(ctx, sc.Business.ID, sl.ID); err == nil && f.SeatsFreed > 0 {
		times := map[bool]string{true: "once", false: fmt.Sprintf("%d times", f.SlotsFreed)}[f.SlotsFreed == 1]
		seats := map[bool]string{true: "1 seat", false: fmt.Sprintf("%d seats", f.SeatsFreed)}[f.SeatsFreed == 1]
		d.FillLine = fmt.Sprintf("Seats were freed %s (%s in all); the waitlist took them up %d of %d times (%s)",
			times, seats, f.SlotsFilled, f.SlotsFreed, percent(f.FillRate))
		if f.SlotsFilled > 0 {
			d.FillLine += fmt.Sprintf(", half within %s", insight.Human(f.TimeToFillP50Seconds))
		}
		d.FillLine += "."
	} else if err != nil {
		return eventsData{}, err
	}

	for _, reg := range queue {
		d.Waitlist = append(d.Waitlist, s.eventRegOf(reg, loc))
	}
	for _, reg := range regs {
		switch reg.State {
		case waitlist.RegConfirmed, waitlist.RegOffered, waitlist.RegNoShow:
			d.Guests = append(d.Guests, s.eventRegOf(reg, loc))
		}
	}
	for _, p := range st.Promotions {
		ep := eventPromotion{At: p.At.In(loc).Format("Mon 2 Jan 3:04 pm"), Name: cmpOr(p.Name, "someone"), Position: p.Position,
			Override: p.Override, By: p.By, Reason: p.Reason}
		if o, ok := promotionOutcomes[p.State]; ok {
			ep.Outcome = o
		} else {
			ep.Outcome = p.State
		}
		if !p.Override {
			ep.Reason = strings.ReplaceAll(p.Reason, "_", " ")
		}
		d.History = append(d.History, ep)
	}
	return d, nil
}

// eventCountsOf are an event's counts as its page shows them (and the
// live fragment the page polls).
func eventCountsOf(st waitlist.EventStats) eventCounts {
	sl := st.Event
	return eventCounts{Confirmed: st.Confirmed, Held: st.Held, Waitlisted: st.Waitlisted, ConfirmedSeats: st.ConfirmedSeats,
		HeldSeats: st.HeldSeats, WaitlistedSeats: st.WaitlistedSeats, Free: max(sl.FreeSeats(), 0), Capacity: sl.Capacity,
		CheckedIn: st.CheckedIn, NoShows: st.NoShows, Cancelled: st.Cancelled}
}

func (s *Server) eventRegOf(reg waitlist.Registration, loc *time.Location) eventReg {
	e := reg.Entry
	out := eventReg{ID: e.ID, Name: e.Name, Contact: strings.TrimSpace(e.Email + " " + e.Phone), State: reg.State,
		StateLabel: regStateLabels[reg.State], Registered: e.JoinedAt.In(loc).Format("Mon 2 Jan 3:04 pm"),
		Position: reg.Position, Guests: reg.Guests(), Seats: e.PartySize, Confirmed: reg.State == waitlist.RegConfirmed,
		Party: eventGuestsOf(reg, loc)}
	if reg.Booking != nil && reg.Booking.CheckedInAt != nil && reg.State == waitlist.RegConfirmed {
		out.CheckedIn = reg.Booking.CheckedInAt.In(loc).Format("3:04 pm")
	}
	if reg.Offer != nil {
		out.HeldUntil = reg.Offer.ExpiresAt.In(loc).Format("Mon 2 Jan 3:04 pm")
	}
	return out
}

// eventBack sends the browser back to the event's page with a notice (or
// with what went wrong, when it is the person's to fix); anything else is
// the error page.
func (s *Server) eventBack(w http.ResponseWriter, r *http.Request, notice string, err error) {
	where := "/dash/events/" + r.PathValue("id")
	if err != nil {
		status := statusOf(err)
		if status >= 500 || status == http.StatusNotFound {
			s.errorPage(w, r, err)
			return
		}
		http.Redirect(w, r, where+"?error="+queryWords(problemWords(err)), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, where+"?notice="+queryWords(notice), http.StatusSeeOther)
}

// dashPromote is POST /dash/events/{id}/waitlist/{rid}/promote: the staff
// override, on the record with the signed-in staff member's email and the
// reason they gave.
func (s *Server) dashPromote(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	reg, _, err := s.Svc.Promote(r.Context(), sc.Business.ID, r.PathValue("id"), r.PathValue("rid"), sc.Staff.Email, r.PostFormValue("reason"))
	if err != nil {
		s.eventBack(w, r, "", err)
		return
	}
	notice := reg.Entry.Name + " is first in line for the next seats freed."
	if reg.State == waitlist.RegOffered {
		notice = reg.Entry.Name + " is offered the seats now."
	}
	s.eventBack(w, r, notice, nil)
}

// dashCheckIn is POST /dash/events/{id}/guests/{rid}/check-in; with
// undo=1 it clears a check-in made by mistake.
func (s *Server) dashCheckIn(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	undo := r.PostFormValue("undo") == "1"
	reg, err := s.Svc.CheckIn(r.Context(), sc.Business.ID, r.PathValue("id"), r.PathValue("rid"), undo)
	if err != nil {
		s.eventBack(w, r, "", err)
		return
	}
	notice := reg.Entry.Name + " is checked in."
	if undo {
		notice = reg.Entry.Name + "'s check-in is undone."
	}
	s.eventBack(w, r, notice, nil)
}

// dashNoShow is POST /dash/events/{id}/guests/{rid}/no-show: the seats
// are freed and the engine offers them on.
func (s *Server) dashNoShow(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	reg, moves, err := s.Svc.MarkNoShow(r.Context(), sc.Business.ID, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		s.eventBack(w, r, "", err)
		return
	}
	s.eventBack(w, r, reg.Entry.Name+" is marked a no-show. "+describeMoves(moves), nil)
}

// dashEventCapacity is POST /dash/events/{id}/capacity: more seats
// promote from the waitlist at once; fewer than are taken is refused.
func (s *Server) dashEventCapacity(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("capacity")))
	if err != nil {
		s.eventBack(w, r, "", nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "capacity must be a whole number"))
		return
	}
	sl, err := s.Svc.GetEvent(r.Context(), sc.Business.ID, r.PathValue("id"))
	if err != nil {
		s.eventBack(w, r, "", err)
		return
	}
	p := waitlist.EventParamsOf(sl)
	p.Capacity = n
	if _, moves, err := s.Svc.UpdateEvent(r.Context(), sc.Business.ID, sl.ID, p); err != nil {
		s.eventBack(w, r, "", err)
	} else {
		s.eventBack(w, r, "Capacity set to "+strconv.Itoa(n)+". "+describeMoves(moves), nil)
	}
}

// dashGuestsCSV is GET /dash/events/{id}/guests.csv: the API's guest list
// CSV for a browser signed in as staff.
func (s *Server) dashGuestsCSV(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	sl, regs, err := s.Svc.Registrations(r.Context(), sc.Business.ID, r.PathValue("id"), r.URL.Query().Get("state"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.writeGuestCSV(w, sl, regs)
}
