package waitlist

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/nextup-dev/nextup"
)

// One-click unsubscribe (RFC 8058). Mail a person may stop (offers,
// follow-ups, "you're on the list") carries a link /u/{business}/{token}
// whose token is the address sealed with a key of the business: it names
// the address without showing it, and nobody without the business's keys
// can make one for another address. POSTing to it (a mail client's unsubscribe button, or the page's
// button) opts the address out of the business's email at once; the relay
// honours it before the next message and the engine stops choosing email
// for it. Confirmations and reminders of a booking carry no link: they are
// about a booking the person made.

// sealKeys derive the business's sealing and nonce keys from the
// hash of its API key. That hash is also the key webhooks and the booking
// system are signed with, so the business's own integrators could make
// such links too; nobody else can.
//
// The same sealing, under keys of another purpose, makes an event
// booking's self-service cancel link (events_cancel.go).
func sealKeys(b nextup.Business, purpose string) (seal, nonce []byte) {
	derive := func(label string) []byte {
		mac := hmac.New(sha256.New, []byte(b.APIKeyHash))
		mac.Write([]byte("nextup " + purpose + " " + label + "\x00" + b.ID))
		return mac.Sum(nil)
	}
	return derive("seal"), derive("nonce")
}

// unsubscribeToken seals addr. The nonce is derived from the address, so
// one address always gets the same link.
func unsubscribeToken(b nextup.Business, addr string) string {
	return sealToken(b, "unsubscribe", addr)
}

func openUnsubscribeToken(b nextup.Business, token string) (string, error) {
	return openToken(b, "unsubscribe", token)
}

// sealToken seals text for purpose; the nonce is derived from the text, so
// one text always gets the same token.
func sealToken(b nextup.Business, purpose, text string) string {
	key, nonceKey := sealKeys(b, purpose)
	block, _ := aes.NewCipher(key) // a 32-byte key never fails
	gcm, _ := cipher.NewGCM(block)
	mac := hmac.New(sha256.New, nonceKey)
	mac.Write([]byte(text))
	nonce := mac.Sum(nil)[:gcm.NonceSize()]
	return base64.RawURLEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(text), nil))
}

func openToken(b nextup.Business, purpose, token string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	key, _ := sealKeys(b, purpose)
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	if err != nil || len(raw) < gcm.NonceSize()+gcm.Overhead() {
		return "", errors.New("malformed")
	}
	addr, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], nil)
	return string(addr), err
}

// stoppable gives an email a person may stop its one-click unsubscribe
// link; texts carry none (STOP stops them).
func (s *Service) stoppable(b nextup.Business, m *nextup.Message) {
	if m.Channel == nextup.ChannelEmail {
		m.UnsubscribeURL = s.unsubscribeURL(b, m.To)
	}
}

// optedOut reports whether addr may not be contacted on ch by the business
// (an SMS STOP, an unsubscribe link, an address that can never be reached).
func optedOut(ctx context.Context, tx nextup.Tx, businessID string, ch nextup.Channel, addr string) (bool, error) {
	if addr == "" {
		return false, nil
	}
	sups, err := tx.SuppressionList(ctx, businessID, []string{nextup.AddressKey(ch, addr)})
	return slices.ContainsFunc(sups, func(sp nextup.Suppression) bool { return sp.Channel == ch }), err
}

// unsubscribeURL is the one-click link for addr's email from b.
func (s *Service) unsubscribeURL(b nextup.Business, addr string) string {
	if addr == "" {
		return ""
	}
	return s.url("/u/" + url.PathEscape(b.ID) + "/" + unsubscribeToken(b, nextup.AddressKey(nextup.ChannelEmail, addr)))
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

func (s *Service) unsubscribeTarget(ctx context.Context, businessID, token string) (nextup.Business, string, error) {
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return b, "", notFound("unsubscribe link", token, nextup.ErrNotFound)
	}
	addr, err := openUnsubscribeToken(b, token)
	if err != nil {
		return b, "", notFound("unsubscribe link", token, nextup.ErrNotFound)
	}
	return b, addr, nil
}

// UnsubscribeStatus reads an unsubscribe link without acting on it (the
// page a person sees before pressing the button). An unknown link is
// ErrNotFound.
func (s *Service) UnsubscribeStatus(ctx context.Context, businessID, token string) (Unsubscription, error) {
	b, addr, err := s.unsubscribeTarget(ctx, businessID, token)
	if err != nil {
		return Unsubscription{}, err
	}
	out := Unsubscription{Business: b.Name, Address: maskEmail(addr)}
	err = s.read(ctx, func(tx nextup.Tx) error {
		var err error
		out.Done, err = optedOut(ctx, tx, b.ID, nextup.ChannelEmail, addr)
		return err
	})
	return out, err
}

// Unsubscribe opts the link's address out of the business's email, at
// once and for good (until staff lift it). Repeating it changes nothing.
func (s *Service) Unsubscribe(ctx context.Context, businessID, token string) (Unsubscription, error) {
	b, addr, err := s.unsubscribeTarget(ctx, businessID, token)
	if err != nil {
		return Unsubscription{}, err
	}
	err = s.tx(ctx, func(w *work) error {
		if already, err := optedOut(ctx, w.tx, b.ID, nextup.ChannelEmail, addr); already || err != nil {
			return err
		}
		w.actor = nextup.ActorCustomer
		if err := w.tx.SuppressionAdd(ctx, nextup.Suppression{BusinessID: b.ID, Channel: nextup.ChannelEmail,
			Address: addr, Reason: "unsubscribe link", At: w.now}); err != nil {
			return fmt.Errorf("opt %s out: %w", maskEmail(addr), err)
		}
		bi, err := w.business(ctx, b.ID)
		if err != nil {
			return err
		}
		return w.audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: b.ID,
			To: "email_opted_out", Reason: "unsubscribe", Detail: map[string]any{"email": addr}})
	})
	return Unsubscription{Business: b.Name, Address: maskEmail(addr), Done: err == nil}, err
}
