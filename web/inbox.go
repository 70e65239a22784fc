package web

import (
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// maxInboxBytes bounds a mail posted to the inbox webhook, as the SMTP
// listener bounds one it receives.
const maxInboxBytes = 10 << 20

// inbox is POST /v1/businesses/{bid}/inbox with a raw RFC 5322 message
// (Content-Type: message/rfc822): the same lane as the SMTP listener, for
// webhook-style inbound mail (a mail provider's inbound parse, a
// forwarding rule). 202 {"proposal_id"}; the same request again answers
// with the same proposal.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "message/rfc822" && ct != "text/plain" {
		s.writeError(w, r, invalidf("Content-Type", "send the raw email as message/rfc822"))
		return
	}
	raw, err := readBody(r, maxInboxBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, repeat, err := s.Svc.ReceiveMail(r.Context(), b.ID, raw)
	if errors.Is(err, waitlist.ErrMailTooLarge) {
		err = fmt.Errorf("%w: %v", errTooLarge, err)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"proposal_id": p.ID, "repeat": repeat})
}
