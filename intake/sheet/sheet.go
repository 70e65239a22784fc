// Package sheet reads the rows of a business's waitlist sheet: a Google
// Sheet through the official Sheets v4 client (google.golang.org/api), or
// any published CSV URL (Google's "publish to the web" CSV, an Excel
// Online or Airtable CSV export) over plain HTTPS. Its Reader is the
// waitlist's SheetReader; only cmd/ wires it in, so the Google SDK is no
// dependency of the use cases, the web layer or the simulation.
//
// It only reads. What the rows mean (header detection, the column
// mapping, upserting entries) is the import's business.
package sheet

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
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

// Reader reads sheets. Sheets is needed for spreadsheet ids (see
// NewSheets); HTTP for CSV URLs (default http.DefaultClient).
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
// service account whose JSON key file is at path, to read sheets shared
// with it (read-only scope). A credentials file of any other type is
// refused here, before it is used: an external account's file names URLs
// and commands the client would fetch tokens from or run, which is why
// option.WithCredentialsFile is deprecated. (option.WithAuthCredentialsFile
// names the type too, but google.golang.org/api v0.309.0 does not check
// it on the path the Sheets client takes; this does.)
func ServiceAccountKey(path string) (option.ClientOption, error) {
	creds, err := credentials.NewCredentialsFromFile(credentials.ServiceAccount, path,
		&credentials.DetectOptions{Scopes: []string{sheets.SpreadsheetsReadonlyScope}})
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
	if r.Sheets == nil {
		return nil, errors.New("sheet: no Google Sheets client configured (--google-credentials-file or --google-api-key)")
	}
	rng := src.Range
	if rng == "" {
		rng = "A:Z"
	}
	resp, err := r.Sheets.Spreadsheets.Values.Get(src.SpreadsheetID, rng).ValueRenderOption("FORMATTED_VALUE").
		MajorDimension("ROWS").Context(ctx).Do()
	if err != nil {
		return nil, fmt.Errorf("sheet %s: %w", src, err)
	}
	if len(resp.Values) > MaxRows+1 {
		return nil, fmt.Errorf("sheet %s: %d rows, more than %d", src, len(resp.Values)-1, MaxRows)
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
	return out, nil
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
