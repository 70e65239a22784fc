package events

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// EventStats is what an organiser reads about an event: the live counts
// against capacity, the promotion history, and the figures organisers ask
// for (waitlist-to-capacity ratio, acceptance rate by waitlist position,
// no-show rate).
type EventStats struct {
	Event nextup.Slot
	// People (registrations) and the seats they take, by state.
	Confirmed, Held, Waitlisted                int
	ConfirmedSeats, HeldSeats, WaitlistedSeats int
	Cancelled                                  int
	CheckedIn, NoShows                         int
	// Acceptance by the place a promoted registrant had on the waitlist
	// when offered: finished offers only (claimed, or declined, expired,
	// cancelled), places 1 to 10 and "11+".
	Acceptance []PositionRate
	// Promotions are the offers made for the event, newest first, with
	// the staff overrides among them.
	Promotions []Promotion
}

// PositionRate is how offers made at one waitlist place ended.
type PositionRate struct {
	Label            string // "1" … "10", "11+"
	Offered, Claimed int
}

// Promotion is one offer of the event's seats, or a staff override.
type Promotion struct {
	At       time.Time
	EntryID  string
	Name     string
	OfferID  string
	Position int    // on the waitlist when offered; 0 when unknown
	State    string // the offer's state ("" for an override that queued someone next)
	Override bool
	By       string // the staff member of an override
	Reason   string // an override's reason; else why the offer ended, or the engine's move while it is live or once claimed
}

// maxPositionBucket is the last waitlist place counted on its own.
const maxPositionBucket = 10

// EventStats reads an event's figures.
func (s *Events) EventStats(ctx context.Context, businessID, eventID string) (EventStats, error) {
	var st EventStats
	err := s.Read(ctx, func(tx nextup.Tx) error {
		w := wrap(s.WorkIn(tx))
		sl, err := w.eventOf(ctx, businessID, eventID)
		if err != nil {
			return err
		}
		st.Event = sl
		regs, err := w.registrations(ctx, sl)
		if err != nil {
			return err
		}
		names := make(map[string]string, len(regs))
		for _, r := range regs {
			names[r.Entry.ID] = r.Entry.Name
			switch r.State {
			case RegConfirmed:
				st.Confirmed++
				st.ConfirmedSeats += r.Entry.PartySize
				if r.Booking != nil && r.Booking.CheckedInAt != nil {
					st.CheckedIn++
				}
			case RegOffered:
				st.Held++
				st.HeldSeats += r.Entry.PartySize
			case RegWaitlisted:
				st.Waitlisted++
				st.WaitlistedSeats += r.Entry.PartySize
			case RegCancelled:
				st.Cancelled++
			case RegNoShow:
				st.NoShows++
			}
		}
		offers, err := tx.OfferListBySlot(ctx, sl.ID)
		if err != nil {
			return err
		}
		audit, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: sl.BusinessID, SlotID: sl.ID})
		if err != nil {
			return err
		}
		st.Acceptance, st.Promotions = promotions(offers, audit, names)
		return nil
	})
	return st, err
}

// promotions reads the offers of an event with the places recorded on
// their audit rows, and the staff overrides.
func promotions(offers []nextup.Offer, audit []nextup.AuditEvent, names map[string]string) ([]PositionRate, []Promotion) {
	pos, move := map[string]int{}, map[string]string{}
	var out []Promotion
	for _, ev := range audit {
		switch {
		case ev.SubjectType == nextup.SubjectOffer && ev.From == "" && ev.Detail != nil:
			pos[ev.SubjectID], move[ev.SubjectID] = detailInt(ev.Detail["position"]), ev.Reason
		case ev.SubjectType == nextup.SubjectEntry && ev.Reason == "override":
			p := Promotion{At: ev.At, EntryID: ev.SubjectID, Name: names[ev.SubjectID], Position: detailInt(ev.Detail["position"]),
				Override: true, By: fmt.Sprint(ev.Detail["by"]), Reason: fmt.Sprint(ev.Detail["reason"])}
			if ev.To == string(nextup.EntryOffered) {
				p.State = "offered by staff"
			} else {
				p.State = "put first in line"
			}
			out = append(out, p)
		}
	}
	rates := make([]PositionRate, maxPositionBucket+1)
	for i := range rates {
		rates[i].Label = fmt.Sprint(i + 1)
	}
	rates[maxPositionBucket].Label = fmt.Sprintf("%d+", maxPositionBucket+1)
	for _, o := range offers {
		p := pos[o.ID]
		out = append(out, Promotion{At: o.CreatedAt, EntryID: o.EntryID, Name: names[o.EntryID], OfferID: o.ID, Position: p,
			State: string(o.State), Reason: cmp.Or(o.Reason, move[o.ID])})
		if p <= 0 || o.State.Live() {
			continue
		}
		b := &rates[min(p, maxPositionBucket+1)-1]
		b.Offered++
		if o.State == nextup.OfferClaimed {
			b.Claimed++
		}
	}
	// Trailing places nobody was offered from are left out.
	for len(rates) > 0 && rates[len(rates)-1].Offered == 0 {
		rates = rates[:len(rates)-1]
	}
	slices.SortStableFunc(out, func(a, b Promotion) int { return b.At.Compare(a.At) })
	return rates, out
}

// detailInt reads a number of an audit row's detail, which comes back
// from the store as JSON (a float64) or as written (an int).
func detailInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}
