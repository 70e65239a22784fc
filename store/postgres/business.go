package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

const businessCols = `id, name, timezone, rules, api_key_hash, created_at, profile`

func scanBusiness(r scanner) (nextup.Business, error) {
	var (
		b       nextup.Business
		rules   string
		created int64
		profile string
	)
	if err := r.Scan(&b.ID, &b.Name, &b.Timezone, &rules, &b.APIKeyHash, &created, &profile); err != nil {
		return b, err
	}
	if err := json.Unmarshal([]byte(profile), &b.Profile); err != nil {
		return b, fmt.Errorf("business %s: profile: %w", b.ID, err)
	}
	// Onto the zero value, so the stored rules are exactly what comes back.
	b.Rules = nextup.Rules{}
	if err := json.Unmarshal([]byte(rules), &b.Rules); err != nil {
		return b, fmt.Errorf("business %s: rules: %w", b.ID, err)
	}
	b.CreatedAt = fromTS(created)
	return b, nil
}

func (t *tx) BusinessCreate(ctx context.Context, b nextup.Business) error {
	rules, err := json.Marshal(b.Rules)
	if err != nil {
		return fmt.Errorf("create business %s: rules: %w", b.ID, err)
	}
	profile, err := json.Marshal(b.Profile)
	if err != nil {
		return fmt.Errorf("create business %s: profile: %w", b.ID, err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO businesses (`+businessCols+`, rules_version, slug)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.ID, b.Name, b.Timezone, string(rules), b.APIKeyHash, ts(b.CreatedAt), string(profile), b.Rules.Version, b.Profile.Slug)
	return dbErr("create business "+b.ID, err)
}

func (t *tx) BusinessGet(ctx context.Context, id string) (nextup.Business, error) {
	b, err := scanBusiness(t.tx.QueryRowContext(ctx, `SELECT `+businessCols+` FROM businesses WHERE id = ?`, id))
	return b, dbErr("get business "+id, err)
}

func (t *tx) BusinessByAPIKey(ctx context.Context, keyHash string) (nextup.Business, error) {
	if keyHash == "" {
		return nextup.Business{}, fmt.Errorf("business by api key: %w", nextup.ErrNotFound)
	}
	b, err := scanBusiness(t.tx.QueryRowContext(ctx, qBusinessByAPIKey, keyHash))
	return b, dbErr("business by api key", err)
}

func (t *tx) BusinessProfileSet(ctx context.Context, id string, p nextup.Profile) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("set profile of business %s: %w", id, err)
	}
	return t.execOne(ctx, "set profile of business "+id, "businesses", id,
		`UPDATE businesses SET profile = ?, slug = ? WHERE id = ?`, string(b), p.Slug, id)
}

func (t *tx) BusinessBySlug(ctx context.Context, slug string) (nextup.Business, error) {
	if slug == "" {
		return nextup.Business{}, fmt.Errorf("business by slug: %w", nextup.ErrNotFound)
	}
	b, err := scanBusiness(t.tx.QueryRowContext(ctx, qBusinessBySlug, slug))
	return b, dbErr("business by slug "+slug, err)
}

func (t *tx) BusinessRulesSet(ctx context.Context, id string, rules nextup.Rules) error {
	b, err := json.Marshal(rules)
	if err != nil {
		return fmt.Errorf("set rules of business %s: %w", id, err)
	}
	return t.execOne(ctx, fmt.Sprintf("set rules v%d of business %s", rules.Version, id), "businesses", id,
		`UPDATE businesses SET rules = ?, rules_version = ? WHERE id = ? AND rules_version = ?`,
		string(b), rules.Version, id, rules.Version-1)
}

// Hot look-ups by secret or key, named so a test can check each reads
// its index (the partial indexes need the "<> empty" condition to be used).
const (
	qBusinessByAPIKey = `SELECT ` + businessCols + ` FROM businesses WHERE api_key_hash = ? AND api_key_hash <> ''`
	qBusinessBySlug   = `SELECT ` + businessCols + ` FROM businesses WHERE slug = ? AND slug <> ''`
)
