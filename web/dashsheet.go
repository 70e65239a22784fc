package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// The sheet page of the dashboard (/dash/sheet): the owner pastes the
// link of the sheet their waitlist is kept in, sees its header row as
// nextup reads it, a choice of field for each column (what the import
// would recognise chosen already), saves, reads it now or stops the
// mirror, and opens each version the mirror kept: its rows, and what
// changed since the version before. The page shows the business's
// connection code, which a Google Sheet must hold in one of its cells
// before nextup reads it (waitlist.SheetCode).

// sheetField is one choice of the column selects, in the owner's words.
type sheetField struct{ Value, Label string }

// sheetFields are the fields a column can fill, as the owner reads them.
var sheetFields = []sheetField{
	{"", "not used"}, {"name", "Name"}, {"first_name", "First name"}, {"last_name", "Last name"}, {"email", "Email"},
	{"phone", "Phone"}, {"service", "Service"}, {"party_size", "Party size"}, {"earliest", "Earliest date"},
	{"latest", "Latest date"}, {"date", "Date wanted"}, {"staff", "Staff member"}, {"notes", "Notes"},
	{"priority", "Priority"}, {"channel", "Contact by"}, {"joined_at", "Joined on"},
	{"status", "Status (booked rows are marked here)"},
}

// sheetColumn is one column of the mapping form.
type sheetColumn struct {
	Index          int
	Letter, Header string
	Sample         string // the first row's cell, to recognise the column by
	Field          string
	Options        []sheetOption
}

type sheetOption struct {
	Value, Label string
	Selected     bool
}

// sheetVersionLine is one version in the list.
type sheetVersionLine struct {
	ID, At, What string
	Rows         int
	HeldBack     int
	Latest       bool
}

// sheetPageData fills the sheet page.
type sheetPageData struct {
	Title, Business, Staff, CSRF, Error, Notice string
	// Code is the business's connection code.
	Code string
	// The sheet mirrored now, if any.
	Connected    bool
	Link, Tab    string
	EveryMinutes int
	Writable     bool // a Google Sheet: claimed rows are marked
	// The sheet shown for mapping: the one connected, or a new link.
	Preview             bool
	PreviewLink         string
	PreviewTab          string
	PreviewWritable     bool
	PreviewEveryMinutes int
	Columns             []sheetColumn
	Unrecognised        bool
	ReadError           string
	NotVerified         bool // a Google Sheet without the connection code
	Versions            []sheetVersionLine
	// What the latest read held back, for the owner to confirm.
	Held   []string
	HeldID string
}

// sheetLink is the link the owner knows their sheet by.
func sheetLink(c *nextup.SheetConfig) string {
	if c.SpreadsheetID != "" {
		return "https://docs.google.com/spreadsheets/d/" + c.SpreadsheetID + "/edit"
	}
	return c.URL
}

// tabRange is the range that reads a tab of a Google Sheet ("" for the
// first tab), and tabOf the other way.
func tabRange(tab string) string {
	tab = strings.TrimSpace(tab)
	if tab == "" {
		return ""
	}
	return "'" + strings.ReplaceAll(tab, "'", "''") + "'!A:Z"
}

func tabOf(rng string) string {
	name, ok := strings.CutSuffix(rng, "!A:Z")
	if !ok || len(name) < 2 || name[0] != '\'' || name[len(name)-1] != '\'' {
		return ""
	}
	return strings.ReplaceAll(name[1:len(name)-1], "''", "'")
}

// versionWhat says in words what a read did.
func versionWhat(v nextup.SheetVersion) string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, one)
		case n > 1:
			parts = append(parts, fmt.Sprintf(many, n))
		}
	}
	add(v.Imported, "1 new on the list", "%d new on the list")
	add(v.Updated, "1 updated", "%d updated")
	add(v.Rejected, "1 row needs a look", "%d rows need a look")
	add(v.MissingIn(nextup.SheetMissingWithdrawn), "1 taken off the list (row deleted)", "%d taken off the list (rows deleted)")
	add(v.MissingIn(nextup.SheetMissingPending), "1 row missing, checked again at the next read", "%d rows missing, checked again at the next read")
	if n := v.MissingIn(nextup.SheetMissingHeld); n > 0 {
		parts = append(parts, fmt.Sprintf("held back: %d rows missing", n))
	}
	if len(parts) == 0 {
		return "no change to the list"
	}
	return strings.Join(parts, ", ")
}

// dashSheet is GET /dash/sheet (?link= shows a new sheet's columns
// before it is saved).
func (s *Server) dashSheet(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	ctx := r.Context()
	q := r.URL.Query()
	d := sheetPageData{Title: "Your sheet", Business: sc.Business.Name, Staff: sc.Staff.Email, CSRF: sc.CSRF,
		Notice: q.Get("notice"), Error: q.Get("error"), EveryMinutes: int(waitlist.DefaultSheetEvery / time.Minute),
		Code: waitlist.SheetCode(sc.Business)}
	cfg := sc.Business.Profile.Sheet
	if cfg != nil {
		d.Connected, d.Link, d.Tab, d.Writable = true, sheetLink(cfg), tabOf(cfg.Range), cfg.Writable()
		d.EveryMinutes = max(1, cfg.EverySeconds/60)
	}
	// The sheet to map: a link just pasted, or the one connected.
	var pc *nextup.SheetConfig
	if link := strings.TrimSpace(q.Get("link")); link != "" {
		pc = &nextup.SheetConfig{}
		src := nextup.SheetLink(link)
		pc.SpreadsheetID, pc.URL, pc.Range = src.SpreadsheetID, src.URL, tabRange(q.Get("tab"))
		if pc.URL != "" {
			pc.Range = ""
		}
		if cfg != nil && cfg.SpreadsheetID == pc.SpreadsheetID && cfg.URL == pc.URL && cfg.Range == pc.Range {
			pc.Columns = cfg.Columns // the same sheet: the owner's mapping
		}
	} else if cfg != nil {
		pc = cfg
	}
	if pc != nil {
		d.Preview, d.PreviewLink, d.PreviewTab, d.PreviewWritable = true, sheetLink(pc), tabOf(pc.Range), pc.Writable()
		d.PreviewEveryMinutes = d.EveryMinutes
		p, err := s.Svc.PreviewSheet(ctx, sc.Business.ID, *pc)
		switch {
		case nextup.ErrorCode(err) == nextup.CodeSheetNotVerified:
			d.NotVerified = true
		case err != nil && statusOf(err) == http.StatusBadRequest:
			d.ReadError = "That does not look like a link to a sheet. Paste the address of your Google Sheet, or of a sheet published as CSV."
		case err != nil:
			s.logger().Warn("sheet preview", "business_id", sc.Business.ID, "error", err)
			d.ReadError = "nextup could not read this sheet just now. Check the link, and that the sheet is shared with nextup (or published to the web), then try again."
		default:
			d.Unrecognised = !p.Recognised
			for i, h := range p.Header {
				col := sheetColumn{Index: i, Letter: columnLetter(i), Header: strings.TrimSpace(h), Field: p.Fields[i]}
				if len(p.Sample) > 0 && i < len(p.Sample[0]) {
					col.Sample = p.Sample[0][i]
				}
				for _, f := range sheetFields {
					col.Options = append(col.Options, sheetOption{Value: f.Value, Label: f.Label, Selected: f.Value == col.Field})
				}
				d.Columns = append(d.Columns, col)
			}
		}
	}
	vs, err := s.Svc.SheetVersions(ctx, sc.Business.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	for i, v := range vs {
		d.Versions = append(d.Versions, sheetVersionLine{ID: v.ID, At: v.FetchedAt.In(loc).Format("Mon 2 Jan 3:04 pm"), What: versionWhat(v),
			Rows: v.Rows, HeldBack: v.MissingIn(nextup.SheetMissingHeld), Latest: i == 0})
		if i == 0 {
			for _, m := range v.Missing {
				if m.State == nextup.SheetMissingHeld {
					d.Held, d.HeldID = append(d.Held, m.Name), v.ID
				}
			}
		}
	}
	s.renderStaff(w, http.StatusOK, "sheet", d)
}

// columnLetter is a column's letters (0: A).
func columnLetter(i int) string {
	out := ""
	for n := i + 1; n > 0; n = (n - 1) / 26 {
		out = string(rune('A'+(n-1)%26)) + out
	}
	return out
}

// sheetBack sends the browser back to the sheet page with a notice, or
// with an error and the link being worked on.
func sheetBack(w http.ResponseWriter, r *http.Request, notice, errWords, link, tab string) {
	q := url.Values{}
	if notice != "" {
		q.Set("notice", notice)
	}
	if errWords != "" {
		q.Set("error", errWords)
	}
	if link != "" {
		q.Set("link", link)
		if tab != "" {
			q.Set("tab", tab)
		}
	}
	http.Redirect(w, r, "/dash/sheet?"+q.Encode(), http.StatusSeeOther)
}

// dashSheetSave is POST /dash/sheet: connect the sheet with the columns
// as mapped, and read it at once (that read only: the mirror's timer
// reads next an interval on).
func (s *Server) dashSheetSave(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	f := r.PostFormValue
	link, tab := strings.TrimSpace(f("link")), strings.TrimSpace(f("tab"))
	src := nextup.SheetLink(link)
	c := &nextup.SheetConfig{SpreadsheetID: src.SpreadsheetID, URL: src.URL}
	if c.SpreadsheetID != "" {
		c.Range = tabRange(tab)
	}
	minutes, err := strconv.Atoi(cmpOr(f("every_minutes"), "5"))
	if err != nil || minutes < 1 || minutes > 24*60 {
		sheetBack(w, r, "", "Read it every 1 to 1440 minutes.", link, tab)
		return
	}
	c.EverySeconds = minutes * 60
	n, _ := strconv.Atoi(f("columns"))
	for i := range min(n, 100) {
		h := strings.TrimSpace(f("header_" + strconv.Itoa(i)))
		if h == "" {
			continue
		}
		c.Columns = append(c.Columns, nextup.SheetColumn{Header: h, Field: f("field_" + strconv.Itoa(i))})
	}
	// Saved and read now, so that the owner sees what came of it.
	biz, res, err := s.Svc.ConnectSheet(r.Context(), sc.Business.ID, c)
	if err != nil && biz.ID == "" {
		if statusOf(err) >= 500 {
			s.errorPage(w, r, err)
			return
		}
		sheetBack(w, r, "", sheetProblem(err), link, tab)
		return
	}
	notice := "Saved. nextup reads your sheet every " + minutesWords(minutes) + ". "
	switch {
	case nextup.ErrorCode(err) == nextup.CodeSheetNotVerified:
		notice += "It was not read: nextup cannot see your connection code " + waitlist.SheetCode(sc.Business) +
			" in it. Type the code in any empty cell of the sheet, then press Read now."
	case err != nil:
		s.logger().Warn("sheet read after saving", "business_id", sc.Business.ID, "error", err)
		notice += "It could not be read just now; nextup tries again at the next read."
	case res.Changed:
		notice += "Read now: " + versionWhat(res.Version) + "."
	default:
		notice += "Read now: nothing has changed since the last read."
	}
	sheetBack(w, r, notice, "", "", "")
}

// sheetProblem says what is wrong with a sheet the owner tried to save, in
// their words.
func sheetProblem(err error) string {
	var ne *nextup.Error
	if !errors.As(err, &ne) {
		return "That did not work. Try again."
	}
	for _, fe := range ne.Fields {
		switch {
		case fe.Field == "url":
			return "That does not look like a link to a sheet. Paste the address of your Google Sheet, or of a sheet published as CSV."
		case fe.Field == "columns":
			return "Choose which column holds the email or the phone: nextup needs a way to reach people."
		case strings.HasSuffix(fe.Field, ".header"):
			return "Two columns have the same heading. Give each column its own heading in the sheet, then choose again."
		}
	}
	return problemWords(err)
}

func minutesWords(m int) string {
	if m == 1 {
		return "minute"
	}
	return strconv.Itoa(m) + " minutes"
}

// dashSheetSync is POST /dash/sheet/sync: read the sheet now.
func (s *Server) dashSheetSync(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	res, err := s.Svc.SyncSheet(r.Context(), sc.Business.ID)
	switch {
	case err != nil && statusOf(err) >= 500 && statusOf(err) != http.StatusServiceUnavailable:
		s.errorPage(w, r, err)
		return
	case err != nil && statusOf(err) == http.StatusServiceUnavailable:
		sheetBack(w, r, "", "nextup could not read your sheet just now. It tries again at the next read; check that it is still shared.", "", "")
		return
	case nextup.ErrorCode(err) == nextup.CodeSheetNotVerified:
		sheetBack(w, r, "", "nextup read nothing: it cannot see your connection code "+waitlist.SheetCode(sc.Business)+
			" in the sheet. Type the code in any empty cell of the sheet, then read it again.", "", "")
		return
	case err != nil:
		sheetBack(w, r, "", "There is no sheet to read: connect one first.", "", "")
		return
	}
	notice := "Read: nothing has changed since the last read."
	if res.Changed {
		notice = "Read: " + versionWhat(res.Version) + "."
	}
	sheetBack(w, r, notice, "", "", "")
}

// dashSheetStop is POST /dash/sheet/stop: stop mirroring. The entries
// stay; the versions are kept.
func (s *Server) dashSheetStop(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	if _, err := s.Svc.SetSheet(r.Context(), sc.Business.ID, nil); err != nil {
		s.errorPage(w, r, err)
		return
	}
	sheetBack(w, r, "The sheet is no longer read. Everyone already on the list stays on it.", "", "", "")
}

// dashSheetConfirm is POST /dash/sheet/versions/{vid}/confirm: the owner
// confirms that the rows a read held back are gone for good.
func (s *Server) dashSheetConfirm(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	v, err := s.Svc.ConfirmSheetWithdrawals(r.Context(), sc.Business.ID, r.PathValue("vid"))
	if err != nil {
		if st := statusOf(err); st >= 500 || st == http.StatusNotFound {
			s.errorPage(w, r, err)
			return
		}
		sheetBack(w, r, "", "The sheet was read again since: look at the latest read.", "", "")
		return
	}
	n := v.MissingIn(nextup.SheetMissingWithdrawn)
	sheetBack(w, r, fmt.Sprintf("Done: %d taken off the list.", n), "", "", "")
}

// sheetCell is one cell of the version page's tables.
type sheetCell struct {
	Column       string // its column's name (a phone shows it before the cell)
	Text, Before string
	Changed      bool
}

// sheetRow is one row of the version page's tables.
type sheetRow struct {
	Row   int
	Kind  string // added, removed, changed (the diff), or ""
	Label string
	Cells []sheetCell
}

// sheetVersionData fills the version page.
type sheetVersionData struct {
	Title, Business, Staff, CSRF string
	At, What, FromAt             string
	Header                       []string
	Rows                         []sheetRow
	Cut                          int
	NoRows                       bool
	Columns                      []string
	Changes                      []sheetRow
	Same                         int
	First, Partial               bool
	NoDiff                       bool // the version before has no rows kept
	KeptRows                     int  // how many versions keep their rows
	Missing                      []sheetMissingLine
}

type sheetMissingLine struct{ Name, What string }

// missingWords says what became of an entry whose row was gone.
var missingWords = map[nextup.SheetMissingState]string{
	nextup.SheetMissingPending:   "row missing: taken off the list if a read some minutes later does not find it either",
	nextup.SheetMissingKept:      "row missing, but they have an offer open: left alone until it is answered",
	nextup.SheetMissingHeld:      "held back: too many rows went at once, or the sheet is a new one; nothing is taken off until you confirm",
	nextup.SheetMissingWithdrawn: "taken off the list: their row was deleted",
}

// dashSheetVersion is GET /dash/sheet/versions/{vid}: a version's rows,
// and what changed since the version before.
func (s *Server) dashSheetVersion(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	ctx := r.Context()
	v, err := s.Svc.SheetVersion(ctx, sc.Business.ID, r.PathValue("vid"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	d := sheetVersionData{Title: "Your sheet as read " + v.FetchedAt.In(loc).Format("Mon 2 Jan 3:04 pm"), Business: sc.Business.Name,
		Staff: sc.Staff.Email, CSRF: sc.CSRF, At: v.FetchedAt.In(loc).Format("Mon 2 Jan 3:04 pm"), What: versionWhat(v),
		KeptRows: waitlist.SheetVersionsWithRows}
	for _, m := range v.Missing {
		d.Missing = append(d.Missing, sheetMissingLine{Name: m.Name, What: missingWords[m.State]})
	}
	c := v.Content
	if c == nil {
		d.NoRows = true
		s.renderStaff(w, http.StatusOK, "sheetversion", d)
		return
	}
	d.Cut = c.Cut
	if c.HeaderRow >= 1 && c.HeaderRow <= len(c.Rows) {
		d.Header = waitlist.ColumnNames(c.Rows[c.HeaderRow-1])
	}
	for i, cells := range c.Rows {
		if i+1 == c.HeaderRow {
			continue
		}
		row := sheetRow{Row: i + 1}
		for j := range max(len(d.Header), len(cells)) {
			text := ""
			if j < len(cells) {
				text = cells[j]
			}
			row.Cells = append(row.Cells, sheetCell{Text: text})
		}
		d.Rows = append(d.Rows, row)
	}
	for _, row := range d.Rows {
		for len(d.Header) < len(row.Cells) {
			d.Header = append(d.Header, "Column "+columnLetter(len(d.Header)))
		}
		for j := range row.Cells {
			row.Cells[j].Column = d.Header[j]
		}
	}
	diff, err := s.Svc.SheetDiff(ctx, sc.Business.ID, "", v.ID)
	switch {
	case err != nil && statusOf(err) == http.StatusConflict:
		d.NoDiff = true
	case err != nil:
		s.logger().Warn("sheet diff", "business_id", sc.Business.ID, "version_id", v.ID, "error", err)
	}
	if err == nil {
		d.Columns, d.Same, d.First, d.Partial = diff.Columns, diff.Same, diff.From.ID == "", diff.Partial
		if !d.First {
			d.FromAt = diff.From.FetchedAt.In(loc).Format("Mon 2 Jan 3:04 pm")
		}
		add := func(kind, label string, rs []waitlist.SheetRowDiff) {
			for _, rd := range rs {
				row := sheetRow{Kind: kind, Label: label, Row: rd.ToRow}
				if kind == "removed" {
					row.Row = rd.FromRow
				}
				for j, cd := range rd.Cells {
					cell := sheetCell{Column: diff.Columns[j], Text: cd.After, Changed: cd.Changed && kind == "changed"}
					if kind == "removed" {
						cell.Text = cd.Before
					}
					if cell.Changed {
						cell.Before = cd.Before
					}
					row.Cells = append(row.Cells, cell)
				}
				d.Changes = append(d.Changes, row)
			}
		}
		add("added", "added", diff.Added)
		add("changed", "changed", diff.Changed)
		add("removed", "removed", diff.Removed)
	}
	s.renderStaff(w, http.StatusOK, "sheetversion", d)
}
