package intake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// SourceImport is the source lane of entries imported from a file.
const SourceImport = "import"

// ImportOutcome is what an import did with one row.
type ImportOutcome string

// Import outcomes of a row that was not rejected.
const (
	ImportImported  ImportOutcome = "imported"  // a new entry
	ImportUpdated   ImportOutcome = "updated"   // the person's waiting entry took the row's values
	ImportUnchanged ImportOutcome = "unchanged" // the row was already there
)

// ImportOptions tune how a file is read.
type ImportOptions struct {
	// DateOrder overrides the business's country in reading 01/12/2026.
	DateOrder csvrows.DateOrder
	// Source is the source lane of the entries made: SourceImport when
	// empty; the sheet mirror's is nextup.SourceSheet.
	Source string
	// Columns, when set, names the field of each header cell instead of
	// recognising the header by its names (the owner's column mapping).
	Columns csvrows.Mapping
}

// ImportResult says what an import did, row by row.
type ImportResult struct {
	Imported, Updated, Unchanged int
	Rejected                     []ImportRejected // in row order
	Rows                         []ImportRow      // every row not rejected, in row order
	IgnoredColumns               []string         // header cells naming no field
	// HeaderRow is the header's row number.
	HeaderRow int
	// Keys are, by row number, the person and service of each row that
	// names someone (RowKey), rejected rows too: how the rows of two
	// reads of a sheet are paired.
	Keys map[int]string
	// RejectedContacts are the people (Entry.ContactKey of the email,
	// and of the phone) of the rows rejected: a row half edited still
	// says whose it is.
	RejectedContacts []string
}

// RowKey names the person and service of a row: the person's
// Entry.ContactKey (the email, else the phone) and the service, as the
// import pairs a row with an entry.
func RowKey(email, phone, service string) string {
	return nextup.Entry{Email: email, Phone: phone}.ContactKey() + "|" + service
}

// contactKeys are the ContactKeys a row or an entry can be known by: its
// email's, and its phone's.
func contactKeys(email, phone string) []string {
	var out []string
	if strings.TrimSpace(email) != "" {
		out = append(out, nextup.Entry{Email: email}.ContactKey())
	}
	if strings.TrimSpace(phone) != "" {
		out = append(out, nextup.Entry{Phone: phone}.ContactKey())
	}
	return out
}

// ImportRow is a row that was imported, updated or found unchanged.
type ImportRow struct {
	Row     int
	Outcome ImportOutcome
	EntryID string
}

// ImportRejected is a row that was left out, and why.
type ImportRejected struct {
	Row      int
	Problems []nextup.FieldError
}

// ImportCSV reads a CSV file (see package csvrows) and imports its rows
// into the business's waitlist (see ImportRecords). A file too large is
// csvrows.ErrTooLarge; one without a header is nextup.ErrInvalid.
func (s *Intake) ImportCSV(ctx context.Context, businessID string, r io.Reader, o ImportOptions) (ImportResult, error) {
	recs, err := csvrows.ReadCSV(r)
	if err != nil {
		return ImportResult{}, err
	}
	return s.ImportRecords(ctx, businessID, recs, o)
}

// ImportRecords imports a sheet's rows into the business's waitlist. Each
// good row becomes an entry as Join makes one (source "import", matched
// against open slots at once, no "you're on the list" message); each bad
// row is reported with its number and problems and left out, and the good
// rows are kept.
//
// A row is keyed by its person (Entry.ContactKey: the email, else the
// phone) and its service, as Join's already_waiting is. Importing the same
// file again changes nothing:
//
//   - a row whose person already waits (or holds an offer) for that service
//     is unchanged when the entry already has the row's values, and
//     otherwise updated to them, as UpdateEntry does (audited, matched
//     again) — a column the file does not have is left alone, and so is the
//     place in line; a row that would change the criteria of an entry
//     holding a live offer is rejected (entry_has_live_offer) until the
//     offer is answered;
//   - a row whose person's entry for that service has ended (booked, left,
//     expired) with the row's very values is unchanged: that row was
//     imported before and has run its course, and a person who booked or
//     left is not put back on the list by the same file; a row that differs
//     is a new request and a new entry;
//   - a second row for the same person and service in one file is rejected
//     (it names the first), so the file has one meaning; a row with only a
//     phone is the same person as one with that phone and an email, since
//     an import adds an email to a person known by phone.
//
// Transactions: each row is one transaction (the row's checks, the entry
// or its update, its audit row, and any offer the matching makes), so a
// bad or failing row writes nothing and never undoes another, and a file
// of thousands of rows holds no lock for long. Rows are checked against
// the entries that had ended when the import began. If the store fails
// partway, the rows before are kept and the error says which row; since
// an import is idempotent, importing the file again finishes the job.
func (s *Intake) ImportRecords(ctx context.Context, businessID string, recs []csvrows.Record, o ImportOptions) (ImportResult, error) {
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return ImportResult{}, err
	}
	loc, err := b.Location()
	if err != nil {
		return ImportResult{}, fmt.Errorf("business %s timezone %q: %w", b.ID, b.Timezone, err)
	}
	sheet, err := csvrows.Parse(recs, csvrows.Options{Location: loc, Country: b.Profile.Country, DateOrder: o.DateOrder,
		Services: b.Profile.Services, Staff: b.Profile.Staff, Columns: o.Columns})
	if err != nil {
		return ImportResult{}, err
	}
	source := cmp.Or(o.Source, SourceImport)
	res := ImportResult{IgnoredColumns: sheet.Header.Ignored, Rejected: []ImportRejected{}, Rows: []ImportRow{},
		HeaderRow: sheet.Header.Row, Keys: map[int]string{}}
	reject := func(row int, f ...nextup.FieldError) {
		res.Rejected = append(res.Rejected, ImportRejected{Row: row, Problems: f})
	}
	now := s.Clock.Now()
	var todo []importItem
	seen := rowsSeen{byKey: map[string]int{}, byPhone: map[string]int{}}
	services := map[string]bool{}
	for _, r := range sheet.Rows {
		if r.Email != "" || r.Phone != "" {
			res.Keys[r.Row] = RowKey(r.Email, r.Phone, r.Service)
		}
		it := importItem{row: r, p: entries.JoinParams{Name: r.Name, Email: r.Email, Phone: r.Phone, Channel: r.Channel,
			Service: r.Service, PartySize: r.PartySize, Earliest: r.Earliest, Latest: r.Latest, Staff: r.Staff,
			Priority: r.Priority, Source: source, JoinedAt: r.JoinedAt}}
		if f := checkRow(r, &it.p, now); len(f) > 0 {
			reject(r.Row, f...)
			res.RejectedContacts = append(res.RejectedContacts, contactKeys(r.Email, r.Phone)...)
			continue
		}
		if row, dup := seen.add(it); dup {
			reject(r.Row, nextup.FieldError{Field: "row", Message: fmt.Sprintf("the same person and service as row %d", row)})
			continue
		}
		services[it.p.Service] = true
		todo = append(todo, it)
	}
	ended, err := s.endedEntries(ctx, businessID, services)
	if err != nil {
		return res, err
	}
	// A row writes its entry, an audit row and what matching it offers:
	// on a bounded store a request commits every few rows (inside a
	// request the rows share its transaction; alone each has its own).
	perTx := s.Batch(len(todo), rowWrites)
	for i, it := range todo {
		if i > 0 && i%perTx == 0 {
			if err := s.Checkpoint(ctx); err != nil {
				return res, fmt.Errorf("import row %d: %w (the rows before it are kept; importing the file again finishes the job)", it.row.Row, err)
			}
		}
		var out ImportRow
		err := s.tx(ctx, func(w *work) error {
			w.Actor = nextup.ActorStaff
			var err error
			out, err = w.importRow(ctx, businessID, it, ended)
			return err
		})
		var ne *nextup.Error
		switch {
		case err == nil:
			res.Rows = append(res.Rows, out)
			switch out.Outcome {
			case ImportImported:
				res.Imported++
			case ImportUpdated:
				res.Updated++
			case ImportUnchanged:
				res.Unchanged++
			}
		case errors.As(err, &ne) && (errors.Is(err, nextup.ErrInvalid) || errors.Is(err, nextup.ErrConflict)):
			f := ne.Fields
			if len(f) == 0 {
				f = []nextup.FieldError{{Field: "row", Message: ne.Message}}
			}
			reject(it.row.Row, f...)
			res.RejectedContacts = append(res.RejectedContacts, contactKeys(it.p.Email, it.p.Phone)...)
		default:
			return res, fmt.Errorf("import row %d: %w (the rows before it are kept; importing the file again finishes the job)", it.row.Row, err)
		}
	}
	slices.SortFunc(res.Rejected, func(a, b ImportRejected) int { return a.Row - b.Row })
	return res, nil
}

// rowWrites is the most one imported row writes: the entry, its audit row,
// the counts of its place (core.RankWrites), and an offer matching it may
// make (the offer and its marker, the entry again, the slot, audit rows,
// the message, timers and their keys).
const rowWrites = 15 + core.RankWrites

// importItem is a row checked and ready to import.
type importItem struct {
	row csvrows.Row
	p   entries.JoinParams
}

// key is the row's person and service, as Join's duplicate check has it.
func (it importItem) key() string {
	return nextup.Entry{Email: it.p.Email, Phone: it.p.Phone}.ContactKey() + "\x00" + it.p.Service
}

// rowsSeen finds a second row for one person and service in a file. A
// person is their email, else their phone (Entry.ContactKey); and since an
// import adds an email to a person known by phone (importRow), a row with
// only a phone is also the person of a row with an email and that phone.
type rowsSeen struct {
	byKey   map[string]int // person and service → the first row
	byPhone map[string]int // phone and service → the first row with that phone
}

// add records the row; dup is true, with the earlier row, if it was seen.
func (s rowsSeen) add(it importItem) (row int, dup bool) {
	key := it.key()
	phone := ""
	if it.p.Phone != "" {
		phone = nextup.Entry{Phone: it.p.Phone}.ContactKey() + "\x00" + it.p.Service
	}
	if row, dup := s.byKey[key]; dup {
		return row, true
	}
	if phone != "" && it.p.Email == "" {
		if row, dup := s.byPhone[phone]; dup {
			return row, true
		}
	}
	if phone != "" && it.p.Email != "" {
		if row, dup := s.byKey[phone]; dup {
			return row, true
		}
	}
	s.byKey[key] = it.row.Row
	if _, taken := s.byPhone[phone]; phone != "" && !taken {
		s.byPhone[phone] = it.row.Row
	}
	return 0, false
}

// checkRow runs Join's validation on a row's params (normalising them as
// Join does) and merges its problems with the ones found in reading the
// cells: a cell that could not be read is reported once, as itself.
func checkRow(r csvrows.Row, p *entries.JoinParams, now time.Time) []nextup.FieldError {
	f := slices.Clone(r.Problems)
	bad := map[string]bool{}
	for _, x := range f {
		bad[x.Field] = true
	}
	if bad["row"] {
		return f // the CSV reader could not read it: nothing more to say
	}
	var ne *nextup.Error
	if err := entries.ValidateJoin(p, now); errors.As(err, &ne) {
		for _, x := range ne.Fields {
			switch {
			case bad[x.Field]:
			case x.Field == "email" && p.Email == "" && bad["phone"]: // "email or phone is required": the phone was given
			case x.Field == "service" && p.Service == "":
				f = append(f, nextup.FieldError{Field: "service", Message: "is required"})
			default:
				f = append(f, x)
			}
		}
	}
	if p.JoinedAt.After(now) {
		f = append(f, nextup.FieldError{Field: "joined_at", Message: "must not be in the future"})
	}
	return f
}

// endedEntries returns the booked, left and expired entries of the given
// services, by person and service (importItem.key).
func (s *Intake) endedEntries(ctx context.Context, businessID string, services map[string]bool) (map[string][]nextup.Entry, error) {
	out := map[string][]nextup.Entry{}
	err := s.Read(ctx, func(tx nextup.Tx) error {
		for svc := range services {
			for _, st := range []nextup.EntryState{nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired} {
				es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: businessID, Service: svc, State: st})
				if err != nil {
					return fmt.Errorf("%s entries of %q: %w", st, svc, err)
				}
				for _, e := range es {
					k := e.ContactKey() + "\x00" + e.Service
					out[k] = append(out[k], e)
				}
			}
		}
		return nil
	})
	return out, err
}

// importRow imports one checked row in the transaction of w.
func (w *work) importRow(ctx context.Context, businessID string, it importItem, ended map[string][]nextup.Entry) (ImportRow, error) {
	out := ImportRow{Row: it.row.Row}
	key := nextup.Entry{Email: it.p.Email, Phone: it.p.Phone}.ContactKey()
	e, err := w.Tx.EntryActiveByContact(ctx, businessID, key, it.p.Service, "")
	if errors.Is(err, nextup.ErrNotFound) && it.p.Email != "" && it.p.Phone != "" {
		// The sheet may have added an email to a person known by phone.
		e, err = w.Tx.EntryActiveByContact(ctx, businessID, nextup.Entry{Phone: it.p.Phone}.ContactKey(), it.p.Service, "")
	}
	switch {
	case err == nil:
		out.EntryID = e.ID
		patch, changed := importPatch(e, it)
		if !changed {
			out.Outcome = ImportUnchanged
			return out, nil
		}
		if _, err := entries.UpdateEntryIn(ctx, w.Work, e, patch, map[string]any{"source": SourceImport}); err != nil {
			return out, err
		}
		out.Outcome = ImportUpdated
		return out, nil
	case !errors.Is(err, nextup.ErrNotFound):
		return out, fmt.Errorf("active entry of row %d: %w", it.row.Row, err)
	}
	for _, old := range ended[it.key()] {
		if _, changed := importPatch(old, it); !changed {
			// A row the mirror withdrew when it was deleted from the
			// sheet, and that is back, is a request again.
			if back, err := w.backInSheet(ctx, old, it); err != nil || back {
				if err != nil {
					return out, err
				}
				continue
			}
			out.EntryID, out.Outcome = old.ID, ImportUnchanged
			return out, nil
		}
	}
	// A mirrored row marked booked (by the mirror, sheetmark.go, or by
	// hand) whose person booked is theirs still, edited since: not a new
	// request.
	if it.p.Source == nextup.SourceSheet && markedBooked(it.row.Status) {
		for _, old := range ended[it.key()] {
			if old.State == nextup.EntryBooked {
				out.EntryID, out.Outcome = old.ID, ImportUnchanged
				return out, nil
			}
		}
	}
	res, err := entries.JoinIn(ctx, w.Work, businessID, it.p)
	if err != nil {
		return out, err
	}
	out.EntryID, out.Outcome = res.Entry.ID, ImportImported
	return out, nil
}

// markedBooked reports whether a sheet's status cell says the row was
// booked ("Booked Tue 1 Dec at 2:00 pm", as the mirror writes it).
func markedBooked(status string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(status)), "booked")
}

// importPatch is the change that makes e say what the row says, on the
// columns the sheet has; changed is false when there is none.
func importPatch(e nextup.Entry, it importItem) (p entries.EntryPatch, changed bool) {
	r, v := it.row, it.p
	if r.Has(csvrows.FieldName) && e.Name != v.Name {
		p.Name, changed = &v.Name, true
	}
	if e.Email == "" && v.Email != "" {
		p.Email, changed = &v.Email, true
	}
	if r.Has(csvrows.FieldPhone) && nextup.AddressKey(nextup.ChannelSMS, e.Phone) != nextup.AddressKey(nextup.ChannelSMS, v.Phone) {
		p.Phone, changed = &v.Phone, true
	}
	if r.Has(csvrows.FieldChannel) && e.Channel != v.Channel {
		p.Channel, changed = &v.Channel, true
	}
	if r.Has(csvrows.FieldPartySize) && e.PartySize != v.PartySize {
		p.PartySize, changed = &v.PartySize, true
	}
	if r.Has(csvrows.FieldEarliest) && !e.Earliest.Equal(v.Earliest) {
		p.Earliest, changed = &v.Earliest, true
	}
	if r.Has(csvrows.FieldLatest) && !e.Latest.Equal(v.Latest) {
		p.Latest, changed = &v.Latest, true
	}
	if r.Has(csvrows.FieldStaff) && e.Staff != v.Staff {
		p.Staff, changed = &v.Staff, true
	}
	if r.Has(csvrows.FieldPriority) && e.Priority != v.Priority {
		p.Priority, changed = &v.Priority, true
	}
	return p, changed
}
