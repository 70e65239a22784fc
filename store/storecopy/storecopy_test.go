package storecopy_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/store/storecopy"
)

// TestCopyStaff copies one business's staff accounts with their sessions
// and password resets, and its proposed rows, and nothing of another
// business's.
func TestCopyStaff(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := pgtest.NewSchema(t, 4)
	src, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "nextup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, schema.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := dst.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	now := time.Date(2031, 3, 10, 9, 0, 0, 123456000, time.UTC)
	until := now.Add(time.Hour)
	session := func(s nextup.Staff) nextup.Session {
		return nextup.Session{IDHash: nextup.HashToken("ses-" + s.ID), StaffID: s.ID, BusinessID: s.BusinessID,
			CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}
	}
	reset := func(s nextup.Staff) nextup.PasswordReset {
		return nextup.PasswordReset{TokenHash: nextup.HashToken("rst-" + s.ID), StaffID: s.ID, CreatedAt: now,
			ExpiresAt: now.Add(time.Hour)}
	}
	var staff []nextup.Staff
	if err := src.InTx(ctx, func(tx nextup.Tx) error {
		for _, bid := range []string{"biz_a", "biz_b"} {
			if err := tx.BusinessCreate(ctx, nextup.Business{ID: bid, Name: bid, Timezone: "UTC", Rules: nextup.DefaultRules(),
				CreatedAt: now}); err != nil {
				return err
			}
		}
		staff = []nextup.Staff{
			{ID: "stf_1", BusinessID: "biz_a", Email: "ana@example.com", Name: "Ana", PasswordHash: "h1", CreatedAt: now},
			{ID: "stf_2", BusinessID: "biz_a", Email: "ben@example.com", Name: "Ben", PasswordHash: "h2", FailedSignIns: 5,
				LockedUntil: &until, CreatedAt: now},
			{ID: "stf_3", BusinessID: "biz_b", Email: "cy@example.com", Name: "Cy", PasswordHash: "h3", CreatedAt: now},
		}
		for i, bid := range []string{"biz_a", "biz_b"} {
			if err := tx.ProposalCreate(ctx, nextup.Proposal{ID: fmt.Sprintf("prp_%d", i), BusinessID: bid,
				Source: nextup.ProposalFromEmail, SourceRef: "<m@x>", ReceivedAt: now, Excerpt: "a cut on Tuesday?",
				Fields:     nextup.ProposalFields{Name: "Ann", Service: "cut", Earliest: now.Add(24 * time.Hour)},
				Confidence: map[string]float64{"name": 0.8}, Problems: []string{"no contact"}, State: nextup.ProposalOpen,
				ActionHash: nextup.HashToken(bid), ActionExpiresAt: now.Add(72 * time.Hour), CreatedAt: now}); err != nil {
				return err
			}
		}
		for _, s := range staff {
			if err := tx.StaffCreate(ctx, s); err != nil {
				return err
			}
			if err := tx.SessionCreate(ctx, session(s)); err != nil {
				return err
			}
			if err := tx.PasswordResetCreate(ctx, reset(s)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	rep, err := storecopy.Copy(ctx, src, dst, []string{"biz_a"})
	if err != nil {
		t.Fatalf("Copy: %v\n%+v", err, rep.Checks)
	}
	if want := 1 + 3*2 + 1; rep.Rows != want {
		t.Errorf("copied %d rows, want %d (the business, its two staff with a session and a reset each, its proposal)", rep.Rows, want)
	}
	found := map[string]bool{}
	for _, c := range rep.Checks {
		switch c.Kind {
		case "staff":
			found[c.Kind] = true
			if c.From.N != 2 || !c.OK() {
				t.Errorf("staff check: %+v, want 2 accounts, verified", c)
			}
		case "proposals":
			found[c.Kind] = true
			if c.From.N != 1 || !c.OK() {
				t.Errorf("proposals check: %+v, want 1 proposal, verified", c)
			}
		}
	}
	if !found["staff"] || !found["proposals"] {
		t.Errorf("no staff or proposals check in %+v", rep.Checks)
	}

	if err := dst.InTx(ctx, func(tx nextup.Tx) error {
		for _, s := range staff {
			_, serr := tx.SessionGet(ctx, session(s).IDHash)
			_, rerr := tx.PasswordResetUse(ctx, reset(s).TokenHash, now)
			if s.BusinessID == "biz_a" && (serr != nil || rerr != nil) {
				return fmt.Errorf("session and reset of %s after the copy: %v, %v", s.ID, serr, rerr)
			}
			if s.BusinessID != "biz_a" && (serr == nil || rerr == nil) {
				return fmt.Errorf("session or reset of %s, of a business not copied, is in the copy", s.ID)
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// TestCopyGuests copies an event's registrations with their guests —
// names, check-ins, places — and verifies them as a kind of their own;
// another business's guests stay behind.
func TestCopyGuests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := pgtest.NewSchema(t, 4)
	src, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "nextup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, schema.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := dst.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	now := time.Date(2031, 3, 10, 9, 0, 0, 123456000, time.UTC)
	in := now.Add(time.Hour)
	guests := map[string][]nextup.Guest{}
	if err := src.InTx(ctx, func(tx nextup.Tx) error {
		for _, bid := range []string{"biz_a", "biz_b"} {
			if err := tx.BusinessCreate(ctx, nextup.Business{ID: bid, Name: bid, Timezone: "UTC", Rules: nextup.DefaultRules(),
				CreatedAt: now}); err != nil {
				return err
			}
			ev := nextup.Slot{ID: bid + "_ev", BusinessID: bid, Kind: nextup.KindEvent, Title: "Party", StartsAt: now.Add(48 * time.Hour),
				EndsAt: now.Add(50 * time.Hour), Capacity: 10, Seating: nextup.SeatingShared, MinParty: 1, CreatedAt: now,
				Event: &nextup.EventSettings{MaxGuests: 3, ClaimWindow: time.Hour, Currency: "eur"}}
			if err := tx.SlotCreate(ctx, ev); err != nil {
				return err
			}
			for i, party := range []int{3, 2} {
				e, err := tx.EntryCreate(ctx, nextup.Entry{ID: fmt.Sprintf("%s_ent%d", bid, i), BusinessID: bid, Name: "Host",
					Email: fmt.Sprintf("h%d@example.com", i), EventID: ev.ID, PartySize: party, Source: "api", JoinedAt: now,
					State: nextup.EntryBooked, UpdatedAt: now})
				if err != nil {
					return err
				}
				for n := 1; n < party; n++ {
					g := nextup.Guest{BusinessID: bid, SlotID: ev.ID, EntryID: e.ID, Index: n, Name: fmt.Sprintf("Guest %d.%d", i, n)}
					if n == 2 {
						g.Name, g.CheckedInAt = "", &in // unnamed, at the door
					}
					guests[bid] = append(guests[bid], g)
				}
				if err := tx.GuestsCreate(ctx, guests[bid][len(guests[bid])-(party-1):]); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	rep, err := storecopy.Copy(ctx, src, dst, []string{"biz_a"})
	if err != nil {
		t.Fatalf("Copy: %v\n%+v", err, rep.Checks)
	}
	checked := false
	for _, c := range rep.Checks {
		if c.Kind == "guests" {
			checked = true
			if c.From.N != 3 || !c.OK() {
				t.Errorf("guests check: %+v, want 3 guests, verified", c)
			}
		}
	}
	if !checked {
		t.Errorf("no guests check in %+v", rep.Checks)
	}
	if err := dst.Read(ctx, func(tx nextup.Tx) error {
		got, err := tx.GuestListBySlot(ctx, "biz_a_ev")
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(guests["biz_a"]) {
			t.Errorf("biz_a's guests in the copy:\n got %v\nwant %v", got, guests["biz_a"])
		}
		if got, err = tx.GuestListBySlot(ctx, "biz_b_ev"); err != nil || len(got) != 0 {
			t.Errorf("biz_b's guests in the copy: %v, %v; want none: biz_b was not copied", got, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCopySummaries copies a business's monthly summaries, sent and not,
// their figures byte for byte, and verifies them as a kind of their own;
// another business's summaries stay behind.
func TestCopySummaries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := pgtest.NewSchema(t, 4)
	src, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "nextup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, schema.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := dst.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	now := time.Date(2031, 3, 10, 9, 0, 0, 123456000, time.UTC)
	sent := now.Add(time.Minute)
	summaries := map[string][]nextup.Summary{}
	if err := src.InTx(ctx, func(tx nextup.Tx) error {
		for _, bid := range []string{"biz_a", "biz_b"} {
			if err := tx.BusinessCreate(ctx, nextup.Business{ID: bid, Name: bid, Timezone: "UTC", Rules: nextup.DefaultRules(),
				CreatedAt: now}); err != nil {
				return err
			}
			for i, month := range []string{"2031-02", "2031-01"} {
				s := nextup.Summary{BusinessID: bid, Month: month, Figures: []byte(`{"freed": 12,"filled":9}`),
					Narrative: "Nine of twelve filled.", NarrativeBy: "template", CreatedAt: now}
				if i == 0 {
					s.NarrativeBy, s.SentAt, s.MessageID = "model", &sent, "msg_"+bid
				}
				if err := tx.SummaryCreate(ctx, s); err != nil {
					return err
				}
				summaries[bid] = append(summaries[bid], s)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	rep, err := storecopy.Copy(ctx, src, dst, []string{"biz_a"})
	if err != nil {
		t.Fatalf("Copy: %v\n%+v", err, rep.Checks)
	}
	checked := false
	for _, c := range rep.Checks {
		if c.Kind == "summaries" {
			checked = true
			if c.From.N != 2 || !c.OK() {
				t.Errorf("summaries check: %+v, want 2 summaries, verified", c)
			}
		}
	}
	if !checked {
		t.Errorf("no summaries check in %+v", rep.Checks)
	}
	if err := dst.Read(ctx, func(tx nextup.Tx) error {
		got, err := tx.SummaryList(ctx, "biz_a", 0)
		if err != nil {
			return err
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(summaries["biz_a"])
		if string(g) != string(w) {
			t.Errorf("biz_a's summaries in the copy:\n got %s\nwant %s", g, w)
		}
		if got, err = tx.SummaryList(ctx, "biz_b", 0); err != nil || len(got) != 0 {
			t.Errorf("biz_b's summaries in the copy: %v, %v; want none: biz_b was not copied", got, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
