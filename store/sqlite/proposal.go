package sqlite

import (
	"context"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// ProposalCreate stores a proposal; the same request proposed again (its
// business, source and source ref) is ErrConflict, a missing business
// ErrNotFound.
func (t *tx) ProposalCreate(ctx context.Context, p nextup.Proposal) error {
	args, err := sqlstore.ProposalInsertArgs(p)
	if err != nil {
		return fmt.Errorf("create proposal %s: %w", p.ID, err)
	}
	_, err = t.tx.ExecContext(ctx, sqlstore.ProposalInsert, args...)
	return dbErr("create proposal "+p.ID, err)
}

func (t *tx) ProposalGet(ctx context.Context, id string) (nextup.Proposal, error) {
	p, err := sqlstore.ScanProposal(t.tx.QueryRowContext(ctx, sqlstore.ProposalGet, id))
	return p, dbErr("get proposal "+id, err)
}

func (t *tx) ProposalByActionHash(ctx context.Context, hash string) (nextup.Proposal, error) {
	p, err := sqlstore.ScanProposal(t.tx.QueryRowContext(ctx, sqlstore.ProposalByActionHash, hash))
	return p, dbErr("proposal by link", err)
}

func (t *tx) ProposalList(ctx context.Context, businessID string, state nextup.ProposalState) ([]nextup.Proposal, error) {
	out, err := scanAll(sqlstore.ScanProposal)(t.tx.QueryContext(ctx, sqlstore.ProposalList, businessID, state, state))
	return out, dbErr("list proposals of business "+businessID, err)
}

// ProposalDecide approves or rejects an open proposal; one that is not
// open is ErrConflict, a missing one ErrNotFound.
func (t *tx) ProposalDecide(ctx context.Context, id string, d nextup.ProposalDecision) (nextup.Proposal, error) {
	op := "decide proposal " + id
	if d.To != nextup.ProposalApproved && d.To != nextup.ProposalRejected {
		return nextup.Proposal{}, fmt.Errorf("%s: to %q: %w", op, d.To, nextup.ErrInvalid)
	}
	p, err := sqlstore.ScanProposal(t.tx.QueryRowContext(ctx, sqlstore.ProposalDecide, d.To, d.EntryID,
		sqlstore.TS(d.At), d.By, id))
	if err == nil {
		return p, nil
	}
	if isNoRows(err) {
		return nextup.Proposal{}, t.missOrConflict(ctx, op, "proposals", id)
	}
	return nextup.Proposal{}, dbErr(op, err)
}

func (t *tx) SheetVersionAdd(ctx context.Context, v nextup.SheetVersion) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.SheetVersionInsert, sqlstore.SheetVersionInsertArgs(v)...)
	return dbErr("add sheet version "+v.ID, err)
}

func (t *tx) SheetVersionList(ctx context.Context, businessID string, limit int) ([]nextup.SheetVersion, error) {
	out, err := scanAll(sqlstore.ScanSheetVersion)(t.tx.QueryContext(ctx, sqlstore.SheetVersionList, businessID, limitArg(limit)))
	return out, dbErr("list sheet versions of business "+businessID, err)
}
