package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// runImport is `nextup import --business BID FILE.csv`: the CSV import of
// the API (POST …/waitlist:import) from the command line. A file that
// cannot be read, or the store failing, is an error (exit 1); rejected
// rows are listed and are not.
func runImport(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlagSet("import")
	db := fs.String("db", "nextup.db", "database: a file path for the embedded store, or postgres://…")
	bid := fs.String("business", "", "the business's id")
	order := fs.String("date-order", "", "how 01/12/2026 is read: dmy or mdy (default: as the business's country writes dates)")
	base := fs.String("base-url", "http://localhost:8080", "public base URL of the claim links of offers the import makes at once (as for serve)")
	asJSON := fs.Bool("json", false, "print the result as the API returns it")
	files, err := parseFlagsAndArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 || *bid == "" {
		return usageError{"import: want `import --business BID FILE.csv`"}
	}
	o := waitlist.ImportOptions{DateOrder: csvrows.DateOrder(*order)}
	switch o.DateOrder {
	case csvrows.DateOrderCountry, csvrows.DayFirst, csvrows.MonthFirst:
	default:
		return usageError{"import: --date-order must be dmy or mdy"}
	}
	name := files[0]
	var in io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		in = f
	}
	// Read the whole file before touching the store: a file that cannot
	// be read changes nothing.
	recs, err := csvrows.ReadCSV(in)
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := waitlist.New(st, nextup.RealClock{}, *base)
	res, err := svc.ImportRecords(ctx, *bid, recs, o)
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(web.ImportResultJSON(res))
	}
	fmt.Fprintf(stdout, "%s: imported %d, updated %d, unchanged %d, rejected %d\n",
		name, res.Imported, res.Updated, res.Unchanged, len(res.Rejected))
	if len(res.IgnoredColumns) > 0 {
		fmt.Fprintf(stdout, "columns left out: %s\n", strings.Join(res.IgnoredColumns, ", "))
	}
	for _, r := range res.Rejected {
		var ps []string
		for _, p := range r.Problems {
			ps = append(ps, p.Field+": "+p.Message)
		}
		fmt.Fprintf(stdout, "row %d: %s\n", r.Row, strings.Join(ps, "; "))
	}
	return nil
}
