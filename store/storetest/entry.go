package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func entryID(e nextup.Entry) string { return e.ID }

// fairLess is the default order policy, fcfs-priority/v1: priority first,
// then joined-at, then sequence.
func fairLess(a, b nextup.Entry) bool {
	if a.Priority != b.Priority {
		return a.Priority
	}
	if !a.JoinedAt.Equal(b.JoinedAt) {
		return a.JoinedAt.Before(b.JoinedAt)
	}
	return a.Seq < b.Seq
}

func fairCmp(a, b nextup.Entry) int {
	switch {
	case fairLess(a, b):
		return -1
	case fairLess(b, a):
		return 1
	}
	return 0
}

// sameList is the group an entry waits in: its event, or its service.
func sameList(a, b nextup.Entry) bool {
	if a.EventID != "" || b.EventID != "" {
		return a.EventID == b.EventID
	}
	return a.Service == b.Service
}

func testEntryRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	ev := b.slot(biz.ID, func(s *nextup.Slot) {
		s.Kind, s.Service, s.Seating, s.Capacity = nextup.KindEvent, "", nextup.SeatingShared, 20
	})
	cet := time.FixedZone("CET", 3600)
	full := nextup.Entry{
		ID:         "ent_full",
		BusinessID: biz.ID,
		Name:       "Zoë O'Brien",
		Email:      "  Zoe.OBrien@Example.COM ",
		Phone:      "+44 (0)7700 900123",
		Channel:    nextup.ChannelSMS,
		Service:    "colour & cut",
		PartySize:  3,
		Earliest:   time.Date(2031, 3, 11, 0, 0, 0, 0, cet),
		Latest:     time.Date(2031, 3, 20, 23, 59, 59, 999999000, cet),
		Staff:      "ann",
		Availability: []nextup.Availability{
			{Days: []time.Weekday{time.Monday, time.Wednesday, time.Friday}, From: 9 * 60, To: 12*60 + 30},
			{Days: []time.Weekday{time.Sunday}, From: 18 * 60, To: 24 * 60},
		},
		Priority:   true,
		Source:     "sheet",
		JoinedAt:   b.at(-90 * time.Minute).Add(7 * time.Microsecond),
		State:      nextup.EntryWaiting,
		StatusHash: nextup.HashToken("status-full"),
		UpdatedAt:  b.at(-time.Minute),
		Lapses:     2,
	}
	event := nextup.Entry{
		ID:         "ent_event",
		BusinessID: biz.ID,
		Name:       "Sam",
		Phone:      "+15550123",
		EventID:    ev.ID,
		PartySize:  2,
		Source:     "form",
		JoinedAt:   b.now,
		State:      nextup.EntryWaiting,
		StatusHash: nextup.HashToken("status-event"),
		UpdatedAt:  b.now,
	}
	var created []nextup.Entry
	b.tx(func(tx nextup.Tx) error {
		for _, e := range []nextup.Entry{full, event} {
			got, err := tx.EntryCreate(b.ctx, e)
			if err != nil {
				return fmt.Errorf("EntryCreate(%s): %w", e.ID, err)
			}
			if got.Seq <= 0 {
				t.Errorf("EntryCreate(%s) returned Seq %d, want > 0", e.ID, got.Seq)
			}
			want := e
			want.Seq = got.Seq
			checkEqual(t, "entry returned by EntryCreate", want, got)
			created = append(created, got)
		}
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		for _, want := range created {
			got, err := tx.EntryGet(b.ctx, want.ID)
			if wantOK(t, err, "EntryGet(%s)", want.ID) {
				checkEqual(t, "EntryGet "+want.ID, want, got)
			}
			got, err = tx.EntryByStatusHash(b.ctx, want.StatusHash)
			if wantOK(t, err, "EntryByStatusHash(%s)", want.ID) {
				checkEqual(t, "EntryByStatusHash "+want.ID, want, got)
			}
		}
		return nil
	})
}

func testEntryNotFound(t *testing.T, b *bundle) {
	biz := b.business()
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.EntryGet(b.ctx, "ent_missing")
		wantErr(t, err, nextup.ErrNotFound, "EntryGet(missing)")
		_, err = tx.EntryByStatusHash(b.ctx, nextup.HashToken("nope"))
		wantErr(t, err, nextup.ErrNotFound, "EntryByStatusHash(unknown)")
		err = tx.EntryUpdate(b.ctx, nextup.Entry{ID: "ent_missing", BusinessID: biz.ID, Service: "cut", PartySize: 1})
		wantErr(t, err, nextup.ErrNotFound, "EntryUpdate(missing)")
		err = tx.EntrySetState(b.ctx, "ent_missing", []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryLeft, b.now)
		wantErr(t, err, nextup.ErrNotFound, "EntrySetState(missing)")
		_, err = tx.EntryActiveByContact(b.ctx, biz.ID, "email:nobody@example.com", "cut", "")
		wantErr(t, err, nextup.ErrNotFound, "EntryActiveByContact(unknown person)")
		return nil
	})
}

func testEntrySeq(t *testing.T, b *bundle) {
	biz := b.business()
	var seqs []int64
	b.tx(func(tx nextup.Tx) error {
		for i := range 5 {
			e, err := tx.EntryCreate(b.ctx, nextup.Entry{ID: fmt.Sprintf("ent_one_tx_%d", i), BusinessID: biz.ID, Name: "x",
				Email: fmt.Sprintf("x%d@example.com", i), Service: "cut", PartySize: 1, JoinedAt: b.now, State: nextup.EntryWaiting,
				StatusHash: nextup.HashToken(fmt.Sprintf("s1-%d", i)), UpdatedAt: b.now})
			if err != nil {
				return err
			}
			seqs = append(seqs, e.Seq)
		}
		return nil
	})
	other := b.business()
	for i := range 5 {
		bizID := biz.ID
		if i%2 == 1 {
			bizID = other.ID
		}
		seqs = append(seqs, b.entry(bizID).Seq)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Errorf("entries created one after another got Seq %v; want strictly increasing", seqs)
			break
		}
	}
}

func testEntryUpdate(t *testing.T, b *bundle) {
	biz := b.business()
	e := b.entry(biz.ID, func(e *nextup.Entry) { e.Earliest = b.at(time.Hour) })
	b.entry(biz.ID) // a neighbour, untouched
	mod := e
	mod.Service = "color"
	mod.PartySize = 4
	mod.Earliest = b.at(48 * time.Hour)
	mod.Latest = b.at(96 * time.Hour)
	mod.Staff = "bob"
	mod.Availability = []nextup.Availability{{Days: []time.Weekday{time.Saturday}, From: 10 * 60, To: 14 * 60}}
	mod.Priority = true
	mod.UpdatedAt = b.at(time.Minute)
	// Not mutable through EntryUpdate: state, sequence, joined-at.
	mod.State = nextup.EntryBooked
	mod.Seq = e.Seq + 1000
	mod.JoinedAt = b.at(time.Hour)
	b.tx(func(tx nextup.Tx) error { return tx.EntryUpdate(b.ctx, mod) })
	got := b.getEntry(e.ID)
	want := got
	want.Service, want.PartySize, want.Earliest, want.Latest = mod.Service, mod.PartySize, mod.Earliest, mod.Latest
	want.Staff, want.Availability, want.Priority = mod.Staff, mod.Availability, mod.Priority
	want.State, want.Seq, want.JoinedAt = e.State, e.Seq, e.JoinedAt
	checkEqual(t, "entry after EntryUpdate (criteria, priority and party size change; state, Seq, JoinedAt do not)", want, got)

	// Clearing works too: no window, no staff, no availability.
	mod = got
	mod.Earliest, mod.Latest, mod.Staff, mod.Availability, mod.Priority = time.Time{}, time.Time{}, "", nil, false
	b.tx(func(tx nextup.Tx) error { return tx.EntryUpdate(b.ctx, mod) })
	got = b.getEntry(e.ID)
	if !got.Earliest.IsZero() || !got.Latest.IsZero() || got.Staff != "" || len(got.Availability) != 0 || got.Priority {
		t.Errorf("after clearing: Earliest=%v Latest=%v Staff=%q Availability=%v Priority=%v; want all zero",
			got.Earliest, got.Latest, got.Staff, got.Availability, got.Priority)
	}
}

func testEntrySetState(t *testing.T, b *bundle) {
	biz := b.business()
	e := b.entry(biz.ID)
	steps := []struct {
		from []nextup.EntryState
		to   nextup.EntryState
		ok   bool
	}{
		{[]nextup.EntryState{nextup.EntryWaiting}, nextup.EntryOffered, true},
		{[]nextup.EntryState{nextup.EntryWaiting}, nextup.EntryBooked, false},
		{[]nextup.EntryState{nextup.EntryBooked, nextup.EntryLeft}, nextup.EntryExpired, false},
		{[]nextup.EntryState{nextup.EntryOffered}, nextup.EntryWaiting, true},
		{[]nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered}, nextup.EntryLeft, true},
		{[]nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered}, nextup.EntryLeft, false},
		{nil, nextup.EntryWaiting, false},
	}
	state, updated := e.State, e.UpdatedAt
	for i, st := range steps {
		at := b.at(time.Duration(i+1) * time.Minute)
		b.tx(func(tx nextup.Tx) error {
			err := tx.EntrySetState(b.ctx, e.ID, st.from, st.to, at)
			if st.ok {
				if wantOK(t, err, "step %d: EntrySetState(%v -> %s) of a %s entry", i, st.from, st.to, state) {
					state, updated = st.to, at
				}
			} else {
				wantErr(t, err, nextup.ErrConflict, "step %d: EntrySetState(%v -> %s) of a %s entry", i, st.from, st.to, state)
			}
			return nil
		})
		want := e
		want.State, want.UpdatedAt = state, updated
		checkEqual(t, fmt.Sprintf("entry after step %d", i), want, b.getEntry(e.ID))
	}
}

func testEntryLapse(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	joined := func(d time.Duration) func(*nextup.Entry) {
		return func(e *nextup.Entry) { e.JoinedAt = b.at(-d) }
	}
	prio := func(e *nextup.Entry) { e.Priority = true }
	p1 := b.entry(biz.ID, joined(3*time.Hour), prio)
	p2 := b.entry(biz.ID, joined(time.Hour), prio)
	first := b.entry(biz.ID, joined(5*time.Hour))
	second := b.entry(biz.ID, joined(4*time.Hour))
	now := b.entry(biz.ID, joined(0)) // joined the very moment of the lapses below
	b.entry(other.ID, joined(6*time.Hour))
	lapse := func(id string, back bool) nextup.Entry {
		t.Helper()
		var got nextup.Entry
		b.tx(func(tx nextup.Tx) error {
			var err error
			got, err = tx.EntryLapse(b.ctx, id, back, b.now)
			return err
		})
		checkEqual(t, fmt.Sprintf("entry returned by EntryLapse(%s, %v)", id, back), b.getEntry(id), got)
		return got
	}
	order := func(what string, want ...nextup.Entry) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			got, err := tx.EntryCandidates(b.ctx, nextup.CandidateQuery{BusinessID: biz.ID, Service: "cut", SlotStart: b.at(time.Hour), Limit: 50})
			if wantOK(t, err, "%s: EntryCandidates", what) && !sameStrings(ids(got, entryID), ids(want, entryID)) {
				t.Errorf("%s: candidates %v, want %v", what, ids(got, entryID), ids(want, entryID))
			}
			list, err := tx.EntryList(b.ctx, nextup.EntryFilter{BusinessID: biz.ID, Service: "cut"})
			if wantOK(t, err, "%s: EntryList", what) && !sameStrings(ids(list, entryID), ids(want, entryID)) {
				t.Errorf("%s: list %v, want %v", what, ids(list, entryID), ids(want, entryID))
			}
			for i, e := range want {
				pos, err := tx.EntryPosition(b.ctx, e)
				if wantOK(t, err, "%s: EntryPosition(%s)", what, e.ID) && pos != i+1 {
					t.Errorf("%s: EntryPosition(%s) = %d, want %d", what, e.ID, pos, i+1)
				}
			}
			return nil
		})
	}
	order("before", p1, p2, first, second, now)

	// Counted in place: nothing else changes.
	got := lapse(first.ID, false)
	want := first
	want.Lapses = 1
	checkEqual(t, "entry after EntryLapse in place", want, got)
	order("after a lapse in place", p1, p2, first, second, now)

	// To the back: behind everyone, the one who joined that very moment
	// too, with a new Seq above every one handed out so far.
	got = lapse(first.ID, true)
	want.Lapses, want.JoinedAt = 2, b.now
	if got.Seq <= now.Seq {
		t.Errorf("EntryLapse to the back gave Seq %d, want above %d (the last one handed out)", got.Seq, now.Seq)
	}
	want.Seq = got.Seq
	checkEqual(t, "entry after EntryLapse to the back", want, got)
	first = got
	order("after a move to the back", p1, p2, second, now, first)

	// A priority entry goes behind the other priority entries only.
	p1 = lapse(p1.ID, true)
	order("after a priority entry's move", p2, p1, second, now, first)

	// Who joins later still comes after, with a larger Seq: no number is
	// handed out twice.
	later := b.entry(biz.ID, joined(0))
	if later.Seq <= p1.Seq {
		t.Errorf("an entry created after a move to the back got Seq %d, want above %d", later.Seq, p1.Seq)
	}
	order("after a later join", p2, p1, second, now, first, later)

	b.tx(func(tx nextup.Tx) error {
		for _, back := range []bool{false, true} {
			_, err := tx.EntryLapse(b.ctx, "ent_missing", back, b.now)
			wantErr(t, err, nextup.ErrNotFound, "EntryLapse(missing, %v)", back)
		}
		return nil
	})
}

// testEntrySetStatusHash: a new status hash finds the entry and the old
// one finds nothing; nothing else about the entry changes; a missing
// entry, an empty hash and a hash another entry has are refused and
// change nothing.
func testEntrySetStatusHash(t *testing.T, b *bundle) {
	biz := b.business()
	e, other := b.entry(biz.ID), b.entry(biz.ID)
	fresh := nextup.HashToken("status-reissued-" + e.ID)
	b.tx(func(tx nextup.Tx) error { return tx.EntrySetStatusHash(b.ctx, e.ID, fresh, b.at(time.Minute)) })
	want := e
	want.StatusHash, want.UpdatedAt = fresh, b.at(time.Minute)
	checkEqual(t, "entry after EntrySetStatusHash", want, b.getEntry(e.ID))
	b.read(func(tx nextup.Tx) error {
		got, err := tx.EntryByStatusHash(b.ctx, fresh)
		if wantOK(t, err, "EntryByStatusHash(new hash)") && got.ID != e.ID {
			t.Errorf("the new hash finds %s, want %s", got.ID, e.ID)
		}
		_, err = tx.EntryByStatusHash(b.ctx, e.StatusHash)
		wantErr(t, err, nextup.ErrNotFound, "EntryByStatusHash(old hash)")
		pos, err := tx.EntryPosition(b.ctx, want)
		if wantOK(t, err, "EntryPosition") && pos != 1 {
			t.Errorf("position after a new status hash: %d, want 1", pos)
		}
		return nil
	})
	for _, c := range []struct {
		what, id, hash string
		kind           error
	}{
		{"missing entry", "ent_missing", nextup.HashToken("x"), nextup.ErrNotFound},
		{"empty hash", e.ID, "", nextup.ErrConflict},
		{"another entry's hash", e.ID, other.StatusHash, nextup.ErrConflict},
	} {
		err := b.s.InTx(b.ctx, func(tx nextup.Tx) error { return tx.EntrySetStatusHash(b.ctx, c.id, c.hash, b.at(time.Hour)) })
		wantErr(t, err, c.kind, "EntrySetStatusHash(%s)", c.what)
	}
	checkEqual(t, "entry after refused EntrySetStatusHash", want, b.getEntry(e.ID))
	checkEqual(t, "the other entry after refused EntrySetStatusHash", other, b.getEntry(other.ID))
}

func testEntryCandidates(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	start := b.at(72 * time.Hour)
	joined := func(d time.Duration) func(*nextup.Entry) {
		return func(e *nextup.Entry) { e.JoinedAt = b.at(-d) }
	}
	// In fair order.
	prio := b.entry(biz.ID, joined(time.Hour), func(e *nextup.Entry) { e.Priority = true })
	first := b.entry(biz.ID, joined(5*time.Hour))
	second := b.entry(biz.ID, joined(4*time.Hour), func(e *nextup.Entry) { e.PartySize = 4 })
	tie1 := b.entry(biz.ID, joined(3*time.Hour), func(e *nextup.Entry) { e.Earliest = start })
	tie2 := b.entry(biz.ID, joined(3*time.Hour), func(e *nextup.Entry) { e.Latest = start })
	late := b.entry(biz.ID, joined(2*time.Hour), func(e *nextup.Entry) { e.Earliest, e.Latest = start, start })
	want := []nextup.Entry{prio, first, second, tie1, tie2, late}

	excluded := map[string]string{}
	ex := func(why string, e nextup.Entry) { excluded[e.ID] = why }
	ex("earliest after the slot start", b.entry(biz.ID, joined(6*time.Hour), func(e *nextup.Entry) { e.Earliest = start.Add(time.Microsecond) }))
	ex("latest before the slot start", b.entry(biz.ID, joined(6*time.Hour), func(e *nextup.Entry) { e.Latest = start.Add(-time.Microsecond) }))
	ex("party above MaxParty", b.entry(biz.ID, joined(6*time.Hour), func(e *nextup.Entry) { e.PartySize = 5 }))
	ex("other service", b.entry(biz.ID, joined(6*time.Hour), func(e *nextup.Entry) { e.Service = "color" }))
	ex("other business", b.entry(other.ID, joined(6*time.Hour)))
	for _, st := range []nextup.EntryState{nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired} {
		e := b.entry(biz.ID, joined(6*time.Hour), func(e *nextup.Entry) { e.Priority = true })
		from := []nextup.EntryState{nextup.EntryWaiting}
		b.tx(func(tx nextup.Tx) error { return tx.EntrySetState(b.ctx, e.ID, from, st, b.now) })
		ex("state "+string(st), e)
	}
	ev := b.slot(biz.ID, func(s *nextup.Slot) {
		s.Kind, s.Service, s.Seating, s.Capacity = nextup.KindEvent, "", nextup.SeatingShared, 20
	})
	evEntry := b.entry(biz.ID, joined(7*time.Hour), func(e *nextup.Entry) { e.Service, e.EventID = "", ev.ID })
	ex("waits for an event", evEntry)

	q := nextup.CandidateQuery{BusinessID: biz.ID, Service: "cut", SlotStart: start, MinParty: 1, MaxParty: 4, Limit: 50}
	check := func(name string, q nextup.CandidateQuery, want []nextup.Entry) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			got, err := tx.EntryCandidates(b.ctx, q)
			if !wantOK(t, err, "EntryCandidates(%s)", name) {
				return nil
			}
			for _, e := range got {
				if why, ok := excluded[e.ID]; ok {
					t.Errorf("EntryCandidates(%s) returned %s: %s", name, e.ID, why)
				}
			}
			if gotIDs, wantIDs := ids(got, entryID), ids(want, entryID); !sameStrings(gotIDs, wantIDs) {
				t.Errorf("EntryCandidates(%s):\n\tgot  %v\n\twant %v (priority, joined-at, seq)", name, gotIDs, wantIDs)
				return nil
			}
			for i := range got {
				checkEqual(t, "candidate "+got[i].ID, want[i], got[i])
			}
			return nil
		})
	}
	check("all", q, want)
	q2 := q
	q2.MinParty = 2
	check("MinParty 2", q2, []nextup.Entry{second})
	q3 := q
	q3.Limit = 2
	check("limit 2", q3, want[:2])
	q3.After = &want[1]
	check("limit 2 after the 2nd", q3, want[2:4])
	q3.After = &want[3]
	check("limit 2 after the 4th (a joined-at tie)", q3, want[4:6])
	q3.After = &want[5]
	check("after the last", q3, nil)
	q4 := nextup.CandidateQuery{BusinessID: biz.ID, Service: "cut", EventID: ev.ID, SlotStart: ev.StartsAt, MinParty: 1, MaxParty: 20, Limit: 50}
	delete(excluded, evEntry.ID)
	for _, e := range want {
		excluded[e.ID] = "not waiting for this event"
	}
	check("event (Service ignored)", q4, []nextup.Entry{evEntry})
}

// population is a random waitlist for the brute-force subtests.
type population struct {
	bizs    []string
	events  map[string][]string // business → event slot ids
	entries []nextup.Entry      // as stored
	start   time.Time           // window times are around here
}

func (b *bundle) population(r *rand.Rand, n int) population {
	b.t.Helper()
	p := population{events: map[string][]string{}, start: b.at(24 * time.Hour)}
	for range 2 {
		biz := b.business()
		p.bizs = append(p.bizs, biz.ID)
		for range 2 {
			ev := b.slot(biz.ID, func(s *nextup.Slot) {
				s.Kind, s.Service, s.Seating, s.Capacity = nextup.KindEvent, "", nextup.SeatingShared, 50
			})
			p.events[biz.ID] = append(p.events[biz.ID], ev.ID)
		}
	}
	hour := func(max int) time.Duration { return time.Duration(r.IntN(max)) * time.Hour }
	states := []nextup.EntryState{nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired}
	// Drawn first, then written 12 to a transaction: the population is
	// the fixture, not what is tested, and a bounded store (DynamoDB: 100
	// writes, each entry with up to six counts of its place) cannot take
	// 200 entries in one transaction.
	type row struct {
		e  nextup.Entry
		to nextup.EntryState // "" stays waiting
	}
	rows := make([]row, 0, n)
	for i := range n {
		biz := p.bizs[0]
		if r.IntN(5) == 0 {
			biz = p.bizs[1]
		}
		e := nextup.Entry{
			ID:         fmt.Sprintf("ent_r%03d", i),
			BusinessID: biz,
			Name:       fmt.Sprintf("Random %d", i),
			Email:      fmt.Sprintf("r%d@example.com", i),
			PartySize:  1 + r.IntN(6),
			Priority:   r.IntN(7) == 0,
			Source:     "api",
			JoinedAt:   b.at(-time.Duration(r.IntN(30)) * time.Minute),
			State:      nextup.EntryWaiting,
			StatusHash: nextup.HashToken(fmt.Sprintf("r-%d", i)),
			UpdatedAt:  b.now,
		}
		if r.IntN(4) == 0 {
			e.EventID = p.events[biz][r.IntN(2)]
		} else {
			e.Service = []string{"cut", "cut", "color"}[r.IntN(3)]
		}
		switch r.IntN(10) {
		case 0, 1, 2: // no window
		case 3, 4:
			e.Earliest = p.start.Add(hour(240))
		case 5, 6:
			e.Latest = p.start.Add(hour(240))
		default:
			e.Earliest = p.start.Add(hour(240))
			e.Latest = e.Earliest.Add(hour(120))
		}
		var to nextup.EntryState
		if r.IntN(10) < 3 {
			to = states[r.IntN(len(states))]
		}
		rows = append(rows, row{e, to})
	}
	for chunk := range slices.Chunk(rows, 12) {
		var written []nextup.Entry
		b.tx(func(tx nextup.Tx) error {
			written = written[:0] // a store may run the function again
			for _, rw := range chunk {
				got, err := tx.EntryCreate(b.ctx, rw.e)
				if err != nil {
					return fmt.Errorf("EntryCreate(%s): %w", rw.e.ID, err)
				}
				if rw.to != "" {
					at := b.at(time.Second)
					if err := tx.EntrySetState(b.ctx, got.ID, []nextup.EntryState{nextup.EntryWaiting}, rw.to, at); err != nil {
						return fmt.Errorf("EntrySetState(%s): %w", got.ID, err)
					}
					got.State, got.UpdatedAt = rw.to, at
				}
				written = append(written, got)
			}
			return nil
		})
		p.entries = append(p.entries, written...)
	}
	return p
}

// candidates is EntryCandidates by brute force.
func (p population) candidates(q nextup.CandidateQuery) []nextup.Entry {
	var out []nextup.Entry
	for _, e := range p.entries {
		switch {
		case e.BusinessID != q.BusinessID, e.State != nextup.EntryWaiting:
			continue
		case q.EventID != "" && e.EventID != q.EventID:
			continue
		case q.EventID == "" && (e.EventID != "" || e.Service != q.Service):
			continue
		case !e.Earliest.IsZero() && e.Earliest.After(q.SlotStart):
			continue
		case !e.Latest.IsZero() && e.Latest.Before(q.SlotStart):
			continue
		case e.PartySize < q.MinParty || e.PartySize > q.MaxParty:
			continue
		case q.After != nil && !fairLess(*q.After, e):
			continue
		}
		out = append(out, e)
	}
	slices.SortFunc(out, fairCmp)
	return out
}

func (p population) randomQuery(r *rand.Rand) nextup.CandidateQuery {
	biz := p.bizs[r.IntN(5)/4] // mostly the first
	q := nextup.CandidateQuery{BusinessID: biz, Service: "cut"}
	switch r.IntN(4) {
	case 0:
		q.EventID = p.events[biz][r.IntN(2)]
		q.Service = ""
		if r.IntN(2) == 0 {
			q.Service = "cut" // ignored for an event
		}
	case 1:
		q.Service = "color"
	}
	// A slot start on an entry's bound now and then, to test inclusiveness.
	q.SlotStart = p.start.Add(time.Duration(r.IntN(300)) * time.Hour)
	if e := p.entries[r.IntN(len(p.entries))]; r.IntN(3) == 0 {
		if !e.Earliest.IsZero() {
			q.SlotStart = e.Earliest
		} else if !e.Latest.IsZero() {
			q.SlotStart = e.Latest
		}
	}
	q.MinParty = r.IntN(3)
	q.MaxParty = max(1, q.MinParty) + r.IntN(6)
	return q
}

func testEntryCandidatesBruteForce(t *testing.T, b *bundle) {
	r := newRand(t)
	p := b.population(r, 200)
	for i := range 60 {
		q := p.randomQuery(r)
		if r.IntN(5) == 0 {
			c := p.entries[r.IntN(len(p.entries))] // any entry is a valid cursor: the order is total
			q.After = &c
		}
		want := p.candidates(q)
		name := fmt.Sprintf("query %d %+v", i, describeQuery(q))

		// One big page.
		q.Limit = len(p.entries) + 1
		b.read(func(tx nextup.Tx) error {
			got, err := tx.EntryCandidates(b.ctx, q)
			if wantOK(t, err, "%s", name) {
				if gotIDs, wantIDs := ids(got, entryID), ids(want, entryID); !sameStrings(gotIDs, wantIDs) {
					t.Errorf("%s:\n\tgot  %v\n\twant %v", name, gotIDs, wantIDs)
				}
			}
			return nil
		})

		// Small pages, each read in its own transaction, following the cursor.
		q.Limit = 1 + r.IntN(8)
		var paged []nextup.Entry
		for page := 0; ; page++ {
			if page > len(p.entries) {
				t.Errorf("%s: paging with limit %d did not end", name, q.Limit)
				break
			}
			var got []nextup.Entry
			b.read(func(tx nextup.Tx) error {
				var err error
				got, err = tx.EntryCandidates(b.ctx, q)
				return err
			})
			if len(got) > q.Limit {
				t.Errorf("%s: page %d has %d entries, more than limit %d", name, page, len(got), q.Limit)
			}
			paged = append(paged, got...)
			if len(got) < q.Limit {
				break
			}
			q.After = &got[len(got)-1]
		}
		if gotIDs, wantIDs := ids(paged, entryID), ids(want, entryID); !sameStrings(gotIDs, wantIDs) {
			t.Errorf("%s, pages of %d:\n\tgot  %v\n\twant %v", name, q.Limit, gotIDs, wantIDs)
		}
		for _, e := range paged {
			for _, w := range p.entries {
				if w.ID == e.ID {
					checkEqual(t, "candidate "+e.ID, w, e)
				}
			}
		}
		if t.Failed() {
			return // one bad query is enough to read
		}
	}
}

func describeQuery(q nextup.CandidateQuery) string {
	s := fmt.Sprintf("biz=%s service=%q event=%q start=%s party=[%d,%d]", q.BusinessID, q.Service, q.EventID,
		q.SlotStart.Format(time.RFC3339), q.MinParty, q.MaxParty)
	if q.After != nil {
		s += fmt.Sprintf(" after=%s(prio=%v joined=%s seq=%d)", q.After.ID, q.After.Priority, q.After.JoinedAt.Format(time.TimeOnly), q.After.Seq)
	}
	return s
}

func testEntryPositionBruteForce(t *testing.T, b *bundle) {
	r := newRand(t)
	p := b.population(r, 200)
	b.read(func(tx nextup.Tx) error {
		bad := 0
		for _, e := range p.entries {
			if e.State != nextup.EntryWaiting {
				continue
			}
			want := 1
			for _, o := range p.entries {
				if o.BusinessID == e.BusinessID && o.State == nextup.EntryWaiting && sameList(o, e) && fairLess(o, e) {
					want++
				}
			}
			got, err := tx.EntryPosition(b.ctx, e)
			if !wantOK(t, err, "EntryPosition(%s)", e.ID) {
				bad++
			} else if got != want {
				t.Errorf("EntryPosition(%s: service=%q event=%q prio=%v joined=%s seq=%d) = %d, want %d",
					e.ID, e.Service, e.EventID, e.Priority, e.JoinedAt.Format(time.TimeOnly), e.Seq, got, want)
				bad++
			}
			if bad > 5 {
				t.Errorf("giving up after 5 wrong positions")
				break
			}
		}
		return nil
	})
}

// testEntryPositionChurn holds EntryPosition to a full count while a
// list churns: joins at times from a millisecond to years apart (and ties
// to the microsecond), leaves, offers and their ends, priority and
// service changes, and moves to the back, in small transactions; after
// every few steps each waiting entry's position is counted by brute force
// from the entries as stored. A store that keeps positions in a structure
// of its own (a count tree) must keep it in step with every one of these.
func testEntryPositionChurn(t *testing.T, b *bundle) {
	r := newRand(t)
	biz, other := b.business(), b.business()
	services := []string{"cut", "color"}
	var ids []string
	join := func() {
		var d time.Duration
		switch r.IntN(6) {
		case 0: // the same microsecond as someone else
			if len(ids) > 0 {
				d = b.now.Sub(b.getEntry(ids[r.IntN(len(ids))]).JoinedAt)
			}
		default: // a millisecond to several years ago, on a log scale
			d = time.Duration(math.Pow(10, 6+r.Float64()*10)) * time.Nanosecond * 100
		}
		e := b.entry(biz.ID, func(e *nextup.Entry) {
			e.Service, e.Priority, e.JoinedAt = services[r.IntN(2)], r.IntN(6) == 0, b.now.Add(-d)
		})
		ids = append(ids, e.ID)
	}
	for range 40 {
		join()
	}
	b.entry(other.ID) // another business's list counts for nothing
	check := func(step int) {
		t.Helper()
		var all []nextup.Entry
		for _, id := range ids {
			all = append(all, b.getEntry(id))
		}
		b.read(func(tx nextup.Tx) error {
			for _, e := range all {
				if e.State != nextup.EntryWaiting {
					continue
				}
				want := 1
				for _, o := range all {
					if o.State == nextup.EntryWaiting && sameList(o, e) && fairLess(o, e) {
						want++
					}
				}
				got, err := tx.EntryPosition(b.ctx, e)
				if wantOK(t, err, "step %d: EntryPosition(%s)", step, e.ID) && got != want {
					t.Fatalf("step %d: EntryPosition(%s: %s prio=%v joined=%s seq=%d) = %d, want %d", step, e.ID, e.Service, e.Priority,
						e.JoinedAt.Format(time.RFC3339Nano), e.Seq, got, want)
				}
			}
			return nil
		})
	}
	check(0)
	for step := 1; step <= 120; step++ {
		id := ids[r.IntN(len(ids))]
		e := b.getEntry(id)
		b.tx(func(tx nextup.Tx) error {
			switch op := r.IntN(7); {
			case op == 0:
				return nil // a join, below
			case op == 1 && e.State == nextup.EntryWaiting: // an offer, or leaving
				to := []nextup.EntryState{nextup.EntryOffered, nextup.EntryLeft, nextup.EntryExpired}[r.IntN(3)]
				return tx.EntrySetState(b.ctx, id, []nextup.EntryState{nextup.EntryWaiting}, to, b.now)
			case op == 2 && e.State == nextup.EntryOffered: // the offer ends: waiting again, or booked
				to := []nextup.EntryState{nextup.EntryWaiting, nextup.EntryBooked}[r.IntN(2)]
				return tx.EntrySetState(b.ctx, id, []nextup.EntryState{nextup.EntryOffered}, to, b.now)
			case op == 3: // priority given or taken away
				e.Priority = !e.Priority
				return tx.EntryUpdate(b.ctx, e)
			case op == 4: // another service's list
				e.Service = services[1-slices.Index(services, e.Service)]
				return tx.EntryUpdate(b.ctx, e)
			case op == 5: // to the back of the list, or a lapse counted in place
				_, err := tx.EntryLapse(b.ctx, id, r.IntN(2) == 0, b.now.Add(time.Duration(step)*time.Millisecond))
				return err
			}
			return nil
		})
		if r.IntN(7) == 0 {
			join()
		}
		if step%10 == 0 {
			check(step)
		}
	}
}

func testEntryListBruteForce(t *testing.T, b *bundle) {
	r := newRand(t)
	p := b.population(r, 200)
	list := func(f nextup.EntryFilter) []nextup.Entry {
		var out []nextup.Entry
		for _, e := range p.entries {
			switch {
			case e.BusinessID != f.BusinessID:
			case f.Service != "" && e.Service != f.Service:
			case f.EventID != "" && e.EventID != f.EventID:
			case f.State == "" && !e.Active():
			case f.State != "" && e.State != f.State:
			case f.After != nil && !fairLess(*f.After, e):
			default:
				out = append(out, e)
			}
		}
		slices.SortFunc(out, fairCmp)
		return out
	}
	a, bb := p.bizs[0], p.bizs[1]
	filters := []nextup.EntryFilter{
		{BusinessID: a},
		{BusinessID: bb},
		{BusinessID: a, Service: "cut"},
		{BusinessID: a, Service: "color"},
		{BusinessID: a, EventID: p.events[a][0]},
		{BusinessID: a, State: nextup.EntryWaiting},
		{BusinessID: a, State: nextup.EntryOffered},
		{BusinessID: a, State: nextup.EntryBooked},
		{BusinessID: a, State: nextup.EntryLeft},
		{BusinessID: a, State: nextup.EntryExpired},
		{BusinessID: a, Service: "cut", State: nextup.EntryWaiting},
		{BusinessID: bb, EventID: p.events[bb][1], State: nextup.EntryWaiting},
	}
	for _, f := range filters {
		want := list(f)
		name := fmt.Sprintf("EntryList(%+v)", f)
		f.Limit = 0 // no limit
		b.read(func(tx nextup.Tx) error {
			got, err := tx.EntryList(b.ctx, f)
			if wantOK(t, err, "%s", name) {
				if gotIDs, wantIDs := ids(got, entryID), ids(want, entryID); !sameStrings(gotIDs, wantIDs) {
					t.Errorf("%s (State \"\" means waiting or offered; fair order):\n\tgot  %v\n\twant %v", name, gotIDs, wantIDs)
				}
			}
			return nil
		})
		// Paged.
		f.Limit = 7
		var paged []nextup.Entry
		for page := 0; page <= len(p.entries); page++ {
			var got []nextup.Entry
			b.read(func(tx nextup.Tx) error {
				var err error
				got, err = tx.EntryList(b.ctx, f)
				return err
			})
			paged = append(paged, got...)
			if len(got) < f.Limit {
				break
			}
			f.After = &got[len(got)-1]
		}
		if gotIDs, wantIDs := ids(paged, entryID), ids(want, entryID); !sameStrings(gotIDs, wantIDs) {
			t.Errorf("%s in pages of 7:\n\tgot  %v\n\twant %v", name, gotIDs, wantIDs)
		}
	}
}

func testEntryActiveByContact(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	ev := b.slot(biz.ID, func(s *nextup.Slot) {
		s.Kind, s.Service, s.Seating, s.Capacity = nextup.KindEvent, "", nextup.SeatingShared, 20
	})
	ann := b.entry(biz.ID, func(e *nextup.Entry) { e.Email = " Ann@Example.COM" })
	annEvent := b.entry(biz.ID, func(e *nextup.Entry) { e.Email, e.Service, e.EventID = "ann@example.com", "", ev.ID })
	b.tx(func(tx nextup.Tx) error {
		return tx.EntrySetState(b.ctx, annEvent.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryOffered, b.now)
	})
	annEvent.State, annEvent.UpdatedAt = nextup.EntryOffered, b.now
	annLeft := b.entry(biz.ID, func(e *nextup.Entry) { e.Email, e.Service = "ann@example.com", "color" })
	b.tx(func(tx nextup.Tx) error {
		return tx.EntrySetState(b.ctx, annLeft.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryLeft, b.now)
	})
	phone := b.entry(biz.ID, func(e *nextup.Entry) { e.Email, e.Phone = "", "+44 (7700) 900-123" })
	b.entry(other.ID, func(e *nextup.Entry) { e.Email = "ann@example.com"; e.Service = "color" })

	cases := []struct {
		name                   string
		biz, key, service, evt string
		want                   *nextup.Entry
	}{
		{"email, service", biz.ID, "email:ann@example.com", "cut", "", &ann},
		{"email, event", biz.ID, "email:ann@example.com", "", ev.ID, &annEvent},
		{"email, service with a left entry only", biz.ID, "email:ann@example.com", "color", "", nil},
		{"email, other business has one", biz.ID, "email:ann@example.com", "perm", "", nil},
		{"other business", other.ID, "email:ann@example.com", "cut", "", nil},
		{"phone", biz.ID, "phone:+447700900123", "cut", "", &phone},
		{"phone, other service", biz.ID, "phone:+447700900123", "color", "", nil},
	}
	if ann.ContactKey() != "email:ann@example.com" || phone.ContactKey() != "phone:+447700900123" {
		t.Fatalf("test setup: ContactKey %q, %q", ann.ContactKey(), phone.ContactKey())
	}
	b.read(func(tx nextup.Tx) error {
		for _, c := range cases {
			got, err := tx.EntryActiveByContact(b.ctx, c.biz, c.key, c.service, c.evt)
			if c.want == nil {
				wantErr(t, err, nextup.ErrNotFound, "EntryActiveByContact(%s)", c.name)
				continue
			}
			if wantOK(t, err, "EntryActiveByContact(%s)", c.name) {
				checkEqual(t, "EntryActiveByContact("+c.name+")", *c.want, got)
			}
		}
		return nil
	})
}

func testEntryActiveListByContact(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	ev := b.slot(biz.ID, func(s *nextup.Slot) {
		s.Kind, s.Service, s.Seating, s.Capacity = nextup.KindEvent, "", nextup.SeatingShared, 20
	})
	const key = "email:ann@example.com"
	// The event entry's id is taken first, so it sorts before the haircut
	// entry's although it is created after it: the two joined at the same
	// instant, and the list breaks the tie by id, not by seq. The haircut
	// entry has priority, so fair order would put it first.
	evID := b.id("ent")
	cut := b.entry(biz.ID, func(e *nextup.Entry) {
		e.Email, e.JoinedAt, e.Priority = " Ann@Example.COM", b.at(-time.Hour), true
	})
	color := b.entry(biz.ID, func(e *nextup.Entry) {
		e.Email, e.Service, e.JoinedAt = "ann@example.com", "color", b.at(-3*time.Hour)
	})
	event := b.entry(biz.ID, func(e *nextup.Entry) {
		e.ID, e.Email, e.Service, e.EventID, e.JoinedAt = evID, "ann@example.com", "", ev.ID, b.at(-time.Hour)
	})
	left := b.entry(biz.ID, func(e *nextup.Entry) {
		e.Email, e.Service, e.JoinedAt = "ann@example.com", "perm", b.at(-4*time.Hour)
	})
	b.tx(func(tx nextup.Tx) error {
		return tx.EntrySetState(b.ctx, left.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryLeft, b.now)
	})
	b.entry(biz.ID, func(e *nextup.Entry) { e.Email, e.JoinedAt = "bob@example.com", b.at(-5*time.Hour) })
	elsewhere := b.entry(other.ID, func(e *nextup.Entry) { e.Email, e.JoinedAt = "ann@example.com", b.at(-5*time.Hour) })
	if cut.ContactKey() != key || event.ContactKey() != key {
		t.Fatalf("test setup: ContactKey %q, %q", cut.ContactKey(), event.ContactKey())
	}

	check := func(tx nextup.Tx, step, businessID string, limit int, want ...nextup.Entry) {
		t.Helper()
		got, err := tx.EntryActiveListByContact(b.ctx, businessID, key, limit)
		if !wantOK(t, err, "EntryActiveListByContact(%s)", step) {
			return
		}
		if gotIDs, wantIDs := ids(got, entryID), ids(want, entryID); !sameStrings(gotIDs, wantIDs) {
			t.Errorf("EntryActiveListByContact(%s):\n\tgot  %v\n\twant %v", step, gotIDs, wantIDs)
			return
		}
		for i := range want {
			checkEqual(t, fmt.Sprintf("EntryActiveListByContact(%s)[%d]", step, i), want[i], got[i])
		}
	}
	b.read(func(tx nextup.Tx) error {
		check(tx, "all", biz.ID, 0, color, event, cut)
		check(tx, "limit 2", biz.ID, 2, color, event)
		check(tx, "limit 1", biz.ID, 1, color)
		check(tx, "limit past the end", biz.ID, 10, color, event, cut)
		check(tx, "other business", other.ID, 0, elsewhere)
		got, err := tx.EntryActiveListByContact(b.ctx, biz.ID, "email:nobody@example.com", 0)
		if wantOK(t, err, "EntryActiveListByContact(unknown person)") && len(got) != 0 {
			t.Errorf("EntryActiveListByContact(unknown person) = %v, want none", ids(got, entryID))
		}
		return nil
	})

	// An offered entry is still active; the transaction that moved it sees
	// it moved, and so does every later one.
	event.State, event.UpdatedAt = nextup.EntryOffered, b.now
	b.tx(func(tx nextup.Tx) error {
		if err := tx.EntrySetState(b.ctx, event.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryOffered, b.now); err != nil {
			return err
		}
		check(tx, "offered, same transaction", biz.ID, 0, color, event, cut)
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		check(tx, "offered", biz.ID, 0, color, event, cut)
		check(tx, "offered, limit 2", biz.ID, 2, color, event)
		return nil
	})
}

func testEntryExpireBefore(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	latest := func(d time.Duration) func(*nextup.Entry) {
		return func(e *nextup.Entry) { e.Latest = b.at(d) }
	}
	expire := []nextup.Entry{
		b.entry(biz.ID, latest(-2*time.Hour)),
		b.entry(biz.ID, latest(-time.Hour)),
		b.entry(biz.ID, latest(-time.Microsecond)),
		b.entry(other.ID, latest(-3*time.Hour)),
	}
	keep := []nextup.Entry{
		b.entry(biz.ID, latest(0)), // not before
		b.entry(biz.ID),            // no latest
		b.entry(biz.ID, latest(time.Hour)),
		b.entry(biz.ID, latest(-2*time.Hour)), // offered, below
		b.entry(biz.ID, latest(-2*time.Hour)), // booked, below
	}
	b.tx(func(tx nextup.Tx) error {
		if err := tx.EntrySetState(b.ctx, keep[3].ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryOffered, b.now); err != nil {
			return err
		}
		return tx.EntrySetState(b.ctx, keep[4].ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryBooked, b.now)
	})
	keepState := map[string]nextup.EntryState{keep[3].ID: nextup.EntryOffered, keep[4].ID: nextup.EntryBooked}

	seen := map[string]bool{}
	run := func(businessID string, limit, wantN int) {
		t.Helper()
		var got []nextup.Entry
		b.tx(func(tx nextup.Tx) error {
			var err error
			got, err = tx.EntryExpireBefore(b.ctx, businessID, b.now, limit)
			return err
		})
		if len(got) != wantN {
			t.Errorf("EntryExpireBefore(%s, now, %d) returned %d entries %v, want %d", businessID, limit, len(got), ids(got, entryID), wantN)
		}
		for _, e := range got {
			if seen[e.ID] {
				t.Errorf("EntryExpireBefore returned %s twice", e.ID)
			}
			seen[e.ID] = true
			if e.State != nextup.EntryExpired {
				t.Errorf("EntryExpireBefore returned %s in state %q, want expired", e.ID, e.State)
			}
			if e.BusinessID != businessID {
				t.Errorf("EntryExpireBefore(%s) returned %s of business %s", businessID, e.ID, e.BusinessID)
			}
		}
	}
	run(biz.ID, 2, 2)
	run(biz.ID, 10, 1)
	run(biz.ID, 10, 0)
	if got := b.getEntry(expire[3].ID); got.State != nextup.EntryWaiting {
		t.Errorf("EntryExpireBefore of one business expired entry %s of another", expire[3].ID)
	}
	run(other.ID, 10, 1)
	for _, e := range expire {
		if !seen[e.ID] {
			t.Errorf("entry %s (waiting, latest %s) was not expired", e.ID, e.Latest.Format(time.RFC3339Nano))
		}
		if got := b.getEntry(e.ID); got.State != nextup.EntryExpired {
			t.Errorf("entry %s: state %q, want expired", e.ID, got.State)
		}
	}
	for _, e := range keep {
		if seen[e.ID] {
			t.Errorf("entry %s (latest %s) was expired, want kept", e.ID, e.Latest.Format(time.RFC3339Nano))
		}
		want := nextup.EntryWaiting
		if s, ok := keepState[e.ID]; ok {
			want = s
		}
		if got := b.getEntry(e.ID); got.State != want {
			t.Errorf("entry %s: state %q, want %q", e.ID, got.State, want)
		}
	}
}

// EntryByContact finds the oldest entry (by Seq) of one person on one
// waitlist in one of the given states: scoped to the business, the queue
// (a service's or an event's) and the contact; none, or no states, is
// ErrNotFound.
func testEntryByContact(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	ev := b.slot(biz.ID, event(&nextup.EventSettings{ClaimWindow: time.Hour, Currency: "eur"}))
	ev2 := b.slot(biz.ID, event(&nextup.EventSettings{ClaimWindow: time.Hour, Currency: "eur"}))
	const ann = "email:ann@example.com"
	at := func(state nextup.EntryState, bizID, email, service, eventID string) nextup.Entry {
		return b.entry(bizID, func(e *nextup.Entry) { e.State, e.Email, e.Service, e.EventID = state, email, service, eventID })
	}
	// Older than all of Ann's below, on the same waitlists: another
	// business's Ann and another person.
	otherAnn := at(nextup.EntryBooked, other.ID, "ann@example.com", "", ev.ID)
	otherAnnCut := at(nextup.EntryWaiting, other.ID, "Ann@Example.com", "cut", "")
	bob := at(nextup.EntryWaiting, biz.ID, "bob@example.com", "", ev.ID)
	// Ann on the event, oldest first; on the service; on another event.
	evLeft := at(nextup.EntryLeft, biz.ID, "ann@example.com", "", ev.ID)
	evBooked := at(nextup.EntryBooked, biz.ID, " ANN@example.com", "", ev.ID)
	evWaiting := at(nextup.EntryWaiting, biz.ID, "ann@example.com", "", ev.ID)
	evOffered := at(nextup.EntryOffered, biz.ID, "ann@example.com", "", ev.ID)
	cutExpired := at(nextup.EntryExpired, biz.ID, "ann@example.com", "cut", "")
	cutWaiting := at(nextup.EntryWaiting, biz.ID, "ann@example.com", "cut", "")
	ev2Booked := at(nextup.EntryBooked, biz.ID, "ann@example.com", "", ev2.ID)

	st := func(s ...nextup.EntryState) []nextup.EntryState { return s }
	registered := st(nextup.EntryWaiting, nextup.EntryOffered, nextup.EntryBooked)
	cases := []struct {
		name                   string
		biz, key, service, evt string
		states                 []nextup.EntryState
		want                   *nextup.Entry
	}{
		{"event, registered", biz.ID, ann, "", ev.ID, registered, &evBooked},
		{"event, active", biz.ID, ann, "", ev.ID, st(nextup.EntryWaiting, nextup.EntryOffered), &evWaiting},
		{"event, offered", biz.ID, ann, "", ev.ID, st(nextup.EntryOffered), &evOffered},
		{"event, left", biz.ID, ann, "", ev.ID, st(nextup.EntryLeft), &evLeft},
		{"event, every state", biz.ID, ann, "", ev.ID, st(nextup.EntryExpired, nextup.EntryBooked, nextup.EntryLeft), &evLeft},
		{"event, expired: none", biz.ID, ann, "", ev.ID, st(nextup.EntryExpired), nil},
		{"event, no states", biz.ID, ann, "", ev.ID, nil, nil},
		{"event, empty states", biz.ID, ann, "", ev.ID, st(), nil},
		{"event, a service named too", biz.ID, ann, "cut", ev.ID, registered, &evBooked},
		{"other event", biz.ID, ann, "", ev2.ID, registered, &ev2Booked},
		{"other event, waiting: none", biz.ID, ann, "", ev2.ID, st(nextup.EntryWaiting), nil},
		{"service, waiting or expired", biz.ID, ann, "cut", "", st(nextup.EntryWaiting, nextup.EntryExpired), &cutExpired},
		{"service, registered", biz.ID, ann, "cut", "", registered, &cutWaiting},
		{"service, booked: the event's do not count", biz.ID, ann, "cut", "", st(nextup.EntryBooked), nil},
		{"no service nor event: the events' do not count", biz.ID, ann, "", "", registered, nil},
		{"another service", biz.ID, ann, "color", "", registered, nil},
		{"another person", biz.ID, "email:bob@example.com", "", ev.ID, registered, &bob},
		{"unknown person", biz.ID, "email:nobody@example.com", "", ev.ID, registered, nil},
		{"phone key of nobody", biz.ID, "phone:+447700900123", "cut", "", registered, nil},
		{"other business, event", other.ID, ann, "", ev.ID, registered, &otherAnn},
		{"other business, service", other.ID, ann, "cut", "", registered, &otherAnnCut},
		{"missing business", "biz_missing", ann, "", ev.ID, registered, nil},
	}
	b.read(func(tx nextup.Tx) error {
		for _, c := range cases {
			got, err := tx.EntryByContact(b.ctx, c.biz, c.key, c.service, c.evt, c.states)
			name := fmt.Sprintf("EntryByContact(%s: %s, %q, %q, %v)", c.name, c.key, c.service, c.evt, c.states)
			if c.want == nil {
				if wantErr(t, err, nextup.ErrNotFound, "%s", name) {
					continue
				}
				t.Errorf("%s: got entry %s (%s)", name, got.ID, got.State)
				continue
			}
			if wantOK(t, err, "%s", name) {
				checkEqual(t, name, *c.want, got)
			}
		}
		return nil
	})
}
