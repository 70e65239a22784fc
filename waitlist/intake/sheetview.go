package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// What the owner sees of the mirror: one version's rows, the changes
// between two versions, and (before the mirror reads for real) the
// sheet's header with the field each column would fill.

// SheetVersion reads one of the business's mirrored versions, with its
// rows.
func (s *Intake) SheetVersion(ctx context.Context, businessID, id string) (nextup.SheetVersion, error) {
	var v nextup.SheetVersion
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		v, err = tx.SheetVersionGet(ctx, id)
		if err != nil || v.BusinessID != businessID {
			return core.NotFound("sheet version", id, err)
		}
		return nil
	})
	return v, err
}

// SheetDiff is what changed in a sheet from one version to another, row
// by row. Rows are paired by their key — the person and service a row
// names, as the import pairs rows with entries — so a row that moved
// (another was deleted above it) is the same row; a row naming no one is
// paired by its content. Cells are compared by their column's header.
type SheetDiff struct {
	From, To nextup.SheetVersion // without content; From is zero when To is the first version
	Columns  []string            // To's columns, then the ones only From had
	Added    []SheetRowDiff
	Removed  []SheetRowDiff
	Changed  []SheetRowDiff
	Same     int // rows alike in both
	// Partial says a version's rows were kept only in part
	// (SheetContent.Cut): rows past the cut are not compared.
	Partial bool
}

// SheetRowDiff is one row of a diff: where it was and is (row numbers as
// the sheet showed them, 0 when absent) and its cells by Columns.
type SheetRowDiff struct {
	Key            string
	FromRow, ToRow int
	Cells          []SheetCellDiff
}

// SheetCellDiff is one cell of a row of a diff.
type SheetCellDiff struct {
	Before, After string
	Changed       bool
}

// SheetDiff compares version toID with version fromID of the business's
// sheet; with fromID empty, with the version before toID (none: every row
// is added). A version kept before versions kept their rows cannot be
// compared (conflict), nor one past the newest SheetVersionsWithRows.
func (s *Intake) SheetDiff(ctx context.Context, businessID, fromID, toID string) (SheetDiff, error) {
	var from, to nextup.SheetVersion
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		if to, err = tx.SheetVersionGet(ctx, toID); err != nil || to.BusinessID != businessID {
			return core.NotFound("sheet version", toID, err)
		}
		if fromID == "" {
			vs, err := tx.SheetVersionList(ctx, businessID, 0)
			if err != nil {
				return err
			}
			for i, v := range vs {
				if v.ID == to.ID && i+1 < len(vs) {
					fromID = vs[i+1].ID
				}
			}
			if fromID == "" {
				return nil
			}
		}
		if from, err = tx.SheetVersionGet(ctx, fromID); err != nil || from.BusinessID != businessID {
			return core.NotFound("sheet version", fromID, err)
		}
		return nil
	})
	if err != nil {
		return SheetDiff{}, err
	}
	if to.Content == nil || (from.ID != "" && from.Content == nil) {
		return SheetDiff{}, nextup.Errorf(nextup.ErrConflict, nextup.CodeConflict,
			"that version's rows are not kept (only the newest %d versions keep theirs, and none kept before versions kept rows)", SheetVersionsWithRows)
	}
	d := DiffSheets(from.Content, to.Content)
	from.Content, to.Content = nil, nil
	d.From, d.To = from, to
	return d, nil
}

// sheetTable is a content's data rows by key, with its columns.
type sheetTable struct {
	columns []string
	keys    []string // in row order
	rows    map[string]sheetLine
}

type sheetLine struct {
	row   int
	cells map[string]string // by column
}

// tableOf reads a content into its columns and keyed data rows.
func tableOf(c *nextup.SheetContent) sheetTable {
	t := sheetTable{rows: map[string]sheetLine{}}
	if c == nil {
		return t
	}
	head := c.HeaderRow
	if head == 0 { // no header recognised: the first row that holds anything
		for i, r := range c.Rows {
			if !blankRow(r) {
				head = i + 1
				break
			}
		}
	}
	if head == 0 || head > len(c.Rows) {
		return t
	}
	t.columns = ColumnNames(c.Rows[head-1])
	seen := map[string]int{}
	for i := head; i < len(c.Rows); i++ {
		r := c.Rows[i]
		if blankRow(r) {
			continue
		}
		key := ""
		if i < len(c.Keys) {
			key = c.Keys[i]
		}
		if key == "" {
			sum := sha256.Sum256([]byte(strings.Join(r, "\x1f")))
			key = "row:" + hex.EncodeToString(sum[:8])
		}
		if seen[key]++; seen[key] > 1 {
			key = fmt.Sprintf("%s#%d", key, seen[key])
		}
		line := sheetLine{row: i + 1, cells: map[string]string{}}
		for j, v := range r {
			name := ""
			if j < len(t.columns) {
				name = t.columns[j]
			} else {
				name = "Column " + columnLetters(j)
				t.columns = append(t.columns, name)
			}
			line.cells[name] = v
		}
		t.keys = append(t.keys, key)
		t.rows[key] = line
	}
	return t
}

// ColumnNames names the columns of a header row: a cell's text, trimmed;
// "Column C" for a blank one; a second cell of one name with " (2)".
func ColumnNames(header []string) []string {
	out := make([]string, len(header))
	seen := map[string]int{}
	for i, h := range header {
		name := strings.TrimSpace(h)
		if name == "" {
			name = "Column " + columnLetters(i)
		}
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s (%d)", name, seen[name])
		}
		out[i] = name
	}
	return out
}

// columnLetters is a column's letters as a spreadsheet writes them (0: A).
func columnLetters(i int) string {
	s := ""
	for n := i + 1; n > 0; n = (n - 1) / 26 {
		s = string(rune('A'+(n-1)%26)) + s
	}
	return s
}

// DiffSheets compares two contents (from may be nil: every row of to is
// added).
func DiffSheets(from, to *nextup.SheetContent) SheetDiff {
	a, b := tableOf(from), tableOf(to)
	d := SheetDiff{Partial: (from != nil && from.Cut > 0) || (to != nil && to.Cut > 0)}
	d.Columns = append(d.Columns, b.columns...)
	for _, c := range a.columns {
		if !contains(d.Columns, c) {
			d.Columns = append(d.Columns, c)
		}
	}
	cellsOf := func(x, y *sheetLine) ([]SheetCellDiff, bool) {
		out := make([]SheetCellDiff, len(d.Columns))
		changed := false
		for i, c := range d.Columns {
			if x != nil {
				out[i].Before = x.cells[c]
			}
			if y != nil {
				out[i].After = y.cells[c]
			}
			out[i].Changed = strings.TrimSpace(out[i].Before) != strings.TrimSpace(out[i].After)
			changed = changed || out[i].Changed
		}
		return out, changed
	}
	for _, k := range b.keys {
		y := b.rows[k]
		x, ok := a.rows[k]
		if !ok {
			cells, _ := cellsOf(nil, &y)
			d.Added = append(d.Added, SheetRowDiff{Key: k, ToRow: y.row, Cells: cells})
			continue
		}
		cells, changed := cellsOf(&x, &y)
		if !changed {
			d.Same++
			continue
		}
		d.Changed = append(d.Changed, SheetRowDiff{Key: k, FromRow: x.row, ToRow: y.row, Cells: cells})
	}
	for _, k := range a.keys {
		if _, ok := b.rows[k]; ok {
			continue
		}
		x := a.rows[k]
		cells, _ := cellsOf(&x, nil)
		d.Removed = append(d.Removed, SheetRowDiff{Key: k, FromRow: x.row, Cells: cells})
	}
	return d
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// SheetPreview is a sheet's header as the mirror would read it: each
// header cell with the field its column fills (the owner's mapping, else
// what its name says), and a few rows below it.
type SheetPreview struct {
	Source    nextup.SheetSource
	HeaderRow int      // from 1; 0 when the sheet is empty
	Header    []string // the header row's cells
	Fields    []string // per header cell: the field it fills, "" for none
	Sample    [][]string
	// Recognised says the header was found (by its names, or by the
	// mapping); otherwise Header is the first row that holds anything,
	// for the owner to map.
	Recognised bool
}

// previewRows is how many rows below the header a preview shows.
const previewRows = 5

// PreviewSheet reads the sheet c names for the business (a Google Sheets
// link as its url is taken for its id, as SetSheet does), without
// importing anything: its header row and the field each column fills,
// with c's column mapping or, without one, as the import would recognise
// them. A Google Sheet without the business's connection code is
// sheet_not_verified, and shows nothing.
func (s *Intake) PreviewSheet(ctx context.Context, businessID string, c nextup.SheetConfig) (SheetPreview, error) {
	if c.URL != "" && c.SpreadsheetID == "" {
		if src := nextup.SheetLink(c.URL); src.SpreadsheetID != "" {
			c.URL, c.SpreadsheetID = "", src.SpreadsheetID
		}
	}
	src := sheetSource(&c)
	if err := src.Validate(); err != nil {
		return SheetPreview{}, core.Invalid(nextup.FieldError{Field: "url", Message: err.Error()})
	}
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return SheetPreview{}, err
	}
	rows, err := s.readSheet(ctx, src)
	if err != nil {
		return SheetPreview{}, err
	}
	if rows, err = verifySheet(b, src, rows); err != nil {
		return SheetPreview{}, err
	}
	p := SheetPreview{Source: src}
	recs := make([]csvrows.Record, len(rows))
	for i, r := range rows {
		recs[i] = csvrows.Record{Row: i + 1, Cells: r}
	}
	h, ok := csvrows.FindHeader(recs, sheetMapping(&c))
	if !ok && len(c.Columns) > 0 {
		h, ok = csvrows.FindHeader(recs, nil) // the sheet changed under the mapping: say what its names say
	}
	p.Recognised = ok
	if ok {
		p.HeaderRow = h.Row
	} else {
		for i, r := range rows {
			if !blankRow(r) {
				p.HeaderRow = i + 1
				break
			}
		}
	}
	if p.HeaderRow == 0 {
		return p, nil
	}
	p.Header = rows[p.HeaderRow-1]
	p.Fields = make([]string, len(p.Header))
	for i, cell := range p.Header {
		if ok {
			p.Fields[i] = string(h.Field(i))
		} else {
			p.Fields[i] = string(csvrows.FieldNamed(cell)) // what its name says, for the owner to go on from
		}
	}
	for _, r := range rows[p.HeaderRow:] {
		if len(p.Sample) == previewRows {
			break
		}
		if !blankRow(r) {
			p.Sample = append(p.Sample, r)
		}
	}
	return p, nil
}
