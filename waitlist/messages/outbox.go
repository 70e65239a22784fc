package messages

import (
	"context"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/offers"
)

// Messages are the use cases of the outbox and of what people answer to
// it: the outbox as staff see it, follow-ups and reminders, a message that
// could not be delivered and its fallback, texts people send back, and
// the one-click unsubscribe.
type Messages struct {
	*core.Service
	// Offers claims the offer a YES texted back names.
	Offers *offers.Offers
	// Entries finds the offers of the person texting.
	Entries *entries.Entries
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Messages) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// ListMessages returns the outbox as staff see it, newest first.
func (s *Messages) ListMessages(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	var out []nextup.Message
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.MessageList(ctx, f)
		return err
	})
	return out, err
}

// RetryMessage puts a dead message of a business back in the queue.
// MessageCounts counts a business's outbox by channel and state (the
// dashboard's backlog).
func (s *Messages) MessageCounts(ctx context.Context, businessID string) (map[nextup.Channel]map[nextup.MessageState]int, error) {
	var out map[nextup.Channel]map[nextup.MessageState]int
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.MessageCounts(ctx, businessID)
		return err
	})
	return out, err
}

func (s *Messages) RetryMessage(ctx context.Context, businessID, id string) (nextup.Message, error) {
	var out nextup.Message
	err := s.tx(ctx, func(w *work) error {
		m, err := w.Tx.MessageGet(ctx, id)
		if err != nil || m.BusinessID != businessID {
			return core.NotFound("message", id, err)
		}
		if m.State != nextup.MessageDead {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeMessageNotDead, "only a dead message can be retried; this one is %s", m.State)
		}
		if out, err = w.Tx.MessageRequeue(ctx, id, w.Now); err != nil {
			return err
		}
		w.Wake()
		return nil
	})
	return out, err
}
