package storetest

import (
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// summary returns a summary of a business's month, not yet stored.
func (b *bundle) summary(businessID, month string) nextup.Summary {
	return nextup.Summary{BusinessID: businessID, Month: month,
		Figures:   []byte(`{"month":"` + month + `","freed":12, "filled":9,"note":"café — 9 of 12"}`),
		Narrative: "You freed 12 slots in " + month + " and the waitlist filled 9.", NarrativeBy: "template",
		CreatedAt: b.now}
}

// A summary reads back as stored, its figures byte for byte, whether it
// was sent or not; a month summed up already is a conflict and keeps the
// first; a missing business and a missing month are not found.
func testSummaryRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	unsent := b.summary(biz.ID, "2026-10")
	sent := b.summary(biz.ID, "2026-11")
	sent.NarrativeBy, sent.SentAt, sent.MessageID = "model", ptr(b.at(time.Minute)), b.id("msg")
	bare := b.summary(biz.ID, "2026-12")
	bare.Figures = nil
	b.tx(func(tx nextup.Tx) error {
		for _, s := range []nextup.Summary{unsent, sent, bare} {
			if err := tx.SummaryCreate(b.ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		for _, want := range []nextup.Summary{unsent, sent, bare} {
			got, err := tx.SummaryGet(b.ctx, biz.ID, want.Month)
			if wantOK(t, err, "SummaryGet %s", want.Month) {
				checkEqual(t, "SummaryGet "+want.Month, want, got)
			}
		}
		_, err := tx.SummaryGet(b.ctx, biz.ID, "2026-09")
		wantErr(t, err, nextup.ErrNotFound, "SummaryGet of a month not summed up")
		_, err = tx.SummaryGet(b.ctx, "biz_missing", "2026-11")
		wantErr(t, err, nextup.ErrNotFound, "SummaryGet of a missing business")
		return nil
	})
	again := sent
	again.Narrative, again.SentAt, again.MessageID = "A second narrative.", nil, ""
	b.tx(func(tx nextup.Tx) error {
		wantErr(t, tx.SummaryCreate(b.ctx, again), nextup.ErrConflict, "SummaryCreate of a month summed up already")
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		err := tx.SummaryCreate(b.ctx, b.summary("biz_missing", "2026-11"))
		wantErr(t, err, nextup.ErrNotFound, "SummaryCreate for a missing business")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.SummaryGet(b.ctx, biz.ID, sent.Month)
		if wantOK(t, err, "SummaryGet after the conflict") {
			checkEqual(t, "the first summary, after the conflict", sent, got)
		}
		return nil
	})
}

// A business's summaries are listed newest month first, whatever order
// they were made in, limited, without another business's.
func testSummaryList(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	made := map[string]nextup.Summary{}
	for i, month := range []string{"2026-09", "2026-11", "2026-10"} {
		s := b.summary(biz.ID, month)
		s.CreatedAt = b.at(time.Duration(i) * time.Hour)
		b.tx(func(tx nextup.Tx) error { return tx.SummaryCreate(b.ctx, s) })
		made[month] = s
	}
	b.tx(func(tx nextup.Tx) error { return tx.SummaryCreate(b.ctx, b.summary(other.ID, "2026-12")) })
	want := []nextup.Summary{made["2026-11"], made["2026-10"], made["2026-09"]}
	b.read(func(tx nextup.Tx) error {
		got, err := tx.SummaryList(b.ctx, biz.ID, 0)
		if wantOK(t, err, "SummaryList") {
			checkEqual(t, "SummaryList", want, got)
		}
		got, err = tx.SummaryList(b.ctx, biz.ID, 2)
		if wantOK(t, err, "SummaryList(limit 2)") {
			checkEqual(t, "SummaryList(limit 2)", want[:2], got)
		}
		got, err = tx.SummaryList(b.ctx, "biz_missing", 0)
		if wantOK(t, err, "SummaryList of a missing business") && len(got) != 0 {
			t.Errorf("SummaryList of a missing business: %+v, want none", got)
		}
		return nil
	})
}
