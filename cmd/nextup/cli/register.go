package cli

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// What other builds add to the default command set. The AWS module's
// binary (aws/cmd/nextup-aws) registers its adapters here before Main, the
// way database/sql drivers register themselves: the default binary stays
// free of their SDKs, and every command is the same code in both.
var (
	registerMu  sync.Mutex
	mailParsers []func(ctx context.Context) (waitlist.MailParser, error)
	stores      = map[string]func(ctx context.Context, dsn string) (nextup.Store, error){}
)

// RegisterMailParser adds an optional model parser of the inbox lane.
// serve calls mk once at start-up; mk returns nil when its settings
// (environment variables) are absent, and the last parser made wins over
// --anthropic-api-key. The deterministic parser stays the fallback.
func RegisterMailParser(mk func(ctx context.Context) (waitlist.MailParser, error)) {
	registerMu.Lock()
	defer registerMu.Unlock()
	mailParsers = append(mailParsers, mk)
}

// RegisterStore makes --db URLs of scheme (for example "dynamodb", for
// dynamodb://…) open with open, in every command that takes --db. open
// gets the whole URL and returns a store ready for use (migrated).
// Registering a scheme twice, or the built-in postgres, panics.
func RegisterStore(scheme string, open func(ctx context.Context, dsn string) (nextup.Store, error)) {
	registerMu.Lock()
	defer registerMu.Unlock()
	scheme = strings.ToLower(scheme)
	if _, dup := stores[scheme]; dup || scheme == "postgres" || scheme == "postgresql" || scheme == "" {
		panic("cli: store scheme " + scheme + " registered twice or built in")
	}
	stores[scheme] = open
}

// registeredStore returns the opener of db's scheme, or nil.
func registeredStore(db string) func(ctx context.Context, dsn string) (nextup.Store, error) {
	scheme, _, ok := strings.Cut(db, "://")
	if !ok {
		return nil
	}
	registerMu.Lock()
	defer registerMu.Unlock()
	return stores[strings.ToLower(scheme)]
}

// registeredURLs names the registered stores' URLs for a usage message:
// " or a dynamodb:// URL", or "" when none is registered.
func registeredURLs() string {
	registerMu.Lock()
	defer registerMu.Unlock()
	var b strings.Builder
	for _, scheme := range slices.Sorted(maps.Keys(stores)) {
		b.WriteString(" or a " + scheme + ":// URL")
	}
	return b.String()
}

// registeredMailParsers returns the registered mail parser makers.
func registeredMailParsers() []func(ctx context.Context) (waitlist.MailParser, error) {
	registerMu.Lock()
	defer registerMu.Unlock()
	return append([]func(ctx context.Context) (waitlist.MailParser, error){}, mailParsers...)
}
