package waitlist_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// A forwarded request becomes a proposal the owner is emailed about; the
// one-tap link approves it once, and the entry joins as of when the request
// arrived; the same mail again proposes nothing new.
func TestProposalApprovedByLink(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	owner := "owner@salon.example"
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{OwnerEmail: &owner}); err != nil {
		t.Fatal(err)
	}
	// Bob joined an hour ago; Ann's mail arrived two hours ago but was
	// forwarded only now.
	b.clock.Advance(-time.Hour)
	bob := b.join(t, "Bob", waitlist.JoinParams{})
	b.clock.Advance(time.Hour)
	received := b.clock.Now().Add(-2 * time.Hour)
	params := waitlist.ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: "<abc@mail.example>", ReceivedAt: received,
		Excerpt: "Hi! Could I get a haircut next week? Ann", Problems: []string{"no date given"},
		Fields:     nextup.ProposalFields{Name: "Ann", Email: "ann@example.com", Service: "haircut"},
		Confidence: map[string]float64{"name": 0.9, "service": 0.8}}
	p, repeat, err := b.svc.Propose(b.ctx, b.biz.ID, params)
	if err != nil || repeat || p.State != nextup.ProposalOpen || !p.ReceivedAt.Equal(received) {
		t.Fatalf("Propose: %+v %v %v", p, repeat, err)
	}
	p2, repeat, err := b.svc.Propose(b.ctx, b.biz.ID, params)
	if err != nil || !repeat || p2.ID != p.ID {
		t.Fatalf("the same mail again: %s %v %v", p2.ID, repeat, err)
	}
	msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID, To: owner})
	if err != nil || len(msgs) != 1 || msgs[0].Kind != waitlist.MessageProposal {
		t.Fatalf("owner messages %+v, %v", msgs, err)
	}
	m := msgs[0]
	i := strings.Index(m.Body, "https://nextup.test/p/")
	if i < 0 || !strings.Contains(m.Body, "no date given") || !strings.Contains(m.HTML, ">Approve</a>") {
		t.Fatalf("owner mail:\n%s", m.Body)
	}
	link := strings.Fields(m.Body[i:])[0]
	token := strings.TrimSuffix(strings.TrimPrefix(link, "https://nextup.test/p/"), "/approve")
	// Viewing changes nothing.
	if got, _, err := b.svc.ProposalByLink(b.ctx, token); err != nil || got.State != nextup.ProposalOpen {
		t.Fatalf("view: %+v %v", got.State, err)
	}
	got, err := b.svc.DecideByLink(b.ctx, token, true)
	if err != nil || got.State != nextup.ProposalApproved || got.EntryID == "" || got.DecidedBy != "owner-link" {
		t.Fatalf("approve by link: %+v %v", got, err)
	}
	ann := b.entry(t, got.EntryID)
	if !ann.Entry.JoinedAt.Equal(received) || ann.Entry.Source != nextup.ProposalFromEmail || ann.Position != 1 {
		t.Errorf("Ann joined %v (received %v), source %q, position %d; want ahead of Bob", ann.Entry.JoinedAt, received, ann.Entry.Source, ann.Position)
	}
	if e := b.entry(t, bob.ID); e.Position != 2 {
		t.Errorf("Bob is %d", e.Position)
	}
	// Single use: the link cannot reject it now.
	if _, err := b.svc.DecideByLink(b.ctx, token, false); nextup.ErrorCode(err) != nextup.CodeProposalDecided {
		t.Errorf("second use: %v", err)
	}
	if _, err := b.svc.DecideByLink(b.ctx, "forged", true); !errors.Is(err, nextup.ErrNotFound) {
		t.Errorf("forged link: %v", err)
	}
}

// Staff correct the parse when they approve; a rejected proposal adds
// nobody; a link past its week has expired; another business's proposal
// is not found.
func TestProposalApproveRejectExpire(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	propose := func(ref string) nextup.Proposal {
		t.Helper()
		p, _, err := b.svc.Propose(b.ctx, b.biz.ID, waitlist.ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: ref,
			Fields: nextup.ProposalFields{Name: "Cy", Email: "cy@example.com", Service: "hiarcut"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := propose("<1@x>")
	res, err := b.svc.ApproveProposal(b.ctx, b.biz.ID, p.ID, waitlist.ProposalOverrides{Service: "haircut", PartySize: 2}, "api")
	if err != nil || res.Entry.Service != "haircut" || res.Entry.PartySize != 2 || res.Entry.Name != "Cy" {
		t.Fatalf("approve with corrections: %+v %v", res.Entry, err)
	}
	q := propose("<2@x>")
	if err := b.svc.RejectProposal(b.ctx, b.biz.ID, q.ID, "api"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.ApproveProposal(b.ctx, b.biz.ID, q.ID, waitlist.ProposalOverrides{}, "api"); nextup.ErrorCode(err) != nextup.CodeProposalDecided {
		t.Errorf("approving a rejected proposal: %v", err)
	}
	open, err := b.svc.ListProposals(b.ctx, b.biz.ID, nextup.ProposalOpen)
	if err != nil || len(open) != 0 {
		t.Errorf("open proposals %d, %v", len(open), err)
	}
	if _, err := b.svc.ApproveProposal(b.ctx, "biz_other", p.ID, waitlist.ProposalOverrides{}, "api"); !errors.Is(err, nextup.ErrNotFound) {
		t.Errorf("another business: %v", err)
	}
	// A bad correction changes nothing.
	r := propose("<3@x>")
	if _, err := b.svc.ApproveProposal(b.ctx, b.biz.ID, r.ID, waitlist.ProposalOverrides{Email: "not-an-email"}, "api"); !errors.Is(err, nextup.ErrInvalid) {
		t.Errorf("bad correction: %v", err)
	}
	if got, _ := b.svc.ListProposals(b.ctx, b.biz.ID, nextup.ProposalOpen); len(got) != 1 || got[0].ID != r.ID {
		t.Errorf("after a refused approval: %+v", got)
	}
	// A Date header far in the past buys a place only two weeks back.
	old, _, err := b.svc.Propose(b.ctx, b.biz.ID, waitlist.ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: "<old@x>",
		ReceivedAt: b.clock.Now().Add(-60 * 24 * time.Hour), Fields: nextup.ProposalFields{Name: "Old", Email: "old@example.com"}})
	if err != nil || !old.ReceivedAt.Equal(b.clock.Now().Add(-14*24*time.Hour)) || len(old.Problems) != 1 {
		t.Errorf("an old request: received %v, problems %v, %v", old.ReceivedAt, old.Problems, err)
	}
	// The owner's link works for a week.
	owner := "owner@salon.example"
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{OwnerEmail: &owner}); err != nil {
		t.Fatal(err)
	}
	propose("<4@x>")
	msgs, err := b.svc.ListMessages(b.ctx, nextup.MessageFilter{BusinessID: b.biz.ID, To: owner})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("owner mail: %d, %v", len(msgs), err)
	}
	i := strings.Index(msgs[0].Body, "/p/")
	token := strings.Split(msgs[0].Body[i+3:], "/")[0]
	b.clock.Advance(7*24*time.Hour + time.Second)
	if _, err := b.svc.DecideByLink(b.ctx, token, true); nextup.ErrorCode(err) != nextup.CodeProposalLinkExpired {
		t.Errorf("a week-old link: %v", err)
	}
}
