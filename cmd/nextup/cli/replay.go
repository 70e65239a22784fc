package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// runReplay is `nextup replay entry ID`: the entry's place in line over
// time and every slot of its list decided while it was on it, replayed
// from the audit trail (GET /v1/waitlist/{eid}/history); with --slot, why
// it was or was not offered that slot (…/why).
func runReplay(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("replay")
	db := fs.String("db", "nextup.db", "database: a file path for the embedded store, or postgres://…")
	slot := fs.String("slot", "", "explain this slot only: why the entry was or was not offered it")
	asJSON := fs.Bool("json", false, "print the replay as the API returns it")
	rest, err := parseFlagsAndArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 2 || rest[0] != "entry" {
		return usageError{"replay: want `replay entry ID`"}
	}
	id := rest[1]
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	var e nextup.Entry
	var b nextup.Business
	if err := st.Read(ctx, func(tx nextup.Tx) error {
		if e, err = tx.EntryGet(ctx, id); err != nil {
			return fmt.Errorf("entry %s: %w", id, err)
		}
		b, err = tx.BusinessGet(ctx, e.BusinessID)
		return err
	}); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	loc, err := b.Location()
	if err != nil {
		loc = time.UTC
	}
	svc := waitlist.New(st, nextup.RealClock{}, "http://localhost:8080")
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if *slot != "" {
		why, err := svc.WhyNot(ctx, b.ID, id, *slot)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		if *asJSON {
			return enc.Encode(why)
		}
		verdict := "not offered"
		if why.Offered {
			verdict = "offered"
		}
		fmt.Fprintf(stdout, "%s, slot %s: %s.\n%s\n", e.Name, *slot, verdict, why.Explanation)
		return nil
	}
	h, err := svc.History(ctx, b.ID, id)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if *asJSON {
		return enc.Encode(h)
	}
	const when = "Mon 2 Jan 15:04"
	fmt.Fprintf(stdout, "%s (%s), %s — replayed from the audit trail of %s (times in %s)\n\nPlace in line\n", e.Name, id, h.Queue, b.Name, loc)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, p := range h.Positions {
		place := "—"
		if p.InLine {
			place = fmt.Sprintf("#%d", p.Position)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.At.In(loc).Format(when), place, p.Cause, p.Detail)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nSlots of its list decided while it was on it (%d)\n", len(h.Slots))
	for _, so := range h.Slots {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", so.StartsAt.In(loc).Format(when), so.SlotID, so.Outcome, so.Why)
	}
	tw.Flush()
	for _, so := range h.Slots {
		if so.Outcome == "skipped" {
			fmt.Fprintf(stdout, "\n  %s: %s\n", so.SlotID, so.Explanation)
		}
	}
	return nil
}
