// Package storecopy moves businesses' whole history from the embedded
// SQLite store to PostgreSQL — what `nextup copy` does when a business
// outgrows one machine — and proves the copy by reading both stores back
// through the nextup.Tx API and comparing them kind by kind, by count and
// SHA-256.
package storecopy

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

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

// Check compares one kind of record of one business in the two stores.
type Check struct {
	Business string
	Kind     string // business, slots, offers, bookings, entries, handbacks, audit, messages, timers, staff, proposals, sheet_versions, payments
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

// Copy writes the businesses ids (all of src's when ids is empty) into dst
// in one PostgreSQL transaction — ids and fair-order sequence numbers kept,
// identity sequences moved past them — and then verifies the copy. When the
// write fails nothing was written (a business already in dst makes it
// fail). A copy that was written but does not verify is returned with its
// report and an error.
func Copy(ctx context.Context, src Source, dst Destination, ids []string) (Report, error) {
	var r Report
	if len(ids) == 0 {
		var err error
		if ids, err = src.BusinessIDs(ctx); err != nil {
			return r, err
		}
	}
	r.Businesses = ids
	err := dst.Import(ctx, func(insert func(string, []string, []any) error) error {
		for _, id := range ids {
			if err := src.ExportBusiness(ctx, id, func(table string, cols []string, row []any) error {
				r.Rows++
				return insert(table, cols, row)
			}); err != nil {
				return fmt.Errorf("business %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return Report{}, fmt.Errorf("copy (nothing was written): %w", err)
	}
	for _, id := range ids {
		a, err := DigestBusiness(ctx, src, id)
		if err != nil {
			return r, err
		}
		b, err := DigestBusiness(ctx, dst, id)
		if err != nil {
			return r, err
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range a {
				if !yield(k) {
					return
				}
			}
		}) {
			r.Checks = append(r.Checks, Check{Business: id, Kind: k, From: a[k], To: b[k]})
		}
	}
	if !r.OK() {
		return r, fmt.Errorf("copy verification failed: the stores differ")
	}
	return r, nil
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
		}
		var entries []nextup.Entry
		for _, st := range []nextup.EntryState{"", nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired} {
			e, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: bid, State: st})
			if err != nil {
				return err
			}
			entries = append(entries, e...)
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
		for _, kv := range []struct {
			kind string
			n    int
			v    any
		}{{"slots", len(slots), slots}, {"offers", len(offers), offers}, {"bookings", len(bookings), bookings},
			{"entries", len(entries), entries}, {"handbacks", len(hbs), hbs}, {"audit", len(audit), audit},
			{"messages", len(msgs), msgs}, {"timers", len(timers), timers}, {"staff", len(staff), staff},
			{"proposals", len(proposals), proposals}, {"sheet_versions", len(versions), versions},
			{"payments", len(payments), payments}} {
			if err := add(kv.kind, kv.n, kv.v); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
