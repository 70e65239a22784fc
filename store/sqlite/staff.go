package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// StaffCreate stores the email lower-cased; the UNIQUE constraint on it
// then refuses an email another account has in any case (ErrConflict),
// and the foreign key a missing business (ErrNotFound).
func (t *tx) StaffCreate(ctx context.Context, s nextup.Staff) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.StaffInsert, sqlstore.StaffInsertArgs(s)...)
	return dbErr("create staff "+s.ID, err)
}

func (t *tx) StaffGet(ctx context.Context, id string) (nextup.Staff, error) {
	s, err := sqlstore.ScanStaff(t.tx.QueryRowContext(ctx, sqlstore.StaffGet, id))
	return s, dbErr("get staff "+id, err)
}

func (t *tx) StaffByEmail(ctx context.Context, email string) (nextup.Staff, error) {
	s, err := sqlstore.ScanStaff(t.tx.QueryRowContext(ctx, sqlstore.StaffByEmail, sqlstore.Email(email)))
	return s, dbErr("staff by email", err)
}

func (t *tx) StaffList(ctx context.Context, businessID string) ([]nextup.Staff, error) {
	out, err := scanAll(sqlstore.ScanStaff)(t.tx.QueryContext(ctx, sqlstore.StaffList, businessID))
	return out, dbErr("list staff of business "+businessID, err)
}

func (t *tx) StaffSignIn(ctx context.Context, id string, r nextup.SignInResult) error {
	res, err := t.tx.ExecContext(ctx, sqlstore.StaffSignIn, r.FailedSignIns, sqlstore.TSPtr(r.LockedUntil), id)
	return t.touched(ctx, "record sign-in of staff "+id, res, err)
}

func (t *tx) StaffSetPassword(ctx context.Context, id, passwordHash string) error {
	res, err := t.tx.ExecContext(ctx, sqlstore.StaffSetPassword, passwordHash, id)
	return t.touched(ctx, "set password of staff "+id, res, err)
}

// SessionCreate stores a session; a missing staff member is ErrNotFound
// (the foreign key).
func (t *tx) SessionCreate(ctx context.Context, s nextup.Session) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.SessionInsert, sqlstore.SessionInsertArgs(s)...)
	return dbErr("create session of staff "+s.StaffID, err)
}

func (t *tx) SessionGet(ctx context.Context, idHash string) (nextup.Session, error) {
	s, err := sqlstore.ScanSession(t.tx.QueryRowContext(ctx, sqlstore.SessionGet, idHash))
	return s, dbErr("get session", err)
}

func (t *tx) SessionDelete(ctx context.Context, idHash string) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.SessionDelete, idHash)
	return dbErr("delete session", err)
}

func (t *tx) SessionDeleteByStaff(ctx context.Context, staffID string) (int, error) {
	op := "delete sessions of staff " + staffID
	res, err := t.tx.ExecContext(ctx, sqlstore.SessionDeleteByStaff, staffID)
	if err != nil {
		return 0, dbErr(op, err)
	}
	n, err := res.RowsAffected()
	return int(n), dbErr(op, err)
}

func (t *tx) SessionPurge(ctx context.Context, before time.Time) (int, error) {
	res, err := t.tx.ExecContext(ctx, sqlstore.SessionPurge, sqlstore.TS(before))
	if err != nil {
		return 0, dbErr("purge sessions", err)
	}
	n, err := res.RowsAffected()
	return int(n), dbErr("purge sessions", err)
}

// PasswordResetCreate stores a reset; a missing staff member is
// ErrNotFound (the foreign key).
func (t *tx) PasswordResetCreate(ctx context.Context, r nextup.PasswordReset) error {
	_, err := t.tx.ExecContext(ctx, sqlstore.PasswordResetInsert, sqlstore.PasswordResetInsertArgs(r)...)
	return dbErr("create password reset of staff "+r.StaffID, err)
}

// PasswordResetUse deletes the reset in one statement and only then looks
// at its deadline, so an expired reset is gone too (ErrConflict) and a
// token works at most once.
func (t *tx) PasswordResetUse(ctx context.Context, tokenHash string, now time.Time) (nextup.PasswordReset, error) {
	const op = "use password reset"
	r, err := sqlstore.ScanPasswordReset(t.tx.QueryRowContext(ctx, sqlstore.PasswordResetUse, tokenHash))
	if err != nil {
		return nextup.PasswordReset{}, dbErr(op, err)
	}
	if sqlstore.PasswordResetExpired(r, now) {
		return nextup.PasswordReset{}, fmt.Errorf("%s: expired at %s: %w", op, r.ExpiresAt.Format(time.RFC3339), nextup.ErrConflict)
	}
	return r, nil
}
