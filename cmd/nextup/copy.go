package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/sqlite"
)

// runCopy moves businesses' whole history from the embedded store to
// PostgreSQL in one transaction, then reads both back through the store
// API and compares them kind by kind, by count and SHA-256.
func runCopy(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("copy")
	from := fs.String("from", "nextup.db", "the embedded store (a file path)")
	to := fs.String("to", "", "the PostgreSQL database (postgres://…)")
	only := fs.String("business", "", "copy only this business (default: every business in the file)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !isPostgres(*to) {
		return usageError{"copy: --to must be a postgres:// URL"}
	}
	src, err := sqlite.Open(ctx, *from, sqlite.SkipMigrate())
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openStore(ctx, *to) // migrates
	if err != nil {
		return err
	}
	defer dst.Close()
	pg := dst.(*postgres.DB)
	ids := []string{*only}
	if *only == "" {
		if ids, err = src.BusinessIDs(ctx); err != nil {
			return err
		}
	}
	rows := 0
	err = pg.Import(ctx, func(insert func(string, []string, []any) error) error {
		for _, id := range ids {
			if err := src.ExportBusiness(ctx, id, func(table string, cols []string, row []any) error {
				rows++
				return insert(table, cols, row)
			}); err != nil {
				return fmt.Errorf("business %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("copy (nothing was written): %w", err)
	}
	fmt.Fprintf(stdout, "copied %d rows of %d business(es) from %s\n", rows, len(ids), *from)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "business\tkind\tcount\tsha256\tcheck")
	bad := 0
	for _, id := range ids {
		a, err := digest(ctx, src, id)
		if err != nil {
			return err
		}
		b, err := digest(ctx, dst, id)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range a {
				if !yield(k) {
					return
				}
			}
		}) {
			check := "ok"
			if a[k] != b[k] {
				check, bad = fmt.Sprintf("MISMATCH (postgres: %d %s)", b[k].n, b[k].sum), bad+1
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", id, k, a[k].n, a[k].sum, check)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("copy verification failed: %d kinds differ", bad)
	}
	return nil
}

type kindDigest struct {
	n   int
	sum string
}

// digest reads one business through the store API and hashes each kind of
// record, so the two backends are compared as nextup sees them.
func digest(ctx context.Context, st nextup.Store, bid string) (map[string]kindDigest, error) {
	out := map[string]kindDigest{}
	add := func(kind string, n int, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[kind] = kindDigest{n, hex.EncodeToString(sum[:8])}
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
		for _, s := range slots {
			o, err := tx.OfferListBySlot(ctx, s.ID)
			if err != nil {
				return err
			}
			offers = append(offers, o...)
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
		for _, kv := range []struct {
			kind string
			n    int
			v    any
		}{{"slots", len(slots), slots}, {"offers", len(offers), offers}, {"bookings", len(bookings), bookings},
			{"entries", len(entries), entries}, {"handbacks", len(hbs), hbs}, {"audit", len(audit), audit},
			{"messages", len(msgs), msgs}, {"timers", len(timers), timers}} {
			if err := add(kv.kind, kv.n, kv.v); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
