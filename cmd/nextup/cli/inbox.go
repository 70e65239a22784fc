package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// runInbox is `nextup inbox import --business BID FILE.eml`: the inbox
// lane from the command line (the same as POST …/inbox and the SMTP
// listener): the booking request becomes a proposed row, printed with what
// the parser read.
func runInbox(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "import" {
		return usageError{"inbox: want `inbox import --business BID FILE.eml`"}
	}
	fs := newFlagSet("inbox import")
	db := fs.String("db", "nextup.db", "database: a file path for the embedded store, or postgres://…")
	bid := fs.String("business", "", "the business's id")
	base := fs.String("base-url", "http://localhost:8080", "public base URL of the owner's approve and reject links (as for serve)")
	files, err := parseFlagsAndArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(files) != 1 || *bid == "" {
		return usageError{"inbox import: want `inbox import --business BID FILE.eml`"}
	}
	var in io.Reader = stdin
	if files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			return fmt.Errorf("inbox import: %w", err)
		}
		defer f.Close()
		in = f
	}
	raw, err := io.ReadAll(io.LimitReader(in, 10<<20+1))
	if err != nil {
		return fmt.Errorf("inbox import %s: %w", files[0], err)
	}
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := waitlist.New(st, nextup.RealClock{}, *base)
	p, repeat, err := svc.ReceiveMail(ctx, *bid, raw)
	if err != nil {
		return fmt.Errorf("inbox import %s: %w", files[0], err)
	}
	state := "proposed"
	if repeat {
		state = "already proposed"
	}
	f := p.Fields
	fmt.Fprintf(stdout, "%s %s (received %s)\n", p.ID, state, p.ReceivedAt.Format("2006-01-02 15:04 MST"))
	for _, kv := range [][2]string{{"name", f.Name}, {"email", f.Email}, {"phone", f.Phone}, {"service", f.Service},
		{"staff", f.Staff}} {
		if kv[1] != "" {
			fmt.Fprintf(stdout, "  %-9s %s\n", kv[0], kv[1])
		}
	}
	if f.PartySize > 0 {
		fmt.Fprintf(stdout, "  %-9s %d\n", "party", f.PartySize)
	}
	if !f.Earliest.IsZero() || !f.Latest.IsZero() {
		fmt.Fprintf(stdout, "  %-9s %s to %s\n", "window", fmtBound(f.Earliest), fmtBound(f.Latest))
	}
	if len(p.Problems) > 0 {
		fmt.Fprintf(stdout, "  check:    %s\n", strings.Join(p.Problems, "; "))
	}
	return nil
}

func fmtBound(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("Mon 2 Jan 2006 15:04")
}
