package waitlist

import (
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// FormatWhen is a slot start as a customer reads it, in the business
// timezone: "Tue 1 Dec at 3:00 pm".
func FormatWhen(t time.Time, loc *time.Location) string {
	return strings.Replace(t.In(loc).Format("Mon 2 Jan at 3:04 pm"), "AM", "am", 1)
}

// FormatUntil is a deadline in the customer's words: "4:10 pm" today,
// "Tue 4:10 pm" on another day (relative to now, in the business timezone).
func FormatUntil(deadline, now time.Time, loc *time.Location) string {
	d, n := deadline.In(loc), now.In(loc)
	if d.Year() == n.Year() && d.YearDay() == n.YearDay() {
		return d.Format("3:04 pm")
	}
	if d.Sub(n) < 6*24*time.Hour {
		return d.Format("Mon 3:04 pm")
	}
	return d.Format("Mon 2 Jan 3:04 pm")
}

func slotService(sl nextup.Slot) string {
	if sl.Kind == nextup.KindEvent && sl.Title != "" {
		return sl.Title
	}
	return sl.Service
}

// Countdown is a claim window in words: "10 minutes", "2 hours",
// "1 hour 30 minutes", "2 days".
func Countdown(d time.Duration) string {
	d = d.Round(time.Minute)
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0 && hours == 0:
		return unit(days, "day")
	case days > 0:
		return unit(days, "day") + " " + unit(hours, "hour")
	case hours > 0 && mins == 0:
		return unit(hours, "hour")
	case hours > 0:
		return unit(hours, "hour") + " " + unit(mins, "minute")
	}
	return unit(max(mins, 1), "minute")
}

// slotData is what every message about a slot says.
func slotData(bi *bizInfo, sl nextup.Slot, e nextup.Entry, seats int) TemplateData {
	return TemplateData{Name: e.Name, Service: slotService(sl), Staff: sl.Staff,
		When: FormatWhen(sl.StartsAt, bi.loc), Seats: seats}
}

// offerData is what a message carrying an offer's claim link says, its
// deadline and countdown as seen from "from" (when it is sent).
func offerData(bi *bizInfo, sl nextup.Slot, e nextup.Entry, o nextup.Offer, link string, from time.Time) TemplateData {
	d := slotData(bi, sl, e, o.PartySize)
	d.Until, d.Countdown, d.Link = FormatUntil(o.ExpiresAt, from, bi.loc), Countdown(o.ExpiresAt.Sub(from)), link
	if sl.Event.Paid() {
		d.Price = FormatPrice(sl.Event.PriceCents*int64(o.Seats), sl.Event.Currency)
	}
	return d
}

// addressOf is where a message on ch reaches the person behind e.
func addressOf(e nextup.Entry, ch nextup.Channel) string {
	if ch == nextup.ChannelSMS {
		return e.Phone
	}
	return e.Email
}

// offerMessage is the message carrying an offer's claim link; registered
// says the person registered for the event in this same request (their
// seats are held for them to confirm), not that a place opened up.
func offerMessage(s *Service, bi *bizInfo, sl nextup.Slot, e nextup.Entry, o nextup.Offer, token string, registered bool) nextup.Message {
	link := s.ClaimURL(token)
	d := offerData(bi, sl, e, o, link, o.SendAt)
	d.Registered = registered
	m := nextup.Message{
		BusinessID: bi.b.ID, Kind: nextup.MessageOffer, Channel: o.Channel, To: addressOf(e, o.Channel), ClaimURL: link,
		OfferID: o.ID, EntryID: e.ID, NotBefore: o.SendAt,
	}
	s.stoppable(bi.b, &m)
	compose(bi, TemplateOffer, d, &m)
	return m
}

// confirmationMessage confirms booking b on ch (the channel of the offer
// it came from, if any, o being zero for a registration confirmed at
// once); an event's confirmation carries its self-service cancel link.
func confirmationMessage(s *Service, bi *bizInfo, sl nextup.Slot, e nextup.Entry, ch nextup.Channel, o nextup.Offer, b nextup.Booking, calToken string) nextup.Message {
	d := slotData(bi, sl, e, b.Seats)
	if calToken != "" {
		d.CalendarLink = s.calendarURL(b.ID, calToken)
	}
	if sl.Kind == nextup.KindEvent {
		d.CancelLink = s.CancelURL(bi.b, b.ID)
	}
	m := nextup.Message{
		BusinessID: bi.b.ID, Kind: nextup.MessageConfirmation, Channel: ch, To: addressOf(e, ch), OfferID: o.ID,
		EntryID: e.ID, BookingID: b.ID,
	}
	if m.Channel == nextup.ChannelEmail {
		m.Calendar = CalendarICS(b, sl, bi.b.Name)
	}
	compose(bi, TemplateConfirmation, d, &m)
	return m
}

// calendarURL is the public link to a booking's invite.
func (s *Service) calendarURL(bookingID, calToken string) string {
	return s.url("/v1/bookings/" + bookingID + "/calendar.ics?token=" + calToken)
}
