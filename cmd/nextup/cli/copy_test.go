package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/store/storecopy"
)

// TestCopyRecords reads every row `copy` exports of the demo tour into
// its record (storecopy.Record, what a copy to a record destination such
// as DynamoDB writes) and finds each equal to what the store's API reads;
// every table a copy moves has a record kind.
func TestCopyRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, table := range sqlite.CopyTables {
		if _, err := storecopy.Record(table, nil, nil); err == nil || strings.Contains(err.Error(), "no record kind") {
			t.Errorf("Record of a row of %s: %v, want an error of a missing column", table, err)
		}
	}
	file := filepath.Join(t.TempDir(), "demo.db")
	if out, err := runCLI(t, "demo", "--tour", "--db", file); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	src, err := sqlite.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ids, err := src.BusinessIDs(ctx)
	if err != nil || len(ids) != 1 {
		t.Fatalf("the demo's businesses: %v, %v", ids, err)
	}
	var recs []any
	tables := map[string]int{}
	if err := src.ExportBusiness(ctx, ids[0], func(table string, cols []string, row []any) error {
		rec, err := storecopy.Record(table, cols, row)
		if err != nil {
			return err
		}
		tables[table]++
		recs = append(recs, rec)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"businesses", "slots", "entries", "offers", "bookings", "audit_events", "messages", "timers"} {
		if tables[table] == 0 {
			t.Errorf("no rows of %s in the demo tour's export", table)
		}
	}
	if err := src.Read(ctx, func(tx nextup.Tx) error {
		timers, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: ids[0]})
		if err != nil {
			return err
		}
		timer := map[int64]nextup.Timer{}
		for _, tm := range timers {
			timer[tm.ID] = tm
		}
		events, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: ids[0]})
		if err != nil {
			return err
		}
		event := map[int64]nextup.AuditEvent{}
		for _, ev := range events {
			event[ev.ID] = ev
		}
		for _, rec := range recs {
			var want any
			var err error
			switch r := rec.(type) {
			case nextup.Business:
				want, err = tx.BusinessGet(ctx, r.ID)
			case nextup.Slot:
				want, err = tx.SlotGet(ctx, r.ID)
			case nextup.Entry:
				want, err = tx.EntryGet(ctx, r.ID)
			case nextup.Offer:
				want, err = tx.OfferGet(ctx, r.ID)
			case nextup.Booking:
				want, err = tx.BookingGet(ctx, r.ID)
			case nextup.Message:
				want, err = tx.MessageGet(ctx, r.ID)
			case nextup.Timer:
				want = timer[r.ID]
			case nextup.AuditEvent:
				want = event[r.ID]
			default:
				return fmt.Errorf("a %T in the demo tour's export", rec)
			}
			if err != nil {
				return fmt.Errorf("%T: %w", rec, err)
			}
			g, _ := json.Marshal(rec)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("record of an exported row:\n got %s\nwant %s", g, w)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
