package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
)

func TestImportCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "n.db")
	out, err := runCLI(t, "business", "create", "--db", db, "--name", "Corner Cuts", "--timezone", "Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	var biz struct{ ID string }
	if err := json.Unmarshal([]byte(out), &biz); err != nil {
		t.Fatal(err)
	}
	// The real clock runs here: dates far in the future stay valid.
	file := filepath.Join(dir, "waitlist.csv")
	csv := "\uFEFFName;Email;Phone;Service;Date;Shoe size\r\n" +
		"Ann;ann@example.com;+44 7700 900001;haircut;01.12.2099;38\r\n" +
		"Ben;;;haircut;;\r\n" +
		"Cy;cy@example.com;;haircut;31.02.2099;\r\n"
	if err := os.WriteFile(file, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	// Flags may follow the file.
	out, err = runCLI(t, "import", file, "--db", db, "--business", biz.ID)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	for _, want := range []string{
		"waitlist.csv: imported 1, updated 0, unchanged 0, rejected 2",
		"columns left out: Shoe size",
		"row 3: email: email or phone is required",
		`row 4: earliest: "31.02.2099" is not a date`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Again, as JSON: nothing changes.
	out, err = runCLI(t, "import", "--db", db, "--business", biz.ID, "--json", file)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Imported, Unchanged int
		Rejected            []struct{ Row int }
		Rows                []struct {
			Row     int
			Outcome string
			EntryID string `json:"entry_id"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Imported != 0 || res.Unchanged != 1 || len(res.Rejected) != 2 || res.Rows[0].Row != 2 {
		t.Fatalf("again: %s", out)
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Read(context.Background(), func(tx nextup.Tx) error {
		e, err := tx.EntryGet(context.Background(), res.Rows[0].EntryID)
		if err == nil && (e.Name != "Ann" || e.Phone != "+447700900001" || e.Source != "import") {
			t.Errorf("Ann: %+v", e)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// A file that cannot be read is an error, and so is an unknown business.
	if _, err := runCLI(t, "import", "--db", db, "--business", biz.ID, filepath.Join(dir, "nope.csv")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := runCLI(t, "import", "--db", db, "--business", "biz_nope", file); !errors.Is(err, nextup.ErrNotFound) {
		t.Errorf("unknown business: %v", err)
	}
	for _, args := range [][]string{{"import", "--db", db, file}, {"import", "--db", db, "--business", biz.ID},
		{"import", "--business", biz.ID, "--date-order", "ymd", file}, {"import", "--business", biz.ID, file, "other.csv"}} {
		var ue usageError
		if _, err := runCLI(t, args...); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
