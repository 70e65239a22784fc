package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// The public event page and its RSVP: GET /e/{slug}/{event} shows the
// event and the form; the form posts to the same address; nothing is
// stored until the guest confirms their contact (an emailed link whose
// page confirms by POST, or a texted code), exactly as the public join
// form (join.go) does for a waitlist; then the registration is made and
// the guest lands on their status page, /s/{token}.

// eventPagePath is the public page of an event: by its slug, or its id.
func eventPagePath(b nextup.Business, sl nextup.Slot) string {
	ref := sl.ID
	if sl.Event != nil && sl.Event.Slug != "" {
		ref = sl.Event.Slug
	}
	return "/e/" + url.PathEscape(b.Profile.Slug) + "/" + url.PathEscape(ref)
}

// pendingRSVP is an RSVP waiting for its contact to be confirmed: sealed
// into the confirmation link (or the code form), never stored.
type pendingRSVP struct {
	EventID    string
	Name       string
	Email      string
	Phone      string
	Guests     int
	GuestNames []string
	ExpiresAt  time.Time
	CodeHash   string
}

// rsvpSealKey is the sealing key of a business's RSVP confirmations: apart
// from the join form's, so that one cannot stand in for the other.
func rsvpSealKey(b nextup.Business) string {
	return "rsvp-confirm\x00" + b.ID + "\x00" + b.APIKeyHash
}

func sealRSVP(b nextup.Business, p pendingRSVP) (string, error) { return sealJSON(rsvpSealKey(b), p) }

func unsealRSVP(b nextup.Business, token string) (pendingRSVP, error) {
	var p pendingRSVP
	return p, unsealJSON(rsvpSealKey(b), token, &p)
}

// eventPageData is what the public event page shows besides the join
// pages' fields.
type eventPageData struct {
	Title, When, Place, Notes, Price string
	// Seats is the seats line, as the organiser chose to show it ("12
	// seats left", "Few seats left", "Full — join the waitlist", or
	// "").
	Seats string
	// Waiting is the waitlist's length in a band ("3 people waiting",
	// "About 20 waiting"), "" when nobody waits.
	Waiting   string
	Full      bool
	Closed    string // why registration is closed, "" when open
	MaxGuests int
	GuestNums []int // 0..MaxGuests, for the guests select
	Path      string
	NoIndex   bool
	Guests    int
	Names     []string // the guests' names as typed
	// GuestRows are the guest name fields, 1..MaxGuests.
	GuestRows []guestRow
}

// guestRow is one guest name field of the form.
type guestRow struct {
	N    int
	Name string
}

// rows fills GuestRows from the names typed.
func (e *eventPageData) rows() {
	e.GuestRows = nil
	for i := 1; i <= e.MaxGuests; i++ {
		r := guestRow{N: i}
		if i <= len(e.Names) {
			r.Name = e.Names[i-1]
		}
		e.GuestRows = append(e.GuestRows, r)
	}
}

// rsvpFound is the business and the event of a public event address.
func (s *Server) rsvpFound(w http.ResponseWriter, r *http.Request) (nextup.Business, nextup.Slot, bool) {
	b, err := s.Svc.BusinessBySlug(r.Context(), r.PathValue("slug"))
	if err != nil {
		s.errorPage(w, r, err)
		return b, nextup.Slot{}, false
	}
	sl, err := s.Svc.EventByRef(r.Context(), b.ID, r.PathValue("event"))
	if err != nil {
		s.errorPage(w, r, err)
		return b, sl, false
	}
	return b, sl, true
}

// rsvpData fills the event page.
func (s *Server) rsvpData(w http.ResponseWriter, r *http.Request, b nextup.Business, sl nextup.Slot) (joinData, error) {
	d := s.joinData(w, r, b)
	d.Title = sl.Title
	st, err := s.Svc.EventStats(r.Context(), b.ID, sl.ID)
	if err != nil {
		return d, err
	}
	ev := sl.Event
	if ev == nil {
		ev = &nextup.EventSettings{}
	}
	loc := bizLoc(b)
	e := &eventPageData{Title: sl.Title, When: waitlist.FormatWhen(sl.StartsAt, loc), Place: ev.Public.Place, Notes: ev.Public.Notes,
		MaxGuests: ev.MaxGuests, Path: eventPagePath(b, sl), NoIndex: ev.Public.NoIndex}
	if ev.Paid() {
		e.Price = waitlist.FormatPrice(ev.PriceCents, ev.Currency) + " a seat"
	}
	free := sl.FreeSeats()
	e.Full = free <= 0 || st.Waitlisted > 0
	switch {
	case e.Full:
		e.Seats = "Full — join the waitlist"
	case cmpOr(ev.Public.ShowSeats, nextup.ShowSeatsExact) == nextup.ShowSeatsExact:
		e.Seats = fmt.Sprintf("%d seats left", free)
		if free == 1 {
			e.Seats = "1 seat left"
		}
	case ev.Public.ShowSeats == nextup.ShowSeatsFew && free < 5:
		e.Seats = "Few seats left"
	}
	e.Waiting = waitingBand(st.Waitlisted)
	now := s.now()
	switch {
	case !now.Before(sl.RegistrationClosesAt()):
		e.Closed = "Registration for this event has closed."
	case e.Full && ev.WaitlistLimit != nil && st.Waitlisted >= *ev.WaitlistLimit:
		e.Closed = "This event is full and so is its waitlist."
	}
	for i := 0; i <= ev.MaxGuests; i++ {
		e.GuestNums = append(e.GuestNums, i)
	}
	e.rows()
	d.Event = e
	d.Heading = sl.Title
	d.How = templates.HowTheEventWaitlistWorks(b.Rules, sl.Event)
	return d, nil
}

// waitingBand says how long an event's waitlist is without a count to
// the person (which changes by the second).
func waitingBand(n int) string {
	switch {
	case n <= 0:
		return ""
	case n == 1:
		return "1 person waiting"
	case n <= 5:
		return fmt.Sprintf("%d people waiting", n)
	case n <= 10:
		return "Under 10 waiting"
	case n <= 25:
		return "Under 25 waiting"
	case n <= 50:
		return "Under 50 waiting"
	}
	return "Over 50 waiting"
}

// publicEventPage is GET /e/{slug}/{event}: the public event page and its form.
func (s *Server) publicEventPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, sl, ok := s.rsvpFound(w, r)
	if !ok {
		return
	}
	d, err := s.rsvpData(w, r, b, sl)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	if d.Event.NoIndex {
		w.Header().Set("X-Robots-Tag", "noindex")
	}
	s.renderJoin(w, http.StatusOK, "event", d)
}

// maxGuestName is the longest guest name the form takes.
const maxGuestName = 100

// rsvpPost is POST /e/{slug}/{event}: check the RSVP, then ask the guest
// to confirm their contact; the registration is made at the confirmation.
func (s *Server) rsvpPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, sl, ok := s.rsvpFound(w, r)
	if !ok {
		return
	}
	d, err := s.rsvpData(w, r, b, sl)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d.Form.Name, d.Form.Email, d.Form.Phone = strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("email")), strings.TrimSpace(r.PostFormValue("phone"))
	guests, gerr := strconv.Atoi(cmpOr(strings.TrimSpace(r.PostFormValue("guests")), "0"))
	d.Event.Guests = guests
	for _, n := range r.PostForm["guest_name"] {
		d.Event.Names = append(d.Event.Names, strings.TrimSpace(n))
	}
	d.Event.rows()
	if !checkPreCSRF(r) {
		d.Error = "This form had expired. Please send it again."
		s.renderJoin(w, http.StatusForbidden, "event", d)
		return
	}
	if r.PostFormValue("website") != "" {
		// The honeypot: answer as if all went well, and do nothing.
		d.Heading, d.Message = "Check your email", "We sent you a link to confirm your place."
		s.renderJoin(w, http.StatusOK, "sent", d)
		return
	}
	if d.Event.Closed != "" {
		d.Error = d.Event.Closed
		s.renderJoin(w, http.StatusConflict, "event", d)
		return
	}
	if !s.joinIPs.allow(clientIP(r)) {
		w.Header().Set("Retry-After", "60")
		d.Error = "Too many requests from here. Please wait a minute and try again."
		s.renderJoin(w, http.StatusTooManyRequests, "event", d)
		return
	}
	errs := map[string]string{}
	if d.Form.Name == "" || len(d.Form.Name) > 200 {
		errs["name"] = "is needed (at most 200 characters)"
	}
	if d.Form.Email == "" && d.Form.Phone == "" {
		errs["email"] = "or a mobile number is needed"
	}
	if gerr != nil || guests < 0 || guests > d.Event.MaxGuests {
		errs["guests"] = fmt.Sprintf("must be a number from 0 to %d", d.Event.MaxGuests)
	}
	names := d.Event.Names
	if len(names) > max(guests, 0) {
		names = names[:max(guests, 0)]
	}
	for _, n := range names {
		if len(n) > maxGuestName || strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			errs["guest_name"] = fmt.Sprintf("each at most %d characters", maxGuestName)
		}
	}
	if len(errs) == 0 {
		// The contact's form, as the API checks it, before anything is
		// sent to it.
		if fe := s.Svc.CheckContact(&d.Form.Name, &d.Form.Email, &d.Form.Phone); len(fe) > 0 {
			for _, f := range fe {
				errs[f.Field] = f.Message
			}
		}
	}
	if len(errs) > 0 {
		d.Errors, d.Error = errs, "Please check the fields marked below."
		s.renderJoin(w, http.StatusBadRequest, "event", d)
		return
	}
	contact := d.Form.Email
	if contact == "" {
		contact = d.Form.Phone
	}
	if !s.joinContacts.allow(strings.ToLower(contact)) {
		w.Header().Set("Retry-After", "3600")
		d.Error = "We have sent several confirmations to " + contact + " already. Please use the latest one, or try again in an hour."
		s.renderJoin(w, http.StatusTooManyRequests, "event", d)
		return
	}
	pr := pendingRSVP{EventID: sl.ID, Name: d.Form.Name, Email: d.Form.Email, Phone: d.Form.Phone, Guests: guests,
		GuestNames: names, ExpiresAt: s.now().Add(confirmLinkTTL)}
	ch := nextup.ChannelEmail
	var subject, body string
	if contact == d.Form.Phone {
		ch, d.Code = nextup.ChannelSMS, true
		code := sixDigits()
		pr.ExpiresAt, pr.CodeHash = s.now().Add(confirmCodeTTL), nextup.HashToken("code:"+code)
		body = fmt.Sprintf("%s: your code for %s is %s. It works for 30 minutes.", b.Name, sl.Title, code)
	}
	token, err := sealRSVP(b, pr)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	if ch == nextup.ChannelEmail {
		link := s.Svc.BaseURL + d.Event.Path + "/confirm?t=" + token
		subject = "Confirm your place at " + sl.Title
		body = fmt.Sprintf("Hello %s,\n\nTo take your place at %s (%s), confirm this address within a day:\n%s\n\nIf you did not ask for this, ignore this mail and nothing happens.",
			pr.Name, sl.Title, d.Event.When, link)
	}
	if err := s.Svc.QueueJoinConfirmation(r.Context(), b.ID, ch, contact, subject, body); err != nil {
		s.errorPage(w, r, err)
		return
	}
	d.Token = token
	if d.Code {
		d.Heading, d.Message = "Check your texts", "We sent a code to "+contact+". Type it here to take your place."
		s.renderJoin(w, http.StatusOK, "eventcode", d)
		return
	}
	d.Heading, d.Message = "Check your email", "We sent a link to "+contact+". Open it to take your place at "+sl.Title+"; it works for a day."
	s.renderJoin(w, http.StatusOK, "sent", d)
}

// rsvpConfirmPage is GET /e/{slug}/{event}/confirm?t=…: the emailed link.
// Opening it changes nothing (mail scanners open links); the button
// confirms.
func (s *Server) rsvpConfirmPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, sl, ok := s.rsvpFound(w, r)
	if !ok {
		return
	}
	d := s.joinData(w, r, b)
	d.Token = r.URL.Query().Get("t")
	pr, err := unsealRSVP(b, d.Token)
	if err != nil || pr.CodeHash != "" || pr.EventID != sl.ID {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "unknown confirmation link"))
		return
	}
	d.Event = &eventPageData{Path: eventPagePath(b, sl)}
	d.Title, d.Heading = sl.Title, "Confirm your place"
	d.Message = fmt.Sprintf("%s, tap the button to take your place at %s.", pr.Name, sl.Title)
	s.renderJoin(w, http.StatusOK, "eventconfirm", d)
}

// rsvpConfirmPost is POST /e/{slug}/{event}/confirm: the emailed link's
// button, or a texted code. The registration is made now: confirmed when
// seats allow, else on the waitlist (with the waitlist confirmation
// message); the guest goes to their status page.
func (s *Server) rsvpConfirmPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, sl, ok := s.rsvpFound(w, r)
	if !ok {
		return
	}
	d := s.joinData(w, r, b)
	d.Title = sl.Title
	d.Event = &eventPageData{Path: eventPagePath(b, sl)}
	d.Token = r.PostFormValue("t")
	pr, err := unsealRSVP(b, d.Token)
	if err != nil || pr.EventID != sl.ID {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "unknown confirmation"))
		return
	}
	page := map[bool]string{true: "eventcode", false: "eventconfirm"}[pr.CodeHash != ""]
	if !checkPreCSRF(r) {
		d.Error, d.Heading, d.Code = "This form had expired. Please try again.", "Confirm your place", pr.CodeHash != ""
		s.renderJoin(w, http.StatusForbidden, page, d)
		return
	}
	if !s.joinIPs.allow(clientIP(r)) {
		w.Header().Set("Retry-After", "60")
		d.Heading, d.Message = "One moment", "Too many tries from here. Please wait a minute and try again."
		s.renderJoin(w, http.StatusTooManyRequests, "done", d)
		return
	}
	if !s.now().Before(pr.ExpiresAt) {
		d.Heading, d.Message = "This confirmation has expired", "Please fill in the form again."
		s.renderJoin(w, http.StatusGone, "done", d)
		return
	}
	if pr.CodeHash != "" && !sameToken(nextup.HashToken("code:"+strings.TrimSpace(r.PostFormValue("code"))), pr.CodeHash) {
		d.Heading, d.Code, d.Error = "Check your texts", true, "That code is not right. Check the latest text we sent."
		s.renderJoin(w, http.StatusBadRequest, "eventcode", d)
		return
	}
	reg, _, err := s.Svc.Register(r.Context(), b.ID, sl.ID, waitlist.RegisterParams{Name: pr.Name, Email: pr.Email, Phone: pr.Phone,
		Guests: pr.Guests, GuestNames: pr.GuestNames, Source: "form", Notify: true})
	var ne *nextup.Error
	switch {
	case err == nil:
		http.Redirect(w, r, "/s/"+reg.StatusToken, http.StatusSeeOther)
	case nextup.ErrorCode(err) == nextup.CodeAlreadyRegistered:
		// They have just proved their contact again, so they are shown
		// their registration's status page. Only the hash of its old link
		// is kept: it gets a new link (sent to them too), and the old one
		// stops working.
		ch := nextup.ChannelEmail
		if pr.CodeHash != "" {
			ch = nextup.ChannelSMS
		}
		id := ""
		if errors.As(err, &ne) {
			id, _ = ne.Data["id"].(string)
		}
		token, rerr := s.Svc.ReissueStatusLink(r.Context(), b.ID, sl.ID, id, ch)
		if rerr != nil {
			d.Heading, d.Message = "You're already registered", s.alreadyRegistered(r, b, sl, err)
			s.renderJoin(w, http.StatusOK, "done", d)
			return
		}
		http.Redirect(w, r, "/s/"+token+"?again=1", http.StatusSeeOther)
	case errors.As(err, &ne) && statusOf(err) < 500:
		// Closed, full, a cutoff passed since the form was sent: said
		// plainly, nothing stored.
		d.Heading, d.Message = "We couldn't take your place", ne.Message
		s.renderJoin(w, statusOf(err), "done", d)
	default:
		s.errorPage(w, r, err)
	}
}

// alreadyRegistered says where an existing registration stands.
func (s *Server) alreadyRegistered(r *http.Request, b nextup.Business, sl nextup.Slot, err error) string {
	const link = " Your status page is at the link in the message we sent you then."
	var ne *nextup.Error
	id := ""
	if errors.As(err, &ne) {
		id, _ = ne.Data["id"].(string)
	}
	reg, gerr := s.Svc.GetRegistration(r.Context(), b.ID, sl.ID, id)
	if gerr != nil {
		return "Your place was confirmed before." + link
	}
	switch reg.State {
	case waitlist.RegConfirmed:
		return "Your place at " + sl.Title + " is confirmed." + link
	case waitlist.RegWaitlisted:
		if place := templates.PlaceInLine(b.Rules, reg.Position); place != "" {
			return "You're on the waitlist, " + place + "." + link
		}
		return "You're on the waitlist." + link
	case waitlist.RegOffered:
		return "A place is being held for you: claim it with the link we sent you." + link
	}
	return "Your place was confirmed before." + link
}
