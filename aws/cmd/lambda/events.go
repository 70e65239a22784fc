package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/notify/ses"
	"github.com/nextup-dev/nextup/waitlist"
)

// sqsEvent sends the outbox message each record names. A message already
// sent (the record came twice), leased by another invocation, or gone is
// skipped: the message's claim makes the send happen once. A record that
// could not be handled (the store failed) is a batch item failure: SQS
// delivers it again, and after five tries moves it to the dead-letter
// queue (the message stays in the outbox, and the sweep sends it when
// the store answers). A send the provider refused for now is recorded as
// failed with its retry time; the retry's SQS message comes from that
// commit (triggers).
func (h *handler) sqsEvent(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("nextup lambda: an SQS event: %w", err)
	}
	res := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, r := range ev.Records {
		var rec sendRecord
		if err := json.Unmarshal([]byte(r.Body), &rec); err != nil || rec.MessageID == "" {
			// Never sendable, however often it comes: not retried.
			h.log.Error("send queue: a record that names no message", "sqs_message_id", r.MessageId, "body", r.Body)
			continue
		}
		one, err := h.relay.SendOne(ctx, rec.MessageID)
		if err != nil {
			h.log.Error("send queue: message not sent; the record comes again", "message_id", rec.MessageID, "error", err)
			res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			continue
		}
		if one.Skipped {
			h.log.Info("send queue: nothing to send", "message_id", rec.MessageID, "reason", one.Reason)
			if err := h.notYet(ctx, rec.MessageID); err != nil {
				h.log.Error("send queue: a message not due yet not queued again; the record comes again", "message_id", rec.MessageID, "error", err)
				res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
	}
	return json.Marshal(res)
}

// notYet queues the message again when it is waiting to be sent but not
// due yet: due more than SQS's longest delay after its commit, its record
// came early, and comes again for the rest of the wait. A message sent,
// dead, cancelled or leased by another invocation needs nothing.
func (h *handler) notYet(ctx context.Context, id string) error {
	var m nextup.Message
	err := h.relay.Store.Read(ctx, func(tx nextup.Tx) error {
		var err error
		m, err = tx.MessageGet(ctx, id)
		return err
	})
	if errors.Is(err, nextup.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	now := h.clock.Now()
	waiting := (m.State == nextup.MessageQueued || m.State == nextup.MessageFailed) &&
		(m.ClaimedUntil == nil || !m.ClaimedUntil.After(now))
	if !waiting || !dueAt(m).After(now) {
		return nil
	}
	return h.triggers.enqueue(ctx, m, now)
}

// maxInboundMail is the largest mail read from S3: SES takes mail up to
// 40 MB; the inbox lane reads requests, not attachments, and refuses
// more than this.
const maxInboundMail = 10 << 20

// s3Event hands each mail an SES receipt rule stored in S3 to the inbox
// lane of the business it was sent to ({slug}@the inbound domain). A mail
// read twice (S3 tells an object twice) is one proposal (the lane knows
// the mail again). An unreadable mail, or one for no business, is dropped
// with a log line; a store failure fails the event, which Lambda tries
// again.
func (h *handler) s3Event(ctx context.Context, payload []byte) ([]byte, error) {
	if h.s3 == nil {
		return nil, errors.New("nextup lambda: inbound mail: no inbound domain configured (NEXTUP_INBOUND_DOMAIN)")
	}
	var ev events.S3Event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("nextup lambda: an S3 event: %w", err)
	}
	handled := 0
	for _, r := range ev.Records {
		bucket := r.S3.Bucket.Name
		key, err := url.QueryUnescape(r.S3.Object.Key) // S3 events give keys form-encoded
		if err != nil {
			key = r.S3.Object.Key
		}
		obj, err := h.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			return nil, fmt.Errorf("nextup lambda: inbound mail s3://%s/%s: %w", bucket, key, err)
		}
		raw, err := io.ReadAll(io.LimitReader(obj.Body, maxInboundMail+1))
		obj.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("nextup lambda: inbound mail s3://%s/%s: %w", bucket, key, err)
		}
		if len(raw) > maxInboundMail {
			h.log.Warn("inbound mail too large; dropped", "bucket", bucket, "key", key)
			continue
		}
		n, err := h.deliverMail(ctx, raw, key)
		if err != nil {
			return nil, err
		}
		handled += n
	}
	return json.Marshal(map[string]int{"delivered": handled})
}

// deliverMail gives raw to the inbox lane of each business it is addressed
// to, and returns how many took it.
func (h *handler) deliverMail(ctx context.Context, raw []byte, key string) (int, error) {
	n := 0
	for _, slug := range recipients(raw, h.inbound) {
		b, err := h.svc.BusinessBySlug(ctx, slug)
		if errors.Is(err, nextup.ErrNotFound) {
			h.log.Warn("inbound mail for no business; dropped", "slug", slug, "key", key)
			continue
		}
		if err != nil {
			return n, err
		}
		_, _, err = h.svc.ReceiveMail(ctx, b.ID, raw)
		if errors.Is(err, waitlist.ErrMailTooLarge) || errors.Is(err, nextup.ErrInvalid) {
			h.log.Warn("inbound mail not readable as a request; dropped", "business_id", b.ID, "key", key, "error", err)
			continue
		}
		if err != nil {
			return n, err
		}
		n++
	}
	if n == 0 {
		h.log.Warn("inbound mail addressed to no business here", "key", key, "domain", h.inbound)
	}
	return n, nil
}

// receivedFor is the recipient SES writes into the Received header it
// adds ("... for slug@domain; ...").
var receivedFor = regexp.MustCompile(`(?i)\bfor\s+<?([^\s;<>]+@[^\s;<>]+)>?`)

// recipients returns the business slugs at domain that raw is addressed
// to: the envelope recipient in SES's Received header, and the To, Cc,
// Delivered-To and X-Original-To headers (each of them, when a header comes
// several times), lower-cased, without a +tag, and each once. A business
// only Bcc'd on a mail sent to several recipients at once is not found
// (SES then names no recipient in the headers it writes).
func recipients(raw []byte, domain string) []string {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	var addrs []string
	for _, rcv := range m.Header["Received"] {
		for _, sub := range receivedFor.FindAllStringSubmatch(rcv, -1) {
			addrs = append(addrs, sub[1])
		}
	}
	for _, name := range []string{"To", "Cc", "Delivered-To", "X-Original-To"} {
		for _, v := range m.Header[name] {
			list, err := mail.ParseAddressList(v)
			if err != nil {
				continue
			}
			for _, a := range list {
				addrs = append(addrs, a.Address)
			}
		}
	}
	var slugs []string
	for _, a := range addrs {
		local, dom, ok := strings.Cut(strings.ToLower(a), "@")
		local, _, _ = strings.Cut(local, "+")
		if ok && dom == domain && local != "" && !slices.Contains(slugs, local) {
			slugs = append(slugs, local)
		}
	}
	return slugs
}

// snsEvent reads SES's bounce and complaint events, which an SES
// configuration set publishes to an SNS topic the function is subscribed
// to: a permanent bounce opts the address out of the business's email and
// reaches the person on their other channel; a complaint opts it out; a
// transient bounce is logged (SES has retried already). Feedback about a
// mail nextup did not send (no message id, or one it does not have) is
// logged and dropped; a store failure fails the event, which Lambda tries
// again (the same feedback twice changes nothing the second time).
func (h *handler) snsEvent(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.SNSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("nextup lambda: an SNS event: %w", err)
	}
	recorded := 0
	for _, r := range ev.Records {
		fbs, err := ses.ParseFeedback([]byte(r.SNS.Message))
		if err != nil {
			h.log.Warn("SNS message not an SES notification; dropped", "topic", r.SNS.TopicArn, "sns_message_id", r.SNS.MessageID, "error", err)
			continue
		}
		for _, fb := range fbs {
			log := h.log.With("message_id", fb.MessageID, "ses_message_id", fb.SESMessageID, "kind", string(fb.Kind), "reason", fb.Reason)
			if fb.Kind == ses.TransientBounce {
				log.Info("mail bounced for now")
				continue
			}
			if fb.MessageID == "" {
				log.Warn("feedback on a mail nextup did not send; dropped")
				continue
			}
			kind := waitlist.MailPermanentBounce
			if fb.Kind == ses.Complaint {
				kind = waitlist.MailComplaint
			}
			err := h.svc.MailFeedback(ctx, fb.MessageID, fb.Address, kind, fb.Reason)
			if errors.Is(err, nextup.ErrNotFound) || errors.Is(err, nextup.ErrInvalid) {
				log.Warn("feedback on no mail of ours; dropped", "error", err)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("nextup lambda: mail feedback on %s: %w", fb.MessageID, err)
			}
			recorded++
		}
	}
	return json.Marshal(map[string]int{"recorded": recorded})
}
