package sqlstore

import (
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
