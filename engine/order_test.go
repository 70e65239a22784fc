package engine_test

import (
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

func TestLess(t *testing.T) {
	t.Parallel()
	t0 := testNow
	e := func(prio bool, joined time.Time, seq int64) nextup.Entry {
		return nextup.Entry{Priority: prio, JoinedAt: joined, Seq: seq}
	}
	tests := []struct {
		name string
		a, b nextup.Entry
		want bool
	}{
		{"priority beats an earlier join", e(true, t0.Add(time.Hour), 9), e(false, t0, 1), true},
		{"no priority loses to priority", e(false, t0, 1), e(true, t0.Add(time.Hour), 9), false},
		{"earlier join first", e(false, t0, 9), e(false, t0.Add(time.Second), 1), true},
		{"later join second", e(false, t0.Add(time.Second), 1), e(false, t0, 9), false},
		{"same join: smaller seq first", e(true, t0, 1), e(true, t0, 2), true},
		{"same join: larger seq second", e(true, t0, 2), e(true, t0, 1), false},
		{"same instant in another zone is the same join", e(false, t0.In(newYork), 1), e(false, t0.UTC(), 2), true},
		{"irreflexive", e(false, t0, 1), e(false, t0, 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := engine.Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSortFair(t *testing.T) {
	t.Parallel()
	t0 := testNow
	es := []nextup.Entry{
		{ID: "late", JoinedAt: t0.Add(2 * time.Hour), Seq: 1},
		{ID: "vip-late", Priority: true, JoinedAt: t0.Add(3 * time.Hour), Seq: 2},
		{ID: "early-b", JoinedAt: t0, Seq: 4},
		{ID: "vip-early", Priority: true, JoinedAt: t0, Seq: 5},
		{ID: "early-a", JoinedAt: t0, Seq: 3},
	}
	engine.SortFair(es)
	want := []string{"vip-early", "vip-late", "early-a", "early-b", "late"}
	for i, e := range es {
		if e.ID != want[i] {
			t.Fatalf("position %d = %s, want %s (order %v)", i, e.ID, want[i], es)
		}
	}
}
