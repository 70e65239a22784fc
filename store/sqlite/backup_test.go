package sqlite

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// TestBackupWhileWriting copies a database that writers keep changing:
// every business acknowledged before the backup began is in the copy, the
// copy's own check passes (its counts and checksums are those of the
// snapshot it was taken from), and the copy opens as a store.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := f.ctx
	var acked sync.Map
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("biz_w%d_%d", w, i)
				b := nextup.Business{ID: id, Name: "Salon " + id, Timezone: "UTC", Rules: nextup.DefaultRules(),
					APIKeyHash: nextup.HashToken(id), CreatedAt: t0}
				if err := f.db.InTx(ctx, func(tx nextup.Tx) error { return tx.BusinessCreate(ctx, b) }); err != nil {
					t.Errorf("write: %v", err)
					return
				}
				acked.Store(id, true)
				n.Add(1)
			}
		}()
	}
	for n.Load() < 200 {
		time.Sleep(time.Millisecond) // let the writers get going
	}
	var before []string
	acked.Range(func(k, _ any) bool { before = append(before, k.(string)); return true })
	dst := filepath.Join(t.TempDir(), "backup.db")
	rep, err := Backup(ctx, f.db.Path(), dst, false)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backup: %d bytes, %d pages, %d rows in %d tables, %v; %d businesses written in all", rep.Bytes, rep.Pages, rep.Rows(), len(rep.Tables), rep.Took, n.Load())
	if _, err := os.Stat(dst + "-wal"); err == nil {
		t.Error("the backup has a -wal beside it: it must be one file")
	}
	again, err := Verify(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameSums(rep.Tables, again.Tables); err != nil {
		t.Errorf("Verify of the backup differs from the backup's report: %v", err)
	}
	copyDB, err := Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	err = copyDB.Read(ctx, func(tx nextup.Tx) error {
		for _, id := range before {
			if _, err := tx.BusinessGet(ctx, id); err != nil {
				return fmt.Errorf("business %s, acknowledged before the backup: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRoundTrip restores a backup into a new file and over an
// existing one (only with replace), and the restored store has the data.
func TestRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	f := setup(t)
	dir := t.TempDir()
	bak := filepath.Join(dir, "b.db")
	if _, err := Backup(f.ctx, f.db.Path(), bak, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Backup(f.ctx, f.db.Path(), bak, false); !errors.Is(err, ErrBackupRefused) {
		t.Errorf("a backup onto an existing file: %v, want refused", err)
	}
	target := filepath.Join(dir, "restored.db")
	rep, err := Restore(f.ctx, bak, target, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.SchemaVersion != LatestVersion() {
		t.Errorf("schema version %d, want %d", rep.SchemaVersion, LatestVersion())
	}
	if _, err := Restore(f.ctx, bak, target, false); !errors.Is(err, ErrBackupRefused) {
		t.Errorf("a restore onto an existing file without replace: %v, want refused", err)
	}
	// A stale log beside the target would be replayed onto the restored
	// file: restore removes it.
	if err := os.WriteFile(target+"-wal", []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(f.ctx, bak, target, true); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(target); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("the restored file's mode: %v %v, want the replaced file's 0640", st.Mode(), err)
	}
	if _, err := os.Stat(target + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale -wal is still there: %v", err)
	}
	db, err := Open(f.ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Read(f.ctx, func(tx nextup.Tx) error { _, err := tx.BusinessGet(f.ctx, f.biz.ID); return err }); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusesBadBackups: a truncated, a damaged, a foreign and an
// empty backup are each refused with a clear error, and the database they
// were to replace is left byte for byte as it was.
func TestRestoreRefusesBadBackups(t *testing.T) {
	t.Parallel()
	f := setup(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if _, err := Backup(f.ctx, f.db.Path(), good, false); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "live.db")
	if _, err := Restore(f.ctx, good, target, false); err != nil {
		t.Fatal(err)
	}
	sum := func() [32]byte {
		b, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	want := sum()
	damaged := append([]byte(nil), raw...)
	for p := 1; p < 6; p++ { // the b-tree headers of pages 2 to 6
		for i := p * 4096; i < p*4096+12; i++ {
			damaged[i] ^= 0x5a
		}
	}
	cases := []struct {
		name string
		data []byte
		says string
	}{
		{"truncated", raw[:len(raw)/2], "truncated"},
		{"truncated mid-page", raw[:len(raw)-1000], "truncated"},
		{"damaged", damaged, ""},
		{"not sqlite", []byte(strings.Repeat("not a database\n", 500)), "not an SQLite database"},
		{"empty", nil, "not an SQLite database"},
	}
	for _, c := range cases {
		bad := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".db")
		if err := os.WriteFile(bad, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Restore(f.ctx, bad, target, true)
		if !errors.Is(err, ErrBackupRefused) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want refused saying %q", c.name, err, c.says)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
		if sum() != want {
			t.Fatalf("%s: the database changed", c.name)
		}
	}
	// Nothing left behind beside the target.
	left, _ := filepath.Glob(filepath.Join(dir, ".live.db.restore-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestStorageErrors: a write that finds the file full (max_page_count on
// the writer connection, the same SQLITE_FULL a full disk gives) or not
// writable (query_only: SQLITE_READONLY) comes back as the domain's
// storage_full or storage_read_only, with nothing of it kept; Healthy
// reports it until the cause is gone, and then writes succeed again.
func TestStorageErrors(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	var pages int
	if err := f.db.write.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.write.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 8000)
	var ferr error
	var acked []string
	for i := range 1000 {
		id := fmt.Sprintf("biz_full_%d", i)
		ferr = f.db.InTx(ctx, func(tx nextup.Tx) error {
			return tx.BusinessCreate(ctx, nextup.Business{ID: id, Name: big, Timezone: "UTC", Rules: nextup.DefaultRules(), APIKeyHash: nextup.HashToken(id), CreatedAt: t0})
		})
		if ferr != nil {
			break
		}
		acked = append(acked, id)
	}
	if nextup.ErrorCode(ferr) != nextup.CodeStorageFull || !errors.Is(ferr, nextup.ErrUnavailable) {
		t.Fatalf("a write to a full file: %v (code %q), want storage_full", ferr, nextup.ErrorCode(ferr))
	}
	if err := f.db.Healthy(ctx); nextup.ErrorCode(err) != nextup.CodeStorageFull {
		t.Errorf("Healthy while full: %v", err)
	}
	// Reads go on, and every acknowledged write is there.
	if err := f.db.Read(ctx, func(tx nextup.Tx) error {
		for _, id := range acked {
			if _, err := tx.BusinessGet(ctx, id); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.write.ExecContext(ctx, "PRAGMA max_page_count = 1000000"); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Healthy(ctx); err != nil {
		t.Errorf("Healthy once space is back: %v", err)
	}
	f.tx(func(tx nextup.Tx) error {
		return tx.BusinessCreate(ctx, nextup.Business{ID: "biz_after", Name: big, Timezone: "UTC", Rules: nextup.DefaultRules(), APIKeyHash: nextup.HashToken("after"), CreatedAt: t0})
	})

	if _, err := f.db.write.ExecContext(ctx, "PRAGMA query_only = ON"); err != nil {
		t.Fatal(err)
	}
	err := f.db.InTx(ctx, func(tx nextup.Tx) error {
		return tx.BusinessCreate(ctx, nextup.Business{ID: "biz_ro", Name: "x", Timezone: "UTC", Rules: nextup.DefaultRules(), APIKeyHash: nextup.HashToken("ro"), CreatedAt: t0})
	})
	if nextup.ErrorCode(err) != nextup.CodeStorageReadOnly {
		t.Fatalf("a write to a read-only file: %v, want storage_read_only", err)
	}
	if err := f.db.Healthy(ctx); nextup.ErrorCode(err) != nextup.CodeStorageReadOnly {
		t.Errorf("Healthy while read-only: %v", err)
	}
	if _, err := f.db.write.ExecContext(ctx, "PRAGMA query_only = OFF"); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Healthy(ctx); err != nil {
		t.Errorf("Healthy once writable: %v", err)
	}
}
