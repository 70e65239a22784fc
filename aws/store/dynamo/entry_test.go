package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// TestEntryBruteForce checks EntryCandidates, EntryPosition and EntryList
// against brute force over a random population, as storetest's
// Entry/*BruteForce do. Those write their 200 entries in one transaction,
// more than the 100 actions DynamoDB takes in one; here the population is
// written in transactions of 40.
func TestEntryBruteForce(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	seed := uint64(time.Now().UnixNano())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %d", seed)
		}
	})
	r := rand.New(rand.NewPCG(seed, seed))
	now := time.Date(2031, 3, 10, 9, 0, 0, 123456000, time.UTC)
	start := now.Add(24 * time.Hour)
	hour := func(n int) time.Duration { return time.Duration(r.IntN(n)) * time.Hour }

	bizs := []string{"biz_a", "biz_b"}
	events := map[string][]string{}
	err := s.InTx(ctx, func(tx nextup.Tx) error {
		for _, biz := range bizs {
			b := nextup.Business{ID: biz, Name: biz, Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: now}
			if err := tx.BusinessCreate(ctx, b); err != nil {
				return err
			}
			for i := range 2 {
				id := fmt.Sprintf("ev_%s_%d", biz, i)
				ev := nextup.Slot{ID: id, BusinessID: biz, Kind: nextup.KindEvent, StartsAt: start, EndsAt: start.Add(time.Hour),
					Capacity: 50, Seating: nextup.SeatingShared, CreatedAt: now}
				if err := tx.SlotCreate(ctx, ev); err != nil {
					return err
				}
				events[biz] = append(events[biz], id)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	states := []nextup.EntryState{nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired}
	var entries []nextup.Entry
	for chunk := range 5 {
		var made []nextup.Entry
		err := s.InTx(ctx, func(tx nextup.Tx) error {
			made = nil
			for i := chunk * 40; i < (chunk+1)*40; i++ {
				biz := bizs[0]
				if r.IntN(5) == 0 {
					biz = bizs[1]
				}
				e := nextup.Entry{ID: fmt.Sprintf("ent_r%03d", i), BusinessID: biz, Name: "x", Email: fmt.Sprintf("r%d@example.com", i),
					PartySize: 1 + r.IntN(6), Priority: r.IntN(7) == 0, Source: "api",
					JoinedAt: now.Add(-time.Duration(r.IntN(30)) * time.Minute), State: nextup.EntryWaiting,
					StatusHash: nextup.HashToken(fmt.Sprintf("r-%d", i)), UpdatedAt: now}
				if r.IntN(4) == 0 {
					e.EventID = events[biz][r.IntN(2)]
				} else {
					e.Service = []string{"cut", "cut", "color"}[r.IntN(3)]
				}
				switch r.IntN(10) {
				case 0, 1, 2:
				case 3, 4:
					e.Earliest = start.Add(hour(240))
				case 5, 6:
					e.Latest = start.Add(hour(240))
				default:
					e.Earliest = start.Add(hour(240))
					e.Latest = e.Earliest.Add(hour(120))
				}
				got, err := tx.EntryCreate(ctx, e)
				if err != nil {
					return err
				}
				if r.IntN(10) < 3 {
					to := states[r.IntN(len(states))]
					if err := tx.EntrySetState(ctx, got.ID, []nextup.EntryState{nextup.EntryWaiting}, to, now.Add(time.Second)); err != nil {
						return err
					}
					got.State, got.UpdatedAt = to, now.Add(time.Second)
				}
				made = append(made, got)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, made...)
	}
	fair := func(a, b nextup.Entry) bool { return nextup.CompareFair(a, b) < 0 }
	ids := func(es []nextup.Entry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	read := func(fn func(tx nextup.Tx) error) {
		t.Helper()
		if err := s.Read(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Candidates", func(t *testing.T) {
		for i := range 60 {
			biz := bizs[r.IntN(5)/4]
			q := nextup.CandidateQuery{BusinessID: biz, Service: "cut", SlotStart: start.Add(hour(300)),
				MinParty: r.IntN(3)}
			q.MaxParty = max(1, q.MinParty) + r.IntN(6)
			switch r.IntN(4) {
			case 0:
				q.EventID = events[biz][r.IntN(2)]
			case 1:
				q.Service = "color"
			}
			if e := entries[r.IntN(len(entries))]; r.IntN(3) == 0 {
				if !e.Earliest.IsZero() {
					q.SlotStart = e.Earliest
				} else if !e.Latest.IsZero() {
					q.SlotStart = e.Latest
				}
			}
			if r.IntN(5) == 0 {
				c := entries[r.IntN(len(entries))]
				q.After = &c
			}
			var want []nextup.Entry
			for _, e := range entries {
				switch {
				case e.BusinessID != q.BusinessID, e.State != nextup.EntryWaiting:
				case q.EventID != "" && e.EventID != q.EventID:
				case q.EventID == "" && (e.EventID != "" || e.Service != q.Service):
				case !e.Earliest.IsZero() && e.Earliest.After(q.SlotStart):
				case !e.Latest.IsZero() && e.Latest.Before(q.SlotStart):
				case e.PartySize < q.MinParty || e.PartySize > q.MaxParty:
				case q.After != nil && !fair(*q.After, e):
				default:
					want = append(want, e)
				}
			}
			slices.SortFunc(want, nextup.CompareFair)
			q.Limit = len(entries) + 1
			read(func(tx nextup.Tx) error {
				got, err := tx.EntryCandidates(ctx, q)
				if err != nil {
					return err
				}
				if !slices.Equal(ids(got), ids(want)) {
					t.Errorf("query %d %+v:\n\tgot  %v\n\twant %v", i, q, ids(got), ids(want))
				}
				return nil
			})
			q.Limit = 1 + r.IntN(8)
			var paged []nextup.Entry
			for page := 0; page <= len(entries); page++ {
				var got []nextup.Entry
				read(func(tx nextup.Tx) error {
					var err error
					got, err = tx.EntryCandidates(ctx, q)
					return err
				})
				paged = append(paged, got...)
				if len(got) < q.Limit {
					break
				}
				q.After = &got[len(got)-1]
			}
			if !slices.Equal(ids(paged), ids(want)) {
				t.Errorf("query %d in pages of %d:\n\tgot  %v\n\twant %v", i, q.Limit, ids(paged), ids(want))
			}
			if t.Failed() {
				return
			}
		}
	})

	t.Run("Position", func(t *testing.T) {
		read(func(tx nextup.Tx) error {
			for _, e := range entries {
				if e.State != nextup.EntryWaiting {
					continue
				}
				want := 1
				for _, o := range entries {
					same := o.EventID == e.EventID && (e.EventID != "" || o.Service == e.Service)
					if o.BusinessID == e.BusinessID && o.State == nextup.EntryWaiting && same && fair(o, e) {
						want++
					}
				}
				got, err := tx.EntryPosition(ctx, e)
				if err != nil {
					return err
				}
				if got != want {
					t.Errorf("EntryPosition(%s) = %d, want %d", e.ID, got, want)
				}
			}
			return nil
		})
	})

	t.Run("List", func(t *testing.T) {
		a, b := bizs[0], bizs[1]
		filters := []nextup.EntryFilter{
			{BusinessID: a}, {BusinessID: b}, {BusinessID: a, Service: "cut"}, {BusinessID: a, Service: "color"},
			{BusinessID: a, EventID: events[a][0]}, {BusinessID: a, State: nextup.EntryWaiting},
			{BusinessID: a, State: nextup.EntryOffered}, {BusinessID: a, State: nextup.EntryBooked},
			{BusinessID: a, State: nextup.EntryLeft}, {BusinessID: a, State: nextup.EntryExpired},
			{BusinessID: a, Service: "cut", State: nextup.EntryWaiting},
			{BusinessID: b, EventID: events[b][1], State: nextup.EntryWaiting},
		}
		for _, f := range filters {
			var want []nextup.Entry
			for _, e := range entries {
				switch {
				case e.BusinessID != f.BusinessID:
				case f.Service != "" && e.Service != f.Service:
				case f.EventID != "" && e.EventID != f.EventID:
				case f.State == "" && !e.Active():
				case f.State != "" && e.State != f.State:
				default:
					want = append(want, e)
				}
			}
			slices.SortFunc(want, nextup.CompareFair)
			read(func(tx nextup.Tx) error {
				got, err := tx.EntryList(ctx, f)
				if err != nil {
					return err
				}
				if !slices.Equal(ids(got), ids(want)) {
					t.Errorf("EntryList(%+v):\n\tgot  %v\n\twant %v", f, ids(got), ids(want))
				}
				return nil
			})
			f.Limit = 7
			var paged []nextup.Entry
			for page := 0; page <= len(entries); page++ {
				var got []nextup.Entry
				read(func(tx nextup.Tx) error {
					var err error
					got, err = tx.EntryList(ctx, f)
					return err
				})
				paged = append(paged, got...)
				if len(got) < f.Limit {
					break
				}
				f.After = &got[len(got)-1]
			}
			if !slices.Equal(ids(paged), ids(want)) {
				t.Errorf("EntryList(%+v) in pages of 7:\n\tgot  %v\n\twant %v", f, ids(paged), ids(want))
			}
		}
	})
}
