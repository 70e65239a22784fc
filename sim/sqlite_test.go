package sim

import (
	"context"
	"path/filepath"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
)

// SQLite keeps the seed's store in the SQLite file nextup.db in dir, which
// should be fresh for every seed. It is the tests' (the simulation itself
// imports no store: adapters meet only in cmd/ and in tests).
func SQLite(dir string) Backend {
	path := filepath.Join(dir, "nextup.db")
	return Backend{Name: "sqlite", Open: func(ctx context.Context) (nextup.Store, error) {
		db, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		return db, nil
	}}
}
