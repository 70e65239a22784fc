package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// migrations holds the schema as numbered files, NNNN_name.sql, applied in
// order. A file, once released, is never edited: a change is a new file.
//
//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the migrations the database has not seen yet, each in its
// own transaction together with its row in schema_migrations, so a failed
// migration leaves the schema at the previous version. Running it again, or
// from two processes at once, is harmless. A database whose schema is newer
// than this build is refused rather than used.
func (db *DB) Migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	current, err := db.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	ms, err := sqlstore.Pending(migrations, "migrations", current)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range ms {
		if err := db.apply(ctx, m); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
	}
	return nil
}

func (db *DB) apply(ctx context.Context, m sqlstore.Migration) (err error) {
	stx, err := db.write.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreDone(stx.Rollback()))
		}
	}()
	// Another process may have applied it since we looked.
	var n int
	if err := stx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return stx.Rollback()
	}
	if _, err := stx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := stx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
		m.Version, m.Name, sqlstore.TS(time.Now())); err != nil {
		return err
	}
	return stx.Commit()
}

func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

// SchemaVersion returns the highest migration applied to the database, 0
// for a new file.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var exists int
	if err := db.write.QueryRowContext(ctx,
		"SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").Scan(&exists); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if exists == 0 {
		return 0, nil
	}
	var v int
	if err := db.write.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// LatestVersion is the schema version this build brings a database to.
func LatestVersion() int { return sqlstore.LatestVersion(migrations, "migrations") }
