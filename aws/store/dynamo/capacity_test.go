package dynamo

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// salon is a business on a DynamoDB store with its service, for the
// measurements below.
type salon struct {
	ctx   context.Context
	st    *Store
	clock *nextup.FakeClock
	svc   *waitlist.Service
	sweep *timer.Sweeper
	biz   nextup.Business
}

func newSalon(tb testing.TB) *salon {
	tb.Helper()
	ctx := context.Background()
	st := open(tb)
	clock := nextup.NewFakeClock(time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
	svc := waitlist.New(st, clock, "https://nextup.test")
	svc.Logger = slog.New(slog.DiscardHandler)
	rules := nextup.DefaultRules()
	rules.QuietHours, rules.MaxOffersPerPersonPerDay = nil, 0
	biz, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Salon", Timezone: "UTC", Rules: &rules})
	if err != nil {
		tb.Fatal(err)
	}
	return &salon{ctx: ctx, st: st, clock: clock, svc: svc, biz: biz,
		sweep: &timer.Sweeper{Store: st, Clock: clock, Handler: svc, Owner: "test", Logger: svc.Logger}}
}

// token is the claim token of an offer, from its message.
func (s *salon) token(tb testing.TB, offerID string) string {
	tb.Helper()
	var msgs []nextup.Message
	if err := s.st.Read(s.ctx, func(tx nextup.Tx) error {
		var err error
		msgs, err = tx.MessageList(s.ctx, nextup.MessageFilter{BusinessID: s.biz.ID, OfferID: offerID})
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	for _, m := range msgs {
		if m.Kind == nextup.MessageOffer {
			return m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]
		}
	}
	tb.Fatalf("no offer message for %s", offerID)
	return ""
}

// TestCapacity measures the read and write capacity units the main use
// cases consume on DynamoDB (what each call reports with
// ReturnConsumedCapacity), for the cost model of the AWS deployment, and
// keeps them from growing unnoticed: each must stay under a ceiling about
// half again above what it is today.
func TestCapacity(t *testing.T) {
	t.Parallel()
	s := newSalon(t)
	c := s.st.Measure()
	ctx := s.ctx
	type figure struct {
		what        string
		calls       int
		read, write float64
		maxR, maxW  float64
	}
	var figures []figure
	measure := func(what string, maxR, maxW float64, fn func()) {
		t.Helper()
		c.Take()
		fn()
		n, r, w := c.TakeCalls()
		figures = append(figures, figure{what, n, r, w, maxR, maxW})
	}
	// Two people wait for a haircut.
	for i := range 2 {
		measure(fmt.Sprintf("join (list of %d)", i), 14, 35, func() {
			if _, err := s.svc.Join(ctx, s.biz.ID, waitlist.JoinParams{Name: fmt.Sprintf("P%d", i), Email: fmt.Sprintf("p%d@example.com", i), Service: "cut"}); err != nil {
				t.Fatal(err)
			}
		})
	}
	booked := func() nextup.Slot {
		sl, _, err := s.svc.CreateSlot(ctx, s.biz.ID, waitlist.SlotParams{Service: "cut", StartsAt: s.clock.Now().Add(26 * time.Hour), EndsAt: s.clock.Now().Add(27 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return sl
	}
	var offerID string
	sl := booked()
	// A release's offer reads the person's place in line (the count
	// tree) for its audit row: the owner's acceptance by place.
	measure("release → offer", 31, 77, func() {
		_, moves, err := s.svc.Release(ctx, s.biz.ID, sl.ID, 0, "cancellation")
		if err != nil || len(moves) != 1 {
			t.Fatalf("release: %v %v", moves, err)
		}
		offerID = moves[0].OfferID
	})
	tok := s.token(t, offerID)
	measure("claim", 21, 99, func() {
		if _, err := s.svc.Claim(ctx, tok); err != nil {
			t.Fatal(err)
		}
	})
	sl = booked()
	if _, moves, err := s.svc.Release(ctx, s.biz.ID, sl.ID, 0, "cancellation"); err != nil || len(moves) != 1 {
		t.Fatalf("release: %v %v", moves, err)
	}
	measure("expiry → hand back (sweeper)", 62, 126, func() {
		if err := timer.Advance(ctx, s.clock, s.sweep, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
	})
	for _, f := range figures {
		t.Logf("%-30s %5.1f read units  %5.1f write units  %3d calls", f.what, f.read, f.write, f.calls)
		if f.read <= 0 || f.write <= 0 || f.read > f.maxR || f.write > f.maxW {
			t.Errorf("%s: %.1f read and %.1f write units; want some, and at most %.0f and %.0f", f.what, f.read, f.write, f.maxR, f.maxW)
		}
	}
}

// BenchmarkClaims is claims per second through Service.Claim on DynamoDB
// (the emulator here) by 8 concurrent clients, each claim a distinct
// offer of its own slot, against the bare conditional UpdateItem a claim
// is built around, measured in the same run:
//
//	go test ./aws/store/dynamo -run '^$' -bench Claims -benchtime 500x
func BenchmarkClaims(b *testing.B) {
	s := newSalon(b)
	ctx := s.ctx
	const clients = 8
	tokens := make([]string, b.N)
	for i := range b.N {
		if _, err := s.svc.Join(ctx, s.biz.ID, waitlist.JoinParams{Name: fmt.Sprintf("P%d", i), Email: fmt.Sprintf("p%d@example.com", i), Service: "cut"}); err != nil {
			b.Fatal(err)
		}
		sl, _, err := s.svc.CreateSlot(ctx, s.biz.ID, waitlist.SlotParams{Service: "cut", StartsAt: s.clock.Now().Add(26*time.Hour + time.Duration(i)*time.Minute), EndsAt: s.clock.Now().Add(27*time.Hour + time.Duration(i)*time.Minute)})
		if err != nil {
			b.Fatal(err)
		}
		_, moves, err := s.svc.Release(ctx, s.biz.ID, sl.ID, 0, "cancellation")
		if err != nil || len(moves) != 1 {
			b.Fatalf("release %d: %v %v", i, moves, err)
		}
		tokens[i] = s.token(b, moves[0].OfferID)
	}
	// The baseline: b.N items, each updated once by a conditional
	// UpdateItem (booked = booked + 1 while booked < capacity).
	for i := range b.N {
		if _, err := s.st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.st.table, Item: map[string]types.AttributeValue{
			attrPK: &types.AttributeValueMemberS{Value: fmt.Sprintf("bare#%d", i)},
			"b":    &types.AttributeValueMemberN{Value: "0"}, "c": &types.AttributeValueMemberN{Value: "1"},
		}}); err != nil {
			b.Fatal(err)
		}
	}
	run := func(op func(i int) error) float64 {
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Value
		start := time.Now() // measurement, not logic
		for range clients {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= b.N {
						return
					}
					if err := op(i); err != nil {
						failed.Store(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		return float64(b.N) / time.Since(start).Seconds()
	}
	b.ResetTimer()
	claims := run(func(i int) error {
		_, err := s.svc.Claim(ctx, tokens[i])
		return err
	})
	b.StopTimer()
	bare := run(func(i int) error {
		_, err := s.st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.st.table, Key: key(fmt.Sprintf("bare#%d", i)),
			UpdateExpression:          aws.String("SET b = b + :one"),
			ConditionExpression:       aws.String("b < c"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
		})
		return err
	})
	b.ReportMetric(claims, "claims/s")
	b.ReportMetric(bare, "bare-updates/s")
	b.ReportMetric(claims/bare, "ratio")
}

// event creates an event of capacity seats three days ahead.
func (s *salon) event(tb testing.TB, title string, capacity int) nextup.Slot {
	tb.Helper()
	p := waitlist.NewEventParams()
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = title, s.clock.Now().Add(72*time.Hour), s.clock.Now().Add(74*time.Hour), capacity
	ev, err := s.svc.CreateEvent(s.ctx, s.biz.ID, p)
	if err != nil {
		tb.Fatal(err)
	}
	return ev
}
