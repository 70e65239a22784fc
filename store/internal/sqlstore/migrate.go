package sqlstore

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered schema file, NNNN_name.sql.
type Migration struct {
	Version int    // NNNN
	Name    string // the file name without .sql
	SQL     string // the file's statements
}

// LoadMigrations reads the files matching dir/*.sql from fsys in version
// order. A name that is not NNNN_name.sql, or two files with one number,
// is an error. Each store embeds its own dialect's files.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	files, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, f := range files {
		base := path.Base(f)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", base)
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: strings.TrimSuffix(base, ".sql"), SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a number", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

// LatestVersion returns the highest version among the migrations in
// fsys's dir: the schema version a store brings its database to (0 when
// there are none, or they do not load).
func LatestVersion(fsys fs.FS, dir string) int {
	ms, err := LoadMigrations(fsys, dir)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Pending returns, in version order, the migrations in fsys's dir that a
// database at version current has not seen. A database whose schema is
// newer than the files is refused rather than used: this build would not
// know what the newer schema means.
func Pending(fsys fs.FS, dir string, current int) ([]Migration, error) {
	ms, err := LoadMigrations(fsys, dir)
	if err != nil {
		return nil, err
	}
	latest := 0
	if len(ms) > 0 {
		latest = ms[len(ms)-1].Version
	}
	if current > latest {
		return nil, fmt.Errorf("database schema version %d is newer than this build knows (%d): upgrade nextup", current, latest)
	}
	i := 0
	for i < len(ms) && ms[i].Version <= current {
		i++
	}
	return ms[i:], nil
}
