// Package ses sends nextup's email channel through Amazon SES (the v2
// API's SendEmail), and reads the bounces and complaints SES reports
// back (feedback.go).
//
// A mail is the one the SMTP sender sends (mailout.Compose: text, HTML
// alternative, invite.ics, the RFC 8058 unsubscribe headers and an
// X-Nextup-Message-Id header), sent as Raw content so that both channels
// deliver the same bytes. SES replaces the Message-ID and Date headers of
// what it sends, so a mail sent twice after a crash is not folded into one
// by mail clients as it is over SMTP; the provider id is SES's MessageId,
// which its event notifications name. Each mail is tagged
// nextup_message_id=<outbox id> (an SES message tag), and carries the
// header too, so that a bounce or complaint names the outbox message.
package ses

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/mailout"
)

// TagMessageID is the name of the SES message tag that carries the outbox
// message id.
const TagMessageID = "nextup_message_id"

// tagValue is what SES takes as a tag value: up to 256 ASCII letters,
// digits, underscores and dashes. Outbox ids ("msg_" and lower-case
// base32, "_fb" for a fallback) fit.
var tagValue = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// Config is what the sender needs.
type Config struct {
	// From is the sender address, with or without a display name; its
	// address (or its domain) must be an identity verified in SES.
	From string
	// ConfigurationSetName, if set, names the configuration set whose
	// event destination publishes bounces and complaints (to an SNS topic).
	ConfigurationSetName string
	// Client is the SES v2 client (cmd/ builds it from the one aws.Config).
	Client *sesv2.Client
}

// Sender delivers email messages. Create it with New.
type Sender struct {
	cfg    Config
	domain string // of the From address: the right side of Message-IDs
}

var _ nextup.Sender = (*Sender)(nil)

// New checks cfg and returns a Sender.
func New(cfg Config) (*Sender, error) {
	if cfg.Client == nil {
		return nil, errors.New("ses: no SES client")
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("ses: From address %q: %w", cfg.From, err)
	}
	_, domain, _ := strings.Cut(from.Address, "@")
	return &Sender{cfg: cfg, domain: domain}, nil
}

// Channel is email.
func (s *Sender) Channel() nextup.Channel { return nextup.ChannelEmail }

// Account is "ses:" and the client's region: SES's sending rate is an
// account's in a region, shared by every sender on it.
func (s *Sender) Account() string { return "ses:" + s.cfg.Client.Options().Region }

// Send sends msg with SendEmail and returns SES's MessageId. An address
// SES refuses is ErrInvalid (bad_address, address_refused: the relay gives
// up at once and the address is opted out); a refusal that is the
// account's or the message's (the account suspended or paused, the MAIL
// FROM domain or the sender not verified, a message SES cannot take) is
// ErrInvalid mail_refused: no use trying again, but the address is not to
// blame. Throttling and SES's own failures are retried.
func (s *Sender) Send(ctx context.Context, msg nextup.Message) (string, error) {
	m, err := mailout.Compose(s.cfg.From, msg.ID+"@"+s.domain, msg)
	if err != nil {
		return "", err
	}
	var raw bytes.Buffer
	if _, err := m.WriteTo(&raw); err != nil {
		return "", fmt.Errorf("ses: write mail %s: %w", msg.ID, err)
	}
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.cfg.From),
		Destination:      &types.Destination{ToAddresses: []string{msg.To}},
		Content:          &types.EmailContent{Raw: &types.RawMessage{Data: raw.Bytes()}},
	}
	if s.cfg.ConfigurationSetName != "" {
		in.ConfigurationSetName = aws.String(s.cfg.ConfigurationSetName)
	}
	if tagValue.MatchString(msg.ID) {
		// An id SES would refuse as a tag is still named by the header.
		in.EmailTags = []types.MessageTag{{Name: aws.String(TagMessageID), Value: aws.String(msg.ID)}}
	}
	out, err := s.cfg.Client.SendEmail(ctx, in)
	if err != nil {
		return "", sendError(msg, err)
	}
	if out.MessageId == nil || *out.MessageId == "" {
		return "", fmt.Errorf("ses send %s: no MessageId in the answer", msg.ID)
	}
	return *out.MessageId, nil
}

// sendError sorts SES's refusals: the address's, the account's or the
// message's (permanent), or a passing one (retried).
func sendError(msg nextup.Message, err error) error {
	var (
		badRequest *types.BadRequestException
		rejected   *types.MessageRejected
		suspended  *types.AccountSuspendedException
		paused     *types.SendingPausedException
		mailFrom   *types.MailFromDomainNotVerifiedException
		notFound   *types.NotFoundException
	)
	switch {
	case errors.As(err, &badRequest):
		if aboutAddress(badRequest.ErrorMessage()) {
			return nextup.Errorf(nextup.ErrInvalid, "bad_address", "ses refused the address %s: %v", msg.To, err)
		}
		return nextup.Errorf(nextup.ErrInvalid, "mail_refused", "ses refused mail %s: %v", msg.ID, err)
	case errors.As(err, &rejected):
		if recipientRejected(rejected.ErrorMessage()) {
			return nextup.Errorf(nextup.ErrInvalid, "address_refused", "ses refused %s: %v", msg.To, err)
		}
		// An unverified identity (the sender, or any recipient while the
		// account is in the sandbox), a message SES cannot read: the
		// operator's to fix, not the address's fault.
		return nextup.Errorf(nextup.ErrInvalid, "mail_refused", "ses refused mail %s to %s: %v", msg.ID, msg.To, err)
	case errors.As(err, &suspended), errors.As(err, &paused), errors.As(err, &mailFrom), errors.As(err, &notFound):
		// The account may not send (suspended, sending paused), its MAIL
		// FROM domain is not verified, the configuration set is gone.
		return nextup.Errorf(nextup.ErrInvalid, "mail_refused", "ses may not send mail %s: %v", msg.ID, err)
	}
	return fmt.Errorf("ses send %s: %w", msg.ID, err)
}

// aboutAddress reports whether a BadRequestException is about an email
// address (SES's parser: "Missing final '@domain'", "Local address
// contains control or whitespace", "Domain contains illegal character",
// "Illegal address") rather than another field of the request.
func aboutAddress(message string) bool {
	m := strings.ToLower(message)
	for _, s := range []string{"address", "@domain", "domain contains", "domain starts", "domain ends", "local address"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// recipientRejected reports whether a MessageRejected is about the
// recipient itself: an address SES will not send to ("Address
// blacklisted.", an illegal address), as opposed to an identity that is
// not verified or a message it cannot take.
func recipientRejected(message string) bool {
	m := strings.ToLower(message)
	if strings.Contains(m, "not verified") {
		return false
	}
	return strings.Contains(m, "blacklisted") || strings.Contains(m, "illegal address") || strings.Contains(m, "suppression list")
}
