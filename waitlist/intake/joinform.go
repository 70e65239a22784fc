package intake

import (
	"context"
	"errors"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// MessageJoinConfirm is the kind of the outbox message that asks a person
// who joined through the public form to confirm their email or phone.
const MessageJoinConfirm = "join_confirm"

// BusinessBySlug finds a business by the slug of its public pages.
func (s *Intake) BusinessBySlug(ctx context.Context, slug string) (nextup.Business, error) {
	var b nextup.Business
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		b, err = tx.BusinessBySlug(ctx, slug)
		return err
	})
	if errors.Is(err, nextup.ErrNotFound) {
		return b, core.NotFound("business", slug, err)
	}
	return b, err
}

// CheckJoin validates p exactly as Join will, and normalises it, without
// writing anything: the public form checks a request before it asks the
// person to confirm their contact. Someone already waiting for the same
// thing is told so (already_waiting).
func (s *Intake) CheckJoin(ctx context.Context, businessID string, p *entries.JoinParams) error {
	if err := entries.ValidateJoin(p, s.Clock.Now()); err != nil {
		return err
	}
	return s.Read(ctx, func(tx nextup.Tx) error {
		if _, err := tx.BusinessGet(ctx, businessID); err != nil {
			return core.NotFound("business", businessID, err)
		}
		e := nextup.Entry{Email: p.Email, Phone: p.Phone}
		if _, err := tx.EntryActiveByContact(ctx, businessID, e.ContactKey(), p.Service, p.EventID); err == nil {
			return nextup.Errorf(nextup.ErrConflict, nextup.CodeAlreadyWaiting, "you are already on the waitlist for this")
		} else if !errors.Is(err, nextup.ErrNotFound) {
			return err
		}
		return nil
	})
}

// QueueJoinConfirmation puts the confirmation message of a form join in the
// outbox: a link by email, or a code by text.
func (s *Intake) QueueJoinConfirmation(ctx context.Context, businessID string, ch nextup.Channel, to, subject, body string) error {
	return s.tx(ctx, func(w *work) error {
		if _, err := w.Business(ctx, businessID); err != nil {
			return err
		}
		return w.Queue(ctx, nextup.Message{BusinessID: businessID, Kind: MessageJoinConfirm, Channel: ch, To: to,
			Subject: subject, Body: body})
	})
}
