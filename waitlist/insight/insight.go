// Package insight holds what the owner learns from the record: the
// figures of any span of time (the analytics page, the monthly summary),
// computed from the audit trail alone — every state change nextup makes
// is an audit row written in its transaction — and from the outbox for
// messages.
//
// The words the figures use:
//
//   - A slot is freed by a release (a cancellation, a no-show, or a new
//     opening), by a booking ended on its own (cancelled, a no-show), or by
//     being made with free seats or grown (a new opening; not an event's
//     seats, which were never booked): see freed. A release of three seats
//     of an event frees the event once, three seats.
//   - A freed slot is filled when seats claimed from the waitlist after the
//     release cover every seat it freed; its time to fill runs from the
//     release to the claim that covered the last of them. Claims of a slot
//     cover its releases oldest first. A release is counted in the span it
//     happened in, and its fill is looked for up to FillHorizon after the
//     span's end, so a month's figures do not change after that.
//   - Revenue recovered is the price of every seat claimed from the
//     waitlist in the span (the slot's service price from the business's
//     catalogue, or the event's price).
//   - An offer is made when its row is created (pending behind quiet hours
//     or offered), and ends claimed, declined, lapsed (its window passed)
//     or cancelled. Acceptance by place counts the offers made in the span
//     by the place in line the person held when it was made, and how many
//     of them were claimed.
//   - The no-show rate is the bookings marked no-show in the span over
//     the bookings made in it.
package insight

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// FillHorizon is how long after a span's end the claims that fill its
// releases are looked for.
const FillHorizon = 14 * 24 * time.Hour

// Release reasons (slots.ReasonCancellation and the others).
const (
	FreedCancellation = "cancellation"
	FreedNoShow       = "no_show"
	FreedOpening      = "opening"
)

// Figures are the figures of one business over [From, To).
type Figures struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`

	SlotsFreed            int            `json:"slots_freed"`
	SeatsFreed            int            `json:"seats_freed"`
	FreedBy               map[string]int `json:"freed_by"` // cancellation, no_show, opening
	SlotsFilled           int            `json:"slots_filled"`
	FillRate              float64        `json:"fill_rate"` // filled / freed; 0 when nothing was freed
	TimeToFillP50Seconds  float64        `json:"time_to_fill_p50_seconds"`
	TimeToFillP90Seconds  float64        `json:"time_to_fill_p90_seconds"`
	SeatsClaimed          int            `json:"seats_claimed"`
	RevenueRecoveredCents int64          `json:"revenue_recovered_cents"`

	OffersMade        int           `json:"offers_made"`
	OffersClaimed     int           `json:"offers_claimed"`
	OffersDeclined    int           `json:"offers_declined"`
	OffersLapsed      int           `json:"offers_lapsed"`
	OffersCancelled   int           `json:"offers_cancelled"`
	AcceptanceByPlace []PlaceFigure `json:"acceptance_by_place"`

	HandBacks   int            `json:"hand_backs"`
	HandBacksBy map[string]int `json:"hand_backs_by"` // the engine's reason: list_exhausted, …

	Bookings   int     `json:"bookings"`
	NoShows    int     `json:"no_shows"`
	NoShowRate float64 `json:"no_show_rate"`

	WaitlistJoined  int `json:"waitlist_joined"`
	WaitlistLeft    int `json:"waitlist_left"`
	WaitlistBooked  int `json:"waitlist_booked"`
	WaitlistExpired int `json:"waitlist_expired"`

	Messages []ChannelFigure `json:"messages"` // by channel, sorted by channel

	// Cancellations by weekday (0 Sunday) and by hour of the day, in the
	// business's timezone.
	CancellationsByWeekday [7]int  `json:"cancellations_by_weekday"`
	CancellationsByHour    [24]int `json:"cancellations_by_hour"`

	// The slots' figures by the slot's service, staff member, and the
	// weekday it starts on (in the business's timezone: "Monday", …),
	// each sorted by name (weekdays Monday first).
	ByService []Group `json:"by_service"`
	ByStaff   []Group `json:"by_staff"`
	ByWeekday []Group `json:"by_weekday"`
}

// Group is the slots' figures of one service, staff member or weekday.
type Group struct {
	Name                  string  `json:"name"`
	SlotsFreed            int     `json:"slots_freed"`
	SlotsFilled           int     `json:"slots_filled"`
	FillRate              float64 `json:"fill_rate"`
	SeatsClaimed          int     `json:"seats_claimed"`
	RevenueRecoveredCents int64   `json:"revenue_recovered_cents"`
}

// PlaceFigure is how offers made to people at some places in line went.
type PlaceFigure struct {
	Places  string  `json:"places"` // "1", "2", "3", "4–5", "6–10", "11+"
	Offers  int     `json:"offers"`
	Claimed int     `json:"claimed"`
	Rate    float64 `json:"rate"`
}

// ChannelFigure is the messages of one channel made in the span.
type ChannelFigure struct {
	Channel string `json:"channel"`
	Made    int    `json:"made"`
	Sent    int    `json:"sent"`
	Failed  int    `json:"failed"` // given up (dead) or refused by the provider as undeliverable
}

// placeBands are the bands of AcceptanceByPlace: the first place that is
// in each.
var placeBands = []struct {
	from  int
	label string
}{{1, "1"}, {2, "2"}, {3, "3"}, {4, "4–5"}, {6, "6–10"}, {11, "11+"}}

func bandOf(place int) int {
	b := 0
	for i, pb := range placeBands {
		if place >= pb.from {
			b = i
		}
	}
	return b
}

// Insight computes figures from a store.
type Insight struct {
	*core.Service
	est estimates // EstimateWait's cache
}

// auditPage is how many audit rows one read takes.
const auditPage = 1000

// auditRows reads every audit row f selects, auditPage at a time from
// f.AfterID on (f.Limit is ignored).
func auditRows(ctx context.Context, tx nextup.Tx, f nextup.AuditFilter) ([]nextup.AuditEvent, error) {
	f.Limit = auditPage
	var out []nextup.AuditEvent
	for {
		page, err := tx.AuditList(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < auditPage {
			return out, nil
		}
		f.AfterID = page[len(page)-1].ID
	}
}

// Figures returns a business's figures over [from, to).
func (s *Insight) Figures(ctx context.Context, businessID string, from, to time.Time) (Figures, error) {
	if !from.Before(to) {
		return Figures{}, core.Invalid(nextup.FieldError{Field: "to", Message: "must be after from"})
	}
	var in Input
	err := s.Read(ctx, func(tx nextup.Tx) error {
		b, err := tx.BusinessGet(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		in.Business = b
		in.Slots = map[string]nextup.Slot{}
		if in.Audit, err = auditRows(ctx, tx, nextup.AuditFilter{BusinessID: businessID, Since: from, Until: to.Add(FillHorizon)}); err != nil {
			return err
		}
		for _, r := range in.Audit {
			if r.SlotID == "" || r.At.After(to) {
				continue
			}
			if _, ok := in.Slots[r.SlotID]; ok {
				continue
			}
			sl, err := tx.SlotGet(ctx, r.SlotID)
			if errors.Is(err, nextup.ErrNotFound) {
				in.Slots[r.SlotID] = nextup.Slot{} // removed since: its rows still count, at no price
				continue
			}
			if err != nil {
				return fmt.Errorf("slot %s: %w", r.SlotID, err)
			}
			in.Slots[r.SlotID] = sl
		}
		in.Messages, err = tx.MessageList(ctx, nextup.MessageFilter{BusinessID: businessID, Since: from, Until: to})
		return err
	})
	if err != nil {
		return Figures{}, err
	}
	return Compute(in, from, to)
}

// Input is what Compute reads: the business, its audit rows from the
// span's start to FillHorizon past its end (oldest first), the slots they
// name, and the messages made in the span.
type Input struct {
	Business nextup.Business
	Audit    []nextup.AuditEvent
	Slots    map[string]nextup.Slot
	Messages []nextup.Message
}

// release is one release of a slot, waiting for seats to fill it.
type release struct {
	at      time.Time
	seats   int
	left    int
	inSpan  bool
	counted bool
}

// Compute returns the figures of in over [from, to).
func Compute(in Input, from, to time.Time) (Figures, error) {
	loc, err := in.Business.Location()
	if err != nil {
		return Figures{}, err
	}
	f := Figures{From: from, To: to, FreedBy: map[string]int{}, HandBacksBy: map[string]int{}}
	within := func(t time.Time) bool { return !t.Before(from) && t.Before(to) }
	prices := map[string]int64{}
	for _, sv := range in.Business.Profile.Services {
		prices[strings.ToLower(sv.Name)] = sv.PriceCents
	}
	priceOf := func(slotID string) int64 {
		sl, ok := in.Slots[slotID]
		if !ok {
			return 0
		}
		if sl.Kind == nextup.KindEvent && sl.Event != nil {
			return sl.Event.PriceCents
		}
		return prices[strings.ToLower(sl.Service)]
	}

	groups := [3]map[string]*Group{{}, {}, {}} // by service, staff, weekday
	groupsOf := func(slotID string) []*Group {
		sl, ok := in.Slots[slotID]
		if !ok || sl.ID == "" {
			return nil
		}
		names := [3]string{sl.Service, sl.Staff, sl.StartsAt.In(loc).Weekday().String()}
		if sl.Kind == nextup.KindEvent {
			names[0] = "Events"
		}
		var out []*Group
		for i, n := range names {
			if n == "" {
				continue
			}
			g := groups[i][n]
			if g == nil {
				g = &Group{Name: n}
				groups[i][n] = g
			}
			out = append(out, g)
		}
		return out
	}
	open := map[string][]*release{} // slot → its releases not yet filled, oldest first
	var fills []time.Duration
	type made struct{ band int }
	offers := map[string]made{} // offer made in the span → its place band (-1: none recorded)
	bands := make([]PlaceFigure, len(placeBands))
	for i, pb := range placeBands {
		bands[i].Places = pb.label
	}
	for _, r := range in.Audit {
		span := within(r.At)
		if reason, seats, ok := freed(r, in.Slots[r.SlotID].Kind == nextup.KindEvent); ok {
			if span {
				f.SlotsFreed++
				f.SeatsFreed += seats
				f.FreedBy[reason]++
				for _, g := range groupsOf(r.SlotID) {
					g.SlotsFreed++
				}
				if reason == FreedCancellation {
					lt := r.At.In(loc)
					f.CancellationsByWeekday[lt.Weekday()]++
					f.CancellationsByHour[lt.Hour()]++
				}
			}
			if !r.At.Before(from) {
				open[r.SlotID] = append(open[r.SlotID], &release{at: r.At, seats: seats, left: seats, inSpan: span})
			}
		}
		switch r.SubjectType {
		case nextup.SubjectSlot:
			if r.To == string(nextup.SlotHandedBack) && r.From != r.To && span {
				f.HandBacks++
				f.HandBacksBy[r.Reason]++
			}
		case nextup.SubjectOffer:
			switch {
			case r.From == "" && (r.To == string(nextup.OfferOffered) || r.To == string(nextup.OfferPending)):
				if span {
					f.OffersMade++
					b := bandOf(max(intOf(r.Detail["position"]), 1))
					if _, ok := r.Detail["position"]; ok {
						bands[b].Offers++
					} else {
						b = -1
					}
					offers[r.SubjectID] = made{band: b}
				}
			case r.From != r.To && r.To == string(nextup.OfferClaimed):
				if m, ok := offers[r.SubjectID]; ok && m.band >= 0 {
					bands[m.band].Claimed++
				}
				if span {
					f.OffersClaimed++
				}
			case r.From != r.To && r.To == string(nextup.OfferDeclined) && span:
				f.OffersDeclined++
			case r.From != r.To && r.To == string(nextup.OfferExpired) && span:
				f.OffersLapsed++
			case r.From != r.To && r.To == string(nextup.OfferCancelled) && span:
				f.OffersCancelled++
			}
		case nextup.SubjectBooking:
			switch {
			case r.From == "" && r.To == string(nextup.BookingBooked):
				seats := max(intOf(r.Detail["seats"]), 1)
				if r.Reason == "claim" {
					// The seats of a claim cover the slot's releases,
					// oldest first; the one whose last seat it covers is
					// filled.
					covered := 0
					for _, rel := range open[r.SlotID] {
						if covered == seats {
							break
						}
						take := min(rel.left, seats-covered)
						rel.left -= take
						covered += take
						if rel.left == 0 && rel.inSpan && !rel.counted {
							rel.counted = true
							f.SlotsFilled++
							fills = append(fills, r.At.Sub(rel.at))
							for _, g := range groupsOf(r.SlotID) {
								g.SlotsFilled++
							}
						}
					}
					open[r.SlotID] = slices.DeleteFunc(open[r.SlotID], func(rel *release) bool { return rel.left == 0 })
				}
				if !span {
					continue
				}
				f.Bookings++
				if r.Reason == "claim" {
					f.SeatsClaimed += seats
					f.RevenueRecoveredCents += int64(seats) * priceOf(r.SlotID)
					for _, g := range groupsOf(r.SlotID) {
						g.SeatsClaimed += seats
						g.RevenueRecoveredCents += int64(seats) * priceOf(r.SlotID)
					}
				}
			case r.From != r.To && r.To == string(nextup.BookingNoShow) && span:
				f.NoShows++
			}
		case nextup.SubjectEntry:
			if !span || r.From == r.To {
				continue
			}
			switch {
			case r.From == "" && r.To == string(nextup.EntryWaiting):
				f.WaitlistJoined++
			case r.To == string(nextup.EntryLeft):
				f.WaitlistLeft++
			case r.To == string(nextup.EntryBooked):
				f.WaitlistBooked++
			case r.To == string(nextup.EntryExpired):
				f.WaitlistExpired++
			}
		}
	}
	for i := range bands {
		bands[i].Rate = ratio(bands[i].Claimed, bands[i].Offers)
	}
	f.AcceptanceByPlace = bands
	for i, dst := range []*[]Group{&f.ByService, &f.ByStaff, &f.ByWeekday} {
		*dst = []Group{}
		for _, g := range groups[i] {
			g.FillRate = ratio(g.SlotsFilled, g.SlotsFreed)
			*dst = append(*dst, *g)
		}
		if i == 2 {
			order := func(n string) int {
				for d := range 7 {
					if time.Weekday((d+1)%7).String() == n {
						return d
					}
				}
				return 7
			}
			sort.Slice(*dst, func(a, b int) bool { return order((*dst)[a].Name) < order((*dst)[b].Name) })
		} else {
			sort.Slice(*dst, func(a, b int) bool { return (*dst)[a].Name < (*dst)[b].Name })
		}
	}
	f.FillRate = ratio(f.SlotsFilled, f.SlotsFreed)
	f.NoShowRate = ratio(f.NoShows, f.Bookings)
	f.TimeToFillP50Seconds, f.TimeToFillP90Seconds = quantile(fills, 0.5), quantile(fills, 0.9)

	byCh := map[string]*ChannelFigure{}
	for _, m := range in.Messages {
		c := byCh[string(m.Channel)]
		if c == nil {
			c = &ChannelFigure{Channel: string(m.Channel)}
			byCh[string(m.Channel)] = c
		}
		c.Made++
		switch {
		case m.State == nextup.MessageSent:
			c.Sent++
		case m.State == nextup.MessageDead:
			c.Failed++
		}
	}
	f.Messages = []ChannelFigure{}
	for _, c := range byCh {
		f.Messages = append(f.Messages, *c)
	}
	sort.Slice(f.Messages, func(i, j int) bool { return f.Messages[i].Channel < f.Messages[j].Channel })
	return f, nil
}

// freed reports whether audit row r freed seats of its slot, why
// (cancellation, no_show or opening) and how many:
//
//   - a release (POST …:release, a bulk release): the slot's row from
//     booked=N, with the seats in its detail; the bookings it ended have
//     rows of their own marked by_release, not counted again;
//   - a booking ended on its own (cancelled, a no-show);
//   - a slot (not an event: its seats were never booked) made with free
//     seats, or grown: a new opening.
func freed(r nextup.AuditEvent, event bool) (reason string, seats int, ok bool) {
	switch r.SubjectType {
	case nextup.SubjectSlot:
		switch {
		case strings.HasPrefix(r.From, "booked=") && (r.Reason == FreedCancellation || r.Reason == FreedNoShow || r.Reason == FreedOpening):
			return r.Reason, max(intOf(r.Detail["seats"]), 1), true
		case event:
		case r.From == "" && r.To == "created":
			if n := intOf(r.Detail["capacity"]) - intOf(r.Detail["booked_seats"]); n > 0 {
				return FreedOpening, n, true
			}
		case strings.HasPrefix(r.From, "capacity=") && strings.HasPrefix(r.To, "capacity="):
			a, errA := strconv.Atoi(strings.TrimPrefix(r.From, "capacity="))
			b, errB := strconv.Atoi(strings.TrimPrefix(r.To, "capacity="))
			if errA == nil && errB == nil && b > a {
				return FreedOpening, b - a, true
			}
		}
	case nextup.SubjectBooking:
		if r.From != string(nextup.BookingBooked) || r.Detail["by_release"] == true {
			return "", 0, false
		}
		switch r.To {
		case string(nextup.BookingNoShow):
			return FreedNoShow, max(intOf(r.Detail["seats"]), 1), true
		case string(nextup.BookingCancelled):
			return FreedCancellation, max(intOf(r.Detail["seats"]), 1), true
		}
	}
	return "", 0, false
}

// intOf reads a number of an audit row's detail (JSON gives float64).
func intOf(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	}
	return 0
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(d)*1000) / 1000
}

// quantile is the q-quantile of ds in seconds, by the nearest rank; 0 for
// none.
func quantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)].Seconds()
}

// SlotFigures are the figures of one slot or event over its whole story:
// its seats freed, refilled from the waitlist and how fast, its offers and
// its no-shows (the event page's fill rate and time to fill).
func (s *Insight) SlotFigures(ctx context.Context, businessID, slotID string) (Figures, error) {
	var in Input
	err := s.Read(ctx, func(tx nextup.Tx) error {
		b, err := tx.BusinessGet(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		sl, err := tx.SlotGet(ctx, slotID)
		if err != nil || sl.BusinessID != businessID {
			return core.NotFound("slot", slotID, err)
		}
		in.Business, in.Slots = b, map[string]nextup.Slot{sl.ID: sl}
		in.Audit, err = auditRows(ctx, tx, nextup.AuditFilter{BusinessID: businessID, SlotID: slotID})
		return err
	})
	if err != nil {
		return Figures{}, err
	}
	return Compute(in, time.Unix(0, 0), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
}
