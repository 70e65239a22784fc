package people

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// Document is everything a business holds about one person, as the
// export answers it (JSON). A person nextup holds nothing about gets a
// document all the same, with empty lists: the answer does not say
// whether someone was ever a customer beyond what the lists show, and a
// client needs no second path for "nobody".
type Document struct {
	GeneratedAt time.Time `json:"generated_at"`
	BusinessID  string    `json:"business_id"`
	// Contact is the person as asked for, normalised (the email
	// lower-cased, the phone in E.164).
	Contact      ContactJSON       `json:"contact"`
	Entries      []EntryJSON       `json:"entries"`
	Offers       []OfferJSON       `json:"offers"`
	Bookings     []BookingJSON     `json:"bookings"`
	Guests       []GuestJSON       `json:"guests"`
	Messages     []MessageJSON     `json:"messages"`
	Audit        []AuditJSON       `json:"audit"`
	Proposals    []ProposalJSON    `json:"proposals"`
	Suppressions []SuppressionJSON `json:"suppressions"`
}

// ContactJSON is a person's contact in a Document.
type ContactJSON struct {
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
}

// EntryJSON is one of a person's waitlist entries, with its place when
// it is waiting.
type EntryJSON struct {
	ID           string                `json:"id"`
	Name         string                `json:"name"`
	Email        string                `json:"email,omitempty"`
	Phone        string                `json:"phone,omitempty"`
	Channel      string                `json:"channel,omitempty"`
	Service      string                `json:"service,omitempty"`
	EventID      string                `json:"event_id,omitempty"`
	PartySize    int                   `json:"party_size"`
	Earliest     *time.Time            `json:"earliest,omitempty"`
	Latest       *time.Time            `json:"latest,omitempty"`
	Staff        string                `json:"staff,omitempty"`
	Availability []nextup.Availability `json:"availability,omitempty"`
	Priority     bool                  `json:"priority"`
	Source       string                `json:"source"`
	State        string                `json:"state"`
	Position     int                   `json:"position,omitempty"`
	JoinedAt     time.Time             `json:"joined_at"`
	UpdatedAt    time.Time             `json:"updated_at"`
	Lapses       int                   `json:"lapses,omitempty"`
}

// OfferJSON is an offer made to the person.
type OfferJSON struct {
	ID         string     `json:"id"`
	EntryID    string     `json:"entry_id"`
	SlotID     string     `json:"slot_id"`
	Service    string     `json:"service,omitempty"`
	StartsAt   *time.Time `json:"starts_at,omitempty"`
	Seats      int        `json:"seats"`
	State      string     `json:"state"`
	Channel    string     `json:"channel,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	SentAt     *time.Time `json:"sent_at,omitempty"`
	SeenAt     *time.Time `json:"seen_at,omitempty"`
	ExpiresAt  time.Time  `json:"expires_at"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	Reason     string     `json:"reason,omitempty"`
}

// BookingJSON is a booking (or an event registration's) of the person.
type BookingJSON struct {
	ID          string     `json:"id"`
	SlotID      string     `json:"slot_id"`
	EntryID     string     `json:"entry_id,omitempty"`
	OfferID     string     `json:"offer_id,omitempty"`
	Name        string     `json:"name"`
	Seats       int        `json:"seats"`
	State       string     `json:"state"`
	StartsAt    *time.Time `json:"starts_at,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	CheckedInAt *time.Time `json:"checked_in_at,omitempty"`
}

// GuestJSON is a guest the person registered.
type GuestJSON struct {
	EntryID     string     `json:"entry_id"`
	Index       int        `json:"index"`
	Name        string     `json:"name"`
	CheckedInAt *time.Time `json:"checked_in_at,omitempty"`
}

// MessageJSON is a message sent (or to be sent) to the person, as it was
// rendered.
type MessageJSON struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Channel   string     `json:"channel"`
	To        string     `json:"to"`
	Subject   string     `json:"subject,omitempty"`
	Body      string     `json:"body"`
	HTML      string     `json:"html,omitempty"`
	State     string     `json:"state"`
	Attempts  int        `json:"attempts"`
	CreatedAt time.Time  `json:"created_at"`
	SentAt    *time.Time `json:"sent_at,omitempty"`
	EntryID   string     `json:"entry_id,omitempty"`
	OfferID   string     `json:"offer_id,omitempty"`
	BookingID string     `json:"booking_id,omitempty"`
}

// AuditJSON is an audit row about the person (the shape of a slot's
// story, GET /v1/slots/{sid}/audit).
type AuditJSON struct {
	ID          int64          `json:"id"`
	At          time.Time      `json:"at"`
	Actor       string         `json:"actor"`
	SubjectType string         `json:"subject_type"`
	SubjectID   string         `json:"subject_id"`
	SlotID      string         `json:"slot_id,omitempty"`
	From        string         `json:"from"`
	To          string         `json:"to"`
	Reason      string         `json:"reason"`
	RuleVersion int            `json:"rule_version"`
	Detail      map[string]any `json:"detail,omitempty"`
}

// ProposalJSON is a request of the person's that the inbox lane (or the
// sheet) proposed as an entry.
type ProposalJSON struct {
	ID         string                `json:"id"`
	Source     string                `json:"source"`
	ReceivedAt time.Time             `json:"received_at"`
	Excerpt    string                `json:"excerpt"`
	Fields     nextup.ProposalFields `json:"fields"`
	State      string                `json:"state"`
	EntryID    string                `json:"entry_id,omitempty"`
}

// SuppressionJSON is an opt-out of the person's (an SMS STOP, an
// unsubscribe, a bounce): the consent they withdrew.
type SuppressionJSON struct {
	Channel string    `json:"channel"`
	Address string    `json:"address"`
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

// Export returns everything a business holds about the person named by
// contact (an email address or a phone number; ParseContact), and writes
// an audit row that it was exported (person_exported, with what it held
// by kind, never the contact).
func (s *People) Export(ctx context.Context, businessID, contact string) (Document, error) {
	var doc Document
	err := s.Tx(ctx, func(w *core.Work) error {
		w.Actor = nextup.ActorStaff
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		c, err := ParseContact(bi.Business, contact)
		if err != nil {
			return err
		}
		h, err := find(ctx, w.Tx, businessID, c)
		if err != nil {
			return err
		}
		if doc, err = document(ctx, w.Tx, bi.ID, c, h, w.Now); err != nil {
			return err
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: bi.ID,
			To: AuditExported, Reason: AuditExported, Detail: map[string]any{
				"entries": len(doc.Entries), "offers": len(doc.Offers), "bookings": len(doc.Bookings),
				"messages": len(doc.Messages), "audit_events": len(doc.Audit), "proposals": len(doc.Proposals),
			}})
	})
	return doc, err
}

func document(ctx context.Context, tx nextup.Tx, bid string, c nextup.Contact, h held, now time.Time) (Document, error) {
	doc := Document{
		GeneratedAt: now, BusinessID: bid, Contact: ContactJSON{Email: c.Email, Phone: c.Phone},
		Entries: []EntryJSON{}, Offers: []OfferJSON{}, Bookings: []BookingJSON{}, Guests: []GuestJSON{},
		Messages: []MessageJSON{}, Audit: []AuditJSON{}, Proposals: []ProposalJSON{}, Suppressions: []SuppressionJSON{},
	}
	for _, e := range h.entries {
		j := EntryJSON{ID: e.ID, Name: e.Name, Email: e.Email, Phone: e.Phone, Channel: string(e.Channel),
			Service: e.Service, EventID: e.EventID, PartySize: e.PartySize, Staff: e.Staff, Availability: e.Availability,
			Priority: e.Priority, Source: e.Source, State: string(e.State), JoinedAt: e.JoinedAt, UpdatedAt: e.UpdatedAt,
			Lapses: e.Lapses, Earliest: timePtr(e.Earliest), Latest: timePtr(e.Latest)}
		if e.State == nextup.EntryWaiting {
			pos, err := tx.EntryPosition(ctx, e)
			if err != nil {
				return doc, err
			}
			j.Position = pos
		}
		doc.Entries = append(doc.Entries, j)
	}
	for _, o := range h.offers {
		j := OfferJSON{ID: o.ID, EntryID: o.EntryID, SlotID: o.SlotID, Seats: o.Seats, State: string(o.State),
			Channel: string(o.Channel), CreatedAt: o.CreatedAt, SentAt: o.SentAt, SeenAt: o.SeenAt,
			ExpiresAt: o.ExpiresAt, ResolvedAt: o.ResolvedAt, Reason: o.Reason}
		if sl, ok := h.slots[o.SlotID]; ok {
			j.Service, j.StartsAt = sl.Service, timePtr(sl.StartsAt)
		}
		doc.Offers = append(doc.Offers, j)
	}
	for _, b := range h.bookings {
		j := BookingJSON{ID: b.ID, SlotID: b.SlotID, EntryID: b.EntryID, OfferID: b.OfferID, Name: b.Name,
			Seats: b.Seats, State: string(b.State), CreatedAt: b.CreatedAt, EndedAt: b.EndedAt, CheckedInAt: b.CheckedInAt}
		if sl, ok := h.slots[b.SlotID]; ok {
			j.StartsAt = timePtr(sl.StartsAt)
		}
		doc.Bookings = append(doc.Bookings, j)
	}
	for _, g := range h.guests {
		doc.Guests = append(doc.Guests, GuestJSON{EntryID: g.EntryID, Index: g.Index, Name: g.Name, CheckedInAt: g.CheckedInAt})
	}
	for _, m := range h.messages {
		doc.Messages = append(doc.Messages, MessageJSON{ID: m.ID, Kind: m.Kind, Channel: string(m.Channel), To: m.To,
			Subject: m.Subject, Body: m.Body, HTML: m.HTML, State: string(m.State), Attempts: m.Attempts,
			CreatedAt: m.CreatedAt, SentAt: m.SentAt, EntryID: m.EntryID, OfferID: m.OfferID, BookingID: m.BookingID})
	}
	for _, a := range h.audit {
		doc.Audit = append(doc.Audit, AuditJSON{ID: a.ID, At: a.At, Actor: a.Actor, SubjectType: a.SubjectType,
			SubjectID: a.SubjectID, SlotID: a.SlotID, From: a.From, To: a.To, Reason: a.Reason,
			RuleVersion: a.RuleVersion, Detail: a.Detail})
	}
	for _, p := range h.proposals {
		doc.Proposals = append(doc.Proposals, ProposalJSON{ID: p.ID, Source: p.Source, ReceivedAt: p.ReceivedAt,
			Excerpt: p.Excerpt, Fields: p.Fields, State: string(p.State), EntryID: p.EntryID})
	}
	for _, sp := range h.suppressions {
		doc.Suppressions = append(doc.Suppressions, SuppressionJSON{Channel: string(sp.Channel), Address: sp.Address,
			Reason: sp.Reason, At: sp.At})
	}
	return doc, nil
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
