package engine_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

func TestRequeue(t *testing.T) {
	t.Parallel()
	rule := func(policy string, dropAfter int) nextup.Requeue {
		return nextup.Requeue{Policy: policy, DropAfter: dropAfter}
	}
	const keep, back, drop = engine.RequeueKeep, engine.RequeueBack, engine.RequeueDrop
	tests := []struct {
		name string
		rule nextup.Requeue
		want []engine.RequeueMove // for the 1st, 2nd, ... lapse
	}{
		{"keep (slots' default): the place is kept, always", nextup.DefaultRules().Requeue, []engine.RequeueMove{keep, keep, keep, keep, keep}},
		{"empty policy (rules from before) is keep", rule("", 0), []engine.RequeueMove{keep, keep, keep}},
		{"keep, dropped after 3", rule(nextup.RequeueKeep, 3), []engine.RequeueMove{keep, keep, drop, drop}},
		{"back, never dropped", rule(nextup.RequeueBack, 0), []engine.RequeueMove{back, back, back, back}},
		{"back, dropped after 2 (events' default)", nextup.DefaultEventRequeue(), []engine.RequeueMove{back, drop, drop}},
		{"back, dropped after 1: back never happens", rule(nextup.RequeueBack, 1), []engine.RequeueMove{drop, drop}},
		{"back, dropped after 3", rule(nextup.RequeueBack, 3), []engine.RequeueMove{back, back, drop}},
		{"drop after 1", rule(nextup.RequeueDrop, 1), []engine.RequeueMove{drop, drop}},
		{"drop after 2: the first keeps the place", rule(nextup.RequeueDrop, 2), []engine.RequeueMove{keep, drop, drop}},
		{"unknown policy keeps the place (Validate refuses it)", rule("shuffle", 0), []engine.RequeueMove{keep, keep}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i, want := range tt.want {
				if got := engine.Requeue(tt.rule, i+1); got != want {
					t.Errorf("Requeue(%+v, %d) = %s, want %s", tt.rule, i+1, got, want)
				}
			}
		})
	}
}

func TestRulesForRequeue(t *testing.T) {
	t.Parallel()
	biz := nextup.DefaultRules()
	biz.Requeue = nextup.Requeue{Policy: nextup.RequeueDrop, DropAfter: 5}
	own := nextup.Requeue{Policy: nextup.RequeueKeep}
	tests := []struct {
		name string
		slot nextup.Slot
		want nextup.Requeue
	}{
		{"a slot follows the business", nextup.Slot{Kind: nextup.KindSlot}, biz.Requeue},
		{"an event defaults to back, dropped after 2", nextup.Slot{Kind: nextup.KindEvent, Event: &nextup.EventSettings{}}, nextup.DefaultEventRequeue()},
		{"an event without settings too", nextup.Slot{Kind: nextup.KindEvent}, nextup.DefaultEventRequeue()},
		{"an event's own rule", nextup.Slot{Kind: nextup.KindEvent, Event: &nextup.EventSettings{Requeue: &own}}, own},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := engine.RulesFor(biz, tt.slot).Requeue; got != tt.want {
				t.Errorf("RulesFor(...).Requeue = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRequeueValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule   nextup.Requeue
		fields []string
	}{
		{nextup.Requeue{Policy: nextup.RequeueKeep}, nil},
		{nextup.Requeue{Policy: nextup.RequeueKeep, DropAfter: 4}, nil},
		{nextup.DefaultEventRequeue(), nil},
		{nextup.Requeue{Policy: nextup.RequeueDrop, DropAfter: 1}, nil},
		{nextup.Requeue{Policy: nextup.RequeueDrop}, []string{"requeue.drop_after"}},
		{nextup.Requeue{Policy: "later"}, []string{"requeue.policy"}},
		{nextup.Requeue{}, []string{"requeue.policy"}},
		{nextup.Requeue{Policy: nextup.RequeueBack, DropAfter: -1}, []string{"requeue.drop_after"}},
		{nextup.Requeue{Policy: nextup.RequeueBack, DropAfter: 101}, []string{"requeue.drop_after"}},
		{nextup.Requeue{Policy: "", DropAfter: -1}, []string{"requeue.policy", "requeue.drop_after"}},
	}
	for _, tt := range tests {
		var got []string
		for _, fe := range tt.rule.Validate("requeue") {
			got = append(got, fe.Field)
		}
		if !slices.Equal(got, tt.fields) {
			t.Errorf("Validate(%+v) fields = %v, want %v", tt.rule, got, tt.fields)
		}
	}
}

// TestRequeueProperties plays random lapses and declines on a waitlist
// in memory, moving an entry to the back the way the stores do (JoinedAt
// the moment of the lapse, Seq the next number), and checks the rule's
// promises: a drop comes exactly at the DropAfter-th lapse and never
// before; keep leaves the whole order as it was; back puts the entry
// behind everyone of its priority and moves nobody else but those behind
// it, each up by one place.
func TestRequeueProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := rapidSource{t}
		rule := nextup.Requeue{
			Policy:    pick(s, "policy", nextup.RequeueKeep, nextup.RequeueBack, nextup.RequeueDrop),
			DropAfter: s.intn(0, 4, "drop after"),
		}
		if rule.Policy == nextup.RequeueDrop && rule.DropAfter == 0 {
			rule.DropAfter = 1 // Validate's rule
		}
		now := testNow
		var list []nextup.Entry
		seq := int64(0)
		for i := range s.intn(1, 10, "entries") {
			seq++
			list = append(list, nextup.Entry{
				ID:       fmt.Sprintf("e%d", i),
				Priority: rare(s, "priority"),
				JoinedAt: now.Add(-time.Duration(s.intn(0, 3, "joined minutes ago")) * time.Minute),
				Seq:      seq,
			})
		}
		engine.SortFair(list)
		lapses := map[string]int{}
		for range s.intn(1, 20, "lapses") {
			if len(list) == 0 {
				break
			}
			now = now.Add(time.Duration(s.intn(0, 2, "minutes later")) * time.Minute)
			i := s.intn(0, len(list)-1, "who lapses")
			e := list[i]
			lapses[e.ID]++
			move := engine.Requeue(rule, lapses[e.ID])

			wantDrop := rule.DropAfter > 0 && lapses[e.ID] == rule.DropAfter
			if (move == engine.RequeueDrop) != wantDrop {
				t.Fatalf("lapse %d of %s under %+v: %s, want drop=%v", lapses[e.ID], e.ID, rule, move, wantDrop)
			}
			before := slices.Clone(list)
			switch move {
			case engine.RequeueDrop:
				list = slices.Delete(list, i, i+1)
				if got := ids(list); !slices.Equal(got, ids(slices.Delete(slices.Clone(before), i, i+1))) {
					t.Fatalf("dropping %s reordered the rest: %v", e.ID, got)
				}
				continue
			case engine.RequeueKeep:
				if rule.Policy == nextup.RequeueBack {
					t.Fatalf("policy back kept %s in place", e.ID)
				}
				engine.SortFair(list)
				if !slices.Equal(ids(list), ids(before)) {
					t.Fatalf("keep changed the order: %v, was %v", ids(list), ids(before))
				}
				continue
			}
			if rule.Policy != nextup.RequeueBack {
				t.Fatalf("policy %s moved %s to the back", rule.Policy, e.ID)
			}
			seq++
			list[i].JoinedAt, list[i].Seq = now, seq
			engine.SortFair(list)
			at := slices.IndexFunc(list, func(x nextup.Entry) bool { return x.ID == e.ID })
			for j, x := range list {
				if x.ID != e.ID && x.Priority == e.Priority && j > at {
					t.Fatalf("%s moved to the back is at %d, before %s at %d (%v)", e.ID, at+1, x.ID, j+1, ids(list))
				}
				if x.Priority != e.Priority && (j < at) != x.Priority {
					t.Fatalf("%s moved to the back crossed the priority line at %s (%v)", e.ID, x.ID, ids(list))
				}
			}
			others := func(l []nextup.Entry) []string {
				return slices.DeleteFunc(ids(l), func(id string) bool { return id == e.ID })
			}
			if !slices.Equal(others(list), others(before)) {
				t.Fatalf("moving %s to the back reordered the others: %v, was %v", e.ID, ids(list), ids(before))
			}
			for j, x := range before {
				if x.ID == e.ID {
					continue
				}
				pos := slices.IndexFunc(list, func(y nextup.Entry) bool { return y.ID == x.ID })
				want := j
				if j > i && j <= at {
					want = j - 1 // was behind the one who moved back
				}
				if pos != want {
					t.Fatalf("%s was at %d, is at %d after %s went back, want %d", x.ID, j+1, pos+1, e.ID, want+1)
				}
			}
		}
	})
}

func ids(es []nextup.Entry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestOfferedExcludes(t *testing.T) {
	t.Parallel()
	t0 := testNow
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	made := func(entryID string, created, ended int) nextup.Offer {
		o := nextup.Offer{EntryID: entryID, State: nextup.OfferExpired, CreatedAt: at(created)}
		if ended >= 0 {
			e := at(ended)
			o.ResolvedAt = &e
		} else {
			o.State = nextup.OfferOffered
		}
		return o
	}
	ann := func(joined int) nextup.Entry { return nextup.Entry{ID: "ann", JoinedAt: at(joined)} }
	tests := []struct {
		name    string
		history []nextup.Offer
		e       nextup.Entry
		want    bool
	}{
		{"never offered", []nextup.Offer{made("bob", 10, 20)}, ann(0), false},
		{"offered in her place", []nextup.Offer{made("ann", 10, 20), made("bob", 20, 30)}, ann(0), true},
		{"offered the moment she joined", []nextup.Offer{made("ann", 0, 5), made("bob", 5, 30)}, ann(0), true},
		{"moved back, nobody offered since", []nextup.Offer{made("ann", 10, 20)}, ann(20), true},
		{"moved back, another offered in the same batch only", []nextup.Offer{made("ann", 10, 20), made("bob", 10, 30)}, ann(20), true},
		{"moved back, the slot rolled on to another at once", []nextup.Offer{made("ann", 10, 20), made("bob", 20, -1)}, ann(20), false},
		{"moved back, another offered later", []nextup.Offer{made("bob", 0, 5), made("ann", 10, 20), made("cat", 40, 50)}, ann(20), false},
		{"her latest offer counts", []nextup.Offer{made("ann", 10, 20), made("bob", 20, 30), made("ann", 35, 40)}, ann(20), true},
		{"moved back twice, others since the last", []nextup.Offer{made("ann", 10, 20), made("bob", 20, 30), made("ann", 35, 40), made("bob", 45, 50)}, ann(40), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := engine.NewOffered(tt.history).Excludes(tt.e); got != tt.want {
				t.Errorf("Excludes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBackOfLine(t *testing.T) {
	t.Parallel()
	o := nextup.Offer{CreatedAt: testNow}
	if got := engine.BackOfLine(o, testNow.Add(time.Hour)); !got.Equal(testNow.Add(time.Hour)) {
		t.Errorf("a lapse an hour on moves to %v, want the moment of the lapse", got)
	}
	if got := engine.BackOfLine(o, testNow); !got.Equal(testNow.Add(time.Microsecond)) {
		t.Errorf("a decline the instant the offer was made moves to %v, want a microsecond after it", got)
	}
}
