package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func testAuditAppendList(t *testing.T, b *bundle) {
	a, other := b.business(), b.business()
	s1, s2 := b.slot(a.ID), b.slot(a.ID)
	so := b.slot(other.ID)
	n := 0
	row := func(biz, slot, subjectType, subjectID string, detail map[string]any) nextup.AuditEvent {
		n++
		return nextup.AuditEvent{BusinessID: biz, At: b.at(time.Duration(n) * time.Second), Actor: nextup.ActorSystem,
			SubjectType: subjectType, SubjectID: subjectID, SlotID: slot, From: "from", To: fmt.Sprintf("to%d", n),
			Reason: fmt.Sprintf("reason %d", n), RuleVersion: n, Detail: detail}
	}
	// Detail holds what JSON gives back: strings, float64, bool, nil, []any, map[string]any.
	rows := []nextup.AuditEvent{
		row(a.ID, s1.ID, nextup.SubjectOffer, "off_1", map[string]any{
			"entry_id": "ent_1", "tries": float64(2), "ok": true,
			"nested": map[string]any{"list": []any{1.5, "x", false, nil}},
		}),
		row(a.ID, s2.ID, nextup.SubjectEntry, "ent_1", map[string]any{"note": "ünïcødé \"quoted\"\n"}),
		row(a.ID, s1.ID, nextup.SubjectEntry, "ent_1", nil),
		row(a.ID, "", nextup.SubjectBusiness, a.ID, map[string]any{}),
		row(other.ID, so.ID, nextup.SubjectOffer, "off_1", nil),
		row(a.ID, s1.ID, nextup.SubjectOffer, "off_1", map[string]any{"seats": float64(1)}),
	}
	rows[1].Actor, rows[2].Actor, rows[3].Actor = nextup.ActorCustomer, nextup.ActorTimer, nextup.ActorStaff
	rows[3].At = rows[2].At // same instant: order of occurrence is still the append order
	// Some rows in one transaction, some in their own.
	b.tx(func(tx nextup.Tx) error {
		for _, r := range rows[:3] {
			if err := tx.AuditAppend(b.ctx, r); err != nil {
				return fmt.Errorf("AuditAppend: %w", err)
			}
		}
		return nil
	})
	for _, r := range rows[3:] {
		b.tx(func(tx nextup.Tx) error { return tx.AuditAppend(b.ctx, r) })
	}
	cases := []struct {
		name string
		f    nextup.AuditFilter
		want []int
	}{
		{"business", nextup.AuditFilter{BusinessID: a.ID}, []int{0, 1, 2, 3, 5}},
		{"other business", nextup.AuditFilter{BusinessID: other.ID}, []int{4}},
		{"slot 1", nextup.AuditFilter{BusinessID: a.ID, SlotID: s1.ID}, []int{0, 2, 5}},
		{"slot 2", nextup.AuditFilter{BusinessID: a.ID, SlotID: s2.ID}, []int{1}},
		{"offer off_1", nextup.AuditFilter{BusinessID: a.ID, SubjectType: nextup.SubjectOffer, SubjectID: "off_1"}, []int{0, 5}},
		{"entry ent_1", nextup.AuditFilter{BusinessID: a.ID, SubjectType: nextup.SubjectEntry, SubjectID: "ent_1"}, []int{1, 2}},
		{"business subject", nextup.AuditFilter{BusinessID: a.ID, SubjectType: nextup.SubjectBusiness, SubjectID: a.ID}, []int{3}},
		{"limit 2", nextup.AuditFilter{BusinessID: a.ID, Limit: 2}, []int{0, 1}},
		{"nothing", nextup.AuditFilter{BusinessID: a.ID, SlotID: so.ID}, nil},
		{"since, until", nextup.AuditFilter{BusinessID: a.ID, Since: b.at(3 * time.Second), Until: b.at(6 * time.Second)}, []int{2, 3}},
		{"since", nextup.AuditFilter{BusinessID: a.ID, Since: b.at(3 * time.Second)}, []int{2, 3, 5}},
		{"until, slot 1", nextup.AuditFilter{BusinessID: a.ID, SlotID: s1.ID, Until: b.at(3 * time.Second)}, []int{0}},
		{"empty range", nextup.AuditFilter{BusinessID: a.ID, Since: b.at(4 * time.Second), Until: b.at(6 * time.Second)}, nil},
	}
	seen := map[int]int64{} // row index → id assigned
	b.read(func(tx nextup.Tx) error {
		for _, c := range cases {
			got, err := tx.AuditList(b.ctx, c.f)
			if !wantOK(t, err, "AuditList(%s)", c.name) {
				continue
			}
			if len(got) != len(c.want) {
				t.Errorf("AuditList(%s): %d rows (reasons %v), want %d", c.name, len(got), reasons(got), len(c.want))
				continue
			}
			for i, g := range got {
				w := rows[c.want[i]]
				w.ID = g.ID
				checkEqual(t, fmt.Sprintf("AuditList(%s)[%d]", c.name, i), w, g)
				if i > 0 && g.ID <= got[i-1].ID {
					t.Errorf("AuditList(%s): ids %d then %d; want increasing in order of occurrence", c.name, got[i-1].ID, g.ID)
				}
				if id, ok := seen[c.want[i]]; ok && id != g.ID {
					t.Errorf("row %d has id %d in one list and %d in another", c.want[i], id, g.ID)
				}
				seen[c.want[i]] = g.ID
			}
		}
		// Paging: AfterID the second row, two at a time, gives the
		// third and fourth, then AfterID the fourth the sixth.
		for _, p := range []struct {
			after int
			want  []int
		}{{1, []int{2, 3}}, {3, []int{5}}, {5, nil}} {
			got, err := tx.AuditList(b.ctx, nextup.AuditFilter{BusinessID: a.ID, AfterID: seen[p.after], Limit: 2})
			if !wantOK(t, err, "AuditList(after row %d)", p.after) {
				continue
			}
			if len(got) != len(p.want) {
				t.Errorf("AuditList(after row %d): %d rows (reasons %v), want %d", p.after, len(got), reasons(got), len(p.want))
				continue
			}
			for i, g := range got {
				if g.ID != seen[p.want[i]] {
					t.Errorf("AuditList(after row %d)[%d]: id %d, want row %d's %d", p.after, i, g.ID, p.want[i], seen[p.want[i]])
				}
			}
		}
		return nil
	})
}

func reasons(rows []nextup.AuditEvent) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Reason
	}
	return out
}
