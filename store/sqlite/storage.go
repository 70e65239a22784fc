package sqlite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// A full disk and a read-only file. When the file system the database
// lives on runs out of space, SQLite fails the write (SQLITE_FULL, most
// often at the commit, when the write-ahead log grows) and rolls the
// whole transaction back: nothing of it is kept, and nobody is told it
// committed (group.go tells each caller of the group). When the file
// cannot be written at all (a read-only mount, a file opened read-only),
// a write fails with SQLITE_READONLY. Neither is the request's fault, and
// neither is an internal error: InTx turns them into a nextup.Error of
// kind ErrUnavailable with the stable codes storage_full and
// storage_read_only and a retry_after_seconds (the API answers 503 with
// Retry-After). Reads go on: they need no space and no write access.
//
// The store remembers the last such failure until a probe shows it is
// over (Healthy, which /readyz calls): the probe commits a one-row write
// and checks the free space of the file system, so the server reports
// ready again by itself once space frees, without a restart. A full disk
// is retried in 30 s; a read-only file in 60 s (it needs an operator: a
// file opened read-only stays so until the process starts again).

// Retry-After of the storage errors, in seconds.
const (
	retryFull     = 30
	retryReadOnly = 60
)

// minFree is the free space below which the file system is still taken to
// be full, whatever the probe says: the probe's one page fits where a
// request's writes would not.
const minFree = 256 << 10

// storageState is the last storage failure not yet shown to be over.
type storageState struct {
	mu    sync.Mutex
	code  string // nextup.CodeStorageFull or nextup.CodeStorageReadOnly; "" when none
	since time.Time
	cause string
}

func (s *storageState) set(code, cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.code != code {
		s.code, s.since = code, time.Now()
	}
	s.cause = cause
}

func (s *storageState) get() (code string, since time.Time, cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.code, s.since, s.cause
}

func (s *storageState) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code, s.cause = "", ""
}

// storageCode is the stable code of a storage failure of SQLite's, "" for
// any other error.
func storageCode(err error) string {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return ""
	}
	switch se.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_FULL:
		return nextup.CodeStorageFull
	case sqlite3.SQLITE_READONLY:
		return nextup.CodeStorageReadOnly
	}
	return ""
}

// storageError returns err as the domain's storage error when it is a full
// disk or a read-only file (see above), and records it; any other error
// as it is.
func (db *DB) storageError(err error) error { return db.storage.wrap(err) }

// wrap is storageError; on a nil state it returns err as it is. The
// SQLite error stays in the chain, for the log.
func (s *storageState) wrap(err error) error {
	if err == nil || s == nil {
		return err
	}
	var ne *nextup.Error
	if errors.As(err, &ne) && (ne.Code == nextup.CodeStorageFull || ne.Code == nextup.CodeStorageReadOnly) {
		return err // already one (a statement's, returned by the transaction)
	}
	code := storageCode(err)
	if code == "" {
		return err
	}
	s.set(code, err.Error())
	return fmt.Errorf("%w: %w", storageProblem(code), err)
}

// storageRow and storageRows are a statement's results whose errors are
// storage errors when they are a full disk or a read-only file: a write
// with RETURNING fails when its rows are read.
type storageRow struct {
	sqlstore.Scanner
	st *storageState
}

func (r storageRow) Scan(dest ...any) error { return r.st.wrap(r.Scanner.Scan(dest...)) }

type storageRows struct {
	sqlstore.Rows
	st *storageState
}

func (r storageRows) Err() error { return r.st.wrap(r.Rows.Err()) }

// storageProblem is the domain error of a storage code.
func storageProblem(code string) *nextup.Error {
	if code == nextup.CodeStorageReadOnly {
		return &nextup.Error{Kind: nextup.ErrUnavailable, Code: nextup.CodeStorageReadOnly,
			Message: "the database cannot be written (its file or disk is read-only); nothing was changed, reading still works",
			Data:    map[string]any{"retry_after_seconds": retryReadOnly}}
	}
	return &nextup.Error{Kind: nextup.ErrUnavailable, Code: nextup.CodeStorageFull,
		Message: "the database's disk is full; nothing was changed: try again later",
		Data:    map[string]any{"retry_after_seconds": retryFull}}
}

// Healthy reports whether the store can take writes: nil when no write
// has failed for want of space or write access, or when a probe shows the
// failure is over; otherwise the storage error (a *nextup.Error coded
// storage_full or storage_read_only) whose Message says what is wrong and
// whose Data holds "since", when it was first seen. The probe (only while a
// failure is remembered) commits a one-row write and checks that the file
// system has free space; it waits for the writer like any transaction.
func (db *DB) Healthy(ctx context.Context) error {
	code, since, cause := db.storage.get()
	if code == "" {
		return nil
	}
	problem := func(detail string) error {
		e := storageProblem(code)
		e.Message = detail
		e.Data["since"] = since.UTC()
		return e
	}
	if free, ok := freeSpace(filepath.Dir(db.path)); ok && free < minFree {
		return problem(fmt.Sprintf("%d KiB free on the database's file system (%s)", free>>10, filepath.Dir(db.path)))
	}
	// The file must be able to grow (SQLite's own limit, max_page_count,
	// gives SQLITE_FULL too): 64 KiB in a table made and undone in one
	// transaction, which allocates pages without writing them anywhere.
	// Then a write that dirties one page and commits: the write-ahead log
	// must take it, and the file must be writable.
	err := db.growProbe(ctx)
	if err == nil {
		_, err = db.write.ExecContext(ctx, `UPDATE schema_migrations SET applied_at = applied_at
			WHERE version = (SELECT max(version) FROM schema_migrations)`)
	}
	if err != nil {
		if c := storageCode(err); c != "" {
			db.storage.set(c, err.Error())
			code = c
			return problem(err.Error())
		}
		if ctx.Err() != nil {
			return problem(cause) // not known to be over
		}
		return fmt.Errorf("probe write: %w", err)
	}
	db.storage.clear()
	return nil
}

// growProbe allocates 64 KiB of new pages in a transaction it rolls back.
func (db *DB) growProbe(ctx context.Context) error {
	tx, err := db.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE: waits for the writer
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // the probe is undone whatever happened
	if _, err := tx.ExecContext(ctx, `CREATE TABLE nextup_space_probe (b BLOB) STRICT`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO nextup_space_probe VALUES (zeroblob(65536))`)
	return err
}

// readOnlyFile reports whether the database at path exists but cannot be
// written, and why (a read-only file system; a file or directory the
// process may not write).
func readOnlyFile(path string) (bool, string) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		f.Close()
		// SQLite also writes the -wal and -shm files beside it.
		if dirWritable(filepath.Dir(path)) {
			return false, ""
		}
		return true, "its directory cannot be written"
	}
	if errors.Is(err, syscall.EROFS) {
		return true, "its file system is read-only"
	}
	if errors.Is(err, os.ErrPermission) {
		return true, "the file may not be written"
	}
	return false, "" // missing (created) or another error (reported by the open)
}

// readOnlyDSN is the file: URI that opens path read-only. Without a
// write-ahead log beside it (a clean stop), the file is opened immutable:
// nothing can change it while the disk is read-only, and SQLite then needs
// no -shm file, which it could not create. With a log, SQLite reads the
// log through the -shm file left beside it.
func readOnlyDSN(path string) (string, error) {
	q := "mode=ro"
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		q += "&immutable=1"
	} else if _, err := os.Stat(path + "-shm"); err != nil {
		return "", fmt.Errorf("a write-ahead log without its -shm file cannot be read on a read-only disk: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return (&url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: q}).String(), nil
}

// joinDSN adds the driver's parameters to a path or a file: URI.
func joinDSN(dsn string, q url.Values) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + q.Encode()
	}
	return dsn + "?" + q.Encode()
}

// checkReadOnlySchema refuses a read-only database whose schema this build
// would have to migrate (it cannot), or is newer than this build's.
func (db *DB) checkReadOnlySchema(ctx context.Context) error {
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("open sqlite %s read-only: %w", db.path, err)
	}
	if latest := LatestVersion(); v != latest {
		return fmt.Errorf("open sqlite %s read-only: its schema is at version %d, this build's at %d, and a read-only file cannot be migrated", db.path, v, latest)
	}
	return nil
}
