package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestSheetVersionRowsCut: a version's rows that will not fit an item
// even compressed keep their first rows, as many as fit, and count the
// rest in Cut; the version itself (hash, counts, missing rows) is whole.
func TestSheetVersionRowsCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t)
	at := time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 2))
	c := nextup.SheetContent{Rows: [][]string{{"Name", "Email", "Ref"}}, HeaderRow: 1, Keys: []string{""}}
	for i := range 20000 {
		c.Rows = append(c.Rows, []string{fmt.Sprintf("P%d", i), fmt.Sprintf("p%d@example.com", i), fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64())})
		c.Keys = append(c.Keys, fmt.Sprintf("email:p%d@example.com|", i))
	}
	v := nextup.SheetVersion{ID: "shv_big", BusinessID: "biz_big", Source: "x", FetchedAt: at, Hash: "h", Rows: 20000,
		Missing: []nextup.SheetMissing{{EntryID: "ent_1", Name: "Ann", State: nextup.SheetMissingHeld}}, Content: &c}
	err := s.InTx(ctx, func(tx nextup.Tx) error {
		if err := tx.BusinessCreate(ctx, nextup.Business{ID: "biz_big", Name: "Big", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: at}); err != nil {
			return err
		}
		return tx.SheetVersionAdd(ctx, v)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got nextup.SheetVersion
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		got, err = tx.SheetVersionGet(ctx, v.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	g := got.Content
	if g == nil || g.Cut == 0 || len(g.Rows)+g.Cut != len(c.Rows) || len(g.Rows) < 1000 || len(g.Keys) != len(g.Rows) {
		t.Fatalf("content kept: %d rows, %d cut", len(g.Rows), g.Cut)
	}
	if got.Hash != "h" || got.Rows != 20000 || len(got.Missing) != 1 {
		t.Errorf("version %+v", got)
	}
	t.Logf("kept %d of %d rows", len(g.Rows), len(c.Rows))
}

// rowsReader is a sheet of rows held in memory (the mirror's SheetReader).
type rowsReader struct{ rows [][]string }

func (r *rowsReader) Read(context.Context, nextup.SheetSource) ([][]string, error) {
	return r.rows, nil
}

// TestSheetMirrorSplits: the sheet mirror on DynamoDB's bounded
// transactions, inside a request (as POST …/sheet:sync and …:confirm run):
// a sheet of 60 rows is imported, a read in which 50 rows vanished holds
// them back, and the owner's confirmation withdraws all 50 — far more
// writes than one transaction takes, so the request commits them in parts.
func TestSheetMirrorSplits(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, svc, biz := h.ctx, h.svc, h.biz
	// The owner's connection code is in the header row, right of the
	// headings.
	sheet := &rowsReader{rows: [][]string{{"Name", "Email", "Service", waitlist.SheetCode(biz)}}}
	for i := range 60 {
		sheet.rows = append(sheet.rows, []string{fmt.Sprintf("Person %02d", i), fmt.Sprintf("p%02d@example.com", i), "haircut"})
	}
	svc.Sheets = sheet
	if _, err := svc.SetSheet(ctx, biz.ID, &nextup.SheetConfig{SpreadsheetID: "sheet-1"}); err != nil {
		t.Fatal(err)
	}
	inRequest := func(key string, fn func(ctx context.Context) error) {
		t.Helper()
		rctx, req, _, err := svc.Begin(ctx, &waitlist.Idempotency{Scope: "caller:" + biz.ID, Key: key, Fingerprint: key})
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(rctx); err != nil {
			req.Abort()
			t.Fatal(err)
		}
		if _, _, err := req.End(waitlist.Response{Status: 200, Body: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
	}
	inRequest("sync-1", func(ctx context.Context) error {
		res, err := svc.SyncSheet(ctx, biz.ID)
		if err == nil && res.Import.Imported != 60 {
			err = fmt.Errorf("imported %d of 60", res.Import.Imported)
		}
		return err
	})
	h.clock.Advance(time.Minute)
	sheet.rows = sheet.rows[:11]
	var held nextup.SheetVersion
	inRequest("sync-2", func(ctx context.Context) error {
		res, err := svc.SyncSheet(ctx, biz.ID)
		held = res.Version
		return err
	})
	if n := held.MissingIn(nextup.SheetMissingHeld); n != 50 {
		t.Fatalf("held back %d, want 50", n)
	}
	h.clock.Advance(time.Minute)
	inRequest("confirm", func(ctx context.Context) error {
		v, err := svc.ConfirmSheetWithdrawals(ctx, biz.ID, held.ID)
		if err == nil && v.MissingIn(nextup.SheetMissingWithdrawn) != 50 {
			err = fmt.Errorf("withdrew %d of 50", v.MissingIn(nextup.SheetMissingWithdrawn))
		}
		return err
	})
	left, err := svc.ListEntries(ctx, nextup.EntryFilter{BusinessID: biz.ID})
	if err != nil || len(left) != 10 {
		t.Fatalf("%d on the list after confirming, want 10 (%v)", len(left), err)
	}
}
