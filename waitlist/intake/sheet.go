package intake

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// The sheet mirror: a business's waitlist kept in a Google Sheet (or any
// published CSV) is read every few minutes by a durable timer and imported
// as a CSV file is (ImportRecords: one transaction a row, re-reading
// changes nothing), through the owner's column mapping when there is one.
// Every read whose content changed is kept as a version with its hash,
// its counts and its rows, for the owner to open and compare (sheetview.go);
// a row that cannot be read becomes a proposal with its problems instead
// of being dropped.
//
// The mirror works both ways with a Google Sheet. A claim by an entry that
// came from the sheet marks its row booked there (sheetmark.go). And a row
// deleted from the sheet withdraws its entry, with a grace rule so that a
// sheet caught half edited does not empty the list:
//
//   - only entries that came from the sheet (nextup.SourceSheet) and are
//     still waiting are withdrawn — never one holding a live offer or
//     booked — and a row that is there but cannot be read still counts as
//     its person's;
//   - a row must be missing on two reads running, a while apart: the
//     first marks its entry pending on the version (since when), and a
//     later read that still does not find it withdraws it (audited as
//     staff withdrawing it would be, and, like that, telling the person
//     nothing) — but only once sheetGraceGap has passed since the first
//     miss (half the sheet's interval, at least a minute): two reads a
//     moment apart (Read now just after the timer's read) see the same
//     half-edited sheet, and count as one;
//   - a read in which too many rows went at once — more than half of the
//     sheet's waiting entries, or more than MaxSheetWithdraw, or more than
//     half the sheet's rows — withdraws nothing: its missing rows are held
//     back on the version ("held back: N rows missing") until the owner
//     confirms (ConfirmSheetWithdrawals) or puts the rows back;
//   - so does the first read of a sheet (the owner pointed the mirror at
//     another sheet, or another tab): the entries of the sheet before it
//     that this one does not have are held back for the owner to confirm,
//     never withdrawn on their own.
//
// A Google Sheet is read, and written, only when it shows that it is the
// business's: one service account reads every sheet shared with it, so
// without that, staff of one business could name another business's
// spreadsheet id and import its customers. The proof is the business's
// connection code (SheetCode: "nextup-" and ten letters and digits,
// derived from the hash of the business's API key, which nobody else
// knows), which the owner types in any cell of the sheet: every read
// (SyncSheet, PreviewSheet) and every write-back first looks for it in the
// rows read, and without it refuses (409 sheet_not_verified), reading,
// storing and writing nothing. The code's cell is read as empty, so a row
// that holds only the code is no one's, and no header. A published CSV is
// public by nature and only read: it needs no code.
//
// Only the newest SheetVersionsWithRows versions keep their rows; older
// ones keep their hash, counts and missing rows.

// Bounds of a sheet's sync interval.
const (
	DefaultSheetEvery = 5 * time.Minute
	minSheetEvery     = time.Minute
	maxSheetEvery     = 24 * time.Hour
)

// MaxSheetWithdraw is the most entries one read of a sheet withdraws
// without the owner's word: a read that would withdraw more holds them
// all back.
const MaxSheetWithdraw = 20

// ReasonSheetRowDeleted is the audit reason of an entry withdrawn because
// its row was deleted from the sheet.
const ReasonSheetRowDeleted = "sheet_row_deleted"

// SheetVersionsWithRows is how many of a business's newest versions keep
// the rows they read; older versions keep their hash, counts and missing
// rows only (a sheet that changes all day would otherwise keep a copy of
// itself every few minutes, forever).
const SheetVersionsWithRows = 50

// sheetGraceGap is how long after a row was first found missing a read
// may withdraw its entry: half the sheet's interval (the timer's reads
// come an interval apart, give or take how long each takes), and never
// under a minute.
func sheetGraceGap(c *nextup.SheetConfig) time.Duration {
	return max(time.Minute, time.Duration(c.EverySeconds)*time.Second/2)
}

// sheetCodeAlphabet writes a connection code: lowercase letters and
// digits without i, l, o and u (Crockford's base 32), so that a code read
// off a screen is typed right.
const sheetCodeAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// SheetCode is the business's connection code, which the owner puts in a
// cell of the Google Sheet to show nextup that the sheet is theirs:
// "nextup-" and ten characters of an HMAC-SHA-256, keyed with the hash of
// the business's API key, of a fixed label and the business id. Nobody
// without that hash can make it; it is the same at every call.
func SheetCode(b nextup.Business) string {
	mac := hmac.New(sha256.New, []byte(b.APIKeyHash))
	mac.Write([]byte("nextup sheet connection code\x00" + b.ID))
	bits := binary.BigEndian.Uint64(mac.Sum(nil))
	out := []byte("nextup-")
	for i := range 10 {
		out = append(out, sheetCodeAlphabet[bits>>(59-5*i)&31])
	}
	return string(out)
}

// errNotVerified is a Google Sheet without the business's connection code.
func errNotVerified(code string) error {
	return nextup.Errorf(nextup.ErrConflict, nextup.CodeSheetNotVerified,
		"the sheet does not show that it is this business's: type the connection code %s in any cell of it (in the range nextup reads), then read it again", code)
}

// verifySheet checks that rows, as read from src, may be used by business
// b: a Google Sheet's must hold b's connection code in some cell
// (otherwise errNotVerified); a CSV URL's need not. It returns the rows
// with every cell holding the code read as empty.
func verifySheet(b nextup.Business, src nextup.SheetSource, rows [][]string) ([][]string, error) {
	if src.URL != "" {
		return rows, nil
	}
	code := SheetCode(b)
	clean, ok := withoutCode(rows, code)
	if !ok {
		return nil, errNotVerified(code)
	}
	return clean, nil
}

// withoutCode returns rows with every cell that holds code (in any case,
// among other text or not) emptied, leaving rows as they are, and whether
// any did.
func withoutCode(rows [][]string, code string) ([][]string, bool) {
	out := make([][]string, len(rows))
	found := false
	for i, r := range rows {
		out[i] = r
		cloned := false
		for j, c := range r {
			if !strings.Contains(strings.ToLower(c), code) {
				continue
			}
			if !cloned {
				out[i], cloned = slices.Clone(r), true
			}
			out[i][j], found = "", true
		}
	}
	return out, found
}

func sheetKey(businessID string) string { return nextup.TimerSheetSync + ":" + businessID }

func sheetSource(c *nextup.SheetConfig) nextup.SheetSource {
	return nextup.SheetSource{SpreadsheetID: c.SpreadsheetID, Range: c.Range, URL: c.URL}
}

// sheetMapping is the owner's column mapping of c, or nil.
func sheetMapping(c *nextup.SheetConfig) csvrows.Mapping {
	if c == nil || len(c.Columns) == 0 {
		return nil
	}
	m := csvrows.Mapping{}
	for _, col := range c.Columns {
		m[col.Header] = csvrows.Field(col.Field)
	}
	return m
}

// SetSheet points the business's mirror at a sheet (validated) and
// schedules its first read at once; nil stops the mirror. A Google Sheets
// link given as the url is taken for its spreadsheet id (nextup.SheetLink).
// A Google Sheet is read only once it holds the business's connection
// code (SheetCode).
func (s *Intake) SetSheet(ctx context.Context, businessID string, c *nextup.SheetConfig) (nextup.Business, error) {
	return s.setSheet(ctx, businessID, c, false)
}

// ConnectSheet is SetSheet followed by one read of the sheet at once,
// for a caller that shows the owner what came of it (the dashboard's
// Save). That read is the only one: the mirror's timer is scheduled an
// interval on, not at once, so that two reads never run side by side. A
// sheet that cannot be saved is the error with a zero Business; a sheet
// saved but not read (unreadable, or without the connection code) comes
// with its Business and the read's error.
func (s *Intake) ConnectSheet(ctx context.Context, businessID string, c *nextup.SheetConfig) (nextup.Business, SheetSync, error) {
	b, err := s.setSheet(ctx, businessID, c, c != nil)
	if err != nil || c == nil {
		return b, SheetSync{}, err
	}
	res, err := s.SyncSheet(ctx, businessID)
	return b, res, err
}

// setSheet is SetSheet; later schedules the first read an interval on
// instead of at once (the caller reads now).
func (s *Intake) setSheet(ctx context.Context, businessID string, c *nextup.SheetConfig, later bool) (nextup.Business, error) {
	if c != nil {
		if c.EverySeconds == 0 {
			c.EverySeconds = int(DefaultSheetEvery / time.Second)
		}
		if c.URL != "" && c.SpreadsheetID == "" {
			if src := nextup.SheetLink(c.URL); src.SpreadsheetID != "" {
				c.URL, c.SpreadsheetID = "", src.SpreadsheetID
			}
		}
		var fs []nextup.FieldError
		if err := sheetSource(c).Validate(); err != nil {
			fs = append(fs, nextup.FieldError{Field: "url", Message: err.Error()})
		}
		if e := time.Duration(c.EverySeconds) * time.Second; e < minSheetEvery || e > maxSheetEvery {
			fs = append(fs, nextup.FieldError{Field: "every_seconds", Message: "must be between 60 and 86400"})
		}
		fs = append(fs, validateColumns(c.Columns)...)
		if len(fs) > 0 {
			return nextup.Business{}, core.Invalid(fs...)
		}
	}
	var out nextup.Business
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		prof := bi.Profile
		prof.Sheet = c
		if err := w.Tx.BusinessProfileSet(ctx, businessID, prof); err != nil {
			return err
		}
		bi.Profile = prof
		out = bi.Business
		if c == nil {
			if err := w.Tx.TimerCancel(ctx, sheetKey(businessID)); err != nil {
				return err
			}
		} else {
			due := w.Now
			if later {
				due = due.Add(time.Duration(c.EverySeconds) * time.Second)
			}
			if err := w.Schedule(ctx, nextup.Timer{BusinessID: businessID, Kind: nextup.TimerSheetSync, SubjectID: businessID,
				Key: sheetKey(businessID), DueAt: due}); err != nil {
				return err
			}
		}
		detail := map[string]any{"source": sheetSourceString(c)}
		if c != nil && len(c.Columns) > 0 {
			detail["columns"] = c.Columns
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
			To: "sheet_set", Detail: detail})
	})
	return out, err
}

// maxSheetColumns bounds a column mapping.
const maxSheetColumns = 100

// validateColumns checks an owner's column mapping: known fields, each
// header once, and someone to reach (an email or a phone column).
func validateColumns(cols []nextup.SheetColumn) []nextup.FieldError {
	if len(cols) == 0 {
		return nil
	}
	if len(cols) > maxSheetColumns {
		return []nextup.FieldError{{Field: "columns", Message: fmt.Sprintf("at most %d columns", maxSheetColumns)}}
	}
	var fs []nextup.FieldError
	seen := map[string]bool{}
	contact := false
	for i, c := range cols {
		name := fmt.Sprintf("columns[%d]", i)
		if strings.TrimSpace(c.Header) == "" || len(c.Header) > 200 {
			fs = append(fs, nextup.FieldError{Field: name + ".header", Message: "must name a header cell of the sheet"})
		}
		if k := strings.ToLower(strings.TrimSpace(c.Header)); seen[k] {
			fs = append(fs, nextup.FieldError{Field: name + ".header", Message: "appears twice"})
		} else {
			seen[k] = true
		}
		if c.Field == "" {
			continue
		}
		f, ok := csvrows.ParseField(c.Field)
		if !ok {
			fs = append(fs, nextup.FieldError{Field: name + ".field", Message: "is not a field a column can fill"})
		}
		contact = contact || f == csvrows.FieldEmail || f == csvrows.FieldPhone
	}
	if !contact {
		fs = append(fs, nextup.FieldError{Field: "columns", Message: "map at least one column to the email or the phone"})
	}
	return fs
}

func sheetSourceString(c *nextup.SheetConfig) string {
	if c == nil {
		return ""
	}
	return sheetSource(c).String()
}

// SheetSync is what one read of the sheet did.
type SheetSync struct {
	// Changed says a version was kept: the content differed from the
	// last version's, or reading it again changed something (rows turned
	// away went in, entries missing twice were withdrawn).
	Changed bool
	Version nextup.SheetVersion
	Import  ImportResult // when Changed
}

// sheetHash is the hash a version keeps: of the rows as read and, when
// the owner mapped the columns, of the mapping (read another way, the
// same rows are another version).
func sheetHash(rows [][]string, cols []nextup.SheetColumn) string {
	raw, _ := json.Marshal(rows)
	if len(cols) > 0 {
		m, _ := json.Marshal(cols)
		raw = append(append(raw, 0), m...)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// SyncSheet reads the business's sheet now. Unchanged content (the same
// hash as the last version) imports nothing and keeps no version, unless
// the last read found rows missing that this one must look for again. A
// sheet that cannot be read is ErrUnavailable (sheet_unreadable), and a
// Google Sheet without the business's connection code ErrConflict
// (sheet_not_verified), changing nothing.
func (s *Intake) SyncSheet(ctx context.Context, businessID string) (SheetSync, error) {
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return SheetSync{}, err
	}
	cfg := b.Profile.Sheet
	if cfg == nil {
		return SheetSync{}, nextup.Errorf(nextup.ErrConflict, nextup.CodeNoSheet, "the business has no sheet to mirror (PUT …/sheet)")
	}
	src := sheetSource(cfg)
	rows, err := s.readSheet(ctx, src)
	if err != nil {
		return SheetSync{}, err
	}
	if rows, err = verifySheet(b, src, rows); err != nil {
		return SheetSync{}, err
	}
	read := sheetRead{at: s.Clock.Now(), gap: sheetGraceGap(cfg)}
	hash := sheetHash(rows, cfg.Columns)
	var last *nextup.SheetVersion
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		vs, err := tx.SheetVersionList(ctx, businessID, 1)
		if len(vs) == 1 {
			last = &vs[0]
		}
		return err
	}); err != nil {
		return SheetSync{}, err
	}
	read.first = last == nil || last.Source != src.String()
	// The same content again changes nothing, unless rows were turned
	// away last time (those may go in now: an offer answered, the
	// catalogue fixed; proposals are made once each anyway) or went
	// missing (a second read without them withdraws their entries).
	if last != nil && last.Hash == hash && last.Source == src.String() && last.Rejected == 0 {
		again, err := s.lookAgain(ctx, *last)
		if err != nil {
			return SheetSync{}, err
		}
		if !again {
			return SheetSync{Version: *last}, nil
		}
	}
	recs := make([]csvrows.Record, len(rows))
	for i, r := range rows {
		recs[i] = csvrows.Record{Row: i + 1, Cells: r}
	}
	res, err := s.ImportRecords(ctx, businessID, recs, ImportOptions{Source: nextup.SourceSheet, Columns: sheetMapping(cfg)})
	if err != nil && !errors.Is(err, nextup.ErrInvalid) {
		return SheetSync{}, err
	}
	headerless := err != nil
	v := nextup.SheetVersion{BusinessID: businessID, Source: src.String(), FetchedAt: s.Clock.Now(), Hash: hash,
		Rows: max(len(rows)-1, 0), Imported: res.Imported, Updated: res.Updated, Unchanged: res.Unchanged, Rejected: len(res.Rejected)}
	if res.HeaderRow > 0 {
		v.Rows = dataRows(rows, res.HeaderRow)
	}
	if headerless { // no header: the whole sheet needs a look
		v.Rejected = v.Rows
	}
	content := &nextup.SheetContent{Rows: rows, HeaderRow: res.HeaderRow}
	if len(res.Keys) > 0 {
		content.Keys = make([]string, len(rows))
		for row, k := range res.Keys {
			if row >= 1 && row <= len(rows) {
				content.Keys[row-1] = k
			}
		}
	}
	v.Content = content
	// Rows that cannot be read become proposals, once each (keyed by
	// their content), for staff to fix by hand.
	header := []string{}
	if res.HeaderRow >= 1 && res.HeaderRow <= len(rows) {
		header = rows[res.HeaderRow-1]
	} else if len(rows) > 0 {
		header = rows[0]
	}
	for _, rj := range res.Rejected {
		if rj.Row < 1 || rj.Row > len(rows) {
			continue
		}
		cells := rows[rj.Row-1]
		var lines, problems []string
		for i, c := range cells {
			if strings.TrimSpace(c) == "" {
				continue
			}
			name := fmt.Sprintf("column %d", i+1)
			if i < len(header) && header[i] != "" {
				name = header[i]
			}
			lines = append(lines, name+": "+c)
		}
		for _, p := range rj.Problems {
			problems = append(problems, p.Field+": "+p.Message)
		}
		rowSum := sha256.Sum256([]byte(strings.Join(cells, "\x1f")))
		if _, _, err := s.Propose(ctx, businessID, ProposeParams{Source: nextup.ProposalFromSheet,
			SourceRef: "row:" + hex.EncodeToString(rowSum[:12]), Excerpt: fmt.Sprintf("Row %d of %s\n%s", rj.Row, src, strings.Join(lines, "\n")),
			Problems: problems}); err != nil {
			return SheetSync{}, err
		}
	}
	// Rows gone from the sheet: the grace rule. A sheet whose header
	// could not be found says nothing about which rows are gone.
	if !headerless {
		if v.Missing, err = s.sheetGone(ctx, businessID, res, v.Rows, last, read); err != nil {
			return SheetSync{}, err
		}
	} else if last != nil {
		v.Missing = last.Missing // as they were: nothing was learnt
	}
	if last != nil && last.Hash == hash && last.Source == v.Source && v.Imported == 0 && v.Updated == 0 &&
		slices.Equal(stillMissing(last.Missing), v.Missing) {
		// Read again for the rows turned away or missing, and nothing
		// came of it: no version (a sheet with a row that stays wrong
		// would otherwise keep a copy of itself every few minutes).
		return SheetSync{Version: *last, Import: res}, nil
	}
	err = s.tx(ctx, func(w *work) error {
		v.ID, v.FetchedAt = w.s.Random.ID("shv"), after(last, w.Now)
		return w.addSheetVersion(ctx, v)
	})
	return SheetSync{Changed: true, Version: v, Import: res}, err
}

// addSheetVersion keeps v, and drops the rows of the version that falls
// past SheetVersionsWithRows with it.
func (w *work) addSheetVersion(ctx context.Context, v nextup.SheetVersion) error {
	if err := w.Tx.SheetVersionAdd(ctx, v); err != nil {
		return err
	}
	if _, err := w.Tx.SheetVersionTrim(ctx, v.BusinessID, SheetVersionsWithRows); err != nil {
		return fmt.Errorf("drop the rows of old sheet versions: %w", err)
	}
	return nil
}

// sheetRead is what the grace rule needs to know of a read besides what
// it found.
type sheetRead struct {
	at    time.Time     // when the rows were read
	gap   time.Duration // sheetGraceGap
	first bool          // the first read of this sheet: nothing before it, or another sheet
}

// after is now, or just after the last version when the clock has not
// moved past it (a fake clock in a demo): versions are listed newest
// first by when they were read, so each must come after the one before.
func after(last *nextup.SheetVersion, now time.Time) time.Time {
	if last != nil && !now.After(last.FetchedAt) {
		return last.FetchedAt.Add(time.Millisecond)
	}
	return now
}

// stillMissing are the missing rows of a version whose entries are still
// on the list (a withdrawn one is not missed by the next read).
func stillMissing(ms []nextup.SheetMissing) []nextup.SheetMissing {
	var out []nextup.SheetMissing
	for _, m := range ms {
		if m.State != nextup.SheetMissingWithdrawn {
			out = append(out, m)
		}
	}
	return out
}

// readSheet reads a sheet's rows, bounded in time (the import after it
// takes what it takes). A sheet that cannot be read is sheet_unreadable.
func (s *Intake) readSheet(ctx context.Context, src nextup.SheetSource) ([][]string, error) {
	if s.Sheets == nil {
		return nil, nextup.Errorf(nextup.ErrUnavailable, nextup.CodeSheetUnreadable, "this server cannot read sheets")
	}
	if err := s.BeforeRemote(ctx); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rows, err := s.Sheets.Read(rctx, src)
	if err != nil {
		return nil, nextup.Errorf(nextup.ErrUnavailable, nextup.CodeSheetUnreadable, "%v", err)
	}
	return rows, nil
}

// dataRows counts the rows below the header that hold anything.
func dataRows(rows [][]string, headerRow int) int {
	n := 0
	for _, r := range rows[min(headerRow, len(rows)):] {
		if !blankRow(r) {
			n++
		}
	}
	return n
}

func blankRow(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// lookAgain reports whether a read of unchanged content must still be
// imported: the last version has entries pending withdrawal, or kept for
// a live offer that has since ended.
func (s *Intake) lookAgain(ctx context.Context, last nextup.SheetVersion) (bool, error) {
	if last.MissingIn(nextup.SheetMissingPending) > 0 {
		return true, nil
	}
	if last.MissingIn(nextup.SheetMissingKept) == 0 {
		return false, nil
	}
	again := false
	err := s.Read(ctx, func(tx nextup.Tx) error {
		for _, m := range last.Missing {
			if m.State != nextup.SheetMissingKept {
				continue
			}
			e, err := tx.EntryGet(ctx, m.EntryID)
			if err != nil && !errors.Is(err, nextup.ErrNotFound) {
				return err
			}
			if err == nil && e.State == nextup.EntryWaiting {
				again = true
				return nil
			}
		}
		return nil
	})
	return again, err
}

// sheetGone applies the grace rule to one read: the entries that came from
// the sheet whose rows it did not find, each with what became of it (see
// the top of this file). rows is the read's count of data rows, last the
// version before it.
func (s *Intake) sheetGone(ctx context.Context, businessID string, res ImportResult, rows int, last *nextup.SheetVersion, read sheetRead) ([]nextup.SheetMissing, error) {
	present := map[string]bool{}
	for _, r := range res.Rows {
		present[r.EntryID] = true
	}
	halfRead := map[string]bool{}
	for _, k := range res.RejectedContacts {
		halfRead[k] = true
	}
	var expected []nextup.Entry
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: businessID})
		for _, e := range es {
			if e.Source == nextup.SourceSheet && e.EventID == "" {
				expected = append(expected, e)
			}
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("entries from the sheet: %w", err)
	}
	before := map[string]nextup.SheetMissing{}
	if last != nil {
		for _, m := range last.Missing {
			if m.Since.IsZero() { // kept before versions said since when
				m.Since = last.FetchedAt
			}
			before[m.EntryID] = m
		}
	}
	var gone []nextup.Entry
	fresh := 0
	for _, e := range expected {
		if present[e.ID] || slices.ContainsFunc(contactKeys(e.Email, e.Phone), func(k string) bool { return halfRead[k] }) {
			continue
		}
		gone = append(gone, e)
		if _, seen := before[e.ID]; !seen {
			fresh++
		}
	}
	lost := 0
	if last != nil {
		lost = last.Rows - rows
	}
	mass := fresh >= 2 && (2*fresh > len(expected) || fresh > MaxSheetWithdraw || (last != nil && 2*lost > last.Rows))
	out := make([]nextup.SheetMissing, 0, len(gone))
	perTx, withdrawn := s.Batch(len(gone), withdrawWrites), 0
	for _, e := range gone {
		m := nextup.SheetMissing{EntryID: e.ID, Name: e.Name, Since: read.at}
		prev, seen := before[e.ID]
		if seen {
			m.Since = prev.Since
		}
		switch {
		case read.first || mass || prev.State == nextup.SheetMissingHeld:
			m.State = nextup.SheetMissingHeld
		case !seen:
			m.State = nextup.SheetMissingPending
		case prev.State == nextup.SheetMissingPending && read.at.Sub(prev.Since) < read.gap:
			m.State = nextup.SheetMissingPending // missing again, but too soon after the first miss to count
		default: // missing on the read before too, a while ago
			if err := s.checkpointEvery(ctx, &withdrawn, perTx); err != nil {
				return nil, err
			}
			st, err := s.withdrawGone(ctx, e.ID, nextup.ActorSystem, nil, nil)
			if err != nil {
				return nil, err
			}
			m.State = st
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// withdrawWrites is the most one withdrawal writes on a bounded store:
// the entry, its audit row (and its webhook message) and the counts of
// its place in line.
const withdrawWrites = 3 + core.RankWrites

// checkpointEvery counts one more withdrawal in *n and, inside a request
// on a bounded store, commits the request's writes every perTx of them
// (as an import does between rows), so that many withdrawals never make
// one transaction too large.
func (s *Intake) checkpointEvery(ctx context.Context, n *int, perTx int) error {
	if *n > 0 && *n%perTx == 0 {
		if err := s.Checkpoint(ctx); err != nil {
			return fmt.Errorf("withdraw the entries of deleted rows: %w", err)
		}
	}
	*n++
	return nil
}

// withdrawGone withdraws an entry whose row was deleted from the sheet, in
// a transaction of its own, when it came from the sheet and is still
// waiting: it leaves the list, audited with the reason, and is told
// nothing (as when staff take someone off). It returns the entry's state
// as the version records it: withdrawn, kept (it holds a live offer), or
// withdrawn too for an entry that has ended meanwhile (nothing left to
// do). With stillGone, the transaction first asks it whether the row is
// still missing, and withdraws nothing when not (the state is then "").
func (s *Intake) withdrawGone(ctx context.Context, entryID, actor string, detail map[string]any,
	stillGone func(ctx context.Context, w *work) (bool, error)) (nextup.SheetMissingState, error) {
	state := nextup.SheetMissingWithdrawn
	err := s.tx(ctx, func(w *work) error {
		state = nextup.SheetMissingWithdrawn
		w.Actor = actor
		if stillGone != nil {
			gone, err := stillGone(ctx, w)
			if err != nil {
				return err
			}
			if !gone {
				state = ""
				return nil
			}
		}
		e, err := w.Tx.EntryGet(ctx, entryID)
		if err != nil {
			return fmt.Errorf("entry %s: %w", entryID, err)
		}
		switch {
		case e.Source != nextup.SourceSheet || e.State != nextup.EntryWaiting && e.State != nextup.EntryOffered:
			return nil // ended meanwhile: nothing to withdraw
		case e.State == nextup.EntryOffered:
			state = nextup.SheetMissingKept
			return nil
		}
		if err := w.Tx.EntrySetState(ctx, e.ID, []nextup.EntryState{nextup.EntryWaiting}, nextup.EntryLeft, w.Now); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return core.ErrRedecide
			}
			return fmt.Errorf("withdraw entry %s: %w", e.ID, err)
		}
		bi, err := w.Business(ctx, e.BusinessID)
		if err != nil {
			return err
		}
		d := map[string]any{"sheet": sheetSourceString(bi.Profile.Sheet)}
		for k, v := range detail {
			d[k] = v
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectEntry, SubjectID: e.ID,
			From: string(nextup.EntryWaiting), To: string(nextup.EntryLeft), Reason: ReasonSheetRowDeleted, Detail: d})
	})
	return state, err
}

// backInSheet reports whether old, an ended entry with the very values of
// the sheet row it, was withdrawn by the mirror because its row was
// deleted: its row is back, and is a request again.
func (w *work) backInSheet(ctx context.Context, old nextup.Entry, it importItem) (bool, error) {
	if old.State != nextup.EntryLeft || old.Source != nextup.SourceSheet || it.p.Source != nextup.SourceSheet {
		return false, nil
	}
	evs, err := w.Tx.AuditList(ctx, nextup.AuditFilter{BusinessID: old.BusinessID, SubjectType: nextup.SubjectEntry, SubjectID: old.ID})
	if err != nil {
		return false, fmt.Errorf("audit of entry %s: %w", old.ID, err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].To == string(nextup.EntryLeft) {
			return evs[i].Reason == ReasonSheetRowDeleted, nil
		}
	}
	return false, nil
}

// ConfirmSheetWithdrawals is the owner's word on a read that held rows
// back (too many went at once): the held entries that are still waiting
// are withdrawn now, audited as the owner's doing, and a version saying so
// is kept (the same content as the version confirmed, which must be the
// latest: after a newer read, look at that one). A version that held
// nothing back is a conflict. Each withdrawal's transaction checks again
// that the latest version still misses the row: a read that came in
// meanwhile and found it back keeps its entry on the list (and the
// version kept then has that read's content).
func (s *Intake) ConfirmSheetWithdrawals(ctx context.Context, businessID, versionID string) (nextup.SheetVersion, error) {
	var last nextup.SheetVersion
	err := s.Read(ctx, func(tx nextup.Tx) error {
		vs, err := tx.SheetVersionList(ctx, businessID, 1)
		if err != nil {
			return err
		}
		v, err := tx.SheetVersionGet(ctx, versionID)
		if err != nil || v.BusinessID != businessID {
			return core.NotFound("sheet version", versionID, err)
		}
		if len(vs) == 0 || vs[0].ID != v.ID {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeConflict, "the sheet has been read again since this version: look at the latest one")
		}
		last = v
		return nil
	})
	if err != nil {
		return nextup.SheetVersion{}, err
	}
	if last.MissingIn(nextup.SheetMissingHeld) == 0 {
		return nextup.SheetVersion{}, nextup.Errorf(nextup.ErrConflict, nextup.CodeConflict, "this version held nothing back")
	}
	done := map[string]nextup.SheetMissingState{}
	perTx, withdrawn := s.Batch(len(last.Missing), withdrawWrites), 0
	for _, m := range last.Missing {
		if m.State != nextup.SheetMissingHeld {
			continue
		}
		if err := s.checkpointEvery(ctx, &withdrawn, perTx); err != nil {
			return nextup.SheetVersion{}, err
		}
		st, err := s.withdrawGone(ctx, m.EntryID, nextup.ActorStaff, map[string]any{"confirmed": true, "version_id": last.ID},
			latestMisses(businessID, m.EntryID))
		if err != nil {
			return nextup.SheetVersion{}, err
		}
		done[m.EntryID] = st
	}
	var v nextup.SheetVersion
	err = s.tx(ctx, func(w *work) error {
		base := last
		vs, err := w.Tx.SheetVersionList(ctx, businessID, 1)
		if err != nil {
			return err
		}
		if len(vs) == 1 && vs[0].ID != last.ID {
			// Read again meanwhile: what that read found is the sheet now.
			if base, err = w.Tx.SheetVersionGet(ctx, vs[0].ID); err != nil {
				return err
			}
		}
		v = base
		v.Imported, v.Updated, v.Unchanged = 0, 0, 0
		v.Missing = make([]nextup.SheetMissing, 0, len(base.Missing))
		for _, m := range base.Missing {
			if st, ok := done[m.EntryID]; ok && st != "" {
				m.State = st
			}
			v.Missing = append(v.Missing, m)
		}
		v.ID, v.FetchedAt = w.s.Random.ID("shv"), after(&base, w.Now)
		return w.addSheetVersion(ctx, v)
	})
	return v, err
}

// latestMisses asks, in a withdrawal's transaction, whether the latest
// version of the business's sheet still misses the row of entry entryID.
func latestMisses(businessID, entryID string) func(ctx context.Context, w *work) (bool, error) {
	return func(ctx context.Context, w *work) (bool, error) {
		vs, err := w.Tx.SheetVersionList(ctx, businessID, 1)
		if err != nil || len(vs) == 0 {
			return false, err
		}
		return slices.ContainsFunc(vs[0].Missing, func(m nextup.SheetMissing) bool { return m.EntryID == entryID }), nil
	}
}

// SheetVersions lists the business's mirrored versions, newest first.
func (s *Intake) SheetVersions(ctx context.Context, businessID string) ([]nextup.SheetVersion, error) {
	var out []nextup.SheetVersion
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.SheetVersionList(ctx, businessID, 0)
		return err
	})
	return out, err
}

// syncSheetTimer reads the sheet of a sheet_sync timer that has been
// finished and rescheduled; a failure waits for the next read.
func (s *Intake) syncSheetTimer(ctx context.Context, t nextup.Timer) {
	if _, err := s.SyncSheet(ctx, t.BusinessID); err != nil {
		s.Log().Warn("sheet sync failed; the next read will try again", "business_id", t.BusinessID, "error", err)
	}
}

// nextSheetSync schedules the next read of a business's sheet, if it
// still has one.
func (w *work) nextSheetSync(ctx context.Context, businessID string) error {
	bi, err := w.Business(ctx, businessID)
	if err != nil {
		return err
	}
	c := bi.Profile.Sheet
	if c == nil {
		return nil
	}
	return w.Schedule(ctx, nextup.Timer{BusinessID: businessID, Kind: nextup.TimerSheetSync, SubjectID: businessID,
		Key: sheetKey(businessID), DueAt: w.Now.Add(time.Duration(c.EverySeconds) * time.Second)})
}

// SyncSheetTimer reads the sheet of a sheet_sync timer that waitlist's
// timer handler has finished and rescheduled (see syncSheetTimer).
func SyncSheetTimer(ctx context.Context, s *Intake, t nextup.Timer) { s.syncSheetTimer(ctx, t) }

// NextSheetSync schedules the next read of a business's sheet in w, if it
// still has one (see nextSheetSync).
func NextSheetSync(ctx context.Context, w *core.Work, businessID string) error {
	return wrap(w).nextSheetSync(ctx, businessID)
}
