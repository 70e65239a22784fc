package waitlist_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// The guards of the sheet mirror: whose sheet it is, one read at a time,
// the grace rule across a change of sheet, the owner's status cells, and
// how many versions keep their rows.

// missingOf writes a version's missing rows as "Name:state ...".
func missingOf(v nextup.SheetVersion) string {
	var out []string
	for _, m := range v.Missing {
		out = append(out, m.Name+":"+string(m.State))
	}
	return strings.Join(out, " ")
}

func sheetTimers(t *testing.T, b *bundle, kind string) []nextup.Timer {
	t.Helper()
	var ts []nextup.Timer
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		ts, err = tx.TimerList(b.ctx, nextup.TimerFilter{Kind: kind, PendingOnly: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ts
}

// Business B's staff point nextup at business A's spreadsheet (the one
// service account can read it): without B's connection code in it, B
// gets nothing — no read imports, stores or proposes anything, the
// preview shows no column, the timer's reads keep no version, nothing is
// written to A's sheet — while A, whose code is in a cell, reads it as
// always. The code is each business's own, and its cell is nobody's row
// wherever it is (typed in capitals, in the middle of the list).
func TestSheetOtherBusinessGetsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	header := []string{"Name", "Email", "Service"}
	f := newFakeSheets(t, header, []string{"Ann", "ann@example.com", "haircut"}, []string{"Bob", "bob@example.com", "haircut"})
	if res := f.connect(t, b); res.Import.Imported != 2 {
		t.Fatalf("A's own sheet: %+v", res.Import)
	}
	rival, _, err := b.svc.CreateBusiness(b.ctx, waitlist.CreateBusinessParams{Name: "Rival", Timezone: "Europe/London"})
	if err != nil {
		t.Fatal(err)
	}
	codeA, codeB := waitlist.SheetCode(b.biz), waitlist.SheetCode(rival)
	if codeA == codeB || codeA != waitlist.SheetCode(b.biz) || !regexp.MustCompile(`^nextup-[0-9a-hjkmnp-tv-z]{10}$`).MatchString(codeA) {
		t.Fatalf("connection codes %q and %q", codeA, codeB)
	}
	if _, err := b.svc.SetSheet(b.ctx, rival.ID, &nextup.SheetConfig{SpreadsheetID: "sheet-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.SyncSheet(b.ctx, rival.ID); nextup.ErrorCode(err) != nextup.CodeSheetNotVerified || !strings.Contains(err.Error(), codeB) {
		t.Fatalf("B reads A's sheet: %v", err)
	}
	if p, err := b.svc.PreviewSheet(b.ctx, rival.ID, nextup.SheetConfig{SpreadsheetID: "sheet-1"}); nextup.ErrorCode(err) != nextup.CodeSheetNotVerified || len(p.Header) != 0 {
		t.Fatalf("B previews A's sheet: %+v, %v", p, err)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 6*time.Minute); err != nil { // the timers of both read
		t.Fatal(err)
	}
	if es, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: rival.ID}); err != nil || len(es) != 0 {
		t.Errorf("B's entries: %+v %v", es, err)
	}
	if vs, err := b.svc.SheetVersions(b.ctx, rival.ID); err != nil || len(vs) != 0 {
		t.Errorf("B's versions: %+v %v", vs, err)
	}
	if ps, err := b.svc.ListProposals(b.ctx, rival.ID, ""); err != nil || len(ps) != 0 {
		t.Errorf("B's proposals: %+v %v", ps, err)
	}
	if _, ups := f.snapshot(); len(ups) != 0 {
		t.Errorf("writes to A's sheet: %+v", ups)
	}
	// A's code moves into the middle of the list, in capitals: it is
	// still A's sheet, and the code's row is no one.
	f.setCode("")
	f.set(header, []string{"Ann", "ann@example.com", "haircut"}, []string{strings.ToUpper(codeA)}, []string{"Bob", "bob@example.com", "haircut"})
	res := syncAfter(t, b, time.Minute)
	if res.Version.Rows != 2 || res.Import.Imported != 0 || len(res.Import.Rejected) != 0 || res.Version.Missing != nil {
		t.Errorf("A's sheet with the code among its rows: %+v, %+v", res.Version, res.Import)
	}
	if ps, _ := b.svc.ListProposals(b.ctx, b.biz.ID, ""); len(ps) != 0 {
		t.Errorf("the code's row became a proposal: %+v", ps)
	}
	// Without the code, A's sheet is not read either: nothing changes.
	f.set(header, []string{"Ann", "ann@example.com", "haircut"})
	if _, err := b.svc.SyncSheet(b.ctx, b.biz.ID); nextup.ErrorCode(err) != nextup.CodeSheetNotVerified {
		t.Errorf("A's sheet without its code: %v", err)
	}
	if e := entriesByName(t, b)["Bob"]; e.State != nextup.EntryWaiting {
		t.Errorf("Bob is %s after a read of a sheet without its code", e.State)
	}
}

// A claimed row is not marked in a sheet that no longer holds the
// business's code: the try fails (audited, nothing written) and the next
// try, once the code is back, marks it.
func TestSheetWriteBackNeedsTheCode(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := newFakeSheets(t, []string{"Name", "Email", "Service"}, []string{"Ann", "ann@example.com", "haircut"})
	f.connect(t, b)
	o := offerTo(t, b, "haircut", "Ann")
	f.setCode("")
	res, err := b.svc.Claim(b.ctx, b.token(t, o.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Second); err != nil {
		t.Fatal(err)
	}
	evs := bookingAudit(t, b, res.Booking.ID)
	if _, ups := f.snapshot(); len(ups) != 0 || !slices.Contains(reasons(evs), waitlist.ReasonSheetMarkRetry) ||
		!strings.Contains(fmt.Sprint(evs[len(evs)-1].Detail["error"]), "connection code") {
		t.Fatalf("a write-back without the code: updates %+v, audit %v", ups, reasons(evs))
	}
	f.setCode(waitlist.SheetCode(b.biz))
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Minute); err != nil {
		t.Fatal(err)
	}
	if rows, ups := f.snapshot(); len(ups) != 1 || rows[1][3] != "Booked Tue 1 Dec at 2:00 pm" {
		t.Fatalf("with the code back: updates %+v, rows %q", ups, rows)
	}
}

// Saving the sheet reads it once: ConnectSheet reads it at once and the
// mirror's timer reads next an interval on, not at once beside it.
func TestSheetConnectReadsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := newFakeSheets(t, []string{"Name", "Email", "Service"}, []string{"Ann", "ann@example.com", "haircut"})
	f.setCode(waitlist.SheetCode(b.biz))
	b.svc.Sheets = f.reader(t, b)
	_, res, err := b.svc.ConnectSheet(b.ctx, b.biz.ID, &nextup.SheetConfig{SpreadsheetID: "sheet-1", EverySeconds: 600})
	if err != nil || res.Import.Imported != 1 {
		t.Fatalf("connect: %+v %v", res, err)
	}
	ts := sheetTimers(t, b, nextup.TimerSheetSync)
	if len(ts) != 1 || !ts[0].DueAt.Equal(b.clock.Now().Add(10*time.Minute)) {
		t.Fatalf("sheet timers after connecting: %+v", ts)
	}
	reads := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.reads
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Second); err != nil {
		t.Fatal(err)
	}
	if n := reads(); n != 1 {
		t.Fatalf("%d reads a second after connecting, want 1", n)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := reads(); n != 2 {
		t.Errorf("%d reads an interval after connecting, want 2", n)
	}
	// A sheet saved without the code is saved, and not read.
	f.setCode("")
	biz, _, err := b.svc.ConnectSheet(b.ctx, b.biz.ID, &nextup.SheetConfig{SpreadsheetID: "sheet-1", EverySeconds: 300})
	if nextup.ErrorCode(err) != nextup.CodeSheetNotVerified || biz.Profile.Sheet == nil || biz.Profile.Sheet.EverySeconds != 300 {
		t.Errorf("connect without the code: %+v, %v", biz.Profile.Sheet, err)
	}
}

// The owner points the mirror at another sheet (here another tab) that
// lacks one of the people of the first: its first read withdraws no one,
// however often it is read; that person is held back for the owner.
func TestSheetSwitchWithdrawsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	header := []string{"Name", "Email", "Service"}
	var people [][]string
	for _, n := range []string{"Ann", "Bob", "Cy", "Dee", "Eve"} {
		people = append(people, []string{n, strings.ToLower(n) + "@example.com", "haircut"})
	}
	f := newFakeSheets(t, append([][]string{header}, people...)...)
	f.connect(t, b)
	if _, err := b.svc.SetSheet(b.ctx, b.biz.ID, &nextup.SheetConfig{SpreadsheetID: "sheet-1", Range: "'Week 2'!A:Z"}); err != nil {
		t.Fatal(err)
	}
	f.set(append([][]string{header}, people[:4]...)...) // the new tab has no Eve
	for i := range 3 {
		v := syncAfter(t, b, 5*time.Minute).Version
		if missingOf(v) != "Eve:held" || entriesByName(t, b)["Eve"].State != nextup.EntryWaiting {
			t.Fatalf("read %d of the new tab: missing %q, Eve %s", i+1, missingOf(v), entriesByName(t, b)["Eve"].State)
		}
		f.set(append([][]string{header}, append(people[:4:4], []string{fmt.Sprintf("Zed %d", i), "zed@example.com", "haircut"})...)...)
	}
}

// A status the owner wrote in the row's status cell is left as it is: the
// write-back writes nothing and audits why, once; an empty status cell,
// or one nextup wrote, is written.
func TestSheetWriteBackKeepsOwnersStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := newFakeSheets(t, []string{"Name", "Email", "Service", "Status"},
		[]string{"Ann", "ann@example.com", "haircut", "VIP: call first"},
		[]string{"Bob", "bob@example.com", "colour", "Booked Mon 30 Nov at 9:00 am"})
	f.connect(t, b)
	claim := func(service, name string) nextup.Booking {
		t.Helper()
		o := offerTo(t, b, service, name)
		res, err := b.svc.Claim(b.ctx, b.token(t, o.ID))
		if err != nil {
			t.Fatal(err)
		}
		if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Second); err != nil {
			t.Fatal(err)
		}
		return res.Booking
	}
	ann := claim("haircut", "Ann")
	rows, ups := f.snapshot()
	evs := bookingAudit(t, b, ann.ID)
	if len(ups) != 0 || rows[1][3] != "VIP: call first" {
		t.Fatalf("Ann's status cell: updates %+v, rows %q", ups, rows)
	}
	if r := reasons(evs); !slices.Contains(r, waitlist.ReasonSheetMarkSkipped) || slices.Contains(r, waitlist.ReasonSheetMarked) {
		t.Fatalf("Ann's booking's audit: %v", r)
	}
	if last := evs[len(evs)-1]; last.Detail["status"] != "VIP: call first" {
		t.Errorf("the skip's detail: %v", last.Detail)
	}
	if ts := sheetTimers(t, b, nextup.TimerSheetMark); len(ts) != 0 {
		t.Errorf("write-back timers left after the skip: %+v", ts)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(reasons(bookingAudit(t, b, ann.ID)), " "), waitlist.ReasonSheetMarkSkipped); n != 1 {
		t.Errorf("%d skips audited, want 1", n)
	}
	bob := claim("colour", "Bob")
	if rows, ups := f.snapshot(); len(ups) != 1 || !strings.HasPrefix(rows[2][3], "Booked Tue 1 Dec") {
		t.Errorf("Bob's status cell, nextup's own: updates %+v, rows %q", ups, rows)
	}
	if r := reasons(bookingAudit(t, b, bob.ID)); !slices.Contains(r, waitlist.ReasonSheetMarked) {
		t.Errorf("Bob's booking's audit: %v", r)
	}
}

// hookStore runs what is armed once, before the next transaction asked of
// it: another request that commits between two of a use case's.
type hookStore struct {
	nextup.Store
	mu   sync.Mutex
	next func()
}

func (s *hookStore) arm(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = f
}

func (s *hookStore) InTx(ctx context.Context, fn func(tx nextup.Tx) error) error {
	s.mu.Lock()
	f := s.next
	s.next = nil
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return s.Store.InTx(ctx, fn)
}

// The owner confirms a read that held rows back while a newer read finds
// one of those rows back: that person stays on the list (each withdrawal
// looks at the latest version again), the others go, and the version
// kept says so on the newer read's rows.
func TestSheetConfirmRechecksTheLatestRead(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), t.TempDir()+"/nextup.db")
	if err != nil {
		t.Fatal(err)
	}
	hs := &hookStore{Store: st}
	b := newBundleOn(t, hs, nil)
	t.Cleanup(func() { st.Close() })
	header := []string{"Name", "Email", "Service"}
	row := func(n string) []string { return []string{n, strings.ToLower(n) + "@example.com", "haircut"} }
	f := newFakeSheets(t, header, row("Ann"), row("Bob"), row("Cy"), row("Dee"))
	f.connect(t, b)
	f.set(header, row("Ann"))
	held := sync1(t, b).Version
	if held.MissingIn(nextup.SheetMissingHeld) != 3 {
		t.Fatalf("held back: %q", missingOf(held))
	}
	f.set(header, row("Ann"), row("Bob")) // Bob's row is put back
	var newer nextup.SheetVersion
	hs.arm(func() { newer = syncAfter(t, b, time.Minute).Version })
	cv, err := b.svc.ConfirmSheetWithdrawals(b.ctx, b.biz.ID, held.ID)
	if err != nil {
		t.Fatal(err)
	}
	if newer.ID == "" || missingOf(newer) != "Cy:held Dee:held" {
		t.Fatalf("the read in between: %q", missingOf(newer))
	}
	for name, want := range map[string]nextup.EntryState{"Ann": nextup.EntryWaiting, "Bob": nextup.EntryWaiting, "Cy": nextup.EntryLeft, "Dee": nextup.EntryLeft} {
		if got := entriesByName(t, b)[name].State; got != want {
			t.Errorf("%s is %s, want %s", name, got, want)
		}
	}
	if missingOf(cv) != "Cy:withdrawn Dee:withdrawn" || cv.Hash != newer.Hash || cv.Rows != 2 {
		t.Errorf("the confirmation's version: %q, %+v", missingOf(cv), cv)
	}
}

// Only the newest SheetVersionsWithRows versions keep their rows: the
// older keep their counts, and the first version with rows is compared
// with nothing before it that has rows (a conflict, not a wrong diff).
func TestSheetVersionsKeepRowsOfTheNewest(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	header := []string{"Name", "Email", "Service", "Party"}
	f := newFakeSheets(t, header, []string{"Ann", "ann@example.com", "haircut", "1"})
	f.connect(t, b)
	for i := range waitlist.SheetVersionsWithRows + 1 {
		f.set(header, []string{"Ann", "ann@example.com", "haircut", fmt.Sprint(2 + i%2)}, []string{fmt.Sprintf("P%d", i), fmt.Sprintf("p%d@example.com", i), "haircut", "1"})
		if res := sync1(t, b); !res.Changed {
			t.Fatalf("read %d kept no version", i+2)
		}
	}
	vs, err := b.svc.SheetVersions(b.ctx, b.biz.ID)
	if err != nil || len(vs) != waitlist.SheetVersionsWithRows+2 {
		t.Fatalf("%d versions, %v", len(vs), err)
	}
	for i, h := range vs {
		v, err := b.svc.SheetVersion(b.ctx, b.biz.ID, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if kept := v.Content != nil; kept != (i < waitlist.SheetVersionsWithRows) || v.Hash == "" || v.Rows == 0 {
			t.Errorf("version %d (newest first): rows kept %v, %+v", i, kept, h)
		}
	}
	if _, err := b.svc.SheetDiff(b.ctx, b.biz.ID, "", vs[waitlist.SheetVersionsWithRows-1].ID); nextup.ErrorCode(err) != "conflict" {
		t.Errorf("a diff with a version without rows: %v", err)
	}
}
