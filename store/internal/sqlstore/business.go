package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// BusinessCols are the columns ScanBusiness reads, in its order.
const BusinessCols = `id, name, timezone, rules, api_key_hash, created_at, profile`

// ScanBusiness reads a row of BusinessCols. Rules and profile are JSON.
func ScanBusiness(r Scanner) (nextup.Business, error) {
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
	// Onto the zero value, so the stored rules are exactly what comes
	// back, except that rules stored before reminders existed (no
	// reminder_offsets_seconds) get the default reminders; every other
	// field is always written.
	b.Rules = nextup.Rules{ReminderOffsets: nextup.DefaultRules().ReminderOffsets}
	if err := json.Unmarshal([]byte(rules), &b.Rules); err != nil {
		return b, fmt.Errorf("business %s: rules: %w", b.ID, err)
	}
	b.CreatedAt = FromTS(created)
	return b, nil
}

// BusinessInsert inserts a business; BusinessInsertArgs gives its
// arguments.
const BusinessInsert = `INSERT INTO businesses (` + BusinessCols + `, rules_version, slug)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// BusinessInsertArgs returns the arguments of BusinessInsert for b.
func BusinessInsertArgs(b nextup.Business) ([]any, error) {
	rules, err := json.Marshal(b.Rules)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	profile, err := json.Marshal(b.Profile)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return []any{b.ID, b.Name, b.Timezone, string(rules), b.APIKeyHash, TS(b.CreatedAt), string(profile),
		b.Rules.Version, b.Profile.Slug}, nil
}

// Queries of businesses, each named after the Tx method that runs it.
const (
	// BusinessGet reads a business by id.
	BusinessGet = `SELECT ` + BusinessCols + ` FROM businesses WHERE id = ?`
	// BusinessProfileSet replaces a business's profile and slug.
	BusinessProfileSet = `UPDATE businesses SET profile = ?, slug = ? WHERE id = ?`
	// BusinessRulesSet replaces a business's rules only when their version
	// is the one before the new rules'.
	BusinessRulesSet = `UPDATE businesses SET rules = ?, rules_version = ? WHERE id = ? AND rules_version = ?`
	// BusinessByAPIKey reads a business by its API key's hash. Like every
	// look-up by secret or key, it repeats the "<> empty" condition of its
	// partial index, which SQLite needs before it uses the index.
	BusinessByAPIKey = `SELECT ` + BusinessCols + ` FROM businesses WHERE api_key_hash = ? AND api_key_hash <> ''`
	// BusinessBySlug reads a business by its public slug.
	BusinessBySlug = `SELECT ` + BusinessCols + ` FROM businesses WHERE slug = ? AND slug <> ''`
)

// BusinessCreate stores a business.
func (t *Tx) BusinessCreate(ctx context.Context, b nextup.Business) error {
	args, err := BusinessInsertArgs(b)
	if err != nil {
		return fmt.Errorf("create business %s: %w", b.ID, err)
	}
	_, err = t.r.Exec(ctx, BusinessInsert, args...)
	return t.err("create business "+b.ID, err)
}

// BusinessGet reads a business.
func (t *Tx) BusinessGet(ctx context.Context, id string) (nextup.Business, error) {
	b, err := ScanBusiness(t.r.QueryRow(ctx, BusinessGet, id))
	return b, t.err("get business "+id, err)
}

// BusinessByAPIKey reads the business whose API key has this hash.
func (t *Tx) BusinessByAPIKey(ctx context.Context, keyHash string) (nextup.Business, error) {
	if keyHash == "" {
		return nextup.Business{}, fmt.Errorf("business by api key: %w", nextup.ErrNotFound)
	}
	b, err := ScanBusiness(t.r.QueryRow(ctx, BusinessByAPIKey, keyHash))
	return b, t.err("business by api key", err)
}

// BusinessProfileSet replaces a business's profile and slug; a slug
// another business has is ErrConflict.
func (t *Tx) BusinessProfileSet(ctx context.Context, id string, p nextup.Profile) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("set profile of business %s: %w", id, err)
	}
	return t.execOne(ctx, "set profile of business "+id, "businesses", id,
		BusinessProfileSet, string(b), p.Slug, id)
}

// BusinessBySlug reads a business by its public slug.
func (t *Tx) BusinessBySlug(ctx context.Context, slug string) (nextup.Business, error) {
	if slug == "" {
		return nextup.Business{}, fmt.Errorf("business by slug: %w", nextup.ErrNotFound)
	}
	b, err := ScanBusiness(t.r.QueryRow(ctx, BusinessBySlug, slug))
	return b, t.err("business by slug "+slug, err)
}

// BusinessRulesSet replaces a business's rules when they follow the
// stored version (ErrConflict otherwise).
func (t *Tx) BusinessRulesSet(ctx context.Context, id string, rules nextup.Rules) error {
	b, err := json.Marshal(rules)
	if err != nil {
		return fmt.Errorf("set rules of business %s: %w", id, err)
	}
	return t.execOne(ctx, fmt.Sprintf("set rules v%d of business %s", rules.Version, id), "businesses", id,
		BusinessRulesSet, string(b), rules.Version, id, rules.Version-1)
}
