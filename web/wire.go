package web

import (
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// The JSON shapes of API.md. Times are RFC 3339 with an offset (UTC out).

type businessJSON struct {
	ID       string       `json:"id"`
	Name     string       `json:"name"`
	Timezone string       `json:"timezone"`
	Rules    nextup.Rules `json:"rules"`
	APIKey   string       `json:"api_key,omitempty"`
	nextup.Profile
}

type slotJSON struct {
	ID          string      `json:"id"`
	Kind        string      `json:"kind"`
	Service     string      `json:"service"`
	Staff       string      `json:"staff"`
	StartsAt    time.Time   `json:"starts_at"`
	EndsAt      time.Time   `json:"ends_at"`
	Capacity    int         `json:"capacity"`
	Seating     string      `json:"seating"`
	MinParty    int         `json:"min_party"`
	BookedSeats int         `json:"booked_seats"`
	HeldSeats   int         `json:"held_seats"`
	FreeSeats   int         `json:"free_seats"`
	State       string      `json:"state"`
	Offers      []offerJSON `json:"offers"`
}

func slotOut(sl nextup.Slot, offers []nextup.Offer, now time.Time) slotJSON {
	out := slotJSON{ID: sl.ID, Kind: string(sl.Kind), Service: sl.Service, Staff: sl.Staff, StartsAt: sl.StartsAt, EndsAt: sl.EndsAt,
		Capacity: sl.Capacity, Seating: string(sl.Seating), MinParty: sl.MinParty, BookedSeats: sl.BookedSeats,
		HeldSeats: sl.HeldSeats, FreeSeats: sl.FreeSeats(), State: string(sl.State(now)), Offers: []offerJSON{}}
	for _, o := range offers {
		out.Offers = append(out.Offers, offerOut(o))
	}
	return out
}

type offerJSON struct {
	ID         string     `json:"id"`
	SlotID     string     `json:"slot_id"`
	EntryID    string     `json:"entry_id"`
	Seats      int        `json:"seats"`
	State      string     `json:"state"`
	CreatedAt  time.Time  `json:"created_at"`
	SentAt     *time.Time `json:"sent_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	ResolvedAt *time.Time `json:"resolved_at"`
	Channel    string     `json:"channel"`
}

func offerOut(o nextup.Offer) offerJSON {
	return offerJSON{ID: o.ID, SlotID: o.SlotID, EntryID: o.EntryID, Seats: o.Seats, State: string(o.State), CreatedAt: o.CreatedAt,
		SentAt: o.SentAt, ExpiresAt: o.ExpiresAt, ResolvedAt: o.ResolvedAt, Channel: string(o.Channel)}
}

type bookingJSON struct {
	ID        string     `json:"id"`
	SlotID    string     `json:"slot_id"`
	EntryID   string     `json:"entry_id,omitempty"`
	Seats     int        `json:"seats"`
	State     string     `json:"state"`
	CreatedAt time.Time  `json:"created_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
}

func bookingOut(b nextup.Booking) bookingJSON {
	return bookingJSON{ID: b.ID, SlotID: b.SlotID, EntryID: b.EntryID, Seats: b.Seats, State: string(b.State), CreatedAt: b.CreatedAt, EndedAt: b.EndedAt}
}

type availabilityJSON struct {
	Days []string `json:"days"`
	From string   `json:"from"`
	To   string   `json:"to"`
}

var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func availabilityIn(in []availabilityJSON) ([]nextup.Availability, error) {
	var out []nextup.Availability
	for i, a := range in {
		var av nextup.Availability
		for _, d := range a.Days {
			found := false
			for wd, name := range dayNames {
				if strings.EqualFold(d, name) {
					av.Days, found = append(av.Days, time.Weekday(wd)), true
				}
			}
			if !found {
				return nil, invalidf(fmt.Sprintf("availability[%d].days", i), "days are mon, tue, wed, thu, fri, sat, sun")
			}
		}
		var err error
		if av.From, err = nextup.ParseTimeOfDay(a.From); err != nil {
			return nil, invalidf(fmt.Sprintf("availability[%d].from", i), "want HH:MM")
		}
		if av.To, err = nextup.ParseTimeOfDay(a.To); err != nil {
			return nil, invalidf(fmt.Sprintf("availability[%d].to", i), "want HH:MM")
		}
		out = append(out, av)
	}
	return out, nil
}

func availabilityOut(in []nextup.Availability) []availabilityJSON {
	out := []availabilityJSON{}
	for _, a := range in {
		j := availabilityJSON{From: a.From.String(), To: a.To.String(), Days: []string{}}
		for _, d := range a.Days {
			j.Days = append(j.Days, dayNames[d])
		}
		out = append(out, j)
	}
	return out
}

type entryJSON struct {
	ID           string             `json:"id"`
	State        string             `json:"state"`
	Name         string             `json:"name"`
	Email        string             `json:"email,omitempty"`
	Phone        string             `json:"phone,omitempty"`
	Channel      string             `json:"channel,omitempty"`
	Service      string             `json:"service,omitempty"`
	EventID      string             `json:"event_id,omitempty"`
	PartySize    int                `json:"party_size"`
	Earliest     *time.Time         `json:"earliest"`
	Latest       *time.Time         `json:"latest"`
	Staff        string             `json:"staff,omitempty"`
	Availability []availabilityJSON `json:"availability"`
	Priority     bool               `json:"priority"`
	Source       string             `json:"source"`
	JoinedAt     time.Time          `json:"joined_at"`
	Position     int                `json:"position,omitempty"`
	Offer        *offerJSON         `json:"offer,omitempty"`
}

func entryOut(e nextup.Entry, position int, offer *nextup.Offer) entryJSON {
	out := entryJSON{ID: e.ID, State: string(e.State), Name: e.Name, Email: e.Email, Phone: e.Phone, Channel: string(e.Channel),
		Service: e.Service, EventID: e.EventID, PartySize: e.PartySize, Staff: e.Staff, Availability: availabilityOut(e.Availability),
		Priority: e.Priority, Source: e.Source, JoinedAt: e.JoinedAt, Position: position}
	if !e.Earliest.IsZero() {
		out.Earliest = &e.Earliest
	}
	if !e.Latest.IsZero() {
		out.Latest = &e.Latest
	}
	if offer != nil {
		o := offerOut(*offer)
		out.Offer = &o
	}
	return out
}
