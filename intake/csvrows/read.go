package csvrows

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// The bounds of one file. A waitlist of a few thousand people is a large
// one; each row is its own transaction (see package waitlist), so the row
// bound also bounds how long one import runs.
const (
	MaxBytes = 2 << 20 // 2 MiB
	MaxRows  = 5000    // rows below the header
)

// ErrTooLarge is returned (wrapped, with the limit) for a file over MaxBytes
// or with more than MaxRows rows below its header.
var ErrTooLarge = errors.New("file too large")

// Record is one row of a sheet: its cells, and its number as a spreadsheet
// shows it (the first line is row 1). Err is set, and Cells empty, for a row
// the CSV reader could not read (a stray quote); it explains what to fix.
type Record struct {
	Row   int
	Cells []string
	Err   error
}

// separators are the ones ReadCSV tells apart, in the order that wins a tie.
var separators = []rune{',', ';', '\t'}

// ReadCSV reads a whole CSV file into records: decoding, separator and row
// numbers as the package documentation says. Only an unreadable or too
// large file is an error; a malformed row is a Record with Err.
func ReadCSV(r io.Reader) ([]Record, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("%w: a file may have at most %d bytes", ErrTooLarge, MaxBytes)
	}
	text := decode(b)
	if !strings.Contains(text, "\n") {
		text = strings.ReplaceAll(text, "\r", "\n") // classic Mac line ends
	}
	sep, rest, ok := sepLine(text)
	if ok {
		// Excel reads this hint line and does not show it: the next line is row 1.
		text = rest
	} else {
		sep = detectSeparator(text)
	}
	return readRecords(text, sep, MaxRows+maxHeaderRow)
}

// decode returns the file as text: UTF-8 (a BOM dropped), UTF-16 with a
// BOM, or Windows-1252 when the bytes are not UTF-8.
func decode(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		b = b[3:]
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		le := b[0] == 0xFF
		b = b[2:]
		u := make([]uint16, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			if le {
				u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
			} else {
				u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
			}
		}
		return string(utf16.Decode(u))
	}
	if utf8.Valid(b) {
		return string(b)
	}
	// Excel on Windows saves "CSV" in the system code page, Windows-1252
	// across Western Europe and the Americas. Every byte decodes.
	out, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(out)
}

// sepLine recognises Excel's "sep=X" first line.
func sepLine(text string) (sep rune, rest string, ok bool) {
	line, rest, _ := strings.Cut(text, "\n")
	line = strings.TrimRight(line, "\r")
	v, found := strings.CutPrefix(strings.ToLower(line), "sep=")
	if !found || utf8.RuneCountInString(v) != 1 {
		return 0, text, false
	}
	r, _ := utf8.DecodeRuneInString(v)
	for _, s := range separators {
		if r == s {
			return r, rest, true
		}
	}
	return 0, text, false
}

// detectSeparator picks the separator with which the best header is
// recognised in the first rows; failing that, the one the first non-blank
// line has most of outside quotes; failing that, a comma.
func detectSeparator(text string) rune {
	best, bestScore := ',', 0
	for _, sep := range separators {
		recs, _ := readRecords(text, sep, maxHeaderRow)
		if h, ok := findHeader(recs, nil); ok && h.score > bestScore {
			best, bestScore = sep, h.score
		}
	}
	if bestScore > 0 {
		return best
	}
	var line string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(l) != "" {
			line = l
			break
		}
	}
	bestN := 0
	for _, sep := range separators {
		if n := countOutsideQuotes(line, sep); n > bestN {
			best, bestN = sep, n
		}
	}
	return best
}

func countOutsideQuotes(line string, sep rune) int {
	n, quoted := 0, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
		case r == sep && !quoted:
			n++
		}
	}
	return n
}

// readRecords reads up to limit records (more is ErrTooLarge) with the
// given separator.
func readRecords(text string, sep rune, limit int) ([]Record, error) {
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma = sep
	cr.FieldsPerRecord = -1 // rows may be ragged; a missing cell is a blank one
	cr.LazyQuotes = false   // a stray quote is the row's problem, not a silent merge of rows
	var out []Record
	// Lines that quoted line breaks added so far: they start no row.
	extra := 0
	for {
		start := cr.InputOffset()
		cells, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			// A quote never closed swallows the rest of the file; a stray
			// quote spoils its own row only.
			unclosed := cr.InputOffset() == int64(len(text)) && strings.Count(text[start:], `"`)%2 == 1
			out = append(out, Record{Row: pe.StartLine - extra, Err: explain(pe, unclosed)})
			extra += pe.Line - pe.StartLine
		} else if err != nil {
			return out, fmt.Errorf("read the file: %w", err)
		} else {
			line, _ := cr.FieldPos(0)
			last := len(cells) - 1
			end, _ := cr.FieldPos(last)
			end += strings.Count(cells[last], "\n")
			row := line - extra
			extra += end - line
			if blank(cells) {
				continue // ",,,," rows below the data are no rows to count or report
			}
			out = append(out, Record{Row: row, Cells: cells})
		}
		if len(out) > limit {
			return out[:limit], fmt.Errorf("%w: a file may have at most %d rows below its header", ErrTooLarge, MaxRows)
		}
	}
}

// explain words a CSV parse error for the person who will fix the sheet.
func explain(pe *csv.ParseError, unclosed bool) error {
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return errors.New(`a cell has a quote (") inside it but does not start with one: put the whole cell in quotes and double the quote ("")`)
	case errors.Is(pe.Err, csv.ErrQuote) && unclosed:
		return errors.New(`a quoted cell is never closed: everything from this row to the end of the file was read as one cell`)
	case errors.Is(pe.Err, csv.ErrQuote):
		return errors.New(`a quoted cell goes on after its closing quote: a quote inside a quoted cell is written twice ("")`)
	}
	return fmt.Errorf("this row could not be read: %v", pe.Err)
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
