package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

func runBusinessCreate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("business create")
	db := fs.String("db", "nextup.db", "database: a file path for the embedded store")
	name := fs.String("name", "", "business name")
	tz := fs.String("timezone", "", "IANA timezone, e.g. Europe/London")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := waitlist.New(st, nextup.RealClock{}, "")
	b, key, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: *name, Timezone: *tz})
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(map[string]any{
		"id": b.ID, "name": b.Name, "timezone": b.Timezone, "rules": b.Rules, "api_key": key,
	}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, string(out))
	return err
}

// runStaffAdd is `nextup staff add --business BID --email E --password-file F`:
// a staff account that signs in to the business's dashboard at /login.
func runStaffAdd(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlagSet("staff add")
	db := fs.String("db", "nextup.db", "database: a file path for the embedded store, or postgres://…")
	bid := fs.String("business", "", "the business's id")
	email := fs.String("email", "", "the staff member's email (what they sign in with)")
	name := fs.String("name", "", "their name, as the dashboard shows it")
	passFile := fs.String("password-file", "", "a file holding the password (- reads standard input)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *bid == "" || *email == "" || *passFile == "" {
		return usageError{"staff add: --business, --email and --password-file are required"}
	}
	var pw []byte
	var err error
	if *passFile == "-" {
		pw, err = io.ReadAll(io.LimitReader(stdin, 1024))
	} else {
		pw, err = os.ReadFile(*passFile)
	}
	if err != nil {
		return fmt.Errorf("staff add: password: %w", err)
	}
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := waitlist.New(st, nextup.RealClock{}, "")
	s, err := svc.AddStaff(ctx, waitlist.AddStaffParams{BusinessID: *bid, Email: *email, Name: *name,
		Password: strings.TrimRight(string(pw), "\r\n")})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "staff %s (%s) can sign in to business %s at /login\n", s.ID, s.Email, s.BusinessID)
	return err
}
