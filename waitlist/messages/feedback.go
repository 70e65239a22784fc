package messages

import (
	"context"
	"errors"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// The kinds of feedback a mail provider reports about a mail it sent (SES
// bounce and complaint notifications; aws/notify/ses reads them).
const (
	// MailPermanentBounce: the address can never get mail (no such
	// mailbox, or the provider's own suppression list).
	MailPermanentBounce = "permanent_bounce"
	// MailTransientBounce: the mail did not arrive this time (a full
	// mailbox, a receiving server refusing for now); the provider may have
	// retried already.
	MailTransientBounce = "transient_bounce"
	// MailComplaint: the person marked the mail as spam.
	MailComplaint = "complaint"
)

// MailFeedback records what the mail provider reports about the mail of
// an outbox message, sent to address:
//
//   - a permanent bounce is what an undeliverable text is to SMSDelivery:
//     the message goes dead with the reason, the address is opted out of
//     the business's email, and the person is reached on their other
//     channel (or the offer rolls on when there is none);
//   - a complaint opts the address out of the business's email, as its
//     unsubscribe link would, audited; the mail arrived, so nothing falls
//     back (sending the person a text because they reported a mail would
//     not be welcome);
//   - a transient bounce changes nothing (the caller logs it).
//
// An unknown message is ErrNotFound; feedback about a message that is
// not an email, or about another address than the message's, is
// ErrInvalid. The same feedback twice changes nothing the second time.
func (s *Messages) MailFeedback(ctx context.Context, messageID, address, kind, reason string) error {
	switch kind {
	case MailPermanentBounce, MailTransientBounce, MailComplaint:
	default:
		return nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "mail feedback of unknown kind %q", kind)
	}
	return s.tx(ctx, func(w *work) error {
		m, err := w.Tx.MessageGet(ctx, messageID)
		if err != nil {
			return core.NotFound("message", messageID, err)
		}
		if m.Channel != nextup.ChannelEmail {
			return nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "message %s is %s, not email", messageID, m.Channel)
		}
		if address != "" && nextup.AddressKey(nextup.ChannelEmail, address) != nextup.AddressKey(nextup.ChannelEmail, m.To) {
			return nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "mail feedback about message %s names another address than it was sent to", messageID)
		}
		switch kind {
		case MailPermanentBounce:
			return w.bounced(ctx, m, reason)
		case MailComplaint:
			return w.complained(ctx, m, reason)
		}
		return nil
	})
}

// bounced is SMSDelivery's undelivered text for a mail that bounced for
// good.
func (w *work) bounced(ctx context.Context, m nextup.Message, reason string) error {
	reason = "bounced: " + reason
	_, err := w.Tx.MessageUndelivered(ctx, m.ID, reason)
	switch {
	case errors.Is(err, nextup.ErrConflict):
		// Not sent (any more): this is the bounce again, or a retry
		// queued the message again. A dead mail gets its fallback here
		// too; doing it twice sends nothing twice.
		if m, err = w.Tx.MessageGet(ctx, m.ID); err != nil || m.State != nextup.MessageDead {
			return err
		}
	case err != nil:
		return err
	}
	return w.undeliverable(ctx, m.ID, true, reason)
}

// complained opts the mail's address out of the business's email.
func (w *work) complained(ctx context.Context, m nextup.Message, reason string) error {
	if already, err := optedOut(ctx, w.Tx, m.BusinessID, nextup.ChannelEmail, m.To); already || err != nil {
		return err
	}
	w.Actor = nextup.ActorCustomer
	if err := w.Tx.SuppressionAdd(ctx, nextup.Suppression{BusinessID: m.BusinessID, Channel: nextup.ChannelEmail,
		Address: nextup.AddressKey(nextup.ChannelEmail, m.To), Reason: "complaint", At: w.Now}); err != nil {
		return err
	}
	bi, err := w.Business(ctx, m.BusinessID)
	if err != nil {
		return err
	}
	return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: m.BusinessID,
		To: "email_opted_out", Reason: "complaint", Detail: map[string]any{"email": m.To, "message_id": m.ID, "feedback": reason}})
}
