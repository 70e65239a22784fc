package waitlist_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/option"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/sheet"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// A business's Google Sheet is mirrored by its timer through the official
// Sheets client (against a local fake speaking the v4 JSON): the first read
// imports the rows as a version; reading it unchanged keeps no version; a
// changed sheet makes a new version with the right upserts, and a row that
// cannot be read becomes a proposal, once.
func TestSheetMirror(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var mu sync.Mutex
	values := [][]any{
		{waitlist.SheetCode(b.biz)}, // the owner's connection code, above the header
		{"Name", "Email", "Service", "Party"},
		{"Ann", "ann@example.com", "haircut", "1"},
		{"Bob", "bob@example.com", "haircut", "2"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v4/spreadsheets/sheet-1/values/A:Z" {
			http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, 404)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"range": "Sheet1!A1:D9", "majorDimension": "ROWS", "values": values})
	}))
	defer srv.Close()
	svc, err := sheet.NewSheets(b.ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	b.svc.Sheets = &sheet.Reader{Sheets: svc}

	for _, bad := range []*nextup.SheetConfig{{}, {URL: "ftp://x"}, {SpreadsheetID: "sheet-1", EverySeconds: 5}} {
		if _, err := b.svc.SetSheet(b.ctx, b.biz.ID, bad); nextup.ErrorCode(err) != "validation_failed" {
			t.Errorf("sheet %+v: %v", bad, err)
		}
	}
	if _, err := b.svc.SetSheet(b.ctx, b.biz.ID, &nextup.SheetConfig{SpreadsheetID: "sheet-1"}); err != nil {
		t.Fatal(err)
	}
	versions := func() []nextup.SheetVersion {
		t.Helper()
		vs, err := b.svc.SheetVersions(b.ctx, b.biz.ID)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	// The timer reads it at once.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Second); err != nil {
		t.Fatal(err)
	}
	vs := versions()
	if len(vs) != 1 || vs[0].Rows != 2 || vs[0].Imported != 2 || vs[0].Source != "sheet-1" {
		t.Fatalf("versions after the first read: %+v", vs)
	}
	// Five minutes on, unchanged: nothing new.
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if vs := versions(); len(vs) != 1 {
		t.Fatalf("an unchanged sheet made a version: %+v", vs)
	}
	// Bob's party grows, Cy joins, and a row has a broken email.
	mu.Lock()
	values[3][3] = "3"
	values = append(values, []any{"Cy", "cy@example.com", "haircut", "1"}, []any{"Dee", "dee@", "haircut", "1"})
	mu.Unlock()
	res, err := b.svc.SyncSheet(b.ctx, b.biz.ID)
	if err != nil || !res.Changed {
		t.Fatalf("sync: %+v %v", res, err)
	}
	v := res.Version
	if v.Rows != 4 || v.Imported != 1 || v.Updated != 1 || v.Unchanged != 1 || v.Rejected != 1 {
		t.Errorf("second version %+v, want 1 imported (Cy), 1 updated (Bob), 1 unchanged (Ann), 1 rejected (Dee)", v)
	}
	if vs := versions(); len(vs) != 2 || vs[0].Hash == vs[1].Hash {
		t.Errorf("versions %+v", vs)
	}
	props, err := b.svc.ListProposals(b.ctx, b.biz.ID, nextup.ProposalOpen)
	if err != nil || len(props) != 1 || props[0].Source != nextup.ProposalFromSheet || len(props[0].Problems) == 0 {
		t.Fatalf("proposals %+v, %v", props, err)
	}
	// The same bad row read again (another change elsewhere) is not
	// proposed twice.
	mu.Lock()
	values[2][3] = "2"
	mu.Unlock()
	if _, err := b.svc.SyncSheet(b.ctx, b.biz.ID); err != nil {
		t.Fatal(err)
	}
	if props, _ := b.svc.ListProposals(b.ctx, b.biz.ID, ""); len(props) != 1 {
		t.Errorf("%d proposals after a second read", len(props))
	}
	wl, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: b.biz.ID})
	if err != nil {
		t.Fatal(err)
	}
	party := map[string]int{}
	for _, e := range wl {
		party[e.Name] = e.PartySize
	}
	if len(party) != 3 || party["Bob"] != 3 || party["Ann"] != 2 || party["Cy"] != 1 {
		t.Errorf("waitlist %v", party)
	}
	// Stopping the mirror cancels its timer.
	if _, err := b.svc.SetSheet(b.ctx, b.biz.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.SyncSheet(b.ctx, b.biz.ID); nextup.ErrorCode(err) != "no_sheet" {
		t.Errorf("sync without a sheet: %v", err)
	}
	var pending []nextup.Timer
	_ = b.store.Read(b.ctx, func(tx nextup.Tx) error {
		pending, err = tx.TimerList(b.ctx, nextup.TimerFilter{Kind: nextup.TimerSheetSync, PendingOnly: true})
		return err
	})
	if len(pending) != 0 {
		t.Errorf("sheet timers left: %+v", pending)
	}
	_ = waitlist.DefaultSheetEvery
}
