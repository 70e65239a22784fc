package nextup

import (
	"context"
	"time"
)

// MessageState is where a message is in the outbox.
type MessageState string

// Message states.
const (
	MessageQueued    MessageState = "queued"
	MessageSent      MessageState = "sent"
	MessageFailed    MessageState = "failed" // failed at least once, will be retried
	MessageDead      MessageState = "dead"   // gave up after the last attempt; staff may retry
	MessageCancelled MessageState = "cancelled"
)

// Message kinds.
const (
	MessageOffer        = "offer"
	MessageConfirmation = "confirmation"
	MessageCancellation = "cancellation"
)

// Message is one outbox row: written in the same transaction as the change
// that caused it, sent later by the relay. Its ID is the idempotency key
// given to the provider.
type Message struct {
	ID         string
	BusinessID string
	Kind       string
	Channel    Channel
	To         string
	Subject    string
	Body       string // plain text; an SMS is only this
	// HTML is the HTML alternative of an email's Body ("" sends text only).
	HTML string
	// Calendar is an iCalendar (RFC 5545) object a confirmation carries
	// as an invite attachment ("" for none).
	Calendar string
	// UnsubscribeURL is the one-click unsubscribe link (RFC 8058) of mail
	// a person may stop; "" for transactional mail (a confirmation).
	UnsubscribeURL string
	ClaimURL       string
	OfferID        string
	EntryID        string
	BookingID      string
	State          MessageState
	Attempts       int
	LastError      string
	NotBefore      time.Time // not sent before this (end of quiet hours for a pending offer)
	NextAttemptAt  time.Time
	ClaimedUntil   *time.Time // relay lease
	CreatedAt      time.Time
	SentAt         *time.Time
	ProviderID     string
	// TemplateVersion is the version of the business's templates
	// (Profile.TemplatesVersion) the message was written with; 0 is the
	// defaults.
	TemplateVersion int
}

// Sender delivers messages over one channel (email, SMS, webhook, capture).
// Implementations live under notify/. Send must be safe to call twice for
// one message: msg.ID is the idempotency key to hand the provider.
type Sender interface {
	// Channel names the channel this sender delivers.
	Channel() Channel
	// Send delivers msg and returns the provider's message id. A returned
	// error of kind ErrInvalid is permanent (the message goes dead at once);
	// any other error is retried with backoff.
	Send(ctx context.Context, msg Message) (providerID string, err error)
}
