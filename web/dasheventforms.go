package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// The event page's own forms: the event's settings in the organiser's
// words (minutes and hours, dates in the business's time zone, reminders
// from a few choices), a registrant added by hand (a phone booking), the
// test reminder, and the live fragment of the counts that the page polls
// as the Today page polls /dash/live. The settings are saved by the use
// case behind PATCH /v1/events/{id} and the registrant by the one behind
// POST /v1/events/{id}/registrations. A refused form is shown again with
// what was typed and why, beside it; an accepted one redirects (303) to
// the event page.

// eventSettingsForm is the settings form as typed, or as the event has it.
type eventSettingsForm struct {
	ClaimWindow, ClaimUnit                 string // "90", "minutes" or "hours"
	RegistrationCutoff, CancellationCutoff string // datetime-local in the business's zone; "" at the start
	PromotionCutoff                        string // hours before the start; "0" never stops
	Reminders                              []reminderChoice
	OtherReminders                         string // "2 days, 6 hours"
	Morning                                bool   // a reminder on the morning of the event
	MorningAt                              string // "09:00"
	MaxGuests, WaitlistLimit, Price        string
	Currency, Zone                         string // shown, not edited
	// Quiet is the event's choice of the quiet-hours exception: "business"
	// (the business's rule, said in QuietWords), "through" (a freed seat
	// that starts before quiet hours end is offered at once) or "hold".
	Quiet, QuietWords string
	// Requeue is what a missed offer does to the person's place: "keep"
	// or "back"; DropAfter takes them off the list at that many missed
	// offers ("" or "0": never).
	Requeue, DropAfter string
}

// quietChoice is the Quiet field of an event's TimeCriticalThroughQuiet.
func quietChoice(v *bool) string {
	switch {
	case v == nil:
		return "business"
	case *v:
		return "through"
	}
	return "hold"
}

// quietWords says the business's quiet hours and its exception.
func quietWords(r nextup.Rules) string {
	if r.QuietHours == nil {
		return "Your business has no quiet hours: offers go out at any time."
	}
	w := fmt.Sprintf("Your quiet hours are %s–%s", r.QuietHours.Start, r.QuietHours.End)
	if r.TimeCriticalThroughQuiet {
		return w + "; your business setting sends an offer through them when the seat would be gone by morning."
	}
	return w + "; your business setting holds every offer until they end."
}

// reminderChoice is one reminder checkbox: an offset before the start.
type reminderChoice struct {
	Value, Label string
	Checked      bool
}

// registrantForm is the Add a registrant form as typed.
type registrantForm struct {
	Name, Email, Phone, Guests string
	// GuestNames are the guests' names, one per line or comma, for the
	// door (optional).
	GuestNames string
}

// guestNamesOf reads the guests' names as staff type them: one per line,
// or separated by commas; blank ones are dropped.
func guestNamesOf(v string) []string {
	var out []string
	for _, n := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// reminderPresets are the reminders offered as checkboxes; an event's
// other offsets join them, checked.
var reminderPresets = []time.Duration{14 * 24 * time.Hour, 7 * 24 * time.Hour, 3 * 24 * time.Hour, 2 * 24 * time.Hour,
	24 * time.Hour, 3 * time.Hour, time.Hour}

// durationWords is an offset as organisers say it: "1 week", "3 days",
// "2 hours", "90 minutes".
func durationWords(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch day := 24 * time.Hour; {
	case d%(7*day) == 0:
		return unit(int64(d/(7*day)), "week")
	case d%day == 0:
		return unit(int64(d/day), "day")
	case d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	}
	return unit(int64(d/time.Minute), "minute")
}

// durationUnits are the units durationOf reads.
var durationUnits = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour}

// durationOf reads "2 days" (or "1 week", "6 hours", "30 minutes").
func durationOf(v string) (time.Duration, bool) {
	f := strings.Fields(strings.ToLower(v))
	if len(f) != 2 {
		return 0, false
	}
	n, err := strconv.Atoi(f[0])
	u, ok := durationUnits[strings.TrimSuffix(f[1], "s")]
	if err != nil || !ok || n <= 0 {
		return 0, false
	}
	return time.Duration(n) * u, true
}

// eventSettingsOf is the settings form as the event has it now.
func eventSettingsOf(sl nextup.Slot, loc *time.Location, rules nextup.Rules) eventSettingsForm {
	ev := sl.Event
	if ev == nil {
		ev = &nextup.EventSettings{}
	}
	f := eventSettingsForm{ClaimWindow: strconv.Itoa(int(ev.ClaimWindow / time.Minute)), ClaimUnit: "minutes",
		PromotionCutoff: strconv.FormatFloat(ev.PromotionCutoff.Hours(), 'f', -1, 64), Morning: ev.ReminderMorningOf != "",
		MorningAt: cmpOr(ev.ReminderMorningOf, nextup.DefaultEventMorningOf), MaxGuests: strconv.Itoa(ev.MaxGuests),
		Currency: strings.ToUpper(cmpOr(ev.Currency, nextup.DefaultEventCurrency)), Zone: loc.String(),
		Quiet: quietChoice(ev.TimeCriticalThroughQuiet), QuietWords: quietWords(rules)}
	q := nextup.DefaultEventRequeue()
	if ev.Requeue != nil {
		q = *ev.Requeue
	}
	f.Requeue, f.DropAfter = q.Policy, strconv.Itoa(q.DropAfter)
	if q.Policy == nextup.RequeueDrop { // the same as keep until the DropAfter-th
		f.Requeue = nextup.RequeueKeep
	}
	if ev.ClaimWindow > 0 && ev.ClaimWindow%time.Hour == 0 {
		f.ClaimWindow, f.ClaimUnit = strconv.Itoa(int(ev.ClaimWindow/time.Hour)), "hours"
	}
	for _, c := range []struct {
		at  *time.Time
		out *string
	}{{ev.RegistrationCutoff, &f.RegistrationCutoff}, {ev.CancellationCutoff, &f.CancellationCutoff}} {
		if c.at != nil {
			*c.out = c.at.In(loc).Format("2006-01-02T15:04")
		}
	}
	if ev.WaitlistLimit != nil {
		f.WaitlistLimit = strconv.Itoa(*ev.WaitlistLimit)
	}
	if ev.PriceCents > 0 {
		f.Price = fmt.Sprintf("%d.%02d", ev.PriceCents/100, ev.PriceCents%100)
	}
	f.Reminders = reminderChoices(ev.ReminderOffsets)
	return f
}

// reminderChoices are the presets and the offsets given, longest first,
// the offsets given checked.
func reminderChoices(checked []time.Duration) []reminderChoice {
	all := slices.Clone(reminderPresets)
	for _, o := range checked {
		if !slices.Contains(all, o) {
			all = append(all, o)
		}
	}
	slices.SortFunc(all, func(a, b time.Duration) int { return cmp.Compare(b, a) })
	out := make([]reminderChoice, 0, len(all))
	for _, o := range all {
		out = append(out, reminderChoice{Value: strconv.FormatInt(int64(o/time.Minute), 10), Label: durationWords(o) + " before",
			Checked: slices.Contains(checked, o)})
	}
	return out
}

// settingsFormOf reads the posted settings form, keeping what was typed.
func settingsFormOf(r *http.Request, loc *time.Location, rules nextup.Rules) eventSettingsForm {
	f := r.PostFormValue
	out := eventSettingsForm{ClaimWindow: f("claim_window"), ClaimUnit: f("claim_unit"), RegistrationCutoff: f("registration_cutoff"),
		CancellationCutoff: f("cancellation_cutoff"), PromotionCutoff: f("promotion_cutoff"), OtherReminders: f("other_reminders"),
		Morning: f("morning") == "1", MorningAt: f("morning_at"), MaxGuests: f("max_guests"), WaitlistLimit: f("waitlist_limit"),
		Price: f("price"), Zone: loc.String(), Quiet: f("quiet"), QuietWords: quietWords(rules), Requeue: f("requeue"), DropAfter: f("drop_after")}
	var checked []time.Duration
	for _, v := range r.PostForm["reminder"] {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 90*24*60 {
			checked = append(checked, time.Duration(n)*time.Minute)
		}
	}
	out.Reminders = reminderChoices(checked)
	return out
}

// apply sets the form's values on p (the event as it is), checking each
// in the organiser's words: the use case would name the API's fields.
func (f eventSettingsForm) apply(p *waitlist.EventParams, loc *time.Location) error {
	ev := &p.Settings
	var bad []string
	say := func(msg string) { bad = append(bad, msg) }

	n, err := strconv.Atoi(strings.TrimSpace(f.ClaimWindow))
	unit := time.Minute
	if f.ClaimUnit == "hours" {
		unit = time.Hour
	}
	if ev.ClaimWindow = time.Duration(n) * unit; err != nil || ev.ClaimWindow < time.Minute || ev.ClaimWindow > 14*24*time.Hour {
		say("the time to claim freed seats must be a whole number of minutes or hours, from 1 minute to 14 days")
	}

	for _, c := range []struct {
		v, what string
		out     **time.Time
	}{{f.RegistrationCutoff, "registration", &ev.RegistrationCutoff}, {f.CancellationCutoff, "cancellation", &ev.CancellationCutoff}} {
		*c.out = nil
		if strings.TrimSpace(c.v) == "" {
			continue // at the start
		}
		at, ok := datetimeLocal(c.v, loc)
		switch {
		case !ok:
			say("give the date and time " + c.what + " closes, or leave it empty to close it when the event starts")
		case at.After(p.StartsAt):
			say(c.what + " must close by the time the event starts")
		default:
			*c.out = &at
		}
	}

	hours, err := strconv.ParseFloat(cmpOr(f.PromotionCutoff, "0"), 64)
	if err != nil || !(hours >= 0 && hours <= 365*24) { // NaN too
		say("stop offering freed seats between 0 and 8760 hours (a year) before the start")
	} else {
		ev.PromotionCutoff = time.Duration(hours * float64(time.Hour)).Round(time.Minute)
	}

	ev.ReminderOffsets = nil
	for _, c := range f.Reminders {
		if c.Checked {
			m, _ := strconv.Atoi(c.Value)
			ev.ReminderOffsets = append(ev.ReminderOffsets, time.Duration(m)*time.Minute)
		}
	}
	for _, part := range strings.Split(f.OtherReminders, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		if d, ok := durationOf(part); ok {
			if !slices.Contains(ev.ReminderOffsets, d) {
				ev.ReminderOffsets = append(ev.ReminderOffsets, d)
			}
		} else {
			say(fmt.Sprintf("%q is not a reminder time: write it like 2 days or 6 hours", strings.TrimSpace(part)))
		}
	}
	slices.SortFunc(ev.ReminderOffsets, func(a, b time.Duration) int { return cmp.Compare(b, a) })
	if len(ev.ReminderOffsets) > 5 {
		say("choose at most 5 reminders before the event")
	}
	for _, o := range ev.ReminderOffsets {
		if o < time.Minute || o > 90*24*time.Hour {
			say("each reminder must be between 1 minute and 90 days before the start")
			break
		}
	}
	ev.ReminderMorningOf = ""
	if f.Morning {
		if _, err := time.Parse("15:04", strings.TrimSpace(f.MorningAt)); err != nil {
			say("give the time of the morning reminder, such as 09:00")
		} else {
			ev.ReminderMorningOf = strings.TrimSpace(f.MorningAt)
		}
	}

	if ev.MaxGuests, err = strconv.Atoi(cmpOr(f.MaxGuests, "0")); err != nil || ev.MaxGuests < 0 || ev.MaxGuests > 100 {
		say("guests per registration must be a whole number from 0 to 100")
	}
	ev.WaitlistLimit = nil
	if v := strings.TrimSpace(f.WaitlistLimit); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 1000000 {
			say("the waitlist limit must be a whole number of people, or empty for no limit")
		} else {
			ev.WaitlistLimit = &n
		}
	}
	var ok bool
	if ev.PriceCents, ok = priceCents(f.Price); !ok {
		say("the price must be an amount such as 12.50, or empty for a free event")
	}
	switch f.Quiet {
	case "business":
		ev.TimeCriticalThroughQuiet = nil
	case "through", "hold":
		v := f.Quiet == "through"
		ev.TimeCriticalThroughQuiet = &v
	default:
		say("choose what happens to offers during quiet hours")
	}
	drop, err := strconv.Atoi(cmpOr(strings.TrimSpace(f.DropAfter), "0"))
	if err != nil || drop < 0 || drop > 100 {
		say("the missed offers that take someone off the waitlist must be a whole number from 0 (never) to 100")
	}
	switch f.Requeue {
	case nextup.RequeueKeep, nextup.RequeueBack:
		ev.Requeue = &nextup.Requeue{Policy: f.Requeue, DropAfter: drop}
	default:
		say("choose what a missed offer does to the person's place in line")
	}
	if len(bad) > 0 {
		msg := strings.ToUpper(bad[0][:1]) + bad[0][1:] + "."
		if len(bad) > 1 {
			msg = "Please check the settings: " + strings.Join(bad, "; ") + "."
		}
		return nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "%s", msg)
	}
	return nil
}

// eventFormFail shows the event page again with a refused form's error
// beside it (set puts the typed values and the words in place), keeping
// the status; what is not the organiser's to fix is the error page.
func (s *Server) eventFormFail(w http.ResponseWriter, r *http.Request, sc staffCtx, err error, set func(d *eventsData, words string)) {
	status := statusOf(err)
	if status >= 500 || status == http.StatusNotFound {
		s.errorPage(w, r, err)
		return
	}
	d, derr := s.eventPage(r, sc)
	if derr != nil {
		s.errorPage(w, r, derr)
		return
	}
	set(&d, formWords(err))
	s.renderStaff(w, status, "event", d)
}

// formWords says why a form was refused: each bad field and why, or the
// error's message.
func formWords(err error) string {
	var e *nextup.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return problemWords(err)
	}
	parts := make([]string, 0, len(e.Fields))
	for _, f := range e.Fields {
		parts = append(parts, strings.ReplaceAll(f.Field, "_", " ")+": "+f.Message)
	}
	return strings.Join(parts, "; ")
}

// eventDone sends the browser back to the top of the event page with a
// notice (the forms post to the page's anchors, so that a refused one is
// shown where it was filled in).
func eventDone(w http.ResponseWriter, r *http.Request, notice string) {
	http.Redirect(w, r, "/dash/events/"+r.PathValue("id")+"?notice="+queryWords(notice)+"#notice", http.StatusSeeOther)
}

// dashEventSettings is POST /dash/events/{id}/settings: the settings
// form, saved as PATCH /v1/events/{id} saves them (what the form does not
// show is kept as it is).
func (s *Server) dashEventSettings(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	loc := bizLoc(sc.Business)
	f := settingsFormOf(r, loc, sc.Business.Rules)
	sl, err := s.Svc.GetEvent(r.Context(), sc.Business.ID, r.PathValue("id"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	f.Currency = strings.ToUpper(cmpOr(sl.Event.Currency, nextup.DefaultEventCurrency))
	p := waitlist.EventParamsOf(sl)
	err = f.apply(&p, loc)
	var moves []nextup.Move
	if err == nil {
		_, moves, err = s.Svc.UpdateEvent(r.Context(), sc.Business.ID, sl.ID, p)
	}
	if err != nil {
		s.eventFormFail(w, r, sc, err, func(d *eventsData, words string) { d.Settings, d.SettingsError = f, words })
		return
	}
	notice := "The settings are saved."
	if len(moves) > 0 {
		notice += " " + describeMoves(moves)
	}
	eventDone(w, r, notice)
}

// dashAddRegistrant is POST /dash/events/{id}/registrations: a person
// registered by staff (a phone booking), as POST
// /v1/events/{id}/registrations registers them, with source "staff". They
// get the messages anyone registering gets.
func (s *Server) dashAddRegistrant(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	f := registrantForm{Name: strings.TrimSpace(r.PostFormValue("name")), Email: strings.TrimSpace(r.PostFormValue("email")),
		Phone: strings.TrimSpace(r.PostFormValue("phone")), Guests: strings.TrimSpace(r.PostFormValue("guests")),
		GuestNames: strings.TrimSpace(r.PostFormValue("guest_names"))}
	fail := func(err error) {
		s.eventFormFail(w, r, sc, err, func(d *eventsData, words string) { d.Add, d.AddError = f, words })
	}
	guests, err := strconv.Atoi(cmpOr(f.Guests, "0"))
	if err != nil {
		fail(nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "guests must be a whole number"))
		return
	}
	names := guestNamesOf(f.GuestNames)
	if f.Guests == "" {
		guests = len(names) // the names say how many
	}
	reg, _, err := s.Svc.Register(r.Context(), sc.Business.ID, r.PathValue("id"), waitlist.RegisterParams{Name: f.Name,
		Email: f.Email, Phone: f.Phone, Guests: guests, GuestNames: names, Source: "staff"})
	// The refusals that the event's settings decide say which setting.
	switch nextup.ErrorCode(err) {
	case nextup.CodeRegistrationClosed:
		err = nextup.Errorf(nextup.ErrConflict, nextup.CodeRegistrationClosed,
			"Registration for this event has closed. To take more people, change when registration closes under Settings.")
	case nextup.CodeWaitlistFull:
		err = nextup.Errorf(nextup.ErrConflict, nextup.CodeWaitlistFull,
			"The event is full and so is its waitlist. To take more people, raise the waitlist limit under Settings.")
	}
	if err != nil {
		fail(err)
		return
	}
	seats := "1 seat"
	if reg.Entry.PartySize != 1 {
		seats = fmt.Sprintf("%d seats", reg.Entry.PartySize)
	}
	var notice string
	switch reg.State {
	case waitlist.RegConfirmed:
		notice = fmt.Sprintf("%s is confirmed (%s).", reg.Entry.Name, seats)
	case waitlist.RegWaitlisted:
		notice = fmt.Sprintf("The event is full: %s is on the waitlist, number %d in line (%s).", reg.Entry.Name, reg.Position, seats)
	case waitlist.RegOffered:
		notice = fmt.Sprintf("%s's %s are held for them to pay; the link to pay is on its way to them.", reg.Entry.Name, seats)
	default:
		notice = fmt.Sprintf("%s is registered (%s).", reg.Entry.Name, regStateLabels[reg.State])
	}
	eventDone(w, r, notice)
}

// dashTestReminder is POST /dash/events/{id}/test-reminder: the event's
// reminder, sent to the organiser now (as POST
// /v1/events/{id}/reminders:test). When the business has no address for
// it yet, the form asks for one, and it is kept as the business's own
// email.
func (s *Server) dashTestReminder(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	fail := func(err error) {
		if nextup.ErrorCode(err) == nextup.CodeNoOwnerEmail {
			err = nextup.Errorf(nextup.ErrInvalid, nextup.CodeNoOwnerEmail, "Give the email address to send the test reminder to.")
		}
		s.eventFormFail(w, r, sc, err, func(d *eventsData, words string) { d.TestError = words })
	}
	if to := strings.TrimSpace(r.PostFormValue("owner_email")); to != "" && sc.Business.Profile.OwnerEmail == "" {
		if _, err := s.Svc.UpdateProfile(r.Context(), sc.Business.ID, waitlist.ProfilePatch{OwnerEmail: &to}); err != nil {
			if errors.Is(err, nextup.ErrInvalid) {
				err = nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "%q is not an email address.", to)
			}
			fail(err)
			return
		}
	}
	m, err := s.Svc.TestReminder(r.Context(), sc.Business.ID, r.PathValue("id"))
	if err != nil {
		fail(err)
		return
	}
	eventDone(w, r, "A test reminder is on its way to "+m.To+": it is what your guests get, with sample links.")
}

// dashEventLive is GET /dash/events/{id}/live: the event's counts as an
// HTML fragment, polled by its page every few seconds so that
// registrations, check-ins and promotions show without a reload.
func (s *Server) dashEventLive(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	st, err := s.Svc.EventStats(r.Context(), sc.Business.ID, r.PathValue("id"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.execute(w, http.StatusOK, staffTemplates["event"], "event-live", "event-live", eventsData{Counts: eventCountsOf(st)})
}
