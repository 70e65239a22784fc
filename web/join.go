package web

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// How long a form join waits for its contact to be confirmed.
const (
	confirmLinkTTL = 24 * time.Hour
	confirmCodeTTL = 30 * time.Minute
)

// pendingJoin is what a confirmation link or code form carries, sealed
// (AES-GCM) so that it can be neither read nor changed: the request as
// checked, until when it may be confirmed, and for a code the code's hash.
// Nothing is stored until it is confirmed; a second confirmation finds the
// person already waiting.
type pendingJoin struct {
	Params    waitlist.JoinParams
	ExpiresAt time.Time
	CodeHash  string
}

// joinSealKey is the sealing key of a business's confirmations: derived
// from its API key's hash, which only the database knows.
func joinSealKey(b nextup.Business) string {
	return "join-confirm\x00" + b.ID + "\x00" + b.APIKeyHash
}

func sealJoin(b nextup.Business, p pendingJoin) (string, error) { return sealJSON(joinSealKey(b), p) }

func unsealJoin(b nextup.Business, token string) (pendingJoin, error) {
	var p pendingJoin
	return p, unsealJSON(joinSealKey(b), token, &p)
}

// sealJSON seals v (as JSON) under key into a URL-safe token: what a
// public form's confirmation carries instead of a stored row.
func sealJSON(key string, v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sealed, err := nextup.Seal(key, raw)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

// unsealJSON opens a token sealJSON made under key into v.
func unsealJSON(key, token string, v any) error {
	sealed, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return err
	}
	raw, err := nextup.Unseal(key, sealed)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// joinForm is what the person typed, kept to fill the form again.
type joinForm struct {
	Name, Email, Phone, Channel, Service, Staff, Earliest, Latest, From, To string
	PartySize                                                               string
	Days                                                                    map[string]bool
}

// joinData fills the join pages.
type joinData struct {
	Title, Business, Slug, CSRF, Heading, Message, Token string
	Form                                                 joinForm
	Errors                                               map[string]string
	Error                                                string
	Services, Staff                                      []string
	DayNames                                             []string
	How                                                  []string
	Code                                                 bool // the confirmation is a texted code
	// Event is the public event page's (rsvp.go); nil on the join pages.
	Event *eventPageData
}

var weekDays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

var weekdayOf = map[string]time.Weekday{"mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday, "sun": time.Sunday}

func (s *Server) joinBusiness(w http.ResponseWriter, r *http.Request) (nextup.Business, bool) {
	b, err := s.Svc.BusinessBySlug(r.Context(), r.PathValue("slug"))
	if err != nil {
		s.errorPage(w, r, err)
		return b, false
	}
	return b, true
}

func (s *Server) joinData(w http.ResponseWriter, r *http.Request, b nextup.Business) joinData {
	d := joinData{Title: "Join the waitlist", Business: b.Name, Slug: b.Profile.Slug, CSRF: s.preCSRF(w, r),
		Staff: b.Profile.Staff, DayNames: weekDays, How: waitlist.HowTheOrderWorks(b.Rules), Errors: map[string]string{}}
	for _, sv := range b.Profile.Services {
		d.Services = append(d.Services, sv.Name)
	}
	d.Form.PartySize, d.Form.Channel = "1", "email"
	return d
}

// joinPage is GET /b/{slug}/join: the public form.
func (s *Server) joinPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, ok := s.joinBusiness(w, r)
	if !ok {
		return
	}
	s.renderJoin(w, http.StatusOK, "join", s.joinData(w, r, b))
}

// joinPost is POST /b/{slug}/join: check the request, then ask the person
// to confirm their contact; their place counts from the confirmation.
func (s *Server) joinPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, ok := s.joinBusiness(w, r)
	if !ok {
		return
	}
	d := s.joinData(w, r, b)
	f := joinForm{Name: r.PostFormValue("name"), Email: strings.TrimSpace(r.PostFormValue("email")), Phone: strings.TrimSpace(r.PostFormValue("phone")),
		Channel: r.PostFormValue("channel"), Service: r.PostFormValue("service"), Staff: r.PostFormValue("staff"),
		Earliest: r.PostFormValue("earliest"), Latest: r.PostFormValue("latest"), From: r.PostFormValue("from"),
		To: r.PostFormValue("to"), PartySize: r.PostFormValue("party_size"), Days: map[string]bool{}}
	for _, day := range r.PostForm["days"] {
		f.Days[day] = true
	}
	d.Form = f
	if !checkPreCSRF(r) {
		d.Error = "This form had expired. Please send it again."
		s.renderJoin(w, http.StatusForbidden, "join", d)
		return
	}
	if r.PostFormValue("website") != "" {
		// The honeypot: a field people never see, that form-filling bots
		// do. Answer as if all went well, and do nothing.
		d.Heading, d.Message = "Check your email", "We sent you a link to confirm your place."
		s.renderJoin(w, http.StatusOK, "sent", d)
		return
	}
	if !s.joinIPs.allow(clientIP(r)) {
		w.Header().Set("Retry-After", "60")
		d.Error = "Too many requests from here. Please wait a minute and try again."
		s.renderJoin(w, http.StatusTooManyRequests, "join", d)
		return
	}
	p, fieldErrs := joinParamsOf(f, b)
	if len(fieldErrs) == 0 {
		if err := s.Svc.CheckJoin(r.Context(), b.ID, &p); err != nil {
			var e *nextup.Error
			if !errors.As(err, &e) || statusOf(err) >= 500 {
				s.errorPage(w, r, err)
				return
			}
			for _, fe := range e.Fields {
				fieldErrs[fe.Field] = fe.Message
			}
			if len(e.Fields) == 0 {
				d.Error = e.Message
			}
		}
	}
	if len(fieldErrs) > 0 || d.Error != "" {
		d.Errors = fieldErrs
		if d.Error == "" {
			d.Error = "Please check the fields marked below."
		}
		s.renderJoin(w, http.StatusBadRequest, "join", d)
		return
	}
	contact := p.Email
	if p.Channel == nextup.ChannelSMS || p.Email == "" {
		contact = p.Phone
	}
	if !s.joinContacts.allow(strings.ToLower(contact)) {
		w.Header().Set("Retry-After", "3600")
		d.Error = "We have sent several confirmations to " + contact + " already. Please use the latest one, or try again in an hour."
		s.renderJoin(w, http.StatusTooManyRequests, "join", d)
		return
	}
	p.Source = "form"
	pj := pendingJoin{Params: p, ExpiresAt: s.now().Add(confirmLinkTTL)}
	var subject, body string
	ch := nextup.ChannelEmail
	if contact == p.Phone {
		ch, d.Code = nextup.ChannelSMS, true
		code := sixDigits()
		pj.ExpiresAt, pj.CodeHash = s.now().Add(confirmCodeTTL), nextup.HashToken("code:"+code)
		body = fmt.Sprintf("%s: your waitlist code is %s. It works for 30 minutes.", b.Name, code)
	}
	token, err := sealJoin(b, pj)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	if ch == nextup.ChannelEmail {
		link := s.Svc.BaseURL + "/b/" + url.PathEscape(b.Profile.Slug) + "/confirm?t=" + token
		subject = "Confirm your place on " + b.Name + "'s waitlist"
		body = fmt.Sprintf("Hello %s,\n\nTo take your place on %s's waitlist for %s, confirm this address within a day:\n%s\n\nIf you did not ask for this, ignore this mail and nothing happens.",
			p.Name, b.Name, p.Service, link)
	}
	if err := s.Svc.QueueJoinConfirmation(r.Context(), b.ID, ch, contact, subject, body); err != nil {
		s.errorPage(w, r, err)
		return
	}
	if d.Code {
		d.Heading, d.Message, d.Token = "Check your texts", "We sent a code to "+contact+". Type it here to take your place.", token
		s.renderJoin(w, http.StatusOK, "code", d)
		return
	}
	d.Heading, d.Message = "Check your email", "We sent a link to "+contact+". Open it to take your place on the waitlist; it works for a day."
	s.renderJoin(w, http.StatusOK, "sent", d)
}

// joinParamsOf reads the form into join parameters, with the errors of
// what does not parse.
func joinParamsOf(f joinForm, b nextup.Business) (waitlist.JoinParams, map[string]string) {
	errs := map[string]string{}
	p := waitlist.JoinParams{Name: f.Name, Email: f.Email, Phone: f.Phone, Service: f.Service, Staff: f.Staff}
	switch f.Channel {
	case "sms":
		p.Channel = nextup.ChannelSMS
		if f.Phone == "" {
			errs["phone"] = "a mobile number is needed for texts"
		}
	case "", "email":
		p.Channel = nextup.ChannelEmail
		if f.Email == "" && f.Phone == "" {
			errs["email"] = "an email address or a mobile number is needed"
		} else if f.Email == "" {
			p.Channel = nextup.ChannelSMS
		}
	default:
		errs["channel"] = "choose email or text"
	}
	n, err := strconv.Atoi(strings.TrimSpace(f.PartySize))
	if err != nil || n < 1 || n > 50 {
		errs["party_size"] = "must be a number from 1 to 50"
	}
	p.PartySize = n
	loc := bizLoc(b)
	day := func(field, v string, end bool) time.Time {
		t, err := dayOf(v, loc, end) // the whole last day when end
		if err != nil {
			errs[field] = "must be a date"
		}
		return t
	}
	p.Earliest, p.Latest = day("earliest", f.Earliest, false), day("latest", f.Latest, true)
	if !p.Earliest.IsZero() && !p.Latest.IsZero() && p.Latest.Before(p.Earliest) {
		errs["latest"] = "must not be before the first day"
	}
	if len(f.Days) > 0 || f.From != "" || f.To != "" {
		var days []time.Weekday
		for _, d := range weekDays {
			if f.Days[d] || len(f.Days) == 0 {
				days = append(days, weekdayOf[d])
			}
		}
		a := nextup.Availability{Days: days}
		var err error
		if a.From, err = nextup.ParseTimeOfDay(cmpOr(f.From, "00:00")); err != nil {
			errs["from"] = "must be a time like 09:00"
		}
		if a.To, err = nextup.ParseTimeOfDay(cmpOr(f.To, "24:00")); err != nil {
			errs["to"] = "must be a time like 17:30"
		}
		p.Availability = []nextup.Availability{a}
	}
	return p, errs
}

// sixDigits is a random confirmation code.
func sixDigits() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// confirmPage is GET /b/{slug}/confirm?t=…: the emailed link. Opening it
// changes nothing (mail scanners open links); the button confirms.
func (s *Server) confirmPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, ok := s.joinBusiness(w, r)
	if !ok {
		return
	}
	d := s.joinData(w, r, b)
	d.Token = r.URL.Query().Get("t")
	pj, err := unsealJoin(b, d.Token)
	if err != nil || pj.CodeHash != "" {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "unknown confirmation link"))
		return
	}
	d.Heading = "Confirm your place"
	d.Message = fmt.Sprintf("%s, tap the button to join %s's waitlist for %s.", pj.Params.Name, b.Name, pj.Params.Service)
	s.renderJoin(w, http.StatusOK, "confirm", d)
}

// confirmPost is POST /b/{slug}/confirm: the button of the emailed link, or
// a texted code. The place counts from now.
func (s *Server) confirmPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	b, ok := s.joinBusiness(w, r)
	if !ok {
		return
	}
	d := s.joinData(w, r, b)
	d.Token = r.PostFormValue("t")
	pj, err := unsealJoin(b, d.Token)
	if err != nil {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "unknown confirmation"))
		return
	}
	if !checkPreCSRF(r) {
		d.Error = "This form had expired. Please try again."
		d.Heading, d.Code = "Confirm your place", pj.CodeHash != ""
		s.renderJoin(w, http.StatusForbidden, map[bool]string{true: "code", false: "confirm"}[d.Code], d)
		return
	}
	if !s.joinIPs.allow(clientIP(r)) {
		w.Header().Set("Retry-After", "60")
		d.Heading, d.Message = "One moment", "Too many tries from here. Please wait a minute and try again."
		s.renderJoin(w, http.StatusTooManyRequests, "done", d)
		return
	}
	if !s.now().Before(pj.ExpiresAt) {
		d.Heading, d.Message = "This confirmation has expired", "Please fill in the form again."
		s.renderJoin(w, http.StatusGone, "done", d)
		return
	}
	if pj.CodeHash != "" && !sameToken(nextup.HashToken("code:"+strings.TrimSpace(r.PostFormValue("code"))), pj.CodeHash) {
		d.Heading, d.Code, d.Error = "Check your texts", true, "That code is not right. Check the latest text we sent."
		s.renderJoin(w, http.StatusBadRequest, "code", d)
		return
	}
	pj.Params.JoinedAt = time.Time{} // the place counts from the confirmation
	pj.Params.Notify = true          // "you're on the list", with the status link
	res, err := s.Svc.Join(r.Context(), b.ID, pj.Params)
	if nextup.ErrorCode(err) == nextup.CodeAlreadyWaiting {
		d.Heading, d.Message = "You're already on the list", "Your place was confirmed before. We will send you an offer when a slot that fits you frees up."
		s.renderJoin(w, http.StatusOK, "done", d)
		return
	}
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	http.Redirect(w, r, "/s/"+res.StatusToken, http.StatusSeeOther)
}
