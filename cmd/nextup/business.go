package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

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
