package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
)

// registerTestStore registers the scheme "clitest": clitest:///PATH opens
// the embedded store at PATH and counts the opens. Registration is for
// the life of the process, so it happens once however often the test runs.
var (
	registerTestStore sync.Once
	testStoreOpens    atomic.Int64
)

// TestRegisterStore: a store registered for a --db scheme is what every
// command opens for such a URL (what the AWS module does for
// dynamodb://); the same scheme twice is refused.
func TestRegisterStore(t *testing.T) {
	t.Parallel()
	registerTestStore.Do(func() {
		RegisterStore("clitest", func(ctx context.Context, dsn string) (nextup.Store, error) {
			testStoreOpens.Add(1)
			return sqlite.Open(ctx, strings.TrimPrefix(dsn, "clitest://"))
		})
	})
	path := filepath.Join(t.TempDir(), "registered.db")
	before := testStoreOpens.Load()
	out, err := runCLI(t, "business", "create", "--db", "clitest://"+path, "--name", "Corner Cuts", "--timezone", "Europe/London")
	if err != nil {
		t.Fatalf("business create: %v\n%s", err, out)
	}
	if got := testStoreOpens.Load() - before; got < 1 {
		t.Fatalf("the registered store was not opened")
	}
	var b struct{ ID string }
	if err := json.Unmarshal([]byte(out), &b); err != nil || b.ID == "" {
		t.Fatalf("output %q: %v", out, err)
	}
	// The business is in the file the registered opener was given.
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Read(context.Background(), func(tx nextup.Tx) error {
		_, err := tx.BusinessGet(context.Background(), b.ID)
		return err
	}); err != nil {
		t.Fatalf("business %s not in the registered store: %v", b.ID, err)
	}
	if out, err := runCLI(t, "migrate", "--db", "clitest://"+path); err != nil || !strings.Contains(out, "up to date") {
		t.Fatalf("migrate on a registered store: %v\n%s", err, out)
	}

	defer func() {
		if recover() == nil {
			t.Error("registering a scheme twice did not panic")
		}
	}()
	RegisterStore("clitest", nil)
}
