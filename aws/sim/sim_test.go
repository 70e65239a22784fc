// Package sim runs nextup's randomized simulation (package sim of the main
// module) on the DynamoDB store: each seed takes the same steps as on
// SQLite, every check runs after every step, and the two runs must end in
// the same state.
package sim

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/sim"
	"github.com/nextup-dev/nextup/store/sqlite"
)

var (
	seeds = flag.Int("sim.seeds", 8, "seeds run on DynamoDB (make test runs 8; make sim-dynamo more)")
	first = flag.Uint64("sim.first", 1, "the first seed")
	steps = flag.Int("sim.steps", sim.DefaultSteps, "steps per seed")
)

// sqliteBackend keeps a seed's store in a SQLite file in dir.
func sqliteBackend(dir string) sim.Backend {
	path := filepath.Join(dir, "nextup.db")
	return sim.Backend{Name: "sqlite", Open: func(ctx context.Context) (nextup.Store, error) {
		return sqlite.Open(ctx, path)
	}}
}

// dynamoBackend keeps a seed's store in a table of its own on the test
// server; a restart opens the same table again.
func dynamoBackend(t *testing.T, optimistic bool) sim.Backend {
	client := dynotest.Client(t)
	table := dynotest.Table(t)
	made := false
	return sim.Backend{Name: "dynamodb", Optimistic: optimistic, Open: func(ctx context.Context) (nextup.Store, error) {
		s := dynamo.New(client, table)
		if !made {
			if err := s.Migrate(ctx); err != nil {
				return nil, err
			}
			made = true
		}
		return s, nil
	}}
}

// TestSimDynamoDB runs -sim.seeds seeds on DynamoDB and on SQLite and
// compares them step by step and in their final state.
//
//	go test ./aws/sim -sim.seeds=200
func TestSimDynamoDB(t *testing.T) {
	for i := range *seeds {
		seed := *first + uint64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			dy := sim.RunSeed(t.Context(), dynamoBackend(t, true), seed, *steps, nil)
			if f := dy.Failure(); f != "" {
				t.Fatalf("on DynamoDB:\n%s\n(replay: go test ./aws/sim -run TestSimDynamoDB/%d -sim.first=%d -sim.seeds=1)", f, seed, seed)
			}
			lite := sim.RunSeed(t.Context(), sqliteBackend(t.TempDir()), seed, *steps, nil)
			if f := lite.Failure(); f != "" {
				t.Fatalf("on SQLite:\n%s", f)
			}
			if d := sim.Compare(lite, dy); d != "" {
				t.Fatalf("seed %d ends differently on DynamoDB than on SQLite:\n%s", seed, d)
			}
		})
	}
}

// TestSimDynamoDBRaces runs seeds on DynamoDB with the concurrent claims
// racing in full (every claimer at once, losers running again after a
// lost commit): every check of the simulation holds, exactly one claim
// books; nothing to compare with, since which claimer wins is the
// scheduler's.
func TestSimDynamoDBRaces(t *testing.T) {
	for i := range max(*seeds/2, 1) {
		seed := 1000 + *first + uint64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			if f := sim.RunSeed(t.Context(), dynamoBackend(t, false), seed, *steps, nil).Failure(); f != "" {
				t.Fatalf("on DynamoDB, racing:\n%s", f)
			}
		})
	}
}
