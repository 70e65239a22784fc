package core

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"

	"github.com/nextup-dev/nextup"
)

// The links messages carry, under BaseURL: claim, status, calendar,
// cancel, proposal and unsubscribe links. The unsubscribe and cancel
// links name an address or a booking without a row of their own: the
// name is sealed under keys of the business (see package messages for
// the one-click unsubscribe, package events for the cancel link), so
// nobody without the business's keys can make one for another.

// URL is path under BaseURL.
func (s *Service) URL(path string) string { return s.BaseURL + path }

// ClaimURL is the public link for a claim token.
func (s *Service) ClaimURL(token string) string { return s.URL("/c/" + token) }

// StatusURL is the public link for an entry's status token.
func (s *Service) StatusURL(token string) string { return s.URL("/s/" + token) }

// JoinURL is where a person joins sl's waitlist again: an event's public
// page, /e/{business slug}/{event slug or id}, or the business's join
// form, /b/{business slug}/join; "" while the business has no slug.
func (s *Service) JoinURL(b nextup.Business, sl nextup.Slot) string {
	if b.Profile.Slug == "" {
		return ""
	}
	if sl.Kind != nextup.KindEvent {
		return s.URL("/b/" + url.PathEscape(b.Profile.Slug) + "/join")
	}
	ref := sl.ID
	if sl.Event != nil && sl.Event.Slug != "" {
		ref = sl.Event.Slug
	}
	return s.URL("/e/" + url.PathEscape(b.Profile.Slug) + "/" + url.PathEscape(ref))
}

// CalendarURL is the public link to a booking's invite.
func (s *Service) CalendarURL(bookingID, calToken string) string {
	return s.URL("/v1/bookings/" + bookingID + "/calendar.ics?token=" + calToken)
}

// CancelURL is an event booking's self-service cancel link.
func (s *Service) CancelURL(b nextup.Business, bookingID string) string {
	return s.URL("/r/" + b.ID + "/" + sealToken(b, "cancel", bookingID))
}

// ProposalURL is the page behind an owner's one-tap link; do is
// "approve" or "reject".
func (s *Service) ProposalURL(token, do string) string { return s.URL("/p/" + token + "/" + do) }

// UnsubscribeURL is the one-click link for addr's email from b.
func (s *Service) UnsubscribeURL(b nextup.Business, addr string) string {
	if addr == "" {
		return ""
	}
	return s.URL("/u/" + url.PathEscape(b.ID) + "/" + unsubscribeToken(b, nextup.AddressKey(nextup.ChannelEmail, addr)))
}

// Stoppable gives an email a person may stop its one-click unsubscribe
// link; texts carry none (STOP stops them).
func (s *Service) Stoppable(b nextup.Business, m *nextup.Message) {
	if m.Channel == nextup.ChannelEmail {
		m.UnsubscribeURL = s.UnsubscribeURL(b, m.To)
	}
}

// sealKeys derive the business's sealing and nonce keys from the
// hash of its API key. That hash is also the key webhooks and the booking
// system are signed with, so the business's own integrators could make
// such links too; nobody else can.
//
// The same sealing, under keys of another purpose, makes an event
// booking's self-service cancel link (package events).
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

// OpenUnsubscribeToken opens an unsubscribe link's token: the address it
// seals.
func OpenUnsubscribeToken(b nextup.Business, token string) (string, error) {
	return OpenToken(b, "unsubscribe", token)
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

// OpenToken opens a token sealToken made for purpose.
func OpenToken(b nextup.Business, purpose, token string) (string, error) {
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
