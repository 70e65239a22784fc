package sqlstore

import (
	"context"

	"github.com/nextup-dev/nextup"
)

// SummaryCols are the columns ScanSummary reads, in its order.
const SummaryCols = `business_id, month, figures, narrative, narrative_by, created_at, sent_at, message_id`

// ScanSummary reads a row of SummaryCols. Figures are kept as text, byte
// for byte as they were written; figures of no bytes read back as nil.
func ScanSummary(r Scanner) (nextup.Summary, error) {
	var (
		s       nextup.Summary
		figures string
		created int64
		sent    *int64
	)
	err := r.Scan(&s.BusinessID, &s.Month, &figures, &s.Narrative, &s.NarrativeBy, &created, &sent, &s.MessageID)
	if figures != "" {
		s.Figures = []byte(figures)
	}
	s.CreatedAt, s.SentAt = FromTS(created), FromNullTS(sent)
	return s, err
}

// Queries of the summaries. A business's months sort as their names do
// ("2026-11"), so the primary key lists them newest first.
const (
	SummaryInsert = `INSERT INTO summaries (` + SummaryCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	SummaryGet    = `SELECT ` + SummaryCols + ` FROM summaries WHERE business_id = ? AND month = ?`
	SummaryList   = `SELECT ` + SummaryCols + ` FROM summaries WHERE business_id = ?
		ORDER BY month DESC LIMIT ?`
)

// SummaryInsertArgs returns the arguments of SummaryInsert.
func SummaryInsertArgs(s nextup.Summary) []any {
	return []any{s.BusinessID, s.Month, string(s.Figures), s.Narrative, s.NarrativeBy, TS(s.CreatedAt), TSPtr(s.SentAt),
		s.MessageID}
}

// SummaryCreate stores a business's summary of a month; a month summed up
// already is ErrConflict (the primary key), a missing business
// ErrNotFound (the foreign key).
func (t *Tx) SummaryCreate(ctx context.Context, s nextup.Summary) error {
	_, err := t.r.Exec(ctx, SummaryInsert, SummaryInsertArgs(s)...)
	return t.err("create summary "+s.Month+" of business "+s.BusinessID, err)
}

// SummaryGet reads a business's summary of a month.
func (t *Tx) SummaryGet(ctx context.Context, businessID, month string) (nextup.Summary, error) {
	s, err := ScanSummary(t.r.QueryRow(ctx, SummaryGet, businessID, month))
	return s, t.err("get summary "+month+" of business "+businessID, err)
}

// SummaryList lists a business's summaries, newest month first.
func (t *Tx) SummaryList(ctx context.Context, businessID string, limit int) ([]nextup.Summary, error) {
	out, err := all(ctx, t, ScanSummary, SummaryList, businessID, t.limit(limit))
	return out, t.err("list summaries of business "+businessID, err)
}
