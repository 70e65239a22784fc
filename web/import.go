package web

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/csvrows"
	"github.com/nextup-dev/nextup/waitlist"
)

// csvTypes are the Content-Types a CSV file arrives with: the standard one,
// what browsers send for a .csv on Windows, and plain text.
var csvTypes = map[string]bool{
	"text/csv": true, "application/csv": true, "text/plain": true,
	"text/tab-separated-values": true, "application/vnd.ms-excel": true,
}

// bodyLimit is the body limit of a request: a CSV import may be a whole
// file (csvrows.MaxBytes), an inbox mail 10 MiB; everything else is a
// small JSON body (MaxBody).
func (s *Server) bodyLimit(r *http.Request) int64 {
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/waitlist:import") {
		return csvrows.MaxBytes
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/inbox") {
		return maxInboxBytes
	}
	return s.maxBody()
}

type importRejectedJSON struct {
	Row      int                 `json:"row"`
	Problems []nextup.FieldError `json:"problems"`
}

type importRowJSON struct {
	Row     int    `json:"row"`
	Outcome string `json:"outcome"`
	EntryID string `json:"entry_id"`
}

// importJSON is the import result of API.md, with each kept row's entry
// and the header cells that named no field.
type importJSON struct {
	Imported       int                  `json:"imported"`
	Updated        int                  `json:"updated"`
	Unchanged      int                  `json:"unchanged"`
	Rejected       []importRejectedJSON `json:"rejected"`
	Rows           []importRowJSON      `json:"rows"`
	IgnoredColumns []string             `json:"ignored_columns"`
}

// ImportResultJSON writes an import result in the API's shape (the CLI
// prints the same).
func ImportResultJSON(res waitlist.ImportResult) any {
	out := importJSON{Imported: res.Imported, Updated: res.Updated, Unchanged: res.Unchanged,
		Rejected: []importRejectedJSON{}, Rows: []importRowJSON{}, IgnoredColumns: []string{}}
	for _, r := range res.Rejected {
		out.Rejected = append(out.Rejected, importRejectedJSON{Row: r.Row, Problems: r.Problems})
	}
	for _, r := range res.Rows {
		out.Rows = append(out.Rows, importRowJSON{Row: r.Row, Outcome: string(r.Outcome), EntryID: r.EntryID})
	}
	out.IgnoredColumns = append(out.IgnoredColumns, res.IgnoredColumns...)
	return out
}

// importWaitlist is POST /v1/businesses/{bid}/waitlist:import: a CSV file
// in the body; ?date_order=dmy|mdy overrides the business's country.
func (s *Server) importWaitlist(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if !csvTypes[ct] {
		s.writeError(w, r, invalidf("Content-Type", "send the file itself as text/csv"))
		return
	}
	var o waitlist.ImportOptions
	switch v := csvrows.DateOrder(r.URL.Query().Get("date_order")); v {
	case csvrows.DateOrderCountry, csvrows.DayFirst, csvrows.MonthFirst:
		o.DateOrder = v
	default:
		s.writeError(w, r, invalidf("date_order", "must be dmy or mdy"))
		return
	}
	body, err := readBody(r, csvrows.MaxBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.Svc.ImportCSV(r.Context(), b.ID, bytes.NewReader(body), o)
	if errors.Is(err, csvrows.ErrTooLarge) {
		err = fmt.Errorf("%w: %s", errTooLarge, strings.TrimPrefix(err.Error(), csvrows.ErrTooLarge.Error()+": "))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ImportResultJSON(res))
}
