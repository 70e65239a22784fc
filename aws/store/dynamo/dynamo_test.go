package dynamo

import (
	"context"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/internal/dynotest"
	"github.com/nextup-dev/nextup/store/storetest"
)

// open returns a store on a new table of the test server.
func open(t testing.TB) *Store {
	t.Helper()
	s := New(dynotest.Client(t), dynotest.Table(t))
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs store/storetest, unchanged, on DynamoDB.
func TestConformance(t *testing.T) {
	storetest.RunHarness(t, storetest.Harness{
		Open: func(t *testing.T) nextup.Store { return open(t) },
		Reopen: func(t *testing.T, old nextup.Store) nextup.Store {
			s := New(dynotest.Client(t), old.(*Store).Table())
			t.Cleanup(func() { s.Close() })
			return s
		},
	})
}
