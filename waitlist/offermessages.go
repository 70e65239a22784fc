package waitlist

import (
	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// offerMessage is the message carrying an offer's claim link; registered
// says the person registered for the event in this same request (their
// seats are held for them to confirm), not that a place opened up.
func offerMessage(s *Service, bi *bizInfo, sl nextup.Slot, e nextup.Entry, o nextup.Offer, token string, registered bool) nextup.Message {
	link := s.ClaimURL(token)
	d := templates.OfferData(bi.loc, sl, e, o, link, o.SendAt)
	d.Registered = registered
	m := nextup.Message{
		BusinessID: bi.b.ID, Kind: nextup.MessageOffer, Channel: o.Channel, To: templates.AddressOf(e, o.Channel), ClaimURL: link,
		OfferID: o.ID, EntryID: e.ID, NotBefore: o.SendAt,
	}
	s.stoppable(bi.b, &m)
	templates.Compose(bi.b, templates.TemplateOffer, d, &m)
	return m
}

// confirmationMessage confirms booking b on ch (the channel of the offer
// it came from, if any, o being zero for a registration confirmed at
// once); an event's confirmation carries its self-service cancel link.
func confirmationMessage(s *Service, bi *bizInfo, sl nextup.Slot, e nextup.Entry, ch nextup.Channel, o nextup.Offer, b nextup.Booking, calToken string) nextup.Message {
	d := templates.SlotData(bi.loc, sl, e, b.Seats)
	if calToken != "" {
		d.CalendarLink = s.calendarURL(b.ID, calToken)
	}
	if sl.Kind == nextup.KindEvent {
		d.CancelLink = s.CancelURL(bi.b, b.ID)
	}
	m := nextup.Message{
		BusinessID: bi.b.ID, Kind: nextup.MessageConfirmation, Channel: ch, To: templates.AddressOf(e, ch), OfferID: o.ID,
		EntryID: e.ID, BookingID: b.ID,
	}
	if m.Channel == nextup.ChannelEmail {
		m.Calendar = templates.CalendarICS(b, sl, bi.b.Name)
	}
	templates.Compose(bi.b, templates.TemplateConfirmation, d, &m)
	return m
}

// calendarURL is the public link to a booking's invite.
func (s *Service) calendarURL(bookingID, calToken string) string {
	return s.url("/v1/bookings/" + bookingID + "/calendar.ics?token=" + calToken)
}
