package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/store/storecopy"
)

// runCopy moves businesses' whole history from the embedded store to
// PostgreSQL, or to a store a build registered (RegisterStore: DynamoDB in
// nextup-aws), see store/storecopy, and prints the verification table.
func runCopy(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("copy")
	from := fs.String("from", "nextup.db", "the embedded store (a file path)")
	to := fs.String("to", "", "the destination: a PostgreSQL database (postgres://…) or a registered store's URL")
	only := fs.String("business", "", "copy only this business (default: every business in the file)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind := "postgres"
	if !isPostgres(*to) {
		if registeredStore(*to) == nil {
			return usageError{"copy: --to must be a postgres:// URL" + registeredURLs()}
		}
		scheme, _, _ := strings.Cut(*to, "://")
		kind = strings.ToLower(scheme)
	}
	if _, err := os.Stat(*from); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	// The source is brought up to this binary's schema first (as serve
	// would on start), so that a file from an older version copies too.
	src, err := sqlite.Open(ctx, *from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openStore(ctx, *to) // migrates
	if err != nil {
		return err
	}
	defer dst.Close()
	var ids []string
	if *only != "" {
		ids = []string{*only}
	}
	rep, err := storecopy.Copy(ctx, src, dst, ids)
	if len(rep.Checks) == 0 && err != nil {
		return err
	}
	fmt.Fprintf(stdout, "copied %d rows of %d business(es) from %s\n", rep.Rows, len(rep.Businesses), *from)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "business\tkind\tcount\tsha256\tcheck")
	for _, c := range rep.Checks {
		check := "ok"
		if !c.OK() {
			check = fmt.Sprintf("MISMATCH (%s: %d %s)", kind, c.To.N, c.To.Sum)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", c.Business, c.Kind, c.From.N, c.From.Sum, check)
	}
	if ferr := tw.Flush(); ferr != nil {
		return ferr
	}
	return err
}
