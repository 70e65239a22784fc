package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/nextup-dev/nextup"
)

// faultAPI is the SDK client with the service's errors injected into the
// calls that write: the first len(errs) writes fail with errs, in order.
type faultAPI struct {
	API
	mu     sync.Mutex
	errs   []error
	writes int
	tokens []string
}

func (f *faultAPI) inject() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if len(f.errs) == 0 {
		return nil
	}
	err := f.errs[0]
	f.errs = f.errs[1:]
	return err
}

func (f *faultAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	f.mu.Lock()
	f.tokens = append(f.tokens, aws.ToString(in.ClientRequestToken))
	f.mu.Unlock()
	if err := f.inject(); err != nil {
		return nil, err
	}
	return f.API.TransactWriteItems(ctx, in, opts...)
}

func (f *faultAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := f.inject(); err != nil {
		return nil, err
	}
	return f.API.PutItem(ctx, in, opts...)
}

var t0 = time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC)

func business(id string) nextup.Business {
	return nextup.Business{ID: id, Name: "Salon " + id, Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: t0}
}

// canceled is the service's answer to a transaction one of whose
// conditions failed, or that met another transaction.
func canceled(code string) error {
	return &types.TransactionCanceledException{
		Message:             aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [" + code + "]"),
		CancellationReasons: []types.CancellationReason{{Code: aws.String("None")}, {Code: aws.String(code)}},
	}
}

func TestCommitConflictsRunTheFunctionAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"ConditionalCheckFailed", canceled("ConditionalCheckFailed")},
		{"TransactionConflict", canceled("TransactionConflict")},
		{"ProvisionedThroughputExceeded", &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}},
		{"ThrottlingException", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate of requests exceeds the allowed throughput."}},
		{"RequestLimitExceeded", &types.RequestLimitExceeded{Message: aws.String("account limit")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			ctx := context.Background()
			setup(t, s, business("biz_1"))
			err := s.InTx(ctx, func(tx nextup.Tx) error {
				return tx.SlotCreate(ctx, nextup.Slot{ID: "slot_1", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 2, CreatedAt: t0})
			})
			if err != nil {
				t.Fatal(err)
			}
			f := &faultAPI{API: s.api, errs: []error{tc.err, tc.err}}
			s.api = f
			runs := 0
			err = s.InTx(ctx, func(tx nextup.Tx) error {
				runs++
				if _, err := tx.SlotSeats(ctx, "slot_1", nextup.SeatDelta{Held: 1}); err != nil {
					return err
				}
				_, err := tx.SlotSeats(ctx, "slot_1", nextup.SeatDelta{Booked: 1, Held: -1})
				return err
			})
			if err != nil {
				t.Fatalf("InTx after two %s: %v", tc.name, err)
			}
			if runs != 3 {
				t.Errorf("the function ran %d times, want 3 (two lost commits, one that held)", runs)
			}
			got := getSlot(t, s, "slot_1")
			if got.BookedSeats != 1 || got.HeldSeats != 0 {
				t.Errorf("after the third run: booked %d held %d, want 1 and 0 (applied once)", got.BookedSeats, got.HeldSeats)
			}
		})
	}
}

func TestCommitErrorsThatAreNotConflictsAreReturned(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	setup(t, s, business("biz_1"))
	bad := &smithy.GenericAPIError{Code: "ValidationException", Message: "One or more parameter values were invalid"}
	f := &faultAPI{API: s.api, errs: []error{bad}}
	s.api = f
	runs := 0
	err := s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		return tx.SlotCreate(ctx, nextup.Slot{ID: "slot_1", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 2, CreatedAt: t0})
	})
	if err == nil || !strings.Contains(err.Error(), "ValidationException") || runs != 1 {
		t.Fatalf("InTx = %v after %d runs; want the ValidationException after one run", err, runs)
	}
	// A transaction cancelled for a reason other than a conflict (an
	// item too large, say) is not run again either.
	f.errs = []error{&types.TransactionCanceledException{Message: aws.String("cancelled"),
		CancellationReasons: []types.CancellationReason{{Code: aws.String("ValidationError")}, {Code: aws.String("None")}}}}
	runs = 0
	err = s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		if err := tx.SlotCreate(ctx, nextup.Slot{ID: "slot_2", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 2, CreatedAt: t0}); err != nil {
			return err
		}
		return tx.SlotCreate(ctx, nextup.Slot{ID: "slot_3", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 2, CreatedAt: t0})
	})
	if err == nil || runs != 1 {
		t.Fatalf("InTx = %v after %d runs; want the cancellation after one run", err, runs)
	}
	for _, id := range []string{"slot_1", "slot_2", "slot_3"} {
		if err := s.Read(ctx, func(tx nextup.Tx) error { _, err := tx.SlotGet(ctx, id); return err }); !errors.Is(err, nextup.ErrNotFound) {
			t.Errorf("slot %s after a failed commit: %v, want ErrNotFound", id, err)
		}
	}
	// A commit of several items carries a token (a single item is one
	// conditional PutItem), so that the SDK's retry of the call is applied
	// once.
	if len(f.tokens) != 1 || len(f.tokens[0]) != 32 {
		t.Errorf("ClientRequestTokens %q: want one of 32 hex digits", f.tokens)
	}
}

func TestCommitGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	setup(t, s, business("biz_1"))
	f := &faultAPI{API: s.api}
	for range MaxTxAttempts {
		f.errs = append(f.errs, &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")})
	}
	s.api = f
	runs := 0
	err := s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		return tx.SlotCreate(ctx, nextup.Slot{ID: "slot_1", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 2, CreatedAt: t0})
	})
	if err == nil || runs != MaxTxAttempts || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("InTx = %v after %d runs; want it to give up after %d", err, runs, MaxTxAttempts)
	}
}

// The service's limits are the store's own: the emulator may not keep
// them, so they are checked before the call.
func TestLimits(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	setup(t, s, business("biz_1"))
	f := &faultAPI{API: s.api}
	s.api = f

	// 100 actions: 100 new slots (the business they name is read, not
	// checked at commit: businesses are never deleted).
	create := func(n int, prefix string) error {
		return s.InTx(ctx, func(tx nextup.Tx) error {
			for i := range n {
				err := tx.SlotCreate(ctx, nextup.Slot{ID: fmt.Sprintf("%s_%03d", prefix, i), BusinessID: "biz_1", Service: "cut",
					StartsAt: t0.Add(time.Hour), Capacity: 1, CreatedAt: t0})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := create(100, "ok"); err != nil {
		t.Fatalf("a transaction of 100 actions: %v", err)
	}
	writes := f.writes
	err := create(101, "over")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "101 actions") {
		t.Fatalf("a transaction of 101 actions: %v, want ErrTooLarge naming 101 actions", err)
	}
	if f.writes != writes {
		t.Errorf("a transaction over the limit reached the service")
	}
	if err := s.Read(ctx, func(tx nextup.Tx) error { _, err := tx.SlotGet(ctx, "over_000"); return err }); !errors.Is(err, nextup.ErrNotFound) {
		t.Errorf("a slot of the refused transaction: %v, want ErrNotFound", err)
	}

	// 400 KB per item: a business whose name alone is 401 KB.
	big := business("biz_big")
	big.Name = strings.Repeat("x", 401<<10)
	err = s.InTx(ctx, func(tx nextup.Tx) error { return tx.BusinessCreate(ctx, big) })
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "biz#biz_big") {
		t.Fatalf("a 401 KB item: %v, want ErrTooLarge naming the item", err)
	}
	// Just under it is stored.
	big.Name = strings.Repeat("x", 390<<10)
	if err := s.InTx(ctx, func(tx nextup.Tx) error { return tx.BusinessCreate(ctx, big) }); err != nil {
		t.Fatalf("a 390 KB item: %v", err)
	}

	// 4 MB per transaction: twelve items of 350 KB.
	err = s.InTx(ctx, func(tx nextup.Tx) error {
		for i := range 12 {
			b := business(fmt.Sprintf("biz_%02d", i))
			b.Name = strings.Repeat("y", 350<<10)
			if err := tx.BusinessCreate(ctx, b); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("a 4.2 MB transaction: %v, want ErrTooLarge", err)
	}
}

func setup(t *testing.T, s *Store, b nextup.Business) {
	t.Helper()
	ctx := context.Background()
	if err := s.InTx(ctx, func(tx nextup.Tx) error { return tx.BusinessCreate(ctx, b) }); err != nil {
		t.Fatal(err)
	}
}

func getSlot(t *testing.T, s *Store, id string) nextup.Slot {
	t.Helper()
	ctx := context.Background()
	var out nextup.Slot
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.SlotGet(ctx, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// An optimistic transaction reads items at different moments, so its
// function can fail on a state that never was at once. When an item it
// read has changed by the time it fails, the failure is not reported: the
// function runs again on fresh reads (and inside a savepoint, the
// transaction is reported broken, so that a request runs again).
func TestFailureOnAStaleReadRunsAgain(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	setup(t, s, business("biz_1"))
	mk := func(id string) error {
		return s.InTx(ctx, func(tx nextup.Tx) error {
			return tx.SlotCreate(ctx, nextup.Slot{ID: id, BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 1, CreatedAt: t0})
		})
	}
	if err := mk("slot_1"); err != nil {
		t.Fatal(err)
	}
	book := func() error {
		return s.InTx(ctx, func(tx nextup.Tx) error {
			_, err := tx.SlotSeats(ctx, "slot_1", nextup.SeatDelta{Booked: 1})
			return err
		})
	}
	runs := 0
	err := s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		if _, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: "biz_1"}); err != nil {
			return err
		}
		if runs == 1 {
			// Another transaction books the seat after this one read
			// the slot, and this one then fails on what it read.
			if err := book(); err != nil {
				return err
			}
			return fmt.Errorf("%w: decided on a free seat that is gone", nextup.ErrConflict)
		}
		return nil
	})
	if err != nil || runs != 2 {
		t.Fatalf("InTx = %v after %d runs; want nil after 2 (the failure came from a stale read)", err, runs)
	}

	// A failure on reads nobody changed is the function's answer.
	runs = 0
	err = s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		if _, err := tx.SlotGet(ctx, "slot_1"); err != nil {
			return err
		}
		return fmt.Errorf("%w: full", nextup.ErrConflict)
	})
	if !errors.Is(err, nextup.ErrConflict) || errors.Is(err, nextup.ErrTxBroken) || runs != 1 {
		t.Fatalf("InTx = %v after %d runs; want the function's conflict after 1", err, runs)
	}

	// Inside a savepoint: the transaction is broken.
	if err := mk("slot_2"); err != nil {
		t.Fatal(err)
	}
	runs = 0
	err = s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		err := tx.Savepoint(ctx, func() error {
			if _, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: "biz_1"}); err != nil {
				return err
			}
			if runs == 1 {
				if err := s.InTx(ctx, func(tx2 nextup.Tx) error {
					_, err := tx2.SlotResize(ctx, "slot_2", 3)
					return err
				}); err != nil {
					return err
				}
			}
			return fmt.Errorf("%w: refused", nextup.ErrConflict)
		})
		if runs == 1 && !errors.Is(err, nextup.ErrTxBroken) {
			t.Errorf("a savepoint failing on a stale read: %v, want ErrTxBroken", err)
		}
		if runs == 1 {
			return err // as a request's phase ends with its poison
		}
		return nil
	})
	if err != nil || runs != 2 {
		t.Fatalf("InTx = %v after %d runs; want nil after 2", err, runs)
	}
}

// Actions says what a commit would take now: the writes and the locked
// reads not written (nextup.Sized), which the use cases plan their splits
// with.
func TestActions(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	setup(t, s, business("biz_1"))
	err := s.InTx(ctx, func(tx nextup.Tx) error {
		d := tx.(*Tx)
		if n := d.Actions(); n != 0 {
			t.Errorf("a fresh transaction: %d actions", n)
		}
		if _, err := tx.BusinessGet(ctx, "biz_1"); err != nil { // a read, not checked
			return err
		}
		for i := range 3 {
			if err := tx.SlotCreate(ctx, nextup.Slot{ID: fmt.Sprint("slot_", i), BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 1, CreatedAt: t0}); err != nil {
				return err
			}
		}
		if _, err := tx.SlotGet(ctx, "slot_0"); err != nil { // locked, but written: one action
			return err
		}
		if n := d.Actions(); n != 3 {
			t.Errorf("three slots written: %d actions, want 3", n)
		}
		err := tx.Savepoint(ctx, func() error {
			if err := tx.SlotCreate(ctx, nextup.Slot{ID: "slot_x", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 1, CreatedAt: t0}); err != nil {
				return err
			}
			return errors.New("undone")
		})
		if err == nil {
			t.Error("the savepoint did not fail")
		}
		if n := d.Actions(); n != 3 {
			t.Errorf("after a savepoint undone: %d actions, want 3", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.InTx(ctx, func(tx nextup.Tx) error {
		if _, err := tx.SlotGet(ctx, "slot_1"); err != nil { // locked, not written: a check
			return err
		}
		if n := tx.(*Tx).Actions(); n != 1 {
			t.Errorf("one locked read: %d actions, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lostAnswerAPI applies a write and then loses its answer, as a timeout
// after the service applied it would: the SDK's retry of the same call
// gets the service's answer to a call already applied.
type lostAnswerAPI struct {
	API
	puts, transacts int
	inProgress      int // TransactWriteItems answered "in progress" this many times after applying
}

func (l *lostAnswerAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	l.puts++
	if l.puts == 1 {
		if _, err := l.API.PutItem(ctx, in, opts...); err != nil {
			return nil, err
		}
		// The retry: it meets its own write.
	}
	return l.API.PutItem(ctx, in, opts...)
}

func (l *lostAnswerAPI) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	l.transacts++
	if l.transacts == 1 {
		if _, err := l.API.TransactWriteItems(ctx, in, opts...); err != nil {
			return nil, err
		}
	}
	if l.inProgress > 0 {
		l.inProgress--
		return nil, &types.TransactionInProgressException{Message: aws.String("the transaction with this token is in progress")}
	}
	return l.API.TransactWriteItems(ctx, in, opts...)
}

// A commit whose answer was lost, and whose retry meets its own write, is
// a commit, not a conflict: the function is not run again (a join would
// make a second entry).
func TestLostAnswerIsNotRunTwice(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	setup(t, s, business("biz_1"))
	if err := s.InTx(ctx, func(tx nextup.Tx) error {
		return tx.SlotCreate(ctx, nextup.Slot{ID: "slot_1", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 5, CreatedAt: t0})
	}); err != nil {
		t.Fatal(err)
	}
	l := &lostAnswerAPI{API: s.api, inProgress: 2}
	s.api = l
	// One item: a conditional PutItem.
	runs := 0
	err := s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		_, err := tx.SlotSeats(ctx, "slot_1", nextup.SeatDelta{Booked: 1})
		return err
	})
	if err != nil || runs != 1 || getSlot(t, s, "slot_1").BookedSeats != 1 {
		t.Fatalf("a put whose answer was lost: %v after %d runs, booked %d; want nil after 1, booked 1", err, runs, getSlot(t, s, "slot_1").BookedSeats)
	}
	// Several items: TransactWriteItems, its retry told "in progress"
	// twice, then answered by its token.
	runs = 0
	err = s.InTx(ctx, func(tx nextup.Tx) error {
		runs++
		if _, err := tx.SlotSeats(ctx, "slot_1", nextup.SeatDelta{Booked: 1}); err != nil {
			return err
		}
		return tx.SlotCreate(ctx, nextup.Slot{ID: "slot_2", BusinessID: "biz_1", Service: "cut", StartsAt: t0.Add(time.Hour), Capacity: 1, CreatedAt: t0})
	})
	if err != nil || runs != 1 || getSlot(t, s, "slot_1").BookedSeats != 2 {
		t.Fatalf("a transaction in progress: %v after %d runs, booked %d; want nil after 1, booked 2", err, runs, getSlot(t, s, "slot_1").BookedSeats)
	}
	if l.transacts != 3 {
		t.Errorf("%d TransactWriteItems calls, want 3 (applied and told in progress, in progress again, then its answer by its token)", l.transacts)
	}
}

// An index partition value longer than the service takes (a webhook URL
// of 3,000 characters as an address) is stored as its hash, the same in
// every item and query: the message is kept and listed by its address.
func TestLongPartitionValue(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	setup(t, s, business("biz_1"))
	to := "https://hooks.example.com/" + strings.Repeat("x", 3000)
	m := nextup.Message{ID: "msg_long", BusinessID: "biz_1", Kind: "offer", Channel: nextup.ChannelWebhook, To: to,
		State: nextup.MessageQueued, NotBefore: t0, NextAttemptAt: t0, CreatedAt: t0}
	if err := s.InTx(ctx, func(tx nextup.Tx) error { return tx.MessageCreate(ctx, m) }); err != nil {
		t.Fatalf("a message to a 3 KB address: %v", err)
	}
	var got []nextup.Message
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		got, err = tx.MessageList(ctx, nextup.MessageFilter{BusinessID: "biz_1", To: to})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].To != to {
		t.Fatalf("listed by its address: %d messages", len(got))
	}
	// The item as stored keeps the service's key limits (the emulator
	// does not check them): 2048 bytes a partition value, 1024 a sort
	// value.
	raw, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key("msg#msg_long")})
	if err != nil || raw.Item == nil {
		t.Fatalf("the raw item: %v", err)
	}
	for name, v := range raw.Item {
		sv, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			continue
		}
		if (strings.HasSuffix(name, "pk") && len(sv.Value) > 2048) || (strings.HasSuffix(name, "sk") && len(sv.Value) > 1024) {
			t.Errorf("index attribute %s is %d bytes, over the service's limit", name, len(sv.Value))
		}
	}
}
