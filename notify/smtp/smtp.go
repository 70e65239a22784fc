// Package smtp sends nextup's email channel through an SMTP server, with
// github.com/wneessen/go-mail.
//
// The outbox message id is the idempotency key: it becomes the mail's
// Message-ID (<id@domain of the From address>) and is returned as the
// provider id, so a message the relay sends twice after a crash reaches the
// recipient as two copies of one Message-ID, which mail clients fold into
// one.
//
// The mail itself (text and HTML, the invite, the one-click unsubscribe
// headers) is package mailout's, which the SES sender sends too.
package smtp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/mailout"
)

// Config says where and how to send. Parse it from a URL with ParseURL.
type Config struct {
	Host     string
	Port     int
	Username string
	Password string
	// TLS is "starttls" (use STARTTLS when the server offers it; the
	// default), "require" (refuse a server without STARTTLS), "tls"
	// (implicit TLS, smtps://) or "none".
	TLS string
	// From is the sender address, with or without a display name.
	From string
	// Timeout bounds one connection and its dialogue. Default 30s.
	Timeout time.Duration
}

// ParseURL reads smtp://[user:pass@]host[:port][?tls=starttls|require|none]
// or smtps://[user:pass@]host[:port]. The port defaults to 587 for smtp://
// and 465 for smtps://.
func ParseURL(raw, from string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("smtp url: %w", err)
	}
	c := Config{Host: u.Hostname(), From: from, TLS: "starttls"}
	switch u.Scheme {
	case "smtp":
		c.Port = 587
	case "smtps":
		c.Port, c.TLS = 465, "tls"
	default:
		return Config{}, fmt.Errorf("smtp url: scheme must be smtp or smtps, not %q", u.Scheme)
	}
	if c.Host == "" {
		return Config{}, errors.New("smtp url: no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("smtp url: bad port %q", p)
		}
		c.Port = n
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	if t := u.Query().Get("tls"); t != "" {
		if u.Scheme == "smtps" || (t != "starttls" && t != "require" && t != "none") {
			return Config{}, fmt.Errorf("smtp url: tls=%q: want starttls, require or none (smtps:// is always TLS)", t)
		}
		c.TLS = t
	}
	if from == "" {
		return Config{}, errors.New("smtp: a From address is required (--mail-from)")
	}
	if _, err := mail.ParseAddress(from); err != nil {
		return Config{}, fmt.Errorf("smtp: From address %q: %w", from, err)
	}
	return c, nil
}

// Sender delivers email messages. Create it with New.
type Sender struct {
	cfg    Config
	domain string // of the From address: the right side of Message-IDs
}

var _ nextup.Sender = (*Sender)(nil)

// New returns a Sender for cfg.
func New(cfg Config) (*Sender, error) {
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp: From address %q: %w", cfg.From, err)
	}
	_, domain, _ := strings.Cut(from.Address, "@")
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	return &Sender{cfg: cfg, domain: domain}, nil
}

// Channel is email.
func (s *Sender) Channel() nextup.Channel { return nextup.ChannelEmail }

// Account is "smtp:", the login and the server ("smtp:user@host:port", or
// "smtp:host:port" without a login): the relay's rate limit is per
// account at a mail provider, shared by every sender that logs in as it.
func (s *Sender) Account() string {
	server := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	if s.cfg.Username == "" {
		return "smtp:" + server
	}
	return "smtp:" + s.cfg.Username + "@" + server
}

// MessageID is the Message-ID header value (without angle brackets) of the
// outbox message with the given id.
func (s *Sender) MessageID(id string) string { return id + "@" + s.domain }

// Send delivers msg over one SMTP connection. An address the server or
// the parser refuses for good is ErrInvalid (the relay gives up at once);
// anything else, including a temporary refusal, is retried.
func (s *Sender) Send(ctx context.Context, msg nextup.Message) (string, error) {
	id := s.MessageID(msg.ID)
	m, err := mailout.Compose(s.cfg.From, id, msg)
	if err != nil {
		return "", err
	}
	c, err := s.client()
	if err != nil {
		return "", err
	}
	if err := c.DialAndSendWithContext(ctx, m); err != nil {
		var se *gomail.SendError
		if errors.As(err, &se) && se.Reason == gomail.ErrSMTPRcptTo && !se.IsTemp() {
			if mailboxError(se.ErrorCode(), se.EnhancedStatusCode()) {
				return "", nextup.Errorf(nextup.ErrInvalid, "address_refused", "mail server refused %s: %v", msg.To, err)
			}
			// Refused for a reason of the server's (relay denied, policy):
			// no use trying again, but the address is not to blame.
			return "", nextup.Errorf(nextup.ErrInvalid, "mail_refused", "mail server refused to send to %s: %v", msg.To, err)
		}
		return "", fmt.Errorf("smtp send %s: %w", msg.ID, err)
	}
	return id, nil
}

// mailboxError reports whether a permanent RCPT refusal is about the
// address itself (no such mailbox, bad address: RFC 3463 5.1.x, or 550,
// 551 and 553 without an enhanced code) rather than the server's policy
// (5.7.x relay denied) or its state.
func mailboxError(code int, enhanced string) bool {
	if enhanced != "" {
		return strings.HasPrefix(enhanced, "5.1.")
	}
	return code == 550 || code == 551 || code == 553
}

func (s *Sender) client() (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.cfg.Timeout)}
	switch s.cfg.TLS {
	case "tls":
		opts = append(opts, gomail.WithSSLPort(false))
	case "require":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	c, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("smtp client: %w", err)
	}
	return c, nil
}
