// Package sheet reads the rows of a business's waitlist sheet: a Google
// Sheet through the official Sheets v4 client (google.golang.org/api), or
// any published CSV URL (Google's "publish to the web" CSV, an Excel
// Online or Airtable CSV export) over plain HTTPS. Its Reader is the
// waitlist's SheetReader; only cmd/ wires it in, so the Google SDK is no
// dependency of the use cases, the web layer or the simulation.
//
// It reads, and writes the few cells the mirror writes back to a Google
// Sheet (a claimed row marked booked: Update). What the rows mean (header
// detection, the column mapping, upserting entries, which row is whose)
// is the import's business; a published CSV is only read.
package sheet

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/auth/credentials"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/nextup-dev/nextup"
)

// SafeHTTPClient is the client for CSV URLs a business names: https only
// (redirects too, at most 3), no proxy, and never to an address of this
// machine or its private networks (loopback, private, link-local — the
// cloud metadata address —, carrier-grade NAT, unspecified), checked on
// the address actually dialled, after DNS.
func SafeHTTPClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return err
		}
		ip = ip.Unmap()
		if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() ||
			netip.MustParsePrefix("100.64.0.0/10").Contains(ip) {
			return errors.New("sheet: that address is not on the public internet")
		}
		return nil
	}}
	tr := &http.Transport{Proxy: nil, DialContext: dialer.DialContext, TLSHandshakeTimeout: 10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 || req.URL.Scheme != "https" {
			return errors.New("sheet: too many redirects, or one away from https")
		}
		return nil
	}}
}

// MaxBytes bounds a CSV download, MaxRows the rows kept from either.
const (
	MaxBytes = 5 << 20
	MaxRows  = 10000
)

// Reader reads sheets, and writes back to Google Sheets (Update). Sheets
// is needed for spreadsheet ids (see NewSheets); HTTP for CSV URLs
// (default http.DefaultClient).
type Reader struct {
	Sheets *sheets.Service
	HTTP   *http.Client
}

// NewSheets makes a Sheets v4 client from the options of
// google.golang.org/api/option: ServiceAccountKey for a service account, option.WithAPIKey for a public sheet, and option.WithEndpoint
// (with option.WithoutAuthentication) for a local fake in tests.
func NewSheets(ctx context.Context, opts ...option.ClientOption) (*sheets.Service, error) {
	return sheets.NewService(ctx, opts...)
}

// ServiceAccountKey is the client option that authenticates as the
// service account whose JSON key file is at path, to read the sheets
// shared with it and mark claimed rows in those it may edit (the
// read-write spreadsheets scope; a sheet shared for viewing only is read,
// and its write-back refused by Google). A credentials file of any other type is
// refused here, before it is used: an external account's file names URLs
// and commands the client would fetch tokens from or run, which is why
// option.WithCredentialsFile is deprecated. (option.WithAuthCredentialsFile
// names the type too, but google.golang.org/api v0.309.0 does not check
// it on the path the Sheets client takes; this does.)
func ServiceAccountKey(path string) (option.ClientOption, error) {
	creds, err := credentials.NewCredentialsFromFile(credentials.ServiceAccount, path,
		&credentials.DetectOptions{Scopes: []string{sheets.SpreadsheetsScope}})
	if err != nil {
		return nil, fmt.Errorf("sheet: %s: %w", path, err)
	}
	return option.WithAuthCredentials(creds), nil
}

// Read returns the sheet's rows, the header first, every cell as the
// sheet shows it (formatted values). Rows past MaxRows are an error, not
// silently dropped.
func (r *Reader) Read(ctx context.Context, src nextup.SheetSource) ([][]string, error) {
	if err := src.Validate(); err != nil {
		return nil, err
	}
	if src.URL != "" {
		return r.readCSV(ctx, src.URL)
	}
	_, rows, err := r.values(ctx, src)
	return rows, err
}

// values reads a Google Sheet's range: the range the values cover (its
// top left cell is rows[0][0]) and the rows.
func (r *Reader) values(ctx context.Context, src nextup.SheetSource) (string, [][]string, error) {
	if r.Sheets == nil {
		return "", nil, errors.New("sheet: no Google Sheets client configured (--google-credentials-file or --google-api-key)")
	}
	rng := src.Range
	if rng == "" {
		rng = "A:Z"
	}
	resp, err := r.Sheets.Spreadsheets.Values.Get(src.SpreadsheetID, rng).ValueRenderOption("FORMATTED_VALUE").
		MajorDimension("ROWS").Context(ctx).Do()
	if err != nil {
		return "", nil, fmt.Errorf("sheet %s: %w", src, err)
	}
	if len(resp.Values) > MaxRows+1 {
		return "", nil, fmt.Errorf("sheet %s: %d rows, more than %d", src, len(resp.Values)-1, MaxRows)
	}
	out := make([][]string, 0, len(resp.Values))
	for _, row := range resp.Values {
		cells := make([]string, len(row))
		for i, c := range row {
			if c != nil {
				cells[i] = fmt.Sprint(c)
			}
		}
		out = append(out, cells)
	}
	return cmp.Or(resp.Range, rng), out, nil
}

// Update writes cells of a Google Sheet. It reads the sheet as Read does,
// asks edit which cells to set, by their place among the rows it was
// handed (so that the caller finds the row it means in the sheet as it is
// at this moment, after any rows above it were deleted or moved), and
// writes them in one spreadsheets.values.batchUpdate as plain text (RAW:
// nothing written is taken for a formula). An edit that returns no cells
// writes nothing; its error is Update's. A published CSV cannot be
// written to.
func (r *Reader) Update(ctx context.Context, src nextup.SheetSource, edit func(rows [][]string) ([]nextup.SheetCell, error)) error {
	if err := src.Validate(); err != nil {
		return err
	}
	if src.URL != "" {
		return errors.New("sheet: a published CSV is read-only")
	}
	covered, rows, err := r.values(ctx, src)
	if err != nil {
		return err
	}
	origin, err := parseOrigin(covered)
	if err != nil {
		return fmt.Errorf("sheet %s: %w", src, err)
	}
	cells, err := edit(rows)
	if err != nil || len(cells) == 0 {
		return err
	}
	req := &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW"}
	for _, c := range cells {
		if c.Row < 0 || c.Col < 0 {
			return fmt.Errorf("sheet %s: no cell at row %d, column %d", src, c.Row, c.Col)
		}
		req.Data = append(req.Data, &sheets.ValueRange{Range: origin.cell(c.Row, c.Col), MajorDimension: "ROWS",
			Values: [][]any{{c.Value}}})
	}
	if _, err := r.Sheets.Spreadsheets.Values.BatchUpdate(src.SpreadsheetID, req).Context(ctx).Do(); err != nil {
		return fmt.Errorf("sheet %s: write %d cells: %w", src, len(cells), err)
	}
	return nil
}

// origin is the top left cell of a range: its sheet (as the range names
// it, quotes and all; "" for the first sheet), column (from 0) and row
// (from 1).
type origin struct {
	sheet    string
	col, row int
}

// parseOrigin reads the top left cell of an A1 range, as the Sheets API
// writes the range a read covers: "Sheet1!A1:Z1000", "'My tab'!B3:F",
// "A:Z" (row 1), "2:9" (column A).
func parseOrigin(rng string) (origin, error) {
	o := origin{row: 1}
	ref := rng
	if i := strings.LastIndex(rng, "!"); i >= 0 {
		o.sheet, ref = rng[:i], rng[i+1:]
	}
	ref, _, _ = strings.Cut(ref, ":")
	letters := strings.TrimRightFunc(ref, func(r rune) bool { return r >= '0' && r <= '9' })
	digits := ref[len(letters):]
	for _, c := range strings.ToUpper(letters) {
		if c < 'A' || c > 'Z' {
			return o, fmt.Errorf("range %q: not an A1 range", rng)
		}
		o.col = o.col*26 + int(c-'A'+1)
	}
	if o.col > 0 {
		o.col--
	}
	if digits != "" {
		n, err := strconv.Atoi(digits)
		if err != nil || n < 1 {
			return o, fmt.Errorf("range %q: not an A1 range", rng)
		}
		o.row = n
	}
	return o, nil
}

// cell is the A1 name of the cell row rows down and col columns right of
// o (both from 0).
func (o origin) cell(row, col int) string {
	name := ""
	for n := o.col + col + 1; n > 0; n = (n - 1) / 26 {
		name = string(rune('A'+(n-1)%26)) + name
	}
	a1 := name + strconv.Itoa(o.row+row)
	if o.sheet != "" {
		return o.sheet + "!" + a1
	}
	return a1
}

func (r *Reader) readCSV(ctx context.Context, u string) ([][]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/csv, text/plain;q=0.5")
	c := r.HTTP
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sheet %s: %w", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("sheet %s: %s", u, res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("sheet %s: %w", u, err)
	}
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("sheet %s: more than %d bytes", u, MaxBytes)
	}
	text := strings.TrimPrefix(string(body), "\ufeff")
	cr := csv.NewReader(strings.NewReader(text))
	cr.FieldsPerRecord = -1
	if first, _, _ := strings.Cut(text, "\n"); strings.Count(first, ";") > strings.Count(first, ",") {
		cr.Comma = ';'
	}
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("sheet %s: %w", u, err)
	}
	if len(rows) > MaxRows+1 {
		return nil, fmt.Errorf("sheet %s: %d rows, more than %d", u, len(rows)-1, MaxRows)
	}
	return rows, nil
}
