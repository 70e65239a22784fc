package waitlist

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/nextup-dev/nextup"
)

// The default message templates. Per-business templates come with the real
// channels; these say what a person needs in the fewest words: what, when,
// until when, and the link.
var (
	offerSMS = template.Must(template.New("offer_sms").Parse(
		`{{.Business}}: a {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} opened up on {{.When}}. It's yours if you claim it until {{.Until}}: {{.Link}}`))
	offerEmail = template.Must(template.New("offer_email").Parse(`Hi {{.Name}},

A {{.Service}} slot{{if .Staff}} with {{.Staff}}{{end}} at {{.Business}} opened up on {{.When}}{{if gt .Seats 1}} for {{.Seats}}{{end}}.

It is held for you until {{.Until}}. Claim it here:
{{.Link}}

If it doesn't suit you, the same page has a Decline button, and the next person on the list gets their chance right away. You keep your place either way.
`))
	confirmText = template.Must(template.New("confirm").Parse(
		`{{.Business}}: you're booked for {{.Service}}{{if .Staff}} with {{.Staff}}{{end}} on {{.When}}{{if gt .Seats 1}} ({{.Seats}} seats){{end}}.{{if .Link}} Add it to your calendar: {{.Link}}{{end}}`))
)

type messageData struct {
	Business, Name, Service, Staff, When, Until, Link string
	Seats                                             int
}

func render(t *template.Template, d any) string {
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		// The templates are fixed and the data is plain strings.
		panic(fmt.Sprintf("render %s: %v", t.Name(), err))
	}
	return b.String()
}

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

func offerMessage(s *Service, bi *bizInfo, sl nextup.Slot, e nextup.Entry, o nextup.Offer, token string) nextup.Message {
	link := s.ClaimURL(token)
	d := messageData{
		Business: bi.b.Name, Name: e.Name, Service: slotService(sl), Staff: sl.Staff,
		When: FormatWhen(sl.StartsAt, bi.loc), Until: FormatUntil(o.ExpiresAt, o.SendAt, bi.loc), Link: link, Seats: o.PartySize,
	}
	m := nextup.Message{
		BusinessID: bi.b.ID, Kind: nextup.MessageOffer, Channel: o.Channel, ClaimURL: link,
		OfferID: o.ID, EntryID: e.ID, NotBefore: o.SendAt,
	}
	if o.Channel == nextup.ChannelSMS {
		m.To, m.Body = e.Phone, render(offerSMS, d)
	} else {
		m.To, m.Subject, m.Body = e.Email, fmt.Sprintf("A %s slot opened up: claim it until %s", d.Service, d.Until), render(offerEmail, d)
	}
	return m
}

func confirmationMessage(s *Service, bi *bizInfo, sl nextup.Slot, e nextup.Entry, o nextup.Offer, b nextup.Booking, calToken string) nextup.Message {
	d := messageData{
		Business: bi.b.Name, Name: e.Name, Service: slotService(sl), Staff: sl.Staff,
		When: FormatWhen(sl.StartsAt, bi.loc), Seats: o.PartySize,
	}
	if calToken != "" {
		d.Link = s.url("/v1/bookings/" + b.ID + "/calendar.ics?token=" + calToken)
	}
	m := nextup.Message{
		BusinessID: bi.b.ID, Kind: nextup.MessageConfirmation, Channel: o.Channel, OfferID: o.ID,
		EntryID: e.ID, BookingID: b.ID, Body: render(confirmText, d),
	}
	if o.Channel == nextup.ChannelSMS {
		m.To = e.Phone
	} else {
		m.To, m.Subject = e.Email, fmt.Sprintf("Booked: %s on %s", d.Service, d.When)
	}
	return m
}
