package messages

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/offers"
)

// The words of an inbound text, as carriers and Twilio read them: opt-out,
// opt-in, help; and the replies that claim an offer.
var (
	stopWords  = map[string]bool{"STOP": true, "STOPALL": true, "UNSUBSCRIBE": true, "CANCEL": true, "END": true, "QUIT": true, "OPTOUT": true, "REVOKE": true}
	startWords = map[string]bool{"START": true, "UNSTOP": true}
	helpWords  = map[string]bool{"HELP": true, "INFO": true}
	claimWords = map[string]bool{"YES": true, "Y": true, "1": true}
)

// SMSReply is what an inbound text did and what to answer ("" answers
// nothing).
type SMSReply struct {
	Action string // opted_out, opted_in, help, claimed, claim_failed, ignored
	Text   string
}

// phoneKey is the contact key of a phone number (digits and a leading +).
func phoneKey(phone string) string { return nextup.Entry{Phone: phone}.ContactKey() }

// InboundSMS handles a text from a person to a business's number:
//
//   - STOP (and the other opt-out words) opts the number out at once — no
//     offer or message goes to it by text any more — and confirms once;
//   - START opts it back in; HELP answers with the business and a contact;
//   - YES (or 1) from a number that holds exactly one live offer claims it,
//     through the same conditional write as the link.
//
// Anything else is left alone (a person writing to the business).
func (s *Messages) InboundSMS(ctx context.Context, businessID, from, body string) (SMSReply, error) {
	word := strings.ToUpper(strings.TrimFunc(strings.TrimSpace(body), func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }))
	if f := strings.Fields(word); len(f) > 0 {
		word = f[0]
	}
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return SMSReply{}, err
	}
	number := nextup.AddressKey(nextup.ChannelSMS, from)
	switch {
	case stopWords[word]:
		already := false
		err := s.tx(ctx, func(w *work) error {
			var err error
			if already, err = optedOut(ctx, w.Tx, businessID, nextup.ChannelSMS, number); err != nil {
				return err
			}
			if err := w.Tx.SuppressionAdd(ctx, nextup.Suppression{BusinessID: businessID, Channel: nextup.ChannelSMS,
				Address: number, Reason: "sms " + word, At: w.Now}); err != nil {
				return err
			}
			bi, err := w.Business(ctx, businessID)
			if err != nil {
				return err
			}
			return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
				To: "sms_opted_out", Reason: word, Detail: map[string]any{"phone": from}})
		})
		if err != nil {
			return SMSReply{}, err
		}
		if already { // confirm once
			return SMSReply{Action: "opted_out"}, nil
		}
		return SMSReply{Action: "opted_out", Text: fmt.Sprintf("%s: you will get no more texts from us. Reply START to get them again.", b.Name)}, nil
	case startWords[word]:
		err := s.tx(ctx, func(w *work) error {
			lifted, err := w.Tx.SuppressionDelete(ctx, businessID, nextup.ChannelSMS, number)
			if err != nil || !lifted {
				return err
			}
			bi, err := w.Business(ctx, businessID)
			if err != nil {
				return err
			}
			return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
				To: "sms_opted_in", Reason: word, Detail: map[string]any{"phone": from}})
		})
		if err != nil {
			return SMSReply{}, err
		}
		return SMSReply{Action: "opted_in", Text: fmt.Sprintf("%s: texts are back on. Reply STOP to stop them.", b.Name)}, nil
	case helpWords[word]:
		contact := b.Profile.OwnerEmail
		if contact == "" {
			contact = "the business directly"
		}
		return SMSReply{Action: "help", Text: fmt.Sprintf("%s waitlist: we text you when a slot you asked for frees up. Reply YES to claim an offer, STOP to stop texts. Questions: %s.", b.Name, contact)}, nil
	case claimWords[word]:
		return s.claimByText(ctx, b, from)
	}
	return SMSReply{Action: "ignored"}, nil
}

// claimByText claims the one live offer held by the person texting.
func (s *Messages) claimByText(ctx context.Context, b nextup.Business, from string) (SMSReply, error) {
	offered, err := s.Entries.ListEntries(ctx, nextup.EntryFilter{BusinessID: b.ID, State: nextup.EntryOffered})
	if err != nil {
		return SMSReply{}, err
	}
	var live []nextup.Offer
	for _, e := range offered {
		if e.Phone == "" || e.ContactKey() != phoneKey(from) && phoneKey(e.Phone) != phoneKey(from) {
			continue
		}
		v, err := s.Entries.GetEntry(ctx, b.ID, e.ID)
		if err != nil {
			return SMSReply{}, err
		}
		if v.Offer != nil && v.Offer.State == nextup.OfferOffered {
			live = append(live, *v.Offer)
		}
	}
	switch len(live) {
	case 0:
		return SMSReply{Action: "claim_failed", Text: fmt.Sprintf("%s: there is no offer waiting for you right now; it may have ended. You keep your place on the waitlist.", b.Name)}, nil
	case 1:
	default:
		return SMSReply{Action: "claim_failed", Text: fmt.Sprintf("%s: you have %d offers; please claim the one you want with its link.", b.Name, len(live))}, nil
	}
	_, err = offers.ClaimByHash(ctx, s.Offers, live[0].TokenHash)
	switch code := nextup.ErrorCode(err); {
	case err == nil:
		return SMSReply{Action: "claimed"}, nil // the confirmation goes out through the outbox
	case offers.CustomerTold(err):
		// The business's booking system did not take it: the message
		// saying so goes out through the outbox.
		return SMSReply{Action: "claim_failed"}, nil
	case code == nextup.CodeSlotTaken || code == nextup.CodeOfferExpired || code == nextup.CodeOfferWithdrawn || code == nextup.CodeOfferDeclined:
		return SMSReply{Action: "claim_failed", Text: fmt.Sprintf("%s: sorry, that offer has ended. You keep your place on the waitlist.", b.Name)}, nil
	case errors.Is(err, nextup.ErrConflict):
		return SMSReply{Action: "claim_failed", Text: fmt.Sprintf("%s: that offer can't be claimed right now; try its link.", b.Name)}, nil
	}
	return SMSReply{}, err
}

// SMSDelivery records a provider's delivery report for a message: a text
// the carrier could not deliver ("undelivered", "failed") goes dead with
// the reason, visible to staff on the Messages page and retryable; other
// reports ("sent", "delivered", ...) change nothing. A report for a message
// that is no longer sent (a retry queued it again) is ignored. Then the
// person is reached another way (Undeliverable): a carrier error that says
// the number can never get a text opts it out.
func (s *Messages) SMSDelivery(ctx context.Context, messageID, status, errorCode string) error {
	if status != "undelivered" && status != "failed" {
		return nil
	}
	reason := status
	if errorCode != "" {
		reason += " (carrier error " + errorCode + ")"
	}
	// The dead letter and its fallback are one transaction.
	return s.tx(ctx, func(w *work) error {
		_, err := w.Tx.MessageUndelivered(ctx, messageID, reason)
		switch {
		case errors.Is(err, nextup.ErrConflict):
			// Not sent (any more): a retry queued it again, or this is the
			// carrier's report again, or the relay gave the text up. A
			// dead text gets its fallback here too; doing it twice sends
			// nothing twice.
			m, err := w.Tx.MessageGet(ctx, messageID)
			if err != nil || m.State != nextup.MessageDead {
				return err
			}
		case errors.Is(err, nextup.ErrNotFound):
			return core.NotFound("message", messageID, err)
		case err != nil:
			return err
		}
		return w.undeliverable(ctx, messageID, PermanentSMSError(errorCode), reason)
	})
}
