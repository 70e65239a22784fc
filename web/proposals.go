package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// proposalJSON is a proposed row as API.md shows it.
type proposalJSON struct {
	ID         string             `json:"id"`
	Source     string             `json:"source"`
	ReceivedAt time.Time          `json:"received_at"`
	Excerpt    string             `json:"excerpt"`
	Fields     map[string]any     `json:"fields"`
	Confidence map[string]float64 `json:"confidence"`
	Problems   []string           `json:"problems"`
	State      string             `json:"state"`
	EntryID    string             `json:"entry_id,omitempty"`
	DecidedAt  *time.Time         `json:"decided_at,omitempty"`
}

func proposalOut(p nextup.Proposal, loc *time.Location) proposalJSON {
	f := p.Fields
	bound := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.In(loc).Format(time.RFC3339)
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	party := any(nil)
	if f.PartySize > 0 {
		party = f.PartySize
	}
	out := proposalJSON{ID: p.ID, Source: p.Source, ReceivedAt: p.ReceivedAt.In(loc), Excerpt: p.Excerpt,
		Fields: map[string]any{"name": str(f.Name), "email": str(f.Email), "phone": str(f.Phone), "service": str(f.Service),
			"party_size": party, "earliest": bound(f.Earliest), "latest": bound(f.Latest), "staff": str(f.Staff)},
		Confidence: p.Confidence, Problems: p.Problems, State: string(p.State), EntryID: p.EntryID, DecidedAt: p.DecidedAt}
	if out.Confidence == nil {
		out.Confidence = map[string]float64{}
	}
	if out.Problems == nil {
		out.Problems = []string{}
	}
	return out
}

// listProposals is GET /v1/businesses/{bid}/proposals?state=open.
func (s *Server) listProposals(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	state := nextup.ProposalState(r.URL.Query().Get("state"))
	switch state {
	case "", nextup.ProposalOpen, nextup.ProposalApproved, nextup.ProposalRejected:
	default:
		s.writeError(w, r, invalidf("state", "must be open, approved or rejected"))
		return
	}
	ps, err := s.Svc.ListProposals(r.Context(), b.ID, state)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	loc := bizLoc(b)
	out := make([]proposalJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, proposalOut(p, loc))
	}
	writeJSON(w, http.StatusOK, map[string]any{"proposals": out})
}

// approveProposal is POST /v1/proposals/{id}:approve {field overrides}:
// 201 the new entry, joined as of when the request was received.
func (s *Server) approveProposal(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Name      *string `json:"name"`
		Email     *string `json:"email"`
		Phone     *string `json:"phone"`
		Service   *string `json:"service"`
		PartySize *int    `json:"party_size"`
		Earliest  *string `json:"earliest"`
		Latest    *string `json:"latest"`
		Staff     *string `json:"staff"`
	}
	if r.ContentLength != 0 {
		if err := s.body(r, &in); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	var o waitlist.ProposalOverrides
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	o.Name, o.Email, o.Phone, o.Service, o.Staff = deref(in.Name), deref(in.Email), deref(in.Phone), deref(in.Service), deref(in.Staff)
	if in.PartySize != nil {
		if *in.PartySize < 1 { // 0 would read as "keep the proposal's"
			s.writeError(w, r, invalidf("party_size", "must be between 1 and 1000"))
			return
		}
		o.PartySize = *in.PartySize
	}
	loc := bizLoc(b)
	var err error
	if o.Earliest, err = nextup.ParseBound(deref(in.Earliest), loc, false); err != nil {
		s.writeError(w, r, invalidf("earliest", err.Error()))
		return
	}
	if o.Latest, err = nextup.ParseBound(deref(in.Latest), loc, true); err != nil {
		s.writeError(w, r, invalidf("latest", err.Error()))
		return
	}
	res, err := s.Svc.ApproveProposal(r.Context(), b.ID, r.PathValue("id"), o, "api")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.Svc.GetEntry(r.Context(), b.ID, res.Entry.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := map[string]any{"id": res.Entry.ID, "state": res.Entry.State, "joined_at": res.Entry.JoinedAt.In(loc),
		"status_url": s.Svc.StatusURL(res.StatusToken), "moves": orNoMoves(res.Moves)}
	addPosition(out, b.Rules, v.Position)
	writeJSON(w, http.StatusCreated, out)
}

// rejectProposal is POST /v1/proposals/{id}:reject.
func (s *Server) rejectProposal(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	if err := s.Svc.RejectProposal(r.Context(), b.ID, r.PathValue("id"), "api"); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "state": nextup.ProposalRejected})
}

func orNoMoves(m []nextup.Move) []nextup.Move {
	if m == nil {
		return []nextup.Move{}
	}
	return m
}

// proposalPage is GET /p/{token}/{do}: the page behind the owner's one-tap
// Approve or Reject link. It shows the request and asks to confirm with a
// POST; opening it (a mail scanner following links) changes nothing.
func (s *Server) proposalPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	do := r.PathValue("do")
	if do != "approve" && do != "reject" {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such page"))
		return
	}
	p, b, err := s.Svc.ProposalByLink(r.Context(), r.PathValue("token"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "proposal", proposalPageData(p, b, r))
}

// proposalPost is POST /p/{token}/{do}: approve or reject, once.
func (s *Server) proposalPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	discard(r)
	do := r.PathValue("do")
	if do != "approve" && do != "reject" {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such page"))
		return
	}
	p, err := s.Svc.DecideByLink(r.Context(), r.PathValue("token"), do == "approve")
	if err != nil && nextup.ErrorCode(err) != nextup.CodeProposalDecided {
		s.errorPage(w, r, err)
		return
	}
	b, berr := s.Svc.GetBusiness(r.Context(), p.BusinessID)
	if berr != nil {
		s.errorPage(w, r, berr)
		return
	}
	if err != nil { // decided before: say how it stands
		p2, _, _ := s.Svc.ProposalByLink(r.Context(), r.PathValue("token"))
		p = p2
	}
	s.render(w, http.StatusOK, "proposal", proposalPageData(p, b, r))
}

// unsureDates is the confidence below which the one-tap page warns that
// the proposed dates are a guess; the parsers give about 0.3 to dates
// they read with doubt.
const unsureDates = 0.5

func proposalPageData(p nextup.Proposal, b nextup.Business, r *http.Request) pageData {
	f := p.Fields
	d := pageData{Title: "A request for " + b.Name, Business: b.Name, Service: f.Service, Staff: f.Staff,
		Token: r.PathValue("token") + "/" + r.PathValue("do"), Detail: p.Excerpt}
	who := f.Name
	if who == "" {
		who = "Someone"
	}
	if f.Earliest.IsZero() {
		d.When = "any time"
	} else {
		d.When = waitlist.FormatWhen(f.Earliest, bizLoc(b))
	}
	// The dates as the parser read them, unless it said it was unsure:
	// then the page says so before anyone confirms them.
	if c, ok := p.Confidence["earliest"]; ok && c < unsureDates && !(f.Earliest.IsZero() && f.Latest.IsZero()) {
		d.When += " (the dates were unclear; check them against the request below)"
	}
	switch p.State {
	case nextup.ProposalApproved:
		d.Heading, d.Message = "Approved", who+" is on the waitlist, as of when they asked."
	case nextup.ProposalRejected:
		d.Heading, d.Message = "Rejected", "This request was rejected; nobody was added."
	default:
		d.CanLeave = true // the confirm button
		if r.PathValue("do") == "approve" {
			d.Heading = "Approve this request?"
			d.Message = who + " joins the waitlist as of " + waitlist.FormatWhen(p.ReceivedAt, bizLoc(b)) + ", when they asked."
		} else {
			d.Heading, d.Message = "Reject this request?", "Nobody is added; the request stays on the dashboard as rejected."
		}
	}
	return d
}
