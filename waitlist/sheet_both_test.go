package waitlist_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/option"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/sheet"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// fakeSheets is a Google Sheet behind the Sheets v4 wire format, as the
// official client speaks it: values.get of spreadsheet sheet-1 (every
// range reads the first tab, Sheet1, from A1) and values.batchUpdate,
// which it applies to the rows and records. While down, it answers 503.
// With a code, it reads as having one more row below its rows, whose only
// cell is the code: the owner's connection code, as they typed it.
type fakeSheets struct {
	t       testing.TB
	url     string
	mu      sync.Mutex
	rows    [][]string
	code    string
	down    bool
	updates []sheetUpdate // batchUpdate requests that succeeded
	refused int           // requests answered 503
	reads   int           // values.get requests answered
}

// sheetUpdate is one batchUpdate request body.
type sheetUpdate struct {
	ValueInputOption string `json:"valueInputOption"`
	Data             []struct {
		Range  string     `json:"range"`
		Values [][]string `json:"values"`
	} `json:"data"`
}

func newFakeSheets(t testing.TB, rows ...[]string) *fakeSheets {
	f := &fakeSheets{t: t, rows: rows}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f.withServer(srv)
}

// withServer keeps srv's URL; the client reaches the fake through it.
func (f *fakeSheets) withServer(srv *httptest.Server) *fakeSheets {
	f.url = srv.URL
	return f
}

func (f *fakeSheets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if f.down {
		f.refused++
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}`))
		return
	}
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v4/spreadsheets/sheet-1/values/"):
		values := make([][]any, len(f.rows))
		for i, row := range f.rows {
			for _, c := range row {
				values[i] = append(values[i], c)
			}
		}
		if f.code != "" {
			values = append(values, []any{f.code})
		}
		f.reads++
		_ = json.NewEncoder(w).Encode(map[string]any{"range": "Sheet1!A1:Z1000", "majorDimension": "ROWS", "values": values})
	case r.Method == http.MethodPost && r.URL.Path == "/v4/spreadsheets/sheet-1/values:batchUpdate":
		var u sheetUpdate
		if err := json.NewDecoder(r.Body).Decode(&u); err != nil {
			f.t.Errorf("batchUpdate body: %v", err)
		}
		for _, d := range u.Data {
			row, col := a1(f.t, strings.TrimPrefix(d.Range, "Sheet1!"))
			for len(f.rows) <= row {
				f.rows = append(f.rows, nil)
			}
			for len(f.rows[row]) <= col {
				f.rows[row] = append(f.rows[row], "")
			}
			f.rows[row][col] = d.Values[0][0]
		}
		f.updates = append(f.updates, u)
		_ = json.NewEncoder(w).Encode(map[string]any{"spreadsheetId": "sheet-1", "totalUpdatedCells": len(u.Data)})
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`))
	}
}

// a1 reads a cell's A1 name into its row and column, from 0.
func a1(t testing.TB, ref string) (row, col int) {
	letters := strings.TrimRightFunc(ref, func(r rune) bool { return r >= '0' && r <= '9' })
	n, err := strconv.Atoi(ref[len(letters):])
	if err != nil || letters == "" {
		t.Errorf("not a cell: %q", ref)
		return 0, 0
	}
	for _, c := range letters {
		col = col*26 + int(c-'A'+1)
	}
	return n - 1, col - 1
}

// set replaces the sheet's rows.
func (f *fakeSheets) set(rows ...[]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = rows
}

func (f *fakeSheets) snapshot() (rows [][]string, updates []sheetUpdate) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rows {
		rows = append(rows, slices.Clone(r))
	}
	return rows, slices.Clone(f.updates)
}

func (f *fakeSheets) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// setCode puts a connection code in the sheet ("" takes it out).
func (f *fakeSheets) setCode(code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.code = code
}

// reader is a sheet reader that reaches the fake through the official
// client.
func (f *fakeSheets) reader(t *testing.T, b *bundle) *sheet.Reader {
	t.Helper()
	svc, err := sheet.NewSheets(b.ctx, option.WithEndpoint(f.url+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return &sheet.Reader{Sheets: svc}
}

// connect puts b's connection code in the sheet, points b's business at
// it through the official client and reads it once.
func (f *fakeSheets) connect(t *testing.T, b *bundle, cols ...nextup.SheetColumn) waitlist.SheetSync {
	t.Helper()
	f.setCode(waitlist.SheetCode(b.biz))
	b.svc.Sheets = f.reader(t, b)
	if _, err := b.svc.SetSheet(b.ctx, b.biz.ID, &nextup.SheetConfig{SpreadsheetID: "sheet-1", Columns: cols}); err != nil {
		t.Fatal(err)
	}
	return sync1(t, b)
}

// sync1 reads the sheet now, a second after the last read.
func sync1(t *testing.T, b *bundle) waitlist.SheetSync {
	t.Helper()
	return syncAfter(t, b, time.Second)
}

// syncAfter reads the sheet d after the last read (the timer's reads are
// the sheet's interval apart: five minutes).
func syncAfter(t *testing.T, b *bundle, d time.Duration) waitlist.SheetSync {
	t.Helper()
	b.clock.Advance(d)
	res, err := b.svc.SyncSheet(b.ctx, b.biz.ID)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

// onBothStores runs test on SQLite and on PostgreSQL.
func onBothStores(t *testing.T, test func(t *testing.T, b *bundle)) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			var b *bundle
			if store == "sqlite" {
				b = setup(t, nil)
			} else {
				b = postgresBundle(t, 4)
			}
			test(t, b)
		})
	}
}

// entriesByName are the business's entries in every state, by name (the
// newest of a name).
func entriesByName(t *testing.T, b *bundle) map[string]nextup.Entry {
	t.Helper()
	out := map[string]nextup.Entry{}
	for _, st := range []nextup.EntryState{"", nextup.EntryBooked, nextup.EntryLeft} {
		es, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: b.biz.ID, State: st})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if old, ok := out[e.Name]; !ok || e.Seq > old.Seq {
				out[e.Name] = e
			}
		}
	}
	return out
}

func bookingAudit(t *testing.T, b *bundle, bookingID string) []nextup.AuditEvent {
	t.Helper()
	var evs []nextup.AuditEvent
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		evs, err = tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: b.biz.ID, SubjectType: nextup.SubjectBooking, SubjectID: bookingID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

func reasons(evs []nextup.AuditEvent) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Reason)
	}
	return out
}

// offerTo makes a free haircut slot at 2 pm, which the engine offers to
// the first in line, and returns the offer.
func offerTo(t *testing.T, b *bundle, service string, want string) nextup.Offer {
	t.Helper()
	zero := 0
	sl := b.slot(t, waitlist.SlotParams{Service: service, BookedSeats: &zero})
	v := b.getSlot(t, sl.ID)
	if len(v.Offers) != 1 {
		t.Fatalf("offers of the new slot: %+v", v.Offers)
	}
	if e := b.entry(t, v.Offers[0].EntryID); e.Entry.Name != want {
		t.Fatalf("offered to %s, want %s", e.Entry.Name, want)
	}
	return v.Offers[0]
}

// A claim by an entry that came from the sheet marks its row booked in the
// sheet, through the official client's values.batchUpdate, after the
// claim (a timer, not the claim's request). The row is found by its
// person and service when the timer writes, not by where it was when it
// was imported: a row above it deleted meanwhile moves it up. The sheet
// had no status column: one is added to the header.
func TestSheetClaimMarksRow(t *testing.T) {
	t.Parallel()
	onBothStores(t, func(t *testing.T, b *bundle) {
		f := newFakeSheets(t, []string{"Name", "Email", "Service"},
			[]string{"Cy", "cy@example.com", "colour"},
			[]string{"Ann", "ann@example.com", "haircut"},
			[]string{"Bob", "bob@example.com", "haircut"})
		if res := f.connect(t, b); res.Import.Imported != 3 {
			t.Fatalf("first read: %+v", res.Import)
		}
		for name, e := range entriesByName(t, b) {
			if e.Source != nextup.SourceSheet {
				t.Errorf("%s's source is %q, want %q", name, e.Source, nextup.SourceSheet)
			}
		}
		o := offerTo(t, b, "haircut", "Ann")
		// Cy's row goes (someone tidies the sheet): Ann is row 3 now.
		f.set([]string{"Name", "Email", "Service"},
			[]string{"Ann", "ann@example.com", "haircut"},
			[]string{"Bob", "bob@example.com", "haircut"})
		res, err := b.svc.Claim(b.ctx, b.token(t, o.ID))
		if err != nil {
			t.Fatal(err)
		}
		if _, ups := f.snapshot(); len(ups) != 0 {
			t.Fatalf("the claim wrote to the sheet itself: %+v", ups)
		}
		if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Second); err != nil {
			t.Fatal(err)
		}
		rows, ups := f.snapshot()
		if len(ups) != 1 {
			t.Fatalf("batchUpdate requests: %+v", ups)
		}
		u := ups[0]
		got := map[string]string{}
		for _, d := range u.Data {
			got[d.Range] = d.Values[0][0]
		}
		want := map[string]string{"Sheet1!D1": "Status", "Sheet1!D2": "Booked Tue 1 Dec at 2:00 pm"}
		if u.ValueInputOption != "RAW" || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("batchUpdate %+v, want RAW %v", u, want)
		}
		if rows[1][0] != "Ann" || rows[1][3] != "Booked Tue 1 Dec at 2:00 pm" || len(rows[2]) > 3 {
			t.Errorf("the sheet after the write-back: %q", rows)
		}
		evs := bookingAudit(t, b, res.Booking.ID)
		if r := reasons(evs); !slices.Contains(r, waitlist.ReasonSheetMarked) {
			t.Errorf("booking's audit: %v", r)
		}
		// Nothing is left to do: no write-back timer pending, and reading
		// the sheet again (its status column now) changes no entry.
		var pending []nextup.Timer
		_ = b.store.Read(b.ctx, func(tx nextup.Tx) error {
			pending, err = tx.TimerList(b.ctx, nextup.TimerFilter{Kind: nextup.TimerSheetMark, PendingOnly: true})
			return err
		})
		if len(pending) != 0 {
			t.Errorf("write-back timers left: %+v", pending)
		}
		again := sync1(t, b)
		if again.Import.Imported != 0 || again.Import.Updated != 0 || len(again.Import.Rejected) != 0 {
			t.Errorf("reading the marked sheet: %+v", again.Import)
		}
		if e := entriesByName(t, b)["Ann"]; e.State != nextup.EntryBooked {
			t.Errorf("Ann is %s", e.State)
		}
		if len(again.Version.Missing) != 1 || again.Version.Missing[0].Name != "Cy" {
			t.Errorf("missing after Cy's row went: %+v", again.Version.Missing)
		}
		// The owner edits Ann's booked row: she is not put on the list
		// again, her row says booked.
		rows[1][0] = "Ann Lee"
		f.set(rows...)
		if res := sync1(t, b); res.Import.Imported != 0 || entriesByName(t, b)["Ann Lee"].ID != "" {
			t.Errorf("an edit of a booked row: %+v", res.Import)
		}
	})
}

// Google down when a claim's row is to be marked: the claim has
// succeeded all the same, the try fails and is audited, and the next try
// (a minute on) marks the row, once. A sheet with a status column of its
// own (mapped by the owner, named "Where are we") gets the mark there.
func TestSheetWriteBackRetriesAfterOutage(t *testing.T) {
	t.Parallel()
	onBothStores(t, func(t *testing.T, b *bundle) {
		f := newFakeSheets(t, []string{"Who", "Mail", "For", "Where are we"},
			[]string{"Ann", "ann@example.com", "haircut", ""})
		f.connect(t, b, nextup.SheetColumn{Header: "Who", Field: "name"}, nextup.SheetColumn{Header: "Mail", Field: "email"},
			nextup.SheetColumn{Header: "For", Field: "service"}, nextup.SheetColumn{Header: "Where are we", Field: "status"})
		o := offerTo(t, b, "haircut", "Ann")
		f.setDown(true)
		res, err := b.svc.Claim(b.ctx, b.token(t, o.ID))
		if err != nil || res.Booking.State != nextup.BookingBooked {
			t.Fatalf("the claim while Google is down: %+v, %v", res, err)
		}
		if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Second); err != nil {
			t.Fatal(err)
		}
		if r := reasons(bookingAudit(t, b, res.Booking.ID)); !slices.Contains(r, waitlist.ReasonSheetMarkRetry) || slices.Contains(r, waitlist.ReasonSheetMarked) {
			t.Fatalf("booking's audit after the failed try: %v", r)
		}
		f.mu.Lock()
		refused := f.refused
		f.mu.Unlock()
		if refused == 0 {
			t.Fatal("the sheet was not asked")
		}
		if b.entry(t, o.EntryID).Entry.State != nextup.EntryBooked {
			t.Fatal("the outage undid the claim")
		}
		f.setDown(false)
		if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Minute); err != nil {
			t.Fatal(err)
		}
		rows, ups := f.snapshot()
		if len(ups) != 1 || len(ups[0].Data) != 1 || ups[0].Data[0].Range != "Sheet1!D2" || rows[1][3] != "Booked Tue 1 Dec at 2:00 pm" {
			t.Fatalf("after the outage: updates %+v, rows %q", ups, rows)
		}
		evs := bookingAudit(t, b, res.Booking.ID)
		if r := reasons(evs); !slices.Contains(r, waitlist.ReasonSheetMarked) {
			t.Fatalf("booking's audit: %v", r)
		}
		if last := evs[len(evs)-1]; last.Detail["try"] != float64(2) && last.Detail["try"] != 2 {
			t.Errorf("marked on try %v, want 2", last.Detail["try"])
		}
		// An hour on, nothing more is written.
		if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, ups := f.snapshot(); len(ups) != 1 {
			t.Errorf("%d writes after the row was marked", len(ups))
		}
	})
}

// Rows deleted from the sheet withdraw their entries, with grace: one read
// without a row withdraws nothing, the next does (audited, the person not
// messaged); a row that is there but half edited still counts; an entry
// holding a live offer is left alone; a read in which most rows vanished
// at once withdraws nothing and holds them back until the owner confirms;
// and a withdrawn row put back comes back on the list.
func TestSheetDeletedRowsWithdrawn(t *testing.T) {
	t.Parallel()
	onBothStores(t, func(t *testing.T, b *bundle) {
		header := []string{"Name", "Email", "Service", "Party"}
		ann := []string{"Ann", "ann@example.com", "haircut", "1"}
		bob := []string{"Bob", "bob@example.com", "haircut", "1"}
		cy := []string{"Cy", "cy@example.com", "haircut", "1"}
		dee := []string{"Dee", "dee@example.com", "haircut", "1"}
		eve := []string{"Eve", "eve@example.com", "haircut", "1"}
		fay := []string{"Fay", "fay@example.com", "colour", "1"}
		f := newFakeSheets(t, header, ann, bob, cy, dee, eve, fay)
		if res := f.connect(t, b); res.Import.Imported != 6 {
			t.Fatalf("first read: %+v", res.Import)
		}
		offerTo(t, b, "colour", "Fay") // Fay holds a live offer
		state := func(name string) nextup.EntryState { return entriesByName(t, b)[name].State }
		missing := func(v nextup.SheetVersion) string {
			var out []string
			for _, m := range v.Missing {
				out = append(out, m.Name+":"+string(m.State))
			}
			return strings.Join(out, " ")
		}

		// Bob's row is deleted; Cy's party is half typed.
		f.set(header, ann, []string{"Cy", "cy@example.com", "haircut", "tw"}, dee, eve, fay)
		v := sync1(t, b).Version
		if missing(v) != "Bob:pending" || state("Bob") != nextup.EntryWaiting {
			t.Fatalf("one read without Bob's row: missing %q, Bob %s", missing(v), state("Bob"))
		}
		// Read again a moment later (Read now just after the timer's
		// read): the same half-edited sheet, which counts as one read.
		if res := syncAfter(t, b, 20*time.Second); res.Changed || missing(res.Version) != "Bob:pending" || state("Bob") != nextup.EntryWaiting {
			t.Fatalf("a read 20 s after the first miss: changed %v, missing %q, Bob %s", res.Changed, missing(res.Version), state("Bob"))
		}
		// The same sheet read again at the next read of the timer: Bob
		// goes; Cy, whose row is there, stays.
		v = syncAfter(t, b, 5*time.Minute).Version
		if missing(v) != "Bob:withdrawn" || state("Bob") != nextup.EntryLeft || state("Cy") != nextup.EntryWaiting {
			t.Fatalf("the second read: missing %q, Bob %s, Cy %s", missing(v), state("Bob"), state("Cy"))
		}
		bobID := entriesByName(t, b)["Bob"].ID
		var evs []nextup.AuditEvent
		_ = b.store.Read(b.ctx, func(tx nextup.Tx) error {
			evs, _ = tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: b.biz.ID, SubjectType: nextup.SubjectEntry, SubjectID: bobID})
			return nil
		})
		if last := evs[len(evs)-1]; last.To != "left" || last.Reason != waitlist.ReasonSheetRowDeleted {
			t.Errorf("Bob's last audit row: %+v", last)
		}
		msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID, To: "bob@example.com"})
		if err != nil || len(msgs) != 0 {
			t.Errorf("messages to Bob: %+v %v", msgs, err)
		}
		// A third read of the same sheet keeps no version.
		if res := sync1(t, b); res.Changed {
			t.Errorf("a third read of the same sheet kept a version: %+v", res.Version)
		}

		// Fay's row goes while she holds her offer: pending, then kept.
		f.set(header, ann, cy, dee, eve)
		if v = sync1(t, b).Version; missing(v) != "Fay:pending" {
			t.Fatalf("missing %q", missing(v))
		}
		if v = syncAfter(t, b, 5*time.Minute).Version; missing(v) != "Fay:kept" || state("Fay") != nextup.EntryOffered {
			t.Fatalf("Fay with an offer: missing %q, Fay %s", missing(v), state("Fay"))
		}

		// Most of the sheet vanishes at once (a filter left on, rows cut to
		// paste elsewhere): nothing is withdrawn, however often it is read.
		f.set(header, ann)
		for range 2 {
			v = sync1(t, b).Version
			if missing(v) != "Cy:held Dee:held Eve:held Fay:held" || v.MissingIn(nextup.SheetMissingHeld) != 4 {
				t.Fatalf("a mass vanish: missing %q", missing(v))
			}
			for _, name := range []string{"Cy", "Dee", "Eve"} {
				if state(name) != nextup.EntryWaiting {
					t.Fatalf("%s is %s after a mass vanish", name, state(name))
				}
			}
			f.set(header, ann, []string{"Zed", "zed@example.com", "haircut", "1"}) // a change, so the read keeps a version
		}
		if _, err := b.svc.ConfirmSheetWithdrawals(b.ctx, b.biz.ID, "shv_nope"); nextup.ErrorCode(err) != "not_found" {
			t.Errorf("confirming an unknown version: %v", err)
		}
		// The owner confirms: Cy, Dee and Eve go; Fay, still holding her
		// offer, stays.
		cv, err := b.svc.ConfirmSheetWithdrawals(b.ctx, b.biz.ID, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		if missing(cv) != "Cy:withdrawn Dee:withdrawn Eve:withdrawn Fay:kept" || cv.Hash != v.Hash {
			t.Fatalf("confirmed: %q", missing(cv))
		}
		for name, want := range map[string]nextup.EntryState{"Cy": nextup.EntryLeft, "Dee": nextup.EntryLeft, "Eve": nextup.EntryLeft,
			"Fay": nextup.EntryOffered, "Ann": nextup.EntryWaiting} {
			if state(name) != want {
				t.Errorf("%s is %s, want %s", name, state(name), want)
			}
		}
		if _, err := b.svc.ConfirmSheetWithdrawals(b.ctx, b.biz.ID, v.ID); nextup.ErrorCode(err) != "conflict" {
			t.Errorf("confirming an older version again: %v", err)
		}
		// Bob's row is put back: he is on the list again.
		f.set(header, ann, bob, []string{"Zed", "zed@example.com", "haircut", "1"})
		res := sync1(t, b)
		if res.Import.Imported != 1 || state("Bob") != nextup.EntryWaiting {
			t.Errorf("Bob's row back: %+v, Bob %s", res.Import, state("Bob"))
		}
	})
}

// Each read keeps the sheet's rows on its version; a version opens with
// its rows, and two versions compare row by row, rows paired by their
// person and service (a row that moved is the same row), cells by their
// column's header (a column added shows as a change of the rows that
// have it).
func TestSheetVersionsRowsAndDiff(t *testing.T) {
	t.Parallel()
	onBothStores(t, func(t *testing.T, b *bundle) {
		f := newFakeSheets(t, []string{"Name", "Email", "Service", "Party"},
			[]string{"Ann", "ann@example.com", "haircut", "1"},
			[]string{"Bob", "bob@example.com", "haircut", "2"},
			[]string{"Cy", "cy@example.com", "haircut", "1"})
		first := f.connect(t, b).Version
		f.set([]string{"Name", "Email", "Service", "Party", "Notes"},
			[]string{"Bob", "bob@example.com", "haircut", "3"},
			[]string{"Cy", "cy@example.com", "haircut", "1"},
			[]string{"Dee", "dee@example.com", "haircut", "1", "window seat"})
		second := sync1(t, b).Version

		v, err := b.svc.SheetVersion(b.ctx, b.biz.ID, second.ID)
		if err != nil {
			t.Fatal(err)
		}
		// (The last row held the connection code, which is kept as an
		// empty cell.)
		if v.Content == nil || len(v.Content.Rows) != 5 || v.Content.HeaderRow != 1 || v.Content.Rows[3][4] != "window seat" ||
			v.Content.Keys[1] != "email:bob@example.com|haircut" || fmt.Sprint(v.Content.Rows[4]) != "[]" {
			t.Fatalf("the second version's content: %+v", v.Content)
		}
		if vs, _ := b.svc.SheetVersions(b.ctx, b.biz.ID); len(vs) != 2 || vs[0].Content != nil {
			t.Errorf("the list of versions: %+v", vs)
		}
		if _, err := b.svc.SheetVersion(b.ctx, "biz_other", second.ID); nextup.ErrorCode(err) != "not_found" {
			t.Errorf("another business's version: %v", err)
		}

		d, err := b.svc.SheetDiff(b.ctx, b.biz.ID, "", second.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.From.ID != first.ID || d.To.ID != second.ID || d.Same != 1 {
			t.Fatalf("diff of %s and %s, %d the same", d.From.ID, d.To.ID, d.Same)
		}
		if fmt.Sprint(d.Columns) != "[Name Email Service Party Notes]" {
			t.Errorf("columns %v", d.Columns)
		}
		row := func(r waitlist.SheetRowDiff) string {
			var out []string
			for i, c := range r.Cells {
				if c.Changed {
					out = append(out, fmt.Sprintf("%s:%q→%q", d.Columns[i], c.Before, c.After))
				}
			}
			return fmt.Sprintf("%d→%d %s", r.FromRow, r.ToRow, strings.Join(out, " "))
		}
		if len(d.Added) != 1 || row(d.Added[0]) != `0→4 Name:""→"Dee" Email:""→"dee@example.com" Service:""→"haircut" Party:""→"1" Notes:""→"window seat"` {
			t.Errorf("added %+v", d.Added)
		}
		if len(d.Removed) != 1 || row(d.Removed[0]) != `2→0 Name:"Ann"→"" Email:"ann@example.com"→"" Service:"haircut"→"" Party:"1"→""` {
			t.Errorf("removed %+v", d.Removed)
		}
		if len(d.Changed) != 1 || row(d.Changed[0]) != `3→2 Party:"2"→"3"` {
			t.Errorf("changed %+v", d.Changed)
		}
		// The first version against nothing: every row added.
		d, err = b.svc.SheetDiff(b.ctx, b.biz.ID, "", first.ID)
		if err != nil || d.From.ID != "" || len(d.Added) != 3 || len(d.Removed)+len(d.Changed) != 0 {
			t.Errorf("the first version's diff: %+v %v", d, err)
		}
		// Any two, either way round.
		d, err = b.svc.SheetDiff(b.ctx, b.biz.ID, second.ID, first.ID)
		if err != nil || len(d.Added) != 1 || d.Added[0].Cells[0].After != "Ann" || len(d.Removed) != 1 {
			t.Errorf("second to first: %+v %v", d, err)
		}
	})
}

// The owner's column mapping reads a sheet whose headers name nothing
// nextup knows, instead of guessing; the preview shows the header with
// the fields each column fills (guessed without a mapping); a mapping
// without a way to reach people is refused.
func TestSheetColumnMapping(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := newFakeSheets(t, []string{"Customer", "Reach me at", "Wants", "Bring"},
		[]string{"Ann", "ann@example.com", "haircut", "2"})
	svc, err := sheet.NewSheets(b.ctx, option.WithEndpoint(f.url+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	b.svc.Sheets = &sheet.Reader{Sheets: svc}
	f.setCode(waitlist.SheetCode(b.biz))
	link := "https://docs.google.com/spreadsheets/d/sheet-1/edit#gid=0"
	p, err := b.svc.PreviewSheet(b.ctx, b.biz.ID, nextup.SheetConfig{URL: link})
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.SpreadsheetID != "sheet-1" || p.HeaderRow != 1 || fmt.Sprint(p.Fields) != "[name   ]" || p.Recognised {
		t.Errorf("preview without a mapping: %+v", p)
	}
	cols := []nextup.SheetColumn{{Header: "Customer", Field: "name"}, {Header: "Reach me at", Field: "email"},
		{Header: "Wants", Field: "service"}, {Header: "Bring", Field: "party_size"}}
	for _, bad := range [][]nextup.SheetColumn{
		{{Header: "Customer", Field: "name"}},
		{{Header: "Reach me at", Field: "email"}, {Header: "Wants", Field: "hair colour"}},
		{{Header: "Reach me at", Field: "email"}, {Header: "reach me at", Field: "phone"}},
	} {
		if _, err := b.svc.SetSheet(b.ctx, b.biz.ID, &nextup.SheetConfig{URL: link, Columns: bad}); nextup.ErrorCode(err) != "validation_failed" {
			t.Errorf("mapping %+v: %v", bad, err)
		}
	}
	biz, err := b.svc.SetSheet(b.ctx, b.biz.ID, &nextup.SheetConfig{URL: link, Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	if c := biz.Profile.Sheet; c.SpreadsheetID != "sheet-1" || c.URL != "" || len(c.Columns) != 4 {
		t.Errorf("sheet config %+v", c)
	}
	p, err = b.svc.PreviewSheet(b.ctx, b.biz.ID, *biz.Profile.Sheet)
	if err != nil || fmt.Sprint(p.Fields) != "[name email service party_size]" || !p.Recognised || len(p.Sample) != 1 {
		t.Errorf("preview with the mapping: %+v %v", p, err)
	}
	res := sync1(t, b)
	if res.Import.Imported != 1 {
		t.Fatalf("read with the mapping: %+v", res.Import)
	}
	if e := entriesByName(t, b)["Ann"]; e.Email != "ann@example.com" || e.PartySize != 2 || e.Service != "haircut" {
		t.Errorf("Ann: %+v", e)
	}
}
