package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/mailmsg"
	"github.com/nextup-dev/nextup/intake/parse"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// ErrMailTooLarge is a mail over the inbox lane's limits (10 MiB, 12
// levels of nesting).
var ErrMailTooLarge = errors.New("the mail is too large or nested too deeply")

// ReceiveMail is the inbox lane: a booking request forwarded to the
// business (raw RFC 5322, from the SMTP listener, the inbox webhook or the
// CLI) is dug out of the forward (intake/mailmsg), read by the
// deterministic parser against the business's catalogue (intake/parse),
// and proposed for staff to approve (Propose). Its place counts from when
// the requester wrote it. The same request forwarded twice proposes one
// row: its reference is a hash of who wrote it, when, and what.
func (s *Intake) ReceiveMail(ctx context.Context, businessID string, raw []byte) (nextup.Proposal, bool, error) {
	b, err := s.GetBusiness(ctx, businessID)
	if err != nil {
		return nextup.Proposal{}, false, err
	}
	loc, err := b.Location()
	if err != nil {
		return nextup.Proposal{}, false, err
	}
	req, err := mailmsg.Extract(raw)
	if errors.Is(err, mailmsg.ErrTooLarge) || errors.Is(err, mailmsg.ErrTooDeep) {
		return nextup.Proposal{}, false, ErrMailTooLarge
	}
	if err != nil {
		return nextup.Proposal{}, false, core.Invalid(nextup.FieldError{Field: "body", Message: "not a readable email: " + err.Error()})
	}
	sent := req.Sent
	if sent.IsZero() {
		sent = s.Clock.Now()
	}
	in := parse.Input{Text: req.Body, Signature: req.Signature, Subject: req.Subject, Reply: req.Reply,
		FromName: req.From.Name, FromAddress: req.From.Address, Sent: sent}
	pb := parse.Business{Location: loc, Country: b.Profile.Country, Services: b.Profile.Services, Staff: b.Profile.Staff}
	var p parse.Proposal
	if s.MailParser != nil {
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second) // leave time for the rules and the store
		if err = s.BeforeRemote(ctx); err == nil {
			p, err = s.MailParser.Propose(mctx, in, pb)
		}
		cancel()
		if err != nil {
			s.Log().Warn("the model parser failed; reading the request by the rules", "business_id", businessID, "error", err)
			p = parse.Propose(in, pb)
			p.Problems = append(p.Problems, "read by the rules: the model parser did not answer")
		}
	} else {
		p = parse.Propose(in, pb)
	}
	// The written time as the mail says it (zero when it says none), so a
	// mail without a Date forwarded twice is still one request.
	sum := sha256.Sum256([]byte(strings.ToLower(req.From.Address) + "\x00" + req.Sent.UTC().String() + "\x00" + req.Body))
	excerpt := req.Body
	if req.Subject != "" {
		excerpt = req.Subject + "\n\n" + excerpt
	}
	return s.Propose(ctx, businessID, ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: "mail:" + hex.EncodeToString(sum[:16]),
		ReceivedAt: sent, Excerpt: excerpt, Confidence: p.Confidence, Problems: p.Problems,
		Fields: nextup.ProposalFields{Name: p.Name, Email: p.Email, Phone: p.Phone, Service: p.Service, PartySize: p.PartySize,
			Earliest: p.Earliest, Latest: p.Latest, Staff: p.Staff, Availability: p.Availability}})
}
