package nextup

import "time"

// Staff is a person who signs in to one business's dashboard. Email is
// unique across businesses (it is what the sign-in form asks for) and kept
// lower-cased; the password is kept only as a bcrypt hash.
type Staff struct {
	ID           string
	BusinessID   string
	Email        string
	Name         string
	PasswordHash string
	// FailedSignIns counts failed sign-ins since the last good one;
	// LockedUntil, when set and in the future, refuses every sign-in.
	FailedSignIns int
	LockedUntil   *time.Time
	CreatedAt     time.Time
}

// Session is one signed-in browser. The cookie carries a random token;
// the store keeps only its hash (IDHash). A session ends at ExpiresAt, at
// sign-out, or when the staff member's password changes.
type Session struct {
	IDHash     string
	StaffID    string
	BusinessID string
	CreatedAt  time.Time
	ExpiresAt  time.Time
}

// PasswordReset is a single-use link to set a new password, kept as the
// hash of its token until it is used or expires.
type PasswordReset struct {
	TokenHash string
	StaffID   string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// SignInResult is what a sign-in attempt leaves on the account.
type SignInResult struct {
	FailedSignIns int
	LockedUntil   *time.Time
}
