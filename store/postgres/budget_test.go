package postgres

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestSendBudgetIsShared: three instances (pools of their own on one
// schema) draw 15 tokens each from one account's bucket at the same
// moment. Between them they get exactly what one sender at the account's
// rate gets: the burst at once, then one token every 1/tps, so the sum of
// their sends keeps to the provider's limit instead of three times it.
func TestSendBudgetIsShared(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	a := openFresh(t, dsn)
	dbs := []*DB{a, openAt(t, a.dsn), openAt(t, a.dsn)}
	const (
		tps   = 20.0
		burst = 2
		each  = 15
	)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var ready []time.Time
	var wg sync.WaitGroup
	for _, db := range dbs {
		wg.Go(func() {
			for range each {
				at, err := db.TakeToken(ctx, "twilio:AC1", tps, burst, t0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ready = append(ready, at)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.SortFunc(ready, time.Time.Compare)
	step := time.Duration(float64(time.Second) / tps)
	for k, at := range ready {
		want := t0.Add(time.Duration(max(0, k-burst+1)) * step)
		if d := at.Sub(want); d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("token %d of %d is ready at +%v, want +%v: the instances do not share the bucket", k, len(ready), at.Sub(t0), want.Sub(t0))
		}
	}
	if len(ready) != len(dbs)*each {
		t.Fatalf("%d tokens, want %d", len(ready), len(dbs)*each)
	}
	// Another account has a bucket of its own.
	if at, err := a.TakeToken(ctx, "smtp:mail@example.com:587", tps, burst, t0); err != nil || !at.Equal(t0) {
		t.Errorf("another account's first token: %v, %v; want now", at, err)
	}

	// Ten seconds on, the debt is paid and the bucket full again: the
	// burst at once, then the next waits a step; a token given back
	// (a sender that gave up its wait) is the next one's.
	t1 := t0.Add(10 * time.Second)
	for range burst {
		if at, err := dbs[1].TakeToken(ctx, "twilio:AC1", tps, burst, t1); err != nil || !at.Equal(t1) {
			t.Fatalf("refilled bucket: token at %v (%v), want now", at, err)
		}
	}
	if at, _ := dbs[2].TakeToken(ctx, "twilio:AC1", tps, burst, t1); !at.Equal(t1.Add(step)) {
		t.Fatalf("past the burst: ready at +%v, want +%v", at.Sub(t1), step)
	}
	if err := dbs[2].ReturnToken(ctx, "twilio:AC1", burst); err != nil {
		t.Fatal(err)
	}
	if at, _ := dbs[0].TakeToken(ctx, "twilio:AC1", tps, burst, t1); !at.Equal(t1.Add(step)) {
		t.Errorf("after a token was given back: ready at +%v, want +%v", at.Sub(t1), step)
	}
}
