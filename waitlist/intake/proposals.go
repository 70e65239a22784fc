package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/entries"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// Intake are the use cases of requests that reach a business other than
// by the API: forwarded mail, a mirrored sheet, an imported file and the
// public join form, with the proposals staff approve.
type Intake struct {
	*core.Service
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Intake) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// MessageProposal is the kind of the owner's email about a new proposed
// row, with its one-tap Approve and Reject links.
const MessageProposal = "proposal"

// proposalLinkTTL is how long the owner's one-tap links work.
const proposalLinkTTL = 7 * 24 * time.Hour

// maxRequestAge bounds how far back a request's place can count from.
const maxRequestAge = 14 * 24 * time.Hour

// maxExcerpt bounds the request's words kept with a proposal.
const maxExcerpt = 2000

// ProposeParams is a request turned into a proposed row by a parser.
type ProposeParams struct {
	Source     string // nextup.ProposalFromEmail or ProposalFromSheet
	SourceRef  string // the request's name within its source (a Message-ID); "" for none
	ReceivedAt time.Time
	Excerpt    string
	Fields     nextup.ProposalFields
	Confidence map[string]float64
	Problems   []string
}

// Propose stores a proposed row and emails the owner (when the business
// has an owner_email) one-tap links to approve or reject it. The same
// request proposed again (same source and source ref) returns the first
// proposal, and Repeat says so; nothing is written or sent twice.
func (s *Intake) Propose(ctx context.Context, businessID string, p ProposeParams) (prop nextup.Proposal, repeat bool, err error) {
	if p.Source != nextup.ProposalFromEmail && p.Source != nextup.ProposalFromSheet {
		return prop, false, core.Invalid(nextup.FieldError{Field: "source", Message: "must be email or sheet"})
	}
	excerpt := strings.TrimSpace(p.Excerpt)
	if r := []rune(excerpt); len(r) > maxExcerpt {
		excerpt = string(r[:maxExcerpt]) + "…"
	}
	err = s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorSystem
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return core.NotFound("business", businessID, err)
		}
		received := p.ReceivedAt
		switch {
		case received.IsZero() || received.After(w.Now):
			received = w.Now // a Date header from the future is not believed
		case received.Before(w.Now.Add(-maxRequestAge)):
			// A Date header is the sender's word: a request older than
			// this keeps its place only from this far back.
			received = w.Now.Add(-maxRequestAge)
			p.Problems = append(p.Problems, fmt.Sprintf("the request says it was written %s; it keeps its place only from %s",
				p.ReceivedAt.Format("2 Jan 2006"), received.Format("2 Jan 2006")))
		}
		token, hash := w.s.Random.Token()
		prop = nextup.Proposal{
			ID: w.s.Random.ID("prp"), BusinessID: businessID, Source: p.Source, SourceRef: p.SourceRef,
			ReceivedAt: received, Excerpt: excerpt, Fields: p.Fields, Confidence: p.Confidence, Problems: p.Problems,
			State: nextup.ProposalOpen, ActionHash: hash, ActionExpiresAt: w.Now.Add(proposalLinkTTL), CreatedAt: w.Now,
		}
		if err := w.Tx.ProposalCreate(ctx, prop); errors.Is(err, nextup.ErrConflict) && p.SourceRef != "" {
			return errRepeatProposal
		} else if err != nil {
			return fmt.Errorf("propose: %w", err)
		}
		if err := w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
			To: "proposal_received", Reason: p.Source, Detail: map[string]any{"proposal_id": prop.ID, "problems": len(p.Problems)}}); err != nil {
			return err
		}
		if p.Source == nextup.ProposalFromSheet {
			return nil // rows of a sheet: listed on the dashboard, not mailed one by one
		}
		return w.queueProposal(ctx, bi, prop, token)
	})
	if errors.Is(err, errRepeatProposal) {
		err = s.Read(ctx, func(tx nextup.Tx) error {
			ps, err := tx.ProposalList(ctx, businessID, "")
			for _, q := range ps {
				if q.Source == p.Source && q.SourceRef == p.SourceRef {
					prop = q
					return err
				}
			}
			if err == nil {
				err = fmt.Errorf("proposal of %s %q: %w", p.Source, p.SourceRef, nextup.ErrNotFound)
			}
			return err
		})
		return prop, true, err
	}
	return prop, false, err
}

var errRepeatProposal = errors.New("the request was proposed before")

// queueProposal emails the owner the new proposal with its links.
func (w *work) queueProposal(ctx context.Context, bi *core.Biz, p nextup.Proposal, token string) error {
	to := bi.Profile.OwnerEmail
	if to == "" {
		return nil // the dashboard and the API list it
	}
	f := p.Fields
	var lines []string
	add := func(k, v string) {
		if v != "" {
			lines = append(lines, k+": "+v)
		}
	}
	add("Name", f.Name)
	add("Email", f.Email)
	add("Phone", f.Phone)
	add("Service", f.Service)
	if f.PartySize > 0 {
		add("Party", fmt.Sprint(f.PartySize))
	}
	if !f.Earliest.IsZero() {
		add("From", templates.FormatWhen(f.Earliest, bi.Loc))
	}
	if !f.Latest.IsZero() {
		add("Until", templates.FormatWhen(f.Latest, bi.Loc))
	}
	add("With", f.Staff)
	add("Joins as of", templates.FormatWhen(p.ReceivedAt, bi.Loc))
	if len(p.Problems) > 0 {
		add("Check", strings.Join(p.Problems, "; "))
	}
	note := strings.Join(lines, "\n") + "\n\nThey wrote:\n" + p.Excerpt
	m := nextup.Message{BusinessID: bi.ID, Kind: MessageProposal, Channel: nextup.ChannelEmail, To: to}
	templates.Compose(bi.Business, templates.TemplateProposal, templates.TemplateData{Name: templates.CmpOr(f.Name, "someone"), Service: templates.CmpOr(f.Service, "a slot"),
		Note: note, ApproveLink: w.s.ProposalURL(token, "approve"), RejectLink: w.s.ProposalURL(token, "reject")}, &m)
	return w.Queue(ctx, m)
}

// ListProposals lists a business's proposed rows, newest first.
func (s *Intake) ListProposals(ctx context.Context, businessID string, state nextup.ProposalState) ([]nextup.Proposal, error) {
	var out []nextup.Proposal
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		out, err = tx.ProposalList(ctx, businessID, state)
		return err
	})
	return out, err
}

// ProposalOverrides are staff's corrections of a proposal's fields when
// they approve it: the fields they set replace the parsed ones.
type ProposalOverrides = nextup.ProposalFields

// ApproveProposal makes an open proposal an entry whose joined-at is when
// the request was received, with the fields staff corrected, in one
// transaction with the approval (audited). A proposal already decided is
// 409 proposal_decided.
func (s *Intake) ApproveProposal(ctx context.Context, businessID, id string, o ProposalOverrides, by string) (entries.JoinResult, error) {
	return s.decideProposal(ctx, func(tx nextup.Tx) (nextup.Proposal, error) { return tx.ProposalGet(ctx, id) }, businessID, true, o, by)
}

// RejectProposal rejects an open proposal (audited).
func (s *Intake) RejectProposal(ctx context.Context, businessID, id, by string) error {
	_, err := s.decideProposal(ctx, func(tx nextup.Tx) (nextup.Proposal, error) { return tx.ProposalGet(ctx, id) }, businessID, false, ProposalOverrides{}, by)
	return err
}

// ProposalByLink is the proposal of an owner's one-tap link, for its
// confirmation page; viewing changes nothing. An unknown link is
// ErrNotFound; an expired one is 410-like proposal_link_expired.
func (s *Intake) ProposalByLink(ctx context.Context, token string) (nextup.Proposal, nextup.Business, error) {
	var p nextup.Proposal
	var b nextup.Business
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		if p, err = tx.ProposalByActionHash(ctx, nextup.HashToken(token)); err != nil {
			return core.NotFound("proposal link", "", err)
		}
		b, err = tx.BusinessGet(ctx, p.BusinessID)
		return err
	})
	if err == nil && !s.Clock.Now().Before(p.ActionExpiresAt) {
		err = nextup.Errorf(nextup.ErrConflict, nextup.CodeProposalLinkExpired, "this link has expired; the request is on the dashboard")
	}
	return p, b, err
}

// DecideByLink approves or rejects the proposal of an owner's one-tap
// link, once, before it expires.
func (s *Intake) DecideByLink(ctx context.Context, token string, approve bool) (nextup.Proposal, error) {
	p, _, err := s.ProposalByLink(ctx, token)
	if err != nil {
		return p, err
	}
	hash := nextup.HashToken(token)
	_, err = s.decideProposal(ctx, func(tx nextup.Tx) (nextup.Proposal, error) { return tx.ProposalByActionHash(ctx, hash) },
		p.BusinessID, approve, ProposalOverrides{}, "owner-link")
	if err != nil {
		return p, err
	}
	err = s.Read(ctx, func(tx nextup.Tx) error {
		p, err = tx.ProposalGet(ctx, p.ID)
		return err
	})
	return p, err
}

func (s *Intake) decideProposal(ctx context.Context, get func(nextup.Tx) (nextup.Proposal, error), businessID string,
	approve bool, o ProposalOverrides, by string) (entries.JoinResult, error) {
	var res entries.JoinResult
	err := s.tx(ctx, func(w *work) error {
		w.Actor = nextup.ActorStaff
		p, err := get(w.Tx)
		if err != nil || p.BusinessID != businessID {
			return core.NotFound("proposal", p.ID, cmpErr(err))
		}
		if p.State != nextup.ProposalOpen {
			return &nextup.Error{Kind: nextup.ErrConflict, Code: nextup.CodeProposalDecided,
				Message: "this request was " + string(p.State) + " already", Data: map[string]any{"entry_id": p.EntryID}}
		}
		bi, err := w.Business(ctx, businessID)
		if err != nil {
			return err
		}
		d := nextup.ProposalDecision{To: nextup.ProposalRejected, At: w.Now, By: by}
		if approve {
			f := merge(p.Fields, o)
			jp := entries.JoinParams{Name: f.Name, Email: f.Email, Phone: f.Phone, Service: f.Service, PartySize: f.PartySize,
				Earliest: f.Earliest, Latest: f.Latest, Staff: f.Staff, Availability: f.Availability, Source: p.Source,
				JoinedAt: p.ReceivedAt}
			if err := entries.ValidateJoin(&jp, w.Now); err != nil {
				return err
			}
			if res, err = entries.JoinIn(ctx, w.Work, businessID, jp); err != nil {
				return err
			}
			d.To, d.EntryID = nextup.ProposalApproved, res.Entry.ID
		}
		if _, err := w.Tx.ProposalDecide(ctx, p.ID, d); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return nextup.Errorf(nextup.ErrConflict, nextup.CodeProposalDecided, "this request was decided already")
			}
			return err
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: businessID,
			To: "proposal_" + string(d.To), Reason: by, Detail: map[string]any{"proposal_id": p.ID, "entry_id": d.EntryID}})
	})
	return res, err
}

func cmpErr(err error) error {
	if err == nil {
		return nextup.ErrNotFound
	}
	return err
}

// merge lays staff's corrections over the parsed fields.
func merge(f, o nextup.ProposalFields) nextup.ProposalFields {
	f.Name = templates.CmpOr(o.Name, f.Name)
	f.Email = templates.CmpOr(o.Email, f.Email)
	f.Phone = templates.CmpOr(o.Phone, f.Phone)
	f.Service = templates.CmpOr(o.Service, f.Service)
	f.Staff = templates.CmpOr(o.Staff, f.Staff)
	if o.PartySize > 0 {
		f.PartySize = o.PartySize
	}
	if !o.Earliest.IsZero() {
		f.Earliest = o.Earliest
	}
	if !o.Latest.IsZero() {
		f.Latest = o.Latest
	}
	if o.Availability != nil {
		f.Availability = o.Availability
	}
	return f
}
