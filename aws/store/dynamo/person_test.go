package dynamo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestEraseSplitsToFitTransactions: a person with more rows than one
// TransactWriteItems takes (100 actions) — a hundred and ten entries —
// is erased in parts, each within the store's limits, and two entries
// still waiting are withdrawn first, each in a transaction of its own.
// Nothing of theirs is left; erasing again rewrites nothing.
func TestEraseSplitsToFitTransactions(t *testing.T) {
	t.Parallel()
	h := newSalon(t)
	ctx, st, svc, biz := h.ctx, h.st, h.svc, h.biz
	const entries = 110
	var ids []string
	for i := range entries {
		res, err := svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: "Ann Example", Email: "ann@example.com",
			Phone: "+447700900123", Service: fmt.Sprintf("service %02d", i)})
		if err != nil {
			t.Fatalf("join %d: %v", i, err)
		}
		ids = append(ids, res.Entry.ID)
		if i < entries-2 {
			if _, _, err := svc.Leave(ctx, biz.ID, res.Entry.ID, nextup.ActorCustomer); err != nil {
				t.Fatalf("leave %d: %v", i, err)
			}
		}
	}
	bob, err := svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: "Bob", Email: "bob@example.com", Service: "service 00"})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := svc.Export(ctx, biz.ID, "+447700900123")
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Entries) != entries {
		t.Fatalf("export: %d entries, %d messages", len(doc.Entries), len(doc.Messages))
	}

	out, err := svc.Erase(ctx, biz.ID, "ann@example.com")
	if err != nil {
		t.Fatalf("erase: %v", err)
	}
	if out.Withdrawn != 2 || out.Erased.Entries != entries || out.Erased.Total() <= MaxTxActions {
		t.Fatalf("erased %+v, withdrawn %d: want all %d entries, in more rows than one transaction takes", out.Erased, out.Withdrawn, entries)
	}
	if err := st.Read(ctx, func(tx nextup.Tx) error {
		for _, id := range ids {
			e, err := tx.EntryGet(ctx, id)
			if err != nil {
				return err
			}
			if e.Email != "" || e.Phone != "" || e.Name != out.Pseudonym || e.Active() {
				t.Errorf("entry %s after the erasure: %+v", id, e)
			}
		}
		ms, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: biz.ID})
		for _, m := range ms {
			if strings.Contains(m.To+m.Body+m.Subject, "ann@") || strings.Contains(m.Body, "Ann Example") {
				t.Errorf("message %s still names her: %s %q", m.ID, m.To, m.Body)
			}
		}
		b, err2 := tx.EntryGet(ctx, bob.Entry.ID)
		if err2 == nil && b.Email != "bob@example.com" {
			t.Errorf("Bob after Ann's erasure: %+v", b)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	again, err := svc.Erase(ctx, biz.ID, "+447700900123")
	if err != nil || again.Erased.Total() != 0 || again.Withdrawn != 0 {
		t.Errorf("erasing again: %+v, %v; want nothing", again, err)
	}
}
