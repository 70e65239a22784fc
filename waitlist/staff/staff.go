package staff

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/internal/core"
)

// Accounts are the use cases of staff accounts: adding one, signing in
// and out, sessions, and resetting a password.
type Accounts struct {
	*core.Service
}

// work is one transaction of these use cases: the core's Work, with the
// steps of this package as its methods.
type work struct {
	*core.Work
	s *core.Service
}

func wrap(w *core.Work) *work { return &work{Work: w, s: w.Service()} }

// tx runs fn in a transaction of the core (core.Service.Tx).
func (s *Accounts) tx(ctx context.Context, fn func(w *work) error) error {
	return s.Tx(ctx, func(w *core.Work) error { return fn(wrap(w)) })
}

// Staff sign-in policy.
const (
	// SessionTTL is how long a sign-in lasts: a working day and then some.
	SessionTTL = 12 * time.Hour
	// MaxFailedSignIns wrong passwords in a row lock an account for
	// LockFor; a good sign-in after the lock starts the count again.
	MaxFailedSignIns = 5
	LockFor          = 15 * time.Minute
	// ResetTTL is how long a password-reset link works.
	ResetTTL = time.Hour
	// MinPasswordLen is the shortest password accepted.
	MinPasswordLen = 10
)

// MessagePasswordReset is the kind of the outbox message carrying a
// password-reset link.
const MessagePasswordReset = "password_reset"

// dummyHash is compared against when an email has no account, so that a
// sign-in takes as long whether or not the address is known.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not anyone's password"), bcrypt.MinCost)

// AddStaffParams are a new staff account.
type AddStaffParams struct {
	BusinessID string
	Email      string
	Name       string
	Password   string
}

func (s *Accounts) passwordCost() int {
	if s.PasswordCost > 0 {
		return s.PasswordCost
	}
	return bcrypt.DefaultCost
}

// hashPassword checks a new password's length and hashes it (outside any
// transaction: bcrypt is slow on purpose).
func (s *Accounts) hashPassword(password string) (string, error) {
	if len(password) < MinPasswordLen {
		return "", core.Invalid(nextup.FieldError{Field: "password", Message: fmt.Sprintf("must be at least %d characters", MinPasswordLen)})
	}
	if len(password) > 72 { // bcrypt's limit: longer passwords would be cut silently
		return "", core.Invalid(nextup.FieldError{Field: "password", Message: "must be at most 72 bytes"})
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), s.passwordCost())
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// AddStaff creates a staff account for a business.
func (s *Accounts) AddStaff(ctx context.Context, p AddStaffParams) (nextup.Staff, error) {
	addr, err := mail.ParseAddress(strings.TrimSpace(p.Email))
	if err != nil || !nextup.ValidEmail(addr.Address) {
		return nextup.Staff{}, core.Invalid(nextup.FieldError{Field: "email", Message: "must be an email address"})
	}
	hash, err := s.hashPassword(p.Password)
	if err != nil {
		return nextup.Staff{}, err
	}
	st := nextup.Staff{ID: s.Random.ID("stf"), BusinessID: p.BusinessID, Email: strings.ToLower(addr.Address),
		Name: strings.TrimSpace(p.Name), PasswordHash: hash}
	err = s.tx(ctx, func(w *work) error {
		bi, err := w.Business(ctx, p.BusinessID)
		if err != nil {
			return err
		}
		st.CreatedAt = w.Now
		if err := w.Tx.StaffCreate(ctx, st); err != nil {
			if errors.Is(err, nextup.ErrConflict) {
				return nextup.Errorf(nextup.ErrConflict, nextup.CodeEmailTaken, "%s already has an account", st.Email)
			}
			return err
		}
		return w.Audit(ctx, bi, nextup.AuditEvent{SubjectType: nextup.SubjectBusiness, SubjectID: bi.ID,
			To: "staff_added", Detail: map[string]any{"staff_id": st.ID, "email": st.Email}})
	})
	return st, err
}

// SignIn checks an email and password. On success it starts a session and
// returns its token (for the cookie; only its hash is stored). A wrong
// password counts towards the lock-out; a locked account is refused
// without looking at the password.
func (s *Accounts) SignIn(ctx context.Context, email, password string) (string, nextup.Staff, error) {
	var st nextup.Staff
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		st, err = tx.StaffByEmail(ctx, strings.ToLower(strings.TrimSpace(email)))
		return err
	})
	bad := nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeBadCredentials, "that email and password do not match an account")
	if errors.Is(err, nextup.ErrNotFound) {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return "", nextup.Staff{}, bad
	}
	if err != nil {
		return "", nextup.Staff{}, err
	}
	now := s.Clock.Now()
	if st.LockedUntil != nil && now.Before(*st.LockedUntil) {
		wait := st.LockedUntil.Sub(now)
		return "", nextup.Staff{}, &nextup.Error{Kind: nextup.ErrRateLimited, Code: nextup.CodeAccountLocked,
			Message: fmt.Sprintf("too many wrong passwords; try again in %d minutes or reset the password", int(wait.Minutes())+1),
			Data:    map[string]any{"retry_after_seconds": int(wait.Seconds()) + 1}}
	}
	if bcrypt.CompareHashAndPassword([]byte(st.PasswordHash), []byte(password)) != nil {
		err := s.tx(ctx, func(w *work) error {
			fresh, err := w.Tx.StaffGet(ctx, st.ID)
			if err != nil {
				return err
			}
			r := nextup.SignInResult{FailedSignIns: fresh.FailedSignIns + 1}
			if fresh.LockedUntil != nil && !w.Now.Before(*fresh.LockedUntil) {
				r.FailedSignIns = 1 // the last lock is over: count afresh
			}
			if r.FailedSignIns >= MaxFailedSignIns {
				until := w.Now.Add(LockFor)
				r.LockedUntil = &until
			}
			return w.Tx.StaffSignIn(ctx, st.ID, r)
		})
		if err != nil {
			return "", nextup.Staff{}, err
		}
		return "", nextup.Staff{}, bad
	}
	token, hash := s.Random.Token()
	err = s.tx(ctx, func(w *work) error {
		if err := w.Tx.StaffSignIn(ctx, st.ID, nextup.SignInResult{}); err != nil {
			return err
		}
		return w.Tx.SessionCreate(ctx, nextup.Session{IDHash: hash, StaffID: st.ID, BusinessID: st.BusinessID,
			CreatedAt: w.Now, ExpiresAt: w.Now.Add(SessionTTL)})
	})
	if err != nil {
		return "", nextup.Staff{}, err
	}
	st.FailedSignIns, st.LockedUntil = 0, nil
	return token, st, nil
}

// SessionFor returns the live session of a cookie token and its staff
// member; a missing, ended or expired session is ErrUnauthorized.
func (s *Accounts) SessionFor(ctx context.Context, token string) (nextup.Session, nextup.Staff, error) {
	var se nextup.Session
	var st nextup.Staff
	signedOut := nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeUnauthorized, "please sign in")
	if token == "" {
		return se, st, signedOut
	}
	err := s.Read(ctx, func(tx nextup.Tx) error {
		var err error
		if se, err = tx.SessionGet(ctx, nextup.HashToken(token)); err != nil {
			return err
		}
		st, err = tx.StaffGet(ctx, se.StaffID)
		return err
	})
	if errors.Is(err, nextup.ErrNotFound) || err == nil && !s.Clock.Now().Before(se.ExpiresAt) {
		return nextup.Session{}, nextup.Staff{}, signedOut
	}
	return se, st, err
}

// SignOut ends the session of a cookie token; an unknown one is no error.
func (s *Accounts) SignOut(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.tx(ctx, func(w *work) error { return w.Tx.SessionDelete(ctx, nextup.HashToken(token)) })
}

// RequestPasswordReset emails a single-use link to set a new password, if
// the address has an account. It says nothing either way, so that the form
// does not tell who has an account.
func (s *Accounts) RequestPasswordReset(ctx context.Context, email string) error {
	return s.tx(ctx, func(w *work) error {
		st, err := w.Tx.StaffByEmail(ctx, strings.ToLower(strings.TrimSpace(email)))
		if errors.Is(err, nextup.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		bi, err := w.Business(ctx, st.BusinessID)
		if err != nil {
			return err
		}
		token, hash := w.s.Random.Token()
		if err := w.Tx.PasswordResetCreate(ctx, nextup.PasswordReset{TokenHash: hash, StaffID: st.ID,
			CreatedAt: w.Now, ExpiresAt: w.Now.Add(ResetTTL)}); err != nil {
			return err
		}
		link := w.s.URL("/reset/" + token)
		return w.Queue(ctx, nextup.Message{BusinessID: st.BusinessID, Kind: MessagePasswordReset, Channel: nextup.ChannelEmail,
			To: st.Email, Subject: "Set a new password for " + bi.Name + " on nextup",
			Body: "Someone (we hope you) asked to set a new password for " + st.Email + ".\n\n" +
				"Set it here within the hour: " + link + "\n\n" +
				"If it was not you, ignore this mail: your password stays as it is."})
	})
}

// ResetPassword sets a new password through a reset link's token and ends
// every session of the account (whoever had the old password is signed out).
func (s *Accounts) ResetPassword(ctx context.Context, token, password string) error {
	hash, err := s.hashPassword(password)
	if err != nil {
		return err
	}
	expired := false
	err = s.tx(ctx, func(w *work) error {
		r, err := w.Tx.PasswordResetUse(ctx, nextup.HashToken(token), w.Now)
		switch {
		case errors.Is(err, nextup.ErrNotFound):
			return nextup.Errorf(nextup.ErrNotFound, nextup.CodeResetLinkUnknown, "this link was used already or never existed; ask for a new one")
		case errors.Is(err, nextup.ErrConflict):
			expired = true // the expired token is gone now: commit that, refuse the reset
			return nil
		case err != nil:
			return err
		}
		if err := w.Tx.StaffSetPassword(ctx, r.StaffID, hash); err != nil {
			return err
		}
		_, err = w.Tx.SessionDeleteByStaff(ctx, r.StaffID)
		return err
	})
	if err == nil && expired {
		err = nextup.Errorf(nextup.ErrConflict, nextup.CodeResetLinkExpired, "this link has expired; ask for a new one")
	}
	return err
}
