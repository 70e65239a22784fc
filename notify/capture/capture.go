// Package capture is the development channel: a nextup.Sender that delivers
// nothing and remembers every message it was given, so that tests, the demo
// and the dashboard can show what a customer would have received.
//
// The relay (package outbox) keeps every message row in the outbox table with
// its body and claim link whichever channel sent it, so staff and the demo
// can also read captured messages there (GET /v1/businesses/{bid}/messages);
// this in-memory record exists for tests and for the process that sent them,
// and is lost when the process exits.
package capture

import (
	"context"
	"sync"

	"github.com/nextup-dev/nextup"
)

// Sender records messages instead of delivering them. It is registered for
// the "capture" channel and is usable as the relay's Default for every other
// channel in development. The zero value is ready to use and it is safe for
// concurrent use.
//
// Delivery is idempotent on the message ID, like a real provider given the
// ID as its idempotency key: sending the same message twice (a relay that
// lost its lease and retried) records it once and returns the same provider
// id.
type Sender struct {
	mu   sync.Mutex
	byID map[string]int // message ID -> index in msgs
	msgs []nextup.Message
}

// New returns an empty Sender.
func New() *Sender { return &Sender{} }

// Channel returns nextup.ChannelCapture.
func (s *Sender) Channel() nextup.Channel { return nextup.ChannelCapture }

// Account is "capture": as the relay's Default it stands in for every
// channel's provider, and channels whose messages it takes share one
// rate limit, as they would share a real account.
func (s *Sender) Account() string { return "capture" }

// Send records a copy of msg and returns "capture:"+msg.ID as the provider id.
// It fails only when ctx is already done, so that a relay shutting down sees
// the same behaviour as with a network provider.
func (s *Sender) Send(ctx context.Context, msg nextup.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	providerID := "capture:" + msg.ID
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[msg.ID]; ok {
		return providerID, nil
	}
	if s.byID == nil {
		s.byID = make(map[string]int)
	}
	s.byID[msg.ID] = len(s.msgs)
	s.msgs = append(s.msgs, clone(msg))
	return providerID, nil
}

// Messages returns copies of every recorded message, in the order they were
// first delivered.
func (s *Sender) Messages() []nextup.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]nextup.Message, len(s.msgs))
	for i, m := range s.msgs {
		out[i] = clone(m)
	}
	return out
}

// Last returns the most recently delivered message addressed to to (an email
// address or phone number exactly as it is on the message), and false when
// there is none.
func (s *Sender) Last(to string) (nextup.Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.msgs) - 1; i >= 0; i-- {
		if s.msgs[i].To == to {
			return clone(s.msgs[i]), true
		}
	}
	return nextup.Message{}, false
}

// Get returns the recorded message with this ID, and false when it was never
// delivered.
func (s *Sender) Get(id string) (nextup.Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byID[id]
	if !ok {
		return nextup.Message{}, false
	}
	return clone(s.msgs[i]), true
}

// Len returns how many distinct messages were delivered.
func (s *Sender) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

// clone copies m so that callers can neither change the record nor see it
// change through the pointer fields.
func clone(m nextup.Message) nextup.Message {
	if m.ClaimedUntil != nil {
		t := *m.ClaimedUntil
		m.ClaimedUntil = &t
	}
	if m.SentAt != nil {
		t := *m.SentAt
		m.SentAt = &t
	}
	return m
}
