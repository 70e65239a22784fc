package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/nextup-dev/nextup/store/sqlite"
)

// runBackup is `nextup backup --db FILE --to FILE`: an online, consistent,
// verified copy of the embedded store, safe to take while nextup serve
// writes (store/sqlite's Backup; docs/backup.md).
func runBackup(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("backup")
	db := fs.String("db", "nextup.db", "the embedded store's file to copy (it may be in use by nextup serve)")
	to := fs.String("to", "", "the backup file to write")
	force := fs.Bool("force", false, "replace the backup file if it exists")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to == "" {
		return usageError{"backup: --to FILE is required"}
	}
	if isPostgres(*db) || registeredStore(*db) != nil {
		return usageError{"backup: --db must be the embedded store's file (back PostgreSQL up with pg_dump, DynamoDB with its point-in-time recovery)"}
	}
	rep, err := sqlite.Backup(ctx, *db, *to, *force)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup of %s written to %s in %v\n", *db, rep.Path, rep.Took.Round(100_000))
	printReport(stdout, rep)
	fmt.Fprintln(stdout, "verified: integrity check ok; the copy's row counts and checksums equal the database's at the instant of the copy")
	return nil
}

// runRestore is `nextup restore --from FILE --db FILE`: the database
// replaced by a verified copy of a backup, refused while a server has the
// database open.
func runRestore(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("restore")
	from := fs.String("from", "", "the backup file to restore (made by nextup backup or litestream restore)")
	db := fs.String("db", "nextup.db", "the embedded store's file to write")
	force := fs.Bool("force", false, "replace the database file if it exists (never one a running server has open)")
	verify := fs.Bool("verify-only", false, "check the backup and print its report; write nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" {
		return usageError{"restore: --from FILE is required"}
	}
	if *verify {
		rep, err := sqlite.Verify(ctx, *from)
		if err != nil {
			return fmt.Errorf("restore: %s does not check: %w", *from, err)
		}
		fmt.Fprintf(stdout, "%s checks: integrity ok\n", *from)
		printReport(stdout, rep)
		return nil
	}
	if isPostgres(*db) || registeredStore(*db) != nil {
		return usageError{"restore: --db must be a file of the embedded store"}
	}
	rep, err := sqlite.Restore(ctx, *from, *db, *force)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s from %s in %v\n", rep.Path, *from, rep.Took.Round(100_000))
	printReport(stdout, rep)
	fmt.Fprintln(stdout, "verified before it replaced anything: integrity check ok, nextup schema, counts and checksums read from the restored bytes")
	return nil
}

func printReport(w io.Writer, rep sqlite.BackupReport) {
	fmt.Fprintf(w, "schema version %d; %d pages of %d bytes (%d bytes); %d rows in %d tables\n",
		rep.SchemaVersion, rep.Pages, rep.PageSize, rep.Bytes, rep.Rows(), len(rep.Tables))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\trows\tchecksum\t")
	for _, t := range rep.Tables {
		fmt.Fprintf(tw, "%s\t%d\t%s\t\n", t.Name, t.Rows, t.Sum)
	}
	tw.Flush()
}
