package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// proposal creates an open proposal of a business from an email.
func (b *bundle) proposal(businessID string, mods ...func(*nextup.Proposal)) nextup.Proposal {
	b.t.Helper()
	id := b.id("prp")
	p := nextup.Proposal{
		ID: id, BusinessID: businessID, Source: nextup.ProposalFromEmail, SourceRef: "<" + id + "@mail.example>",
		ReceivedAt: b.at(-time.Hour), Excerpt: "Hi, could I get a cut next Tuesday? — Ann",
		Fields: nextup.ProposalFields{Name: "Ann", Email: "ann@example.com", Service: "cut", PartySize: 1,
			Earliest: b.at(24 * time.Hour), Latest: b.at(48 * time.Hour)},
		Confidence: map[string]float64{"name": 0.9, "service": 0.75, "earliest": 0.5},
		Problems:   []string{"no phone number"},
		State:      nextup.ProposalOpen, ActionHash: nextup.HashToken("action-" + id), ActionExpiresAt: b.at(72 * time.Hour),
		CreatedAt: b.now,
	}
	for _, m := range mods {
		m(&p)
	}
	b.tx(func(tx nextup.Tx) error { return tx.ProposalCreate(b.ctx, p) })
	return p
}

func testProposalRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	want := []nextup.Proposal{
		b.proposal(biz.ID),
		b.proposal(biz.ID, func(p *nextup.Proposal) {
			p.Source, p.SourceRef, p.ActionHash = nextup.ProposalFromSheet, "row:42", ""
			p.Fields = nextup.ProposalFields{Name: "Zoë \"Z\" Ünal", Phone: "+447700900123"}
			p.Confidence, p.Problems = nil, nil
			p.Excerpt = "Zoë;+44 7700 900123;?\nsecond line"
		}),
	}
	b.read(func(tx nextup.Tx) error {
		for _, w := range want {
			got, err := tx.ProposalGet(b.ctx, w.ID)
			if w.Confidence == nil {
				w.Confidence, w.Problems = map[string]float64{}, []string{}
			}
			if wantOK(t, err, "ProposalGet(%s)", w.ID) {
				checkEqual(t, "ProposalGet "+w.ID, w, got)
			}
		}
		got, err := tx.ProposalByActionHash(b.ctx, want[0].ActionHash)
		if wantOK(t, err, "ProposalByActionHash") && got.ID != want[0].ID {
			t.Errorf("ProposalByActionHash = %s, want %s", got.ID, want[0].ID)
		}
		_, err = tx.ProposalByActionHash(b.ctx, "")
		wantErr(t, err, nextup.ErrNotFound, "ProposalByActionHash(empty) must not match a proposal without a link")
		_, err = tx.ProposalGet(b.ctx, "prp_missing")
		wantErr(t, err, nextup.ErrNotFound, "ProposalGet(missing)")
		return nil
	})
}

// The same request proposes one row; a missing business is not found.
func testProposalOnePerRequest(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	p := b.proposal(biz.ID)
	b.tx(func(tx nextup.Tx) error {
		dup := p
		dup.ID, dup.ActionHash = "prp_dup", nextup.HashToken("other")
		wantErr(t, tx.ProposalCreate(b.ctx, dup), nextup.ErrConflict, "ProposalCreate of the same request")
		orphan := p
		orphan.ID, orphan.BusinessID, orphan.SourceRef, orphan.ActionHash = "prp_orphan", "biz_missing", "x", ""
		wantErr(t, tx.ProposalCreate(b.ctx, orphan), nextup.ErrNotFound, "ProposalCreate for a missing business")
		// The transaction is still usable after the refused writes.
		return nil
	})
	// Another business, or a request without a reference, may repeat it.
	b.proposal(other.ID, func(q *nextup.Proposal) { q.SourceRef = p.SourceRef })
	b.proposal(biz.ID, func(q *nextup.Proposal) { q.SourceRef = "" })
	b.proposal(biz.ID, func(q *nextup.Proposal) { q.SourceRef = "" })
}

// A proposal is decided once, while open.
func testProposalDecide(t *testing.T, b *bundle) {
	biz := b.business()
	p, q := b.proposal(biz.ID), b.proposal(biz.ID)
	e := b.entry(biz.ID)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.ProposalDecide(b.ctx, p.ID, nextup.ProposalDecision{To: nextup.ProposalApproved, EntryID: e.ID, At: b.now, By: "stf_1"})
		if wantOK(t, err, "approve") && (got.State != nextup.ProposalApproved || got.EntryID != e.ID ||
			got.DecidedAt == nil || !got.DecidedAt.Equal(b.now) || got.DecidedBy != "stf_1") {
			t.Errorf("approved proposal %+v", got)
		}
		_, err = tx.ProposalDecide(b.ctx, p.ID, nextup.ProposalDecision{To: nextup.ProposalRejected, At: b.now})
		wantErr(t, err, nextup.ErrConflict, "deciding an approved proposal again")
		_, err = tx.ProposalDecide(b.ctx, "prp_missing", nextup.ProposalDecision{To: nextup.ProposalRejected, At: b.now})
		wantErr(t, err, nextup.ErrNotFound, "deciding a missing proposal")
		_, err = tx.ProposalDecide(b.ctx, q.ID, nextup.ProposalDecision{To: nextup.ProposalOpen, At: b.now})
		wantErr(t, err, nextup.ErrInvalid, "deciding to open")
		_, err = tx.ProposalDecide(b.ctx, q.ID, nextup.ProposalDecision{To: nextup.ProposalRejected, At: b.at(time.Minute), By: "owner-link"})
		wantOK(t, err, "reject")
		return nil
	})
	if got := b.getProposal(q.ID); got.State != nextup.ProposalRejected || got.EntryID != "" || got.DecidedBy != "owner-link" {
		t.Errorf("rejected proposal %+v", got)
	}
}

// A business's proposals, newest received first, by state.
func testProposalList(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	old := b.proposal(biz.ID, func(p *nextup.Proposal) { p.ReceivedAt = b.at(-3 * time.Hour) })
	mid := b.proposal(biz.ID, func(p *nextup.Proposal) { p.ReceivedAt = b.at(-2 * time.Hour) })
	recent := b.proposal(biz.ID, func(p *nextup.Proposal) { p.ReceivedAt = b.at(-time.Hour) })
	b.proposal(other.ID)
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.ProposalDecide(b.ctx, mid.ID, nextup.ProposalDecision{To: nextup.ProposalRejected, At: b.now})
		return err
	})
	b.read(func(tx nextup.Tx) error {
		for state, want := range map[nextup.ProposalState][]string{
			"": {recent.ID, mid.ID, old.ID}, nextup.ProposalOpen: {recent.ID, old.ID},
			nextup.ProposalRejected: {mid.ID}, nextup.ProposalApproved: nil,
		} {
			got, err := tx.ProposalList(b.ctx, biz.ID, state)
			if wantOK(t, err, "ProposalList(%q)", state) {
				checkEqual(t, "ProposalList("+string(state)+")", want, ids(got, func(p nextup.Proposal) string { return p.ID }))
			}
		}
		return nil
	})
}

func (b *bundle) getProposal(id string) nextup.Proposal {
	b.t.Helper()
	var p nextup.Proposal
	b.read(func(tx nextup.Tx) error {
		var err error
		p, err = tx.ProposalGet(b.ctx, id)
		return err
	})
	return p
}

// A business's sheet versions, newest first, limited; another business's
// are not listed; a missing business is not found.
func testSheetVersions(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	var want []nextup.SheetVersion
	for i := range 3 {
		v := nextup.SheetVersion{ID: b.id("shv"), BusinessID: biz.ID, Source: "1AbC!A1:H", FetchedAt: b.at(time.Duration(i) * time.Hour),
			Hash: fmt.Sprintf("%064x", i+1), Rows: 10 + i, Imported: i, Updated: 1, Unchanged: 9, Rejected: i % 2}
		b.tx(func(tx nextup.Tx) error { return tx.SheetVersionAdd(b.ctx, v) })
		want = append([]nextup.SheetVersion{v}, want...)
	}
	b.tx(func(tx nextup.Tx) error {
		return tx.SheetVersionAdd(b.ctx, nextup.SheetVersion{ID: b.id("shv"), BusinessID: other.ID, Source: "x", FetchedAt: b.now, Hash: "h"})
	})
	b.tx(func(tx nextup.Tx) error {
		err := tx.SheetVersionAdd(b.ctx, nextup.SheetVersion{ID: "shv_orphan", BusinessID: "biz_missing", Source: "x", FetchedAt: b.now, Hash: "h"})
		wantErr(t, err, nextup.ErrNotFound, "SheetVersionAdd for a missing business")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.SheetVersionList(b.ctx, biz.ID, 0)
		if wantOK(t, err, "SheetVersionList") {
			checkEqual(t, "SheetVersionList", want, got)
		}
		got, err = tx.SheetVersionList(b.ctx, biz.ID, 1)
		if wantOK(t, err, "SheetVersionList(limit 1)") && (len(got) != 1 || got[0].ID != want[0].ID) {
			t.Errorf("the latest version: %+v", got)
		}
		return nil
	})
}
