package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/insight"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

//go:embed templates/*.html templates/staff/*.html templates/join/*.html
var templateFS embed.FS

// pageTemplates are parsed once at start-up: one set per page, each with
// the shared layout.
var pageTemplates = map[string]*template.Template{
	"offer":       parsePage("templates/claim.html", "templates/offer.html"),
	"result":      parsePage("templates/claim.html", "templates/result.html"),
	"devoutbox":   parsePage("templates/devoutbox.html"),
	"status":      parsePage("templates/claim.html", "templates/status.html"),
	"unsubscribe": parsePage("templates/claim.html", "templates/unsubscribe.html"),
	"proposal":    parsePage("templates/claim.html", "templates/proposal.html"),
	"cancel":      parsePage("templates/claim.html", "templates/cancel.html"),
	"front":       parsePage("templates/claim.html", "templates/front.html"),
}

// DemoLogin is the demo's staff account, shown on its front door.
type DemoLogin struct{ Email, Password string }

type frontData struct {
	Title, Business string
	Demo            *DemoLogin
}

// frontDoor is GET /: what this is, and the way to the dashboard's
// sign-in (in the demo, the credentials and the outbox too).
func (s *Server) frontDoor(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	var b bytes.Buffer
	if err := pageTemplates["front"].ExecuteTemplate(&b, "front", frontData{Title: "Welcome", Business: "nextup", Demo: s.Demo}); err != nil {
		s.errorPage(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// unsubscribePage is GET /u/{bid}/{token}, the page behind an email's
// unsubscribe link: which address, and a button. Viewing changes nothing
// (a link scanner opening it unsubscribes nobody).
func (s *Server) unsubscribePage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	u, err := s.Svc.UnsubscribeStatus(r.Context(), r.PathValue("bid"), r.PathValue("token"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "unsubscribe", unsubscribeData(u, r))
}

// unsubscribePost is POST /u/{bid}/{token}: RFC 8058 one-click (a mail
// client posts List-Unsubscribe=One-Click) and the page's button alike.
func (s *Server) unsubscribePost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	u, err := s.Svc.Unsubscribe(r.Context(), r.PathValue("bid"), r.PathValue("token"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "unsubscribe", unsubscribeData(u, r))
}

func unsubscribeData(u waitlist.Unsubscription, r *http.Request) pageData {
	d := pageData{Title: "Email from " + u.Business, Business: u.Business,
		Token: r.PathValue("bid") + "/" + r.PathValue("token")}
	if u.Done {
		d.Heading = "You're unsubscribed"
		d.Message = u.Address + " will get no more emails from " + u.Business + "."
		d.Detail = "Your place on the waitlist is kept; offers reach you by text if you gave a number. To hear by email again, ask " + u.Business + "."
		return d
	}
	d.Heading, d.CanLeave = "Stop emails from "+u.Business+"?", true
	d.Message = "Emails to " + u.Address + " about the " + u.Business + " waitlist will stop."
	return d
}

// devOutbox is GET /dev/outbox, mounted by `nextup demo` only: the captured
// messages of the demo business with clickable claim links.
func (s *Server) devOutbox(w http.ResponseWriter, r *http.Request) {
	msgs, err := s.Svc.ListMessages(r.Context(), nextup.MessageFilter{BusinessID: s.DevOutbox, Limit: 200})
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := pageTemplates["devoutbox"].ExecuteTemplate(&b, "devoutbox", msgs); err != nil {
		s.errorPage(w, r, err)
		return
	}
	pageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

type pageData struct {
	Title, Business, Service, Staff, When, Until, LeftInWords string
	Token                                                     string
	Seats                                                     int
	SecondsLeft                                               int64
	Heading, Message, CalendarURL                             string
	// Price is what a paid event's hold costs: the offer page's button
	// goes to pay instead of claiming.
	Price string
	// The status page.
	Detail   string
	CanLeave bool
	// CanCancel: the status page of a confirmed event registration has a
	// Cancel button (until the cancellation cutoff).
	CanCancel bool
	How       []string
	// Offer: the status page shows the live offer with Claim and Decline
	// (Paid: the payment goes through the message's link).
	Offer, Paid bool
	// State, What and Rendered let the page's script follow the entry
	// live: its state and place as the page was rendered, and what they
	// wait for.
	State, What, Rendered string
	// Notice is a line above the rest (the outcome of a claim or decline
	// from this page).
	Notice string
	// PollMS is how often the status page asks for its entry, in ms.
	PollMS int64
	// Passed says, for the slots that came up while the person waited
	// and went to someone else, why (newest first, a few); Estimate is
	// the estimated wait, when the business shows it and history says.
	Passed   []string
	Estimate string
}

// staffTemplates are the sign-in pages and the dashboard: one set per page
// with the staff layout (and the live fragment the dashboard polls).
var staffTemplates = func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, page := range []string{"login", "forgot", "reset", "dash", "story", "waitlist", "handbacks", "requests", "messages", "settings", "events", "event", "insight", "replay", "sheet", "sheetversion", "templates", "template"} {
		m[page] = parsePage("templates/staff/layout.html", "templates/staff/"+page+".html")
	}
	m["live"] = m["dash"]
	return m
}()

// joinTemplates are the public join pages, in the claim pages' layout.
var joinTemplates = func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, page := range []string{"join", "sent", "code", "confirm", "done", "event", "eventcode", "eventconfirm"} {
		m[page] = parsePage("templates/claim.html", "templates/join/"+page+".html")
	}
	return m
}()

// renderJoin renders a public join page.
func (s *Server) renderJoin(w http.ResponseWriter, status int, page string, d joinData) {
	s.execute(w, status, joinTemplates[page], "layout", page, d)
}

// renderStaff renders a staff page (or the dashboard's live fragment).
func (s *Server) renderStaff(w http.ResponseWriter, status int, page string, data any) {
	s.execute(w, status, staffTemplates[page], page, page, data)
}

// staffError is a staff page saying what went wrong, with a way back.
func (s *Server) staffError(w http.ResponseWriter, r *http.Request, status int, heading, message string) {
	s.renderStaff(w, status, "login", loginData{Title: "Sign in", Error: heading + ". " + message, CSRF: s.preCSRF(w, r), Next: "/dash"})
}

func (s *Server) render(w http.ResponseWriter, status int, page string, d pageData) {
	if (page == "offer" && d.Price != "") || (page == "status" && d.Offer && d.Paid) {
		payFormCSP(w)
	}
	s.execute(w, status, pageTemplates[page], page, page, d)
}

// execute renders template name of set into a buffer and only then writes
// it with status, so that a template error is a clean 500 (logged as page),
// never half a page.
func (s *Server) execute(w http.ResponseWriter, status int, set *template.Template, name, page string, data any) {
	var b bytes.Buffer
	if err := set.ExecuteTemplate(&b, name, data); err != nil {
		s.logger().Error("render page", "page", page, "error", err)
		http.Error(w, "something went wrong on our side", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// pageHeaders are sent with every public page: the token in the URL must
// not leak through a Referer, be cached, or be framed.
func pageHeaders(w http.ResponseWriter) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}

func claimPageData(info waitlist.ClaimInfo, token string, now time.Time) pageData {
	loc := info.Location
	if loc == nil {
		loc = time.UTC
	}
	d := pageData{Title: "Your slot", Business: info.Business.Name, Service: info.Slot.Service, Staff: info.Slot.Staff,
		When: waitlist.FormatWhen(info.Slot.StartsAt, loc), Until: waitlist.FormatUntil(info.Offer.ExpiresAt, now, loc),
		Token: token, Seats: info.Offer.PartySize, SecondsLeft: info.SecondsLeft}
	if info.Slot.Kind == nextup.KindEvent && info.Slot.Title != "" {
		d.Service = info.Slot.Title
	}
	if info.Slot.Event.Paid() {
		d.Price = waitlist.FormatPrice(info.Slot.Event.PriceCents*int64(info.Offer.Seats), info.Slot.Event.Currency)
	}
	d.LeftInWords = leftInWords(info.SecondsLeft)
	return d
}

// claimPage is GET (and HEAD) /c/{token}: the slot, the deadline in words
// and a countdown, with Claim and Decline as forms that need a real click.
// Opening it records that the link was seen; it never claims.
func (s *Server) claimPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	token := r.PathValue("token")
	info, err := s.Svc.ViewClaim(r.Context(), token)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d := claimPageData(info, token, s.now())
	switch info.Offer.State {
	case nextup.OfferOffered:
		if info.SecondsLeft > 0 && r.URL.Query().Get("paid") != "" && d.Price != "" {
			// Back from the payment page before the provider's event
			// arrived: the seats are confirmed in a moment.
			d.Heading, d.Message = "Payment received", "Thank you. We are confirming your seats now; a confirmation is on its way. Nothing more to do."
			s.render(w, http.StatusOK, "result", d)
			return
		}
		if info.SecondsLeft > 0 {
			s.render(w, http.StatusOK, "offer", d)
			return
		}
		d.Heading, d.Message = "This offer has expired", "The claim window ended and the slot went to the next person. "+standing(info.Entry, info.Offer)
	case nextup.OfferPending:
		d.Heading, d.Message = "Not quite yet", "This offer opens in the morning; we will send you the link then."
	case nextup.OfferClaimed:
		d.Heading, d.Message = "You're booked", "See you then."
		if d.Price != "" {
			d.Heading, d.Message = "Paid — you're in", "Your payment went through and your seats are confirmed. A confirmation is on its way."
		}
		if info.Confirming {
			d.Heading, d.Message = "Confirming your booking", "We are confirming it with "+info.Business.Name+"'s booking system; a message is on its way."
		}
	case nextup.OfferDeclined:
		d.Heading, d.Message = "You declined this slot", "It has gone to the next person. "+standing(info.Entry, info.Offer)
	case nextup.OfferExpired:
		d.Heading, d.Message = "This offer has expired", "The claim window ended and the slot went to the next person. "+standing(info.Entry, info.Offer)
	case nextup.OfferCancelled:
		d.Heading, d.Message = "This offer was withdrawn", "Sorry — the business took this slot back. You keep your place on the waitlist."
		switch {
		case info.Offer.Reason == waitlist.ReasonSlotTaken:
			d.Heading, d.Message = "Just filled", "Sorry — this slot was taken just before your claim reached us. You keep your place on the waitlist."
		case strings.HasPrefix(info.Offer.Reason, "booking_system_"):
			d.Heading, d.Message = notConfirmedPage(info.Business.Name)
		}
	}
	s.render(w, http.StatusOK, "result", d)
}

// claimPost is POST /c/{token}/claim: the claim, from the page's form.
func (s *Server) claimPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	token := r.PathValue("token")
	res, err := s.Svc.Claim(r.Context(), token)
	info, infoErr := s.Svc.ViewClaim(r.Context(), token)
	if infoErr != nil {
		s.errorPage(w, r, infoErr)
		return
	}
	d := claimPageData(info, token, s.now())
	switch code := nextup.ErrorCode(err); {
	case err == nil:
		s.Metrics.claim(claimOutcome(res))
		d.Heading, d.Message = "You're booked", "It's yours. A confirmation is on its way."
		if res.CalendarToken != "" {
			d.CalendarURL = "/v1/bookings/" + res.Booking.ID + "/calendar.ics?token=" + res.CalendarToken
		}
		s.render(w, http.StatusOK, "result", d)
	case code == nextup.CodeSlotTaken:
		s.Metrics.claim(code)
		d.Heading, d.Message = "Just filled", "Sorry — someone else booked this slot a moment ago. You keep your place on the waitlist."
		s.render(w, http.StatusConflict, "result", d)
	case code == nextup.CodeBookingSystemUnavailable:
		s.Metrics.claim(code)
		d.Heading, d.Message = notConfirmedPage(info.Business.Name)
		s.render(w, http.StatusServiceUnavailable, "result", d)
	case code == nextup.CodeOfferExpired || code == nextup.CodeOfferWithdrawn || code == nextup.CodeOfferDeclined || code == nextup.CodeOfferPending:
		s.Metrics.claim(code)
		msg := endedMessages[code]
		d.Heading, d.Message = msg[0], msg[1]
		if code == nextup.CodeOfferExpired || code == nextup.CodeOfferDeclined {
			d.Message = strings.Replace(msg[1], "You keep your place on the waitlist.", standing(info.Entry, info.Offer), 1)
		}
		s.render(w, http.StatusConflict, "result", d)
	default:
		s.errorPage(w, r, err)
	}
}

// notConfirmedPage is what a person reads when the business's booking
// system did not confirm their claim.
func notConfirmedPage(business string) (heading, message string) {
	return "Not confirmed yet", "We couldn't confirm this slot with " + business + "'s booking system just now. " +
		business + " will confirm it with you directly. You keep your place on the waitlist."
}

// endedMessages tell a person why their claim did not go through.
var endedMessages = map[string][2]string{
	nextup.CodeOfferExpired:   {"This offer has expired", "The claim window ended and the slot went to the next person. You keep your place on the waitlist."},
	nextup.CodeOfferWithdrawn: {"This offer was withdrawn", "Sorry — the business took this slot back. You keep your place on the waitlist."},
	nextup.CodeOfferDeclined:  {"You declined this slot", "It has gone to the next person. You keep your place on the waitlist."},
	nextup.CodeOfferPending:   {"Not quite yet", "This offer opens in the morning; we will send you the link then."},
}

// declinePost is POST /c/{token}/decline.
func (s *Server) declinePost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	token := r.PathValue("token")
	_, _, err := s.Svc.Decline(r.Context(), token)
	info, infoErr := s.Svc.ViewClaim(r.Context(), token)
	if infoErr != nil {
		s.errorPage(w, r, infoErr)
		return
	}
	d := claimPageData(info, token, s.now())
	if err != nil && nextup.ErrorCode(err) != nextup.CodeOfferClaimed && nextup.ErrorCode(err) != nextup.CodeOfferExpired && nextup.ErrorCode(err) != nextup.CodeOfferWithdrawn {
		s.errorPage(w, r, err)
		return
	}
	switch info.Offer.State {
	case nextup.OfferDeclined:
		d.Heading, d.Message = "Thanks for letting us know", "The slot has gone to the next person. "+standing(info.Entry, info.Offer)
	case nextup.OfferClaimed:
		d.Heading, d.Message = "You're booked", "You had already claimed this slot."
	default:
		d.Heading, d.Message = "This offer has ended", "Nothing more to do. "+standing(info.Entry, info.Offer)
	}
	s.render(w, http.StatusOK, "result", d)
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	d := pageData{Title: "Link not found", Heading: "This link doesn't work", Message: "It may be mistyped or very old. If you were offered a slot, check the latest message we sent."}
	if status >= 500 {
		s.logger().ErrorContext(r.Context(), "page failed", "path", r.URL.Path, "error", err)
		d = pageData{Title: "Something went wrong", Heading: "Something went wrong on our side", Message: "Please try again in a moment."}
	}
	s.render(w, status, "result", d)
}

// statusPage is GET /s/{token}: where a person stands on the waitlist —
// their state, position or band as the business's rules allow, how the
// order works, and a button to leave (a POST; opening the page changes
// nothing).
func (s *Server) statusPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	token := r.PathValue("token")
	v, err := s.Svc.EntryByStatusToken(r.Context(), token)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	b, err := s.Svc.GetBusiness(r.Context(), v.Entry.BusinessID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d := statusPageData(v, b, token, s.now())
	d.PollMS = s.pollMS()
	if v.Entry.State == nextup.EntryWaiting {
		s.statusInsight(r.Context(), &d, v.Entry, b)
	}
	if r.URL.Query().Get("again") == "1" {
		// Sent here by a second RSVP for the same event (rsvpConfirmPost).
		d.Notice = "You were already registered: this is your place. We have sent you this page's link; the one we sent before no longer works."
	}
	s.render(w, http.StatusOK, "status", d)
}

// maxPassed is how many passed-over slots the status page explains.
const maxPassed = 3

// statusInsight adds to a waiting person's status page why the slots that
// came up went to someone else (the replay, never naming anyone) and the
// estimated wait. Either failing leaves it out: the page still says where
// the person stands.
func (s *Server) statusInsight(ctx context.Context, d *pageData, e nextup.Entry, b nextup.Business) {
	if passed, err := s.Svc.PassedOver(ctx, b, e); err == nil {
		for i := len(passed) - 1; i >= 0 && len(d.Passed) < maxPassed; i-- {
			if passed[i].Explanation != "" && passed[i].Why != insight.WhyUnexplained {
				d.Passed = append(d.Passed, passed[i].Explanation)
			}
		}
	} else if nextup.ErrorCode(err) != nextup.CodeNoHistory {
		s.logger().WarnContext(ctx, "status page: replay", "entry", e.ID, "error", err)
	}
	if !b.Profile.WaitEstimate {
		return
	}
	if w, ok, err := s.Svc.EstimateWait(ctx, b, e); err != nil {
		s.logger().WarnContext(ctx, "status page: estimated wait", "entry", e.ID, "error", err)
	} else if ok {
		d.Estimate = w.Words
	}
}

// pollMS is StatusPoll in milliseconds.
func (s *Server) pollMS() int64 {
	if s.StatusPoll > 0 {
		return s.StatusPoll.Milliseconds()
	}
	return 5000
}

func statusPageData(v waitlist.EntryView, b nextup.Business, token string, now time.Time) pageData {
	loc, err := b.Location()
	if err != nil {
		loc = time.UTC
	}
	d := pageData{Title: "Your place", Business: b.Name, Token: token, How: waitlist.HowTheOrderWorks(b.Rules), State: string(v.Entry.State)}
	what := v.Entry.Service
	if what == "" {
		what = "the event"
		if v.Event != nil && v.Event.Title != "" {
			what = v.Event.Title
		}
	}
	d.What = what
	if v.Event != nil {
		d.How = templates.HowTheEventWaitlistWorks(b.Rules, v.Event.Event)
	}
	switch v.Entry.State {
	case nextup.EntryWaiting:
		d.Heading, d.CanLeave = "You're on the waitlist", true
		pos := map[string]any{}
		addPosition(pos, b.Rules, v.Position)
		switch {
		case pos["position"] != nil:
			d.Message = fmt.Sprintf("You are number %d in line for %s.", v.Position, what)
		case pos["band"] != nil:
			d.Message = fmt.Sprintf("You are in the %s in line for %s.", pos["band"], what)
		default:
			d.Message = "You are in line for " + what + "."
		}
		d.Detail = "When a slot that fits you frees up, we will send you an offer to claim it."
		if v.Entry.EventID != "" {
			d.Detail = "When a seat frees up and it is your turn, we will send you an offer to claim it, and it will show here too."
		}
		d.Rendered = fmt.Sprint(pos["position"], pos["band"])
	case nextup.EntryOffered:
		d.Heading, d.CanLeave = "You have an offer", true
		d.Message = "A slot is being held for you."
		d.Detail = "Claim or decline it with the link in the message we sent you. Leaving the waitlist gives it to the next person."
		if o := v.Offer; o != nil && o.State == nextup.OfferOffered {
			d.Offer, d.Paid = true, v.Event != nil && v.Event.Event.Paid()
			d.Message = "A place at " + what + " is being held for you until " + waitlist.FormatUntil(o.ExpiresAt, now, loc) + "."
			d.Until = waitlist.FormatUntil(o.ExpiresAt, now, loc)
			d.SecondsLeft = max(0, int64(o.ExpiresAt.Sub(now)/time.Second))
			d.LeftInWords = leftInWords(d.SecondsLeft)
			d.Detail = "Claim it here or with the link in the message we sent you. Declining gives it to the next person."
			if d.Paid {
				d.Price = waitlist.FormatPrice(v.Event.Event.PriceCents*int64(o.Seats), v.Event.Event.Currency)
				d.Detail = "Pay here or with the link in the message we sent you: the place is yours once paid. Declining gives it to the next person."
			}
		}
	case nextup.EntryBooked:
		d.Heading, d.Message = "You're booked", "You took a slot from the waitlist, so you are no longer on it."
		if v.Event != nil {
			seats := ""
			if v.Entry.PartySize > 1 {
				seats = fmt.Sprintf(" (%d seats)", v.Entry.PartySize)
			}
			d.Heading = "You're registered"
			d.Message = fmt.Sprintf("Your place at %s on %s is confirmed%s.", what, templates.FormatWhen(v.Event.StartsAt, loc), seats)
			closes := v.Event.CancellationClosesAt()
			switch {
			case now.Before(closes) && closes.Equal(v.Event.StartsAt):
				d.CanCancel, d.Detail = true, "Can't come after all? Cancel here until the event starts, and the next person on the waitlist gets your seat."
			case now.Before(closes):
				d.CanCancel, d.Detail = true, "Can't come after all? Cancel here until "+templates.FormatWhen(closes, loc)+", and the next person on the waitlist gets your seat."
			default:
				d.Detail = "Cancellations closed on " + templates.FormatWhen(closes, loc) + ". If you can't come, please tell " + b.Name + "."
			}
			if d.CanCancel && v.Event.Event.Paid() {
				d.Detail += " Cancelling does not refund your payment by itself: ask " + b.Name + " about a refund."
			}
		}
	case nextup.EntryLeft:
		d.Heading, d.Message = "You left the waitlist", "You will get no more offers. Join again any time."
		if v.Event != nil {
			d.Heading, d.Message = "You're not registered", "You will get no more messages about "+what+". You can register again on the event's page while it is open."
		}
	case nextup.EntryExpired:
		d.Heading, d.Message = "Your dates have passed", "The dates you asked for are over, so you are no longer on the waitlist. Join again any time."
	}
	return d
}

// leftInWords is a countdown's time left before the page's script takes
// over: "5 h 12 min", "10 min", "40 s" (the script counts the same way).
func leftInWords(seconds int64) string {
	switch {
	case seconds >= 3600:
		return fmt.Sprintf("%d h %d min", seconds/3600, seconds%3600/60)
	case seconds >= 60:
		return fmt.Sprintf("%d min", seconds/60)
	}
	return fmt.Sprintf("%d s", max(seconds, 0))
}

// statusClaimPost is POST /s/{token}/claim: the live offer claimed from
// the status page, by the same conditional write as its link.
func (s *Server) statusClaimPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	token := r.PathValue("token")
	res, err := s.Svc.ClaimByStatus(r.Context(), token)
	notice := ""
	switch code := nextup.ErrorCode(err); {
	case err == nil:
		s.Metrics.claim(claimOutcome(res))
		notice = "It's yours. A confirmation is on its way."
	case code == nextup.CodeSlotTaken:
		s.Metrics.claim(code)
		notice = "Sorry — someone else took it a moment ago. You keep your place."
	case code == nextup.CodeOfferExpired || code == nextup.CodeOfferWithdrawn || code == nextup.CodeOfferDeclined || code == nextup.CodeOfferPending:
		s.Metrics.claim(code)
		notice = endedMessages[code][1]
	case code == nextup.CodeBookingSystemUnavailable:
		_, notice = notConfirmedPage("The business")
	default:
		s.errorPage(w, r, err)
		return
	}
	s.statusWith(w, r, token, notice)
}

// statusDeclinePost is POST /s/{token}/decline.
func (s *Server) statusDeclinePost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	token := r.PathValue("token")
	_, _, err := s.Svc.DeclineByStatus(r.Context(), token)
	notice := "Thanks for letting us know. It has gone to the next person." // where that leaves them, the page shows
	switch code := nextup.ErrorCode(err); {
	case err == nil:
	case code == nextup.CodeOfferClaimed || code == nextup.CodeOfferExpired || code == nextup.CodeOfferWithdrawn:
		notice = "That offer had already ended."
	case code == nextup.CodeOfferPending:
		notice = endedMessages[code][1]
	default:
		s.errorPage(w, r, err)
		return
	}
	s.statusWith(w, r, token, notice)
}

// statusWith renders the status page with a notice above it.
func (s *Server) statusWith(w http.ResponseWriter, r *http.Request, token, notice string) {
	v, err := s.Svc.EntryByStatusToken(r.Context(), token)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	b, err := s.Svc.GetBusiness(r.Context(), v.Entry.BusinessID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d := statusPageData(v, b, token, s.now())
	d.Notice, d.PollMS = notice, s.pollMS()
	s.render(w, http.StatusOK, "status", d)
}

// statusCancelPost is POST /s/{token}/cancel: a confirmed event
// registration cancelled from its status page, as its cancel link does
// (until the cancellation cutoff, which is said plainly after it).
func (s *Server) statusCancelPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	token := r.PathValue("token")
	_, err := s.Svc.CancelByStatus(r.Context(), token)
	notice := "Your place is cancelled. Thank you for telling us: it goes to the next person on the waitlist."
	switch code := nextup.ErrorCode(err); {
	case err == nil:
	case code == nextup.CodeCancellationClosed:
		notice = "Cancellations for this event have closed, so your place stays booked."
	default:
		s.errorPage(w, r, err)
		return
	}
	s.statusWith(w, r, token, notice)
}

// statusLeavePost is POST /s/{token}/leave: the person leaves; a live
// offer they held rolls on to the next person.
func (s *Server) statusLeavePost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	token := r.PathValue("token")
	if _, _, err := s.Svc.LeaveByStatusToken(r.Context(), token); err != nil {
		var e *nextup.Error
		if !errors.As(err, &e) || statusOf(err) != http.StatusConflict {
			s.errorPage(w, r, err)
			return
		}
	}
	http.Redirect(w, r, "/s/"+token, http.StatusSeeOther)
}
