package waitlist_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/offers"
)

// pacedProvider is an email provider that takes at most one message per
// tenth of a second of the clock's time and refuses, as throttled, any
// faster: the provider a storm must not overrun.
type pacedProvider struct {
	clock   nextup.Clock
	mu      sync.Mutex
	last    time.Time
	handed  map[string]time.Time // by offer id
	refused int
}

func (p *pacedProvider) Channel() nextup.Channel { return nextup.ChannelEmail }

func (p *pacedProvider) Send(_ context.Context, m nextup.Message) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	if !p.last.IsZero() && now.Sub(p.last) < 100*time.Millisecond-time.Microsecond {
		p.refused++
		return "", nextup.Errorf(nextup.ErrRateLimited, "throttled", "more than 10 a second")
	}
	p.last = now
	if m.Kind == nextup.MessageOffer {
		p.handed[m.OfferID] = now
	}
	return "prov-" + m.ID, nil
}

// A storm on the fake clock: 100 booked haircuts freed by one bulk
// release with 150 waiting, their offers' emails paced at 10 a second
// (the last goes ten seconds after the first). Every offer is committed
// by the job at once; the provider refuses none; and every claim window
// is whole from the moment its message was handed to the provider: an
// offer sent more than a second late has its deadline exactly its send
// time plus the window (moved, audited), one sent within the second
// keeps its own, and the expiry timers follow, so the last offer sent is
// still claimable after the first ones lapsed.
func TestStormKeepsEveryClaimWindowWhole(t *testing.T) {
	t.Parallel()
	b := requeueBundle(t, nil)
	const n, window = 100, 10 * time.Minute
	var cuts []nextup.Slot
	for i := range n {
		start := b.at(1, 9, 0).Add(time.Duration(i) * 5 * time.Minute)
		cuts = append(cuts, b.slot(t, waitlist.SlotParams{StartsAt: start, EndsAt: start.Add(5 * time.Minute)}))
	}
	for i := range n + 50 {
		b.join(t, fmt.Sprintf("Guest%03d", i), waitlist.JoinParams{Earliest: b.at(1, 0, 0), Latest: b.at(3, 0, 0)})
	}
	job, err := b.svc.BulkRelease(b.ctx, b.biz.ID, waitlist.ReleaseFilter{Service: "haircut"}, "cancellation")
	if err != nil {
		t.Fatal(err)
	}
	made := b.clock.Now()
	if _, err := b.sweeper.RunDue(b.ctx); err != nil {
		t.Fatal(err)
	}
	if job = b.jobOf(t, job.ID); job.State != nextup.JobDone || job.Offers != n {
		t.Fatalf("the job: %+v", job.JobProgress)
	}
	prov := &pacedProvider{clock: b.clock, handed: map[string]time.Time{}}
	relay := &outbox.Relay{Store: b.store, Clock: b.clock, Senders: map[nextup.Channel]nextup.Sender{nextup.ChannelEmail: prov},
		Limits: map[nextup.Channel]outbox.Limit{nextup.ChannelEmail: {TPS: 10, Burst: 1}}, Batch: 1000,
		Sleep:  func(ctx context.Context, d time.Duration) error { b.clock.Advance(d); return ctx.Err() },
		OnSent: b.svc.Handed}
	for round := 0; len(prov.handed) < n; round++ {
		sent, failed, err := relay.RunOnce(b.ctx)
		if err != nil || failed != 0 || (sent == 0 && round > 0) || round > 10 {
			t.Fatalf("relay round %d: %d sent, %d failed, %v; %d of %d offers sent", round, sent, failed, err, len(prov.handed), n)
		}
	}
	if prov.refused != 0 {
		t.Errorf("the provider refused %d sends as throttled", prov.refused)
	}
	var all []nextup.Offer
	err = b.store.Read(b.ctx, func(tx nextup.Tx) error {
		for _, sl := range cuts {
			os, err := tx.OfferListBySlot(b.ctx, sl.ID)
			if err != nil {
				return err
			}
			all = append(all, os...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var last nextup.Offer
	moved := 0
	for _, o := range all {
		h, ok := prov.handed[o.ID]
		switch {
		case !ok:
			t.Fatalf("offer %s was never sent", o.ID)
		case !o.CreatedAt.Equal(made):
			t.Fatalf("offer %s made at %v, not with the release at %v", o.ID, o.CreatedAt, made)
		case h.Sub(made) > offers.HandOffSlack:
			moved++
			if !o.SentAt.Equal(h) || !o.ExpiresAt.Equal(h.Add(window)) {
				t.Errorf("offer %s handed at +%v: sent %v, deadline +%v; want the whole window from its hand-off",
					o.ID, h.Sub(made), o.SentAt, o.ExpiresAt.Sub(made))
			}
		default:
			if !o.ExpiresAt.Equal(made.Add(window)) || h.Add(window).Sub(o.ExpiresAt) > offers.HandOffSlack {
				t.Errorf("offer %s handed at +%v keeps deadline +%v", o.ID, h.Sub(made), o.ExpiresAt.Sub(made))
			}
		}
		if last.ID == "" || h.After(prov.handed[last.ID]) {
			last = o
		}
	}
	if moved < n-15 {
		t.Errorf("%d offers had their window restarted, want all but the first second's", moved)
	}
	if lastAt := prov.handed[last.ID].Sub(made); lastAt < 9*time.Second {
		t.Fatalf("the last offer went %v after the release: the sends were not paced", lastAt)
	}
	// Five seconds after the first offers' windows ended: they lapsed
	// (and rolled on); the last one sent holds, and is claimed.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, made.Add(window+5*time.Second).Sub(b.clock.Now())); err != nil {
		t.Fatal(err)
	}
	lapsed, open := 0, 0
	err = b.store.Read(b.ctx, func(tx nextup.Tx) error {
		for _, o := range all {
			got, err := tx.OfferGet(b.ctx, o.ID)
			if err != nil {
				return err
			}
			switch h := prov.handed[o.ID]; {
			case got.State == nextup.OfferExpired && !h.Add(window).After(b.clock.Now().Add(offers.HandOffSlack)):
				lapsed++
			case got.State == nextup.OfferOffered && got.ExpiresAt.After(b.clock.Now()):
				open++
			default:
				t.Errorf("offer handed at +%v is %s at +%v (deadline +%v)", h.Sub(made), got.State, b.clock.Now().Sub(made), got.ExpiresAt.Sub(made))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lapsed == 0 || open == 0 {
		t.Errorf("%d lapsed and %d open five seconds after the first windows ended; want some of each", lapsed, open)
	}
	if _, err := b.svc.Claim(b.ctx, b.token(t, last.ID)); err != nil {
		t.Errorf("the last offer sent, claimed 10 min after the release: %v", err)
	}
}
