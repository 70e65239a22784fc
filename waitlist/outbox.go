package waitlist

import (
	"context"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// ListMessages returns the outbox as staff see it, newest first.
func (s *Service) ListMessages(ctx context.Context, f nextup.MessageFilter) ([]nextup.Message, error) {
	var out []nextup.Message
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.MessageList(ctx, f)
		return err
	})
	return out, err
}

// RetryMessage puts a dead message of a business back in the queue.
func (s *Service) RetryMessage(ctx context.Context, businessID, id string) (nextup.Message, error) {
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
