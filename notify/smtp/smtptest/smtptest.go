// Package smtptest runs a real SMTP server (github.com/emersion/go-smtp) in
// the test process and keeps every mail it accepts, parsed with
// github.com/emersion/go-message, so tests can read what nextup really sent
// over the wire.
package smtptest

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-smtp"
)

// Mail is one accepted message.
type Mail struct {
	From string
	To   []string
	// Header is the parsed header; MessageID is its Message-ID without
	// angle brackets.
	Header    mail.Header
	MessageID string
	Subject   string
	// Text is the first text/plain part, decoded; HTML the first
	// text/html part ("" for none).
	Text string
	HTML string
	// Attachments are the parts sent as attachments, decoded.
	Attachments []Attachment
	Raw         []byte
}

// Attachment is one attached part of a mail.
type Attachment struct {
	Filename    string
	ContentType string // without parameters, e.g. "text/calendar"
	Params      map[string]string
	Body        []byte
}

// Server is a running SMTP server. Its fields may be set before the first
// mail arrives.
type Server struct {
	// Addr is host:port to deliver to.
	Addr string
	// Reject, if set, is asked about every recipient; a non-nil error
	// refuses it with that error (use *smtp.SMTPError for a code).
	Reject func(rcpt string) error

	mu    sync.Mutex
	mails []Mail
	ch    chan struct{} // closed and replaced on every arrival
	hold  chan struct{} // while set, DATA is answered only once it is closed
	srv   *smtp.Server
}

// Hold makes the server keep every mail that arrives from now on but not
// answer its DATA command until release is called: a sender that dies in
// between has delivered a mail it never learns about.
func (s *Server) Hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gate := make(chan struct{})
	s.hold = gate
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.hold == gate {
				s.hold = nil
			}
			s.mu.Unlock()
			close(gate)
		})
	}
}

// Start runs a server on 127.0.0.1 until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), ch: make(chan struct{})}
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = true
	s.srv.ReadTimeout = 10 * time.Second
	s.srv.WriteTimeout = 10 * time.Second
	s.srv.ErrorLog = log.New(io.Discard, "", 0) // a sender that dies mid-dialogue is what some tests do
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// Mails returns what has arrived so far, oldest first.
func (s *Server) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// Wait returns once at least n mails have arrived, or fails the test after
// timeout.
func (s *Server) Wait(t testing.TB, n int, timeout time.Duration) []Mail {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, ch := len(s.mails), s.ch
		s.mu.Unlock()
		if got >= n {
			return s.Mails()
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("smtptest: %d mails arrived, want %d", got, n)
		}
	}
}

// add keeps m and returns the gate to wait on before answering, if any.
func (s *Server) add(m Mail) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mails = append(s.mails, m)
	close(s.ch)
	s.ch = make(chan struct{})
	return s.hold
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s    *Server
	from string
	to   []string
}

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if x.s.Reject != nil {
		if err := x.s.Reject(to); err != nil {
			return err
		}
	}
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := parse(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unparseable message: " + err.Error()}
	}
	m.From, m.To = x.from, append([]string(nil), x.to...)
	if gate := x.s.add(m); gate != nil {
		<-gate
	}
	return nil
}

// parse reads a raw message into a Mail.
func parse(raw []byte) (Mail, error) {
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		return Mail{}, err
	}
	m := Mail{Header: r.Header, Raw: raw}
	m.MessageID, _ = r.Header.MessageID()
	m.Subject, _ = r.Header.Subject()
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Mail{}, err
		}
		b, err := io.ReadAll(p.Body)
		if err != nil {
			return Mail{}, err
		}
		switch h := p.Header.(type) {
		case *mail.InlineHeader:
			switch ct, _, _ := h.ContentType(); {
			case (ct == "text/plain" || ct == "") && m.Text == "":
				m.Text = strings.ReplaceAll(string(b), "\r\n", "\n")
			case ct == "text/html" && m.HTML == "":
				m.HTML = string(b)
			}
		case *mail.AttachmentHeader:
			a := Attachment{Body: b}
			a.Filename, _ = h.Filename()
			a.ContentType, a.Params, _ = h.ContentType()
			m.Attachments = append(m.Attachments, a)
		}
	}
	return m, nil
}
