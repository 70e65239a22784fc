package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
)

// runBench measures the operations that matter on a fresh embedded store
// (synchronous=FULL, as in production) and reports each as a ratio to a
// baseline measured in the same run — the smallest durable write — so the
// figures compare across machines and disks.
func runBench(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("bench")
	n := fs.Int("n", 200, "operations per measurement")
	entries := fs.Int("entries", 100000, "waiting entries on the list while deciding (1000000 for the issue's target)")
	httpMode := fs.Bool("http", false, "measure joins/s and claims/s over HTTP instead")
	clients := fs.Int("clients", 8, "concurrent HTTP clients (with -http)")
	scenario := fs.String("scenario", "", "run scenarios instead, each figure with its baseline measured in the same run: claims, joins, position, storm, flash, ready (comma-separated), or all")
	asJSON := fs.Bool("json", false, "with -scenario: one JSON object per figure and line")
	pgDSN := fs.String("postgres", "", "with -scenario: run on a fresh schema of this PostgreSQL server instead of a fresh SQLite file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *scenario != "" {
		// The long list (the storm takes 200,000 of it at
		// most), and the requests of each write scenario (the flash
		// sale's 10,000 registrations), unless -entries and -n say
		// otherwise.
		long, reqs := 1000000, 0
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "entries":
				long = *entries
			case "n":
				reqs = *n
				if reqs < 1 {
					reqs = -1
				}
			}
		})
		if long < 2 || reqs < 0 {
			return usageError{"bench: -entries must be >= 2 and -n >= 1"}
		}
		return runScenarios(ctx, *scenario, *pgDSN, long, reqs, *asJSON, stdout, os.Stderr)
	}
	if *httpMode {
		if *n < 1 || *clients < 1 {
			return usageError{"bench: -n and -clients must be >= 1"}
		}
		return runBenchHTTP(ctx, *n, *clients, stdout)
	}
	if *n < 1 || *entries < 100 {
		return usageError{"bench: -n must be >= 1 and -entries >= 100"}
	}
	dir, err := os.MkdirTemp("", "nextup-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	loc, _ := time.LoadLocation("Europe/London")
	clock := nextup.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, loc))
	svc := waitlist.New(st, clock, "http://localhost:8080")
	rules := nextup.DefaultRules()
	rules.QuietHours, rules.MaxOffersPerPersonPerDay = nil, 0
	biz, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Bench", Timezone: "Europe/London", Rules: &rules})
	if err != nil {
		return err
	}
	at := func(day, hour int) time.Time { return time.Date(2026, 12, 1+day, hour, 0, 0, 0, loc) }

	fmt.Fprintf(stdout, "seeding %d waiting entries...\n", *entries)
	if err := seedEntries(ctx, st, biz.ID, clock.Now(), *entries); err != nil {
		return err
	}
	var results []benchResult
	measure := func(name string, setup func(i int) (func() error, error)) error {
		var ds []time.Duration
		for i := 0; i < *n; i++ {
			op, err := setup(i)
			if err != nil {
				return fmt.Errorf("%s setup: %w", name, err)
			}
			start := time.Now() // measurement, not logic: the wall clock is the point
			if err := op(); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			ds = append(ds, time.Since(start))
		}
		results = append(results, summarize(name, ds))
		return nil
	}
	err = measure("baseline: one durable write", func(int) (func() error, error) {
		return func() error {
			return st.InTx(ctx, func(tx nextup.Tx) error {
				return tx.AuditAppend(ctx, nextup.AuditEvent{BusinessID: biz.ID, At: clock.Now(), Actor: nextup.ActorSystem,
					SubjectType: nextup.SubjectBusiness, SubjectID: biz.ID, To: "bench"})
			})
		}, nil
	})
	if err != nil {
		return err
	}
	// A freed slot that the engine decides against the whole list; the
	// first fitting entry is 40th in line (the others want another staff member).
	free, _, err := svc.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "haircut", Staff: "Ana", StartsAt: at(0, 16), EndsAt: at(0, 17)})
	if err != nil {
		return err
	}
	if err := st.InTx(ctx, func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(ctx, free.ID, nextup.SeatDelta{Booked: -1})
		return err
	}); err != nil {
		return err
	}
	err = measure(fmt.Sprintf("decide a freed slot (%d waiting)", *entries), func(int) (func() error, error) {
		return func() error {
			d, err := svc.Preview(ctx, biz.ID, free.ID)
			if err == nil && d.Move != nextup.MoveOffer {
				err = fmt.Errorf("decided %+v", d)
			}
			return err
		}, nil
	})
	if err != nil {
		return err
	}
	var tokens []string
	err = measure("release → offer committed", func(i int) (func() error, error) {
		sl, _, err := svc.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "haircut", Staff: "Cy",
			StartsAt: at(1+i%25, 9+i%10), EndsAt: at(1+i%25, 10+i%10)})
		if err != nil {
			return nil, err
		}
		return func() error {
			_, moves, err := svc.Release(ctx, biz.ID, sl.ID, 0, waitlist.ReasonCancellation)
			if err == nil && (len(moves) != 1 || moves[0].Move != nextup.MoveOffer) {
				err = fmt.Errorf("moves %+v", moves)
			}
			if err == nil {
				var tok string
				tok, err = claimToken(ctx, st, biz.ID, moves[0].OfferID)
				tokens = append(tokens, tok)
			}
			return err
		}, nil
	})
	if err != nil {
		return err
	}
	err = measure("claim", func(i int) (func() error, error) {
		return func() error { _, err := svc.Claim(ctx, tokens[i]); return err }, nil
	})
	if err != nil {
		return err
	}
	err = measure("join (with reverse matching)", func(i int) (func() error, error) {
		return func() error {
			_, err := svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: "J", Email: fmt.Sprintf("join%d@example.com", i), Service: "colour"})
			return err
		}, nil
	})
	if err != nil {
		return err
	}
	base := results[0].mean
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tn\tmean\tp50\tp99\t× baseline\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.2f\t\n", r.name, r.n, ms(r.mean), ms(r.p50), ms(r.p99), float64(r.mean)/float64(base))
	}
	return tw.Flush()
}

type benchResult struct {
	name           string
	n              int
	mean, p50, p99 time.Duration
}

func summarize(name string, ds []time.Duration) benchResult {
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return benchResult{name: name, n: len(ds), mean: sum / time.Duration(len(ds)),
		p50: ds[len(ds)/2], p99: ds[min(len(ds)-1, len(ds)*99/100)]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// seedEntries writes n waiting haircut entries in large transactions,
// bypassing Join's reverse matching so that a long list builds in seconds.
// One in 40 accepts any staff member; the rest want Cy.
func seedEntries(ctx context.Context, st nextup.Store, bid string, now time.Time, n int) error {
	const batch = 50000
	for start := 0; start < n; start += batch {
		err := st.InTx(ctx, func(tx nextup.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				e := nextup.Entry{ID: fmt.Sprintf("ent_seed%07d", i), BusinessID: bid, Name: "Seed",
					Email: fmt.Sprintf("seed%07d@example.com", i), Service: "haircut", PartySize: 1, Staff: "Cy",
					JoinedAt: now.Add(time.Duration(i-n) * time.Millisecond), State: nextup.EntryWaiting, Source: "bench", UpdatedAt: now}
				if i%40 == 39 {
					e.Staff = ""
				}
				if _, err := tx.EntryCreate(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed entries: %w", err)
		}
	}
	return nil
}

func claimToken(ctx context.Context, st nextup.Store, bid, offerID string) (string, error) {
	var tok string
	err := st.Read(ctx, func(tx nextup.Tx) error {
		msgs, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: bid, OfferID: offerID})
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Kind == nextup.MessageOffer {
				tok = m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]
				return nil
			}
		}
		return fmt.Errorf("no offer message for %s", offerID)
	})
	return tok, err
}
