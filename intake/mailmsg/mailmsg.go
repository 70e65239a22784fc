package mailmsg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // non-UTF-8 bodies and headers
	gomail "github.com/emersion/go-message/mail"
	"golang.org/x/text/encoding/charmap"
)

// Bounds on what Extract reads. A booking request is a few kilobytes; the
// bounds only stop a hostile or broken message from costing memory or
// stack.
const (
	// MaxSize is the largest raw message Extract accepts.
	MaxSize = 10 << 20
	// MaxDepth is how deeply multiparts and attached messages may nest.
	MaxDepth = 12
	// MaxParts is how many MIME parts Extract looks at in all.
	MaxParts = 256
	// maxForwards is how many inline forwards are unwrapped.
	maxForwards = 8
)

// Errors Extract returns.
var (
	ErrTooLarge = errors.New("mailmsg: message larger than 10 MiB")
	ErrTooDeep  = errors.New("mailmsg: message nested too deeply")
	ErrNoText   = errors.New("mailmsg: message has no text")
)

// Request is the original requester's message, dug out of whatever
// forwarding wrapped it.
type Request struct {
	// From is who wrote the original message: the From of the forwarded or
	// attached message, not the forwarder. Address may be empty when a
	// forward header gave only a name.
	From mail.Address
	// Forwarder is the outer message's sender, for the caller's
	// allowed-forwarders check. It equals From when nothing was forwarded.
	Forwarder mail.Address
	// Forwarded reports whether an original message was found inside the
	// outer one (inline or attached).
	Forwarded bool
	// Sent is when the original was written: its own Date when a forward
	// header or attached message carries one that can be read, otherwise
	// the outer Date. Zero when neither can be read.
	Sent time.Time
	// Subject is the original's subject with Fwd:/FW:/Re: prefixes removed.
	Subject string
	// Reply reports whether the original was itself a reply (its subject
	// began with Re:), so that a name in its greeting is the person who
	// wrote before rather than one the requester asks for.
	Reply bool
	// Body is the original's text: HTML turned into text, quoted replies
	// and the signature removed.
	Body string
	// Signature is what was cut from the end of Body as a signature
	// (sign-off block, mobile footer, disclaimer), kept for contact
	// details.
	Signature string
	// Note is what the forwarders wrote above the forwarded message, if
	// anything, outermost first.
	Note string
	// Warnings says what could not be read cleanly (an unknown charset, a
	// forward date in an unknown format, ...). They are not errors: the
	// rest of the request is still good.
	Warnings []string
}

// Extract reads a raw RFC 5322 message and returns the requester's
// message. It fails on messages over MaxSize, nested deeper than MaxDepth,
// whose header cannot be read at all, or that hold no text.
func Extract(raw []byte) (Request, error) {
	if len(raw) > MaxSize {
		return Request{}, ErrTooLarge
	}
	budget := MaxParts
	return extract(raw, 0, &budget)
}

func extract(raw []byte, depth int, budget *int) (Request, error) {
	if depth > MaxDepth {
		return Request{}, ErrTooDeep
	}
	var req Request
	e, err := message.Read(bytes.NewReader(raw))
	if e == nil {
		return Request{}, fmt.Errorf("read message header: %w", err)
	}
	if err != nil {
		req.warn("outer part: %v", err)
	}
	h := gomail.Header{Header: e.Header}
	req.From = headerAddress(h, &req)
	req.Forwarder = req.From
	if d, err := h.Date(); err == nil {
		req.Sent = d
	} else if d, ok := parseLooseDate(h.Get("Date"), time.UTC); ok {
		req.Sent = d
	} else {
		req.warn("unreadable Date %q", clip(h.Get("Date"), 80))
	}
	subject, err := h.Subject()
	if err != nil {
		req.warn("subject: %v", err)
	}
	req.Subject = cleanSubject(subject)
	req.Reply = isReplySubject(subject)
	outerSubject := subject

	w := walker{budget: budget, req: &req}
	if err := w.walk(e, depth); err != nil {
		return Request{}, err
	}
	text := w.plain
	if w.html != "" && (strings.TrimSpace(text) == "" || looksLikeHTMLStub(text)) {
		text = htmlToText(w.html)
	}
	text = normalizeText(text)

	if w.attached != nil {
		inner, err := extract(w.attached, depth+1, budget)
		if errors.Is(err, ErrTooDeep) {
			return Request{}, err
		}
		if err == nil && (inner.From.Address != "" || inner.From.Name != "") {
			inner.Forwarder = req.Forwarder
			inner.Forwarded = true
			if inner.Sent.IsZero() {
				inner.Sent = req.Sent
			}
			if inner.Subject == "" {
				inner.Subject = req.Subject
			}
			note, _ := stripQuotesAndSignature(text)
			inner.Note = note
			inner.Warnings = append(req.Warnings, inner.Warnings...)
			return inner, nil
		}
		if err != nil {
			req.warn("attached message: %v", err)
		}
	}

	loc := time.UTC
	if !req.Sent.IsZero() {
		loc = req.Sent.Location()
	}
	fwdSubject := isForwardSubject(outerSubject)
	for range maxForwards {
		f, ok := findForward(text, fwdSubject, loc)
		if !ok {
			break
		}
		// Every forwarder on the way may have written a line.
		if note, _ := stripQuotesAndSignature(f.note); note != "" {
			req.Note = strings.TrimSpace(req.Note + "\n\n" + note)
		}
		req.Forwarded = true
		if f.from.Address != "" || f.from.Name != "" {
			req.From = f.from
		} else {
			req.warn("forwarded message without a readable From")
		}
		if !f.date.IsZero() {
			req.Sent = f.date
		} else if f.rawDate != "" {
			req.warn("unreadable forwarded Date %q; using the outer Date", clip(f.rawDate, 80))
		}
		if f.subject != "" {
			req.Subject = cleanSubject(f.subject)
			req.Reply = isReplySubject(f.subject)
			fwdSubject = isForwardSubject(f.subject)
		}
		text = f.body()
	}
	req.Body, req.Signature = stripQuotesAndSignature(text)
	if strings.TrimSpace(req.Body) == "" && strings.TrimSpace(req.Subject) == "" && strings.TrimSpace(req.Signature) == "" {
		return req, ErrNoText
	}
	return req, nil
}

func (r *Request) warn(format string, args ...any) {
	if len(r.Warnings) < 32 {
		r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
	}
}

// headerAddress reads From (or, failing that, Sender and Reply-To) and
// falls back to a lenient reading for the malformed headers some clients
// write.
func headerAddress(h gomail.Header, req *Request) mail.Address {
	for _, k := range []string{"From", "Sender", "Reply-To"} {
		v := h.Get(k)
		if v == "" {
			continue
		}
		if l, err := h.AddressList(k); err == nil && len(l) > 0 && l[0] != nil {
			return *l[0]
		}
		if a, ok := looseAddress(decodeWords(v)); ok {
			return a
		}
		req.warn("unreadable %s %q", k, clip(v, 80))
	}
	return mail.Address{}
}

func decodeWords(s string) string {
	d := mime.WordDecoder{CharsetReader: message.CharsetReader}
	if t, err := d.DecodeHeader(s); err == nil {
		return t
	}
	return s
}

// walker collects the first plain-text part, the first HTML part and the
// first attached message of an entity tree.
type walker struct {
	budget   *int
	req      *Request
	plain    string
	html     string
	attached []byte
}

func (w *walker) walk(e *message.Entity, depth int) error {
	if depth > MaxDepth {
		return ErrTooDeep
	}
	*w.budget--
	if *w.budget < 0 {
		return fmt.Errorf("mailmsg: more than %d MIME parts", MaxParts)
	}
	if mr := e.MultipartReader(); mr != nil {
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				return nil
			}
			if p == nil {
				if err != nil {
					w.req.warn("multipart: %v", err)
				}
				return nil
			}
			if err != nil {
				w.req.warn("part: %v", err)
			}
			if err := w.walk(p, depth+1); err != nil {
				return err
			}
		}
	}
	t, _, _ := e.Header.ContentType()
	disp, _, _ := e.Header.ContentDisposition()
	switch {
	case t == "message/rfc822" || t == "message/global":
		if w.attached == nil {
			b, err := readBounded(e.Body)
			if err != nil {
				w.req.warn("attached message: %v", err)
			}
			w.attached = b
		}
	case disp == "attachment":
		// A text file attached to the request is not the request.
	case t == "text/plain" || (t == "" && depth == 0):
		if w.plain == "" {
			w.plain = w.readText(e)
		}
	case t == "text/html":
		if w.html == "" {
			w.html = w.readText(e)
		}
	}
	return nil
}

func (w *walker) readText(e *message.Entity) string {
	b, err := readBounded(e.Body)
	if err != nil {
		w.req.warn("text part: %v", err)
	}
	if !utf8.Valid(b) {
		// Undeclared or wrongly declared 8-bit text: Windows-1252 is what
		// such mail almost always is, and it maps every byte.
		if d, err := charmap.Windows1252.NewDecoder().Bytes(b); err == nil {
			b = d
		}
	}
	return string(b)
}

func readBounded(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if len(b) > MaxSize {
		return b[:MaxSize], ErrTooLarge
	}
	return b, err
}

// looksLikeHTMLStub reports whether a text/plain alternative is only a
// pointer to the HTML part.
func looksLikeHTMLStub(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s))
	if len(t) > 200 {
		return false
	}
	for _, p := range []string{"html", "view this email", "does not support"} {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}

// normalizeText makes line ends "\n", turns no-break and zero-width spaces
// into plain ones, drops control characters and trailing spaces (but keeps
// the signature delimiter "-- ").
func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\u00a0' || r == '\u202f' || r == '\u2007':
			b.WriteRune(' ')
		case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' || r == '\u00ad':
		case r == utf8.RuneError:
			b.WriteRune(r)
		case r < ' ' && r != '\n' && r != '\t':
		default:
			b.WriteRune(r)
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		if l == "-- " {
			continue
		}
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// cleanSubject drops reply and forward prefixes, however many.
func cleanSubject(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for range 10 {
		t := subjectPrefix.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	return s
}

func isReplySubject(s string) bool {
	return replySubject.MatchString(strings.TrimSpace(s))
}

func isForwardSubject(s string) bool {
	return forwardSubject.MatchString(strings.TrimSpace(s))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
