// Package smtpd is nextup's inbound SMTP listener, on
// github.com/emersion/go-smtp: staff forward booking requests to
// {slug}@{inbound domain}, and each accepted mail is handed to the inbox
// lane as raw RFC 5322.
//
// It accepts mail only for known businesses and only from their allowed
// forwarders, bounds the size of a message and how fast one client may
// send, and says why it refuses in the reply codes a sending server
// understands:
//
//	550 5.1.1  no such mailbox (not the inbound domain, or no business with that slug)
//	550 5.7.1  the sender is not one of the business's allowed forwarders
//	552 5.3.4  the message is too big (go-smtp, from MaxMessageBytes)
//	421 4.7.0  too many messages from this client: try again later
//	451 4.3.0  the lane failed: try again later
//
// The allowed-forwarder check reads the envelope sender (MAIL FROM). It is
// only as strong as the sending server's honesty: SPF and DKIM are not
// checked here (put the listener behind a mail server that checks them, or
// accept that a forged forwarder can propose rows, which staff still
// approve one by one).
package smtpd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
	"golang.org/x/time/rate"

	"github.com/nextup-dev/nextup"
)

// Defaults of Server's optional fields.
const (
	DefaultMaxBytes   = 10 << 20 // 10 MiB
	DefaultPerMinute  = 30       // messages a minute from one client address
	DefaultRecipients = 10
)

// Directory finds the business an inbound address names.
type Directory interface {
	BusinessBySlug(ctx context.Context, slug string) (nextup.Business, error)
}

// Deliver hands one accepted mail to the inbox lane for one business;
// from is the envelope sender. An error makes the listener answer 451 (the
// sending server tries again).
type Deliver func(ctx context.Context, businessID, from string, raw []byte) error

// Server is the listener. Directory, Deliver and Domain are required.
type Server struct {
	Directory Directory
	Deliver   Deliver
	// Domain is the inbound domain: mail to {slug}@Domain is accepted.
	Domain string
	// MaxBytes bounds one message. Default 10 MiB.
	MaxBytes int64
	// PerMinute bounds how many messages one client address may send a
	// minute. Default 30.
	PerMinute int
	Logger    *slog.Logger

	mu      sync.Mutex
	clients map[string]*rate.Limiter
	srv     *smtp.Server
}

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.srv == nil {
		s.srv = s.newSMTP()
	}
	srv := s.srv
	s.mu.Unlock()
	err := srv.Serve(ln)
	if errors.Is(err, smtp.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the listener.
func (s *Server) Close() error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

func (s *Server) newSMTP() *smtp.Server {
	srv := smtp.NewServer(backend{s})
	srv.Domain = s.Domain
	srv.MaxMessageBytes = s.maxBytes()
	srv.MaxRecipients = DefaultRecipients
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.AllowInsecureAuth = false
	return srv
}

func (s *Server) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// allow takes one message from the client's budget.
func (s *Server) allow(addr net.Addr) bool {
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	per := s.PerMinute
	if per <= 0 {
		per = DefaultPerMinute
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil || len(s.clients) > 10000 {
		s.clients = map[string]*rate.Limiter{} // forget old clients rather than grow without bound
	}
	l := s.clients[host]
	if l == nil {
		l = rate.NewLimiter(rate.Every(time.Minute/time.Duration(per)), per)
		s.clients[host] = l
	}
	return l.Allow() // wall time: a guard against floods, not logic
}

type backend struct{ s *Server }

func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: b.s, remote: c.Conn().RemoteAddr()}, nil
}

type session struct {
	s      *Server
	remote net.Addr
	from   string
	to     []string // business ids
}

var (
	errNoMailbox  = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such mailbox here"}
	errNotAllowed = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "This sender may not forward to this address: add it to the business's inbound senders"}
	errSlowDown   = &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: "Too many messages from you; try again later"}
	errLater      = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Could not take the message now; try again later"}
	// ErrTooBig is the 552 a Deliver may return for a mail the lane
	// cannot take for its size or depth.
	ErrTooBig = &smtp.SMTPError{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 3, 4}, Message: "Message too big"}
	errNoFrom = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "A sender address is required"}
)

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if !x.s.allow(x.remote) {
		return errSlowDown
	}
	a, err := mail.ParseAddress(from)
	if err != nil || from == "" {
		return errNoFrom
	}
	x.from = strings.ToLower(a.Address)
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	local, domain, ok := strings.Cut(strings.ToLower(strings.TrimSpace(to)), "@")
	if !ok || domain != strings.ToLower(x.s.Domain) || local == "" {
		return errNoMailbox
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := x.s.Directory.BusinessBySlug(ctx, local)
	if errors.Is(err, nextup.ErrNotFound) {
		return errNoMailbox
	}
	if err != nil {
		x.s.logger().Error("inbound mail: business lookup", "slug", local, "error", err)
		return errLater
	}
	allowed := false
	for _, a := range b.Profile.InboundSenders {
		allowed = allowed || strings.EqualFold(a, x.from)
	}
	if !allowed {
		return errNotAllowed
	}
	x.to = append(x.to, b.ID)
	return nil
}

func (x *session) Data(r io.Reader) error {
	var buf bytes.Buffer
	_, err := io.Copy(&buf, io.LimitReader(r, x.s.maxBytes()+1))
	if errors.Is(err, smtp.ErrDataTooLarge) || int64(buf.Len()) > x.s.maxBytes() {
		return ErrTooBig
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, bid := range x.to {
		if err := x.s.Deliver(ctx, bid, x.from, buf.Bytes()); err != nil {
			var se *smtp.SMTPError
			if errors.As(err, &se) {
				return se // the lane's own answer (552 too big)
			}
			x.s.logger().Error("inbound mail: the lane failed", "business_id", bid, "from", x.from, "error", err)
			return errLater
		}
	}
	return nil
}
