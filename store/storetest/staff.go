package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func staffEmail(s nextup.Staff) string { return s.Email }

// staff creates a staff account of a business, with a mixed-case email,
// and returns it as stored: the email lower-cased.
func (b *bundle) staff(businessID string, mods ...func(*nextup.Staff)) nextup.Staff {
	b.t.Helper()
	id := b.id("stf")
	s := nextup.Staff{
		ID:           id,
		BusinessID:   businessID,
		Email:        "Staff." + strings.ToUpper(id) + "@Example.COM",
		Name:         "Staff " + id,
		PasswordHash: "$2a$10$" + id,
		CreatedAt:    b.at(-24 * time.Hour),
	}
	for _, m := range mods {
		m(&s)
	}
	b.tx(func(tx nextup.Tx) error { return tx.StaffCreate(b.ctx, s) })
	s.Email = strings.ToLower(s.Email)
	return s
}

// session creates a session of a staff member, expiring in a day.
func (b *bundle) session(s nextup.Staff, mods ...func(*nextup.Session)) nextup.Session {
	b.t.Helper()
	id := b.id("ses")
	ses := nextup.Session{
		IDHash:     nextup.HashToken("session-" + id),
		StaffID:    s.ID,
		BusinessID: s.BusinessID,
		CreatedAt:  b.now,
		ExpiresAt:  b.at(24 * time.Hour),
	}
	for _, m := range mods {
		m(&ses)
	}
	b.tx(func(tx nextup.Tx) error { return tx.SessionCreate(b.ctx, ses) })
	return ses
}

// reset creates a password reset of a staff member, expiring in an hour.
func (b *bundle) reset(s nextup.Staff, mods ...func(*nextup.PasswordReset)) nextup.PasswordReset {
	b.t.Helper()
	id := b.id("rst")
	r := nextup.PasswordReset{
		TokenHash: nextup.HashToken("reset-" + id),
		StaffID:   s.ID,
		CreatedAt: b.now,
		ExpiresAt: b.at(time.Hour),
	}
	for _, m := range mods {
		m(&r)
	}
	b.tx(func(tx nextup.Tx) error { return tx.PasswordResetCreate(b.ctx, r) })
	return r
}

func (b *bundle) getStaff(id string) nextup.Staff {
	b.t.Helper()
	var s nextup.Staff
	b.read(func(tx nextup.Tx) error {
		var err error
		s, err = tx.StaffGet(b.ctx, id)
		return err
	})
	return s
}

func testStaffRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	locked := time.Date(2031, 3, 10, 14, 30, 0, 654321000, time.FixedZone("IST", 5*3600+30*60))
	for _, v := range []struct {
		name string
		mod  func(*nextup.Staff)
	}{
		{"plain", func(*nextup.Staff) {}},
		{"locked, unicode name", func(s *nextup.Staff) {
			s.Name = "Zoë O'Brien \"Z\""
			s.FailedSignIns = 5
			s.LockedUntil = &locked
			s.CreatedAt = time.Date(2029, 12, 31, 23, 59, 59, 999999000, time.FixedZone("UTC-0700", -7*3600))
		}},
	} {
		s := b.staff(biz.ID, v.mod)
		if s.Email != strings.ToLower(s.Email) {
			t.Fatalf("fixture: %q is not lower-cased", s.Email)
		}
		b.read(func(tx nextup.Tx) error {
			got, err := tx.StaffGet(b.ctx, s.ID)
			if wantOK(t, err, "%s: StaffGet", v.name) {
				checkEqual(t, v.name+": StaffGet (email lower-cased)", s, got)
			}
			for _, email := range []string{s.Email, strings.ToUpper(s.Email)} {
				got, err = tx.StaffByEmail(b.ctx, email)
				if wantOK(t, err, "%s: StaffByEmail(%s)", v.name, email) {
					checkEqual(t, v.name+": StaffByEmail", s, got)
				}
			}
			return nil
		})
	}
}

func testStaffNotFound(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.staff(biz.ID)
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.StaffGet(b.ctx, "stf_missing")
		wantErr(t, err, nextup.ErrNotFound, "StaffGet(missing)")
		_, err = tx.StaffByEmail(b.ctx, "nobody@example.com")
		wantErr(t, err, nextup.ErrNotFound, "StaffByEmail(unknown)")
		_, err = tx.StaffByEmail(b.ctx, "")
		wantErr(t, err, nextup.ErrNotFound, "StaffByEmail(empty)")
		wantErr(t, tx.StaffSignIn(b.ctx, "stf_missing", nextup.SignInResult{FailedSignIns: 1}), nextup.ErrNotFound,
			"StaffSignIn(missing)")
		wantErr(t, tx.StaffSetPassword(b.ctx, "stf_missing", "$2a$10$x"), nextup.ErrNotFound, "StaffSetPassword(missing)")
		err = tx.StaffCreate(b.ctx, nextup.Staff{ID: "stf_orphan", BusinessID: "biz_missing", Email: "orphan@example.com",
			CreatedAt: b.now})
		wantErr(t, err, nextup.ErrNotFound, "StaffCreate for a missing business")
		// The transaction is still usable after the refused writes.
		return tx.StaffSetPassword(b.ctx, s.ID, "$2a$10$after")
	})
	b.read(func(tx nextup.Tx) error {
		_, err := tx.StaffGet(b.ctx, "stf_orphan")
		wantErr(t, err, nextup.ErrNotFound, "StaffGet of the refused account")
		return nil
	})
	if got := b.getStaff(s.ID); got.PasswordHash != "$2a$10$after" {
		t.Errorf("password hash %q, want the one set after the refused writes", got.PasswordHash)
	}
}

func testStaffDuplicateEmail(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	s := b.staff(biz.ID, func(s *nextup.Staff) { s.Email = "Ana@Salon.example" })
	for _, c := range []struct {
		name, business, email string
	}{
		{"same email", biz.ID, "ana@salon.example"},
		{"other case", biz.ID, "ANA@SALON.EXAMPLE"},
		{"other business", other.ID, "aNa@salon.Example"},
	} {
		dup := nextup.Staff{ID: b.id("stf"), BusinessID: c.business, Email: c.email, Name: "Impostor", CreatedAt: b.now}
		b.tx(func(tx nextup.Tx) error {
			wantErr(t, tx.StaffCreate(b.ctx, dup), nextup.ErrConflict, "StaffCreate(%s: %s)", c.name, c.email)
			return nil
		})
		b.read(func(tx nextup.Tx) error {
			_, err := tx.StaffGet(b.ctx, dup.ID)
			wantErr(t, err, nextup.ErrNotFound, "StaffGet of a refused duplicate (%s)", c.name)
			return nil
		})
	}
	err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
		return tx.StaffCreate(b.ctx, nextup.Staff{ID: s.ID, BusinessID: biz.ID, Email: "new@salon.example", CreatedAt: b.now})
	})
	if err == nil {
		t.Errorf("StaffCreate with an existing id: no error")
	}
	checkEqual(t, "account after refused duplicates", s, b.getStaff(s.ID))
}

func testStaffList(t *testing.T, b *bundle) {
	biz, other, empty := b.business(), b.business(), b.business()
	var want []nextup.Staff
	for _, email := range []string{"Carl@example.com", "ana@example.com", "BEN@example.com"} {
		want = append(want, b.staff(biz.ID, func(s *nextup.Staff) { s.Email = email }))
	}
	b.staff(other.ID, func(s *nextup.Staff) { s.Email = "aaron@example.com" })
	want = sortedBy(want, staffEmail)
	b.read(func(tx nextup.Tx) error {
		got, err := tx.StaffList(b.ctx, biz.ID)
		if wantOK(t, err, "StaffList") {
			if g, w := ids(got, staffEmail), ids(want, staffEmail); !sameStrings(g, w) {
				t.Errorf("StaffList: %v, want %v (the business's accounts, by email)", g, w)
			} else {
				for i := range got {
					checkEqual(t, "StaffList row", want[i], got[i])
				}
			}
		}
		got, err = tx.StaffList(b.ctx, empty.ID)
		if wantOK(t, err, "StaffList(no staff)") && len(got) != 0 {
			t.Errorf("StaffList of a business without staff: %v", ids(got, staffEmail))
		}
		return nil
	})
}

func testStaffSignIn(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.staff(biz.ID)
	bystander := b.staff(biz.ID)
	until := b.at(15 * time.Minute)
	for _, r := range []nextup.SignInResult{
		{FailedSignIns: 1},
		{FailedSignIns: 5, LockedUntil: &until},
		{FailedSignIns: 0},
		{FailedSignIns: 6, LockedUntil: &until},
	} {
		b.tx(func(tx nextup.Tx) error { return tx.StaffSignIn(b.ctx, s.ID, r) })
		want := s
		want.FailedSignIns, want.LockedUntil = r.FailedSignIns, r.LockedUntil
		checkEqual(t, fmt.Sprintf("account after StaffSignIn(%d failed)", r.FailedSignIns), want, b.getStaff(s.ID))
	}
	b.tx(func(tx nextup.Tx) error { return tx.StaffSetPassword(b.ctx, s.ID, "$2a$10$new") })
	want := s
	want.PasswordHash = "$2a$10$new"
	checkEqual(t, "account after StaffSetPassword (failures and lock cleared)", want, b.getStaff(s.ID))
	checkEqual(t, "another account of the business", bystander, b.getStaff(bystander.ID))
}

func testSessionRoundTrip(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.staff(biz.ID)
	ses := b.session(s, func(ses *nextup.Session) {
		ses.CreatedAt = time.Date(2031, 3, 10, 4, 0, 0, 1000, time.FixedZone("EST", -5*3600))
	})
	expired := b.session(s, func(ses *nextup.Session) { ses.ExpiresAt = b.at(-time.Hour) })
	b.tx(func(tx nextup.Tx) error {
		for _, want := range []nextup.Session{ses, expired} {
			got, err := tx.SessionGet(b.ctx, want.IDHash)
			if wantOK(t, err, "SessionGet") {
				checkEqual(t, "session (expired or not)", want, got)
			}
		}
		_, err := tx.SessionGet(b.ctx, nextup.HashToken("no such session"))
		wantErr(t, err, nextup.ErrNotFound, "SessionGet(unknown)")
		dup := ses
		dup.CreatedAt = b.at(time.Minute)
		wantErr(t, tx.SessionCreate(b.ctx, dup), nextup.ErrConflict, "SessionCreate with an existing hash")
		orphan := nextup.Session{IDHash: nextup.HashToken("orphan"), StaffID: "stf_missing", BusinessID: biz.ID,
			CreatedAt: b.now, ExpiresAt: b.at(time.Hour)}
		wantErr(t, tx.SessionCreate(b.ctx, orphan), nextup.ErrNotFound, "SessionCreate for a missing staff member")
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.SessionGet(b.ctx, ses.IDHash)
		if wantOK(t, err, "SessionGet after refused writes") {
			checkEqual(t, "session after a refused duplicate", ses, got)
		}
		return nil
	})
}

func testSessionDelete(t *testing.T, b *bundle) {
	biz := b.business()
	ana, ben := b.staff(biz.ID), b.staff(biz.ID)
	a1, a2, a3 := b.session(ana), b.session(ana), b.session(ana, func(s *nextup.Session) { s.ExpiresAt = b.at(-time.Hour) })
	b1 := b.session(ben)
	b.tx(func(tx nextup.Tx) error {
		wantOK(t, tx.SessionDelete(b.ctx, a1.IDHash), "SessionDelete")
		wantOK(t, tx.SessionDelete(b.ctx, a1.IDHash), "SessionDelete again")
		wantOK(t, tx.SessionDelete(b.ctx, nextup.HashToken("never")), "SessionDelete(unknown)")
		return nil
	})
	present := func(what string, want map[string]bool) {
		t.Helper()
		b.read(func(tx nextup.Tx) error {
			for _, s := range []nextup.Session{a1, a2, a3, b1} {
				_, err := tx.SessionGet(b.ctx, s.IDHash)
				switch {
				case want[s.IDHash]:
					wantOK(t, err, "%s: SessionGet of a session that should be there", what)
				default:
					wantErr(t, err, nextup.ErrNotFound, "%s: SessionGet of an ended session", what)
				}
			}
			return nil
		})
	}
	present("after SessionDelete", map[string]bool{a2.IDHash: true, a3.IDHash: true, b1.IDHash: true})
	var n int
	b.tx(func(tx nextup.Tx) error {
		var err error
		n, err = tx.SessionDeleteByStaff(b.ctx, ana.ID)
		return err
	})
	if n != 2 {
		t.Errorf("SessionDeleteByStaff = %d, want 2 (expired ones count too)", n)
	}
	present("after SessionDeleteByStaff", map[string]bool{b1.IDHash: true})
	b.tx(func(tx nextup.Tx) error {
		n, err := tx.SessionDeleteByStaff(b.ctx, ana.ID)
		if wantOK(t, err, "SessionDeleteByStaff again") && n != 0 {
			t.Errorf("SessionDeleteByStaff again = %d, want 0", n)
		}
		n, err = tx.SessionDeleteByStaff(b.ctx, "stf_missing")
		if wantOK(t, err, "SessionDeleteByStaff(missing staff)") && n != 0 {
			t.Errorf("SessionDeleteByStaff(missing staff) = %d, want 0", n)
		}
		return nil
	})
}

func testSessionPurge(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	s, o := b.staff(biz.ID), b.staff(other.ID)
	var all []nextup.Session
	for _, exp := range []time.Duration{-48 * time.Hour, -time.Microsecond, 0, time.Hour} {
		all = append(all, b.session(s, func(ses *nextup.Session) { ses.ExpiresAt = b.at(exp) }))
	}
	all = append(all, b.session(o, func(ses *nextup.Session) { ses.ExpiresAt = b.at(-time.Hour) }))
	var n int
	b.tx(func(tx nextup.Tx) error {
		var err error
		n, err = tx.SessionPurge(b.ctx, b.now)
		return err
	})
	if n != 3 {
		t.Errorf("SessionPurge(now) = %d, want 3 (expired before now, every business)", n)
	}
	b.read(func(tx nextup.Tx) error {
		for i, ses := range all {
			_, err := tx.SessionGet(b.ctx, ses.IDHash)
			if ses.ExpiresAt.Before(b.now) {
				wantErr(t, err, nextup.ErrNotFound, "SessionGet of purged session %d", i)
			} else {
				wantOK(t, err, "SessionGet of session %d expiring at or after now", i)
			}
		}
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		n, err := tx.SessionPurge(b.ctx, b.now)
		if wantOK(t, err, "SessionPurge again") && n != 0 {
			t.Errorf("SessionPurge again = %d, want 0", n)
		}
		return nil
	})
}

func testPasswordResetUseOnce(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.staff(biz.ID)
	r := b.reset(s, func(r *nextup.PasswordReset) {
		r.CreatedAt = time.Date(2031, 3, 10, 10, 0, 0, 7000, time.FixedZone("CET", 3600))
	})
	other := b.reset(s)
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.PasswordResetUse(b.ctx, r.TokenHash, b.now)
		if wantOK(t, err, "PasswordResetUse") {
			checkEqual(t, "reset returned by PasswordResetUse", r, got)
		}
		_, err = tx.PasswordResetUse(b.ctx, r.TokenHash, b.now)
		wantErr(t, err, nextup.ErrNotFound, "PasswordResetUse again in the same transaction")
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.PasswordResetUse(b.ctx, r.TokenHash, b.now)
		wantErr(t, err, nextup.ErrNotFound, "PasswordResetUse of a used token")
		_, err = tx.PasswordResetUse(b.ctx, nextup.HashToken("never issued"), b.now)
		wantErr(t, err, nextup.ErrNotFound, "PasswordResetUse(unknown)")
		orphan := nextup.PasswordReset{TokenHash: nextup.HashToken("orphan"), StaffID: "stf_missing", CreatedAt: b.now,
			ExpiresAt: b.at(time.Hour)}
		wantErr(t, tx.PasswordResetCreate(b.ctx, orphan), nextup.ErrNotFound, "PasswordResetCreate for a missing staff member")
		dup := other
		dup.ExpiresAt = b.at(2 * time.Hour)
		wantErr(t, tx.PasswordResetCreate(b.ctx, dup), nextup.ErrConflict, "PasswordResetCreate with an existing hash")
		// Another token of the same person is still good.
		got, err := tx.PasswordResetUse(b.ctx, other.TokenHash, b.now)
		if wantOK(t, err, "PasswordResetUse of another token") {
			checkEqual(t, "the other reset", other, got)
		}
		return nil
	})
}

func testPasswordResetExpired(t *testing.T, b *bundle) {
	biz := b.business()
	s := b.staff(biz.ID)
	atDeadline := b.reset(s, func(r *nextup.PasswordReset) { r.ExpiresAt = b.now })
	long := b.reset(s, func(r *nextup.PasswordReset) { r.ExpiresAt = b.at(-time.Hour) })
	justIn := b.reset(s, func(r *nextup.PasswordReset) { r.ExpiresAt = b.at(time.Microsecond) })
	b.tx(func(tx nextup.Tx) error {
		for _, r := range []nextup.PasswordReset{atDeadline, long} {
			_, err := tx.PasswordResetUse(b.ctx, r.TokenHash, b.now)
			wantErr(t, err, nextup.ErrConflict, "PasswordResetUse of a reset expired at %s, now %s", r.ExpiresAt, b.now)
		}
		got, err := tx.PasswordResetUse(b.ctx, justIn.TokenHash, b.now)
		if wantOK(t, err, "PasswordResetUse a microsecond before the deadline") {
			checkEqual(t, "reset used just in time", justIn, got)
		}
		// The refusals left the transaction usable; it commits.
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		for _, r := range []nextup.PasswordReset{atDeadline, long, justIn} {
			_, err := tx.PasswordResetUse(b.ctx, r.TokenHash, b.at(-24*time.Hour))
			wantErr(t, err, nextup.ErrNotFound, "PasswordResetUse, even before its deadline, of a reset that was used or expired")
		}
		return nil
	})
	// The deletion of an expired reset is part of the transaction: rolled
	// back with it.
	kept := b.reset(s, func(r *nextup.PasswordReset) { r.ExpiresAt = b.at(-time.Minute) })
	boom := errors.New("boom")
	err := b.s.InTx(b.ctx, func(tx nextup.Tx) error {
		_, err := tx.PasswordResetUse(b.ctx, kept.TokenHash, b.now)
		wantErr(t, err, nextup.ErrConflict, "PasswordResetUse of an expired reset")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx: %v, want %v", err, boom)
	}
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.PasswordResetUse(b.ctx, kept.TokenHash, b.at(-time.Hour))
		if wantOK(t, err, "PasswordResetUse after a rolled-back use") {
			checkEqual(t, "reset after a rolled-back use", kept, got)
		}
		return nil
	})
}
