package messages

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// One-click unsubscribe (RFC 8058). Mail a person may stop (offers,
// follow-ups, "you're on the list") carries a link /u/{business}/{token}
// whose token is the address sealed with a key of the business: it names
// the address without showing it, and nobody without the business's keys
// can make one for another address. POSTing to it (a mail client's unsubscribe button, or the page's
// button) opts the address out of the business's email at once; the relay
// honours it before the next message and the engine stops choosing email
// for it. Confirmations and reminders of a booking carry no link: they are
// about a booking the person made. The link and its sealing are package
// core's (links.go), since every use case that queues such mail adds it.

// optedOut reports whether addr may not be contacted on ch by the business
// (an SMS STOP, an unsubscribe link, an address that can never be reached).
func optedOut(ctx context.Context, tx nextup.Tx, businessID string, ch nextup.Channel, addr string) (bool, error) {
	if addr == "" {
		return false, nil
	}
	sups, err := tx.SuppressionList(ctx, businessID, []string{nextup.AddressKey(ch, addr)})
	return slices.ContainsFunc(sups, func(sp nextup.Suppression) bool { return sp.Channel == ch }), err
}

// Unsubscription is what the unsubscribe page shows.
type Unsubscription struct {
	Business string
	Address  string // masked: a***@example.com
	Done     bool   // the address is opted out
}

// maskEmail shows enough of an address for its owner to recognise it.
func maskEmail(a string) string {
	local, domain, ok := strings.Cut(a, "@")
	if !ok || local == "" {
		return "***"
	}
	return local[:1] + "***@" + domain
}

func (s *Messages) unsubscribeTarget(ctx context.Context, businessID, token string) (nextup.Business, string, error) {
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return b, "", core.NotFound("unsubscribe link", token, nextup.ErrNotFound)
	}
	addr, err := core.OpenUnsubscribeToken(b, token)
	if err != nil {
		return b, "", core.NotFound("unsubscribe link", token, nextup.ErrNotFound)
	}
	return b, addr, nil
}

// UnsubscribeStatus reads an unsubscribe link without acting on it (the
// page a person sees before pressing the button). An unknown link is
// ErrNotFound.
func (s *Messages) UnsubscribeStatus(ctx context.Context, businessID, token string) (Unsubscription, error) {
	b, addr, err := s.unsubscribeTarget(ctx, businessID, token)
	if err != nil {
		return Unsubscription{}, err
	}
	out := Unsubscription{Business: b.Name, Address: maskEmail(addr)}
	err = s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out.Done, err = optedOut(ctx, tx, b.ID, nextup.ChannelEmail, addr)
		return err
	})
	return out, err
}

// Unsubscribe opts the link's address out of the business's email, at
// once and for good (until staff lift it). Repeating it changes nothing.
func (s *Messages) Unsubscribe(ctx context.Context, businessID, token string) (Unsubscription, error) {
	b, addr, err := s.unsubscribeTarget(ctx, businessID, token)
	if err != nil {
		return Unsubscription{}, err
	}
	err = s.tx(ctx, func(w *work) error {
		if already, err := optedOut(ctx, w.Tx, b.ID, nextup.ChannelEmail, addr); already || err != nil {
			return err
		}
		w.Actor = nextup.ActorCustomer
		if err := w.Tx.SuppressionAdd(ctx, nextup.Suppression{BusinessID: b.ID, Channel: nextup.ChannelEmail,
			Address: addr, Reason: "unsubscribe link", At: w.Now}); err != nil {
			return fmt.Errorf("opt %s out: %w", maskEmail(addr), err)
		}
		bi, err := w.Business(ctx, b.ID)
		if err != nil {
			return err
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: b.ID,
			To: "email_opted_out", Reason: "unsubscribe", Detail: map[string]any{"email": addr}})
	})
	return Unsubscription{Business: b.Name, Address: maskEmail(addr), Done: err == nil}, err
}
