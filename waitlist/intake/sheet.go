package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// The sheet mirror: a business's waitlist kept in a Google Sheet (or any
// published CSV) is read every few minutes by a durable timer and imported
// as a CSV file is (ImportRecords: one transaction a row, re-reading
// changes nothing). Every read whose content changed is kept as a version
// with its hash and counts; a row that cannot be read becomes a proposal
// with its problems instead of being dropped.

// Bounds of a sheet's sync interval.
const (
	DefaultSheetEvery = 5 * time.Minute
	minSheetEvery     = time.Minute
	maxSheetEvery     = 24 * time.Hour
)

func sheetKey(businessID string) string { return nextup.TimerSheetSync + ":" + businessID }

func sheetSource(c *nextup.SheetConfig) nextup.SheetSource {
	return nextup.SheetSource{SpreadsheetID: c.SpreadsheetID, Range: c.Range, URL: c.URL}
}

// SetSheet points the business's mirror at a sheet (validated) and
// schedules its first read at once; nil stops the mirror.
func (s *Intake) SetSheet(ctx context.Context, businessID string, c *nextup.SheetConfig) (nextup.Business, error) {
	if c != nil {
		if c.EverySeconds == 0 {
			c.EverySeconds = int(DefaultSheetEvery / time.Second)
		}
		var fs []nextup.FieldError
		if err := sheetSource(c).Validate(); err != nil {
			fs = append(fs, nextup.FieldError{Field: "url", Message: err.Error()})
		}
		if e := time.Duration(c.EverySeconds) * time.Second; e < minSheetEvery || e > maxSheetEvery {
			fs = append(fs, nextup.FieldError{Field: "every_seconds", Message: "must be between 60 and 86400"})
		}
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
		} else if err := w.Schedule(ctx, nextup.Timer{BusinessID: businessID, Kind: nextup.TimerSheetSync, SubjectID: businessID,
			Key: sheetKey(businessID), DueAt: w.Now}); err != nil {
			return err
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
			To: "sheet_set", Detail: map[string]any{"source": sheetSourceString(c)}})
	})
	return out, err
}

func sheetSourceString(c *nextup.SheetConfig) string {
	if c == nil {
		return ""
	}
	return sheetSource(c).String()
}

// SheetSync is what one read of the sheet did.
type SheetSync struct {
	Changed bool // the content differed from the last version
	Version nextup.SheetVersion
	Import  ImportResult // when Changed
}

// SyncSheet reads the business's sheet now. Unchanged content (the same
// hash as the last version) imports nothing and keeps no version. A sheet
// that cannot be read is ErrUnavailable (sheet_unreadable), changing
// nothing.
func (s *Intake) SyncSheet(ctx context.Context, businessID string) (SheetSync, error) {
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return SheetSync{}, err
	}
	if b.Profile.Sheet == nil {
		return SheetSync{}, nextup.Errorf(nextup.ErrConflict, nextup.CodeNoSheet, "the business has no sheet to mirror (PUT …/sheet)")
	}
	if s.Sheets == nil {
		return SheetSync{}, nextup.Errorf(nextup.ErrUnavailable, nextup.CodeSheetUnreadable, "this server cannot read sheets")
	}
	src := sheetSource(b.Profile.Sheet)
	if err := s.BeforeRemote(ctx); err != nil {
		return SheetSync{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second) // the read only; the import takes what it takes
	rows, err := s.Sheets.Read(rctx, src)
	cancel()
	if err != nil {
		return SheetSync{}, nextup.Errorf(nextup.ErrUnavailable, nextup.CodeSheetUnreadable, "%v", err)
	}
	raw, _ := json.Marshal(rows)
	sum := sha256.Sum256(raw)
	hash := hex.EncodeToString(sum[:])
	var last []nextup.SheetVersion
	if err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		last, err = tx.SheetVersionList(ctx, businessID, 1)
		return err
	}); err != nil {
		return SheetSync{}, err
	}
	// The same content again changes nothing, unless rows were turned
	// away last time: those may go in now (an offer answered, the
	// catalogue fixed), and proposals are made once each anyway.
	if len(last) == 1 && last[0].Hash == hash && last[0].Source == src.String() && last[0].Rejected == 0 {
		return SheetSync{Version: last[0]}, nil
	}
	recs := make([]csvrows.Record, len(rows))
	for i, r := range rows {
		recs[i] = csvrows.Record{Row: i + 1, Cells: r}
	}
	res, err := s.ImportRecords(ctx, businessID, recs, ImportOptions{})
	if err != nil && !errors.Is(err, nextup.ErrInvalid) {
		return SheetSync{}, err
	}
	v := nextup.SheetVersion{BusinessID: businessID, Source: src.String(), FetchedAt: s.Clock.Now(), Hash: hash,
		Rows: max(len(rows)-1, 0), Imported: res.Imported, Updated: res.Updated, Unchanged: res.Unchanged, Rejected: len(res.Rejected)}
	if err != nil { // no header: the whole sheet needs a look
		v.Rejected = v.Rows
	}
	// Rows that cannot be read become proposals, once each (keyed by
	// their content), for staff to fix by hand.
	header := []string{}
	if len(rows) > 0 {
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
	err = s.tx(ctx, func(w *work) error {
		v.ID, v.FetchedAt = w.s.Random.ID("shv"), w.Now
		return w.Tx.SheetVersionAdd(ctx, v)
	})
	return SheetSync{Changed: true, Version: v, Import: res}, err
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
