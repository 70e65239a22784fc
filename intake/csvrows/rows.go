package csvrows

import (
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// Options are what Parse needs to know of the business.
type Options struct {
	Location *time.Location // the business timezone; nil is UTC
	// Country (ISO 3166-1 alpha-2) reads phone numbers written without an
	// international prefix, and says whether 01/12/2026 is day or month first.
	Country   string
	DateOrder DateOrder // overrides the country's date order when set
	// The business's catalogue: a cell naming one of its services (or a
	// synonym) or staff, in any case, is written the catalogue's way. With
	// exactly one service, a sheet without a service column means it.
	Services []nextup.Service
	Staff    []string
	// Columns, when set, names the field of each header cell instead of
	// recognising them (see Mapping).
	Columns Mapping
}

// Row is one row below the header, read into the fields of a waitlist
// entry. Problems says what could not be read, each naming a field the way
// the API does (or "row" for a row the CSV reader could not read); a field
// with a problem is left zero. Checks that need more than the cell (a name
// is required, latest not before earliest) are the caller's.
type Row struct {
	Row       int // as a spreadsheet shows it: the header is row 1 in most files
	Name      string
	Email     string
	Phone     string // E.164
	Service   string
	Staff     string
	Notes     string
	Status    string // what the sheet's status column says (read, not stored)
	Channel   nextup.Channel
	PartySize int // 0 when blank
	Earliest  time.Time
	Latest    time.Time
	JoinedAt  time.Time
	Priority  bool
	Problems  []nextup.FieldError
	has       map[Field]bool
}

// Has reports whether the sheet says anything about f for this row: it has
// a column for it (for FieldName, a name or a first or last name column;
// for FieldEarliest and FieldLatest, a date column that fills them). An
// update from a sheet leaves alone what the sheet does not say.
func (r Row) Has(f Field) bool { return r.has[f] }

// Sheet is a parsed sheet: its header and its rows, blank ones left out.
type Sheet struct {
	Header Header
	Rows   []Row
}

// Parse finds the header among recs and reads every row below it. A sheet
// without a recognisable header is an error of kind nextup.ErrInvalid;
// more than MaxRows rows is ErrTooLarge. Everything else that is wrong is
// a row's Problems.
func Parse(recs []Record, o Options) (Sheet, error) {
	var mapping map[string]Field
	if o.Columns != nil {
		mapping = o.Columns.normalized()
	}
	h, ok := findHeader(recs, mapping)
	if !ok {
		msg := "no header row: one of the first rows must name the columns, at least a name, email or phone column and one more (name, email, phone, service, party size, earliest, latest, ...)"
		if mapping != nil {
			msg = "no header row: none of the first rows has the columns chosen for the name, email or phone"
		}
		if len(recs) == 0 {
			msg = "the file is empty"
		}
		return Sheet{}, &nextup.Error{Kind: nextup.ErrInvalid, Code: nextup.CodeValidation, Message: msg,
			Fields: []nextup.FieldError{{Field: "file", Message: msg}}}
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.DateOrder == DateOrderCountry {
		o.DateOrder = OrderFor(o.Country)
	}
	p := parser{o: o, h: h}
	p.services, p.staff = newCatalogue(o.Services, o.Staff)
	p.has = map[Field]bool{}
	for f := range h.Columns {
		p.has[f] = true
	}
	if h.Has(FieldFirstName) || h.Has(FieldLastName) {
		p.has[FieldName] = true
	}
	if h.Has(FieldDate) {
		p.has[FieldEarliest] = true
		p.has[FieldLatest] = true
	}
	if !h.Has(FieldService) && len(o.Services) == 1 {
		p.has[FieldService] = true
	}
	sh := Sheet{Header: h}
	for _, rec := range recs {
		if rec.Row <= h.Row {
			continue
		}
		if rec.Err != nil {
			sh.Rows = append(sh.Rows, Row{Row: rec.Row, has: p.has,
				Problems: []nextup.FieldError{{Field: "row", Message: rec.Err.Error()}}})
		} else if r, ok := p.row(rec); ok {
			sh.Rows = append(sh.Rows, r)
		}
		if len(sh.Rows) > MaxRows {
			return Sheet{}, fmt.Errorf("%w: a file may have at most %d rows below its header", ErrTooLarge, MaxRows)
		}
	}
	return sh, nil
}

type parser struct {
	o               Options
	h               Header
	has             map[Field]bool
	services, staff catalogue
}

// cell returns the first non-blank cell of the columns naming f.
func (p *parser) cell(rec Record, f Field) string {
	for _, col := range p.h.Columns[f] {
		if col < len(rec.Cells) && strings.TrimSpace(rec.Cells[col]) != "" {
			return strings.TrimSpace(rec.Cells[col])
		}
	}
	return ""
}

// row reads one record; ok is false for a blank row.
func (p *parser) row(rec Record) (Row, bool) {
	c := func(f Field) string { return p.cell(rec, f) }
	someone := false
	for _, f := range []Field{FieldName, FieldFirstName, FieldLastName, FieldEmail, FieldPhone, FieldService,
		FieldEarliest, FieldLatest, FieldDate, FieldStaff} {
		if c(f) != "" {
			someone = true
		}
	}
	if !someone {
		return Row{}, false
	}
	r := Row{Row: rec.Row, has: p.has, Notes: c(FieldNotes), Status: c(FieldStatus)}
	bad := func(f Field, err error) {
		r.Problems = append(r.Problems, nextup.FieldError{Field: string(f), Message: err.Error()})
	}
	r.Name = oneLine(c(FieldName))
	if r.Name == "" {
		r.Name = oneLine(c(FieldFirstName) + " " + c(FieldLastName))
	}
	r.Email = strings.TrimSpace(strings.TrimPrefix(c(FieldEmail), "mailto:"))
	var err error
	if r.Phone, err = NormalizePhone(c(FieldPhone), p.o.Country); err != nil {
		bad(FieldPhone, err)
	}
	r.Service = p.services.canon(c(FieldService))
	if r.Service == "" && !p.h.Has(FieldService) && len(p.o.Services) == 1 {
		r.Service = p.o.Services[0].Name
	}
	r.Staff = p.staff.canon(c(FieldStaff))
	if v := c(FieldPartySize); v != "" {
		if r.PartySize, err = parseParty(v); err != nil {
			bad(FieldPartySize, err)
		}
	}
	if r.Priority, err = parseYes(c(FieldPriority)); err != nil {
		bad(FieldPriority, err)
	}
	if r.Channel, err = parseChannel(c(FieldChannel)); err != nil {
		bad(FieldChannel, err)
	}
	when := func(f Field, v string, latest bool) (stamp, time.Time) {
		if v == "" {
			return stamp{}, time.Time{}
		}
		st, err := parseStamp(v, p.o.DateOrder)
		if err != nil {
			bad(f, err)
			return stamp{}, time.Time{}
		}
		return st, st.at(p.o.Location, latest)
	}
	_, r.Earliest = when(FieldEarliest, c(FieldEarliest), false)
	_, r.Latest = when(FieldLatest, c(FieldLatest), true)
	if v := c(FieldDate); v != "" {
		// A date column is the earliest; with no latest column, a date
		// without a time is that whole day.
		st, t := when(FieldEarliest, v, false)
		r.Earliest = t
		if !p.h.Has(FieldLatest) && !t.IsZero() && st.dayOnly() {
			r.Latest = st.at(p.o.Location, true)
		}
	}
	_, r.JoinedAt = when(FieldJoinedAt, c(FieldJoinedAt), false)
	return r, true
}
