package waitlist_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestEraseNamesInNotesAndRequests: Ann declines a slot, which is handed
// back with a note naming her; a forwarded request of hers waits in the
// inbox lane. Erasing her, on a store whose transactions take only a few
// rows (as DynamoDB's take 100), goes in parts and still rewrites the
// note, the slot's audit row quoting it and the request; the rows all
// stay; erasing again rewrites nothing.
func TestEraseNamesInNotesAndRequests(t *testing.T) {
	t.Parallel()
	b := setup(t, func(r *nextup.Rules) { r.QuietHours = nil })
	ann := b.join(t, "Annabel", waitlist.JoinParams{Email: "annabel@example.com", Phone: "+44 7700 900123"})
	sl := b.slot(t, waitlist.SlotParams{StartsAt: b.at(1, 14, 0)})
	_, moves, err := b.svc.Release(b.ctx, b.biz.ID, sl.ID, 0, "cancellation")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.svc.Decline(b.ctx, b.token(t, onlyMove(t, moves, nextup.MoveOffer).OfferID)); err != nil {
		t.Fatal(err)
	}
	hbs, err := b.svc.ListHandBacks(b.ctx, b.biz.ID, nextup.HandBackOpen)
	if err != nil || len(hbs) != 1 || !strings.Contains(hbs[0].Note, "Annabel") {
		t.Fatalf("hand-backs %+v, %v: want one naming Annabel", hbs, err)
	}
	prop, _, err := b.svc.Propose(b.ctx, b.biz.ID, waitlist.ProposeParams{Source: nextup.ProposalFromEmail, SourceRef: "<r1@mail>",
		ReceivedAt: b.clock.Now(), Excerpt: "Hi, it's Annabel, could I get a colour?",
		Fields: nextup.ProposalFields{Name: "Annabel", Email: "Annabel@example.com", Service: "colour"}})
	if err != nil {
		t.Fatal(err)
	}
	// A sheet import once corrected her email: the edit's audit row holds
	// the old address.
	old := "annabel.old@example.com"
	if _, _, err := b.svc.UpdateEntry(b.ctx, b.biz.ID, ann.ID, waitlist.EntryPatch{Email: &old}); err != nil {
		t.Fatal(err)
	}
	fixed := "annabel@example.com"
	if _, _, err := b.svc.UpdateEntry(b.ctx, b.biz.ID, ann.ID, waitlist.EntryPatch{Email: &fixed}); err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(b.audit(t, ann.ID)); !strings.Contains(string(raw), old) {
		t.Fatalf("the edit's audit rows do not hold the old address: %s", raw)
	}
	storyBefore := b.story(t, sl.ID)

	b.svc.TxWrites = 45 // a few rows a transaction: the erasure splits
	out, err := b.svc.Erase(b.ctx, b.biz.ID, "+447700900123")
	if err != nil {
		t.Fatal(err)
	}
	if out.Erased.HandBacks != 1 || out.Erased.Proposals != 1 || out.Erased.Entries != 1 || out.Erased.AuditEvents == 0 ||
		out.Erased.Total() <= 5 {
		t.Fatalf("erased %+v: want the note, the request and more rows than one part takes", out.Erased)
	}
	hbs, err = b.svc.ListHandBacks(b.ctx, b.biz.ID, nextup.HandBackOpen)
	if err != nil || len(hbs) != 1 || strings.Contains(hbs[0].Note, "Annabel") || !strings.Contains(hbs[0].Note, out.Pseudonym+" (declined)") {
		t.Errorf("hand-back after the erasure %+v, %v", hbs, err)
	}
	if got := b.story(t, sl.ID); len(got) != len(storyBefore) {
		t.Errorf("the slot's story has %d steps after the erasure, %d before", len(got), len(storyBefore))
	}
	var evs []nextup.AuditEvent
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		evs, err = tx.AuditList(b.ctx, nextup.AuditFilter{SlotID: sl.ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		own, err := tx.AuditList(b.ctx, nextup.AuditFilter{SubjectType: nextup.SubjectEntry, SubjectID: ann.ID})
		evs = append(evs, own...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(evs)
	if strings.Contains(string(raw), "Annabel") || strings.Contains(string(raw), "annabel") {
		t.Errorf("the audit rows still name her: %s", raw)
	}
	ps, err := b.svc.ListProposals(b.ctx, b.biz.ID, "")
	if err != nil || len(ps) != 1 || ps[0].ID != prop.ID || ps[0].Fields.Email != "" || ps[0].Excerpt != "" ||
		ps[0].Fields.Name != out.Pseudonym || ps[0].Fields.Service != "colour" {
		t.Errorf("proposals after the erasure %+v, %v", ps, err)
	}
	if e := b.entryNow(t, ann.ID); e.Name != out.Pseudonym || e.Phone != "" || e.Email != "" {
		t.Errorf("entry after the erasure %+v", e)
	}

	again, err := b.svc.Erase(b.ctx, b.biz.ID, "annabel@example.com")
	if err != nil || again.Erased.Total() != 0 {
		t.Errorf("erasing again: %+v, %v; want nothing rewritten", again.Erased, err)
	}
}

func (b *bundle) entryNow(t *testing.T, id string) nextup.Entry {
	t.Helper()
	var e nextup.Entry
	if err := b.store.Read(b.ctx, func(tx nextup.Tx) error {
		var err error
		e, err = tx.EntryGet(b.ctx, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return e
}
