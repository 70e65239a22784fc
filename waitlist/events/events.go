package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/slots"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Events are the use cases of events (RSVP): setting one up,
// registrations and the event's own waitlist, promotion, check-in and
// no-shows, the self-service cancel link, and the organiser's figures.
type Events struct {
	*core.Service
	// Slots makes the event's slot.
	Slots *slots.Slots
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Events) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// Events (RSVP). An event is a shared slot of kind event with its own
// waitlist; a registration is an entry for that event whose party is the
// person and their guests. The rules, in the order they are checked:
//
//   - Registration closes at the registration cutoff (default the start):
//     registration_closed. The same person (email, else phone) registered
//     and not cancelled: already_registered, naming that registration.
//   - Confirmed at once while the party fits the free seats and nobody
//     waiting could be offered them first (a waiting party that does not
//     fit the free seats is not ahead: the engine would skip it too). From
//     the promotion cutoff on, free seats go to whoever registers (walk-ins
//     and direct registration), waiting or not.
//   - Otherwise waitlisted with a position, unless the waitlist is at its
//     limit: waitlist_full.
//   - A paid event confirms nobody at once: a registration that would be
//     confirmed gets a hold (an offer) to pay for instead, and the booking
//     is made when the payment arrives (package payments).
//   - Cancelling a confirmed registration, until the cancellation cutoff
//     (cancellation_closed after it), frees its seats and the engine
//     promotes: the next registrants in fair order whose party fits the
//     free seats get an offer held for the event's claim window (a party
//     of 3 is skipped when 2 seats are free, and keeps its place; a single
//     behind it is offered). Leaving the waitlist is always possible.
//   - After the promotion cutoff, freed seats are not offered: the engine
//     hands the event back to staff with reason promotion_cutoff (audited),
//     and the seats stay open for walk-ins and direct registration.

// Registration states as organisers read them.
const (
	RegConfirmed  = "confirmed"
	RegWaitlisted = "waitlisted"
	RegOffered    = "offered" // a promoted registrant's seats are held for them to claim (or pay for)
	RegCancelled  = "cancelled"
	RegNoShow     = "no_show"
	RegExpired    = "expired"
)

// RegistrationStates lists them for validation and filters.
var RegistrationStates = []string{RegConfirmed, RegWaitlisted, RegOffered, RegCancelled, RegNoShow, RegExpired}

// EventParams are an event as the organiser sets it up.
type EventParams struct {
	Title    string
	StartsAt time.Time
	EndsAt   time.Time
	Capacity int
	Settings nextup.EventSettings
}

// NewEventParams are the defaults a new event starts from.
func NewEventParams() EventParams { return EventParams{Settings: *slots.DefaultEvent()} }

// EventParamsOf is an event's current setup, for a patch to change.
func EventParamsOf(sl nextup.Slot) EventParams {
	p := EventParams{Title: sl.Title, StartsAt: sl.StartsAt, EndsAt: sl.EndsAt, Capacity: sl.Capacity}
	if sl.Event != nil {
		p.Settings = *sl.Event
		p.Settings.ReminderOffsets = slices.Clone(sl.Event.ReminderOffsets)
		if sl.Event.Requeue != nil {
			q := *sl.Event.Requeue
			p.Settings.Requeue = &q
		}
	}
	return p
}

var (
	timeOfDay = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	currency  = regexp.MustCompile(`^[a-z]{3}$`)
)

// ValidateEvent checks an event's setup (and normalises its title and
// currency): a validation error naming every bad field, or nil.
func ValidateEvent(p *EventParams) error {
	p.Title = strings.TrimSpace(p.Title)
	ev := &p.Settings
	ev.Currency = strings.ToLower(strings.TrimSpace(ev.Currency))
	if ev.Currency == "" {
		ev.Currency = nextup.DefaultEventCurrency
	}
	var f []nextup.FieldError
	add := func(field, msg string) { f = append(f, nextup.FieldError{Field: field, Message: msg}) }
	if p.Title == "" || len(p.Title) > 200 {
		add("title", "is required, at most 200 characters")
	} else if fe := nextup.CheckName("title", p.Title, 0); fe != nil {
		f = append(f, *fe)
	}
	if p.StartsAt.IsZero() {
		add("starts_at", "is required")
	}
	if !p.EndsAt.After(p.StartsAt) {
		add("ends_at", "must be after starts_at")
	}
	if p.Capacity < 1 || p.Capacity > 100000 {
		add("capacity", "must be between 1 and 100000")
	}
	if ev.MaxGuests < 0 || ev.MaxGuests > 100 {
		add("max_guests_per_rsvp", "must be between 0 and 100")
	}
	if ev.WaitlistLimit != nil && (*ev.WaitlistLimit < 0 || *ev.WaitlistLimit > 1000000) {
		add("waitlist_limit", "must be between 0 and 1000000, or null for no limit")
	}
	for _, c := range []struct {
		field string
		t     *time.Time
	}{{"registration_cutoff", ev.RegistrationCutoff}, {"cancellation_cutoff", ev.CancellationCutoff}} {
		if c.t != nil && c.t.After(p.StartsAt) {
			add(c.field, "must not be after starts_at")
		}
	}
	if ev.PromotionCutoff < 0 || ev.PromotionCutoff > 365*24*time.Hour {
		add("promotion_cutoff_seconds", "must be between 0 and a year")
	}
	if ev.ClaimWindow < time.Minute || ev.ClaimWindow > 14*24*time.Hour {
		add("claim_window_seconds", "must be between 60 and 1209600 (14 days)")
	}
	if len(ev.ReminderOffsets) > 5 {
		add("reminder_offsets_seconds", "at most 5 reminders")
	}
	for _, o := range ev.ReminderOffsets {
		if o < time.Minute || o > 90*24*time.Hour {
			add("reminder_offsets_seconds", "each must be between 60 and 7776000 (90 days)")
			break
		}
	}
	if ev.ReminderMorningOf != "" && !timeOfDay.MatchString(ev.ReminderMorningOf) {
		add("reminder_morning_of", `must be "HH:MM" (24-hour clock), or "" for none`)
	}
	if ev.PriceCents < 0 || ev.PriceCents > 100_000_000 {
		add("price_cents", "must be between 0 and 100000000")
	}
	if !currency.MatchString(ev.Currency) {
		add("currency", "must be a three-letter ISO 4217 code such as eur")
	}
	ev.Slug = strings.ToLower(strings.TrimSpace(ev.Slug))
	if ev.Slug != "" && !eventSlug.MatchString(ev.Slug) {
		add("slug", "must be 1 to 64 lower-case letters, digits and dashes, not starting or ending with a dash")
	}
	switch ev.Public.ShowSeats {
	case "", nextup.ShowSeatsExact, nextup.ShowSeatsFew, nextup.ShowSeatsNone: // "": exact
	default:
		add("public.show_seats", `must be "exact", "few" or "none"`)
	}
	ev.Public.Place, ev.Public.Notes = strings.TrimSpace(ev.Public.Place), strings.TrimSpace(ev.Public.Notes)
	if fe := nextup.CheckName("public.place", ev.Public.Place, 200); fe != nil {
		f = append(f, *fe)
	}
	if fe := nextup.CheckText("public.notes", ev.Public.Notes, 2000); fe != nil {
		f = append(f, *fe)
	}
	if ev.Requeue != nil {
		f = append(f, ev.Requeue.Validate("requeue")...)
	}
	if len(f) > 0 {
		return core.Invalid(f...)
	}
	return nil
}

// CreateEvent adds an event: a shared slot of kind event with nothing
// booked, its settings and its own waitlist.
func (s *Events) CreateEvent(ctx context.Context, businessID string, p EventParams) (nextup.Slot, error) {
	if err := ValidateEvent(&p); err != nil {
		return nextup.Slot{}, err
	}
	// Checked before the event is made, not in its transaction: two
	// events created at once with one slug may both get it (rare; the
	// public page then shows the first).
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		return slugFree(ctx, tx, s.Clock.Now(), businessID, "", p.Settings.Slug)
	}); err != nil {
		return nextup.Slot{}, err
	}
	zero := 0
	ev := p.Settings
	sl, _, err := s.Slots.CreateSlot(ctx, businessID, slots.SlotParams{Kind: nextup.KindEvent, Title: p.Title, StartsAt: p.StartsAt,
		EndsAt: p.EndsAt, Capacity: p.Capacity, Seating: nextup.SeatingShared, BookedSeats: &zero, Event: &ev})
	return sl, err
}

// UpdateEvent changes an event's title, capacity and settings (p is the
// whole setup: EventParamsOf with the patch applied). A change of time is
// refused: confirmations, invites and reminders went out for the time it
// has. Growing capacity promotes in batch; shrinking below the seats taken
// is capacity_below_taken.
func (s *Events) UpdateEvent(ctx context.Context, businessID, eventID string, p EventParams) (nextup.Slot, []nextup.Move, error) {
	if err := ValidateEvent(&p); err != nil {
		return nextup.Slot{}, nil, err
	}
	var out nextup.Slot
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		sl, err := w.eventOf(ctx, businessID, eventID)
		if err != nil {
			return err
		}
		if !p.StartsAt.Equal(sl.StartsAt) || !p.EndsAt.Equal(sl.EndsAt) {
			return core.Invalid(nextup.FieldError{Field: "starts_at", Message: "an event's time cannot be changed once people are told it; create a new event"})
		}
		bi, err := w.Business(ctx, sl.BusinessID)
		if err != nil {
			return err
		}
		if p.Title != sl.Title || !sameSettings(sl.Event, &p.Settings) {
			if err := w.slugFree(ctx, sl.BusinessID, sl.ID, p.Settings.Slug); err != nil {
				return err
			}
			if err := w.Tx.SlotEventSet(ctx, sl.ID, p.Title, p.Settings); err != nil {
				return fmt.Errorf("update event %s: %w", sl.ID, err)
			}
			if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectSlot, SubjectID: sl.ID, SlotID: sl.ID,
				From: "settings", To: "settings", Reason: "event_updated", Detail: eventDetail(p)}); err != nil {
				return err
			}
			if sl, err = w.Tx.SlotGet(ctx, sl.ID); err != nil {
				return err
			}
		}
		if p.Capacity != sl.Capacity {
			if err := slots.ResizeIn(ctx, w.Work, sl, p.Capacity); err != nil {
				return err
			}
		}
		moves = w.Moves
		out, err = w.Tx.SlotGet(ctx, sl.ID)
		return err
	})
	return out, moves, err
}

func sameSettings(a, b *nextup.EventSettings) bool {
	if a == nil || b == nil {
		return a == b
	}
	ptrEq := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	intEq := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.MaxGuests == b.MaxGuests && intEq(a.WaitlistLimit, b.WaitlistLimit) &&
		ptrEq(a.RegistrationCutoff, b.RegistrationCutoff) && ptrEq(a.CancellationCutoff, b.CancellationCutoff) &&
		a.PromotionCutoff == b.PromotionCutoff && a.ClaimWindow == b.ClaimWindow &&
		slices.Equal(a.ReminderOffsets, b.ReminderOffsets) && a.ReminderMorningOf == b.ReminderMorningOf &&
		a.PriceCents == b.PriceCents && a.Currency == b.Currency &&
		a.Slug == b.Slug && a.Public == b.Public && boolEq(a.TimeCriticalThroughQuiet, b.TimeCriticalThroughQuiet) &&
		(a.Requeue == nil) == (b.Requeue == nil) && (a.Requeue == nil || *a.Requeue == *b.Requeue)
}

func boolEq(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }

// slugReuseAfter is how long after its start an event keeps its slug to
// itself.
const slugReuseAfter = 7 * 24 * time.Hour

// eventSlug is the form of an event's slug.
var eventSlug = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// ValidSlug reports whether s has the form of an event's slug (the
// event's checks refuse any other but ""), for a form that must check it
// before writing anything.
func ValidSlug(s string) bool { return eventSlug.MatchString(s) }

// slugFree refuses a slug another event of the business has (within the
// transaction that sets it).
func (w *work) slugFree(ctx context.Context, businessID, eventID, slug string) error {
	return slugFree(ctx, w.Tx, w.Now, businessID, eventID, slug)
}

func slugFree(ctx context.Context, tx nextup.Tx, now time.Time, businessID, eventID, slug string) error {
	if slug == "" {
		return nil
	}
	// Among the events not over yet: a past event's slug may be used
	// again (next year's party).
	evs, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: businessID, From: now.Add(-slugReuseAfter)})
	if err != nil {
		return err
	}
	for _, e := range evs {
		if e.ID != eventID && e.Kind == nextup.KindEvent && e.Event != nil && e.Event.Slug == slug {
			return &nextup.Error{Kind: nextup.ErrConflict, Code: nextup.CodeSlugTaken, Message: "another event of this business has the slug " + slug,
				Fields: []nextup.FieldError{{Field: "slug", Message: "is taken by another event"}}}
		}
	}
	return nil
}

// EventByRef finds an event of the business by its slug or its id: the
// public page's address.
func (s *Events) EventByRef(ctx context.Context, businessID, ref string) (nextup.Slot, error) {
	var out nextup.Slot
	err := s.Read(ctx, func(tx nextup.Tx) error {
		if sl, err := tx.SlotGet(ctx, ref); err == nil && sl.BusinessID == businessID && sl.Kind == nextup.KindEvent {
			out = sl
			return nil
		}
		evs, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: businessID, From: s.Clock.Now().Add(-slugReuseAfter)})
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Kind == nextup.KindEvent && e.Event != nil && e.Event.Slug != "" && e.Event.Slug == strings.ToLower(ref) {
				out = e
				return nil
			}
		}
		return core.NotFound("event", ref, nextup.ErrNotFound)
	})
	return out, err
}

// registeredDetail is a registration's audit row detail: where it joins
// the event's line (core.EntryFacts) and its guests.
func registeredDetail(e nextup.Entry, guests int) map[string]any {
	d := core.EntryFacts(e)
	d["guests"] = guests
	return d
}

func eventDetail(p EventParams) map[string]any {
	ev := p.Settings
	d := map[string]any{"title": p.Title, "max_guests": ev.MaxGuests, "promotion_cutoff_seconds": int64(ev.PromotionCutoff / time.Second),
		"claim_window_seconds": int64(ev.ClaimWindow / time.Second), "price_cents": ev.PriceCents, "currency": ev.Currency}
	if ev.WaitlistLimit != nil {
		d["waitlist_limit"] = *ev.WaitlistLimit
	}
	if ev.Requeue != nil {
		d["requeue"] = *ev.Requeue
	}
	return d
}

// eventOf reads (and locks) an event of a business; anything else is not found.
func (w *work) eventOf(ctx context.Context, businessID, eventID string) (nextup.Slot, error) {
	sl, err := w.SlotOf(ctx, businessID, eventID)
	if err != nil {
		return sl, err
	}
	if sl.Kind != nextup.KindEvent {
		return sl, core.NotFound("event", eventID, nil)
	}
	if sl.Event == nil {
		sl.Event = slots.DefaultEvent()
	}
	return sl, nil
}

// ListEvents lists a business's events by start.
func (s *Events) ListEvents(ctx context.Context, f nextup.SlotFilter) ([]nextup.Slot, error) {
	var out []nextup.Slot
	err := s.Read(ctx, func(tx nextup.Tx) error {
		all, err := tx.SlotList(ctx, f)
		for _, sl := range all {
			if sl.Kind == nextup.KindEvent {
				out = append(out, sl)
			}
		}
		return err
	})
	return out, err
}

// GetEvent returns an event of a business.
func (s *Events) GetEvent(ctx context.Context, businessID, eventID string) (nextup.Slot, error) {
	var sl nextup.Slot
	err := s.Read(ctx, func(tx nextup.Tx) error {
		w := wrap(s.WorkIn(tx))
		var err error
		sl, err = w.eventOf(ctx, businessID, eventID)
		return err
	})
	return sl, err
}

// RegisterParams are a registration as the person gives it.
type RegisterParams struct {
	Name    string
	Email   string
	Phone   string
	Channel nextup.Channel
	Guests  int
	Source  string // default "api"
	// Notify sends a waitlisted registrant the waitlist confirmation
	// (their place, what happens next, how to leave, their status link):
	// a guest who registered through the public page has no other way
	// to find their status page again.
	Notify bool
	// GuestNames are the names given for the guests, in order: at most
	// Guests of them, each optional ("" for an unnamed guest).
	GuestNames []string
}

// Registration is a person's registration for an event as organisers and
// the person see it.
type Registration struct {
	Entry    nextup.Entry
	State    string // one of RegistrationStates
	Position int    // on the waitlist, 1-based; 0 when not waiting
	Booking  *nextup.Booking
	Offer    *nextup.Offer // a live hold
	// Payment is a paid event's latest checkout for the live hold or the
	// booking (nil for a free event, or nothing to pay yet).
	Payment *nextup.Payment
	// StatusToken is the person's status link secret, known only to the
	// request that registered them.
	StatusToken string
	// GuestList is the guests the person brings, one per guest (Guests),
	// in place order, with their names and check-ins (guests.go).
	GuestList []nextup.Guest
}

// Guests is the number of guests the person brings.
func (r Registration) Guests() int { return max(r.Entry.PartySize-1, 0) }

func registrationState(e nextup.Entry, b *nextup.Booking) string {
	if b != nil && b.State == nextup.BookingNoShow {
		return RegNoShow
	}
	switch e.State {
	case nextup.EntryWaiting:
		return RegWaitlisted
	case nextup.EntryOffered:
		return RegOffered
	case nextup.EntryExpired:
		return RegExpired
	case nextup.EntryBooked:
		if b != nil && b.State == nextup.BookingCancelled {
			return RegCancelled
		}
		return RegConfirmed
	}
	return RegCancelled
}

// Register registers a person for an event (see the rules at the top of
// this file) and returns the registration with the engine's moves.
func (s *Events) Register(ctx context.Context, businessID, eventID string, p RegisterParams) (Registration, []nextup.Move, error) {
	jp := entries.JoinParams{Name: p.Name, Email: p.Email, Phone: p.Phone, Channel: p.Channel, EventID: eventID, Source: p.Source}
	f := entries.ValidateContact(&jp)
	if p.Guests < 0 {
		f = append(f, nextup.FieldError{Field: "guests", Message: "must not be negative"})
	}
	names, nf := guestNames(p.GuestNames, p.Guests)
	f = append(f, nf...)
	if len(f) > 0 {
		return Registration{}, nil, core.Invalid(f...)
	}
	if jp.Source == "" {
		jp.Source = "api"
	}
	var out Registration
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorCustomer
		var err error
		out, err = w.register(ctx, businessID, eventID, jp, p.Guests, names, p.Notify)
		if err == nil && p.Notify && out.State == RegWaitlisted {
			err = w.queueWaitlisted(ctx, out)
		}
		moves = w.Moves
		return err
	})
	var ne *nextup.Error
	switch {
	case err == nil:
		if out.State == RegWaitlisted && out.Position == 0 {
			out.Position = s.placeAfter(ctx, out.Entry)
		}
		// A paid event's registration goes on to make its checkout, a call
		// that ends the request's phase: a resumed run of the request must
		// answer with this registration and its status link, not with
		// already_registered.
		s.StashNote(ctx, registeredNote(out.Entry.ID), out.StatusToken)
	case errors.As(err, &ne) && ne.Code == nextup.CodeAlreadyRegistered:
		id, _ := ne.Data["id"].(string)
		if token := s.Stashed(ctx, registeredNote(id)); token != "" {
			// This request registered them, in a run that died after
			// committing it.
			out, err = s.GetRegistration(ctx, businessID, eventID, id)
			out.StatusToken = token
			return out, nil, err
		}
	}
	return out, moves, err
}

// MessageWaitlisted is the kind of an event's waitlist confirmation.
const MessageWaitlisted = "waitlisted"

// queueWaitlisted queues the waitlist confirmation of a registration
// that went to the waitlist.
func (w *work) queueWaitlisted(ctx context.Context, r Registration) error {
	e := r.Entry
	ch, ok := engine.ChooseChannel(e, nil)
	if !ok {
		return nil
	}
	bi, err := w.Business(ctx, e.BusinessID)
	if err != nil {
		return err
	}
	sl, err := w.Tx.SlotGet(ctx, e.EventID)
	if err != nil {
		return fmt.Errorf("event %s: %w", e.EventID, err)
	}
	m := nextup.Message{BusinessID: bi.ID, Kind: MessageWaitlisted, Channel: ch, To: templates.AddressOf(e, ch), EntryID: e.ID}
	w.s.Stoppable(bi.Business, &m)
	templates.Compose(bi.Business, templates.TemplateWaitlisted, templates.TemplateData{Name: e.Name, Service: templates.SlotService(sl),
		When: templates.FormatWhen(sl.StartsAt, bi.Loc), Place: templates.PlaceInLine(bi.Rules, r.Position),
		StatusLink: w.s.StatusURL(r.StatusToken)}, &m)
	return w.Queue(ctx, m)
}

// MessageStatusLink is the kind of the new status link sent to a
// registrant who confirmed their contact again (ReissueStatusLink).
const MessageStatusLink = "status_link"

// ReissueStatusLink gives a registration a new status link and returns
// its token; the old link stops working (only its hash was kept, so it
// cannot be shown again). It is for a person who has just proved their
// contact again (the public page's confirmation link or texted code) and
// found themselves already registered: they are taken to their status
// page, and the new link goes to them by ch, audited on the entry.
func (s *Events) ReissueStatusLink(ctx context.Context, businessID, eventID, regID string, ch nextup.Channel) (string, error) {
	var token string
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorCustomer
		sl, e, err := w.registrationEntry(ctx, businessID, eventID, regID)
		if err != nil {
			return err
		}
		bi, err := w.Business(ctx, sl.BusinessID)
		if err != nil {
			return err
		}
		var hash string
		token, hash = w.s.Random.Token()
		if err := w.Tx.EntrySetStatusHash(ctx, e.ID, hash, w.Now); err != nil {
			return fmt.Errorf("new status link of %s: %w", e.ID, err)
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID, SlotID: sl.ID,
			From: string(e.State), To: string(e.State), Reason: "status_link_reissued", Detail: map[string]any{"channel": ch}}); err != nil {
			return err
		}
		to := templates.AddressOf(e, ch)
		if to == "" {
			return nil
		}
		m := nextup.Message{BusinessID: bi.ID, Kind: MessageStatusLink, Channel: ch, To: to, EntryID: e.ID}
		w.s.Stoppable(bi.Business, &m)
		templates.Compose(bi.Business, templates.TemplateStatusLink, templates.TemplateData{Name: e.Name, Service: templates.SlotService(sl),
			When: templates.FormatWhen(sl.StartsAt, bi.Loc), StatusLink: w.s.StatusURL(token)}, &m)
		return w.Queue(ctx, m)
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// registeredNote names the note that keeps a registration's status token
// for a resumed run of the request that made it.
func registeredNote(entryID string) string { return "registered:" + entryID }

// placeAfter is the place in line of a registration that went to the
// waitlist, read after its transaction committed: a registration holds its
// event's row lock from its first statement to its commit, so that every
// registration of a crowd waits for the one before it, and the place is
// not read while it does. It is the place as of that read, as the status
// page shows it; 0 (none shown) when the entry moved on meanwhile or the
// read failed, since the registration stands either way.
func (s *Events) placeAfter(ctx context.Context, e nextup.Entry) int {
	pos := 0
	_ = s.Read(ctx, func(tx nextup.Tx) error {
		now, err := tx.EntryGet(ctx, e.ID)
		if err != nil || now.State != nextup.EntryWaiting {
			return err
		}
		pos, err = tx.EntryPosition(ctx, now)
		return err
	})
	return pos
}

// register makes a registration. The place in line of one that goes to
// the waitlist is read here only when its confirmation, which says it,
// is sent in the same transaction (notify); otherwise Register reads it
// after the commit (placeAfter).
func (w *work) register(ctx context.Context, businessID, eventID string, p entries.JoinParams, guests int, names []string, notify bool) (Registration, error) {
	sl, err := w.eventOf(ctx, businessID, eventID)
	if err != nil {
		return Registration{}, err
	}
	bi, err := w.Business(ctx, sl.BusinessID)
	if err != nil {
		return Registration{}, err
	}
	if !w.Now.Before(sl.RegistrationClosesAt()) {
		return Registration{}, nextup.Errorf(nextup.ErrConflict, nextup.CodeRegistrationClosed, "registration for this event closed at %s",
			sl.RegistrationClosesAt().In(bi.Loc).Format(time.RFC3339))
	}
	if guests > sl.Event.MaxGuests {
		return Registration{}, core.Invalid(nextup.FieldError{Field: "guests", Message: fmt.Sprintf("at most %d guests per registration", sl.Event.MaxGuests)})
	}
	party := 1 + guests
	if party > sl.Capacity {
		return Registration{}, core.Invalid(nextup.FieldError{Field: "guests", Message: fmt.Sprintf("the event has %d seats in all", sl.Capacity)})
	}
	token, hash := w.s.Random.Token()
	e := nextup.Entry{
		ID: w.s.Random.ID("ent"), BusinessID: sl.BusinessID, Name: p.Name, Email: p.Email, Phone: p.Phone, Channel: p.Channel,
		EventID: sl.ID, PartySize: party, Source: p.Source, JoinedAt: w.Now, State: nextup.EntryWaiting, StatusHash: hash, UpdatedAt: w.Now,
	}
	// A registration whose booking ended left the event with it
	// (registrationEnded), so any waiting, offered or booked entry of the
	// person is a live registration: one indexed lookup finds it.
	if dup, err := w.Tx.EntryByContact(ctx, sl.BusinessID, e.ContactKey(), "", sl.ID,
		[]nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered, nextup.EntryBooked}); err == nil {
		r, err := w.registrationOf(ctx, sl, dup)
		if err != nil {
			return Registration{}, err
		}
		data := map[string]any{"id": r.Entry.ID, "state": r.State}
		if r.Position > 0 {
			data["position"] = r.Position
		}
		return Registration{}, &nextup.Error{Kind: nextup.ErrConflict, Code: nextup.CodeAlreadyRegistered,
			Message: "this person is already registered for this event", Data: data}
	} else if !errors.Is(err, nextup.ErrNotFound) {
		return Registration{}, err
	}

	seatsNow := sl.FreeSeats() >= party
	if seatsNow && !sl.PromotionClosed(w.Now) {
		ahead, err := w.anyoneAhead(ctx, bi, sl)
		if err != nil {
			return Registration{}, err
		}
		seatsNow = !ahead
	}
	if !seatsNow && sl.Event.WaitlistLimit != nil {
		limit := *sl.Event.WaitlistLimit
		waiting, err := w.Tx.EntryList(ctx, nextup.EntryFilter{BusinessID: sl.BusinessID, EventID: sl.ID, State: nextup.EntryWaiting, Limit: limit})
		if err != nil {
			return Registration{}, err
		}
		if len(waiting) >= limit {
			return Registration{}, nextup.Errorf(nextup.ErrConflict, nextup.CodeWaitlistFull, "the event is full and its waitlist too (%d waiting)", limit)
		}
	}
	if seatsNow && !sl.Event.Paid() {
		e.State = nextup.EntryBooked
	}
	if e, err = w.Tx.EntryCreate(ctx, e); err != nil {
		return Registration{}, fmt.Errorf("create registration: %w", err)
	}
	w.Registering = e.ID
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID, SlotID: sl.ID,
		To: string(e.State), Reason: "registered", Detail: registeredDetail(e, guests)}); err != nil {
		return Registration{}, err
	}
	var booked *nextup.Booking
	switch {
	case e.State == nextup.EntryBooked:
		b, err := w.bookDirect(ctx, bi, sl, e)
		if err != nil {
			return Registration{}, err
		}
		booked = &b
		if err := w.Dedupe(ctx, bi, e, sl); err != nil { // the person's other lists (the rules' dedupe)
			return Registration{}, err
		}
	case seatsNow: // a paid event: a hold to pay for, at once
		if err := w.offerNow(ctx, bi, sl, e, true); err != nil {
			return Registration{}, err
		}
	default:
		// Waitlisted. The engine decides the event again: free seats that
		// nobody ahead could take (a party too big for them) may still be
		// offered to someone behind, this person included.
		if sl.FreeSeats() > 0 && !sl.HandedBack {
			if err := w.DecideSlot(ctx, sl.ID); err != nil {
				return Registration{}, err
			}
		}
	}
	if err := w.createGuests(ctx, e, names); err != nil {
		return Registration{}, err
	}
	if e, err = w.Tx.EntryGet(ctx, e.ID); err != nil {
		return Registration{}, err
	}
	var r Registration
	switch {
	case booked != nil && e.State == nextup.EntryBooked && !sl.Event.Paid():
		// Confirmed at once: its booking is the one just made, not to be
		// found again among every booking of the event.
		r = Registration{Entry: e, Booking: booked, State: registrationState(e, booked)}
		r.GuestList, err = w.guestsOf(ctx, e)
	case e.State == nextup.EntryWaiting && !notify:
		r = Registration{Entry: e, State: RegWaitlisted}
		r.GuestList, err = w.guestsOf(ctx, e)
	default:
		r, err = w.registrationOf(ctx, sl, e)
	}
	r.StatusToken = token
	return r, err
}

// anyoneAhead reports whether a waiting registrant of the event could be
// offered its free seats now: one whose party fits them and who was not
// offered this event's seats before (the engine never offers them again,
// unless a lapse moved them to the back since: engine.Offered).
func (w *work) anyoneAhead(ctx context.Context, bi *core.Biz, sl nextup.Slot) (bool, error) {
	history, err := w.Tx.OfferListBySlot(ctx, sl.ID)
	if err != nil {
		return false, err
	}
	offered := engine.NewOffered(history)
	var readErr error
	ahead := false
	capDay := bi.Rules.MaxOffersPerPersonPerDay
	for c := range w.Candidates(ctx, bi, sl, &readErr) {
		// Only someone the engine would offer the seats to is ahead: not
		// one it skips for want of a channel or for the daily cap, nor
		// one offered the event already in their place in line.
		_, reachable := engine.ChooseChannel(c.Entry, c.Suppressed)
		if !offered.Excludes(c.Entry) && reachable && (capDay <= 0 || c.OffersToday < capDay) {
			ahead = true
			break
		}
	}
	return ahead, readErr
}

// bookDirect books a registrant who was confirmed at once: the seats, the
// booking, its audit row, the confirmation with the invite and the cancel
// link, and the reminders.
func (w *work) bookDirect(ctx context.Context, bi *core.Biz, sl nextup.Slot, e nextup.Entry) (nextup.Booking, error) {
	slot, err := w.Tx.SlotSeats(ctx, sl.ID, nextup.SeatDelta{Booked: e.PartySize})
	if err != nil {
		if errors.Is(err, nextup.ErrConflict) {
			return nextup.Booking{}, core.ErrRedecide
		}
		return nextup.Booking{}, fmt.Errorf("book %d seats of event %s: %w", e.PartySize, sl.ID, err)
	}
	calToken, calHash := w.s.Random.Token()
	b := nextup.Booking{ID: w.s.Random.ID("bkg"), BusinessID: sl.BusinessID, SlotID: sl.ID, EntryID: e.ID, Name: e.Name,
		Seats: e.PartySize, State: nextup.BookingBooked, TokenHash: calHash, CreatedAt: w.Now}
	if err := w.Tx.BookingCreate(ctx, b); err != nil {
		return b, fmt.Errorf("create booking: %w", err)
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: b.ID, SlotID: sl.ID,
		To: string(nextup.BookingBooked), Reason: "registered", Detail: map[string]any{"entry_id": e.ID, "seats": b.Seats}}); err != nil {
		return b, err
	}
	ch, err := w.ChannelFor(ctx, e)
	if err != nil {
		return b, err
	}
	if ch != "" {
		if err := w.Queue(ctx, core.ConfirmationMessage(w.s, bi, slot, e, ch, nextup.Offer{}, b, calToken)); err != nil {
			return b, err
		}
	}
	return b, slots.ScheduleReminders(ctx, w.Work, bi, slot, b)
}

// offerNow holds the event's seats for one registrant at once, outside the
// engine's order: a paid event's registrant who would be confirmed (the
// hold is what they pay for: sent now, they asked for it), or staff
// promoting someone by hand (an ordinary offer, quiet hours and all).
func (w *work) offerNow(ctx context.Context, bi *core.Biz, sl nextup.Slot, e nextup.Entry, direct bool) error {
	ch, err := w.ChannelFor(ctx, e)
	if err != nil {
		return err
	}
	if ch == "" {
		return core.Invalid(nextup.FieldError{Field: "email", Message: "this person cannot be reached: every contact of theirs is opted out"})
	}
	rules := engine.RulesFor(bi.Rules, sl)
	state, sendAt, expiresAt, ok := engine.OfferWindow(w.Now, sl.StartsAt, rules, bi.Loc)
	if direct {
		state, sendAt, expiresAt = nextup.OfferOffered, w.Now, w.Now.Add(rules.WindowFor(sl.StartsAt.Sub(w.Now)))
		if limit := sl.StartsAt.Add(-rules.MinLead); expiresAt.After(limit) {
			expiresAt = limit
		}
		ok = expiresAt.After(w.Now)
	}
	if !ok {
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeRegistrationClosed, "the event starts too soon to hold seats for anyone")
	}
	return w.MakeOffer(ctx, bi, sl, nextup.MoveOffer, engine.Offer{EntryID: e.ID, Seats: e.PartySize, PartySize: e.PartySize,
		Channel: ch, State: state, SendAt: sendAt, ExpiresAt: expiresAt}, e)
}

// registrationOf is an entry of the event as a registration: its booking
// (the latest), its live offer and its place.
func (w *work) registrationOf(ctx context.Context, sl nextup.Slot, e nextup.Entry) (Registration, error) {
	r := Registration{Entry: e}
	switch e.State {
	case nextup.EntryBooked, nextup.EntryLeft:
		bs, err := w.Tx.BookingListBySlot(ctx, sl.ID)
		if err != nil {
			return r, err
		}
		r.Booking = latestBooking(bs, e.ID)
	case nextup.EntryOffered:
		o, err := w.Tx.OfferLiveByEntry(ctx, e.ID)
		if err != nil && !errors.Is(err, nextup.ErrNotFound) {
			return r, err
		}
		if err == nil {
			r.Offer = &o
		}
	case nextup.EntryWaiting:
		pos, err := w.Tx.EntryPosition(ctx, e)
		if err != nil {
			return r, err
		}
		r.Position = pos
	}
	r.State = registrationState(e, r.Booking)
	var err error
	if r.GuestList, err = w.guestsOf(ctx, e); err != nil {
		return r, err
	}
	return r, w.paymentOf(ctx, sl, &r)
}

// paymentOf sets a paid event's registration's latest payment: of its live
// hold, or of the offer its booking came from.
func (w *work) paymentOf(ctx context.Context, sl nextup.Slot, r *Registration) error {
	offerID := ""
	switch {
	case !sl.Event.Paid():
		return nil
	case r.Offer != nil:
		offerID = r.Offer.ID
	case r.Booking != nil:
		offerID = r.Booking.OfferID
	}
	if offerID == "" {
		return nil
	}
	ps, err := w.Tx.PaymentListByOffer(ctx, offerID)
	if err != nil || len(ps) == 0 {
		return err
	}
	for i := range ps { // a paid one, else the newest
		if ps[i].State == nextup.PaymentPaid {
			r.Payment = &ps[i]
			return nil
		}
	}
	r.Payment = &ps[0]
	return nil
}

// latestBooking is the entry's booking among bs: a booked one if any,
// else the latest.
func latestBooking(bs []nextup.Booking, entryID string) *nextup.Booking {
	var found *nextup.Booking
	for i := range bs {
		if bs[i].EntryID != entryID {
			continue
		}
		if found == nil || found.State != nextup.BookingBooked {
			found = &bs[i]
		}
	}
	return found
}

// GetRegistration returns one registration of an event.
func (s *Events) GetRegistration(ctx context.Context, businessID, eventID, regID string) (Registration, error) {
	var r Registration
	err := s.Read(ctx, func(tx nextup.Tx) error {
		w := wrap(s.WorkIn(tx))
		sl, e, err := w.registrationEntry(ctx, businessID, eventID, regID)
		if err != nil {
			return err
		}
		r, err = w.registrationOf(ctx, sl, e)
		return err
	})
	return r, err
}

func (w *work) registrationEntry(ctx context.Context, businessID, eventID, regID string) (nextup.Slot, nextup.Entry, error) {
	sl, err := w.eventOf(ctx, businessID, eventID)
	if err != nil {
		return sl, nextup.Entry{}, err
	}
	e, err := w.Tx.EntryGet(ctx, regID)
	if err != nil || e.EventID != sl.ID || e.BusinessID != sl.BusinessID {
		return sl, e, core.NotFound("registration", regID, err)
	}
	return sl, e, nil
}

// CancelRegistration cancels a registration: a confirmed one until the
// cancellation cutoff (its seats are freed and the engine promotes), a
// waitlisted one or a live hold at any time. Cancelling twice is
// cancelling once.
func (s *Events) CancelRegistration(ctx context.Context, businessID, eventID, regID, actor string) (Registration, []nextup.Move, error) {
	var out Registration
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = actor
		sl, e, err := w.registrationEntry(ctx, businessID, eventID, regID)
		if err != nil {
			return err
		}
		if out, err = w.cancelRegistration(ctx, sl, e); err != nil {
			return err
		}
		moves = w.Moves
		return nil
	})
	return out, moves, err
}

func (w *work) cancelRegistration(ctx context.Context, sl nextup.Slot, e nextup.Entry) (Registration, error) {
	switch e.State {
	case nextup.EntryWaiting, nextup.EntryOffered:
		var left nextup.Entry
		var moves []nextup.Move
		if err := entries.LeaveIn(ctx, w.Work, e, &left, &moves); err != nil {
			return Registration{}, err
		}
		return w.registrationOf(ctx, sl, left)
	case nextup.EntryBooked:
		r, err := w.registrationOf(ctx, sl, e)
		if err != nil {
			return r, err
		}
		if r.State != RegConfirmed || r.Booking == nil {
			return r, nil // cancelled or marked a no-show already
		}
		if !w.Now.Before(sl.CancellationClosesAt()) {
			bi, err := w.Business(ctx, sl.BusinessID)
			if err != nil {
				return r, err
			}
			return r, nextup.Errorf(nextup.ErrConflict, nextup.CodeCancellationClosed, "cancellations for this event closed at %s",
				sl.CancellationClosesAt().In(bi.Loc).Format(time.RFC3339))
		}
		if _, err := slots.EndBookingIn(ctx, w.Work, *r.Booking, nextup.BookingCancelled, slots.ReasonCancellation); err != nil {
			return r, err // the registration leaves with its booking (registrationEnded)
		}
		if e, err = w.Tx.EntryGet(ctx, e.ID); err != nil {
			return r, err
		}
		return w.registrationOf(ctx, sl, e)
	}
	return w.registrationOf(ctx, sl, e) // left or expired: nothing to cancel
}

// Registrations is an event's guest list: every registration, in the
// order they registered (state "" for all, else one of RegistrationStates).
func (s *Events) Registrations(ctx context.Context, businessID, eventID, state string) (nextup.Slot, []Registration, error) {
	if state != "" && !slices.Contains(RegistrationStates, state) {
		return nextup.Slot{}, nil, core.Invalid(nextup.FieldError{Field: "state", Message: "must be one of " + strings.Join(RegistrationStates, ", ")})
	}
	var sl nextup.Slot
	var out []Registration
	err := s.Read(ctx, func(tx nextup.Tx) error {
		w := wrap(s.WorkIn(tx))
		var err error
		if sl, err = w.eventOf(ctx, businessID, eventID); err != nil {
			return err
		}
		out, err = w.registrations(ctx, sl)
		return err
	})
	if state != "" {
		out = slices.DeleteFunc(out, func(r Registration) bool { return r.State != state })
	}
	return sl, out, err
}

// registrations reads every registration of an event in one pass: the
// waiting ones in fair order give the positions.
func (w *work) registrations(ctx context.Context, sl nextup.Slot) ([]Registration, error) {
	var entries []nextup.Entry
	for _, st := range []nextup.EntryState{"", nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired} {
		es, err := w.Tx.EntryList(ctx, nextup.EntryFilter{BusinessID: sl.BusinessID, EventID: sl.ID, State: st})
		if err != nil {
			return nil, err
		}
		entries = append(entries, es...)
	}
	bookings, err := w.Tx.BookingListBySlot(ctx, sl.ID)
	if err != nil {
		return nil, err
	}
	offers, err := w.Tx.OfferListBySlot(ctx, sl.ID)
	if err != nil {
		return nil, err
	}
	guests, err := w.guestsBySlot(ctx, sl)
	if err != nil {
		return nil, err
	}
	live := map[string]*nextup.Offer{}
	for i := range offers {
		if offers[i].State.Live() {
			live[offers[i].EntryID] = &offers[i]
		}
	}
	out := make([]Registration, 0, len(entries))
	pos := 0
	for _, e := range entries { // the active ones come first, in fair order
		r := Registration{Entry: e, Booking: latestBooking(bookings, e.ID), Offer: live[e.ID], GuestList: partyOf(e, guests[e.ID])}
		if e.State == nextup.EntryWaiting {
			pos++
			r.Position = pos
		}
		if e.State != nextup.EntryBooked && e.State != nextup.EntryLeft {
			r.Booking = nil
		}
		r.State = registrationState(e, r.Booking)
		if err := w.paymentOf(ctx, sl, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b Registration) int {
		return cmp.Or(a.Entry.JoinedAt.Compare(b.Entry.JoinedAt), cmp.Compare(a.Entry.Seq, b.Entry.Seq))
	})
	return out, nil
}

// EventWaitlist is an event's waitlist in fair order with positions.
func (s *Events) EventWaitlist(ctx context.Context, businessID, eventID string) ([]Registration, error) {
	_, regs, err := s.Registrations(ctx, businessID, eventID, RegWaitlisted)
	slices.SortFunc(regs, func(a, b Registration) int { return cmp.Compare(a.Position, b.Position) })
	return regs, err
}

// Promote is the organiser's override: offer this waitlisted person the
// event next, whatever their place. With seats free now they get an offer
// at once; otherwise they are put first in line (priority), so the next
// seats freed go to them. Either way it is audited as an override naming
// the staff member and the reason.
func (s *Events) Promote(ctx context.Context, businessID, eventID, regID, by, reason string) (Registration, []nextup.Move, error) {
	reason, by = strings.TrimSpace(reason), strings.TrimSpace(by)
	if reason == "" || len(reason) > 500 {
		return Registration{}, nil, core.Invalid(nextup.FieldError{Field: "reason", Message: "say why (at most 500 characters): an override is on the record"})
	}
	if fe := nextup.CheckText("reason", reason, 500); fe != nil {
		return Registration{}, nil, core.Invalid(*fe)
	}
	if fe := nextup.CheckName("by", by, 0); fe != nil {
		return Registration{}, nil, core.Invalid(*fe)
	}
	if by == "" {
		by = "api"
	}
	var out Registration
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		sl, e, err := w.registrationEntry(ctx, businessID, eventID, regID)
		if err != nil {
			return err
		}
		if e.State != nextup.EntryWaiting {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeNotWaitlisted, "only a waitlisted registration can be promoted; this one is %s", registrationState(e, nil))
		}
		bi, err := w.Business(ctx, sl.BusinessID)
		if err != nil {
			return err
		}
		pos, err := w.Tx.EntryPosition(ctx, e)
		if err != nil {
			return err
		}
		detail := map[string]any{"by": by, "reason": reason, "position": pos}
		to := "next_in_line"
		if sl.FreeSeats() >= e.PartySize && w.Now.Before(sl.StartsAt) {
			w.OfferPos, w.Override = map[string]int{e.ID: pos}, true
			err := w.offerNow(ctx, bi, sl, e, false)
			w.Override = false
			if err != nil {
				return err
			}
			to = string(nextup.EntryOffered)
		} else if !e.Priority {
			e.Priority = true
			if err := w.Tx.EntryUpdate(ctx, e); err != nil {
				return fmt.Errorf("put registration %s first: %w", e.ID, err)
			}
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID, SlotID: sl.ID,
			From: string(nextup.EntryWaiting), To: to, Reason: "override", Detail: detail}); err != nil {
			return err
		}
		if e, err = w.Tx.EntryGet(ctx, e.ID); err != nil {
			return err
		}
		out, err = w.registrationOf(ctx, sl, e)
		moves = w.Moves
		return err
	})
	return out, moves, err
}

// CheckIn records (or, with undo, clears) that a confirmed registrant came
// with their party: their guests are checked in too (guests.go).
func (s *Events) CheckIn(ctx context.Context, businessID, eventID, regID string, undo bool) (Registration, error) {
	var out Registration
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		sl, e, err := w.registrationEntry(ctx, businessID, eventID, regID)
		if err != nil {
			return err
		}
		r, err := w.registrationOf(ctx, sl, e)
		if err != nil {
			return err
		}
		if r.State != RegConfirmed {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeNotConfirmed, "only a confirmed registration can be checked in; this one is %s", r.State)
		}
		var at *time.Time
		from, to := "not_checked_in", "checked_in"
		if !undo {
			t := w.Now
			at = &t
		} else {
			from, to = to, from
		}
		b, err := w.Tx.BookingCheckIn(ctx, r.Booking.ID, at)
		if err != nil {
			return fmt.Errorf("check in booking %s: %w", r.Booking.ID, err)
		}
		guests, err := w.checkInParty(ctx, &r, at)
		if err != nil {
			return err
		}
		bi, err := w.Business(ctx, sl.BusinessID)
		if err != nil {
			return err
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: b.ID, SlotID: sl.ID,
			From: from, To: to, Reason: "check_in", Detail: map[string]any{"guests_changed": guests}}); err != nil {
			return err
		}
		r.Booking = &b
		out = r
		return nil
	})
	return out, err
}

// MarkNoShow records that a confirmed registrant did not come: their
// seats are freed (the engine runs; near the start it hands the seats
// back to staff).
func (s *Events) MarkNoShow(ctx context.Context, businessID, eventID, regID string) (Registration, []nextup.Move, error) {
	var out Registration
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		sl, e, err := w.registrationEntry(ctx, businessID, eventID, regID)
		if err != nil {
			return err
		}
		r, err := w.registrationOf(ctx, sl, e)
		if err != nil {
			return err
		}
		if r.State != RegConfirmed {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeNotConfirmed, "only a confirmed registration can be marked a no-show; this one is %s", r.State)
		}
		if _, err := slots.EndBookingIn(ctx, w.Work, *r.Booking, nextup.BookingNoShow, slots.ReasonNoShow); err != nil {
			return err
		}
		if e, err = w.Tx.EntryGet(ctx, e.ID); err != nil {
			return err
		}
		if out, err = w.registrationOf(ctx, sl, e); err != nil {
			return err
		}
		moves = w.Moves
		return nil
	})
	return out, moves, err
}
