package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// ProposalCols are the columns ScanProposal reads, in its order.
const ProposalCols = `id, business_id, source, source_ref, received_at, excerpt, fields, confidence, problems, state,
	action_hash, action_expires_at, entry_id, decided_at, decided_by, created_at`

// ScanProposal reads a row of ProposalCols.
func ScanProposal(r Scanner) (nextup.Proposal, error) {
	var (
		p                            nextup.Proposal
		received, expires, created   int64
		decided                      *int64
		fields, confidence, problems string
	)
	if err := r.Scan(&p.ID, &p.BusinessID, &p.Source, &p.SourceRef, &received, &p.Excerpt, &fields, &confidence, &problems,
		&p.State, &p.ActionHash, &expires, &p.EntryID, &decided, &p.DecidedBy, &created); err != nil {
		return p, err
	}
	p.ReceivedAt, p.ActionExpiresAt, p.CreatedAt, p.DecidedAt = FromTS(received), FromTS(expires), FromTS(created), FromNullTS(decided)
	for _, c := range []struct {
		name, raw string
		into      any
	}{{"fields", fields, &p.Fields}, {"confidence", confidence, &p.Confidence}, {"problems", problems, &p.Problems}} {
		if err := json.Unmarshal([]byte(c.raw), c.into); err != nil {
			return p, fmt.Errorf("proposal %s: %s: %w", p.ID, c.name, err)
		}
	}
	return p, nil
}

// ProposalInsert inserts a proposal; ProposalInsertArgs gives its
// arguments.
const ProposalInsert = `INSERT INTO proposals (` + ProposalCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// ProposalInsertArgs returns the arguments of ProposalInsert for p, in
// ProposalCols order.
func ProposalInsertArgs(p nextup.Proposal) ([]any, error) {
	fields, err := json.Marshal(p.Fields)
	if err != nil {
		return nil, err
	}
	confidence, err := json.Marshal(orEmpty(p.Confidence))
	if err != nil {
		return nil, err
	}
	problems, err := json.Marshal(orEmptySlice(p.Problems))
	if err != nil {
		return nil, err
	}
	return []any{p.ID, p.BusinessID, p.Source, p.SourceRef, TS(p.ReceivedAt), p.Excerpt, string(fields), string(confidence),
		string(problems), p.State, p.ActionHash, TS(p.ActionExpiresAt), p.EntryID, TSPtr(p.DecidedAt), p.DecidedBy,
		TS(p.CreatedAt)}, nil
}

func orEmpty(m map[string]float64) map[string]float64 {
	if m == nil {
		return map[string]float64{}
	}
	return m
}

func orEmptySlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Queries of the proposals.
const (
	ProposalGet          = `SELECT ` + ProposalCols + ` FROM proposals WHERE id = ?`
	ProposalByActionHash = `SELECT ` + ProposalCols + ` FROM proposals WHERE action_hash = ? AND action_hash <> ''`
	// ProposalList lists a business's proposals, newest received first;
	// its second argument is a state, or '' for all.
	ProposalList = `SELECT ` + ProposalCols + ` FROM proposals WHERE business_id = ? AND (? = '' OR state = ?)
		ORDER BY received_at DESC, id DESC`
	// ProposalDecide decides proposal ?5 while it is open.
	ProposalDecide = `UPDATE proposals SET state = ?, entry_id = ?, decided_at = ?, decided_by = ?
		WHERE id = ? AND state = 'open' RETURNING ` + ProposalCols
)

// SheetVersionCols are the columns ScanSheetVersion reads, in its order;
// SheetVersionHeadCols leaves out the content (ScanSheetVersionHead).
const (
	SheetVersionHeadCols = `id, business_id, source, fetched_at, hash, row_count, imported, updated, unchanged, rejected, missing`
	SheetVersionCols     = SheetVersionHeadCols + `, content`
)

// ScanSheetVersion reads a row of SheetVersionCols: a version with its
// content (nil when the row has none).
func ScanSheetVersion(r Scanner) (nextup.SheetVersion, error) {
	return scanSheetVersion(r, true)
}

// ScanSheetVersionHead reads a row of SheetVersionHeadCols: a version
// without its content.
func ScanSheetVersionHead(r Scanner) (nextup.SheetVersion, error) {
	return scanSheetVersion(r, false)
}

func scanSheetVersion(r Scanner, withContent bool) (nextup.SheetVersion, error) {
	var (
		v       nextup.SheetVersion
		fetched int64
		missing string
		content *string
	)
	dest := []any{&v.ID, &v.BusinessID, &v.Source, &fetched, &v.Hash, &v.Rows, &v.Imported, &v.Updated, &v.Unchanged, &v.Rejected, &missing}
	if withContent {
		dest = append(dest, &content)
	}
	if err := r.Scan(dest...); err != nil {
		return v, err
	}
	v.FetchedAt = FromTS(fetched)
	if err := json.Unmarshal([]byte(missing), &v.Missing); err != nil {
		return v, fmt.Errorf("sheet version %s: missing: %w", v.ID, err)
	}
	if len(v.Missing) == 0 {
		v.Missing = nil
	}
	if content != nil {
		v.Content = &nextup.SheetContent{}
		if err := json.Unmarshal([]byte(*content), v.Content); err != nil {
			return v, fmt.Errorf("sheet version %s: content: %w", v.ID, err)
		}
	}
	return v, nil
}

// Queries of the sheet versions.
const (
	SheetVersionInsert = `INSERT INTO sheet_versions (` + SheetVersionCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	SheetVersionList   = `SELECT ` + SheetVersionHeadCols + ` FROM sheet_versions WHERE business_id = ?
		ORDER BY fetched_at DESC, id DESC LIMIT ?`
	SheetVersionGet = `SELECT ` + SheetVersionCols + ` FROM sheet_versions WHERE id = ?`
	// SheetVersionTrim drops the content of business ?1's versions but
	// its newest ?3 (?2 is ?1 again).
	SheetVersionTrim = `UPDATE sheet_versions SET content = NULL WHERE business_id = ? AND content IS NOT NULL
		AND id NOT IN (SELECT id FROM sheet_versions WHERE business_id = ? ORDER BY fetched_at DESC, id DESC LIMIT ?)`
)

// SheetVersionInsertArgs returns the arguments of SheetVersionInsert.
func SheetVersionInsertArgs(v nextup.SheetVersion) ([]any, error) {
	missing, err := json.Marshal(v.Missing)
	if err != nil {
		return nil, err
	}
	if v.Missing == nil {
		missing = []byte("[]")
	}
	var content *string
	if v.Content != nil {
		b, err := json.Marshal(v.Content)
		if err != nil {
			return nil, err
		}
		c := string(b)
		content = &c
	}
	return []any{v.ID, v.BusinessID, v.Source, TS(v.FetchedAt), v.Hash, v.Rows, v.Imported, v.Updated, v.Unchanged, v.Rejected,
		string(missing), content}, nil
}

// ProposalCreate stores a proposal; the same request proposed again (its
// business, source and source ref) is ErrConflict, a missing business
// ErrNotFound.
func (t *Tx) ProposalCreate(ctx context.Context, p nextup.Proposal) error {
	args, err := ProposalInsertArgs(p)
	if err != nil {
		return fmt.Errorf("create proposal %s: %w", p.ID, err)
	}
	_, err = t.r.Exec(ctx, ProposalInsert, args...)
	return t.err("create proposal "+p.ID, err)
}

// ProposalGet reads a proposal.
func (t *Tx) ProposalGet(ctx context.Context, id string) (nextup.Proposal, error) {
	p, err := ScanProposal(t.r.QueryRow(ctx, ProposalGet, id))
	return p, t.err("get proposal "+id, err)
}

// ProposalByActionHash reads the proposal whose action link has this hash.
func (t *Tx) ProposalByActionHash(ctx context.Context, hash string) (nextup.Proposal, error) {
	p, err := ScanProposal(t.r.QueryRow(ctx, ProposalByActionHash, hash))
	return p, t.err("proposal by link", err)
}

// ProposalList lists a business's proposals in one state ("" for all),
// newest received first.
func (t *Tx) ProposalList(ctx context.Context, businessID string, state nextup.ProposalState) ([]nextup.Proposal, error) {
	out, err := all(ctx, t, ScanProposal, ProposalList, businessID, state, state)
	return out, t.err("list proposals of business "+businessID, err)
}

// ProposalDecide approves or rejects an open proposal; one that is not
// open is ErrConflict, a missing one ErrNotFound.
func (t *Tx) ProposalDecide(ctx context.Context, id string, d nextup.ProposalDecision) (nextup.Proposal, error) {
	op := "decide proposal " + id
	if d.To != nextup.ProposalApproved && d.To != nextup.ProposalRejected {
		return nextup.Proposal{}, fmt.Errorf("%s: to %q: %w", op, d.To, nextup.ErrInvalid)
	}
	p, err := ScanProposal(t.r.QueryRow(ctx, ProposalDecide, d.To, d.EntryID, TS(d.At), d.By, id))
	return returning(ctx, t, op, "proposals", id, p, err)
}

// SheetVersionAdd records one read of a business's sheet, with its
// missing rows and its content.
func (t *Tx) SheetVersionAdd(ctx context.Context, v nextup.SheetVersion) error {
	args, err := SheetVersionInsertArgs(v)
	if err != nil {
		return fmt.Errorf("add sheet version %s: %w", v.ID, err)
	}
	_, err = t.r.Exec(ctx, SheetVersionInsert, args...)
	return t.err("add sheet version "+v.ID, err)
}

// SheetVersionList lists a business's sheet reads, newest first, without
// their content.
func (t *Tx) SheetVersionList(ctx context.Context, businessID string, limit int) ([]nextup.SheetVersion, error) {
	out, err := all(ctx, t, ScanSheetVersionHead, SheetVersionList, businessID, t.limit(limit))
	return out, t.err("list sheet versions of business "+businessID, err)
}

// SheetVersionTrim drops the content of a business's sheet versions older
// than its newest keep, and counts them.
func (t *Tx) SheetVersionTrim(ctx context.Context, businessID string, keep int) (int, error) {
	n, err := t.r.Exec(ctx, SheetVersionTrim, businessID, businessID, max(keep, 0))
	return int(n), t.err("trim sheet versions of business "+businessID, err)
}

// SheetVersionGet reads one sheet version with its content.
func (t *Tx) SheetVersionGet(ctx context.Context, id string) (nextup.SheetVersion, error) {
	v, err := ScanSheetVersion(t.r.QueryRow(ctx, SheetVersionGet, id))
	return v, t.err("get sheet version "+id, err)
}
