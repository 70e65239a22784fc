package dynamo

import (
	"context"

	"github.com/nextup-dev/nextup"
)

// A monthly summary is the item sum#BID#MONTH (SummaryGet: one GetItem; the
// key keeps one summary per business and month, so SummaryCreate needs no
// marker), in g2 (sumbiz#BID, sorted by MONTH, which sorts as months do:
// SummaryList reads the business's summaries, newest month first, up to its
// limit).

func sumPK(businessID, month string) string { return "sum#" + businessID + "#" + month }

// sumItem is the item of a summary. Figures of no bytes are kept as none,
// so that they read back as nil, as the SQL stores give them.
func sumItem(s nextup.Summary) (item, error) {
	if len(s.Figures) == 0 {
		s.Figures = nil
	}
	return newItem(s, "gsi2pk", "sumbiz#"+s.BusinessID, "gsi2sk", s.Month)
}

// SummaryCreate stores a business's summary of a month; a month summed up
// already is ErrConflict, a missing business ErrNotFound.
func (t *Tx) SummaryCreate(ctx context.Context, s nextup.Summary) error {
	what := "create summary " + s.Month + " of business " + s.BusinessID
	if ok, err := t.exists(ctx, bizPK(s.BusinessID)); err != nil || !ok {
		return cmpErr(err, notFound(what+": no such business"))
	}
	pk := sumPK(s.BusinessID, s.Month)
	if ok, err := t.exists(ctx, pk); err != nil || ok {
		return cmpErr(err, conflict(what))
	}
	it, err := sumItem(s)
	if err != nil {
		return err
	}
	return t.put(pk, it)
}

// SummaryGet reads a business's summary of a month.
func (t *Tx) SummaryGet(ctx context.Context, businessID, month string) (nextup.Summary, error) {
	return load[nextup.Summary](ctx, t, sumPK(businessID, month), "get summary "+month+" of business "+businessID)
}

// SummaryList lists a business's summaries, newest month first, at most
// limit (<= 0: all).
func (t *Tx) SummaryList(ctx context.Context, businessID string, limit int) ([]nextup.Summary, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "sumbiz#" + businessID, desc: true, limit: max(limit, 0)})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Summary](its)
}
