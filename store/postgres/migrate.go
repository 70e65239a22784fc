package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

// migrations holds the schema as numbered files, NNNN_name.sql, applied in
// order. A file, once released, is never edited: a change is a new file.
//
//go:embed migrations/*.sql
var migrations embed.FS

// lockKey names the advisory lock that Migrate holds: one per schema, so
// instances migrating different schemas of one database do not wait for
// each other.
const lockKey = `hashtextextended('nextup.migrate:' || current_schema(), 0)`

// Migrate applies the migrations the database has not seen yet, each in its
// own transaction together with its row in schema_migrations, so a failed
// migration leaves the schema at the previous version. Several instances
// may start at once: Migrate holds a session advisory lock for the schema
// while it looks and applies, so one migrates and the others then find
// nothing to do. A database whose schema is newer than this build is
// refused rather than used.
func (db *DB) Migrate(ctx context.Context) (err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+lockKey+`)`); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() {
		// The lock belongs to the session: release it even when ctx is done.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+lockKey+`)`); uerr != nil {
			err = errors.Join(err, fmt.Errorf("migrate: unlock: %w", uerr))
			// A connection that may still hold the lock is not reused.
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text    NOT NULL,
		applied_at bigint  NOT NULL
	)`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: schema version: %w", err)
	}
	ms, err := sqlstore.Pending(migrations, "migrations", current)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range ms {
		if err := apply(ctx, conn.Conn(), m); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, conn *pgx.Conn, m sqlstore.Migration) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// The simple protocol runs a file of several statements.
		if _, err := tx.Exec(ctx, m.SQL, pgx.QueryExecModeSimpleProtocol); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, sqlstore.TS(time.Now()))
		return err
	})
}

// SchemaVersion returns the highest migration applied to the database, 0
// for a new one.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var exists bool
	if err := db.pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

// LatestVersion is the schema version this build brings a database to.
func LatestVersion() int { return sqlstore.LatestVersion(migrations, "migrations") }
