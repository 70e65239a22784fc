// Package sns sends nextup's SMS channel through Amazon SNS: a Publish to
// the phone number (E.164), as a transactional text.
//
// SNS keeps an opt-out list of its own per account (a person who replied
// STOP to one of the account's texts), and takes a text to a number on it
// without delivering it. So each send asks first
// (CheckIfPhoneNumberIsOptedOut): a number SNS has opted out is ErrInvalid
// opted_out, like one nextup's own suppressions hold, and the message goes
// dead and falls back to the person's other channel.
//
// SNS's Publish to a phone number takes no idempotency key: a text the
// relay sends twice after a crash between SNS's answer and the commit
// reaches the person twice; the relay's lease makes that rare.
package sns

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/outbox"
)

// Config is what the sender needs.
type Config struct {
	// SenderID, if set, is the alphanumeric sender id shown where the
	// destination country supports one (AWS.SNS.SMS.SenderID).
	SenderID string
	// OriginationNumber, if set, is the number (E.164) the texts come
	// from (AWS.MM.SMS.OriginationNumber); it must be one of the account's.
	OriginationNumber string
	// Client is the SNS client (cmd/ builds it from the one aws.Config).
	Client *sns.Client
}

// Sender texts messages. Create it with New.
type Sender struct {
	cfg Config
}

var _ nextup.Sender = (*Sender)(nil)

// New checks cfg and returns a Sender.
func New(cfg Config) (*Sender, error) {
	if cfg.Client == nil {
		return nil, errors.New("sns: no SNS client")
	}
	return &Sender{cfg: cfg}, nil
}

// Channel is sms.
func (s *Sender) Channel() nextup.Channel { return nextup.ChannelSMS }

// Account is "sns:" and the client's region: SNS's SMS rate and spending
// limits are an account's in a region, shared by every sender on it.
func (s *Sender) Account() string { return "sns:" + s.cfg.Client.Options().Region }

// Send texts msg and returns SNS's MessageId. A number SNS has opted out
// is ErrInvalid opted_out, one it cannot text ErrInvalid bad_address (the
// relay gives up at once and the number is opted out of texts); a text SNS
// refuses for another reason is ErrInvalid sms_rejected (not the number's
// fault). Throttling and SNS's own failures are retried.
func (s *Sender) Send(ctx context.Context, msg nextup.Message) (string, error) {
	check, err := s.cfg.Client.CheckIfPhoneNumberIsOptedOut(ctx, &sns.CheckIfPhoneNumberIsOptedOutInput{PhoneNumber: aws.String(msg.To)})
	if err != nil {
		return "", sendError(msg, "opt-out check", err)
	}
	if check.IsOptedOut {
		return "", nextup.Errorf(nextup.ErrInvalid, outbox.CodeOptedOut, "%s opted out of texts at SNS", msg.To)
	}
	attrs := map[string]types.MessageAttributeValue{
		"AWS.SNS.SMS.SMSType": stringAttr("Transactional"),
	}
	if s.cfg.SenderID != "" {
		attrs["AWS.SNS.SMS.SenderID"] = stringAttr(s.cfg.SenderID)
	}
	if s.cfg.OriginationNumber != "" {
		attrs["AWS.MM.SMS.OriginationNumber"] = stringAttr(s.cfg.OriginationNumber)
	}
	out, err := s.cfg.Client.Publish(ctx, &sns.PublishInput{
		PhoneNumber:       aws.String(msg.To),
		Message:           aws.String(msg.Body),
		MessageAttributes: attrs,
	})
	if err != nil {
		return "", sendError(msg, "publish", err)
	}
	if out.MessageId == nil || *out.MessageId == "" {
		return "", fmt.Errorf("sns publish %s: no MessageId in the answer", msg.ID)
	}
	return *out.MessageId, nil
}

func stringAttr(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

// sendError sorts SNS's refusals: the number's, the text's (permanent), or
// a passing one (retried).
func sendError(msg nextup.Message, call string, err error) error {
	var (
		invalid *types.InvalidParameterException
		value   *types.InvalidParameterValueException
	)
	switch {
	case errors.As(err, &invalid) && strings.Contains(strings.ToLower(invalid.ErrorMessage()), "phonenumber"):
		// "Invalid parameter: PhoneNumber Reason: +1555 is not valid to
		// publish to", "... input incorrectly formatted".
		return nextup.Errorf(nextup.ErrInvalid, "bad_address", "sns cannot text %s: %v", msg.To, err)
	case errors.As(err, &invalid), errors.As(err, &value):
		return nextup.Errorf(nextup.ErrInvalid, "sms_rejected", "sns refused text %s: %v", msg.ID, err)
	}
	return fmt.Errorf("sns %s %s: %w", call, msg.ID, err)
}
