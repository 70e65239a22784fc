package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

func (t *tx) BusinessCreate(ctx context.Context, b nextup.Business) error {
	args, err := sqlstore.BusinessInsertArgs(b)
	if err != nil {
		return fmt.Errorf("create business %s: %w", b.ID, err)
	}
	_, err = t.tx.ExecContext(ctx, sqlstore.BusinessInsert, args...)
	return dbErr("create business "+b.ID, err)
}

func (t *tx) BusinessGet(ctx context.Context, id string) (nextup.Business, error) {
	b, err := sqlstore.ScanBusiness(t.tx.QueryRowContext(ctx, sqlstore.BusinessGet, id))
	return b, dbErr("get business "+id, err)
}

func (t *tx) BusinessByAPIKey(ctx context.Context, keyHash string) (nextup.Business, error) {
	if keyHash == "" {
		return nextup.Business{}, fmt.Errorf("business by api key: %w", nextup.ErrNotFound)
	}
	b, err := sqlstore.ScanBusiness(t.tx.QueryRowContext(ctx, sqlstore.BusinessByAPIKey, keyHash))
	return b, dbErr("business by api key", err)
}

func (t *tx) BusinessProfileSet(ctx context.Context, id string, p nextup.Profile) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("set profile of business %s: %w", id, err)
	}
	return t.execOne(ctx, "set profile of business "+id, "businesses", id,
		sqlstore.BusinessProfileSet, string(b), p.Slug, id)
}

func (t *tx) BusinessBySlug(ctx context.Context, slug string) (nextup.Business, error) {
	if slug == "" {
		return nextup.Business{}, fmt.Errorf("business by slug: %w", nextup.ErrNotFound)
	}
	b, err := sqlstore.ScanBusiness(t.tx.QueryRowContext(ctx, sqlstore.BusinessBySlug, slug))
	return b, dbErr("business by slug "+slug, err)
}

func (t *tx) BusinessRulesSet(ctx context.Context, id string, rules nextup.Rules) error {
	b, err := json.Marshal(rules)
	if err != nil {
		return fmt.Errorf("set rules of business %s: %w", id, err)
	}
	return t.execOne(ctx, fmt.Sprintf("set rules v%d of business %s", rules.Version, id), "businesses", id,
		sqlstore.BusinessRulesSet, string(b), rules.Version, id, rules.Version-1)
}
