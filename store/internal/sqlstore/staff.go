package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// StaffCols are the columns ScanStaff reads, in its order.
const StaffCols = `id, business_id, email, name, password_hash, failed_sign_ins, locked_until, created_at`

// ScanStaff reads a row of StaffCols.
func ScanStaff(r Scanner) (nextup.Staff, error) {
	var (
		s       nextup.Staff
		locked  *int64
		created int64
	)
	err := r.Scan(&s.ID, &s.BusinessID, &s.Email, &s.Name, &s.PasswordHash, &s.FailedSignIns, &locked, &created)
	s.LockedUntil, s.CreatedAt = FromNullTS(locked), FromTS(created)
	return s, err
}

// StaffInsert inserts a staff account; StaffInsertArgs gives its
// arguments.
const StaffInsert = `INSERT INTO staff (` + StaffCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// StaffInsertArgs returns the arguments of StaffInsert for s, in StaffCols
// order, the email lower-cased.
func StaffInsertArgs(s nextup.Staff) []any {
	return []any{s.ID, s.BusinessID, Email(s.Email), s.Name, s.PasswordHash, s.FailedSignIns, TSPtr(s.LockedUntil),
		TS(s.CreatedAt)}
}

// Email returns an email as stored and looked up: lower-cased, so that the
// unique index and equality compare emails without regard to case.
func Email(email string) string { return strings.ToLower(email) }

// SessionCols are the columns ScanSession reads, in its order.
const SessionCols = `id_hash, staff_id, business_id, created_at, expires_at`

// ScanSession reads a row of SessionCols.
func ScanSession(r Scanner) (nextup.Session, error) {
	var (
		s                nextup.Session
		created, expires int64
	)
	err := r.Scan(&s.IDHash, &s.StaffID, &s.BusinessID, &created, &expires)
	s.CreatedAt, s.ExpiresAt = FromTS(created), FromTS(expires)
	return s, err
}

// SessionInsert inserts a session; SessionInsertArgs gives its arguments.
const SessionInsert = `INSERT INTO sessions (` + SessionCols + `) VALUES (?, ?, ?, ?, ?)`

// SessionInsertArgs returns the arguments of SessionInsert for s, in
// SessionCols order.
func SessionInsertArgs(s nextup.Session) []any {
	return []any{s.IDHash, s.StaffID, s.BusinessID, TS(s.CreatedAt), TS(s.ExpiresAt)}
}

// PasswordResetCols are the columns ScanPasswordReset reads, in its order.
const PasswordResetCols = `token_hash, staff_id, created_at, expires_at`

// ScanPasswordReset reads a row of PasswordResetCols.
func ScanPasswordReset(r Scanner) (nextup.PasswordReset, error) {
	var (
		p                nextup.PasswordReset
		created, expires int64
	)
	err := r.Scan(&p.TokenHash, &p.StaffID, &created, &expires)
	p.CreatedAt, p.ExpiresAt = FromTS(created), FromTS(expires)
	return p, err
}

// PasswordResetInsert inserts a password reset; PasswordResetInsertArgs
// gives its arguments.
const PasswordResetInsert = `INSERT INTO password_resets (` + PasswordResetCols + `) VALUES (?, ?, ?, ?)`

// PasswordResetInsertArgs returns the arguments of PasswordResetInsert for
// p, in PasswordResetCols order.
func PasswordResetInsertArgs(p nextup.PasswordReset) []any {
	return []any{p.TokenHash, p.StaffID, TS(p.CreatedAt), TS(p.ExpiresAt)}
}

// Queries of staff accounts, sessions and password resets, each named
// after the Tx method that runs it. Emails are passed through Email.
const (
	// StaffGet reads a staff account by id.
	StaffGet = `SELECT ` + StaffCols + ` FROM staff WHERE id = ?`
	// StaffByEmail reads a staff account by its (lower-cased) email.
	StaffByEmail = `SELECT ` + StaffCols + ` FROM staff WHERE email = ?`
	// StaffList reads a business's staff accounts by email.
	StaffList = `SELECT ` + StaffCols + ` FROM staff WHERE business_id = ? ORDER BY email`
	// StaffSignIn stores the failed sign-ins and lock of staff member ?3.
	StaffSignIn = `UPDATE staff SET failed_sign_ins = ?, locked_until = ? WHERE id = ?`
	// StaffSetPassword replaces the password hash of staff member ?2 and
	// clears the failed sign-ins and the lock.
	StaffSetPassword = `UPDATE staff SET password_hash = ?, failed_sign_ins = 0, locked_until = NULL WHERE id = ?`

	// SessionGet reads a session by the hash of its token.
	SessionGet = `SELECT ` + SessionCols + ` FROM sessions WHERE id_hash = ?`
	// SessionDelete deletes a session by the hash of its token.
	SessionDelete = `DELETE FROM sessions WHERE id_hash = ?`
	// SessionDeleteByStaff deletes every session of a staff member.
	SessionDeleteByStaff = `DELETE FROM sessions WHERE staff_id = ?`
	// SessionPurge deletes the sessions expired before a time.
	SessionPurge = `DELETE FROM sessions WHERE expires_at < ?`

	// PasswordResetUse deletes a reset by the hash of its token and returns
	// it; the caller tells a live one from an expired one.
	PasswordResetUse = `DELETE FROM password_resets WHERE token_hash = ? RETURNING ` + PasswordResetCols
)

// PasswordResetExpired reports whether a reset has expired at now,
// compared at the stored precision like every deadline in SQL: a reset
// is good while now is before ExpiresAt.
func PasswordResetExpired(p nextup.PasswordReset, now time.Time) bool {
	return TS(now) >= TS(p.ExpiresAt)
}

// StaffCreate stores the email lower-cased; the UNIQUE constraint on it
// then refuses an email another account has in any case (ErrConflict),
// and the foreign key a missing business (ErrNotFound).
func (t *Tx) StaffCreate(ctx context.Context, s nextup.Staff) error {
	_, err := t.r.Exec(ctx, StaffInsert, StaffInsertArgs(s)...)
	return t.err("create staff "+s.ID, err)
}

// StaffGet reads a staff account.
func (t *Tx) StaffGet(ctx context.Context, id string) (nextup.Staff, error) {
	s, err := ScanStaff(t.r.QueryRow(ctx, StaffGet, id))
	return s, t.err("get staff "+id, err)
}

// StaffByEmail reads a staff account by its email, in any case.
func (t *Tx) StaffByEmail(ctx context.Context, email string) (nextup.Staff, error) {
	s, err := ScanStaff(t.r.QueryRow(ctx, StaffByEmail, Email(email)))
	return s, t.err("staff by email", err)
}

// StaffList lists a business's staff accounts by email.
func (t *Tx) StaffList(ctx context.Context, businessID string) ([]nextup.Staff, error) {
	out, err := all(ctx, t, ScanStaff, StaffList, businessID)
	return out, t.err("list staff of business "+businessID, err)
}

// StaffSignIn stores the outcome of a sign-in: failed attempts and lock.
func (t *Tx) StaffSignIn(ctx context.Context, id string, r nextup.SignInResult) error {
	n, err := t.r.Exec(ctx, StaffSignIn, r.FailedSignIns, TSPtr(r.LockedUntil), id)
	return t.touched("record sign-in of staff "+id, n, err)
}

// StaffSetPassword replaces a password hash and lifts any lock.
func (t *Tx) StaffSetPassword(ctx context.Context, id, passwordHash string) error {
	n, err := t.r.Exec(ctx, StaffSetPassword, passwordHash, id)
	return t.touched("set password of staff "+id, n, err)
}

// SessionCreate stores a session; a missing staff member is ErrNotFound
// (the foreign key).
func (t *Tx) SessionCreate(ctx context.Context, s nextup.Session) error {
	_, err := t.r.Exec(ctx, SessionInsert, SessionInsertArgs(s)...)
	return t.err("create session of staff "+s.StaffID, err)
}

// SessionGet reads a session by the hash of its token.
func (t *Tx) SessionGet(ctx context.Context, idHash string) (nextup.Session, error) {
	s, err := ScanSession(t.r.QueryRow(ctx, SessionGet, idHash))
	return s, t.err("get session", err)
}

// SessionDelete deletes a session; none is no error.
func (t *Tx) SessionDelete(ctx context.Context, idHash string) error {
	_, err := t.r.Exec(ctx, SessionDelete, idHash)
	return t.err("delete session", err)
}

// SessionDeleteByStaff deletes a staff member's sessions and counts them.
func (t *Tx) SessionDeleteByStaff(ctx context.Context, staffID string) (int, error) {
	n, err := t.r.Exec(ctx, SessionDeleteByStaff, staffID)
	return t.count("delete sessions of staff "+staffID, n, err)
}

// SessionPurge deletes the sessions expired before a time and counts them.
func (t *Tx) SessionPurge(ctx context.Context, before time.Time) (int, error) {
	n, err := t.r.Exec(ctx, SessionPurge, TS(before))
	return t.count("purge sessions", n, err)
}

// PasswordResetCreate stores a reset; a missing staff member is
// ErrNotFound (the foreign key).
func (t *Tx) PasswordResetCreate(ctx context.Context, r nextup.PasswordReset) error {
	_, err := t.r.Exec(ctx, PasswordResetInsert, PasswordResetInsertArgs(r)...)
	return t.err("create password reset of staff "+r.StaffID, err)
}

// PasswordResetUse deletes the reset in one statement and only then looks
// at its deadline, so an expired reset is gone too (ErrConflict) and a
// token works at most once.
func (t *Tx) PasswordResetUse(ctx context.Context, tokenHash string, now time.Time) (nextup.PasswordReset, error) {
	const op = "use password reset"
	r, err := ScanPasswordReset(t.r.QueryRow(ctx, PasswordResetUse, tokenHash))
	if err != nil {
		return nextup.PasswordReset{}, t.err(op, err)
	}
	if PasswordResetExpired(r, now) {
		return nextup.PasswordReset{}, fmt.Errorf("%s: expired at %s: %w", op, r.ExpiresAt.Format(time.RFC3339), nextup.ErrConflict)
	}
	return r, nil
}
