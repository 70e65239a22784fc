package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// The writer's prepared statements. SQLite parses and plans a statement
// every time its text is run unprepared, and for the store's short
// transactions that was a quarter of a write's CPU. The statements the
// writer's transactions run are prepared once, on the writer connection,
// between groups (a statement cannot be prepared on the connection while
// a transaction holds it), and each transaction then runs them through
// Tx.Stmt, which reuses the statement prepared on the same connection.
// A query seen for the first time runs unprepared and is prepared after
// its group. The store's statements are a fixed set, with a few variants
// (lists of states); maxStmts bounds them all the same.

const maxStmts = 512

// stmtCache is the writer's; its lock is held only around the maps, never
// while a statement is prepared (preparing waits for the connection).
type stmtCache struct {
	pool *sql.DB
	mu   sync.Mutex
	m    map[string]*sql.Stmt
	want []string
}

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, m: map[string]*sql.Stmt{}}
}

// get returns q's prepared statement, or nil, noting it to prepare.
func (c *stmtCache) get(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if len(c.m)+len(c.want) < maxStmts {
		c.m[q] = nil // asked for once
		c.want = append(c.want, q)
	}
	return nil
}

// prepare prepares the statements noted since the last call; one that
// fails to prepare stays unprepared.
func (c *stmtCache) prepare(ctx context.Context) {
	c.mu.Lock()
	want := c.want
	c.want = nil
	c.mu.Unlock()
	for _, q := range want {
		if st, err := c.pool.PrepareContext(ctx, q); err == nil {
			c.mu.Lock()
			c.m[q] = st
			c.mu.Unlock()
		}
	}
}

// close closes every prepared statement.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		if st != nil {
			st.Close()
		}
	}
}
