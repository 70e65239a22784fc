package waitlist_test

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// The benchmarks run on a real SQLite file, synchronous=FULL, like
// production. BenchmarkBaselineTx is the yardstick measured in the same run:
// one empty write transaction (one fsync). Report the others as ratios to
// it — absolute numbers depend on the disk.

// bulkEntries inserts n waiting entries for service in one transaction,
// bypassing Join (which would also run reverse matching) so that a
// million-entry list can be built in seconds. One in fitEvery fits a
// 14:00 slot with staff Ana; the rest want another staff member.
func bulkEntries(tb testing.TB, bd *bundle, service string, n, fitEvery int) {
	tb.Helper()
	base := bd.clock.Now().Add(-time.Hour)
	const batch = 50000
	for start := 0; start < n; start += batch {
		err := bd.store.InTx(bd.ctx, func(tx nextup.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				e := nextup.Entry{
					ID: fmt.Sprintf("ent_bulk%07d", i), BusinessID: bd.biz.ID, Name: "Bulk",
					Email: fmt.Sprintf("p%07d@example.com", i), Service: service, PartySize: 1,
					Staff: "Cy", JoinedAt: base.Add(time.Duration(i) * time.Millisecond), State: nextup.EntryWaiting,
					Source: "bench", UpdatedAt: base,
				}
				if i%fitEvery == fitEvery-1 {
					e.Staff = ""
				}
				if _, err := tx.EntryCreate(bd.ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

var (
	millionOnce sync.Once
	million     *bundle
	millionDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if million != nil {
		million.store.Close()
		os.RemoveAll(millionDir)
	}
	os.Exit(code)
}

// millionBundle is one store with 1,000,000 waiting entries, shared by the
// benchmarks that need a long list (building it takes a while).
func millionBundle(b *testing.B) *bundle {
	millionOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nextup-bench-")
		if err != nil {
			b.Fatal(err)
		}
		millionDir = dir
		bd := newBundle(b, dir, func(r *nextup.Rules) { r.QuietHours = nil; r.MaxOffersPerPersonPerDay = 0 })
		bulkEntries(b, bd, "haircut", 1_000_000, 40) // the first fitting entry is 40th in line
		million = bd
	})
	return million
}

func BenchmarkBaselineTx(b *testing.B) {
	bd := setupTB(b, nil)
	for b.Loop() {
		if err := bd.store.InTx(bd.ctx, func(tx nextup.Tx) error {
			return tx.AuditAppend(bd.ctx, nextup.AuditEvent{BusinessID: bd.biz.ID, At: bd.clock.Now(),
				Actor: nextup.ActorSystem, SubjectType: nextup.SubjectBusiness, SubjectID: bd.biz.ID, To: "baseline"})
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecide1M is the engine deciding a freed slot against a list of
// a million waiting entries, read through the fair-order index: the first
// entry that fits is 40th in line, so two pages are read.
func BenchmarkDecide1M(b *testing.B) {
	bd := millionBundle(b)
	slot := bd.slot(b, waitlist.SlotParams{Staff: "Ana", StartsAt: bd.at(0, 16, 0)})
	// Free the seat without running the engine: the preview is what is measured.
	if err := bd.store.InTx(bd.ctx, func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(bd.ctx, slot.ID, nextup.SeatDelta{Booked: -1})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d, err := bd.svc.Preview(bd.ctx, bd.biz.ID, slot.ID)
		if err != nil {
			b.Fatal(err)
		}
		if d.Move != nextup.MoveOffer || len(d.Offers) != 1 {
			b.Fatalf("decision %+v", d)
		}
	}
}

// BenchmarkReleaseToOffer1M is a cancellation through to the offer
// committed (seats held, offer, audit rows, outbox message, timer) with a
// million waiting entries. The slots are Cy's, whom every entry accepts, so
// each iteration offers to the next in line and the cost measured is the
// write path, not a scan past the offers the earlier iterations made.
func BenchmarkReleaseToOffer1M(b *testing.B) {
	bd := millionBundle(b)
	day := 1
	for b.Loop() {
		b.StopTimer()
		sl := bd.slot(b, waitlist.SlotParams{Staff: "Cy", StartsAt: bd.at(1+day%20, 9+day%10, 0)})
		day++
		b.StartTimer()
		_, moves, err := bd.svc.Release(bd.ctx, bd.biz.ID, sl.ID, 0, waitlist.ReasonCancellation)
		if err != nil {
			b.Fatal(err)
		}
		if len(moves) != 1 || moves[0].Move != nextup.MoveOffer {
			b.Fatalf("moves %+v", moves)
		}
	}
}

// BenchmarkClaim is the claim: the conditional write and everything in its
// transaction.
func BenchmarkClaim(b *testing.B) {
	bd := setupTB(b, func(r *nextup.Rules) { r.QuietHours = nil; r.MaxOffersPerPersonPerDay = 0 })
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		sl := bd.slot(b, waitlist.SlotParams{Service: "haircut", StartsAt: bd.at(1+i%30, 12, 0)})
		res, err := bd.svc.Join(bd.ctx, bd.biz.ID, waitlist.JoinParams{Name: "C", Email: fmt.Sprintf("c%d@example.com", i), Service: "haircut"})
		if err != nil {
			b.Fatal(err)
		}
		_, moves, err := bd.svc.Release(bd.ctx, bd.biz.ID, sl.ID, 0, "")
		if err != nil || len(moves) != 1 || moves[0].EntryID != res.Entry.ID {
			b.Fatalf("release: %+v %v", moves, err)
		}
		tok := bd.token(b, moves[0].OfferID)
		b.StartTimer()
		if _, err := bd.svc.Claim(bd.ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJoin is a join with reverse matching against a few open slots
// the joiner does not fit.
func BenchmarkJoin(b *testing.B) {
	bd := setupTB(b, nil)
	zero := 0
	for h := 11; h < 17; h++ {
		if _, _, err := bd.svc.CreateSlot(bd.ctx, bd.biz.ID, waitlist.SlotParams{Service: "haircut", Staff: "Ana",
			StartsAt: bd.at(0, h, 0), EndsAt: bd.at(0, h, 30), BookedSeats: &zero}); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		i++
		if _, err := bd.svc.Join(bd.ctx, bd.biz.ID, waitlist.JoinParams{Name: "J", Email: fmt.Sprintf("j%d@example.com", i),
			Service: "haircut", Staff: "Cy"}); err != nil {
			b.Fatal(err)
		}
	}
}
