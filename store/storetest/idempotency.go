package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func testIdempotencyStartFinishReplay(t *testing.T, b *bundle) {
	biz := b.business()
	r := nextup.IdempotencyRecord{Scope: biz.ID, Key: "key-1", Fingerprint: "POST /v1/x sha256:abc",
		CreatedAt: b.now, ExpiresAt: b.at(24 * time.Hour)}
	var got nextup.IdempotencyRecord
	b.tx(func(tx nextup.Tx) error {
		var err error
		got, err = tx.IdempotencyStart(b.ctx, r)
		return err
	})
	checkEqual(t, "record returned by IdempotencyStart of a new key", r, got)

	// The same key again while the first request runs: the running record, with ErrConflict.
	second := r
	second.CreatedAt, second.Fingerprint = b.at(time.Second), "POST /v1/x sha256:other"
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.IdempotencyStart(b.ctx, second)
		if wantErr(t, err, nextup.ErrConflict, "IdempotencyStart of a running key") {
			checkEqual(t, "record returned with ErrConflict (the first one, still running)", r, got)
		}
		return nil
	})

	// The first request finishes; a replay gets its response.
	fin := r
	fin.Status = 201
	fin.Header = map[string]string{"Content-Type": "application/json", "Location": "/v1/waitlist/ent_1"}
	fin.Body = []byte("{\"id\":\"ent_1\"}\n\x00\xff binary-safe")
	b.tx(func(tx nextup.Tx) error { return tx.IdempotencyFinish(b.ctx, fin) })
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.IdempotencyStart(b.ctx, second)
		if wantErr(t, err, nextup.ErrConflict, "IdempotencyStart of a finished key") {
			checkEqual(t, "record replayed", fin, got)
		}
		return nil
	})

	// Keys are per scope.
	elsewhere := r
	elsewhere.Scope = "admin"
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.IdempotencyStart(b.ctx, elsewhere)
		if wantOK(t, err, "IdempotencyStart of the same key in another scope") {
			checkEqual(t, "record in another scope", elsewhere, got)
		}
		return nil
	})
}

// testIdempotencyFinishOnlyRunning: a record is finished once. Finishing
// one already finished, or one that is not there, is refused and changes
// nothing; finishing with Status 0 saves a running request's state and
// keeps the record running.
func testIdempotencyFinishOnlyRunning(t *testing.T, b *bundle) {
	biz := b.business()
	r := nextup.IdempotencyRecord{Scope: biz.ID, Key: "k", Fingerprint: "f", CreatedAt: b.now, ExpiresAt: b.at(time.Hour)}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.IdempotencyStart(b.ctx, r)
		return err
	})
	probe := r
	probe.CreatedAt = b.at(time.Second)
	stored := func(what string, want nextup.IdempotencyRecord) {
		t.Helper()
		b.tx(func(tx nextup.Tx) error {
			got, err := tx.IdempotencyStart(b.ctx, probe)
			if wantErr(t, err, nextup.ErrConflict, "IdempotencyStart to read the record %s", what) {
				checkEqual(t, "record "+what, want, got)
			}
			return nil
		})
	}

	// The running request saves its state: allowed, and it still runs.
	running := r
	running.Header = map[string]string{"X-Step": "1"}
	running.Body = []byte("recovery state")
	b.tx(func(tx nextup.Tx) error { return tx.IdempotencyFinish(b.ctx, running) })
	stored("after saving a running request's state", running)

	fin := r
	fin.Status = 201
	fin.Header = map[string]string{"Content-Type": "application/json"}
	fin.Body = []byte(`{"id":"ent_1"}`)
	b.tx(func(tx nextup.Tx) error { return tx.IdempotencyFinish(b.ctx, fin) })

	other := fin
	other.Status, other.Body, other.ExpiresAt = 200, []byte(`{"id":"ent_2"}`), b.at(48*time.Hour)
	missing := fin
	missing.Key = "never-started"
	b.tx(func(tx nextup.Tx) error {
		wantErr(t, tx.IdempotencyFinish(b.ctx, other), nextup.ErrConflict, "IdempotencyFinish of a finished record")
		wantErr(t, tx.IdempotencyFinish(b.ctx, running), nextup.ErrConflict, "IdempotencyFinish with Status 0 of a finished record")
		wantErr(t, tx.IdempotencyFinish(b.ctx, missing), nextup.ErrNotFound, "IdempotencyFinish of a record never started")
		// The refusals leave the transaction usable.
		_, err := tx.IdempotencyStart(b.ctx, nextup.IdempotencyRecord{Scope: biz.ID, Key: "after", Fingerprint: "f",
			CreatedAt: b.now, ExpiresAt: b.at(time.Hour)})
		wantOK(t, err, "IdempotencyStart after refused finishes in the same transaction")
		return nil
	})
	stored("after refused finishes (the first response)", fin)
	b.tx(func(tx nextup.Tx) error {
		start := missing
		start.Status, start.Header, start.Body = 0, nil, nil
		got, err := tx.IdempotencyStart(b.ctx, start)
		if wantOK(t, err, "IdempotencyStart of the key a refused finish named (nothing was stored)") {
			checkEqual(t, "record of that key", start, got)
		}
		return nil
	})
}

func testIdempotencyExpiredReplaced(t *testing.T, b *bundle) {
	biz := b.business()
	old := nextup.IdempotencyRecord{Scope: biz.ID, Key: "k", Fingerprint: "old", Status: 200, CreatedAt: b.at(-25 * time.Hour),
		ExpiresAt: b.at(-time.Hour)}
	b.tx(func(tx nextup.Tx) error {
		_, err := tx.IdempotencyStart(b.ctx, nextup.IdempotencyRecord{Scope: old.Scope, Key: old.Key, Fingerprint: old.Fingerprint,
			CreatedAt: old.CreatedAt, ExpiresAt: old.ExpiresAt})
		if err != nil {
			return err
		}
		return tx.IdempotencyFinish(b.ctx, old)
	})
	fresh := nextup.IdempotencyRecord{Scope: biz.ID, Key: "k", Fingerprint: "new", CreatedAt: b.now, ExpiresAt: b.at(24 * time.Hour)}
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.IdempotencyStart(b.ctx, fresh)
		if wantOK(t, err, "IdempotencyStart over an expired record") {
			checkEqual(t, "record replacing an expired one", fresh, got)
		}
		return nil
	})
	b.tx(func(tx nextup.Tx) error {
		got, err := tx.IdempotencyStart(b.ctx, fresh)
		if wantErr(t, err, nextup.ErrConflict, "IdempotencyStart after the replacement") {
			checkEqual(t, "the replacement (running, Status 0)", fresh, got)
		}
		return nil
	})
}

func testIdempotencyDelete(t *testing.T, b *bundle) {
	biz := b.business()
	r := nextup.IdempotencyRecord{Scope: biz.ID, Key: "k", Fingerprint: "f", CreatedAt: b.now, ExpiresAt: b.at(time.Hour)}
	keep := r
	keep.Key = "other"
	b.tx(func(tx nextup.Tx) error {
		if _, err := tx.IdempotencyStart(b.ctx, r); err != nil {
			return err
		}
		_, err := tx.IdempotencyStart(b.ctx, keep)
		return err
	})
	b.tx(func(tx nextup.Tx) error { return tx.IdempotencyDelete(b.ctx, r.Scope, r.Key) })
	b.tx(func(tx nextup.Tx) error {
		wantOK(t, tx.IdempotencyDelete(b.ctx, r.Scope, "never-stored"), "IdempotencyDelete of an unknown key")
		_, err := tx.IdempotencyStart(b.ctx, r)
		wantOK(t, err, "IdempotencyStart after IdempotencyDelete")
		_, err = tx.IdempotencyStart(b.ctx, keep)
		wantErr(t, err, nextup.ErrConflict, "IdempotencyStart of another key after deleting one")
		return nil
	})
}

func testIdempotencyPurge(t *testing.T, b *bundle) {
	biz := b.business()
	var recs []nextup.IdempotencyRecord
	for i, exp := range []time.Duration{-3 * time.Hour, -2 * time.Hour, -time.Microsecond, 0, time.Hour} {
		recs = append(recs, nextup.IdempotencyRecord{Scope: biz.ID, Key: fmt.Sprintf("k%d", i), Fingerprint: "f",
			CreatedAt: b.at(-24 * time.Hour), ExpiresAt: b.at(exp)})
	}
	recs = append(recs, nextup.IdempotencyRecord{Scope: "admin", Key: "k0", Fingerprint: "f", CreatedAt: b.at(-24 * time.Hour),
		ExpiresAt: b.at(-time.Hour)})
	b.tx(func(tx nextup.Tx) error {
		for _, r := range recs {
			if _, err := tx.IdempotencyStart(b.ctx, r); err != nil {
				return fmt.Errorf("IdempotencyStart(%s/%s): %w", r.Scope, r.Key, err)
			}
		}
		return nil
	})
	var n int
	b.tx(func(tx nextup.Tx) error {
		var err error
		n, err = tx.IdempotencyPurge(b.ctx, b.now)
		return err
	})
	if n != 4 {
		t.Errorf("IdempotencyPurge(now) = %d, want 4 (expired before now, every scope)", n)
	}
	// What is left: the ones expiring at or after now. Start them again
	// with a creation time before either expiry, so only presence decides.
	var left []string
	b.tx(func(tx nextup.Tx) error {
		for _, r := range recs {
			probe := r
			probe.CreatedAt, probe.ExpiresAt = b.at(-48*time.Hour), b.at(48*time.Hour)
			_, err := tx.IdempotencyStart(b.ctx, probe)
			if errors.Is(err, nextup.ErrConflict) {
				left = append(left, r.Scope+"/"+r.Key)
			} else if err != nil {
				return err
			}
		}
		return nil
	})
	slices.Sort(left)
	if want := []string{biz.ID + "/k3", biz.ID + "/k4"}; !sameStrings(left, want) {
		t.Errorf("records left after IdempotencyPurge(now): %s, want %s", strings.Join(left, " "), strings.Join(want, " "))
	}
	b.tx(func(tx nextup.Tx) error {
		n, err := tx.IdempotencyPurge(b.ctx, b.now)
		if wantOK(t, err, "IdempotencyPurge again") && n != 0 {
			t.Errorf("IdempotencyPurge again = %d, want 0", n)
		}
		return nil
	})
}

func testSuppressionAddList(t *testing.T, b *bundle) {
	biz, other := b.business(), b.business()
	sups := []nextup.Suppression{
		{BusinessID: biz.ID, Channel: nextup.ChannelSMS, Address: "+15550100", Reason: "STOP", At: b.now},
		{BusinessID: biz.ID, Channel: nextup.ChannelEmail, Address: "bounce@example.com", Reason: "bounce: 550", At: b.at(time.Second)},
		{BusinessID: other.ID, Channel: nextup.ChannelSMS, Address: "+15550101", Reason: "STOP", At: b.now},
	}
	b.tx(func(tx nextup.Tx) error {
		for _, s := range sups {
			if err := tx.SuppressionAdd(b.ctx, s); err != nil {
				return fmt.Errorf("SuppressionAdd(%s): %w", s.Address, err)
			}
		}
		return nil
	})
	// A second STOP from the same number is not an error.
	b.tx(func(tx nextup.Tx) error {
		again := sups[0]
		again.At = b.at(time.Minute)
		wantOK(t, tx.SuppressionAdd(b.ctx, again), "SuppressionAdd of an existing suppression")
		return nil
	})
	addr := func(s nextup.Suppression) string { return string(s.Channel) + ":" + s.Address }
	b.read(func(tx nextup.Tx) error {
		for _, c := range []struct {
			biz   string
			addrs []string
			want  []nextup.Suppression
		}{
			{biz.ID, []string{"+15550100", "bounce@example.com", "fine@example.com"}, sups[:2]},
			{biz.ID, []string{"+15550101"}, nil}, // suppressed elsewhere only
			{other.ID, []string{"+15550100", "+15550101"}, sups[2:]},
			{biz.ID, nil, nil},
		} {
			got, err := tx.SuppressionList(b.ctx, c.biz, c.addrs)
			if !wantOK(t, err, "SuppressionList(%s, %v)", c.biz, c.addrs) {
				continue
			}
			if len(got) != len(c.want) {
				t.Errorf("SuppressionList(%s, %v): %v, want %v", c.biz, c.addrs, ids(got, addr), ids(c.want, addr))
				continue
			}
			got, want := sortedBy(got, addr), sortedBy(c.want, addr)
			for i := range got {
				if got[i].BusinessID != want[i].BusinessID || got[i].Channel != want[i].Channel || got[i].Address != want[i].Address || got[i].Reason != want[i].Reason {
					checkEqual(t, "suppression", want[i], got[i])
				}
			}
		}
		return nil
	})
	// START lifts a suppression: once, for that business and channel only.
	b.tx(func(tx nextup.Tx) error {
		for _, c := range []struct {
			biz     string
			ch      nextup.Channel
			address string
			want    bool
		}{
			{biz.ID, nextup.ChannelEmail, "+15550100", false}, // other channel
			{other.ID, nextup.ChannelSMS, "+15550100", false}, // other business
			{biz.ID, nextup.ChannelSMS, "+15550100", true},
			{biz.ID, nextup.ChannelSMS, "+15550100", false}, // already lifted
		} {
			got, err := tx.SuppressionDelete(b.ctx, c.biz, c.ch, c.address)
			if wantOK(t, err, "SuppressionDelete(%s, %s, %s)", c.biz, c.ch, c.address) && got != c.want {
				t.Errorf("SuppressionDelete(%s, %s, %s) = %v, want %v", c.biz, c.ch, c.address, got, c.want)
			}
		}
		return nil
	})
	b.read(func(tx nextup.Tx) error {
		got, err := tx.SuppressionList(b.ctx, biz.ID, []string{"+15550100", "bounce@example.com"})
		if wantOK(t, err, "SuppressionList after a delete") && (len(got) != 1 || got[0].Address != "bounce@example.com") {
			t.Errorf("after lifting the SMS suppression: %v", ids(got, addr))
		}
		return nil
	})
}
