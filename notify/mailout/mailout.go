// Package mailout writes the mail of an outbox message (RFC 5322 / MIME,
// with github.com/wneessen/go-mail): the one message both email senders
// deliver, notify/smtp over SMTP and aws/notify/ses as SES raw content.
// It is a writer of a format, not an adapter: it talks to no server.
//
// A message is multipart/alternative text and HTML when it has an HTML
// part, carries its iCalendar invite (a confirmation) as an invite.ics
// attachment, names its outbox message in an X-Nextup-Message-Id header
// (what a bounce quotes back), and mail a person may stop carries the
// RFC 8058 one-click unsubscribe headers: List-Unsubscribe with the HTTPS
// link and List-Unsubscribe-Post: List-Unsubscribe=One-Click, so a mail
// client's unsubscribe button POSTs to the link with no page in between.
package mailout

import (
	"fmt"
	"strings"

	gomail "github.com/wneessen/go-mail"

	"github.com/nextup-dev/nextup"
)

// Compose builds the mail of msg from the address from, with the
// Message-ID messageID (without angle brackets). An address the parser
// refuses is ErrInvalid bad_address.
func Compose(from, messageID string, msg nextup.Message) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.From(from); err != nil {
		return nil, fmt.Errorf("mail from: %w", err)
	}
	if err := m.To(msg.To); err != nil {
		return nil, nextup.Errorf(nextup.ErrInvalid, "bad_address", "email address %q: %v", msg.To, err)
	}
	m.Subject(msg.Subject)
	m.SetMessageIDWithValue(messageID)
	m.SetGenHeader("X-Nextup-Message-Id", msg.ID)
	m.SetDateWithValue(msg.CreatedAt)
	m.SetBodyString(gomail.TypeTextPlain, msg.Body)
	if msg.HTML != "" {
		m.AddAlternativeString(gomail.TypeTextHTML, msg.HTML)
	}
	if msg.Calendar != "" {
		m.AttachReadSeeker("invite.ics", strings.NewReader(msg.Calendar),
			gomail.WithFileContentType("text/calendar; charset=utf-8; method=PUBLISH"))
	}
	if msg.UnsubscribeURL != "" {
		m.SetGenHeader("List-Unsubscribe", "<"+msg.UnsubscribeURL+">")
		m.SetGenHeader("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
	}
	return m, nil
}
