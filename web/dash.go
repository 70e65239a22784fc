package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// staffRoutes are the dashboard, the sign-in pages and the public join
// form: HTML for people, not part of the JSON API (nor of openapi.json).
func (s *Server) staffRoutes() []route {
	return []route{
		{"GET", "/login", s.loginPage},
		{"POST", "/login", s.loginPost},
		{"POST", "/logout", s.signedIn(s.logoutPost)},
		{"GET", "/login/forgot", s.forgotPage},
		{"POST", "/login/forgot", s.forgotPost},
		{"GET", "/reset/{token}", s.resetPage},
		{"POST", "/reset/{token}", s.resetPost},

		{"GET", "/dash", s.signedIn(s.dashToday)},
		{"GET", "/dash/live", s.signedIn(s.dashLive)},
		{"POST", "/dash/slots", s.signedIn(s.dashCreateSlot)},
		{"GET", "/dash/slots/{sid}", s.signedIn(s.dashSlotStory)},
		{"POST", "/dash/slots/{sid}/release", s.signedIn(s.dashRelease)},
		{"POST", "/dash/slots/{sid}/resize", s.signedIn(s.dashResize)},
		{"POST", "/dash/offers/{oid}/withdraw", s.signedIn(s.dashWithdraw)},
		{"GET", "/dash/waitlist", s.signedIn(s.dashWaitlist)},
		{"POST", "/dash/waitlist", s.signedIn(s.dashAddEntry)},
		{"POST", "/dash/waitlist/{eid}", s.signedIn(s.dashEditEntry)},
		{"POST", "/dash/waitlist/{eid}/remove", s.signedIn(s.dashRemoveEntry)},
		{"GET", "/dash/waitlist/{eid}/history", s.signedIn(s.dashReplay)},
		{"GET", "/dash/events", s.signedIn(s.dashEvents)},
		{"POST", "/dash/events", s.signedIn(s.dashCreateEvent)},
		{"GET", "/dash/events/{id}", s.signedIn(s.dashEvent)},
		{"GET", "/dash/events/{id}/guests.csv", s.signedIn(s.dashGuestsCSV)},
		{"GET", "/dash/events/{id}/live", s.signedIn(s.dashEventLive)},
		{"POST", "/dash/events/{id}/capacity", s.signedIn(s.dashEventCapacity)},
		{"POST", "/dash/events/{id}/settings", s.signedIn(s.dashEventSettings)},
		{"POST", "/dash/events/{id}/public", s.signedIn(s.dashEventPublic)},
		{"POST", "/dash/events/{id}/registrations", s.signedIn(s.dashAddRegistrant)},
		{"POST", "/dash/events/{id}/test-reminder", s.signedIn(s.dashTestReminder)},
		{"POST", "/dash/events/{id}/waitlist/{rid}/promote", s.signedIn(s.dashPromote)},
		{"POST", "/dash/events/{id}/guests/{rid}/check-in", s.signedIn(s.dashCheckIn)},
		{"POST", "/dash/events/{id}/guests/{rid}/{n}/check-in", s.signedIn(s.dashCheckInGuest)},
		{"POST", "/dash/events/{id}/guests/{rid}/no-show", s.signedIn(s.dashNoShow)},
		{"GET", "/dash/handbacks", s.signedIn(s.dashHandBacks)},
		{"POST", "/dash/handbacks/{hid}/resolve", s.signedIn(s.dashResolve)},
		{"GET", "/dash/requests", s.signedIn(s.dashRequests)},
		{"POST", "/dash/requests/{id}/{do}", s.signedIn(s.dashDecide)},
		{"GET", "/dash/messages", s.signedIn(s.dashMessages)},
		{"POST", "/dash/messages/{mid}/retry", s.signedIn(s.dashRetry)},
		{"GET", "/dash/settings", s.signedIn(s.dashSettings)},
		{"GET", "/dash/templates", s.signedIn(s.dashTemplates)},
		{"GET", "/dash/templates/{kind}", s.signedIn(s.dashTemplate)},
		{"GET", "/dash/templates/{kind}/preview", s.signedIn(s.dashTemplatePreview)},
		{"POST", "/dash/templates/{kind}", s.signedIn(s.dashTemplatePost)},
		{"POST", "/dash/templates/revert", s.signedIn(s.dashTemplatesRevert)},
		{"GET", "/dash/summaries", s.signedIn(s.dashSummaries)},
		{"GET", "/dash/summaries/{month}", s.signedIn(s.dashSummary)},
		{"GET", "/dash/analytics", s.signedIn(s.dashAnalytics)},
		{"GET", "/dash/analytics.csv", s.signedIn(s.dashAnalyticsCSV)},
		{"POST", "/dash/settings/rules", s.signedIn(s.dashRules)},
		{"POST", "/dash/settings/status-page", s.signedIn(s.dashStatusPage)},
		{"POST", "/dash/settings/retention", s.signedIn(s.dashRetention)},
		{"GET", "/dash/sheet", s.signedIn(s.dashSheet)},
		{"POST", "/dash/sheet", s.signedIn(s.dashSheetSave)},
		{"POST", "/dash/sheet/sync", s.signedIn(s.dashSheetSync)},
		{"POST", "/dash/sheet/stop", s.signedIn(s.dashSheetStop)},
		{"GET", "/dash/sheet/versions/{vid}", s.signedIn(s.dashSheetVersion)},
		{"POST", "/dash/sheet/versions/{vid}/confirm", s.signedIn(s.dashSheetConfirm)},
		{"POST", "/dash/settings/business", s.signedIn(s.dashBusiness)},
		{"POST", "/dash/settings/booking-tool", s.signedIn(s.dashBookingTool)},

		{"GET", "/b/{slug}/join", s.joinPage},
		{"POST", "/b/{slug}/join", s.joinPost},
		{"GET", "/b/{slug}/confirm", s.confirmPage},
		{"POST", "/b/{slug}/confirm", s.confirmPost},
		// The public event page and its RSVP (rsvp.go), forms like the
		// join pages.
		{"GET", "/e/{slug}/{event}", s.publicEventPage},
		{"POST", "/e/{slug}/{event}", s.rsvpPost},
		{"GET", "/e/{slug}/{event}/confirm", s.rsvpConfirmPage},
		{"POST", "/e/{slug}/{event}/confirm", s.rsvpConfirmPost},
	}
}

// dashSlot is one slot as the dashboard shows it.
type dashSlot struct {
	ID, Time, Service, Staff, State, StateLabel string
	Capacity, Booked, Held, Free                int
	Holder                                      string // who holds the live offer, if any
	Deadline                                    int64  // seconds left on the live offer
	Left                                        string // the same in words
	CanRelease                                  bool
}

// dashDay is one day of slots.
type dashDay struct {
	Label string
	Slots []dashSlot
}

// dashOffer is one live offer.
type dashOffer struct {
	ID, Who, Slot, Channel, Seen, Left string
	SecondsLeft                        int64
}

// leftWords is a countdown as the page's script also writes it.
func leftWords(seconds int64) string {
	return fmt.Sprintf("%d min %d s", seconds/60, seconds%60)
}

// dashData fills the dashboard.
type dashData struct {
	Title, Business, Staff, CSRF, Error, Notice string
	Days                                        []dashDay
	Offers                                      []dashOffer
	Counts                                      dashCounts
	Today                                       string // yyyy-mm-dd in the business's time zone
	Services                                    []string
	Slot                                        *dashSlot
	Story                                       []storyLine
}

type dashCounts struct {
	Open, Offered, Full, HandedBack, LiveOffers int
	// Backlog says the messages waiting to go out, by channel, and how
	// long they take at the channel's rate ("" when none wait).
	Backlog string
}

// backlogWords says what waits in a business's outbox, as the owner
// reads it: "312 texts (about 31 s at 10 a second) and 4 emails".
func backlogWords(counts map[nextup.Channel]map[nextup.MessageState]int, rates map[nextup.Channel]float64) string {
	var parts []string
	for _, c := range []struct {
		ch        nextup.Channel
		one, many string
	}{{nextup.ChannelSMS, "text", "texts"}, {nextup.ChannelEmail, "email", "emails"}, {nextup.ChannelWebhook, "webhook call", "webhook calls"}} {
		n := Backlog(counts, c.ch)
		if n == 0 {
			continue
		}
		p := fmt.Sprintf("%d %s", n, c.many)
		if n == 1 {
			p = "1 " + c.one
		}
		if r := rates[c.ch]; r > 0 && float64(n)/r >= 2 {
			p += fmt.Sprintf(" (about %s at %s a second)", drainWords(time.Duration(float64(n)/r*float64(time.Second))), strconv.FormatFloat(r, 'f', -1, 64))
		}
		parts = append(parts, p)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// drainWords is a wait in seconds, minutes or hours.
func drainWords(d time.Duration) string {
	switch {
	case d < 90*time.Second:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	case d < 90*time.Minute:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}

var stateLabels = map[string]string{
	"open": "Open", "offered": "Offered", "full": "Booked", "handed_back": "Handed back to you", "past": "Past",
}

// dashboard reads what the Today/week page shows: the next seven days of
// slots, the live offers and the counts.
func (s *Server) dashboard(r *http.Request, sc staffCtx) (dashData, error) {
	ctx := r.Context()
	loc := bizLoc(sc.Business)
	now := s.now().In(loc)
	from := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	views, err := s.Svc.ListSlots(ctx, nextup.SlotFilter{BusinessID: sc.Business.ID, From: from, To: from.AddDate(0, 0, 7), Limit: 500})
	if err != nil {
		return dashData{}, err
	}
	d := dashData{Title: "Today", Business: sc.Business.Name, Staff: sc.Staff.Email, CSRF: sc.CSRF, Today: now.Format("2006-01-02")}
	counts, err := s.Svc.MessageCounts(ctx, sc.Business.ID)
	if err != nil {
		return dashData{}, err
	}
	d.Counts.Backlog = backlogWords(counts, s.SendRates)
	for _, sv := range sc.Business.Profile.Services {
		d.Services = append(d.Services, sv.Name)
	}
	names := map[string]string{}
	for _, v := range views {
		ds := s.dashSlotOf(v, now, loc)
		for _, o := range v.Offers {
			if !o.State.Live() {
				continue
			}
			who, ok := names[o.EntryID]
			if !ok {
				if e, err := s.Svc.GetEntry(ctx, sc.Business.ID, o.EntryID); err == nil {
					who = e.Entry.Name
				}
				names[o.EntryID] = who
			}
			ds.Holder, ds.Deadline = who, max(0, int64(o.ExpiresAt.Sub(now).Seconds()))
			ds.Left = leftWords(ds.Deadline)
			seen := "not seen yet"
			if o.SeenAt != nil {
				seen = "seen " + o.SeenAt.In(loc).Format("3:04 pm")
			}
			d.Offers = append(d.Offers, dashOffer{ID: o.ID, Who: who, Slot: ds.Time + " " + ds.Service, Channel: string(o.Channel),
				Seen: seen, SecondsLeft: ds.Deadline, Left: ds.Left})
		}
		day := v.Slot.StartsAt.In(loc).Format("Monday 2 January")
		if len(d.Days) == 0 || d.Days[len(d.Days)-1].Label != day {
			d.Days = append(d.Days, dashDay{Label: day})
		}
		d.Days[len(d.Days)-1].Slots = append(d.Days[len(d.Days)-1].Slots, ds)
		switch ds.State {
		case "open":
			d.Counts.Open++
		case "offered":
			d.Counts.Offered++
		case "full":
			d.Counts.Full++
		case "handed_back":
			d.Counts.HandedBack++
		}
	}
	d.Counts.LiveOffers = len(d.Offers)
	if len(d.Services) == 0 {
		seen := map[string]bool{}
		for _, v := range views {
			if !seen[v.Slot.Service] && v.Slot.Service != "" {
				seen[v.Slot.Service] = true
				d.Services = append(d.Services, v.Slot.Service)
			}
		}
		slices.Sort(d.Services)
	}
	return d, nil
}

func (s *Server) dashSlotOf(v waitlist.SlotView, now time.Time, loc *time.Location) dashSlot {
	sl := v.Slot
	state := string(sl.State(now))
	return dashSlot{ID: sl.ID, Time: sl.StartsAt.In(loc).Format("3:04 pm"), Service: sl.Service, Staff: sl.Staff,
		State: state, StateLabel: stateLabels[state], Capacity: sl.Capacity, Booked: sl.BookedSeats, Held: sl.HeldSeats,
		Free: sl.Capacity - sl.BookedSeats - sl.HeldSeats, CanRelease: sl.BookedSeats > 0 && sl.StartsAt.After(now)}
}

func (s *Server) dashToday(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d, err := s.dashboard(r, sc)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	d.Notice = r.URL.Query().Get("notice")
	s.renderStaff(w, http.StatusOK, "dash", d)
}

// dashLive is GET /dash/live: the live part of the dashboard (counts,
// offers, the week's slots) as an HTML fragment, polled by the page every
// few seconds so that offers and bookings show without a reload.
func (s *Server) dashLive(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d, err := s.dashboard(r, sc)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.renderStaff(w, http.StatusOK, "live", d)
}

// back sends the browser back to the dashboard with a notice.
func back(w http.ResponseWriter, r *http.Request, notice string) {
	http.Redirect(w, r, "/dash?notice="+strings.ReplaceAll(notice, " ", "+"), http.StatusSeeOther)
}

// dashFail shows the dashboard again with what went wrong, keeping the
// status; an internal error is the error page.
func (s *Server) dashFail(w http.ResponseWriter, r *http.Request, sc staffCtx, err error) {
	status := statusOf(err)
	if status >= 500 || status == http.StatusNotFound {
		s.errorPage(w, r, err)
		return
	}
	d, derr := s.dashboard(r, sc)
	if derr != nil {
		s.errorPage(w, r, derr)
		return
	}
	d.Error = problemWords(err)
	s.renderStaff(w, status, "dash", d)
}

// dashRelease is the one-tap Cancelled / No-show / New opening of a slot.
func (s *Server) dashRelease(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	reason := r.PostFormValue("reason")
	_, moves, err := s.Svc.Release(r.Context(), sc.Business.ID, r.PathValue("sid"), 0, reason)
	if err != nil {
		s.dashFail(w, r, sc, err)
		return
	}
	back(w, r, describeMoves(moves))
}

// describeMoves says in a sentence what the engine did.
func describeMoves(moves []nextup.Move) string {
	offers := 0
	for _, m := range moves {
		switch m.Move {
		case nextup.MoveOffer, nextup.MoveRollOn:
			offers++
		case nextup.MoveHandBack:
			return "Nobody on the waitlist can take it: it is handed back to you."
		case nextup.MoveNobodyFits:
			return "Nobody on the waitlist fits this slot; it stays open."
		}
	}
	switch offers {
	case 0:
		return "Done."
	case 1:
		return "Offered to the next person in line."
	}
	return fmt.Sprintf("Offered to the next %d people in line.", offers)
}

func (s *Server) dashResize(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	n, err := strconv.Atoi(r.PostFormValue("capacity"))
	if err != nil || n < 0 {
		s.dashFail(w, r, sc, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "capacity must be a whole number"))
		return
	}
	_, moves, err := s.Svc.Resize(r.Context(), sc.Business.ID, r.PathValue("sid"), n)
	if err != nil {
		s.dashFail(w, r, sc, err)
		return
	}
	back(w, r, "Capacity set to "+strconv.Itoa(n)+". "+describeMoves(moves))
}

func (s *Server) dashWithdraw(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	_, moves, err := s.Svc.Withdraw(r.Context(), sc.Business.ID, r.PathValue("oid"))
	if err != nil {
		s.dashFail(w, r, sc, err)
		return
	}
	back(w, r, "Offer withdrawn. "+describeMoves(moves))
}

// dashCreateSlot is the "add a slot" form: date and time in the business's
// time zone, a length in minutes, the seats, and whether it is free now.
func (s *Server) dashCreateSlot(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	loc := bizLoc(sc.Business)
	start, err := time.ParseInLocation("2006-01-02 15:04", r.PostFormValue("date")+" "+r.PostFormValue("time"), loc)
	if err != nil {
		s.dashFail(w, r, sc, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "give the slot a date and a time"))
		return
	}
	minutes, err := strconv.Atoi(cmpOr(r.PostFormValue("minutes"), "30"))
	if err != nil || minutes <= 0 {
		s.dashFail(w, r, sc, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "the length must be a number of minutes"))
		return
	}
	capacity, err := strconv.Atoi(cmpOr(r.PostFormValue("capacity"), "1"))
	if err != nil || capacity < 1 {
		s.dashFail(w, r, sc, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "seats must be a whole number, at least 1"))
		return
	}
	p := waitlist.SlotParams{Service: strings.TrimSpace(r.PostFormValue("service")), Staff: strings.TrimSpace(r.PostFormValue("staff")),
		StartsAt: start, EndsAt: start.Add(time.Duration(minutes) * time.Minute), Capacity: capacity}
	if r.PostFormValue("seating") == "shared" {
		p.Seating = nextup.SeatingShared
	}
	if r.PostFormValue("free") == "1" { // a new opening: nothing booked, offer it now
		zero := 0
		p.BookedSeats = &zero
	}
	_, moves, err := s.Svc.CreateSlot(r.Context(), sc.Business.ID, p)
	if err != nil {
		s.dashFail(w, r, sc, err)
		return
	}
	back(w, r, "Slot added. "+describeMoves(moves))
}

func cmpOr(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return strings.TrimSpace(v)
}

// storyLine is one step of a slot's story in plain words.
type storyLine struct {
	At, Text string
}

// dashSlotStory is GET /dash/slots/{sid}: the slot's audit trail, told
// for a person rather than an engineer.
func (s *Server) dashSlotStory(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	ctx := r.Context()
	v, err := s.Svc.GetSlot(ctx, sc.Business.ID, r.PathValue("sid"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	events, err := s.Svc.SlotAudit(ctx, sc.Business.ID, v.Slot.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	names := map[string]string{}
	name := func(entryID string) string {
		if n, ok := names[entryID]; ok {
			return n
		}
		n := "someone"
		if e, err := s.Svc.GetEntry(ctx, sc.Business.ID, entryID); err == nil && e.Entry.Name != "" {
			n = e.Entry.Name
		}
		names[entryID] = n
		return n
	}
	offerWho := map[string]string{}
	for _, o := range v.Offers {
		offerWho[o.ID] = name(o.EntryID)
	}
	ds := s.dashSlotOf(v, s.now().In(loc), loc)
	d := dashData{Title: "The story of " + ds.Time + " " + ds.Service, Business: sc.Business.Name, Staff: sc.Staff.Email,
		CSRF: sc.CSRF, Slot: &ds}
	for _, ev := range events {
		if line := storyOf(ev, offerWho, name); line != "" {
			d.Story = append(d.Story, storyLine{At: ev.At.In(loc).Format("Mon 2 Jan 3:04:05 pm"), Text: line})
		}
	}
	s.renderStaff(w, http.StatusOK, "story", d)
}

// storyOf tells one audit row in a sentence, or "" for rows that add
// nothing a person needs (the entry-side twin of an offer row).
func storyOf(ev nextup.AuditEvent, offerWho map[string]string, name func(string) string) string {
	switch ev.SubjectType {
	case nextup.SubjectSlot:
		switch {
		case ev.Reason == string(nextup.MoveNobodyFits):
			return "Nobody on the waitlist fitted; the slot stayed open."
		case ev.To == "handed_back":
			return "Handed back to staff (" + strings.ReplaceAll(ev.Reason, "_", " ") + ")."
		case ev.Reason != "":
			return "Seats freed: " + strings.ReplaceAll(ev.Reason, "_", " ") + "."
		}
		return "Slot " + strings.ReplaceAll(cmpOr(ev.To, "changed"), "_", " ") + "."
	case nextup.SubjectOffer:
		who := offerWho[ev.SubjectID]
		if ev.Reason == "seen" {
			return who + " opened the link."
		}
		switch ev.To {
		case string(nextup.OfferOffered):
			if ev.From == string(nextup.OfferPending) {
				return "The offer to " + who + " was sent when quiet hours ended."
			}
			return "Offered to " + who + "."
		case string(nextup.OfferPending):
			return "Offer to " + who + " held until quiet hours end."
		case string(nextup.OfferClaimed):
			return who + " claimed it: booked."
		case string(nextup.OfferDeclined):
			return who + " declined."
		case string(nextup.OfferExpired):
			return who + " did not answer in time."
		case string(nextup.OfferCancelled):
			switch ev.Reason {
			case waitlist.ReasonSlotTaken:
				return "The booking system turned down " + who + "'s claim: the slot is taken there. The seats stay booked."
			case waitlist.ReasonBookingSystemUnavailable:
				return "The booking system did not answer about " + who + "'s claim: not confirmed."
			case waitlist.ReasonBookingSystemRefused:
				return "The booking system refused " + who + "'s claim: not confirmed."
			}
			return "The offer to " + who + " was withdrawn (" + strings.ReplaceAll(ev.Reason, "_", " ") + ")."
		}
	case nextup.SubjectBooking:
		switch ev.Reason {
		case waitlist.ReasonBookingSystemConfirmed:
			if ref, ok := ev.Detail["reference"].(string); ok {
				return "The booking system confirmed the booking (its reference: " + ref + ")."
			}
			return "The booking system confirmed the booking."
		case waitlist.ReasonBookingSystemRetry:
			return "The booking system did not answer; asking it again later."
		case waitlist.ReasonBookingSystemRemoved:
			return "The booking system was removed before it answered: the booking stands."
		case waitlist.ReasonSlotTaken, waitlist.ReasonBookingSystemUnavailable, waitlist.ReasonBookingSystemRefused:
			return "" // the offer's row tells it
		}
		switch ev.To {
		case string(nextup.BookingCancelled):
			return "A booking was cancelled."
		case string(nextup.BookingNoShow):
			return "A booking was marked no-show."
		}
	case nextup.SubjectEntry:
		if strings.HasPrefix(ev.Reason, "skipped:") {
			return name(ev.SubjectID) + " was passed over (" + strings.ReplaceAll(strings.TrimPrefix(ev.Reason, "skipped:"), "_", " ") + ")."
		}
	}
	return ""
}
