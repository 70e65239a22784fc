// Package storecopy moves businesses' whole history from the embedded
// SQLite store to another store — PostgreSQL, or a store of the AWS module
// such as DynamoDB: what `nextup copy` does when a business outgrows one
// machine — and proves the copy by reading both stores back through the
// nextup.Tx API and comparing them kind by kind, by count and SHA-256.
package storecopy

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// Source is a store that exports a business row by row, table by table in
// the order a copy must insert them (store/sqlite). The copy takes it as
// an interface so that only cmd/ imports the stores themselves.
type Source interface {
	nextup.Store
	// BusinessIDs lists every business in the store.
	BusinessIDs(ctx context.Context) ([]string, error)
	// ExportBusiness emits each row of one business's history.
	ExportBusiness(ctx context.Context, businessID string, emit func(table string, cols []string, row []any) error) error
}

// Destination is a store that takes exported rows in one transaction
// (store/postgres).
type Destination interface {
	nextup.Store
	// Import runs fn in one transaction; the rows fn inserts are kept
	// only if it returns nil.
	Import(ctx context.Context, fn func(insert func(table string, cols []string, row []any) error) error) error
}

// RecordDestination is a store that takes the records of a business's
// history one by one (aws/store/dynamo): each exported row becomes its
// record — nextup.Business, nextup.Slot, nextup.Entry, nextup.Offer,
// nextup.Booking, nextup.HandBack, nextup.AuditEvent, nextup.Message,
// nextup.Timer, nextup.Suppression, nextup.Staff, nextup.Session,
// nextup.PasswordReset, nextup.Proposal, nextup.SheetVersion,
// nextup.Payment, nextup.Guest, nextup.Job or nextup.Summary, as values —
// read with the SQL stores' own scanners.
// Records come in the order of the rows: each business first, then its
// history table by table, parents first, each table in insertion order.
// Its lists may lag its writes for a moment (DynamoDB's indexes are
// eventually consistent): Copy reads it again for some seconds before it
// reports a difference.
type RecordDestination interface {
	nextup.Store
	// ImportRecords runs fn, storing each record it puts with its ids,
	// fair-order sequence numbers and timer ids kept. When fn or a write
	// fails, what was written is removed again and the error returned,
	// saying so; a business that exists already fails it.
	ImportRecords(ctx context.Context, fn func(put func(rec any) error) error) error
}

// Check compares one kind of record of one business in the two stores.
type Check struct {
	Business string
	Kind     string // business, slots, offers, bookings, entries, handbacks, audit, messages, timers, staff, proposals, sheet_versions, payments, guests, jobs, summaries
	From, To Digest
}

// OK says the two stores hold the same records of this kind.
func (c Check) OK() bool { return c.From == c.To }

// Report is what Copy did.
type Report struct {
	Businesses []string
	Rows       int
	// Checks are sorted by business, then kind.
	Checks []Check
}

// OK says every check passed.
func (r Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK() {
			return false
		}
	}
	return true
}

// Copy writes the businesses ids (all of src's when ids is empty) into
// dst — ids and fair-order sequence numbers kept, the destination's
// sequences moved past them — and then verifies the copy. dst is a
// Destination (PostgreSQL: every row in one transaction) or a
// RecordDestination (DynamoDB: record by record, removed again when the
// copy fails). When the write fails nothing was written (a business
// already in dst makes it fail). A copy that was written but does not
// verify is returned with its report and an error.
func Copy(ctx context.Context, src Source, dst nextup.Store, ids []string) (Report, error) {
	var r Report
	rd, byRecord := dst.(RecordDestination)
	d, byRow := dst.(Destination)
	if !byRecord && !byRow {
		return r, fmt.Errorf("copy: a %T takes no copy (neither a Destination nor a RecordDestination)", dst)
	}
	if len(ids) == 0 {
		var err error
		if ids, err = src.BusinessIDs(ctx); err != nil {
			return r, err
		}
	}
	r.Businesses = ids
	// rows emits every row of the businesses to insert.
	rows := func(insert func(table string, cols []string, row []any) error) error {
		for _, id := range ids {
			if err := src.ExportBusiness(ctx, id, func(table string, cols []string, row []any) error {
				r.Rows++
				return insert(table, cols, row)
			}); err != nil {
				return fmt.Errorf("business %s: %w", id, err)
			}
		}
		return nil
	}
	if byRow {
		if err := d.Import(ctx, rows); err != nil {
			return Report{}, fmt.Errorf("copy (nothing was written): %w", err)
		}
	} else {
		// The destination's error says what became of what it wrote.
		if err := rd.ImportRecords(ctx, func(put func(rec any) error) error {
			return rows(func(table string, cols []string, row []any) error {
				rec, err := Record(table, cols, row)
				if err != nil {
					return err
				}
				return put(rec)
			})
		}); err != nil {
			return Report{}, fmt.Errorf("copy: %w", err)
		}
	}
	for _, id := range ids {
		a, err := DigestBusiness(ctx, src, id)
		if err != nil {
			return r, err
		}
		b, err := DigestBusiness(ctx, dst, id)
		// A record destination's lists may lag its writes (DynamoDB's
		// indexes are eventually consistent): read it again for a while
		// before calling it a difference.
		for wait := settleStep; byRecord && err == nil && !maps.Equal(a, b) && wait <= settleMax; wait *= 2 {
			if err := sleep(ctx, wait); err != nil {
				return r, err
			}
			b, err = DigestBusiness(ctx, dst, id)
		}
		if err != nil {
			return r, err
		}
		for _, k := range slices.Sorted(maps.Keys(a)) {
			r.Checks = append(r.Checks, Check{Business: id, Kind: k, From: a[k], To: b[k]})
		}
	}
	if !r.OK() {
		return r, fmt.Errorf("copy verification failed: the stores differ")
	}
	return r, nil
}

// A record destination that differs from the source is read again after
// settleStep, then after twice as long each time, while the wait is at
// most settleMax (about 13 s in all).
const (
	settleStep = 200 * time.Millisecond
	settleMax  = 6400 * time.Millisecond
)

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Digest is a count of records and the start of the SHA-256 of their
// JSON encoding, in a fixed order.
type Digest struct {
	N   int
	Sum string
}

// DigestBusiness reads one business through the store API and digests each
// kind of record, so that two backends are compared as nextup sees them.
func DigestBusiness(ctx context.Context, st nextup.Store, bid string) (map[string]Digest, error) {
	out := map[string]Digest{}
	add := func(kind string, n int, v any) error {
		if n == 0 {
			v = nil // an empty list, nil or not (stores differ)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[kind] = Digest{n, hex.EncodeToString(sum[:8])}
		return nil
	}
	err := st.Read(ctx, func(tx nextup.Tx) error {
		b, err := tx.BusinessGet(ctx, bid)
		if err != nil {
			return err
		}
		if err := add("business", 1, b); err != nil {
			return err
		}
		slots, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: bid})
		if err != nil {
			return err
		}
		slices.SortFunc(slots, func(x, y nextup.Slot) int { return cmp.Compare(x.ID, y.ID) })
		var offers []nextup.Offer
		var bookings []nextup.Booking
		var payments []nextup.Payment
		var guests []nextup.Guest
		for _, s := range slots {
			o, err := tx.OfferListBySlot(ctx, s.ID)
			if err != nil {
				return err
			}
			offers = append(offers, o...)
			for _, of := range o {
				ps, err := tx.PaymentListByOffer(ctx, of.ID)
				if err != nil {
					return err
				}
				payments = append(payments, ps...)
			}
			bk, err := tx.BookingListBySlot(ctx, s.ID)
			if err != nil {
				return err
			}
			slices.SortFunc(bk, func(x, y nextup.Booking) int { return cmp.Compare(x.ID, y.ID) })
			bookings = append(bookings, bk...)
			gs, err := tx.GuestListBySlot(ctx, s.ID)
			if err != nil {
				return err
			}
			guests = append(guests, gs...)
		}
		var entries []nextup.Entry
		for _, st := range []nextup.EntryState{"", nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired} {
			e, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: bid, State: st})
			if err != nil {
				return err
			}
			entries = append(entries, e...)
		}
		// Every waiting entry's place in line, as the store counts it (a
		// store may keep the count in a structure of its own: it must
		// come across too).
		places := map[string]int{}
		for _, e := range entries {
			if e.State == nextup.EntryWaiting {
				if places[e.ID], err = tx.EntryPosition(ctx, e); err != nil {
					return err
				}
			}
		}
		var hbs []nextup.HandBack
		for _, st := range []nextup.HandBackState{nextup.HandBackOpen, nextup.HandBackResolved} {
			h, err := tx.HandBackList(ctx, bid, st)
			if err != nil {
				return err
			}
			hbs = append(hbs, h...)
		}
		slices.SortFunc(hbs, func(x, y nextup.HandBack) int { return cmp.Compare(x.ID, y.ID) })
		audit, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: bid})
		if err != nil {
			return err
		}
		msgs, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: bid})
		if err != nil {
			return err
		}
		slices.SortFunc(msgs, func(x, y nextup.Message) int { return cmp.Compare(x.ID, y.ID) })
		timers, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: bid})
		if err != nil {
			return err
		}
		// Sessions and password resets cannot be listed through Tx; they
		// are copied with their staff member but not digested.
		staff, err := tx.StaffList(ctx, bid)
		if err != nil {
			return err
		}
		proposals, err := tx.ProposalList(ctx, bid, "")
		if err != nil {
			return err
		}
		versions, err := tx.SheetVersionList(ctx, bid, 0)
		if err != nil {
			return err
		}
		for i, v := range versions { // with their rows, which the list leaves out
			if versions[i], err = tx.SheetVersionGet(ctx, v.ID); err != nil {
				return err
			}
		}
		jobs, err := tx.JobList(ctx, bid, 0)
		if err != nil {
			return err
		}
		summaries, err := tx.SummaryList(ctx, bid, 0)
		if err != nil {
			return err
		}
		for _, kv := range []struct {
			kind string
			n    int
			v    any
		}{{"slots", len(slots), slots}, {"offers", len(offers), offers}, {"bookings", len(bookings), bookings},
			{"entries", len(entries), entries}, {"handbacks", len(hbs), hbs}, {"audit", len(audit), audit},
			{"messages", len(msgs), msgs}, {"timers", len(timers), timers}, {"staff", len(staff), staff},
			{"proposals", len(proposals), proposals}, {"sheet_versions", len(versions), versions},
			{"payments", len(payments), payments}, {"guests", len(guests), guests}, {"jobs", len(jobs), jobs},
			{"summaries", len(summaries), summaries}, {"places", len(places), places}} {
			if err := add(kv.kind, kv.n, kv.v); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
