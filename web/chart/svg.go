package chart

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The palette follows the staff layout's CSS variables; presentation
// attributes cannot refer to var(--green), so the values are repeated here.
const (
	colInk    = "#1d1d1f" // --ink
	colMuted  = "#5f5f66" // --muted
	colTrack  = "#f0eee9" // a shade lighter than --line, for empty track
	colLine   = "#e4e2dc" // --line
	colGreen  = "#0a7c4a" // --green
	colAmber  = "#d69e2e" // a fill-strength --amber (#8a5a00 is a text colour)
	colBlue   = "#1d4f91" // the pages' link and "open" blue
	colRed    = "#a4262c" // --red
	colOther  = "#8e8c86"
	fontStack = "system-ui,-apple-system,Segoe UI,sans-serif"
)

// fill maps a segment's class to its colour. Unknown classes are grey, so a
// new state shows up rather than vanishing.
func fill(class string) string {
	switch class {
	case "confirmed", "claimed", "accepted":
		return colGreen
	case "held", "offered":
		return colAmber
	case "waitlisted", "waiting":
		return colBlue
	case "free":
		return colLine
	case "noshow", "no-show", "declined", "expired", "cancelled":
		return colRed
	}
	return colOther
}

// classToken returns class if it is a single safe CSS class token and ""
// otherwise, so a caller's class can neither add classes nor inject markup.
func classToken(class string) string {
	if class == "" || len(class) > 32 {
		return ""
	}
	for i := 0; i < len(class); i++ {
		c := class[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return ""
		}
	}
	return class
}

// clean makes s fit to be XML text: invalid UTF-8 and characters XML 1.0
// forbids (and the C1 controls HTML frowns on) become U+FFFD, and tabs and line breaks become spaces (a label is
// one line).
func clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r == utf8.RuneError, r < 0x20, r >= 0x7F && r <= 0x9F, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}

// trunc shortens s to at most n runes, ending in "…" when it cut.
func trunc(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for j := range s {
		if k == n-1 {
			i = j
			break
		}
		k++
	}
	return s[:i] + "…"
}

// esc escapes text and attribute values alike, for both HTML and XML.
func esc(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range clean(s) {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// num formats a coordinate with at most two decimals; the fixed precision
// keeps the output byte-for-byte deterministic.
func num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// nonneg counts a negative figure as zero.
func nonneg(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// add adds two non-negative ints, saturating instead of overflowing.
func add(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// compact abbreviates a non-negative count for the drawing (the aria-label
// gives it exactly): 9999, 12.3k, 123k, 4.5M, 6.7B, 8.9T.
func compact(n int) string {
	if n < 10000 {
		return strconv.Itoa(n)
	}
	return compactFloat(float64(n))
}

// compactFloat abbreviates f as compact does; below 1000 it is whole.
func compactFloat(f float64) string {
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}} {
		if f >= u.div {
			v := f / u.div
			prec := 1
			if v >= 100 {
				prec = 0
			}
			return strconv.FormatFloat(v, 'f', prec, 64) + u.unit
		}
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// pct formats a share 0..1 as a whole percentage; shares above one (more
// successes than tries, which is bad data) read ">100%".
func pct(share float64) string {
	if share > 1 {
		return ">100%"
	}
	return strconv.Itoa(int(math.Round(share*100))) + "%"
}

// svg collects one chart's markup.
type svg struct {
	b strings.Builder
}

// open writes the <svg> element with its accessible name and <title>.
func (s *svg) open(w, h float64, title, summary string) {
	s.b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="100%" viewBox="0 0 `)
	s.b.WriteString(num(w) + " " + num(h))
	s.b.WriteString(`" preserveAspectRatio="xMinYMin meet" font-family="` + fontStack + `" aria-label="`)
	s.b.WriteString(esc(summary))
	s.b.WriteString(`"><title>`)
	s.b.WriteString(esc(title))
	s.b.WriteString(`</title>`)
}

func (s *svg) close() string {
	s.b.WriteString(`</svg>`)
	return s.b.String()
}

// rect writes a filled rectangle; class is already a safe token list.
func (s *svg) rect(class string, x, y, w, h float64, fill string) {
	if w < 0 {
		w = 0
	}
	if h < 0 {
		h = 0
	}
	s.b.WriteString(`<rect class="` + class + `" x="` + num(x) + `" y="` + num(y) +
		`" width="` + num(w) + `" height="` + num(h) + `" fill="` + fill + `"/>`)
}

// line writes a stroked line.
func (s *svg) line(class string, x1, y1, x2, y2 float64, stroke string, width float64) {
	s.b.WriteString(`<line class="` + class + `" x1="` + num(x1) + `" y1="` + num(y1) + `" x2="` + num(x2) +
		`" y2="` + num(y2) + `" stroke="` + stroke + `" stroke-width="` + num(width) + `"/>`)
}

// text writes escaped text; anchor is "start", "middle" or "end".
func (s *svg) text(class string, x, y float64, size float64, anchor, fill string, bold bool, t string) {
	s.b.WriteString(`<text class="` + class + `" x="` + num(x) + `" y="` + num(y) + `" font-size="` + num(size) + `"`)
	if anchor != "start" {
		s.b.WriteString(` text-anchor="` + anchor + `"`)
	}
	if bold {
		s.b.WriteString(` font-weight="600"`)
	}
	s.b.WriteString(` fill="` + fill + `">` + esc(t) + `</text>`)
}
