package templates

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

// SlotService is what a slot is called in messages: an event's title,
// else the service.
func SlotService(sl nextup.Slot) string {
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

// SlotData is what every message about a slot says.
func SlotData(loc *time.Location, sl nextup.Slot, e nextup.Entry, seats int) TemplateData {
	return TemplateData{Name: e.Name, Service: SlotService(sl), Staff: sl.Staff,
		When: FormatWhen(sl.StartsAt, loc), Seats: seats}
}

// OfferData is what a message carrying an offer's claim link says, its
// deadline and countdown as seen from "from" (when it is sent).
func OfferData(loc *time.Location, sl nextup.Slot, e nextup.Entry, o nextup.Offer, link string, from time.Time) TemplateData {
	d := SlotData(loc, sl, e, o.PartySize)
	d.Until, d.Countdown, d.Link = FormatUntil(o.ExpiresAt, from, loc), Countdown(o.ExpiresAt.Sub(from)), link
	if sl.Event.Paid() {
		d.Price = FormatPrice(sl.Event.PriceCents*int64(o.Seats), sl.Event.Currency)
	}
	return d
}

// AddressOf is where a message on ch reaches the person behind e.
func AddressOf(e nextup.Entry, ch nextup.Channel) string {
	if ch == nextup.ChannelSMS {
		return e.Phone
	}
	return e.Email
}

// FormatPrice is an amount as a customer reads it: "EUR 25.00".
func FormatPrice(cents int64, currency string) string {
	if cents <= 0 {
		return ""
	}
	sym := map[string]string{"eur": "€", "gbp": "£", "usd": "$"}[currency]
	if sym == "" {
		return fmt.Sprintf("%d.%02d %s", cents/100, cents%100, strings.ToUpper(currency))
	}
	return fmt.Sprintf("%s%d.%02d", sym, cents/100, cents%100)
}
