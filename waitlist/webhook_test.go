package waitlist_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
)

// webhooks lists the queued webhook events of the bundle's business,
// oldest first, with their states.
func (b *bundle) webhooks(t *testing.T) (types []string, states []nextup.MessageState) {
	t.Helper()
	msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID})
	if err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Kind != waitlist.MessageWebhook {
			continue
		}
		var ev waitlist.WebhookEvent
		if err := json.Unmarshal([]byte(m.Body), &ev); err != nil || ev.ID != m.ID || ev.Type != m.Subject || m.To != "https://hooks.example/nextup" {
			t.Fatalf("webhook message %+v: %v", m, err)
		}
		types, states = append(types, ev.Type), append(states, m.State)
	}
	return types, states
}

// A business with a webhook URL gets an event for each step an integrator
// follows, written with the step; the events of an offer outlive it.
func TestWebhookEvents(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	sl := b.slot(t, waitlist.SlotParams{Service: "haircut", StartsAt: b.at(1, 14, 0)})
	b.join(t, "Ann", waitlist.JoinParams{Service: "haircut"})
	if types, _ := b.webhooks(t); len(types) != 0 {
		t.Fatalf("events without a webhook URL: %v", types)
	}
	url := "https://hooks.example/nextup"
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{WebhookURL: &url}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := timer.Advance(b.ctx, b.clock, b.sweeper, 11*time.Minute); err != nil { // Ann lets it lapse
		t.Fatal(err)
	}
	types, states := b.webhooks(t)
	want := []string{"offer.created", "offer.expired", "slot.handed_back"}
	if len(types) != len(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] || states[i] != nextup.MessageQueued {
			t.Errorf("event %d: %s (%s), want %s queued", i, types[i], states[i], want[i])
		}
	}
	bad := "ftp://hooks.example"
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{WebhookURL: &bad}); nextup.ErrorCode(err) != nextup.CodeValidation {
		t.Fatalf("ftp webhook URL: %v", err)
	}
}
