package main

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/notify/ses"
	"github.com/nextup-dev/nextup/aws/notify/sns"
	"github.com/nextup-dev/nextup/notify/webhook"
)

// channels gives the relay its senders: email by SES v2 (when
// NEXTUP_MAIL_FROM names the verified sender), texts by SNS Publish (its
// sender id and origination number when set; SNS's opt-out list asked
// before each text), and webhooks, signed as nextup serve signs them (the
// hex SHA-256 of the business's API key). A channel without a sender
// sends nothing: its messages go dead at once, saying why, and reach the
// person on their other channel.
func (h *handler) channels(_ context.Context, c config, cfg aws.Config) error {
	if c.MailFrom != "" {
		mail, err := ses.New(ses.Config{From: c.MailFrom, ConfigurationSetName: c.SESConfigurationSet, Client: sesv2.NewFromConfig(cfg)})
		if err != nil {
			return err
		}
		h.relay.Senders[nextup.ChannelEmail] = mail
	}
	texts, err := sns.New(sns.Config{SenderID: c.SMSSenderID, OriginationNumber: c.SMSOrigination, Client: awssns.NewFromConfig(cfg)})
	if err != nil {
		return err
	}
	h.relay.Senders[nextup.ChannelSMS] = texts
	signingKey := func(ctx context.Context, bid string) ([]byte, error) {
		b, err := h.svc.GetBusiness(ctx, bid)
		return []byte(b.APIKeyHash), err
	}
	h.relay.Senders[nextup.ChannelWebhook] = &webhook.Sender{Clock: h.clock, Key: signingKey}
	return nil
}
