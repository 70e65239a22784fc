package capture_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
)

var (
	_ nextup.Sender    = (*capture.Sender)(nil)
	_ outbox.Accounter = (*capture.Sender)(nil)
)

// As the relay's Default, capture is one account for every channel it
// stands in for.
func TestAccount(t *testing.T) {
	t.Parallel()
	if a, b := capture.New().Account(), capture.New().Account(); a != "capture" || b != a {
		t.Errorf("Account() = %q and %q, want capture", a, b)
	}
}

func msg(id, to string) nextup.Message {
	return nextup.Message{
		ID:         id,
		BusinessID: "biz_1",
		Kind:       nextup.MessageOffer,
		Channel:    nextup.ChannelSMS,
		To:         to,
		Subject:    "A slot opened",
		Body:       "Tap to claim until 4:10 pm: https://x.test/c/tok-" + id,
		ClaimURL:   "https://x.test/c/tok-" + id,
		OfferID:    "off_" + id,
	}
}

func TestSendRecordsACopy(t *testing.T) {
	t.Parallel()
	s := capture.New()
	if got := s.Channel(); got != nextup.ChannelCapture {
		t.Fatalf("Channel() = %q, want %q", got, nextup.ChannelCapture)
	}
	m := msg("m1", "+15550001")
	until := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	lease := until
	m.ClaimedUntil = &lease

	pid, err := s.Send(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if pid != "capture:m1" {
		t.Errorf("provider id = %q, want capture:m1", pid)
	}

	// Changing the caller's value afterwards must not change the record.
	m.Body = "changed"
	*m.ClaimedUntil = until.Add(time.Hour)

	got := s.Messages()
	if len(got) != 1 {
		t.Fatalf("Messages() has %d, want 1", len(got))
	}
	want := msg("m1", "+15550001")
	if got[0].Body != want.Body || got[0].ClaimURL != want.ClaimURL || got[0].To != want.To ||
		got[0].Channel != want.Channel || got[0].Subject != want.Subject || got[0].OfferID != want.OfferID {
		t.Errorf("recorded %+v, want %+v", got[0], want)
	}
	if got[0].ClaimedUntil == nil || !got[0].ClaimedUntil.Equal(until) {
		t.Errorf("ClaimedUntil = %v, want %v", got[0].ClaimedUntil, until)
	}

	// Nor may a caller change it through what Messages returned.
	got[0].Body = "mutated"
	*got[0].ClaimedUntil = until.Add(2 * time.Hour)
	again, _ := s.Get("m1")
	if again.Body != want.Body || !again.ClaimedUntil.Equal(until) {
		t.Errorf("record changed through a returned copy: %+v", again)
	}
}

func TestSendIsIdempotentOnMessageID(t *testing.T) {
	t.Parallel()
	s := capture.New()
	ctx := context.Background()
	first := msg("m1", "a@example.com")
	if _, err := s.Send(ctx, first); err != nil {
		t.Fatal(err)
	}
	retry := first
	retry.Body = "a retry carries the same id"
	pid, err := s.Send(ctx, retry)
	if err != nil {
		t.Fatal(err)
	}
	if pid != "capture:m1" {
		t.Errorf("provider id on retry = %q, want capture:m1", pid)
	}
	if n := s.Len(); n != 1 {
		t.Fatalf("Len() = %d after a repeated send, want 1", n)
	}
	if got := s.Messages()[0].Body; got != first.Body {
		t.Errorf("body = %q, want the first delivery's %q", got, first.Body)
	}
}

func TestLast(t *testing.T) {
	t.Parallel()
	s := &capture.Sender{} // the zero value works too
	ctx := context.Background()
	for _, m := range []nextup.Message{msg("m1", "a@example.com"), msg("m2", "b@example.com"), msg("m3", "a@example.com")} {
		if _, err := s.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		to     string
		wantID string
		wantOK bool
	}{
		{"a@example.com", "m3", true},
		{"b@example.com", "m2", true},
		{"c@example.com", "", false},
	}
	for _, tt := range tests {
		got, ok := s.Last(tt.to)
		if ok != tt.wantOK || got.ID != tt.wantID {
			t.Errorf("Last(%q) = %q, %v; want %q, %v", tt.to, got.ID, ok, tt.wantID, tt.wantOK)
		}
	}
	if ids := ids(s.Messages()); fmt.Sprint(ids) != "[m1 m2 m3]" {
		t.Errorf("Messages() order = %v, want [m1 m2 m3]", ids)
	}
}

func TestSendFailsOnDoneContext(t *testing.T) {
	t.Parallel()
	s := capture.New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Send(ctx, msg("m1", "a@example.com")); err == nil {
		t.Fatal("Send with a cancelled context succeeded")
	}
	if s.Len() != 0 {
		t.Errorf("a failed send was recorded")
	}
}

func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	s := capture.New()
	ctx := context.Background()
	const senders, perSender = 8, 50
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range perSender {
				// Every goroutine delivers every id of its own range twice,
				// and ids overlap between neighbouring goroutines.
				id := fmt.Sprintf("m%d", g*perSender/2+i)
				if _, err := s.Send(ctx, msg(id, "x@example.com")); err != nil {
					t.Error(err)
				}
				_ = s.Messages()
				_, _ = s.Last("x@example.com")
			}
		})
	}
	wg.Wait()
	want := (senders-1)*perSender/2 + perSender
	if got := s.Len(); got != want {
		t.Errorf("Len() = %d, want %d distinct messages", got, want)
	}
	seen := map[string]bool{}
	for _, m := range s.Messages() {
		if seen[m.ID] {
			t.Errorf("message %s recorded twice", m.ID)
		}
		seen[m.ID] = true
	}
}

func ids(ms []nextup.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
