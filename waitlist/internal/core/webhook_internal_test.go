package core

import (
	"testing"

	"github.com/nextup-dev/nextup"
)

// Notes on an offer that stays as it is (a follow-up sent, a fallback)
// are no event; the offer being seen is.
func TestWebhookTypeOfOfferNotes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to, reason, want string
	}{
		{"", "offered", "release", "offer.created"},
		{"offered", "offered", "seen", "offer.seen"},
		{"offered", "offered", "escalated", ""},
		{"offered", "offered", "fallback", ""},
		{"offered", "offered", "escalation_skipped:quiet_hours", ""},
		{"offered", "cancelled", "no_channel", "offer.cancelled"},
	} {
		ev := nextup.AuditEvent{SubjectType: nextup.SubjectOffer, From: c.from, To: c.to, Reason: c.reason}
		if got := webhookType(ev); got != c.want {
			t.Errorf("%s→%s (%s): %q, want %q", c.from, c.to, c.reason, got, c.want)
		}
	}
}
