package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// The write-back: a claim by an entry that came from a Google Sheet marks
// the entry's row booked there ("Booked Tue 1 Dec at 2:00 pm" in the
// sheet's status column, which is added to the header when the sheet has
// none). The claim's transaction only schedules a sheet_mark timer
// (core.Work.MarkSheetRow); the timer does the rest, off the claim's path:
//
//  1. Under the timer's claim, one transaction finishes it and schedules
//     the next try (the guard: after 1, 2, 4, … minutes, sheetMarkTries
//     tries in all), so that a crash, a lost lease or Google being down
//     only means a later try. A booking that still awaits the business's
//     booking system is looked at again in a few minutes, counting no
//     try; one that did not stand (cancelled) is not marked.
//  2. Outside any transaction, the sheet is read and the row found by its
//     key at that moment — the person (email, else phone) and service, as
//     the import pairs rows with entries — never by a row number
//     remembered from an earlier read: rows move when others are deleted.
//     A sheet without the business's connection code (SheetCode) is not
//     written to (a failed try: the owner may add it). The status cell
//     (and the header's, when added) is written in one values.batchUpdate
//     — only when it is empty or says what nextup writes ("Booked …"): a
//     status the owner wrote there ("VIP", "call first") is left as it is,
//     and the booking's audit says so.
//  3. One transaction records the outcome on the booking's audit trail:
//     marked (and the guard cancelled), the row gone from the sheet or its
//     status cell the owner's (the guard cancelled: there is nothing to
//     mark), or the failure with
//     when the next try is — or, after the last try, that it gave up.
//
// Writing the same cell twice is harmless, so a try repeated after a
// crash does no wrong.

// Audit reasons of the write-back, on the booking.
const (
	ReasonSheetMarked     = "sheet_marked"
	ReasonSheetMarkRetry  = "sheet_mark_retry"
	ReasonSheetMarkGaveUp = "sheet_mark_failed"
	ReasonSheetRowGone    = "sheet_row_gone"
	// ReasonSheetMarkSkipped: the row's status cell held something nextup
	// did not write, which was left as it is.
	ReasonSheetMarkSkipped = "sheet_mark_skipped"
)

const (
	// sheetMarkTries bounds the write-back's tries: the guard waits 1, 2,
	// 4, … 256 minutes, about eight and a half hours in all.
	sheetMarkTries = 10
	// sheetMarkAwait is how long a booking that awaits its booking system
	// waits before its row is looked at again.
	sheetMarkAwait = 2 * time.Minute
	// sheetMarkTimeout bounds the read and the write of one try, well
	// inside the timer's lease.
	sheetMarkTimeout = 20 * time.Second
	// statusHeader is the header of the status column the mirror adds.
	statusHeader = "Status"
	// bookedWord starts every status nextup writes: a status cell that
	// starts with it may be written again.
	bookedWord = "Booked"
)

// errRowGone is a try that found no row of the booked person in the sheet.
var errRowGone = errors.New("no row of this person for this service in the sheet")

// statusTaken is a try that found the row's status cell holding what
// nextup did not write.
type statusTaken struct{ value string }

func (e *statusTaken) Error() string {
	return fmt.Sprintf("the row's status cell says %q, which nextup did not write: left as it is", e.value)
}

// sheetMark is what one try writes, as step 1 read it.
type sheetMark struct {
	do      bool
	booking nextup.Booking
	entry   nextup.Entry
	src     nextup.SheetSource
	code    string // the business's connection code
	value   string
	try     int
	next    time.Time // the guard's due time; zero after the last try
	opts    csvrows.Options
}

// markSheetRow runs the sheet_mark timer t: one try of the write-back.
func (s *Intake) markSheetRow(ctx context.Context, t nextup.Timer) error {
	var job sheetMark
	err := s.tx(ctx, func(w *work) error {
		job = sheetMark{}
		w.Actor = nextup.ActorTimer
		if err := w.Tx.TimerDone(ctx, t.ID, *t.ClaimedUntil, w.Now); err != nil {
			return fmt.Errorf("finish timer %s: %w", t.Key, err)
		}
		return w.planSheetMark(ctx, t, &job)
	})
	if err != nil || !job.do {
		return err
	}
	var row int
	werr := s.writeSheetMark(ctx, job, &row)
	return s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorTimer
		bi, err := w.Business(ctx, job.booking.BusinessID)
		if err != nil {
			return err
		}
		key := core.SheetMarkKey(job.booking.ID)
		d := map[string]any{"sheet": job.src.String(), "try": job.try}
		reason := ReasonSheetMarked
		var taken *statusTaken
		switch {
		case werr == nil:
			d["row"], d["value"] = row, job.value
		case errors.Is(werr, errRowGone):
			reason = ReasonSheetRowGone
		case errors.As(werr, &taken):
			reason, d["row"], d["status"], d["value"] = ReasonSheetMarkSkipped, row, taken.value, job.value
		case job.next.IsZero():
			reason, d["error"] = ReasonSheetMarkGaveUp, werr.Error()
		default:
			reason, d["error"], d["next_at"] = ReasonSheetMarkRetry, werr.Error(), job.next
			s.Log().Warn("sheet write-back failed; trying again later", "business_id", bi.ID, "booking_id", job.booking.ID,
				"try", job.try, "next_at", job.next, "error", werr)
		}
		if reason != ReasonSheetMarkRetry {
			if err := w.Tx.TimerCancel(ctx, key); err != nil {
				return fmt.Errorf("cancel timer %s: %w", key, err)
			}
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBooking, SubjectID: job.booking.ID, SlotID: job.booking.SlotID,
			From: string(nextup.BookingBooked), To: string(nextup.BookingBooked), Reason: reason, Detail: d})
	})
}

// planSheetMark is step 1 in w: whether there is a row to mark, what to
// write, and the guard (the next try) scheduled.
func (w *work) planSheetMark(ctx context.Context, t nextup.Timer, job *sheetMark) error {
	b, err := w.Tx.BookingGet(ctx, t.SubjectID)
	if err != nil {
		return fmt.Errorf("booking %s: %w", t.SubjectID, err)
	}
	if b.State != nextup.BookingBooked {
		return nil // undone (by its booking system, or staff) before its row was marked
	}
	bi, err := w.Business(ctx, b.BusinessID)
	if err != nil {
		return err
	}
	cfg := bi.Profile.Sheet
	if !cfg.Writable() {
		return nil // the business stopped mirroring, or mirrors a CSV now
	}
	key := core.SheetMarkKey(b.ID)
	awaiting, err := w.Tx.TimerList(ctx, nextup.TimerFilter{Kind: nextup.TimerBookingSync, SubjectID: b.ID, PendingOnly: true, Limit: 1})
	if err != nil {
		return err
	}
	if len(awaiting) > 0 {
		// Not booked for sure until the booking system answers.
		return w.Schedule(ctx, nextup.Timer{BusinessID: bi.ID, Kind: nextup.TimerSheetMark, SubjectID: b.ID, Key: key,
			DueAt: w.Now.Add(sheetMarkAwait)})
	}
	e, err := w.Tx.EntryGet(ctx, b.EntryID)
	if err != nil {
		return fmt.Errorf("entry %s: %w", b.EntryID, err)
	}
	sl, err := w.Tx.SlotGet(ctx, b.SlotID)
	if err != nil {
		return fmt.Errorf("slot %s: %w", b.SlotID, err)
	}
	evs, err := w.Tx.AuditList(ctx, nextup.AuditFilter{BusinessID: bi.ID, SubjectType: nextup.SubjectBooking, SubjectID: b.ID})
	if err != nil {
		return err
	}
	try := 1
	for _, ev := range evs {
		switch ev.Reason {
		case ReasonSheetMarkRetry:
			try++
		case ReasonSheetMarked, ReasonSheetRowGone, ReasonSheetMarkGaveUp, ReasonSheetMarkSkipped:
			return nil // done already: a timer that fired twice
		}
	}
	*job = sheetMark{do: true, booking: b, entry: e, src: sheetSource(cfg), code: SheetCode(bi.Business), try: try,
		value: bookedWord + " " + templates.FormatWhen(sl.StartsAt, bi.Loc),
		opts:  csvrows.Options{Location: bi.Loc, Country: bi.Profile.Country, Services: bi.Profile.Services, Staff: bi.Profile.Staff, Columns: sheetMapping(cfg)}}
	if try < sheetMarkTries {
		job.next = w.Now.Add(time.Minute << (try - 1))
		return w.Schedule(ctx, nextup.Timer{BusinessID: bi.ID, Kind: nextup.TimerSheetMark, SubjectID: b.ID, Key: key, DueAt: job.next})
	}
	return nil
}

// writeSheetMark is step 2: the sheet read, the row found, the cells
// written. row is set to the row written, as the sheet numbers it within
// the range read (the header's range starts at 1).
func (s *Intake) writeSheetMark(ctx context.Context, job sheetMark, row *int) error {
	writer, ok := s.Sheets.(core.SheetWriter)
	if !ok {
		return errors.New("this server cannot write to Google Sheets")
	}
	ctx, cancel := context.WithTimeout(ctx, sheetMarkTimeout)
	defer cancel()
	return writer.Update(ctx, job.src, func(rows [][]string) ([]nextup.SheetCell, error) {
		cells, r, err := markCells(rows, job.opts, job.entry, job.value, job.code)
		*row = r
		return cells, err
	})
}

// markCells finds the row of entry e in rows (by the person and service,
// as the import pairs them) and says which cells to write: the status
// cell, and the header's when the sheet has no status column yet. r is
// the row's number in rows, from 1. Rows without the connection code
// code are errNotVerified; a status cell that holds what nextup did not
// write is statusTaken.
func markCells(rows [][]string, o csvrows.Options, e nextup.Entry, value, code string) (cells []nextup.SheetCell, r int, err error) {
	clean, ok := withoutCode(rows, code)
	if !ok {
		return nil, 0, errNotVerified(code)
	}
	recs := make([]csvrows.Record, len(clean))
	for i, rc := range clean {
		recs[i] = csvrows.Record{Row: i + 1, Cells: rc}
	}
	sh, err := csvrows.Parse(recs, o)
	if err != nil {
		return nil, 0, fmt.Errorf("the sheet's header: %w", err)
	}
	for _, row := range sh.Rows {
		if rowIsEntry(row, e) {
			r = row.Row
			break
		}
	}
	if r == 0 {
		return nil, 0, errRowGone
	}
	col := -1
	if cols := sh.Header.Columns[csvrows.FieldStatus]; len(cols) > 0 {
		col = cols[0]
	}
	header := clean[sh.Header.Row-1]
	if col < 0 {
		// An unmapped header cell named Status is the status column too.
		for i, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), statusHeader) {
				col = i
				break
			}
		}
	}
	if col >= 0 {
		// The owner's words in the status cell stay (so does the code,
		// should it be there): only an empty cell, or one nextup wrote,
		// is written.
		cur := ""
		if col < len(rows[r-1]) {
			cur = strings.TrimSpace(rows[r-1][col])
		}
		if cur != "" && !strings.HasPrefix(strings.ToLower(cur), strings.ToLower(bookedWord)) {
			return nil, r, &statusTaken{value: cur}
		}
	}
	if col < 0 {
		// A new column, right of every cell the sheet uses (a column of
		// notes without a header included, and the connection code).
		col = 0
		for _, rc := range rows {
			n := len(rc)
			for n > 0 && strings.TrimSpace(rc[n-1]) == "" {
				n--
			}
			col = max(col, n)
		}
		cells = append(cells, nextup.SheetCell{Row: sh.Header.Row - 1, Col: col, Value: statusHeader})
	}
	return append(cells, nextup.SheetCell{Row: r - 1, Col: col, Value: value}), r, nil
}

// rowIsEntry reports whether a sheet row is entry e's, as the import
// pairs them: the same service, and the same person — the same email, or
// the same phone where one of them has no email (an import adds an email
// to a person known by phone).
func rowIsEntry(row csvrows.Row, e nextup.Entry) bool {
	if row.Service != e.Service {
		return false
	}
	if RowKey(row.Email, row.Phone, row.Service) == RowKey(e.Email, e.Phone, e.Service) {
		return true
	}
	return row.Phone != "" && e.Phone != "" && (row.Email == "" || e.Email == "") &&
		nextup.AddressKey(nextup.ChannelSMS, row.Phone) == nextup.AddressKey(nextup.ChannelSMS, e.Phone)
}

// MarkSheetTimer runs the sheet_mark timer t (see markSheetRow);
// waitlist's timer handler calls it.
func MarkSheetTimer(ctx context.Context, s *Intake, t nextup.Timer) error {
	return s.markSheetRow(ctx, t)
}
