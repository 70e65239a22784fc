package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// seedPastMonth gives the demo business a month of history before now, so
// that its dashboard has a monthly summary to show: last month, every day
// but Sunday, on a fake clock that starts on its first morning, people
// join, a booked chair is freed (a cancellation, a no-show or a new
// opening) and its offers are claimed, declined or left to lapse, and the
// messages go out as they would have. Whoever is still waiting at the end
// of the month leaves, so that today's demo list is the one seedSalon
// makes; the clock is run on to now so that nothing of the past is left to
// fire. It returns the month, summed up by the caller, and Rosa's entry:
// she waited for a haircut with Ben only, saw his slots go to people
// ahead of her before one came to her, and the demo shows her replay. The mix is seeded: every demo has the same month.
func seedPastMonth(ctx context.Context, st nextup.Store, bid, base string, now time.Time, loc *time.Location) (month, rosa string, err error) {
	n := now.In(loc)
	first := time.Date(n.Year(), n.Month()-1, 1, 9, 0, 0, 0, loc)
	clock := nextup.NewFakeClock(first)
	svc := waitlist.New(st, clock, base)
	sweeper := &timer.Sweeper{Store: st, Clock: clock, Handler: svc}
	relay := &outbox.Relay{Store: st, Clock: clock, Default: capture.New()}
	relay.OnSent = svc.Handed
	rng := rand.New(rand.NewPCG(2026, 11))
	advance := func(to time.Time) error {
		if !to.After(clock.Now()) {
			return nil
		}
		if err := timer.Advance(ctx, clock, sweeper, to.Sub(clock.Now())); err != nil {
			return err
		}
		for {
			sent, failed, err := relay.RunOnce(ctx)
			if err != nil || sent+failed == 0 {
				return err
			}
		}
	}
	names := []string{"Aisha", "Bram", "Chloe", "Dev", "Elif", "Finn", "Grace", "Hugo", "Isla", "Jonah", "Kemi", "Luca", "Maya", "Nils", "Orla", "Priya"}
	services := []string{"haircut", "haircut", "colour"}
	var joined []string
	for day := first; day.Month() == first.Month(); day = day.AddDate(0, 0, 1) {
		if day.Weekday() == time.Sunday {
			continue
		}
		if err := advance(time.Date(day.Year(), day.Month(), day.Day(), 9, rng.IntN(50), 0, 0, loc)); err != nil {
			return "", "", err
		}
		service, staff := services[rng.IntN(len(services))], []string{"Ana", "Ben"}[rng.IntN(2)]
		if day.Day() == 3 {
			// Sol, then Rosa, who will only see Ben; today's slot is
			// Ben's, and goes to Sol, ahead of her.
			for _, name := range []string{"Sol", "Rosa"} {
				p := waitlist.JoinParams{Name: name, Email: strings.ToLower(name) + "@example.com", Service: "haircut", Source: "form"}
				if name == "Rosa" {
					p.Staff = "Ben"
				}
				res, err := svc.Join(ctx, bid, p)
				if err != nil {
					return "", "", fmt.Errorf("past month: join: %w", err)
				}
				joined = append(joined, res.Entry.ID)
				rosa = res.Entry.ID
				clock.Advance(time.Minute)
			}
			service, staff = "haircut", "Ben"
		}
		for range 1 + rng.IntN(2) {
			name := names[rng.IntN(len(names))]
			res, err := svc.Join(ctx, bid, waitlist.JoinParams{Name: name, Email: fmt.Sprintf("%s.%d@example.com", name, len(joined)),
				Service: services[rng.IntN(len(services))], Source: "form"})
			if err != nil {
				return "", "", fmt.Errorf("past month: join: %w", err)
			}
			joined = append(joined, res.Entry.ID)
			clock.Advance(time.Duration(1+rng.IntN(20)) * time.Minute)
		}
		start := time.Date(day.Year(), day.Month(), day.Day()+1, 10+rng.IntN(7), 0, 0, 0, loc)
		if start.Weekday() == time.Sunday {
			start = start.AddDate(0, 0, 1)
		}
		sl, _, err := svc.CreateSlot(ctx, bid, waitlist.SlotParams{Service: service, Staff: staff,
			StartsAt: start, EndsAt: start.Add(45 * time.Minute)})
		if err != nil {
			return "", "", fmt.Errorf("past month: slot: %w", err)
		}
		if err := advance(clock.Now().Add(time.Duration(1+rng.IntN(6)) * time.Hour)); err != nil {
			return "", "", err
		}
		reason := []string{"cancellation", "cancellation", "cancellation", "no_show", "opening"}[rng.IntN(5)]
		if _, _, err := svc.Release(ctx, bid, sl.ID, 0, reason); err != nil {
			return "", "", fmt.Errorf("past month: release: %w", err)
		}
		for range 6 {
			v, err := svc.GetSlot(ctx, bid, sl.ID)
			if err != nil {
				return "", "", err
			}
			var live *nextup.Offer
			for i, o := range v.Offers {
				if o.State == nextup.OfferOffered {
					live = &v.Offers[i]
				}
			}
			if live == nil {
				break
			}
			// A few minutes to answer, within what is left of the window.
			wait := min(time.Duration(1+rng.IntN(8))*time.Minute, live.ExpiresAt.Sub(clock.Now())-30*time.Second)
			if err := advance(clock.Now().Add(wait)); err != nil {
				return "", "", err
			}
			token, err := claimToken(ctx, st, bid, live.ID)
			if err != nil {
				return "", "", err
			}
			switch x := rng.IntN(20); {
			case x < 12:
				_, err = svc.Claim(ctx, token)
			case x < 16:
				_, _, err = svc.Decline(ctx, token)
			default:
				err = advance(live.ExpiresAt.Add(time.Second)) // left to lapse
			}
			if err != nil {
				return "", "", fmt.Errorf("past month: answer an offer: %w", err)
			}
		}
	}
	// The month ends: those still waiting give up, and the clock runs on
	// to now so that every timer of the past has fired.
	for _, id := range joined {
		if _, _, err := svc.Leave(ctx, bid, id, nextup.ActorCustomer); err != nil && nextup.ErrorCode(err) != nextup.CodeEntryNotActive {
			return "", "", fmt.Errorf("past month: leave: %w", err)
		}
	}
	if err := advance(now); err != nil {
		return "", "", err
	}
	return first.Format("2006-01"), rosa, nil
}
