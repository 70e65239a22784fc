// Package cli is the nextup command line: serve, demo, import, copy and
// the rest. cmd/nextup runs it as the default binary; other builds (the
// AWS module's aws/cmd/nextup-aws) run the same commands with extra
// adapters registered first (RegisterMailParser, RegisterStore).
//
// With cmd/ above it, it is the only place that wires adapters together:
// the store, the clock, the timer sweeper, the outbox relay and its
// channels, the web server, the payment, sheet and mail-parser adapters.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/sqlite"
)

const usage = `nextup — a waitlist that fills cancelled slots.

Usage:
  nextup serve [--addr :8080] [--db FILE] [--base-url URL] [--admin-token T | --admin-token-file F]
               [--clock real|fake] [--notify capture,smtp,twilio] [--smtp-url URL --mail-from ADDR]
               [--twilio-account-sid SID --twilio-auth-token-file F --twilio-from NUMBER]
               [--instance NAME] [--db-max-conns N] [--db-statement-timeout D] [--db-listen]
                                             run the API v1, the dashboard, timers and the outbox relay
  nextup demo [--addr :8080] [--db FILE]     a demo salon on a fresh embedded store, served with
                                             copy-paste curl commands and a /dev/outbox page
  nextup demo --tour                         a guided run of the whole loop in the terminal
  nextup business create --name N --timezone TZ [--db FILE]
                                             create a business and print it with its API key
  nextup staff add --business BID --email E --password-file F [--name N] [--db …]
                                             a staff account that signs in to the dashboard at /login
  nextup import --business BID [--db …] [--date-order dmy|mdy] [--json] FILE.csv
                                             import a waitlist kept in a spreadsheet (- reads standard
                                             input); bad rows are listed, good rows kept, and importing
                                             the same file again changes nothing
  nextup inbox import --business BID [--db …] FILE.eml
                                             a forwarded booking request becomes a proposed row for
                                             staff to approve (as mail to the inbound address does)
  nextup replay entry ID [--db …] [--slot SLOT] [--json]
                                             an entry's place in line over time and every slot it
                                             could have been offered, and why not, from the audit trail
  nextup migrate [--db FILE|postgres://…]    apply the embedded schema migrations
  nextup copy --from nextup.db --to postgres://… [--business BID]
                                             move the whole history to PostgreSQL (nextup-aws: or to
                                             dynamodb://…), verified
  nextup backup --db nextup.db --to FILE [--force]
                                             an online, consistent copy of the embedded store, safe
                                             while nextup serve writes, verified (docs/backup.md)
  nextup restore --from FILE --db nextup.db [--force] [--verify-only]
                                             check a backup, then put it in place atomically; refused
                                             while a server has the database open
  nextup bench [-n N] [-entries N]           measure join, decide, release→offer and claim
                                             against a baseline write on a fresh store
  nextup bench -http [-n N] [-clients C]     joins/s and claims/s over HTTP on loopback
  nextup cost [--entries N] [--sms-share F] [--region R] [--country CC] [--json]
                                             the AWS deployment's monthly bill, line by line, from
                                             public prices and measured figures (--help: assumptions)
  nextup version                             print the version

Every flag can also be set as an environment variable NEXTUP_<FLAG> (e.g. NEXTUP_DB).
nextup COMMAND --help lists the command's flags.
`

// Main runs the command named by os.Args and exits: 2 for a usage error,
// 1 for any other failure.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, "nextup:", err)
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "nextup:", err)
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run runs the command args names. A command's --help (or -h) prints its
// flags to stdout and is no error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	var help helpRequest
	if errors.As(err, &help) {
		help.print(stdout)
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return nil
	}
	switch args[0] {
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "business":
		if len(args) < 2 || args[1] != "create" {
			return usageError{"business: want `business create`"}
		}
		return runBusinessCreate(ctx, args[2:], stdout)
	case "staff":
		if len(args) < 2 || args[1] != "add" {
			return usageError{"staff: want `staff add`"}
		}
		return runStaffAdd(ctx, args[2:], os.Stdin, stdout)
	case "migrate":
		return runMigrate(ctx, args[1:], stdout)
	case "bench":
		return runBench(ctx, args[1:], stdout)
	case "cost":
		return runCost(args[1:], stdout)
	case "serve":
		return runServe(ctx, args[1:], stdout)
	case "copy":
		return runCopy(ctx, args[1:], stdout)
	case "backup":
		return runBackup(ctx, args[1:], stdout)
	case "restore":
		return runRestore(ctx, args[1:], stdout)
	case "import":
		return runImport(ctx, args[1:], os.Stdin, stdout)
	case "inbox":
		return runInbox(ctx, args[1:], os.Stdin, stdout)
	case "replay":
		return runReplay(ctx, args[1:], stdout)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "nextup", version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// version is the module version, or the VCS revision of a development build.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 && (v == "" || v == "(devel)") {
			v = "devel-" + s.Value[:12]
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v
}

// newFlagSet returns a flag set whose flags fall back to NEXTUP_* environment
// variables (applied by parseFlags).
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// helpRequest is a command's --help: run prints the command's flags.
type helpRequest struct{ fs *flag.FlagSet }

func (h helpRequest) Error() string { return h.fs.Name() + ": help requested" }

// print writes the command's flags, each with its environment variable.
func (h helpRequest) print(w io.Writer) {
	fmt.Fprintf(w, "Usage: nextup %s [flags]\n\nFlags (each may also be set as NEXTUP_<FLAG>, dashes as underscores):\n", h.fs.Name())
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
	h.fs.SetOutput(io.Discard)
}

// parseFlags parses args, then fills every flag not given on the command line
// from NEXTUP_<FLAG> (dashes become underscores), so config comes from flags
// first and the environment second.
func parseFlags(fs *flag.FlagSet, args []string) error {
	rest, err := parseFlagsAndArgs(fs, args)
	if err == nil && len(rest) > 0 {
		err = usageError{fmt.Sprintf("%s: unexpected argument %q", fs.Name(), rest[0])}
	}
	return err
}

// parseFlagsAndArgs is parseFlags for a command that takes arguments too
// (`import FILE`): flags may come before or after them; "--" ends the
// flags. It returns the arguments.
func parseFlagsAndArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, helpRequest{fs}
		} else if err != nil {
			return nil, usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
		}
		if fs.NArg() == 0 {
			break
		}
		if used := len(args) - fs.NArg(); used > 0 && args[used-1] == "--" {
			rest = append(rest, fs.Args()...)
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "NEXTUP_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageError{fmt.Sprintf("%s=%q: %v", env, v, e)}
			}
		}
	})
	return rest, err
}

// openStore opens the store named by --db: a URL whose scheme a build
// registered (RegisterStore), a postgres:// URL PostgreSQL (with pg
// applied), anything else a file of the embedded SQLite store.
func openStore(ctx context.Context, db string, pg ...postgres.Option) (nextup.Store, error) {
	if open := registeredStore(db); open != nil {
		return open(ctx, db)
	}
	if isPostgres(db) {
		s, err := postgres.Open(ctx, db, pg...)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL: %w", err)
		}
		// Migrations run on start too, under an advisory lock, so several
		// instances starting at once apply each one once.
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("migrate PostgreSQL: %w", err)
		}
		return s, nil
	}
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", db, err)
	}
	return s, nil
}

// redactDSN hides the password of a database URL, for logs.
func redactDSN(db string) string {
	scheme, _, ok := strings.Cut(db, "://")
	if !ok {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return scheme + "://(unparseable)"
	}
	return u.Redacted()
}

func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

func runMigrate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("migrate")
	db := fs.String("db", "nextup.db", "database: a file path for the embedded store, or postgres://…")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if open := registeredStore(*db); open != nil {
		// A registered store is migrated by opening it.
		s, err := open(ctx, *db)
		if err != nil {
			return err
		}
		s.Close()
		fmt.Fprintf(stdout, "%s: schema up to date\n", redactDSN(*db))
		return nil
	}
	if isPostgres(*db) {
		s, err := postgres.Open(ctx, *db)
		if err != nil {
			return fmt.Errorf("open PostgreSQL: %w", err)
		}
		defer s.Close()
		if err := s.Migrate(ctx); err != nil {
			return err
		}
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "PostgreSQL: schema at version %d\n", v)
		return nil
	}
	s, err := sqlite.Open(ctx, *db, sqlite.SkipMigrate())
	if err != nil {
		return fmt.Errorf("open %s: %w", *db, err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		return err
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: schema at version %d\n", *db, v)
	return nil
}
