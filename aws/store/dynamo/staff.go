package dynamo

import (
	"context"
	"time"

	"github.com/nextup-dev/nextup"
)

var _ = time.Time{}

func (t *Tx) ProposalCreate(ctx context.Context, p nextup.Proposal) error {
	return todo("ProposalCreate")
}

func (t *Tx) ProposalGet(ctx context.Context, id string) (nextup.Proposal, error) {
	return nextup.Proposal{}, todo("ProposalGet")
}

func (t *Tx) ProposalByActionHash(ctx context.Context, hash string) (nextup.Proposal, error) {
	return nextup.Proposal{}, todo("ProposalByActionHash")
}

func (t *Tx) ProposalList(ctx context.Context, businessID string, state nextup.ProposalState) ([]nextup.Proposal, error) {
	return nil, todo("ProposalList")
}

func (t *Tx) ProposalDecide(ctx context.Context, id string, d nextup.ProposalDecision) (nextup.Proposal, error) {
	return nextup.Proposal{}, todo("ProposalDecide")
}

func (t *Tx) SheetVersionAdd(ctx context.Context, v nextup.SheetVersion) error {
	return todo("SheetVersionAdd")
}

func (t *Tx) SheetVersionList(ctx context.Context, businessID string, limit int) ([]nextup.SheetVersion, error) {
	return nil, todo("SheetVersionList")
}

func (t *Tx) StaffCreate(ctx context.Context, s nextup.Staff) error {
	return todo("StaffCreate")
}

func (t *Tx) StaffGet(ctx context.Context, id string) (nextup.Staff, error) {
	return nextup.Staff{}, todo("StaffGet")
}

func (t *Tx) StaffByEmail(ctx context.Context, email string) (nextup.Staff, error) {
	return nextup.Staff{}, todo("StaffByEmail")
}

func (t *Tx) StaffList(ctx context.Context, businessID string) ([]nextup.Staff, error) {
	return nil, todo("StaffList")
}

func (t *Tx) StaffSignIn(ctx context.Context, id string, r nextup.SignInResult) error {
	return todo("StaffSignIn")
}

func (t *Tx) StaffSetPassword(ctx context.Context, id, passwordHash string) error {
	return todo("StaffSetPassword")
}

func (t *Tx) SessionCreate(ctx context.Context, s nextup.Session) error {
	return todo("SessionCreate")
}

func (t *Tx) SessionGet(ctx context.Context, idHash string) (nextup.Session, error) {
	return nextup.Session{}, todo("SessionGet")
}

func (t *Tx) SessionDelete(ctx context.Context, idHash string) error {
	return todo("SessionDelete")
}

func (t *Tx) SessionDeleteByStaff(ctx context.Context, staffID string) (int, error) {
	return 0, todo("SessionDeleteByStaff")
}

func (t *Tx) SessionPurge(ctx context.Context, before time.Time) (int, error) {
	return 0, todo("SessionPurge")
}

func (t *Tx) PasswordResetCreate(ctx context.Context, r nextup.PasswordReset) error {
	return todo("PasswordResetCreate")
}

func (t *Tx) PasswordResetUse(ctx context.Context, tokenHash string, now time.Time) (nextup.PasswordReset, error) {
	return nextup.PasswordReset{}, todo("PasswordResetUse")
}
