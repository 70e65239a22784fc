package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nextup-dev/nextup"
)

// history is a small business's history as a copy brings it: every kind
// ImportRecords takes but offers, bookings, payments and hand-backs (the
// copy of the demo tour covers those: cmd/nextup-aws).
// n keeps audit and timer ids apart from other histories' (they are
// unique in the table).
func history(bid, email string, n int64) []any {
	at := t0.Add(-48 * time.Hour)
	done := at.Add(time.Hour)
	b := business(bid)
	b.APIKeyHash = nextup.HashToken("key-" + bid)
	b.Profile.Slug = "salon-" + bid
	recs := []any{b,
		nextup.Slot{ID: bid + "_slot", BusinessID: bid, Kind: nextup.KindSlot, Service: "cut", StartsAt: t0.Add(24 * time.Hour),
			EndsAt: t0.Add(25 * time.Hour), Capacity: 2, Seating: nextup.SeatingUnit, BookedSeats: 1, CreatedAt: at},
	}
	for i, st := range []nextup.EntryState{nextup.EntryWaiting, nextup.EntryBooked, nextup.EntryWaiting} {
		recs = append(recs, nextup.Entry{Seq: int64(40 + i), ID: fmt.Sprintf("%s_ent%d", bid, i), BusinessID: bid,
			Name: fmt.Sprint("Person ", i), Email: fmt.Sprintf("p%d@example.com", i), Channel: nextup.ChannelEmail,
			Service: "cut", PartySize: 1, Latest: t0.Add(time.Duration(i+1) * 24 * time.Hour), Source: "api",
			JoinedAt: at.Add(time.Duration(i) * time.Minute), State: st, StatusHash: nextup.HashToken(fmt.Sprint(bid, i)), UpdatedAt: at})
	}
	recs = append(recs,
		nextup.Guest{BusinessID: bid, SlotID: bid + "_slot", EntryID: bid + "_ent1", Index: 1, Name: "Bea"},
		nextup.Guest{BusinessID: bid, SlotID: bid + "_slot", EntryID: bid + "_ent1", Index: 2, CheckedInAt: &done},
		nextup.AuditEvent{ID: 10*n + 5, BusinessID: bid, At: at, Actor: "system", SubjectType: "entry", SubjectID: bid + "_ent1",
			SlotID: bid + "_slot", From: "waiting", To: "booked", Reason: "claim", Detail: map[string]any{"n": 1.0}},
		nextup.AuditEvent{ID: 10*n + 9, BusinessID: bid, At: at, Actor: "system", SubjectType: "slot", SubjectID: bid + "_slot"},
		nextup.Message{ID: bid + "_msg1", BusinessID: bid, Kind: "offer", Channel: nextup.ChannelEmail, To: "p0@example.com",
			Subject: "A slot", Body: "…", State: nextup.MessageSent, Attempts: 1, NotBefore: at, NextAttemptAt: at, CreatedAt: at, SentAt: &done},
		nextup.Message{ID: bid + "_msg2", BusinessID: bid, Kind: "offer", Channel: nextup.ChannelEmail, To: "p2@example.com",
			Subject: "A slot", Body: "…", State: nextup.MessageQueued, NotBefore: t0.Add(time.Hour), NextAttemptAt: t0.Add(time.Hour), CreatedAt: at},
		nextup.Timer{ID: 100*n + 77, BusinessID: bid, Kind: "entry_expire", SubjectID: bid + "_ent0", Key: "expire:" + bid, DueAt: t0.Add(time.Hour), CreatedAt: at},
		nextup.Timer{ID: 100*n + 78, BusinessID: bid, Kind: "entry_expire", SubjectID: bid + "_ent1", Key: "done:" + bid, DueAt: at, Attempts: 1, DoneAt: &done, CreatedAt: at},
		nextup.Suppression{BusinessID: bid, Channel: nextup.ChannelEmail, Address: "no@example.com", Reason: "unsubscribed", At: at},
		nextup.Staff{ID: bid + "_stf", BusinessID: bid, Email: email, Name: "Ana", PasswordHash: "h", CreatedAt: at},
		nextup.Session{IDHash: nextup.HashToken("ses-" + bid), StaffID: bid + "_stf", BusinessID: bid, CreatedAt: at, ExpiresAt: t0.Add(time.Hour)},
		nextup.PasswordReset{TokenHash: nextup.HashToken("rst-" + bid), StaffID: bid + "_stf", CreatedAt: at, ExpiresAt: t0.Add(time.Hour)},
		nextup.Proposal{ID: bid + "_prp", BusinessID: bid, Source: nextup.ProposalFromEmail, SourceRef: "<m@x>", ReceivedAt: at,
			Excerpt: "a cut?", Fields: nextup.ProposalFields{Name: "Ann", Service: "cut"}, Confidence: map[string]float64{"name": 0.8},
			Problems: []string{}, State: nextup.ProposalOpen, ActionHash: nextup.HashToken("act-" + bid), ActionExpiresAt: t0.Add(time.Hour), CreatedAt: at},
		nextup.SheetVersion{ID: bid + "_shv", BusinessID: bid, Source: "sheet", FetchedAt: at, Hash: "abc", Rows: 3, Imported: 3},
		nextup.Summary{BusinessID: bid, Month: "2031-02", Figures: []byte(`{"freed":4}`), Narrative: "Four freed.",
			NarrativeBy: "template", CreatedAt: at, SentAt: &done, MessageID: bid + "_msg1"},
	)
	return recs
}

// importAll imports recs, failing with fail after the n-th when n > 0.
func importAll(ctx context.Context, s *Store, recs []any, n int, fail error) error {
	return s.ImportRecords(ctx, func(put func(any) error) error {
		for i, r := range recs {
			if n > 0 && i == n {
				return fail
			}
			if err := put(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// countItems counts the table's items.
func countItems(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	var start map[string]types.AttributeValue
	for {
		out, err := s.api.Scan(context.Background(), &dynamodb.ScanInput{TableName: &s.table, Select: types.SelectCount,
			ConsistentRead: aws.Bool(true), ExclusiveStartKey: start})
		if err != nil {
			t.Fatal(err)
		}
		n += int(out.Count)
		if start = out.LastEvaluatedKey; start == nil {
			return n
		}
	}
}

// same fails t unless got and want encode alike.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// TestImportRecords imports a business's history and reads it back
// through the store's methods, lookups by marker and index included; the
// business then carries on: a new entry's Seq and a new timer's id come
// after the copied ones, and scheduling a copied timer's key moves it.
func TestImportRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	recs := history("biz_a", "ana@example.com", 0)
	if err := importAll(ctx, s, recs, 0, nil); err != nil {
		t.Fatal(err)
	}
	b := recs[0].(nextup.Business)
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		for _, find := range []func() (nextup.Business, error){
			func() (nextup.Business, error) { return tx.BusinessGet(ctx, b.ID) },
			func() (nextup.Business, error) { return tx.BusinessBySlug(ctx, b.Profile.Slug) },
			func() (nextup.Business, error) { return tx.BusinessByAPIKey(ctx, b.APIKeyHash) },
		} {
			got, err := find()
			if err != nil {
				return err
			}
			same(t, "business", got, b)
		}
		var entries []nextup.Entry
		var slots []nextup.Slot
		var audit []nextup.AuditEvent
		var timers []nextup.Timer
		var guests []nextup.Guest
		for _, r := range recs {
			switch r := r.(type) {
			case nextup.Entry:
				entries = append(entries, r)
				got, err := tx.EntryByStatusHash(ctx, r.StatusHash)
				if err != nil {
					return err
				}
				same(t, "entry by status hash", got, r)
			case nextup.Slot:
				slots = append(slots, r)
			case nextup.AuditEvent:
				audit = append(audit, r)
			case nextup.Timer:
				timers = append(timers, r)
			case nextup.Guest:
				guests = append(guests, r)
			case nextup.Message:
				got, err := tx.MessageGet(ctx, r.ID)
				if err != nil {
					return err
				}
				same(t, "message", got, r)
			case nextup.Suppression:
				got, err := tx.SuppressionList(ctx, r.BusinessID, []string{r.Address})
				if err != nil {
					return err
				}
				same(t, "suppressions", got, []nextup.Suppression{r})
			case nextup.Staff:
				got, err := tx.StaffByEmail(ctx, r.Email)
				if err != nil {
					return err
				}
				same(t, "staff by email", got, r)
			case nextup.Session:
				got, err := tx.SessionGet(ctx, r.IDHash)
				if err != nil {
					return err
				}
				same(t, "session", got, r)
			case nextup.Proposal:
				got, err := tx.ProposalByActionHash(ctx, r.ActionHash)
				if err != nil {
					return err
				}
				same(t, "proposal by link", got, r)
			case nextup.SheetVersion:
				got, err := tx.SheetVersionList(ctx, r.BusinessID, 0)
				if err != nil {
					return err
				}
				same(t, "sheet versions", got, []nextup.SheetVersion{r})
			case nextup.Summary:
				got, err := tx.SummaryGet(ctx, r.BusinessID, r.Month)
				if err != nil {
					return err
				}
				same(t, "summary", got, r)
				list, err := tx.SummaryList(ctx, r.BusinessID, 0)
				if err != nil {
					return err
				}
				same(t, "summaries", list, []nextup.Summary{r})
			}
		}
		got, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: b.ID})
		if err != nil {
			return err
		}
		same(t, "slots", got, slots)
		waiting, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: b.ID, State: nextup.EntryWaiting})
		if err != nil {
			return err
		}
		same(t, "waiting entries in fair order", waiting, []nextup.Entry{entries[0], entries[2]})
		// Their places come from the rank tree the import built.
		for i, e := range waiting {
			if pos, err := tx.EntryPosition(ctx, e); err != nil || pos != i+1 {
				t.Errorf("imported %s is at place %d (%v), want %d", e.ID, pos, err, i+1)
			}
		}
		gotAudit, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: b.ID})
		if err != nil {
			return err
		}
		same(t, "audit", gotAudit, audit)
		gotTimers, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: b.ID})
		if err != nil {
			return err
		}
		same(t, "timers", gotTimers, []nextup.Timer{timers[1], timers[0]}) // by due time
		gotGuests, err := tx.GuestListBySlot(ctx, b.ID+"_slot")
		if err != nil {
			return err
		}
		same(t, "guests of the slot", gotGuests, guests)
		if gotGuests, err = tx.GuestListByEntry(ctx, b.ID+"_ent1"); err != nil {
			return err
		}
		same(t, "guests of the entry", gotGuests, guests)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// The business carries on.
	var e nextup.Entry
	var reset nextup.PasswordReset
	if err := s.InTx(ctx, func(tx nextup.Tx) error {
		var err error
		if e, err = tx.EntryCreate(ctx, nextup.Entry{ID: "biz_a_new", BusinessID: b.ID, Name: "New", Email: "new@example.com",
			Channel: nextup.ChannelEmail, Service: "cut", PartySize: 1, JoinedAt: t0, UpdatedAt: t0}); err != nil {
			return err
		}
		if err := tx.TimerSchedule(ctx, nextup.Timer{BusinessID: b.ID, Kind: "entry_expire", SubjectID: "biz_a_ent0",
			Key: "expire:biz_a", DueAt: t0.Add(2 * time.Hour), CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.TimerSchedule(ctx, nextup.Timer{BusinessID: b.ID, Kind: "entry_expire", SubjectID: "biz_a_new",
			Key: "expire:biz_a_new", DueAt: t0.Add(3 * time.Hour), CreatedAt: t0}); err != nil {
			return err
		}
		reset, err = tx.PasswordResetUse(ctx, nextup.HashToken("rst-biz_a"), t0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if e.Seq <= 42 {
		t.Errorf("a new entry's Seq is %d, want after the copied 40…42", e.Seq)
	}
	if reset.StaffID != "biz_a_stf" {
		t.Errorf("the copied password reset: %+v", reset)
	}
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		tms, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: b.ID, PendingOnly: true})
		if err != nil {
			return err
		}
		if len(tms) != 2 || tms[0].ID != 77 || !tms[0].DueAt.Equal(t0.Add(2*time.Hour)) || tms[1].ID <= 78 {
			t.Errorf("pending timers after scheduling the copied key and a new one: %+v; want timer 77 moved and a new one after 78", tms)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Copying it again is refused and writes nothing.
	n := countItems(t, s)
	if err := importAll(ctx, s, recs, 0, nil); !errors.Is(err, nextup.ErrConflict) || !strings.Contains(err.Error(), "business biz_a exists") {
		t.Errorf("a second import: %v, want ErrConflict: the business exists", err)
	}
	if got := countItems(t, s); got != n {
		t.Errorf("a refused import changed the table: %d items, had %d", got, n)
	}
}

// TestImportRecordsUndo: an import that fails — on an item another
// business has (a staff email), or because the source failed after more
// than one transaction's worth was written — leaves nothing behind.
func TestImportRecordsUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	if err := importAll(ctx, s, history("biz_a", "ana@example.com", 0), 0, nil); err != nil {
		t.Fatal(err)
	}
	n := countItems(t, s)

	// biz_b's staff has biz_a's email: refused when its marker is
	// written, after more than a transaction's worth of biz_b was.
	recs := history("biz_b", "Ana@example.com", 2)
	recs = append(recs[:1], append(more("biz_b", 150), recs[1:]...)...)
	err := importAll(ctx, s, recs, 0, nil)
	if !errors.Is(err, nextup.ErrConflict) || !strings.Contains(err.Error(), staffEmailPK("ana@example.com")+" exists") ||
		!strings.Contains(err.Error(), "items it wrote were deleted") {
		t.Errorf("an import with a staff email another business has: %v, want ErrConflict on the email's marker, what it wrote deleted", err)
	}
	if got := countItems(t, s); got != n {
		t.Errorf("the failed import left %d items behind", got-n)
	}

	// Two businesses, over a hundred entries: the source fails at the
	// end, after two transactions were written.
	recs = append(history("biz_c", "cy@example.com", 3), more("biz_c", 150)...)
	recs = append(recs, history("biz_d", "dee@example.com", 4)...)
	boom := errors.New("source failed")
	if err := importAll(ctx, s, recs, len(recs)-1, boom); !errors.Is(err, boom) || !strings.Contains(err.Error(), "items it wrote were deleted") {
		t.Errorf("an import whose source failed: %v, want its error, saying what it wrote was deleted", err)
	}
	if got := countItems(t, s); got != n {
		t.Errorf("the failed import left %d items behind", got-n)
	}
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		for _, bid := range []string{"biz_b", "biz_c", "biz_d"} {
			if _, err := tx.BusinessGet(ctx, bid); !errors.Is(err, nextup.ErrNotFound) {
				t.Errorf("business %s after its failed import: %v, want ErrNotFound", bid, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// more is n more waiting entries of a business.
func more(bid string, n int) []any {
	var out []any
	for i := range n {
		out = append(out, nextup.Entry{Seq: int64(1000 + i), ID: fmt.Sprintf("%s_more%d", bid, i), BusinessID: bid,
			Name: "More", Email: fmt.Sprintf("m%d@example.com", i), Channel: nextup.ChannelEmail, Service: "cut",
			PartySize: 1, JoinedAt: t0, State: nextup.EntryWaiting, UpdatedAt: t0})
	}
	return out
}

// TestImportRecordsThrottled: a write the service throttles is tried
// again.
func TestImportRecordsThrottled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	f := &faultAPI{API: s.api, errs: []error{&types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}}}
	s.api = f
	if err := importAll(ctx, s, history("biz_a", "ana@example.com", 0), 0, nil); err != nil || f.writes < 2 {
		t.Fatalf("an import throttled once: %v after %d writes, want success after a second try", err, f.writes)
	}
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		_, err := tx.StaffByEmail(ctx, "ana@example.com")
		return err
	}); err != nil {
		t.Error(err)
	}
}
