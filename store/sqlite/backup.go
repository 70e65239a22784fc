package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// Backups. Backup copies a live database with SQLite's online backup API
// inside one read transaction of its own connection: the copy is the
// committed state at one instant (WAL mode lets nextup serve go on
// writing meanwhile, and the snapshot is not disturbed by it), and the
// row count and checksum of every table are taken in that same
// transaction. The copy is then opened on its own, switched to a
// rollback journal (a single self-contained file), checked with PRAGMA
// integrity_check, and its counts and checksums must equal the
// snapshot's. It is written beside the destination and renamed into
// place after an fsync, so a backup file is either whole or absent.
//
// Restore goes the other way: the backup is copied beside the database,
// the copy checked (integrity, a nextup schema no newer than this build,
// counts and checksums), fsynced, the database's stale -wal and -shm
// removed (a log left from another file would be replayed onto the new
// one) and the copy renamed into place. It refuses a database another
// process has open (a running server would go on with the file it holds
// and overwrite the restore), and an existing file unless told to replace
// it.

// BackupReport is what Backup, Restore and Verify found.
type BackupReport struct {
	Path          string        // the file checked: the backup, or the restored database
	SchemaVersion int           // its highest migration
	PageSize      int           // bytes a page
	Pages         int           // pages in the file
	Bytes         int64         // the file's size
	Tables        []TableSum    // every table, by name
	Took          time.Duration // the whole operation
}

// TableSum is one table's row count and checksum: the SHA-256 of its rows
// in key order, each value with its type.
type TableSum struct {
	Name string
	Rows int64
	Sum  string // hex, the first 16 bytes
}

// Rows is the number of rows in all tables.
func (r BackupReport) Rows() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Rows
	}
	return n
}

// ErrBackupRefused is a backup or restore refused before anything changed:
// the target exists, a server holds it, or the backup is not a sound
// nextup database.
var ErrBackupRefused = errors.New("refused")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBackupRefused, fmt.Sprintf(format, args...))
}

// Backup writes a consistent, verified copy of the database at src (which
// may be in use by a running server) to dst. An existing dst is replaced
// only when replace is set.
func Backup(ctx context.Context, src, dst string, replace bool) (BackupReport, error) {
	start := time.Now()
	if _, err := os.Stat(src); err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	if same(src, dst) {
		return BackupReport{}, refused("backup: %s is the database itself", dst)
	}
	if _, err := os.Stat(dst); err == nil && !replace {
		return BackupReport{}, refused("backup: %s exists (--force replaces it)", dst)
	}
	tmp, err := tempBeside(dst, ".backup-")
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	defer removeDB(tmp) // after the rename there is nothing to remove

	// The source connection: mode=rw never creates a missing file.
	source, err := sql.Open("sqlite", fileURI(src, "rw")+"&_pragma=busy_timeout(10000)")
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: open %s: %w", src, err)
	}
	defer source.Close()
	conn, err := source.Conn(ctx)
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: open %s: %w", src, err)
	}
	defer conn.Close()
	snapshot, err := snapshotCopy(ctx, conn, tmp)
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup of %s: %w", src, err)
	}

	// The copy, on its own.
	rep, err := verifyFile(ctx, tmp, true)
	if err != nil {
		return BackupReport{}, fmt.Errorf("backup: the copy does not check: %w", err)
	}
	if err := sameSums(snapshot, rep.Tables); err != nil {
		return BackupReport{}, fmt.Errorf("backup: the copy differs from the database: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	rep.Path, rep.Took = dst, time.Since(start)
	return rep, nil
}

// snapshotCopy opens a read transaction on conn, sums every table in it,
// and copies the database as of that transaction to dst with the online
// backup API (whose one step reads inside the open transaction).
func snapshotCopy(ctx context.Context, conn *sql.Conn, dst string) (sums []TableSum, err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, err
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && err == nil {
			err = fmt.Errorf("end the read transaction: %w", rerr)
		}
	}()
	// The first read starts the snapshot; everything below sees it.
	if sums, err = tableSums(ctx, conn); err != nil {
		return nil, err
	}
	err = conn.Raw(func(dc any) error {
		b, ok := dc.(interface {
			NewBackup(string) (*sqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("the driver has no online backup (%T)", dc)
		}
		bk, err := b.NewBackup(dst)
		if err != nil {
			return fmt.Errorf("start the copy: %w", err)
		}
		_, serr := bk.Step(-1) // every page, in one step: one snapshot
		if ferr := bk.Finish(); serr == nil {
			serr = ferr
		}
		if serr != nil {
			return fmt.Errorf("copy: %w", serr)
		}
		return nil
	})
	return sums, err
}

// Restore replaces the database at db with a verified copy of the backup
// at from. It refuses, changing nothing, when another process has db
// open, when db exists and replace is not set, and when the backup is not
// a sound nextup database (damaged, truncated, not SQLite, no nextup
// schema, or a schema newer than this build's).
func Restore(ctx context.Context, from, db string, replace bool) (BackupReport, error) {
	start := time.Now()
	if same(from, db) {
		return BackupReport{}, refused("restore: %s is the backup itself", db)
	}
	if held, pid, err := heldByOther(db); err != nil {
		return BackupReport{}, fmt.Errorf("restore: %w", err)
	} else if held {
		return BackupReport{}, refused("restore: %s is open in another process (pid %d: a running nextup serve?); stop it first", db, pid)
	}
	if _, err := os.Stat(db); err == nil && !replace {
		return BackupReport{}, refused("restore: %s exists (--force replaces it)", db)
	}
	if _, err := os.Stat(from + "-wal"); err == nil {
		return BackupReport{}, refused("restore: %s has a write-ahead log beside it (%s-wal): it is a live database, not a backup; make one with nextup backup", from, from)
	}
	src, err := os.Open(from)
	if err != nil {
		return BackupReport{}, fmt.Errorf("restore: %w", err)
	}
	defer src.Close()
	tmp, err := tempBeside(db, ".restore-")
	if err != nil {
		return BackupReport{}, fmt.Errorf("restore: %w", err)
	}
	defer removeDB(tmp)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return BackupReport{}, fmt.Errorf("restore: %w", err)
	}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return BackupReport{}, fmt.Errorf("restore: copy %s: %w", from, err)
	}
	// The bytes checked are the bytes renamed into place.
	rep, err := verifyFile(ctx, tmp, true)
	if err != nil {
		return BackupReport{}, refused("restore: %s is not a sound nextup backup: %v", from, err)
	}
	// Replacing a file keeps its mode and owner (the server may run as
	// another user than the one restoring); a new file is 0600: it holds
	// personal data.
	if old, err := os.Stat(db); err == nil {
		if err := os.Chmod(tmp, old.Mode().Perm()); err != nil {
			return BackupReport{}, fmt.Errorf("restore: %w", err)
		}
		if err := sameOwner(old, tmp); err != nil {
			return BackupReport{}, fmt.Errorf("restore: keep the owner of %s: %w", db, err)
		}
	}
	if err := syncFile(tmp); err != nil {
		return BackupReport{}, fmt.Errorf("restore: %w", err)
	}
	if held, pid, err := heldByOther(db); err != nil || held {
		return BackupReport{}, refused("restore: %s was opened by another process (pid %d) meanwhile", db, pid)
	}
	for _, stale := range []string{db + "-wal", db + "-shm", db + "-journal"} {
		if err := os.Remove(stale); err != nil && !errors.Is(err, os.ErrNotExist) {
			return BackupReport{}, fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, db); err != nil {
		return BackupReport{}, fmt.Errorf("restore: %w", err)
	}
	if err := syncDir(filepath.Dir(db)); err != nil {
		return BackupReport{}, fmt.Errorf("restore: %w", err)
	}
	rep.Path, rep.Took = db, time.Since(start)
	return rep, nil
}

// Verify checks the backup at path without changing it: the file is whole,
// SQLite's integrity check passes, and its schema is nextup's, no newer
// than this build's. It reports its tables' counts and checksums.
func Verify(ctx context.Context, path string) (BackupReport, error) {
	start := time.Now()
	rep, err := verifyFile(ctx, path, false)
	rep.Took = time.Since(start)
	return rep, err
}

// verifyFile checks the database at path (see Verify). A private file (a
// copy of ours, which no one else has open) is first switched to a
// rollback journal, so that it is one file; any other is opened read-only.
func verifyFile(ctx context.Context, path string, private bool) (BackupReport, error) {
	rep := BackupReport{Path: path}
	if err := checkHeader(path, &rep); err != nil {
		return rep, err
	}
	mode := "ro"
	if private {
		mode = "rw"
	}
	// A read-only connection writes nothing, not even a -shm file, when
	// the file is in rollback-journal mode, as backups are.
	db, err := sql.Open("sqlite", fileURI(path, mode))
	if err != nil {
		return rep, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if private {
		var jm string
		if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&jm); err != nil {
			return rep, fmt.Errorf("journal mode: %w", err)
		}
	}
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return rep, fmt.Errorf("integrity check: %w", err)
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return rep, fmt.Errorf("integrity check: %w", err)
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, fmt.Errorf("integrity check: %w", err)
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], fmt.Sprintf("and %d more", len(problems)-3))
		}
		return rep, fmt.Errorf("integrity check: %s", strings.Join(problems, "; "))
	}
	var exists int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").Scan(&exists); err != nil {
		return rep, err
	}
	if exists == 0 {
		return rep, errors.New("no nextup schema in it (no schema_migrations table)")
	}
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&rep.SchemaVersion); err != nil {
		return rep, err
	}
	if latest := LatestVersion(); rep.SchemaVersion > latest {
		return rep, fmt.Errorf("its schema is at version %d, newer than this build's %d: restore it with a newer nextup", rep.SchemaVersion, latest)
	}
	if rep.SchemaVersion == 0 {
		return rep, errors.New("no migration applied in it")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	if rep.Tables, err = tableSums(ctx, conn); err != nil {
		return rep, err
	}
	return rep, nil
}

// checkHeader reads the SQLite header of path: the file is an SQLite
// database whose size is the page count the header records.
func checkHeader(path string, rep *BackupReport) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	rep.Bytes = st.Size()
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return fmt.Errorf("not an SQLite database (%d bytes)", st.Size())
	}
	if string(h[:16]) != "SQLite format 3\x00" {
		return errors.New("not an SQLite database (no SQLite header)")
	}
	ps := int(binary.BigEndian.Uint16(h[16:18]))
	if ps == 1 {
		ps = 65536
	}
	rep.PageSize = ps
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	// The header's page count is valid when its change counter matches
	// the one it was written with (SQLite 3.7.0 and later write both).
	if pages > 0 && binary.BigEndian.Uint32(h[24:28]) == binary.BigEndian.Uint32(h[92:96]) {
		if want := pages * int64(ps); st.Size() != want {
			return fmt.Errorf("truncated or padded: %d bytes, the header says %d pages of %d (%d bytes)", st.Size(), pages, ps, want)
		}
	}
	if ps > 0 {
		rep.Pages = int(st.Size() / int64(ps))
	}
	return nil
}

// tableSums counts and checksums every table of the database conn is on,
// in one statement each, in the caller's transaction if it has one.
func tableSums(ctx context.Context, conn *sql.Conn) ([]TableSum, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT IN ('sqlite_schema', 'sqlite_temp_schema') ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	type table struct {
		name      string
		withoutID bool
	}
	var tables []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.name, &t.withoutID); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []TableSum
	for _, t := range tables {
		order := "rowid"
		if t.withoutID {
			pk, err := primaryKey(ctx, conn, t.name)
			if err != nil {
				return nil, err
			}
			order = pk
		}
		s, err := sumTable(ctx, conn, t.name, order)
		if err != nil {
			return nil, fmt.Errorf("checksum %s: %w", t.name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// primaryKey is the ORDER BY of a WITHOUT ROWID table: its key columns.
func primaryKey(ctx context.Context, conn *sql.Conn, table string) (string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return "", err
		}
		cols = append(cols, quoteIdent(c))
	}
	if len(cols) == 0 {
		return "", fmt.Errorf("table %s: no key to order by", table)
	}
	return strings.Join(cols, ", "), rows.Err()
}

func sumTable(ctx context.Context, conn *sql.Conn, table, order string) (TableSum, error) {
	rows, err := conn.QueryContext(ctx, `SELECT * FROM `+quoteIdent(table)+` ORDER BY `+order)
	if err != nil {
		return TableSum{}, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return TableSum{}, err
	}
	h := sha256.New()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return TableSum{}, err
		}
		for _, v := range vals {
			hashValue(h, v)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return TableSum{}, err
	}
	return TableSum{Name: table, Rows: n, Sum: hex.EncodeToString(h.Sum(nil)[:16])}, nil
}

// hashValue writes one value with its type and length, so that no two
// different rows hash alike by running into each other.
func hashValue(h hash.Hash, v any) {
	var b []byte
	var tag byte
	switch x := v.(type) {
	case nil:
		tag = 'n'
	case int64:
		tag, b = 'i', strconv.AppendInt(nil, x, 10)
	case float64:
		tag, b = 'f', binary.BigEndian.AppendUint64(nil, math.Float64bits(x))
	case string:
		tag, b = 's', []byte(x)
	case []byte:
		tag, b = 'b', x
	case bool:
		tag, b = 'i', strconv.AppendBool(nil, x)
	case time.Time:
		tag, b = 't', []byte(x.UTC().Format(time.RFC3339Nano))
	default:
		tag, b = '?', fmt.Append(nil, x)
	}
	h.Write([]byte{tag})
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
	h.Write(b)
}

// sameSums says how the copy's tables differ from the snapshot's, nil
// when they do not.
func sameSums(want, got []TableSum) error {
	var diffs []string
	for _, w := range want {
		i := slices.IndexFunc(got, func(g TableSum) bool { return g.Name == w.Name })
		switch {
		case i < 0:
			diffs = append(diffs, w.Name+": missing")
		case got[i] != w:
			diffs = append(diffs, fmt.Sprintf("%s: %d rows (%s), want %d (%s)", w.Name, got[i].Rows, got[i].Sum, w.Rows, w.Sum))
		}
	}
	if len(got) != len(want) {
		diffs = append(diffs, fmt.Sprintf("%d tables, want %d", len(got), len(want)))
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}

// fileURI is a file: URI for path opened in mode (ro, rw, rwc).
func fileURI(path, mode string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=" + mode}
	return u.String()
}

func same(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && x == y {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// tempBeside creates an empty file in the directory of path, for a rename
// onto it.
func tempBeside(path, prefix string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+prefix+"*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	return name, f.Close()
}

// removeDB removes a database file that was not renamed into place, with
// the journal files SQLite may have left beside it.
func removeDB(path string) {
	for _, p := range []string{path, path + "-journal", path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
