package nextup_test

import (
	"testing"

	"github.com/nextup-dev/nextup"
)

// TestSheetLink: what an owner pastes becomes a spreadsheet id when it is
// a Google Sheets link to the sheet itself, and a CSV URL otherwise.
func TestSheetLink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		link string
		want nextup.SheetSource
	}{
		{"https://docs.google.com/spreadsheets/d/1AbC-x_9/edit#gid=0", nextup.SheetSource{SpreadsheetID: "1AbC-x_9"}},
		{" https://docs.google.com/spreadsheets/d/1AbC/edit?usp=sharing ", nextup.SheetSource{SpreadsheetID: "1AbC"}},
		{"https://docs.google.com/spreadsheets/d/1AbC", nextup.SheetSource{SpreadsheetID: "1AbC"}},
		{"https://docs.google.com/spreadsheets/d/1AbC/view", nextup.SheetSource{SpreadsheetID: "1AbC"}},
		{"1AbC", nextup.SheetSource{SpreadsheetID: "1AbC"}},
		{"https://docs.google.com/spreadsheets/d/e/2PACX-1v/pub?output=csv", nextup.SheetSource{URL: "https://docs.google.com/spreadsheets/d/e/2PACX-1v/pub?output=csv"}},
		{"https://docs.google.com/spreadsheets/d/1AbC/export?format=csv", nextup.SheetSource{URL: "https://docs.google.com/spreadsheets/d/1AbC/export?format=csv"}},
		{"https://example.com/waitlist.csv", nextup.SheetSource{URL: "https://example.com/waitlist.csv"}},
	} {
		if got := nextup.SheetLink(c.link); got != c.want {
			t.Errorf("SheetLink(%q) = %+v, want %+v", c.link, got, c.want)
		}
	}
}
