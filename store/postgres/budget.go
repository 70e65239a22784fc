package postgres

import (
	"context"
	"fmt"
	"time"
)

// Send budgets: one token bucket per provider account in the database, so
// that instances sharing it send at the provider's rate between them, not
// each at it (outbox.Budget; the command line wires it to the relay).

// takeToken takes one token of the bucket: it refills at tps since the
// bucket was last drawn on (at most to burst), then goes down by one,
// below zero when the tokens are spent, which is a debt the sender pays by
// waiting. The row's lock makes concurrent takers queue on it, each
// seeing the one before.
const takeToken = `INSERT INTO send_budget AS b (account, tokens, at) VALUES ($1, $2::float8 - 1, $3)
	ON CONFLICT (account) DO UPDATE SET
		tokens = LEAST($2::float8, b.tokens + GREATEST(0, $3 - b.at) * $4::float8 / 1e6) - 1,
		at = GREATEST(b.at, $3)
	RETURNING tokens, at`

// returnToken gives a token back, up to burst.
const returnToken = `UPDATE send_budget SET tokens = LEAST($2::float8, tokens + 1) WHERE account = $1`

// TakeToken takes a token of account's bucket (tps a second, burst at
// most) at now, and returns when it may be spent: now when the bucket had
// one, later when other senders (instances) have drawn it down.
func (db *DB) TakeToken(ctx context.Context, account string, tps float64, burst int, now time.Time) (time.Time, error) {
	if tps <= 0 {
		return now, nil
	}
	var tokens float64
	var at int64
	err := db.pool.QueryRow(ctx, takeToken, account, max(burst, 1), now.UnixMicro(), tps).Scan(&tokens, &at)
	if err != nil {
		return time.Time{}, fmt.Errorf("take a send token of %s: %w", account, err)
	}
	ready := time.UnixMicro(at).UTC()
	if tokens < 0 {
		ready = ready.Add(time.Duration(-tokens / tps * float64(time.Second)))
	}
	if ready.Before(now) {
		ready = now
	}
	return ready, nil
}

// ReturnToken gives back a token taken and not spent.
func (db *DB) ReturnToken(ctx context.Context, account string, burst int) error {
	if _, err := db.pool.Exec(ctx, returnToken, account, max(burst, 1)); err != nil {
		return fmt.Errorf("return a send token of %s: %w", account, err)
	}
	return nil
}
