package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// MessageWebhook is the kind of the outbox message that carries one event
// to the business's webhook URL.
const MessageWebhook = "webhook"

// WebhookEvent is the JSON body of a webhook delivery. ID is the outbox
// message id: the same event delivered twice carries the same ID.
type WebhookEvent struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	BusinessID string         `json:"business_id"`
	CreatedAt  string         `json:"created_at"`
	Data       map[string]any `json:"data"`
}

// webhookType names the integrator's event for an audit row, or "" for
// rows integrators are not sent.
func webhookType(ev nextup.AuditEvent) string {
	switch ev.SubjectType {
	case nextup.SubjectOffer:
		if ev.From == ev.To && ev.Reason != "seen" {
			return "" // a note on a live offer (a follow-up, a fallback): nothing happened to it
		}
		switch ev.To {
		case string(nextup.OfferOffered):
			if ev.Reason == "seen" {
				return "offer.seen"
			}
			return "offer.created"
		case string(nextup.OfferPending):
			return "offer.created"
		case string(nextup.OfferClaimed):
			return "offer.claimed"
		case string(nextup.OfferDeclined):
			return "offer.declined"
		case string(nextup.OfferExpired):
			return "offer.expired"
		case string(nextup.OfferCancelled):
			return "offer.cancelled"
		}
	case nextup.SubjectSlot:
		if ev.To == string(nextup.SlotHandedBack) {
			return "slot.handed_back"
		}
	case nextup.SubjectBooking:
		if ev.From == ev.To {
			return "" // a note on a booking that stays as it is (its booking system's answer)
		}
		switch ev.To {
		case string(nextup.BookingBooked):
			return "booking.created"
		case string(nextup.BookingCancelled):
			return "booking.cancelled"
		case string(nextup.BookingNoShow):
			return "booking.no_show"
		}
	}
	return ""
}

// webhook queues the integrator's event for an audit row, in the same
// transaction, when the business has a webhook URL.
func (w *Work) webhook(ctx context.Context, bi *Biz, ev nextup.AuditEvent) error {
	typ := webhookType(ev)
	if typ == "" || bi.Profile.WebhookURL == "" {
		return nil
	}
	id := w.s.Random.ID("msg")
	body, err := json.Marshal(WebhookEvent{ID: id, Type: typ, BusinessID: bi.ID, CreatedAt: w.Now.UTC().Format("2006-01-02T15:04:05.000000Z"),
		Data: map[string]any{"subject_type": ev.SubjectType, "subject_id": ev.SubjectID, "slot_id": ev.SlotID, "from": ev.From,
			"to": ev.To, "reason": ev.Reason, "actor": ev.Actor, "rule_version": ev.RuleVersion, "detail": ev.Detail}})
	if err != nil {
		return fmt.Errorf("webhook %s: %w", typ, err)
	}
	// No OfferID on the message: an offer's unsent messages are cancelled
	// when it ends, and its events must still go out.
	return w.QueueWithID(ctx, nextup.Message{ID: id, BusinessID: bi.ID, Kind: MessageWebhook, Channel: nextup.ChannelWebhook,
		To: bi.Profile.WebhookURL, Subject: typ, Body: string(body)})
}
