package engine_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	sharedSlot := func(capacity, booked, held int) func(*Input) {
		return func(in *Input) {
			in.Slot.Seating, in.Slot.Capacity, in.Slot.BookedSeats, in.Slot.HeldSeats = nextup.SeatingShared, capacity, booked, held
		}
	}
	history := func(os ...nextup.Offer) func(*Input) { return func(in *Input) { in.History = os } }
	cands := func(es ...nextup.Entry) func(*Input) {
		return func(in *Input) {
			for _, e := range es {
				in.Cands = append(in.Cands, cand(e))
			}
		}
	}
	rules := func(mod func(*nextup.Rules)) func(*Input) { return func(in *Input) { mod(&in.Rules) } }
	slot := func(mod func(*nextup.Slot)) func(*Input) { return func(in *Input) { mod(&in.Slot) } }
	startsIn := func(d time.Duration) func(*Input) {
		return func(in *Input) { in.Slot.StartsAt = in.Now.Add(d) }
	}
	sameEmail := func(e *nextup.Entry) { e.Email = "Pat@Example.com " }
	eventSlot := func(mod func(*nextup.EventSettings)) func(*Input) {
		return func(in *Input) {
			ev := &nextup.EventSettings{ClaimWindow: nextup.DefaultEventClaimWindow}
			if mod != nil {
				mod(ev)
			}
			in.Slot.ID, in.Slot.Kind, in.Slot.Service, in.Slot.Event = "ev1", nextup.KindEvent, "", ev
		}
	}
	ofEvent := func(e *nextup.Entry) { e.EventID, e.Service = "ev1", "" }
	withCands := func(mod func(*engine.Candidate)) func(*Input) {
		return func(in *Input) { mod(&in.Cands[0]) }
	}

	type want struct {
		move    nextup.MoveKind
		reason  string
		offers  []string // entry ids, in order
		seats   []int
		skipped []engine.Skip
	}
	tests := []struct {
		name string
		mods []func(*Input)
		want want
	}{
		{"slot started", []func(*Input){startsIn(0), cands(entry("e1"))}, want{reason: engine.IdlePast}},
		{"slot handed back", []func(*Input){slot(func(s *nextup.Slot) { s.HandedBack = true }), cands(entry("e1"))}, want{reason: engine.IdleHandedBack}},
		{"no free seats", []func(*Input){slot(func(s *nextup.Slot) { s.BookedSeats = 1 }), cands(entry("e1"))}, want{reason: engine.IdleNoSeats}},
		{"unit slot held by its offer", []func(*Input){slot(func(s *nextup.Slot) { s.HeldSeats = 1 }), history(offer("e0", nextup.OfferOffered)), cands(entry("e1"))},
			want{reason: engine.IdleNoSeats}},
		{"unit slot already held, seats left", []func(*Input){slot(func(s *nextup.Slot) { s.Capacity, s.HeldSeats = 2, 1 }), cands(entry("e1", party(2)))},
			want{reason: engine.IdleHeld}},

		{"too soon: hand back", []func(*Input){startsIn(14 * time.Minute), cands(entry("e1"))}, want{move: nextup.MoveHandBack, reason: nextup.HandBackTooSoon}},
		{"too soon with a live offer: wait", []func(*Input){startsIn(14 * time.Minute), sharedSlot(4, 0, 1), history(offer("e0", nextup.OfferOffered)), cands(entry("e1"))},
			want{reason: engine.IdleLiveOffers}},
		{"too soon for any claim window: hand back", []func(*Input){
			func(in *Input) { in.Now = at(london, 2026, 6, 10, 23, 0) },
			slot(func(s *nextup.Slot) { s.StartsAt = at(london, 2026, 6, 11, 8, 10) }),
			cands(entry("e1")),
		}, want{move: nextup.MoveHandBack, reason: nextup.HandBackTooSoon}},
		{"time-critical exception lets it through the night", []func(*Input){
			func(in *Input) { in.Now = at(london, 2026, 6, 10, 23, 0) },
			rules(func(r *nextup.Rules) { r.TimeCriticalThroughQuiet = true }),
			slot(func(s *nextup.Slot) { s.StartsAt = at(london, 2026, 6, 11, 8, 9) }),
			cands(entry("e1")),
		}, want{move: nextup.MoveOffer, offers: []string{"e1"}, seats: []int{1}}},

		{"try cap reached: hand back", []func(*Input){
			rules(func(r *nextup.Rules) { r.MaxOffersPerSlot = 2 }),
			history(offer("e1", nextup.OfferExpired), offer("e2", nextup.OfferDeclined)),
			cands(entry("e3")),
		}, want{move: nextup.MoveHandBack, reason: nextup.HandBackTryCap}},
		{"try cap reached with a live offer: wait", []func(*Input){
			rules(func(r *nextup.Rules) { r.MaxOffersPerSlot = 2 }), sharedSlot(4, 0, 1),
			history(offer("e1", nextup.OfferExpired), offer("e2", nextup.OfferOffered)),
			cands(entry("e3")),
		}, want{reason: engine.IdleLiveOffers}},
		{"try cap stops a batch", []func(*Input){
			rules(func(r *nextup.Rules) { r.MaxOffersPerSlot = 3 }), sharedSlot(10, 0, 0),
			history(offer("e1", nextup.OfferDeclined)),
			cands(entry("e1"), entry("e2"), entry("e3"), entry("e4")),
		}, want{move: nextup.MoveRollOn, offers: []string{"e2", "e3"}, seats: []int{1, 1}}},

		{"nobody waiting", nil, want{move: nextup.MoveNobodyFits}},
		{"nobody fits", []func(*Input){cands(
			entry("e1", func(e *nextup.Entry) { e.Service = "colour" }),
			entry("e2", func(e *nextup.Entry) { e.Staff = "bob" }),
			entry("e3", party(2)),
		)}, want{move: nextup.MoveNobodyFits}},
		{"offer to the first that fits", []func(*Input){cands(
			entry("e1", func(e *nextup.Entry) { e.Staff = "bob" }),
			entry("e2"),
			entry("e3"),
		)}, want{move: nextup.MoveOffer, offers: []string{"e2"}, seats: []int{1}}},
		{"roll on after a decline", []func(*Input){history(offer("e1", nextup.OfferDeclined)), cands(entry("e1"), entry("e2"))},
			want{move: nextup.MoveRollOn, offers: []string{"e2"}, seats: []int{1}}},
		{"moved to the back by its lapse, the slot offered to another since: offered again", []func(*Input){
			history(lapsedAt(offer("e1", nextup.OfferExpired), -50*time.Minute), lapsedAt(offer("e2", nextup.OfferDeclined), -10*time.Minute)),
			func(in *Input) { in.History[1].CreatedAt = testNow.Add(-50 * time.Minute) },
			cands(entry("e1", movedBack(-50*time.Minute)), entry("e2"))},
			want{move: nextup.MoveRollOn, offers: []string{"e1"}, seats: []int{1}}},
		{"moved to the back by its lapse, nobody else offered since: not again yet", []func(*Input){
			history(lapsedAt(offer("e1", nextup.OfferDeclined), -50*time.Minute)),
			cands(entry("e1", movedBack(-50*time.Minute)))},
			want{move: nextup.MoveHandBack, reason: nextup.HandBackListExhausted}},
		{"offered at the moment it joined: not again", []func(*Input){
			history(offer("e1", nextup.OfferDeclined)), cands(entry("e1", func(e *nextup.Entry) { e.JoinedAt = testNow.Add(-time.Hour) }), entry("e2"))},
			want{move: nextup.MoveRollOn, offers: []string{"e2"}, seats: []int{1}}},
		{"shared: one moved to the back is offered a seat after someone else is", []func(*Input){
			sharedSlot(4, 2, 0), history(lapsedAt(offer("e1", nextup.OfferDeclined), -50*time.Minute)),
			cands(entry("e1", movedBack(-50*time.Minute)), entry("e2"))},
			want{move: nextup.MoveRollOn, offers: []string{"e2", "e1"}, seats: []int{1, 1}}},
		{"unit: one moved to the back waits while the slot goes to another", []func(*Input){
			history(lapsedAt(offer("e1", nextup.OfferDeclined), -50*time.Minute)),
			cands(entry("e1", movedBack(-50*time.Minute)), entry("e2"))},
			want{move: nextup.MoveRollOn, offers: []string{"e2"}, seats: []int{1}}},
		{"roll on after an expiry", []func(*Input){history(offer("e1", nextup.OfferExpired)), cands(entry("e2"))},
			want{move: nextup.MoveRollOn, offers: []string{"e2"}, seats: []int{1}}},
		{"roll on after a cancellation", []func(*Input){history(offer("e1", nextup.OfferCancelled)), cands(entry("e2"))},
			want{move: nextup.MoveRollOn, offers: []string{"e2"}, seats: []int{1}}},
		{"seats freed after a claim: a fresh offer", []func(*Input){sharedSlot(4, 2, 0), history(offer("e1", nextup.OfferClaimed)), cands(entry("e2"))},
			want{move: nextup.MoveOffer, offers: []string{"e2"}, seats: []int{1}}},
		{"list exhausted", []func(*Input){history(offer("e1", nextup.OfferExpired)), cands(entry("e1"), entry("e2", party(3)))},
			want{move: nextup.MoveHandBack, reason: nextup.HandBackListExhausted}},
		{"only claimed offers before, nobody left: nobody fits, not a hand-back", []func(*Input){sharedSlot(4, 3, 0),
			history(offer("e1", nextup.OfferClaimed), offer("e2", nextup.OfferClaimed)), cands(entry("e1"))},
			want{move: nextup.MoveNobodyFits}},
		{"try cap counts the people tried, not earlier bookings", []func(*Input){
			rules(func(r *nextup.Rules) { r.MaxOffersPerSlot = 2 }), sharedSlot(10, 2, 0),
			history(offer("e1", nextup.OfferClaimed), offer("e2", nextup.OfferClaimed), offer("e3", nextup.OfferDeclined)),
			cands(entry("e4"), entry("e5")),
		}, want{move: nextup.MoveRollOn, offers: []string{"e4"}, seats: []int{1}}},
		{"nobody left but a live offer: wait", []func(*Input){sharedSlot(4, 0, 1), history(offer("e1", nextup.OfferPending)), cands(entry("e1"))},
			want{reason: engine.IdleLiveOffers}},

		{"daily cap: skipped, next one offered", []func(*Input){
			cands(entry("e1"), entry("e2")),
			withCands(func(c *engine.Candidate) { c.OffersToday = 3 }),
		}, want{move: nextup.MoveOffer, offers: []string{"e2"}, seats: []int{1}, skipped: []engine.Skip{{EntryID: "e1", Reason: engine.SkipDailyCap}}}},
		{"daily cap off", []func(*Input){
			rules(func(r *nextup.Rules) { r.MaxOffersPerPersonPerDay = 0 }),
			cands(entry("e1")),
			withCands(func(c *engine.Candidate) { c.OffersToday = 30 }),
		}, want{move: nextup.MoveOffer, offers: []string{"e1"}, seats: []int{1}}},
		{"daily cap counts this batch: same person twice", []func(*Input){
			sharedSlot(4, 0, 0),
			cands(entry("e1", sameEmail), entry("e2", func(e *nextup.Entry) { e.Email = "pat@example.com" }), entry("e3")),
			func(in *Input) { in.Cands[0].OffersToday, in.Cands[1].OffersToday = 2, 2 }, // one person, one count
		}, want{move: nextup.MoveOffer, offers: []string{"e1", "e3"}, seats: []int{1, 1}, skipped: []engine.Skip{{EntryID: "e2", Reason: engine.SkipDailyCap, Before: 1}}}},
		{"no channel: skipped", []func(*Input){
			cands(entry("e1", func(e *nextup.Entry) { e.Email = "" }), entry("e2"), entry("e3")),
			func(in *Input) { in.Cands[1].Suppressed = []nextup.Channel{nextup.ChannelEmail} },
		}, want{move: nextup.MoveOffer, offers: []string{"e3"}, seats: []int{1}, skipped: []engine.Skip{
			{EntryID: "e1", Reason: engine.SkipNoChannel}, {EntryID: "e2", Reason: engine.SkipNoChannel},
		}}},
		{"everyone skipped: nobody fits", []func(*Input){
			cands(entry("e1", func(e *nextup.Entry) { e.Email = "" })),
		}, want{move: nextup.MoveNobodyFits, skipped: []engine.Skip{{EntryID: "e1", Reason: engine.SkipNoChannel}}}},

		{"down-fit allowed: a couple at a table for four", []func(*Input){
			rules(func(r *nextup.Rules) { r.DownFit = true }),
			slot(func(s *nextup.Slot) { s.Capacity, s.MinParty = 4, 2 }),
			cands(entry("e1", party(1)), entry("e2", party(2))),
		}, want{move: nextup.MoveOffer, offers: []string{"e2"}, seats: []int{4}}},
		{"down-fit forbidden", []func(*Input){
			slot(func(s *nextup.Slot) { s.Capacity, s.MinParty = 4, 2 }),
			cands(entry("e1", party(2))),
		}, want{move: nextup.MoveNobodyFits}},

		{"unit: one offer even when many fit", []func(*Input){cands(entry("e1"), entry("e2"), entry("e3"))},
			want{move: nextup.MoveOffer, offers: []string{"e1"}, seats: []int{1}}},
		{"shared: batch promotion never over-allocates", []func(*Input){
			sharedSlot(6, 1, 0),
			cands(entry("e1", party(2)), entry("e2", party(2)), entry("e3", party(2)), entry("e4", party(1)), entry("e5", party(1))),
		}, want{move: nextup.MoveOffer, offers: []string{"e1", "e2", "e4"}, seats: []int{2, 2, 1}}},
		{"shared: seats left after the list", []func(*Input){
			sharedSlot(6, 0, 2), history(offer("e0", nextup.OfferOffered)),
			cands(entry("e1", party(3))),
		}, want{move: nextup.MoveOffer, offers: []string{"e1"}, seats: []int{3}}},
		{"event: batch promotion of its own entries", []func(*Input){
			func(in *Input) {
				in.Slot.ID, in.Slot.Kind, in.Slot.Service = "ev1", nextup.KindEvent, ""
			},
			sharedSlot(30, 28, 0),
			cands(
				entry("e1", func(e *nextup.Entry) { e.EventID, e.Service = "ev1", "" }),
				entry("e2", func(e *nextup.Entry) { e.EventID, e.Service = "ev2", "" }),
				entry("e3", func(e *nextup.Entry) { e.EventID, e.Service = "ev1", "" }),
			),
		}, want{move: nextup.MoveOffer, offers: []string{"e1", "e3"}, seats: []int{1, 1}}},
		{"event: a party of 3 is skipped when 2 seats are free, a single behind it is offered", []func(*Input){
			eventSlot(nil), sharedSlot(30, 28, 0),
			cands(entry("e1", ofEvent, party(3)), entry("e2", ofEvent), entry("e3", ofEvent, party(2))),
		}, want{move: nextup.MoveOffer, offers: []string{"e2"}, seats: []int{1}}},
		{"event: past its promotion cutoff, freed seats go back to staff", []func(*Input){
			eventSlot(func(ev *nextup.EventSettings) { ev.PromotionCutoff = 48 * time.Hour }), sharedSlot(30, 28, 0), startsIn(47 * time.Hour),
			cands(entry("e1", ofEvent)),
		}, want{move: nextup.MoveHandBack, reason: nextup.HandBackPromotionCutoff}},
		{"event: before its promotion cutoff, promoted", []func(*Input){
			eventSlot(func(ev *nextup.EventSettings) { ev.PromotionCutoff = 48 * time.Hour }), sharedSlot(30, 28, 0), startsIn(49 * time.Hour),
			cands(entry("e1", ofEvent)),
		}, want{move: nextup.MoveOffer, offers: []string{"e1"}, seats: []int{1}}},
		{"event: past its promotion cutoff with a live offer: wait", []func(*Input){
			eventSlot(func(ev *nextup.EventSettings) { ev.PromotionCutoff = 48 * time.Hour }), sharedSlot(30, 27, 1), startsIn(47 * time.Hour),
			history(offer("e0", nextup.OfferOffered)), cands(entry("e1", ofEvent)),
		}, want{reason: engine.IdleLiveOffers}},
		{"event: the business's try cap does not stop an event's list", []func(*Input){
			eventSlot(nil), sharedSlot(30, 29, 0), rules(func(r *nextup.Rules) { r.MaxOffersPerSlot = 2 }),
			history(offer("e1", nextup.OfferExpired), offer("e2", nextup.OfferDeclined)),
			cands(entry("e3", ofEvent)),
		}, want{move: nextup.MoveRollOn, offers: []string{"e3"}, seats: []int{1}}},
		{"an entry repeated in the list is offered once", []func(*Input){sharedSlot(4, 0, 0), cands(entry("e1"), entry("e1"), entry("e2"))},
			want{move: nextup.MoveOffer, offers: []string{"e1", "e2"}, seats: []int{1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := setup()
			for _, mod := range tt.mods {
				mod(&in)
			}
			got := engine.Decide(in.engine())
			var ids []string
			var seats []int
			for _, o := range got.Offers {
				ids = append(ids, o.EntryID)
				seats = append(seats, o.Seats)
			}
			if got.Move != tt.want.move || got.Reason != tt.want.reason ||
				!slices.Equal(ids, tt.want.offers) || !slices.Equal(seats, tt.want.seats) ||
				!slices.Equal(got.Skipped, tt.want.skipped) {
				t.Errorf("Decide = move %q reason %q offers %v seats %v skipped %v\nwant   move %q reason %q offers %v seats %v skipped %v",
					got.Move, got.Reason, ids, seats, got.Skipped,
					tt.want.move, tt.want.reason, tt.want.offers, tt.want.seats, tt.want.skipped)
			}
		})
	}
}

// TestDecideOfferFields checks what an offer carries, by day and by night.
func TestDecideOfferFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		now   time.Time
		start time.Time
		entry nextup.Entry
		want  engine.Offer
	}{
		{"daytime, by text", testNow, testNow.Add(4 * time.Hour),
			entry("e1", func(e *nextup.Entry) { e.Phone = "+447700900001" }),
			engine.Offer{EntryID: "e1", Seats: 1, PartySize: 1, Channel: nextup.ChannelSMS, State: nextup.OfferOffered,
				SendAt: testNow, ExpiresAt: testNow.Add(10 * time.Minute)}},
		{"at night: pending until 08:00", at(london, 2026, 6, 10, 22, 0), at(london, 2026, 6, 11, 14, 0),
			entry("e1"),
			engine.Offer{EntryID: "e1", Seats: 1, PartySize: 1, Channel: nextup.ChannelEmail, State: nextup.OfferPending,
				SendAt: at(london, 2026, 6, 11, 8, 0), ExpiresAt: at(london, 2026, 6, 11, 8, 10)}},
		{"just before quiet hours: the window sleeps", at(london, 2026, 6, 10, 20, 55), at(london, 2026, 6, 11, 14, 0),
			entry("e1"),
			engine.Offer{EntryID: "e1", Seats: 1, PartySize: 1, Channel: nextup.ChannelEmail, State: nextup.OfferOffered,
				SendAt: at(london, 2026, 6, 10, 20, 55), ExpiresAt: at(london, 2026, 6, 11, 8, 5)}},
		{"spring-forward night", utc(2026, 3, 29, 0, 30), utc(2026, 3, 29, 12, 0),
			entry("e1", func(e *nextup.Entry) { e.JoinedAt = utc(2026, 3, 1, 0, 0) }),
			engine.Offer{EntryID: "e1", Seats: 1, PartySize: 1, Channel: nextup.ChannelEmail, State: nextup.OfferPending,
				SendAt: utc(2026, 3, 29, 7, 0), ExpiresAt: utc(2026, 3, 29, 7, 10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := setup()
			in.Now, in.Slot = tt.now, slotAt(tt.start)
			in.Cands = []engine.Candidate{cand(tt.entry)}
			got := engine.Decide(in.engine())
			if got.Move != nextup.MoveOffer || len(got.Offers) != 1 {
				t.Fatalf("Decide = %+v, want one offer", got)
			}
			o := got.Offers[0]
			if o.EntryID != tt.want.EntryID || o.Seats != tt.want.Seats || o.PartySize != tt.want.PartySize ||
				o.Channel != tt.want.Channel || o.State != tt.want.State ||
				!o.SendAt.Equal(tt.want.SendAt) || !o.ExpiresAt.Equal(tt.want.ExpiresAt) {
				t.Errorf("offer = %+v\nwant    %+v", o, tt.want)
			}
		})
	}
}

// TestDecideStopsPulling checks that Decide reads no further than it must:
// the candidate sequence may be paged from a list of a million rows.
func TestDecideStopsPulling(t *testing.T) {
	t.Parallel()
	many := func(n int, mods ...func(*nextup.Entry)) []engine.Candidate {
		cs := make([]engine.Candidate, n)
		for i := range cs {
			cs[i] = cand(entry("e"+string(rune('a'+i%26))+string(rune('a'+i/26)), mods...))
		}
		return cs
	}
	tests := []struct {
		name   string
		mod    func(*Input)
		cands  []engine.Candidate
		pulled int
	}{
		{"unit: stops at the first offer", nil, many(100), 1},
		{"shared: stops when the seats are gone", func(in *Input) {
			in.Slot.Seating, in.Slot.Capacity = nextup.SeatingShared, 6
		}, many(100, party(2)), 3},
		{"try cap: stops at the cap", func(in *Input) {
			in.Slot.Seating, in.Slot.Capacity, in.Rules.MaxOffersPerSlot = nextup.SeatingShared, 60, 4
		}, many(100), 4},
		{"gate closed: never pulls", func(in *Input) { in.Slot.HandedBack = true }, many(100), 0},
		{"nobody fits: reads to the end", func(in *Input) { in.Slot.Service = "colour" }, many(100), 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := setup()
			if tt.mod != nil {
				tt.mod(&in)
			}
			pulled := 0
			e := in.engine()
			e.Candidates = counted(tt.cands, &pulled)
			engine.Decide(e)
			if pulled != tt.pulled {
				t.Errorf("pulled %d candidates, want %d", pulled, tt.pulled)
			}
		})
	}
}

// TestDecideTotal checks that odd and empty inputs neither panic nor offer.
func TestDecideTotal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   engine.Input
		move nextup.MoveKind
		why  string
	}{
		{"zero input", engine.Input{}, "", engine.IdlePast},
		{"nil location and candidates", engine.Input{Now: testNow, Rules: nextup.DefaultRules(), Slot: slotAt(testNow.Add(time.Hour))}, nextup.MoveNobodyFits, ""},
		{"zero capacity", engine.Input{Now: testNow, Slot: nextup.Slot{StartsAt: testNow.Add(time.Hour)}}, "", engine.IdleNoSeats},
		{"negative seats booked", engine.Input{Now: testNow, Rules: nextup.DefaultRules(), Slot: func() nextup.Slot {
			s := slotAt(testNow.Add(time.Hour))
			s.BookedSeats = -3
			return s
		}()}, nextup.MoveNobodyFits, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := engine.Decide(tt.in)
			if got.Move != tt.move || got.Reason != tt.why || len(got.Offers) != 0 {
				t.Errorf("Decide = %+v, want move %q reason %q", got, tt.move, tt.why)
			}
		})
	}
}

// An event's offer is held for the event's claim window, not the
// business's (10 minutes in these tests).
func TestDecideEventClaimWindow(t *testing.T) {
	t.Parallel()
	in := setup()
	in.Slot = slotAt(testNow.Add(30 * 24 * time.Hour))
	in.Slot.ID, in.Slot.Kind, in.Slot.Service, in.Slot.Seating, in.Slot.Capacity = "ev1", nextup.KindEvent, "", nextup.SeatingShared, 10
	in.Slot.Event = &nextup.EventSettings{ClaimWindow: 2 * time.Hour}
	in.Cands = []engine.Candidate{cand(entry("e1", func(e *nextup.Entry) { e.EventID, e.Service = "ev1", "" }))}
	got := engine.Decide(in.engine())
	if len(got.Offers) != 1 || !got.Offers[0].ExpiresAt.Equal(testNow.Add(2*time.Hour)) {
		t.Fatalf("Decide = %+v, want one offer expiring at %s", got, testNow.Add(2*time.Hour))
	}
}
