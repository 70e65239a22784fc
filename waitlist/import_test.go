package waitlist_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/waitlist"
	"pgregory.net/rapid"
)

// importBundle is a salon in GB with a small catalogue.
func importBundle(t *testing.T) *bundle {
	t.Helper()
	return withCatalogue(t, setup(t, nil))
}

func withCatalogue(t *testing.T, b *bundle) *bundle {
	t.Helper()
	gb := "GB"
	services := []nextup.Service{{Name: "haircut", Synonyms: []string{"cut"}}, {Name: "colour"}}
	staff := []string{"Ana", "Ben"}
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Country: &gb, Services: &services, Staff: &staff}); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bundle) importCSV(t *testing.T, file string) waitlist.ImportResult {
	t.Helper()
	res, err := b.svc.ImportCSV(b.ctx, b.biz.ID, strings.NewReader(file), waitlist.ImportOptions{})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return res
}

func (b *bundle) entries(t *testing.T, state nextup.EntryState) []nextup.Entry {
	t.Helper()
	es, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: b.biz.ID, State: state})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func (b *bundle) audit(t *testing.T, entryID string) []nextup.AuditEvent {
	t.Helper()
	var evs []nextup.AuditEvent
	err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		evs, err = tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: b.biz.ID, SubjectType: nextup.SubjectEntry, SubjectID: entryID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func rejectedRows(res waitlist.ImportResult) map[int]string {
	out := map[int]string{}
	for _, r := range res.Rejected {
		var ps []string
		for _, p := range r.Problems {
			ps = append(ps, p.Field+": "+p.Message)
		}
		out[r.Row] = strings.Join(ps, "; ")
	}
	return out
}

func counts(res waitlist.ImportResult) string {
	return fmt.Sprintf("imported %d, updated %d, unchanged %d, rejected %d", res.Imported, res.Updated, res.Unchanged, len(res.Rejected))
}

// waitlistFile is a salon's sheet as Excel saves it in the UK: a BOM,
// semicolons, day-first dates, a quoted line break, a spreadsheet date
// number, and three bad rows among the good.
const waitlistFile = "\uFEFFCustomer;E-mail;Mobile;Treatment;Guests;From;Until;With;Notes;VIP\r\n" +
	"Ann Lee;ann@example.com;07700 900001;Cut;1;02/12/2026;24/12/2026;ana;\"prefers\r\nmornings\";no\r\n" + // 2
	"Ben Ode;;+44 7700 900002;haircut;;03/12/2026 09:00;46387;;;yes\r\n" + // 3
	"Cy Ray;cy at example.com;07700 900003;haircut;;;;;;\r\n" + // 4: bad email
	";dee@example.com;;colour;2;;;;;\r\n" + // 5: no name
	"Eve Hill;eve@example.com;;colour;2;31/11/2026;;;;\r\n" + // 6: no such date
	"Fay Lam;fay@example.com;;colour;3;;;Ben;;x\r\n" // 7

func TestImportKeepsGoodRowsAndReportsBadOnes(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	res := b.importCSV(t, waitlistFile)
	if got := counts(res); got != "imported 3, updated 0, unchanged 0, rejected 3" {
		t.Fatalf("%s: %v", got, rejectedRows(res))
	}
	rej := rejectedRows(res)
	for row, want := range map[int]string{4: "email: is not an email address", 5: "name: is required", 6: "earliest: \"31/11/2026\" is not a date"} {
		if !strings.HasPrefix(rej[row], want) {
			t.Errorf("row %d: %q, want %q", row, rej[row], want)
		}
	}
	if got := []int{res.Rejected[0].Row, res.Rejected[1].Row, res.Rejected[2].Row}; !slices.Equal(got, []int{4, 5, 6}) {
		t.Errorf("rejected rows %v", got)
	}
	es := b.entries(t, "")
	if len(es) != 3 {
		t.Fatalf("%d entries, want 3", len(es))
	}
	byName := map[string]nextup.Entry{}
	for _, e := range es {
		byName[e.Name] = e
		if e.Source != waitlist.SourceImport || e.State != nextup.EntryWaiting {
			t.Errorf("%s: source %q state %s", e.Name, e.Source, e.State)
		}
	}
	ann, ben, fay := byName["Ann Lee"], byName["Ben Ode"], byName["Fay Lam"]
	if ann.Phone != "+447700900001" || ann.Service != "haircut" || ann.Staff != "Ana" || ann.PartySize != 1 ||
		!ann.Earliest.Equal(b.at(1, 0, 0)) || !ann.Latest.Equal(b.at(24, 0, 0).Add(-time.Microsecond)) || ann.Priority {
		t.Errorf("Ann: %+v", ann)
	}
	// 46387 is 31 Dec 2026: the whole day.
	if ben.Email != "" || ben.Phone != "+447700900002" || !ben.Priority || !ben.Earliest.Equal(b.at(2, 9, 0)) ||
		!ben.Latest.Equal(b.at(31, 0, 0).Add(-time.Microsecond)) {
		t.Errorf("Ben: %+v", ben)
	}
	if fay.PartySize != 3 || fay.Staff != "Ben" || !fay.Priority || fay.Service != "colour" {
		t.Errorf("Fay: %+v", fay)
	}
	// Fair order: priority first (Ben, Fay), then the file's order.
	if es[0].Name != "Ben Ode" || es[1].Name != "Fay Lam" || es[2].Name != "Ann Lee" {
		t.Errorf("order %s, %s, %s", es[0].Name, es[1].Name, es[2].Name)
	}
	// No "you're on the list" message: an import is not a sign-up.
	if ms := b.messages(t, ""); len(ms) != 0 {
		t.Errorf("%d messages queued, want none", len(ms))
	}
	if evs := b.audit(t, ann.ID); len(evs) != 1 || evs[0].Reason != "joined" || evs[0].Actor != nextup.ActorStaff || evs[0].Detail["source"] != "import" {
		t.Errorf("Ann's audit: %+v", evs)
	}
	for i, r := range res.Rows {
		if r.Outcome != waitlist.ImportImported || r.EntryID == "" || r.Row != []int{2, 3, 7}[i] {
			t.Errorf("rows[%d] = %+v", i, r)
		}
	}
}

func TestReimportIsIdempotentAndUpdatesWhatChanged(t *testing.T) {
	t.Parallel()
	checkReimport(t, importBundle(t))
}

// TestReimportOnPostgres: the same on PostgreSQL, whose transactions are
// READ COMMITTED and whose rows lock.
func TestReimportOnPostgres(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t, 4)
	db, err := postgres.Open(context.Background(), schema.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkReimport(t, withCatalogue(t, newBundleOn(t, db, nil)))
}

func checkReimport(t *testing.T, b *bundle) {
	b.importCSV(t, waitlistFile)
	before := b.entries(t, "")
	b.clock.Advance(time.Hour)
	again := b.importCSV(t, waitlistFile)
	if got := counts(again); got != "imported 0, updated 0, unchanged 3, rejected 3" {
		t.Fatalf("re-import: %s", got)
	}
	if after := b.entries(t, ""); !slices.EqualFunc(before, after, func(x, y nextup.Entry) bool {
		return x.ID == y.ID && x.UpdatedAt.Equal(y.UpdatedAt)
	}) {
		t.Fatal("re-importing the same file changed the entries")
	}
	for _, e := range before {
		if n := len(b.audit(t, e.ID)); n != 1 {
			t.Errorf("%s has %d audit rows after a re-import, want 1", e.Name, n)
		}
	}

	// The sheet changes: Ann now wants Ben and two people, Ben gives his
	// email, Fay's row is fixed in case only, Eve's date is fixed, and a
	// new person joins.
	changed := strings.NewReplacer(
		"07700 900001;Cut;1;02/12/2026;24/12/2026;ana", "07700 900001;Cut;2;02/12/2026;24/12/2026;ben",
		"Ben Ode;;", "Ben Ode;ben@example.com;",
		"Fay Lam;fay@example.com;;colour;3;;;Ben", "Fay Lam;FAY@example.com;;Colour;3;;;ben",
		"31/11/2026", "30/11/2027",
	).Replace(waitlistFile) + "Gus Orr;gus@example.com;;haircut;;;;;;\r\n"
	res := b.importCSV(t, changed)
	if got := counts(res); got != "imported 2, updated 2, unchanged 1, rejected 2" {
		t.Fatalf("changed file: %s %v", got, rejectedRows(res))
	}
	es := b.entries(t, "")
	if len(es) != 5 {
		t.Fatalf("%d entries, want 5", len(es))
	}
	byName := map[string]nextup.Entry{}
	for _, e := range es {
		byName[e.Name] = e
	}
	ann, ben := byName["Ann Lee"], byName["Ben Ode"]
	if ann.ID != before[2].ID || ann.PartySize != 2 || ann.Staff != "Ben" || !ann.JoinedAt.Equal(before[2].JoinedAt) {
		t.Errorf("Ann: %+v (was %+v)", ann, before[2])
	}
	if ben.ID != before[0].ID || ben.Email != "ben@example.com" || ben.Phone != "+447700900002" {
		t.Errorf("Ben: %+v", ben)
	}
	if evs := b.audit(t, ann.ID); len(evs) != 2 || evs[1].Reason != "updated" || evs[1].Detail["source"] != "import" {
		t.Errorf("Ann's audit: %+v", evs)
	}
	// And that file, imported again, changes nothing either.
	if got := counts(b.importCSV(t, changed)); got != "imported 0, updated 0, unchanged 5, rejected 2" {
		t.Errorf("changed file again: %s", got)
	}
}

// TestReimportDoesNotPutBackWhoLeftOrBooked: a row that has run its course
// is unchanged; a different row for the same person is a new request.
func TestReimportDoesNotPutBackWhoLeftOrBooked(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	file := "Name,Email,Service\nAnn,ann@example.com,haircut\nBen,ben@example.com,haircut\n"
	b.importCSV(t, file)
	es := b.entries(t, "")
	if _, _, err := b.svc.Leave(b.ctx, b.biz.ID, es[0].ID, nextup.ActorCustomer); err != nil {
		t.Fatal(err)
	}
	// Ben is offered a slot and claims it.
	sl := b.slot(t, waitlist.SlotParams{})
	o := onlyMove(t, b.release(t, sl.ID), nextup.MoveOffer)
	if _, err := b.svc.Claim(b.ctx, b.token(t, o.OfferID)); err != nil {
		t.Fatal(err)
	}
	res := b.importCSV(t, file)
	if got := counts(res); got != "imported 0, updated 0, unchanged 2, rejected 0" {
		t.Fatalf("%s", got)
	}
	if n := len(b.entries(t, "")); n != 0 {
		t.Fatalf("%d active entries after re-import, want 0", n)
	}
	res = b.importCSV(t, "Name,Email,Service,Party\nAnn,ann@example.com,haircut,2\n")
	if got := counts(res); got != "imported 1, updated 0, unchanged 0, rejected 0" {
		t.Fatalf("a new request: %s", got)
	}
}

func (b *bundle) release(t *testing.T, slotID string) []nextup.Move {
	t.Helper()
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, slotID, 0, waitlist.ReasonCancellation)
	if err != nil {
		t.Fatal(err)
	}
	return moves
}

// TestImportLeavesAloneWhatTheFileDoesNotSay: a column the file lacks is
// not reset, and a live offer's criteria are not changed under it.
func TestImportLeavesAloneWhatTheFileDoesNotSay(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	file := "Name,Email,Service,Earliest\nAnn,ann@example.com,haircut,01/12/2026\nBen,ben@example.com,haircut,02/12/2026\n"
	b.importCSV(t, file)
	es := b.entries(t, "")
	yes := true
	if _, _, err := b.svc.UpdateEntry(b.ctx, b.biz.ID, es[1].ID, waitlist.EntryPatch{Priority: &yes}); err != nil {
		t.Fatal(err)
	}
	if got := counts(b.importCSV(t, file)); got != "imported 0, updated 0, unchanged 2, rejected 0" {
		t.Fatalf("no priority column: %s", got)
	}
	// Ann holds an offer: her dates cannot change under it.
	sl := b.slot(t, waitlist.SlotParams{})
	o := onlyMove(t, b.release(t, sl.ID), nextup.MoveOffer)
	if o.EntryID != es[0].ID {
		t.Fatalf("offer to %s, want Ann", o.EntryID)
	}
	res := b.importCSV(t, strings.Replace(file, "Ann,ann@example.com,haircut,01/12/2026", "Ann,ann@example.com,haircut,01/12/2026 12:00", 1))
	if got := counts(res); got != "imported 0, updated 0, unchanged 1, rejected 1" || !strings.Contains(rejectedRows(res)[2], "live offer") {
		t.Fatalf("dates of an offered entry: %s %v", got, rejectedRows(res))
	}
	if e := b.entry(t, es[0].ID).Entry; !e.Earliest.Equal(b.at(0, 0, 0)) || e.State != nextup.EntryOffered {
		t.Fatalf("Ann changed: %+v", e)
	}
}

func TestImportRejectsASecondRowForTheSamePerson(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	res := b.importCSV(t, "Name,Email,Phone,Service\n"+
		"Ann,ann@example.com,,haircut\nAnn L,ANN@example.com,,haircut\nAnn,ann@example.com,,colour\n"+ // 2-4
		"Ben,,07700900002,haircut\nBen,,+44 7700 900002,haircut\n"+ // 5-6
		"Cy,,07700900003,haircut\nCy,cy@example.com,07700900003,haircut\n"+ // 7-8
		"Dee,dee@example.com,07700900004,haircut\nDee,,07700900004,haircut\n"+ // 9-10
		"Eli,eli@example.com,07700900004,haircut\n") // 11: another person with Dee's phone
	if got := counts(res); got != "imported 6, updated 0, unchanged 0, rejected 4" {
		t.Fatalf("%s %v", got, rejectedRows(res))
	}
	rej := rejectedRows(res)
	for row, first := range map[int]int{3: 2, 6: 5, 8: 7, 10: 9} {
		if want := fmt.Sprintf("row: the same person and service as row %d", first); rej[row] != want {
			t.Errorf("row %d: %q, want %q", row, rej[row], want)
		}
	}
}

// TestImportRowFailingInItsTransactionWritesNothing: a row that passes the
// checks of its own cells but fails against the stored entry (an earliest
// after the latest kept from before) is rejected and leaves no trace.
func TestImportRowFailingInItsTransactionWritesNothing(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	b.importCSV(t, "Name,Email,Service,Latest\nAnn,ann@example.com,haircut,05/12/2026\n")
	ann := b.entries(t, "")[0]
	res := b.importCSV(t, "Name,Email,Service,Earliest\nAnn,ann@example.com,haircut,10/12/2026\nBen,ben@example.com,haircut,\n")
	if got := counts(res); got != "imported 1, updated 0, unchanged 0, rejected 1" || !strings.HasPrefix(rejectedRows(res)[2], "latest: must not be before earliest") {
		t.Fatalf("%s %v", got, rejectedRows(res))
	}
	if e := b.entry(t, ann.ID).Entry; !e.Earliest.Equal(ann.Earliest) || !e.UpdatedAt.Equal(ann.UpdatedAt) || len(b.audit(t, ann.ID)) != 1 {
		t.Fatalf("Ann was written: %+v", e)
	}
}

func TestImportFileErrors(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	_, err := b.svc.ImportCSV(b.ctx, b.biz.ID, strings.NewReader("just,some,words\n"), waitlist.ImportOptions{})
	if !errors.Is(err, nextup.ErrInvalid) {
		t.Errorf("no header: %v", err)
	}
	_, err = b.svc.ImportCSV(b.ctx, b.biz.ID, strings.NewReader(strings.Repeat("x", csvrows.MaxBytes+1)), waitlist.ImportOptions{})
	if !errors.Is(err, csvrows.ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	_, err = b.svc.ImportCSV(b.ctx, "biz_nope", strings.NewReader("Name,Email\n"), waitlist.ImportOptions{})
	if !errors.Is(err, nextup.ErrNotFound) {
		t.Errorf("unknown business: %v", err)
	}
}

// TestImportMatchesOpenSlots: an imported row that fits an open slot is
// offered it at once, as a join is.
func TestImportMatchesOpenSlots(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	free := 0
	b.slot(t, waitlist.SlotParams{BookedSeats: &free})
	res := b.importCSV(t, "Name,Email,Service,Date\nAnn,ann@example.com,haircut,1/12/2026\n")
	if res.Imported != 1 {
		t.Fatalf("%s", counts(res))
	}
	if e := b.entry(t, res.Rows[0].EntryID); e.Entry.State != nextup.EntryOffered || e.Offer == nil {
		t.Fatalf("Ann: %+v", e)
	}
}

// FuzzImport: whatever the file, an import writes exactly the rows it
// reports (no partial write: the active entries are the imported ones, and
// a rejected row leaves nothing), every row it keeps or rejects has its own
// row number, and importing the same file again changes nothing.
func FuzzImport(f *testing.F) {
	for _, seed := range []string{
		waitlistFile,
		"Name,Email,Phone,Service,Party,Staff,Priority,Channel,Joined\nAnn,ann@example.com,07700 900001,cut,2,ana,yes,sms,1/11/2026\nAnn,ann@example.com,,colour,,,,,\n",
		"First name;Last name;Mobile;Date\nAnn;Lee;07700900001;46357.5\nBen;;07700900001;1/12/2026\n",
		"Name,Email,Service,Earliest,Latest\nAnn,ann@example.com,haircut,24/12/2026,1/12/2026\nBen \"B\",ben@example.com,haircut,,\n\"Cy,cy@example.com,haircut\n",
	} {
		f.Add(seed)
	}
	b := newBundle(f, f.TempDir(), nil)
	f.Cleanup(func() { b.store.Close() })
	gb := "GB"
	services := []nextup.Service{{Name: "haircut", Synonyms: []string{"cut"}}}
	n := 0
	f.Fuzz(func(t *testing.T, file string) {
		n++
		biz, _, err := b.svc.CreateBusiness(b.ctx, waitlist.CreateBusinessParams{Name: fmt.Sprintf("Salon %d", n), Timezone: "Europe/London"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.UpdateProfile(b.ctx, biz.ID, waitlist.ProfilePatch{Country: &gb, Services: &services}); err != nil {
			t.Fatal(err)
		}
		res, err := b.svc.ImportCSV(b.ctx, biz.ID, strings.NewReader(file), waitlist.ImportOptions{})
		if err != nil {
			if !errors.Is(err, nextup.ErrInvalid) && !errors.Is(err, csvrows.ErrTooLarge) {
				t.Fatalf("import: %v", err)
			}
			res = waitlist.ImportResult{}
		}
		if res.Updated != 0 || res.Unchanged != 0 || res.Imported != len(res.Rows) {
			t.Fatalf("a first import into an empty list: %s, %d rows", counts(res), len(res.Rows))
		}
		seen := map[int]bool{}
		for _, r := range res.Rows {
			if seen[r.Row] || r.Row < 1 || r.EntryID == "" {
				t.Fatalf("row %+v", r)
			}
			seen[r.Row] = true
		}
		for _, r := range res.Rejected {
			if seen[r.Row] || r.Row < 1 || len(r.Problems) == 0 {
				t.Fatalf("rejected %+v", r)
			}
			seen[r.Row] = true
		}
		es, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: biz.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != res.Imported {
			t.Fatalf("%d entries for %d imported rows", len(es), res.Imported)
		}
		again, err := b.svc.ImportCSV(b.ctx, biz.ID, strings.NewReader(file), waitlist.ImportOptions{})
		if err != nil {
			again = waitlist.ImportResult{}
		}
		if again.Imported != 0 || again.Updated != 0 || again.Unchanged != res.Imported || len(again.Rejected) != len(res.Rejected) {
			t.Fatalf("again: %s after %s", counts(again), counts(res))
		}
	})
}

// TestImportProperties draws sheets as spreadsheets write them (any
// separator, a BOM or not, CRLF or LF, quoted cells, good and bad values,
// the same people twice) and checks what FuzzImport does at the speed of
// an uninstrumented store: every row is kept or rejected under its own
// number, only kept rows are written, and a second import changes nothing.
func TestImportProperties(t *testing.T) {
	t.Parallel()
	b := importBundle(t)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		biz, _, err := b.svc.CreateBusiness(b.ctx, waitlist.CreateBusinessParams{Name: fmt.Sprintf("Salon %d", n), Timezone: "Europe/London"})
		if err != nil {
			rt.Fatal(err)
		}
		gb := "GB"
		if _, err := b.svc.UpdateProfile(b.ctx, biz.ID, waitlist.ProfilePatch{Country: &gb}); err != nil {
			rt.Fatal(err)
		}
		sep := rapid.SampledFrom([]string{",", ";", "\t"}).Draw(rt, "sep")
		eol := rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(rt, "eol")
		cols := rapid.SampledFrom([][]string{
			{"Name", "Email", "Phone", "Service", "Party", "From", "Until", "Notes"},
			{"Customer", "Mobile", "Treatment", "Date", "VIP"},
			{"First name", "Last name", "E-mail", "Service", "Guests", "Date", "Staff", "Channel"},
		}).Draw(rt, "header")
		values := map[string][]string{
			"Name": {"Ann", "Ben Ode", "Zoë", "", "Cy \"C\" Ray", "Dee\nDawson"}, "Customer": {"Ann", "Ben", ""},
			"First name": {"Ann", "Ben", ""}, "Last name": {"Lee", ""},
			"Email":  {"ann@example.com", "ben@example.com", "ANN@example.com", "", "not an address"},
			"E-mail": {"ann@example.com", "cy@example.com", "", "x@"},
			"Phone":  {"07700 900001", "+44 7700 900002", "", "12", "4.47E+11"}, "Mobile": {"07700 900001", "07700900003", "", "call me"},
			"Service": {"haircut", "colour", ""}, "Treatment": {"haircut", "nails", ""},
			"Party": {"", "1", "2 people", "0", "many"}, "Guests": {"", "3", "-1"},
			"From":  {"", "02/12/2026", "2026-12-03 10:00", "46360", "31/02/2026", "1/1/2020"},
			"Until": {"", "24/12/2026", "Dec 31, 2026", "01/12/2026", "yesterday"},
			"Date":  {"", "05/12/2026", "5.12.2026 14:00", "13/13/2026"},
			"Notes": {"", "a, b; c", "line one\nline two"}, "VIP": {"", "yes", "no", "perhaps"},
			"Staff": {"", "Ana"}, "Channel": {"", "sms", "email", "fax"},
		}
		quote := func(s string) string {
			if strings.ContainsAny(s, sep+"\"\r\n") {
				return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
			}
			return s
		}
		var file strings.Builder
		if rapid.Bool().Draw(rt, "bom") {
			file.WriteString("\uFEFF")
		}
		file.WriteString(strings.Join(cols, sep) + eol)
		rows := rapid.IntRange(0, 8).Draw(rt, "rows")
		var want []int // rows that say something: 2, 3, ... as the sheet numbers them
		for i := 0; i < rows; i++ {
			var cells []string
			says := false
			for _, c := range cols {
				v := rapid.SampledFrom(values[c]).Draw(rt, c)
				if v != "" && !slices.Contains([]string{"Party", "Guests", "Notes", "VIP", "Channel"}, c) {
					says = true
				}
				cells = append(cells, quote(v))
			}
			if says {
				want = append(want, i+2)
			}
			file.WriteString(strings.Join(cells, sep) + eol)
		}
		res, err := b.svc.ImportCSV(b.ctx, biz.ID, strings.NewReader(file.String()), waitlist.ImportOptions{})
		if err != nil {
			rt.Fatalf("import: %v\n%s", err, file.String())
		}
		var got []int
		for _, r := range res.Rows {
			got = append(got, r.Row)
		}
		for _, r := range res.Rejected {
			got = append(got, r.Row)
			if len(r.Problems) == 0 {
				rt.Fatalf("row %d rejected without a problem", r.Row)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			rt.Fatalf("rows %v, want %v\n%s", got, want, file.String())
		}
		es, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: biz.ID})
		if err != nil {
			rt.Fatal(err)
		}
		if res.Imported != len(res.Rows) || len(es) != res.Imported {
			rt.Fatalf("%s: %d entries", counts(res), len(es))
		}
		again, err := b.svc.ImportCSV(b.ctx, biz.ID, strings.NewReader(file.String()), waitlist.ImportOptions{})
		if err != nil || again.Imported != 0 || again.Updated != 0 || again.Unchanged != res.Imported || len(again.Rejected) != len(res.Rejected) {
			rt.Fatalf("again: %s (%v) after %s\n%s", counts(again), err, counts(res), file.String())
		}
	})
}
