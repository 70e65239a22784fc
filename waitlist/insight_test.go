package waitlist_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/insight"
)

// monthModel is what a simulated month did, counted by the test from the
// answers of the use cases it called and the slots' own views, never from
// the audit trail the figures are computed from.
type monthModel struct {
	freed, filled, offers, claimed, declined, lapsed, handBacks, noShows, joined int
	freedBy                                                                      map[string]int
	fills                                                                        []time.Duration
	revenue                                                                      int64
	byWeekday                                                                    [7]int
	byHour                                                                       [24]int
}

// TestFiguresOfASimulatedMonth runs a seeded month on the fake clock —
// people joining, slots made booked and freed by cancellations, no-shows
// and new openings, offers claimed, declined and left to lapse, claimed
// bookings marked no-shows — and checks the month's figures against the
// test's own count of what happened.
func TestFiguresOfASimulatedMonth(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil; r.MaxOffersPerPersonPerDay = 0 })
		prices := map[string]int64{"haircut": 3000, "colour": 8000}
		services := []nextup.Service{{Name: "Haircut", PriceCents: 3000}, {Name: "Colour", PriceCents: 8000}}
		if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Services: &services}); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		m := monthModel{freedBy: map[string]int{}}
		freedAt := map[string][]time.Time{} // slot → when its seats were freed, not yet filled
		free := func(slotID, reason string) {
			m.freed++
			m.freedBy[reason]++
			freedAt[slotID] = append(freedAt[slotID], b.clock.Now())
			if reason == insight.FreedCancellation {
				lt := b.clock.Now().In(b.loc)
				m.byWeekday[lt.Weekday()]++
				m.byHour[lt.Hour()]++
			}
		}
		seen := map[string]bool{}
		// resolve answers every live offer of the slot until none is left,
		// and returns the bookings claimed.
		resolve := func(sl nextup.Slot) []string {
			var booked []string
			for {
				v := b.getSlot(t, sl.ID)
				var live *nextup.Offer
				for i, o := range v.Offers {
					if !seen[o.ID] {
						seen[o.ID] = true
						m.offers++
					}
					if o.State == nextup.OfferOffered {
						live = &v.Offers[i]
					}
				}
				if live == nil {
					return booked
				}
				switch x := rng.IntN(4); {
				case x < 2:
					res, err := b.svc.Claim(b.ctx, b.token(t, live.ID))
					if err != nil {
						t.Fatalf("seed %d: claim at %v of %+v: %v", seed, b.clock.Now(), *live, err)
					}
					m.claimed++
					m.revenue += prices[sl.Service]
					booked = append(booked, res.Booking.ID)
					at := freedAt[sl.ID]
					if len(at) > 0 {
						m.filled++
						m.fills = append(m.fills, b.clock.Now().Sub(at[0]))
						freedAt[sl.ID] = at[1:]
					}
				case x == 2:
					if _, _, err := b.svc.Decline(b.ctx, b.token(t, live.ID)); err != nil {
						t.Fatalf("seed %d: decline: %v", seed, err)
					}
					m.declined++
				default:
					// The window passes: its expiry fires, and the next
					// offer, if any, starts a whole window of its own.
					if err := timer.Advance(b.ctx, b.clock, b.sweeper, live.ExpiresAt.Sub(b.clock.Now())+time.Second); err != nil {
						t.Fatal(err)
					}
					m.lapsed++
				}
				b.clock.Advance(time.Duration(1+rng.IntN(8)) * time.Minute)
			}
		}
		handedBack := func(sl nextup.Slot, was bool) bool {
			now := b.getSlot(t, sl.ID).Slot.HandedBack
			if now && !was {
				m.handBacks++
			}
			return now
		}
		names := []string{"Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal", "Ida", "Jo"}
		for day := 1; day <= 28; day++ {
			if err := timer.Advance(b.ctx, b.clock, b.sweeper, b.at(day, 9, 0).Sub(b.clock.Now())); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				service := []string{"haircut", "colour"}[rng.IntN(2)]
				b.join(t, names[rng.IntN(len(names))]+string(rune('a'+day%26))+string(rune('a'+rng.IntN(26))), waitlist.JoinParams{Service: service})
				m.joined++
			}
			service := []string{"haircut", "colour"}[rng.IntN(2)]
			startsAt := b.at(day+1, 10+rng.IntN(6), 0)
			var sl nextup.Slot
			if rng.IntN(4) == 0 {
				// A new opening: made with its seat free.
				zero := 0
				b.clock.Advance(time.Duration(rng.IntN(8)) * time.Hour)
				sl = b.slot(t, waitlist.SlotParams{Service: service, StartsAt: startsAt, BookedSeats: &zero})
				free(sl.ID, insight.FreedOpening)
			} else {
				sl = b.slot(t, waitlist.SlotParams{Service: service, StartsAt: startsAt})
				b.clock.Advance(time.Duration(rng.IntN(8)) * time.Hour)
				reason := []string{insight.FreedCancellation, insight.FreedCancellation, insight.FreedNoShow, insight.FreedOpening}[rng.IntN(4)]
				if _, _, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, reason); err != nil {
					t.Fatalf("seed %d: release: %v", seed, err)
				}
				free(sl.ID, reason)
			}
			booked := resolve(sl)
			was := handedBack(sl, false)
			if len(booked) > 0 && rng.IntN(4) == 0 {
				// The person who claimed it did not come, before the
				// slot's start: the seat is freed again.
				if _, _, err := b.svc.NoShow(b.ctx, b.biz.ID, booked[len(booked)-1]); err != nil {
					t.Fatalf("seed %d: no-show: %v", seed, err)
				}
				m.noShows++
				free(sl.ID, insight.FreedNoShow)
				resolve(sl)
				handedBack(sl, was)
			}
		}

		from := time.Date(2026, 12, 1, 0, 0, 0, 0, b.loc)
		to := from.AddDate(0, 1, 0)
		f, err := b.svc.Figures(b.ctx, b.biz.ID, from, to)
		if err != nil {
			t.Fatal(err)
		}
		check := func(name string, got, want any) {
			t.Helper()
			if got != want {
				t.Errorf("seed %d: %s = %v, want %v", seed, name, got, want)
			}
		}
		check("slots_freed", f.SlotsFreed, m.freed)
		check("seats_freed", f.SeatsFreed, m.freed)
		for _, k := range []string{insight.FreedCancellation, insight.FreedNoShow, insight.FreedOpening} {
			check("freed_by "+k, f.FreedBy[k], m.freedBy[k])
		}
		check("slots_filled", f.SlotsFilled, m.filled)
		check("offers_made", f.OffersMade, m.offers)
		check("offers_claimed", f.OffersClaimed, m.claimed)
		check("offers_declined", f.OffersDeclined, m.declined)
		check("offers_lapsed", f.OffersLapsed, m.lapsed)
		check("bookings", f.Bookings, m.claimed)
		check("seats_claimed", f.SeatsClaimed, m.claimed)
		check("no_shows", f.NoShows, m.noShows)
		check("hand_backs", f.HandBacks, m.handBacks)
		check("revenue_recovered_cents", f.RevenueRecoveredCents, m.revenue)
		check("waitlist_joined", f.WaitlistJoined, m.joined)
		check("waitlist_booked", f.WaitlistBooked, m.claimed)
		check("cancellations_by_weekday", f.CancellationsByWeekday, m.byWeekday)
		check("cancellations_by_hour", f.CancellationsByHour, m.byHour)
		if m.freed > 0 {
			check("fill_rate", f.FillRate, float64(int(float64(m.filled)/float64(m.freed)*1000+0.5))/1000)
		}
		slices.Sort(m.fills)
		if len(m.fills) > 0 {
			check("time_to_fill_p50_seconds", f.TimeToFillP50Seconds, m.fills[(len(m.fills)+1)/2-1].Seconds())
			p90 := (len(m.fills)*9 + 9) / 10 // ceil(0.9 n)
			check("time_to_fill_p90_seconds", f.TimeToFillP90Seconds, m.fills[p90-1].Seconds())
		}
		if m.claimed > 0 {
			check("no_show_rate", f.NoShowRate, float64(int(float64(m.noShows)/float64(m.claimed)*1000+0.5))/1000)
		}
		// Every offer was made with the person's place in line: the bands
		// add up to the offers, and their claims to the claims.
		var inBands, claimedInBands int
		for _, p := range f.AcceptanceByPlace {
			inBands += p.Offers
			claimedInBands += p.Claimed
		}
		check("offers by place", inBands, m.offers)
		// Every slot has a service and a weekday: the groups add up.
		for name, groups := range map[string][]insight.Group{"by_service": f.ByService, "by_weekday": f.ByWeekday} {
			var freed, filled int
			var revenue int64
			for _, g := range groups {
				freed, filled, revenue = freed+g.SlotsFreed, filled+g.SlotsFilled, revenue+g.RevenueRecoveredCents
			}
			check(name+" freed", freed, m.freed)
			check(name+" filled", filled, m.filled)
			check(name+" revenue", revenue, m.revenue)
		}
		check("claims by place", claimedInBands, m.claimed)
		// The messages made, by channel, as the outbox holds them.
		var msgs []nextup.Message
		if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
			var err error
			msgs, err = tx.MessageList(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		made := 0
		for _, c := range f.Messages {
			made += c.Made
		}
		check("messages made", made, len(msgs))
		if t.Failed() {
			t.Logf("seed %d: figures %+v; model %+v", seed, f, m)
			return
		}
		t.Logf("seed %d: %d freed, %d filled, %d offers (%d claimed, %d declined, %d lapsed), %d no-shows, %d hand-backs",
			seed, m.freed, m.filled, m.offers, m.claimed, m.declined, m.lapsed, m.noShows, m.handBacks)
	}
}

// TestStaffEditAuditsBeforeAndAfter: a staff edit of an entry records,
// on its audit row, each field it changed with its value before and
// after, and nothing for the fields it left alone.
func TestStaffEditAuditsBeforeAndAfter(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.join(t, "Ann", waitlist.JoinParams{PartySize: 2, Staff: "Ana"})
	yes, three, staff := true, 3, "Ana"
	latest := b.at(5, 0, 0)
	if _, _, err := b.svc.UpdateEntry(b.ctx, b.biz.ID, ann.ID, waitlist.EntryPatch{Priority: &yes, PartySize: &three, Staff: &staff, Latest: &latest}); err != nil {
		t.Fatal(err)
	}
	var rows []nextup.AuditEvent
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		rows, err = tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: b.biz.ID, SubjectType: nextup.SubjectEntry, SubjectID: ann.ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	if last.Reason != "updated" || last.Actor != nextup.ActorStaff {
		t.Fatalf("last row %+v", last)
	}
	ch, _ := last.Detail["changes"].(map[string]any)
	want := map[string]any{
		"priority":   map[string]any{"from": false, "to": true},
		"party_size": map[string]any{"from": 2.0, "to": 3.0},
		"latest":     map[string]any{"from": "", "to": "2026-12-06T00:00:00Z"},
	}
	if len(ch) != len(want) {
		t.Errorf("changes %v, want exactly %v (staff was set to what it was)", ch, want)
	}
	for k, v := range want {
		got, _ := json.Marshal(ch[k])
		exp, _ := json.Marshal(v)
		if string(got) != string(exp) {
			t.Errorf("changes[%s] = %s, want %s", k, got, exp)
		}
	}
}

// TestEventFillRate: an event's figures over its story — a confirmed
// guest cancels, the seat goes to the first on its waitlist, who takes it
// five minutes later: one seat freed, refilled in five minutes; the
// event is not counted as a new opening when it is made.
func TestEventFillRate(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ev := guestEvent(t, b, 2, 0)
	regs := map[string]waitlist.Registration{}
	for _, name := range []string{"Ann", "Bob", "Cat"} {
		reg, _, err := b.svc.Register(b.ctx, b.biz.ID, ev.ID, waitlist.RegisterParams{Name: name, Email: strings.ToLower(name) + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		regs[name] = reg
	}
	b.clock.Advance(time.Hour)
	_, moves, err := b.svc.CancelRegistration(b.ctx, b.biz.ID, ev.ID, regs["Ann"].Entry.ID, nextup.ActorCustomer)
	if err != nil || len(moves) != 1 || moves[0].EntryID != regs["Cat"].Entry.ID {
		t.Fatalf("cancel: %+v %v", moves, err)
	}
	b.clock.Advance(5 * time.Minute)
	if _, err := b.svc.Claim(b.ctx, b.token(t, moves[0].OfferID)); err != nil {
		t.Fatal(err)
	}
	f, err := b.svc.SlotFigures(b.ctx, b.biz.ID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.SlotsFreed != 1 || f.SeatsFreed != 1 || f.FreedBy[insight.FreedCancellation] != 1 || f.SlotsFilled != 1 ||
		f.TimeToFillP50Seconds != 300 || f.OffersMade != 1 || f.OffersClaimed != 1 || f.Bookings != 3 {
		t.Errorf("the event's figures: %+v", f)
	}
	if _, err := b.svc.SlotFigures(b.ctx, "biz_other", ev.ID); nextup.ErrorCode(err) != nextup.CodeNotFound {
		t.Errorf("another business's event: %v", err)
	}
}
