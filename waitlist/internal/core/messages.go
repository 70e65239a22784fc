package core

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// MessageHandback is the kind of the owner's email that a slot is back
// with staff.
const MessageHandback = "handback"

// OfferMessage is the message carrying an offer's claim link; registered
// says the person registered for the event in this same request (their
// seats are held for them to confirm), not that a place opened up.
func OfferMessage(s *Service, bi *Biz, sl nextup.Slot, e nextup.Entry, o nextup.Offer, token string, registered bool) nextup.Message {
	link := s.ClaimURL(token)
	d := templates.OfferData(bi.Loc, sl, e, o, link, o.SendAt)
	d.IfMissed = templates.IfMissed(engine.RulesFor(bi.Rules, sl).Requeue, e.Lapses)
	d.Registered = registered
	m := nextup.Message{
		BusinessID: bi.ID, Kind: nextup.MessageOffer, Channel: o.Channel, To: templates.AddressOf(e, o.Channel), ClaimURL: link,
		OfferID: o.ID, EntryID: e.ID, NotBefore: o.SendAt,
	}
	s.Stoppable(bi.Business, &m)
	templates.Compose(bi.Business, templates.TemplateOffer, d, &m)
	return m
}

// ConfirmationMessage confirms booking b on ch (the channel of the offer
// it came from, if any, o being zero for a registration confirmed at
// once); an event's confirmation carries its self-service cancel link.
func ConfirmationMessage(s *Service, bi *Biz, sl nextup.Slot, e nextup.Entry, ch nextup.Channel, o nextup.Offer, b nextup.Booking, calToken string) nextup.Message {
	d := templates.SlotData(bi.Loc, sl, e, b.Seats)
	if calToken != "" {
		d.CalendarLink = s.CalendarURL(b.ID, calToken)
	}
	if sl.Kind == nextup.KindEvent {
		d.CancelLink = s.CancelURL(bi.Business, b.ID)
	}
	m := nextup.Message{
		BusinessID: bi.ID, Kind: nextup.MessageConfirmation, Channel: ch, To: templates.AddressOf(e, ch), OfferID: o.ID,
		EntryID: e.ID, BookingID: b.ID,
	}
	if m.Channel == nextup.ChannelEmail {
		m.Calendar = templates.CalendarICS(b, sl, bi.Name)
	}
	templates.Compose(bi.Business, templates.TemplateConfirmation, d, &m)
	return m
}

// escalateAfter is the shortest claim window that gets a follow-up: below
// it there is no time for one to help.
const escalateAfter = 30 * time.Minute

// EscalateKey is the key of an offer's follow-up timer.
func EscalateKey(offerID string) string { return nextup.TimerOfferEscalate + ":" + offerID }

// ScheduleEscalation arranges the follow-up of an offer just sent, in a
// window of 30 minutes or more: after the rules' share of it (half by
// default, Rules.FollowUp).
func (w *Work) ScheduleEscalation(ctx context.Context, o nextup.Offer) error {
	if o.SentAt == nil || o.ExpiresAt.Sub(*o.SentAt) < escalateAfter {
		return nil
	}
	bi, err := w.Business(ctx, o.BusinessID)
	if err != nil {
		return err
	}
	window := o.ExpiresAt.Sub(*o.SentAt)
	after := time.Duration(float64(window) * bi.Rules.FollowUp.Share())
	return w.Schedule(ctx, nextup.Timer{BusinessID: o.BusinessID, Kind: nextup.TimerOfferEscalate, SubjectID: o.ID,
		Key: EscalateKey(o.ID), DueAt: o.SentAt.Add(after)})
}

// NotBefore is when a notice may go: now, or when quiet hours end.
func (w *Work) NotBefore(bi *Biz) time.Time {
	if in, end := engine.InQuietHours(w.Now, bi.Rules.QuietHours, bi.Loc); in {
		return end
	}
	return w.Now
}

// queueHandback emails the owner that a slot is back with staff, with the
// engine's note.
func (w *Work) queueHandback(ctx context.Context, bi *Biz, sl nextup.Slot, h nextup.HandBack) error {
	to := bi.Profile.OwnerEmail
	if to == "" {
		return nil
	}
	m := nextup.Message{BusinessID: bi.ID, Kind: MessageHandback, Channel: nextup.ChannelEmail, To: to}
	d := templates.TemplateData{Service: templates.SlotService(sl), Staff: sl.Staff, When: templates.FormatWhen(sl.StartsAt, bi.Loc), Note: h.Note}
	templates.Compose(bi.Business, templates.TemplateHandback, d, &m)
	return w.Queue(ctx, m)
}
