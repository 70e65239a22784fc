package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func offerID(o nextup.Offer) string { return o.ID }

func testOfferRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(10))
	offered, _ := b.offer(s, b.entry(biz.ID, func(e *nextup.Entry) { e.PartySize = 2 }), func(o *nextup.Offer) {
		o.Channel = nextup.ChannelSMS
		o.RuleVersion = 3
		o.SentAt = ptr(b.at(time.Second))
		o.ExpiresAt = b.at(10*time.Minute + time.Second)
	})
	pending, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) {
		o.State = nextup.OfferPending
		o.SendAt = b.at(11 * time.Hour)
		o.SentAt = nil
		o.ExpiresAt = b.at(11*time.Hour + 10*time.Minute)
	})
	declined, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) {
		o.State = nextup.OfferDeclined
		o.SeenAt = ptr(b.at(time.Minute))
		o.ResolvedAt = ptr(b.at(2 * time.Minute))
		o.Reason = "customer_declined"
	})
	b.read(func(tx nextup.Tx) error {
		for _, want := range []nextup.Offer{offered, pending, declined} {
			got, err := tx.OfferGet(b.ctx, want.ID)
			if wantOK(t, err, "OfferGet(%s)", want.ID) {
				checkEqual(t, "OfferGet "+want.ID, want, got)
			}
			got, err = tx.OfferByTokenHash(b.ctx, want.TokenHash)
			if wantOK(t, err, "OfferByTokenHash(%s)", want.ID) {
				checkEqual(t, "OfferByTokenHash "+want.ID, want, got)
			}
		}
		return nil
	})
	b.seats(s.ID, 0, 3)
}

func testOfferNotFound(t *testing.T, b *bundle) {
	biz := b.business()
	e := b.entry(biz.ID)
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.OfferGet(b.ctx, "off_missing")
		wantErr(t, err, nextup.ErrNotFound, "OfferGet(missing)")
		_, err = tx.OfferByTokenHash(b.ctx, nextup.HashToken("nope"))
		wantErr(t, err, nextup.ErrNotFound, "OfferByTokenHash(unknown)")
		_, err = tx.OfferSetState(b.ctx, "off_missing", []nextup.OfferState{nextup.OfferOffered}, nextup.OfferExpired, b.now, "")
		wantErr(t, err, nextup.ErrNotFound, "OfferSetState(missing)")
		_, err = tx.OfferClaim(b.ctx, nextup.HashToken("nope"), b.now)
		wantErr(t, err, nextup.ErrNotFound, "OfferClaim(unknown token)")
		wantErr(t, tx.OfferSeen(b.ctx, "off_missing", b.now), nextup.ErrNotFound, "OfferSeen(missing)")
		_, err = tx.OfferLiveByEntry(b.ctx, e.ID)
		wantErr(t, err, nextup.ErrNotFound, "OfferLiveByEntry(entry with no offers)")
		_, err = tx.OfferLiveByEntry(b.ctx, "ent_missing")
		wantErr(t, err, nextup.ErrNotFound, "OfferLiveByEntry(missing entry)")
		return nil
	})
}

func testOfferSetState(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4))
	o, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) {
		o.State, o.SentAt, o.SendAt = nextup.OfferPending, nil, b.at(time.Hour)
	})
	cancelled, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) {
		o.State, o.SentAt, o.SendAt = nextup.OfferPending, nil, b.at(time.Hour)
	})
	steps := []struct {
		id     string
		from   []nextup.OfferState
		to     nextup.OfferState
		reason string
		ok     bool
	}{
		{o.ID, []nextup.OfferState{nextup.OfferPending}, nextup.OfferOffered, "", true},
		{o.ID, []nextup.OfferState{nextup.OfferPending}, nextup.OfferOffered, "", false},
		{o.ID, []nextup.OfferState{nextup.OfferPending, nextup.OfferOffered}, nextup.OfferDeclined, "customer_declined", true},
		{o.ID, []nextup.OfferState{nextup.OfferOffered}, nextup.OfferExpired, "deadline", false},
		{o.ID, []nextup.OfferState{nextup.OfferPending, nextup.OfferOffered}, nextup.OfferCancelled, "slot_removed", false},
		{cancelled.ID, []nextup.OfferState{nextup.OfferPending, nextup.OfferOffered}, nextup.OfferCancelled, "entry_left", true},
		{cancelled.ID, []nextup.OfferState{nextup.OfferPending}, nextup.OfferOffered, "", false},
	}
	cur := map[string]nextup.Offer{o.ID: o, cancelled.ID: cancelled}
	for i, st := range steps {
		at := b.at(time.Duration(i+1) * time.Minute)
		before := cur[st.id]
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.OfferSetState(b.ctx, st.id, st.from, st.to, at, st.reason)
			name := fmt.Sprintf("step %d: OfferSetState(%s, %v -> %s) of a %s offer", i, st.id, st.from, st.to, before.State)
			if !st.ok {
				wantErr(t, err, nextup.ErrConflict, "%s", name)
				return nil
			}
			if !wantOK(t, err, "%s", name) {
				return nil
			}
			want := before
			want.State = st.to
			if st.to == nextup.OfferOffered {
				want.SentAt = &at
			} else {
				want.ResolvedAt = &at
				want.Reason = st.reason
			}
			checkEqual(t, name, want, got)
			cur[st.id] = want
			return nil
		})
		checkEqual(t, fmt.Sprintf("offer after step %d", i), cur[st.id], b.getOffer(st.id))
	}
}

func testOfferClaim(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(4))
	e := b.entry(biz.ID, func(e *nextup.Entry) { e.PartySize = 2 })
	o, token := b.offer(s, e)
	last, _ := b.offer(s, b.entry(biz.ID))
	at := b.at(5 * time.Minute)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.OfferClaim(b.ctx, nextup.HashToken(token), at)
		if !wantOK(t, err, "OfferClaim before the deadline") {
			return nil
		}
		want := o
		want.State, want.ResolvedAt = nextup.OfferClaimed, &at
		checkEqual(t, "offer returned by OfferClaim", want, got)
		// The claim moved the offer; the seats are the caller's to move, in the same transaction.
		_, err = tx.SlotSeats(b.ctx, s.ID, nextup.SeatDelta{Held: -got.Seats, Booked: got.Seats})
		wantOK(t, err, "SlotSeats(held -%d, booked +%d)", got.Seats, got.Seats)
		return nil
	})
	want := o
	want.State, want.ResolvedAt = nextup.OfferClaimed, &at
	checkEqual(t, "claimed offer", want, b.getOffer(o.ID))
	b.seats(s.ID, 2, 1)

	// A double tap: the second claim finds it claimed.
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.OfferClaim(b.ctx, o.TokenHash, at.Add(time.Second))
		wantErr(t, err, nextup.ErrConflict, "OfferClaim of a claimed offer")
		return nil
	})
	checkEqual(t, "claimed offer after a second claim", want, b.getOffer(o.ID))

	// The last microsecond before the deadline still counts.
	at = last.ExpiresAt.Add(-time.Microsecond)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.OfferClaim(b.ctx, last.TokenHash, at)
		if wantOK(t, err, "OfferClaim 1µs before the deadline") && got.State != nextup.OfferClaimed {
			t.Errorf("OfferClaim returned state %q, want claimed", got.State)
		}
		return nil
	})
}

func testOfferClaimRefused(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(20))
	final := func(st nextup.OfferState) func(*nextup.Offer) {
		return func(o *nextup.Offer) { o.State, o.ResolvedAt, o.Reason = st, ptr(b.at(-time.Minute)), "x" }
	}
	cases := []struct {
		name string
		mod  func(*nextup.Offer)
		now  time.Time
	}{
		{"now at the deadline", func(*nextup.Offer) {}, b.at(10 * time.Minute)},
		{"deadline passed", func(*nextup.Offer) {}, b.at(11 * time.Minute)},
		{"pending (not sent yet)", func(o *nextup.Offer) { o.State, o.SentAt = nextup.OfferPending, nil }, b.now},
		{"declined", final(nextup.OfferDeclined), b.now},
		{"expired", final(nextup.OfferExpired), b.now},
		{"cancelled", final(nextup.OfferCancelled), b.now},
		{"claimed", final(nextup.OfferClaimed), b.now},
	}
	for _, c := range cases {
		o, _ := b.offer(s, b.entry(biz.ID), c.mod)
		b.tx(func(tx nextup.Tx) error {
			_, err := tx.OfferClaim(b.ctx, o.TokenHash, c.now)
			wantErr(t, err, nextup.ErrConflict, "OfferClaim(%s)", c.name)
			return nil
		})
		checkEqual(t, "offer after a refused claim ("+c.name+")", o, b.getOffer(o.ID))
	}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.OfferClaim(b.ctx, nextup.HashToken("never issued"), b.now)
		wantErr(t, err, nextup.ErrNotFound, "OfferClaim(unknown token)")
		return nil
	})
}

func testOfferSeen(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID)
	o, _ := b.offer(s, b.entry(biz.ID))
	first := b.at(time.Minute)
	for _, at := range []time.Time{first, b.at(2 * time.Minute), b.at(30 * time.Second)} {
		b.tx(func(tx nextup.Tx) error { return tx.OfferSeen(b.ctx, o.ID, at) })
	}
	want := o
	want.SeenAt = &first
	checkEqual(t, "offer seen three times (SeenAt is the first)", want, b.getOffer(o.ID))
}

func testOfferListBySlot(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(10))
	other := b.slot(biz.ID, shared(10))
	var want []nextup.Offer
	for i := range 4 {
		created := b.at(time.Duration(i) * time.Minute)
		st := []nextup.OfferState{nextup.OfferExpired, nextup.OfferDeclined, nextup.OfferCancelled, nextup.OfferOffered}[i]
		o, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) {
			o.CreatedAt, o.SendAt, o.State = created, created, st
			if !st.Live() {
				o.ResolvedAt = ptr(created.Add(30 * time.Second))
			}
		})
		want = append(want, o)
		b.offer(other, b.entry(biz.ID))
	}
	empty := b.slot(biz.ID)
	b.read(func(tx nextup.Tx) error {
		got, err := tx.OfferListBySlot(b.ctx, s.ID)
		if wantOK(t, err, "OfferListBySlot") {
			if gotIDs, wantIDs := ids(got, offerID), ids(want, offerID); !sameStrings(gotIDs, wantIDs) {
				t.Errorf("OfferListBySlot: got %v, want %v (oldest first)", gotIDs, wantIDs)
			} else {
				checkEqual(t, "OfferListBySlot", want, got)
			}
		}
		got, err = tx.OfferListBySlot(b.ctx, empty.ID)
		if wantOK(t, err, "OfferListBySlot(slot without offers)") && len(got) != 0 {
			t.Errorf("OfferListBySlot(slot without offers): %d offers", len(got))
		}
		return nil
	})
}

func testOfferLiveByEntry(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(10))
	e := b.entry(biz.ID)
	b.offer(s, e, func(o *nextup.Offer) { o.State, o.ResolvedAt = nextup.OfferDeclined, ptr(b.now) })
	b.offer(s, e, func(o *nextup.Offer) { o.State, o.ResolvedAt = nextup.OfferExpired, ptr(b.now) })
	live, _ := b.offer(s, e, func(o *nextup.Offer) { o.State, o.SentAt = nextup.OfferPending, nil })
	b.offer(s, b.entry(biz.ID)) // someone else's
	get := func() (nextup.Offer, error) {
		var o nextup.Offer
		err := b.s.Read(b.ctx, func(tx nextup.Tx) error {
			var err error
			o, err = tx.OfferLiveByEntry(b.ctx, e.ID)
			return err
		})
		return o, err
	}
	if got, err := get(); wantOK(t, err, "OfferLiveByEntry(pending)") {
		checkEqual(t, "live pending offer", live, got)
	}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.OfferSetState(b.ctx, live.ID, []nextup.OfferState{nextup.OfferPending}, nextup.OfferOffered, b.now, "")
		return err
	})
	if got, err := get(); wantOK(t, err, "OfferLiveByEntry(offered)") && got.ID != live.ID {
		t.Errorf("OfferLiveByEntry: got %s, want %s", got.ID, live.ID)
	}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.OfferClaim(b.ctx, live.TokenHash, b.now)
		return err
	})
	_, err := get()
	wantErr(t, err, nextup.ErrNotFound, "OfferLiveByEntry after its only live offer was claimed")
}

func testOfferCountSince(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	s := b.slot(biz.ID, shared(10))
	os := b.slot(other.ID, shared(10))
	ann := b.entry(biz.ID, func(e *nextup.Entry) { e.Email = "ann@example.com" })
	ann2 := b.entry(biz.ID, func(e *nextup.Entry) { e.Email = "ann@example.com"; e.Service = "color" })
	bob := b.entry(biz.ID, func(e *nextup.Entry) { e.Email, e.Phone = "", "+15550100" })
	annElsewhere := b.entry(other.ID, func(e *nextup.Entry) { e.Email = "ann@example.com" })
	made := func(slot nextup.Slot, e nextup.Entry, ago time.Duration, st nextup.OfferState) {
		at := b.at(-ago)
		b.offer(slot, e, func(o *nextup.Offer) {
			o.CreatedAt, o.SendAt, o.State = at, at, st
			if !st.Live() {
				o.ResolvedAt = ptr(at.Add(time.Minute))
			}
		})
	}
	made(s, ann, 30*time.Hour, nextup.OfferExpired)
	made(s, ann2, 20*time.Hour, nextup.OfferDeclined)
	made(s, ann, 2*time.Hour, nextup.OfferExpired)
	made(s, ann2, time.Hour, nextup.OfferPending)
	made(s, bob, time.Hour, nextup.OfferOffered)
	made(os, annElsewhere, time.Hour, nextup.OfferOffered)
	cases := []struct {
		biz, key string
		since    time.Time
		want     int
	}{
		{biz.ID, ann.ContactKey(), b.at(-24 * time.Hour), 3},
		{biz.ID, ann.ContactKey(), b.at(-48 * time.Hour), 4},
		{biz.ID, ann.ContactKey(), b.at(-90 * time.Minute), 1},
		{biz.ID, ann.ContactKey(), b.now, 0},
		{biz.ID, bob.ContactKey(), b.at(-24 * time.Hour), 1},
		{other.ID, ann.ContactKey(), b.at(-24 * time.Hour), 1},
		{biz.ID, "email:nobody@example.com", b.at(-24 * time.Hour), 0},
	}
	b.read(func(tx nextup.Tx) error {
		for _, c := range cases {
			got, err := tx.OfferCountSince(b.ctx, c.biz, c.key, c.since)
			if wantOK(t, err, "OfferCountSince") && got != c.want {
				t.Errorf("OfferCountSince(%s, %s, now-%s) = %d, want %d", c.biz, c.key, b.now.Sub(c.since), got, c.want)
			}
		}
		return nil
	})
}

func testOfferSend(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(10))
	pending, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) {
		o.State = nextup.OfferPending
		o.SendAt = b.at(time.Hour)
		o.SentAt = nil
		o.ExpiresAt = b.at(time.Hour + 10*time.Minute)
	})
	offered, _ := b.offer(s, b.entry(biz.ID))
	sent, late := b.at(time.Hour+3*time.Minute), b.at(time.Hour+13*time.Minute)
	newHash := nextup.HashToken("minted-at-send")
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.OfferSend(b.ctx, pending.ID, sent, late, newHash)
		if wantOK(t, err, "OfferSend(pending)") {
			want := pending
			want.State, want.SentAt, want.ExpiresAt, want.TokenHash = nextup.OfferOffered, &sent, late, newHash
			checkEqual(t, "OfferSend result", want, got)
		}
		_, err = tx.OfferSend(b.ctx, pending.ID, sent, late, nextup.HashToken("again"))
		wantErr(t, err, nextup.ErrConflict, "OfferSend twice")
		_, err = tx.OfferSend(b.ctx, offered.ID, sent, late, nextup.HashToken("other"))
		wantErr(t, err, nextup.ErrConflict, "OfferSend(already offered)")
		_, err = tx.OfferSend(b.ctx, "off_missing", sent, late, nextup.HashToken("missing"))
		wantErr(t, err, nextup.ErrNotFound, "OfferSend(missing)")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.OfferGet(b.ctx, offered.ID)
		if wantOK(t, err, "OfferGet") {
			checkEqual(t, "offer after a refused send", offered, got)
		}
		got, err = tx.OfferByTokenHash(b.ctx, newHash)
		if wantOK(t, err, "OfferByTokenHash(new token)") && (got.ID != pending.ID || !got.ExpiresAt.Equal(late) || got.State != nextup.OfferOffered) {
			t.Errorf("sent offer = %+v", got)
		}
		_, err = tx.OfferByTokenHash(b.ctx, pending.TokenHash)
		wantErr(t, err, nextup.ErrNotFound, "OfferByTokenHash(the pending offer's old token)")
		return nil
	})
	b.seats(s.ID, 0, 2)
}

// OfferHanded restarts an offered offer's window from its message's
// hand-off, and only that: not a pending offer, not one whose deadline
// passed by the hand-off, not to an earlier or equal deadline; a claim
// then holds until the new deadline.
func testOfferHanded(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.slot(biz.ID, shared(10))
	offered, token := b.offer(s, b.entry(biz.ID))
	pending, _ := b.offer(s, b.entry(biz.ID), func(o *nextup.Offer) {
		o.State, o.SendAt, o.SentAt = nextup.OfferPending, b.at(time.Hour), nil
	})
	lapsed, _ := b.offer(s, b.entry(biz.ID))
	handed, until := b.at(40*time.Second), b.at(10*time.Minute+40*time.Second)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.OfferHanded(b.ctx, offered.ID, handed, until)
		if wantOK(t, err, "OfferHanded") {
			want := offered
			want.SentAt, want.ExpiresAt = &handed, until
			checkEqual(t, "OfferHanded result", want, got)
		}
		_, err = tx.OfferHanded(b.ctx, offered.ID, handed, until)
		wantErr(t, err, nextup.ErrConflict, "OfferHanded to the deadline it has")
		_, err = tx.OfferHanded(b.ctx, pending.ID, handed, until)
		wantErr(t, err, nextup.ErrConflict, "OfferHanded(pending)")
		_, err = tx.OfferHanded(b.ctx, lapsed.ID, b.at(10*time.Minute), b.at(20*time.Minute))
		wantErr(t, err, nextup.ErrConflict, "OfferHanded after its deadline")
		_, err = tx.OfferHanded(b.ctx, "off_missing", handed, until)
		wantErr(t, err, nextup.ErrNotFound, "OfferHanded(missing)")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		for _, o := range []nextup.Offer{pending, lapsed} {
			got, err := tx.OfferGet(b.ctx, o.ID)
			if wantOK(t, err, "OfferGet") {
				checkEqual(t, "an offer after a refused OfferHanded", o, got)
			}
		}
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.OfferClaim(b.ctx, nextup.HashToken(token), b.at(10*time.Minute+20*time.Second))
		wantOK(t, err, "OfferClaim after the old deadline, before the new")
		return nil
	})
}
