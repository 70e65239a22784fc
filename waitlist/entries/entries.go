package entries

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Entries are the use cases of a business's waitlist itself: joining it,
// changing an entry's criteria, leaving, and reading an entry with its
// place.
type Entries struct {
	*core.Service
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Entries) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// JoinParams are the inputs of Join. Earliest and Latest are already
// resolved to instants (see nextup.ParseBound).
type JoinParams struct {
	Name         string
	Email        string
	Phone        string
	Channel      nextup.Channel
	Service      string
	EventID      string
	PartySize    int // default 1
	Earliest     time.Time
	Latest       time.Time
	Staff        string
	Availability []nextup.Availability
	Priority     bool
	Source       string    // default "api"
	JoinedAt     time.Time // default now; set for entries approved from a received request
	// Notify sends the person the "you're on the list" message with
	// their status link (the public form does; an import does not).
	Notify bool
}

// JoinResult is a new entry with its status-page token (only known now) and
// whatever reverse matching did with it.
type JoinResult struct {
	Entry       nextup.Entry
	StatusToken string
	Moves       []nextup.Move
}

// Join puts a person on the waitlist and matches them against open slots
// at once, so an open slot never waits for the next cancellation.
func (s *Entries) Join(ctx context.Context, businessID string, p JoinParams) (JoinResult, error) {
	if err := ValidateJoin(&p, s.Clock.Now()); err != nil {
		return JoinResult{}, err
	}
	var res JoinResult
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorCustomer
		var err error
		res, err = w.join(ctx, businessID, p)
		return err
	})
	return res, err
}

// join is Join inside the transaction, on validated params.
func (w *work) join(ctx context.Context, businessID string, p JoinParams) (JoinResult, error) {
	bi, err := w.Business(ctx, businessID)
	if err != nil {
		return JoinResult{}, core.NotFound("business", businessID, err)
	}
	if p.EventID != "" {
		ev, err := w.Tx.SlotGet(ctx, p.EventID)
		if err != nil && !errors.Is(err, nextup.ErrNotFound) {
			return JoinResult{}, fmt.Errorf("event %s: %w", p.EventID, err)
		}
		if err != nil || ev.BusinessID != businessID || ev.Kind != nextup.KindEvent {
			return JoinResult{}, core.Invalid(nextup.FieldError{Field: "event_id", Message: "no such event"})
		}
	}
	token, hash := w.s.Random.Token()
	e := nextup.Entry{
		ID: w.s.Random.ID("ent"), BusinessID: businessID, Name: p.Name, Email: p.Email, Phone: p.Phone,
		Channel: p.Channel, Service: p.Service, EventID: p.EventID, PartySize: p.PartySize,
		Earliest: p.Earliest, Latest: p.Latest, Staff: p.Staff, Availability: p.Availability,
		Priority: p.Priority, Source: p.Source, JoinedAt: p.JoinedAt, State: nextup.EntryWaiting,
		StatusHash: hash, UpdatedAt: w.Now,
	}
	if e.JoinedAt.IsZero() {
		e.JoinedAt = w.Now
	}
	if dup, err := w.Tx.EntryActiveByContact(ctx, businessID, e.ContactKey(), e.Service, e.EventID); err == nil {
		return JoinResult{}, &nextup.Error{Kind: nextup.ErrConflict, Code: nextup.CodeAlreadyWaiting,
			Message: "this person is already on the waitlist for this", Data: map[string]any{"entry_id": dup.ID}}
	} else if !errors.Is(err, nextup.ErrNotFound) {
		return JoinResult{}, err
	}
	if e, err = w.Tx.EntryCreate(ctx, e); err != nil {
		return JoinResult{}, fmt.Errorf("create entry: %w", err)
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID,
		To: string(nextup.EntryWaiting), Reason: "joined", Detail: core.EntryFacts(e)}); err != nil {
		return JoinResult{}, err
	}
	actor := w.Actor
	w.Actor = nextup.ActorSystem
	defer func() { w.Actor = actor }()
	if err := w.MatchEntry(ctx, e.ID); err != nil {
		return JoinResult{}, err
	}
	if e, err = w.Tx.EntryGet(ctx, e.ID); err != nil {
		return JoinResult{}, err
	}
	if p.Notify && e.State == nextup.EntryWaiting { // an offer made at once says more
		if err := w.queueJoined(ctx, bi, e, token); err != nil {
			return JoinResult{}, err
		}
	}
	return JoinResult{Entry: e, StatusToken: token, Moves: w.Moves}, nil
}

// ValidateJoin checks and normalises the inputs of Join (an import, a
// proposal and the join form check theirs the same way).
func ValidateJoin(p *JoinParams, now time.Time) error {
	p.Name = strings.TrimSpace(p.Name)
	p.Email = strings.TrimSpace(p.Email)
	p.Phone = strings.TrimSpace(p.Phone)
	p.Service = strings.TrimSpace(p.Service)
	p.Staff = strings.TrimSpace(p.Staff)
	if p.PartySize == 0 {
		p.PartySize = 1
	}
	if p.Source == "" {
		p.Source = "api"
	}
	f := ValidateContact(p)
	for _, c := range []struct{ field, v string }{{"service", p.Service}, {"staff", p.Staff}} {
		if fe := nextup.CheckName(c.field, c.v, 0); fe != nil {
			f = append(f, *fe)
		}
	}
	if (p.Service == "") == (p.EventID == "") {
		f = append(f, nextup.FieldError{Field: "service", Message: "give exactly one of service and event_id"})
	}
	if p.PartySize < 1 || p.PartySize > 1000 {
		f = append(f, nextup.FieldError{Field: "party_size", Message: "must be between 1 and 1000"})
	}
	f = append(f, validateWindow(p.Earliest, p.Latest, now)...)
	f = append(f, validateAvailability(p.Availability)...)
	if len(f) > 0 {
		return core.Invalid(f...)
	}
	return nil
}

// ValidateContact checks the person's name, contact and channel (an
// event registration checks its person so too).
func ValidateContact(p *JoinParams) []nextup.FieldError {
	var f []nextup.FieldError
	if p.Name == "" || len(p.Name) > 200 {
		f = append(f, nextup.FieldError{Field: "name", Message: "is required (at most 200 characters)"})
	} else if fe := nextup.CheckName("name", p.Name, 0); fe != nil {
		f = append(f, *fe)
	}
	if p.Email == "" && p.Phone == "" {
		f = append(f, nextup.FieldError{Field: "email", Message: "email or phone is required"})
	}
	if p.Email != "" {
		if !nextup.ValidEmail(p.Email) {
			f = append(f, nextup.FieldError{Field: "email", Message: "is not an email address (at most 254 characters, 64 before the @)"})
		}
	}
	if p.Phone != "" {
		digits := 0
		for _, r := range p.Phone {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case strings.ContainsRune("+ -().", r):
			default:
				digits = -100
			}
		}
		if digits < 6 || digits > 15 {
			f = append(f, nextup.FieldError{Field: "phone", Message: "is not a phone number"})
		}
	}
	switch p.Channel {
	case "", nextup.ChannelEmail, nextup.ChannelSMS:
	default:
		f = append(f, nextup.FieldError{Field: "channel", Message: "must be email or sms"})
	}
	if p.Channel == nextup.ChannelEmail && p.Email == "" {
		f = append(f, nextup.FieldError{Field: "channel", Message: "email chosen but no email given"})
	}
	if p.Channel == nextup.ChannelSMS && p.Phone == "" {
		f = append(f, nextup.FieldError{Field: "channel", Message: "sms chosen but no phone given"})
	}
	return f
}

func validateWindow(earliest, latest, now time.Time) []nextup.FieldError {
	var f []nextup.FieldError
	if !latest.IsZero() && !earliest.IsZero() && latest.Before(earliest) {
		f = append(f, nextup.FieldError{Field: "latest", Message: "must not be before earliest"})
	}
	if !latest.IsZero() && latest.Before(now) {
		f = append(f, nextup.FieldError{Field: "latest", Message: "must not be in the past"})
	}
	return f
}

func validateAvailability(av []nextup.Availability) []nextup.FieldError {
	var f []nextup.FieldError
	for i, a := range av {
		if len(a.Days) == 0 || a.From >= a.To || a.To > 24*60 || a.From < 0 {
			f = append(f, nextup.FieldError{Field: fmt.Sprintf("availability[%d]", i), Message: "needs days and from < to"})
		}
		for _, d := range a.Days {
			if d < time.Sunday || d > time.Saturday {
				f = append(f, nextup.FieldError{Field: fmt.Sprintf("availability[%d].days", i), Message: "unknown day"})
			}
		}
	}
	return f
}

// EntryPatch changes an entry's criteria; nil fields are left alone. Name,
// Email, Phone and Channel are the person's details, which the API's PATCH
// does not offer but an import from a sheet corrects.
type EntryPatch struct {
	Priority     *bool
	Earliest     *time.Time
	Latest       *time.Time
	Staff        *string
	PartySize    *int
	Availability *[]nextup.Availability
	Name         *string
	Email        *string
	Phone        *string
	Channel      *nextup.Channel
}

// UpdateEntry changes an entry's criteria (audited) and, when it is
// waiting, matches it against open slots again.
func (s *Entries) UpdateEntry(ctx context.Context, businessID, entryID string, p EntryPatch) (nextup.Entry, []nextup.Move, error) {
	var out nextup.Entry
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		e, err := w.entryOf(ctx, businessID, entryID)
		if err != nil {
			return err
		}
		if out, err = w.updateEntry(ctx, e, p, nil); err != nil {
			return err
		}
		moves = w.Moves
		return nil
	})
	return out, moves, err
}

// updateEntry is UpdateEntry inside the transaction; detail goes on the
// audit row.
func (w *work) updateEntry(ctx context.Context, e nextup.Entry, p EntryPatch, detail map[string]any) (nextup.Entry, error) {
	if !e.Active() {
		return e, nextup.Errorf(nextup.ErrConflict, nextup.CodeEntryNotActive, "entry is %s", e.State)
	}
	if e.State == nextup.EntryOffered && (p.Earliest != nil || p.Latest != nil || p.Staff != nil || p.PartySize != nil || p.Availability != nil) {
		// The live offer was made for the criteria as they were: a claim
		// must book what was offered. Priority may change; the rest waits
		// until the offer is answered, declined or withdrawn.
		return e, nextup.Errorf(nextup.ErrConflict, nextup.CodeEntryHasLiveOffer,
			"this entry holds a live offer; answer or withdraw it before changing the criteria")
	}
	before := e
	if p.Priority != nil {
		e.Priority = *p.Priority
	}
	if p.Earliest != nil {
		e.Earliest = *p.Earliest
	}
	if p.Latest != nil {
		e.Latest = *p.Latest
	}
	if p.Staff != nil {
		e.Staff = strings.TrimSpace(*p.Staff)
	}
	if p.PartySize != nil {
		if *p.PartySize < 1 || *p.PartySize > 1000 {
			return e, core.Invalid(nextup.FieldError{Field: "party_size", Message: "must be between 1 and 1000"})
		}
		e.PartySize = *p.PartySize
	}
	if p.Availability != nil {
		e.Availability = *p.Availability
	}
	f := append(validateWindow(e.Earliest, e.Latest, w.Now), validateAvailability(e.Availability)...)
	if p.Name != nil || p.Email != nil || p.Phone != nil || p.Channel != nil {
		c := JoinParams{Name: e.Name, Email: e.Email, Phone: e.Phone, Channel: e.Channel}
		for _, v := range []struct{ in, out *string }{{p.Name, &c.Name}, {p.Email, &c.Email}, {p.Phone, &c.Phone}} {
			if v.in != nil {
				*v.out = strings.TrimSpace(*v.in)
			}
		}
		if p.Channel != nil {
			c.Channel = *p.Channel
		}
		f = append(f, ValidateContact(&c)...)
		e.Name, e.Email, e.Phone, e.Channel = c.Name, c.Email, c.Phone, c.Channel
	}
	if len(f) > 0 {
		return e, core.Invalid(f...)
	}
	e.UpdatedAt = w.Now
	if err := w.Tx.EntryUpdate(ctx, e); err != nil {
		return e, fmt.Errorf("update entry %s: %w", e.ID, err)
	}
	if ch := entryChanges(before, e); len(ch) > 0 {
		if detail == nil {
			detail = map[string]any{}
		}
		detail["changes"] = ch
	}
	bi, err := w.Business(ctx, e.BusinessID)
	if err != nil {
		return e, err
	}
	if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID,
		From: string(e.State), To: string(e.State), Reason: "updated", Detail: detail}); err != nil {
		return e, err
	}
	actor := w.Actor
	w.Actor = nextup.ActorSystem
	defer func() { w.Actor = actor }()
	if err := w.MatchEntry(ctx, e.ID); err != nil {
		return e, err
	}
	return w.Tx.EntryGet(ctx, e.ID)
}

func (w *work) entryOf(ctx context.Context, businessID, entryID string) (nextup.Entry, error) {
	e, err := w.Tx.EntryGet(ctx, entryID)
	if err != nil || (businessID != "" && e.BusinessID != businessID) {
		return e, core.NotFound("entry", entryID, err)
	}
	return e, nil
}

// Leave takes an entry off the waitlist. A live offer of theirs is
// cancelled and its slot rolls on.
func (s *Entries) Leave(ctx context.Context, businessID, entryID, actor string) (nextup.Entry, []nextup.Move, error) {
	var out nextup.Entry
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = actor
		e, err := w.entryOf(ctx, businessID, entryID)
		if err != nil {
			return err
		}
		return w.leave(ctx, e, &out, &moves)
	})
	return out, moves, err
}

// LeaveByStatusToken is the customer leaving from their status page.
func (s *Entries) LeaveByStatusToken(ctx context.Context, token string) (nextup.Entry, []nextup.Move, error) {
	var out nextup.Entry
	var moves []nextup.Move
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorCustomer
		e, err := w.Tx.EntryByStatusHash(ctx, nextup.HashToken(token))
		if err != nil {
			return core.NotFound("status link", "", err)
		}
		return w.leave(ctx, e, &out, &moves)
	})
	return out, moves, err
}

func (w *work) leave(ctx context.Context, e nextup.Entry, out *nextup.Entry, moves *[]nextup.Move) error {
	switch e.State {
	case nextup.EntryLeft:
		*out = e // leaving twice is leaving once
		return nil
	case nextup.EntryOffered:
		o, err := w.Tx.OfferLiveByEntry(ctx, e.ID)
		if err != nil {
			return fmt.Errorf("live offer of entry %s: %w", e.ID, err)
		}
		if _, err := w.EndOffer(ctx, o, nextup.OfferCancelled, "entry_left", nextup.EntryLeft); err != nil {
			return err
		}
	case nextup.EntryWaiting:
		if err := w.Tx.EntrySetState(ctx, e.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryLeft, w.Now); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return core.ErrRedecide
			}
			return err
		}
		bi, err := w.Business(ctx, e.BusinessID)
		if err != nil {
			return err
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID,
			From: string(nextup.EntryWaiting), To: string(nextup.EntryLeft), Reason: "left"}); err != nil {
			return err
		}
	default:
		return nextup.Errorf(nextup.ErrConflict, nextup.CodeEntryNotActive, "entry is %s", e.State)
	}
	*moves = w.Moves
	var err error
	*out, err = w.Tx.EntryGet(ctx, e.ID)
	return err
}

// EntryView is an entry with its place and its live offer.
type EntryView struct {
	Entry    nextup.Entry
	Position int // 0 when not waiting
	Offer    *nextup.Offer
	// Event is the event of an event's registrant (EntryByStatusToken
	// only: the status page names it).
	Event *nextup.Slot
}

// GetEntry returns an entry of a business with its position and live offer.
func (s *Entries) GetEntry(ctx context.Context, businessID, entryID string) (EntryView, error) {
	var v EntryView
	err := s.Read(ctx, func(tx nextup.Tx) error {
		e, err := tx.EntryGet(ctx, entryID)
		if err != nil || (businessID != "" && e.BusinessID != businessID) {
			return core.NotFound("entry", entryID, err)
		}
		v, err = entryView(ctx, tx, e)
		return err
	})
	return v, err
}

// EntryByStatusToken is the customer's own view by the secret in their status link.
func (s *Entries) EntryByStatusToken(ctx context.Context, token string) (EntryView, error) {
	var v EntryView
	err := s.Read(ctx, func(tx nextup.Tx) error {
		e, err := tx.EntryByStatusHash(ctx, nextup.HashToken(token))
		if err != nil {
			return core.NotFound("status link", "", err)
		}
		if v, err = entryView(ctx, tx, e); err != nil || e.EventID == "" {
			return err
		}
		ev, err := tx.SlotGet(ctx, e.EventID)
		if err == nil {
			v.Event = &ev
		}
		return err
	})
	return v, err
}

func entryView(ctx context.Context, tx nextup.Tx, e nextup.Entry) (EntryView, error) {
	v := EntryView{Entry: e}
	switch e.State {
	case nextup.EntryWaiting:
		p, err := tx.EntryPosition(ctx, e)
		if err != nil {
			return v, err
		}
		v.Position = p
	case nextup.EntryOffered:
		o, err := tx.OfferLiveByEntry(ctx, e.ID)
		if err != nil && !errors.Is(err, nextup.ErrNotFound) {
			return v, err
		}
		if err == nil {
			v.Offer = &o
		}
	}
	return v, nil
}

// ListEntries returns a business's entries in fair order.
func (s *Entries) ListEntries(ctx context.Context, f nextup.EntryFilter) ([]nextup.Entry, error) {
	var out []nextup.Entry
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.EntryList(ctx, f)
		return err
	})
	return out, err
}

// MessageJoined is the kind of the "you're on the list" message, with the
// status link.
const MessageJoined = "joined"

// queueJoined tells a person who just joined that they are on the list,
// with the link to their status page.
func (w *work) queueJoined(ctx context.Context, bi *core.Biz, e nextup.Entry, statusToken string) error {
	ch, ok := engine.ChooseChannel(e, nil)
	if !ok {
		return nil
	}
	what := e.Service
	if e.EventID != "" {
		ev, err := w.Tx.SlotGet(ctx, e.EventID)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.EventID, err)
		}
		what = templates.SlotService(ev)
	}
	m := nextup.Message{BusinessID: bi.ID, Kind: MessageJoined, Channel: ch, To: templates.AddressOf(e, ch), EntryID: e.ID}
	w.s.Stoppable(bi.Business, &m)
	templates.Compose(bi.Business, templates.TemplateJoined, templates.TemplateData{Name: e.Name, Service: what, StatusLink: w.s.StatusURL(statusToken)}, &m)
	return w.Queue(ctx, m)
}

// JoinIn is Join in w, on params ValidateJoin passed: a proposal approved
// and an imported row join so.
func JoinIn(ctx context.Context, w *core.Work, businessID string, p JoinParams) (JoinResult, error) {
	return wrap(w).join(ctx, businessID, p)
}

// UpdateEntryIn is UpdateEntry in w; detail goes on the audit row (an
// imported row updates its person's entry so).
func UpdateEntryIn(ctx context.Context, w *core.Work, e nextup.Entry, p EntryPatch, detail map[string]any) (nextup.Entry, error) {
	return wrap(w).updateEntry(ctx, e, p, detail)
}

// LeaveIn takes e off the waitlist in w (see Leave): an event's
// registration that is waiting or holds an offer is cancelled so.
func LeaveIn(ctx context.Context, w *core.Work, e nextup.Entry, out *nextup.Entry, moves *[]nextup.Move) error {
	return wrap(w).leave(ctx, e, out, moves)
}

// entryChanges is what an edit changed, field by field, for its audit
// row: {"party_size": {"from": 2, "to": 3}, …}, with times in RFC 3339
// ("" for none) and availability as its JSON.
func entryChanges(a, b nextup.Entry) map[string]any {
	out := map[string]any{}
	add := func(field string, from, to any) {
		if !reflect.DeepEqual(from, to) {
			out[field] = map[string]any{"from": from, "to": to}
		}
	}
	add("priority", a.Priority, b.Priority)
	add("earliest", core.FactTime(a.Earliest), core.FactTime(b.Earliest))
	add("latest", core.FactTime(a.Latest), core.FactTime(b.Latest))
	add("staff", a.Staff, b.Staff)
	add("party_size", a.PartySize, b.PartySize)
	add("availability", core.FactAvailability(a.Availability), core.FactAvailability(b.Availability))
	add("name", a.Name, b.Name)
	add("email", a.Email, b.Email)
	add("phone", a.Phone, b.Phone)
	add("channel", string(a.Channel), string(b.Channel))
	return out
}
