package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestReplayCommand: `nextup replay entry ID` prints the entry's places
// and the slots it was passed over for, with why; --slot the paragraph
// for one; --json what the API returns; an unknown entry is an error.
func TestReplayCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "n.db")
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	svc := waitlist.New(st, nextup.RealClock{}, "http://localhost:8080")
	biz, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Corner Cuts", Timezone: "Europe/London"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, name := range []string{"Ann", "Bea"} {
		res, err := svc.Join(ctx, biz.ID, waitlist.JoinParams{Name: name, Email: strings.ToLower(name) + "@example.com", Service: "haircut"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Entry.ID)
	}
	start := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
	sl, _, err := svc.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "haircut", StartsAt: start, EndsAt: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Release(ctx, biz.ID, sl.ID, 0, "cancellation"); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, err := runCLI(t, "replay", "entry", ids[1], "--db", db)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	for _, want := range []string{"Bea (" + ids[1] + "), service:haircut", "#2  joined", "#1  ahead_offered", sl.ID + "  skipped  earlier_in_line",
		"went to someone earlier in line (place 1; you were at place 2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay lacks %q:\n%s", want, out)
		}
	}
	out, err = runCLI(t, "replay", "entry", ids[0], "--slot", sl.ID, "--db", db)
	if err != nil || !strings.HasPrefix(out, "Ann, slot "+sl.ID+": offered.") {
		t.Errorf("replay --slot: %v\n%s", err, out)
	}
	out, err = runCLI(t, "replay", "entry", ids[1], "--json", "--db", db)
	var h struct {
		EntryID string `json:"entry_id"`
		Slots   []struct{ Why string }
	}
	if err != nil || json.Unmarshal([]byte(out), &h) != nil || h.EntryID != ids[1] || len(h.Slots) != 1 || h.Slots[0].Why != "earlier_in_line" {
		t.Errorf("replay --json: %v %+v\n%s", err, h, out)
	}
	if out, err := runCLI(t, "replay", "entry", "ent_nope", "--db", db); err == nil {
		t.Errorf("an unknown entry replayed: %s", out)
	}
	if _, err := runCLI(t, "replay", "ent_x", "--db", db); err == nil {
		t.Error("replay without `entry` was no usage error")
	}
}
