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

// A version keeps its missing rows and its content: the list gives the
// missing rows without the content, Get both; a version kept without
// content reads back without; an unknown id is not found. A sheet whose
// JSON is far over DynamoDB's item limit but compresses well comes back
// whole from every store; one that does not compress comes back whole, or
// (a store with an item limit) as its first rows with the rest counted
// in Cut, never anything else.
func testSheetVersionContent(t *testing.T, b *bundle) {
	biz := b.business()
	content := &nextup.SheetContent{
		Rows:      [][]string{{"Waitlist, December"}, {"Name", "Email", "Service", "Status"}, {"Ann", "ann@example.com", "haircut", ""}, {"Bo", "", "", "Booked Tue 1 Dec at 2:00 pm"}},
		HeaderRow: 2,
		Keys:      []string{"", "", "email:ann@example.com|haircut", ""},
	}
	v := nextup.SheetVersion{ID: b.id("shv"), BusinessID: biz.ID, Source: "1AbC", FetchedAt: b.now, Hash: "h1", Rows: 2, Imported: 1, Rejected: 1,
		Missing: []nextup.SheetMissing{{EntryID: "ent_1", Name: "Cy", State: nextup.SheetMissingPending}, {EntryID: "ent_2", Name: "Dee", State: nextup.SheetMissingHeld}},
		Content: content}
	bare := nextup.SheetVersion{ID: b.id("shv"), BusinessID: biz.ID, Source: "1AbC", FetchedAt: b.at(time.Minute), Hash: "h0"}
	b.tx(func(tx nextup.Tx) error {
		if err := tx.SheetVersionAdd(b.ctx, v); err != nil {
			return err
		}
		return tx.SheetVersionAdd(b.ctx, bare)
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.SheetVersionGet(b.ctx, v.ID)
		if wantOK(t, err, "SheetVersionGet") {
			checkEqual(t, "SheetVersionGet", v, got)
		}
		got, err = tx.SheetVersionGet(b.ctx, bare.ID)
		if wantOK(t, err, "SheetVersionGet (no content)") {
			checkEqual(t, "SheetVersionGet (no content)", bare, got)
		}
		list, err := tx.SheetVersionList(b.ctx, biz.ID, 0)
		head := v
		head.Content = nil
		if wantOK(t, err, "SheetVersionList") {
			checkEqual(t, "SheetVersionList", []nextup.SheetVersion{bare, head}, list)
		}
		_, err = tx.SheetVersionGet(b.ctx, "shv_missing")
		wantErr(t, err, nextup.ErrNotFound, "SheetVersionGet of an unknown id")
		return nil
	})

	r := newRand(t)
	big := func(rows int, cell func(i, j int) string) *nextup.SheetContent {
		c := &nextup.SheetContent{Rows: [][]string{{"Name", "Email", "Service", "Notes", "Ref"}}, HeaderRow: 1, Keys: []string{""}}
		for i := range rows {
			row := make([]string, 5)
			for j := range row {
				row[j] = cell(i, j)
			}
			c.Rows = append(c.Rows, row)
			c.Keys = append(c.Keys, "email:"+row[1]+"|"+row[2])
		}
		return c
	}
	// About 1 MB of JSON a usual sheet's way: names, addresses and notes
	// that repeat.
	usual := big(9000, func(i, j int) string {
		return [...]string{fmt.Sprintf("Person %d", i), fmt.Sprintf("person%d@example.com", i), "haircut", "prefers mornings, any stylist", fmt.Sprintf("R-%05d", i)}[j]
	})
	// About 1.4 MB of random hex: no compression brings it under 400 KB.
	noise := big(9000, func(i, j int) string { return fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64()) })
	for _, c := range []struct {
		name    string
		content *nextup.SheetContent
		whole   bool
	}{{"a large sheet", usual, true}, {"a sheet that does not compress", noise, false}} {
		v := nextup.SheetVersion{ID: b.id("shv"), BusinessID: biz.ID, Source: "1AbC", FetchedAt: b.at(time.Hour), Hash: "h", Rows: 9000, Content: c.content}
		b.tx(func(tx nextup.Tx) error { return tx.SheetVersionAdd(b.ctx, v) })
		b.read(func(tx nextup.Tx) error {
			got, err := tx.SheetVersionGet(b.ctx, v.ID)
			if !wantOK(t, err, "SheetVersionGet (%s)", c.name) || got.Content == nil {
				t.Errorf("%s: no content: %+v", c.name, got)
				return nil
			}
			g := got.Content
			n := len(g.Rows)
			switch {
			case c.whole && g.Cut != 0:
				t.Errorf("%s: %d rows cut", c.name, g.Cut)
			case n+g.Cut != len(c.content.Rows) || len(g.Keys) != n || g.HeaderRow != 1 || n == 0:
				t.Errorf("%s: %d rows and %d keys kept, %d cut, of %d", c.name, n, len(g.Keys), g.Cut, len(c.content.Rows))
			default:
				checkEqual(t, c.name+": the rows kept", c.content.Rows[:n], g.Rows)
				checkEqual(t, c.name+": the keys kept", c.content.Keys[:n], g.Keys)
			}
			return nil
		})
	}
}

// Trimming a business's versions drops the rows of all but its newest
// keep, which keep theirs, and nothing else: each trimmed version keeps
// its hash, counts and missing rows (when they were first missed too),
// another business's versions are untouched, and a second trim finds
// nothing to do. A trim in the transaction that adds a version counts
// that version among the newest.
func testSheetVersionTrim(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	content := func(i int) *nextup.SheetContent {
		return &nextup.SheetContent{Rows: [][]string{{"Name", "Email"}, {fmt.Sprintf("P%d", i), fmt.Sprintf("p%d@example.com", i)}}, HeaderRow: 1,
			Keys: []string{"", fmt.Sprintf("email:p%d@example.com|", i)}}
	}
	version := func(bz nextup.Business, i int) nextup.SheetVersion {
		return nextup.SheetVersion{ID: b.id("shv"), BusinessID: bz.ID, Source: "1AbC", FetchedAt: b.at(time.Duration(i) * time.Hour),
			Hash: fmt.Sprintf("%064x", i+1), Rows: 1, Imported: i,
			Missing: []nextup.SheetMissing{{EntryID: "ent_1", Name: "Cy", State: nextup.SheetMissingPending, Since: b.at(time.Duration(i) * time.Hour)}},
			Content: content(i)}
	}
	var vs, others []nextup.SheetVersion
	for i := range 5 {
		vs = append(vs, version(biz, i))
		b.tx(func(tx nextup.Tx) error { return tx.SheetVersionAdd(b.ctx, vs[i]) })
	}
	for i := range 2 {
		others = append(others, version(other, i))
		b.tx(func(tx nextup.Tx) error { return tx.SheetVersionAdd(b.ctx, others[i]) })
	}
	trim := func(bid string, keep, want int) {
		t.Helper()
		b.tx(func(tx nextup.Tx) error {
			n, err := tx.SheetVersionTrim(b.ctx, bid, keep)
			if wantOK(t, err, "SheetVersionTrim(%d)", keep) && n != want {
				t.Errorf("SheetVersionTrim(%d) trimmed %d, want %d", keep, n, want)
			}
			return nil
		})
	}
	// check reads vs back: the newest keep whole, the others without rows.
	check := func(what string, vs []nextup.SheetVersion, keep int) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			for i, v := range vs {
				got, err := tx.SheetVersionGet(b.ctx, v.ID)
				if !wantOK(t, err, "SheetVersionGet") {
					continue
				}
				if i < len(vs)-keep {
					v.Content = nil
				}
				checkEqual(t, fmt.Sprintf("%s: version %d", what, i), v, got)
			}
			return nil
		})
	}
	trim(biz.ID, 2, 3)
	check("kept 2", vs, 2)
	check("the other business", others, 2)
	trim(biz.ID, 2, 0)
	trim("biz_missing", 2, 0)
	trim(other.ID, 5, 0)
	vs = append(vs, version(biz, 5))
	b.tx(func(tx nextup.Tx) error {
		if err := tx.SheetVersionAdd(b.ctx, vs[5]); err != nil {
			return err
		}
		n, err := tx.SheetVersionTrim(b.ctx, biz.ID, 2)
		if wantOK(t, err, "SheetVersionTrim in the transaction of an add") && n != 1 {
			t.Errorf("SheetVersionTrim in the transaction of an add trimmed %d, want 1", n)
		}
		return nil
	})
	check("a version added", vs, 2)
	b.read(func(tx nextup.Tx) error {
		list, err := tx.SheetVersionList(b.ctx, biz.ID, 0)
		if wantOK(t, err, "SheetVersionList") && len(list) != 6 {
			t.Errorf("%d versions listed after trimming, want 6", len(list))
		}
		return nil
	})
	trim(biz.ID, 0, 2)
	check("kept none", vs, 0)
}
