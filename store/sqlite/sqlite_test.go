package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
	"github.com/nextup-dev/nextup/store/storetest"
)

// TestConformance runs the store conformance suite on fresh files, with
// the subtests that close and reopen a database.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.RunHarness(t, storetest.Harness{
		Open: func(t *testing.T) nextup.Store { return open(t) },
		Reopen: func(t *testing.T, s nextup.Store) nextup.Store {
			db, err := Open(t.Context(), s.(*DB).Path())
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	})
}

// open returns a migrated store on a new file in t.TempDir, closed at the
// end of the test (closing twice is harmless).
func open(t testing.TB, opts ...Option) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "nextup.db"), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// t0 carries microseconds, like the clock does.
var t0 = time.Date(2031, time.March, 10, 9, 0, 0, 0, time.UTC).Add(123456 * time.Microsecond)

type fixture struct {
	t   *testing.T
	ctx context.Context
	db  *DB
	n   int
	mu  sync.Mutex
	biz nextup.Business
}

func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: t.Context(), db: open(t)}
	f.biz = nextup.Business{ID: "biz_1", Name: "Salon", Timezone: "Europe/London", Rules: nextup.DefaultRules(),
		APIKeyHash: nextup.HashToken("key"), CreatedAt: t0}
	f.tx(func(tx nextup.Tx) error { return tx.BusinessCreate(f.ctx, f.biz) })
	return f
}

func (f *fixture) id(prefix string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return fmt.Sprintf("%s_%04d", prefix, f.n)
}

func (f *fixture) tx(fn func(tx nextup.Tx) error) {
	f.t.Helper()
	if err := f.db.InTx(f.ctx, fn); err != nil {
		f.t.Fatalf("InTx: %v", err)
	}
}

func (f *fixture) read(fn func(tx nextup.Tx) error) {
	f.t.Helper()
	if err := f.db.Read(f.ctx, fn); err != nil {
		f.t.Fatalf("Read: %v", err)
	}
}

func (f *fixture) slot(mods ...func(*nextup.Slot)) nextup.Slot {
	f.t.Helper()
	start := t0.Add(24 * time.Hour).Truncate(time.Hour)
	s := nextup.Slot{ID: f.id("slot"), BusinessID: f.biz.ID, Kind: nextup.KindSlot, Service: "cut", StartsAt: start,
		EndsAt: start.Add(30 * time.Minute), Capacity: 1, Seating: nextup.SeatingUnit, MinParty: 1, CreatedAt: t0}
	for _, m := range mods {
		m(&s)
	}
	f.tx(func(tx nextup.Tx) error { return tx.SlotCreate(f.ctx, s) })
	return s
}

func (f *fixture) entry(mods ...func(*nextup.Entry)) nextup.Entry {
	f.t.Helper()
	id := f.id("ent")
	e := nextup.Entry{ID: id, BusinessID: f.biz.ID, Name: "Person " + id, Email: id + "@example.com", Service: "cut",
		PartySize: 1, JoinedAt: t0.Add(-time.Hour), State: nextup.EntryWaiting, StatusHash: nextup.HashToken("st-" + id),
		UpdatedAt: t0}
	for _, m := range mods {
		m(&e)
	}
	var got nextup.Entry
	f.tx(func(tx nextup.Tx) error {
		var err error
		got, err = tx.EntryCreate(f.ctx, e)
		return err
	})
	return got
}

func wantKind(t *testing.T, err, kind error, what string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Errorf("%s: got %v, want an error wrapping %v", what, err, kind)
	}
}

func TestMigrateTwiceAndReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := Open(ctx, path, SkipMigrate())
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.SchemaVersion(ctx); err != nil || v != 0 {
		t.Fatalf("SchemaVersion of a new file: %d, %v; want 0", v, err)
	}
	for range 2 {
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	if v, err := db.SchemaVersion(ctx); err != nil || v != LatestVersion() || v < 1 {
		t.Fatalf("SchemaVersion after Migrate: %d, %v; want %d", v, err, LatestVersion())
	}
	var rows int
	if err := db.write.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if ms, _ := sqlstore.LoadMigrations(migrations, "migrations"); rows != len(ms) {
		t.Errorf("schema_migrations has %d rows, want one per migration (%d)", rows, len(ms))
	}
	if err := db.InTx(ctx, func(tx nextup.Tx) error {
		return tx.BusinessCreate(ctx, nextup.Business{ID: "b", Name: "B", Timezone: "UTC", Rules: nextup.DefaultRules(), CreatedAt: t0})
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Open migrates again (a no-op) and sees the data.
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if err := db.Read(ctx, func(tx nextup.Tx) error {
		_, err := tx.BusinessGet(ctx, "b")
		return err
	}); err != nil {
		t.Fatalf("business after reopen: %v", err)
	}
	var mode string
	if err := db.write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v; want wal", mode, err)
	}
	var sync int
	if err := db.write.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
		t.Errorf("synchronous %d, %v; want 2 (FULL)", sync, err)
	}
	var fk int
	if err := db.read.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys on the read pool %d, %v; want 1", fk, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "n.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, "INSERT INTO schema_migrations VALUES (9999, '9999_future', 0)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(ctx, path); err == nil {
		db.Close()
		t.Fatal("Open of a database migrated by a newer build: no error")
	}
}

func TestOpenRejectsMemory(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", ":memory:", "file:x.db?mode=memory", "x.db?_pragma=foo"} {
		if db, err := Open(t.Context(), p); err == nil {
			db.Close()
			t.Errorf("Open(%q): no error", p)
		}
	}
}

// The invariant is a constraint of the database, not only of SlotSeats: a
// write that bypasses the store's conditional UPDATE is refused too.
func TestSeatsCheckConstraint(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.slot(func(s *nextup.Slot) { s.Seating, s.Capacity, s.BookedSeats = nextup.SeatingShared, 3, 2 })
	for _, q := range []string{
		"UPDATE slots SET held_seats = 2 WHERE id = ?",
		"UPDATE slots SET booked_seats = -1 WHERE id = ?",
		"UPDATE slots SET held_seats = -1 WHERE id = ?",
		"UPDATE slots SET capacity = 1 WHERE id = ?",
	} {
		_, err := f.db.write.ExecContext(f.ctx, q, s.ID)
		wantKind(t, dialect.Err("raw", err), nextup.ErrConflict, q)
	}
	err := f.db.InTx(f.ctx, func(tx nextup.Tx) error {
		return tx.SlotCreate(f.ctx, nextup.Slot{ID: "over", BusinessID: f.biz.ID, Service: "cut", StartsAt: t0, EndsAt: t0,
			Capacity: 2, BookedSeats: 2, HeldSeats: 1, CreatedAt: t0})
	})
	wantKind(t, err, nextup.ErrConflict, "SlotCreate over capacity")
	f.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(f.ctx, s.ID, nextup.SeatDelta{Held: 2})
		wantKind(t, err, nextup.ErrConflict, "SlotSeats over capacity")
		_, err = tx.SlotSeats(f.ctx, "nope", nextup.SeatDelta{Held: 1})
		wantKind(t, err, nextup.ErrNotFound, "SlotSeats of a missing slot")
		got, err := tx.SlotSeats(f.ctx, s.ID, nextup.SeatDelta{Booked: -1, Held: 2})
		if err != nil || got.BookedSeats != 1 || got.HeldSeats != 2 {
			t.Errorf("SlotSeats(-1, +2): %+v, %v", got, err)
		}
		return nil
	})
}

func TestReadRejectsWrites(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.slot()
	err := f.db.Read(f.ctx, func(tx nextup.Tx) error {
		_, err := tx.SlotSeats(f.ctx, s.ID, nextup.SeatDelta{Booked: 1})
		return err
	})
	if err == nil {
		t.Fatal("SlotSeats inside Read: no error")
	}
	err = f.db.Read(f.ctx, func(tx nextup.Tx) error {
		return tx.TimerSchedule(f.ctx, nextup.Timer{Kind: "x", Key: "x", DueAt: t0, CreatedAt: t0})
	})
	if err == nil {
		t.Fatal("TimerSchedule inside Read: no error")
	}
	f.read(func(tx nextup.Tx) error {
		got, err := tx.SlotGet(f.ctx, s.ID)
		if err != nil || got.BookedSeats != 0 {
			t.Errorf("slot after refused writes: %+v, %v", got, err)
		}
		return nil
	})
}

func TestInTxPanicRollsBack(t *testing.T) {
	t.Parallel()
	f := setup(t)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		_ = f.db.InTx(f.ctx, func(tx nextup.Tx) error {
			if err := tx.SlotCreate(f.ctx, nextup.Slot{ID: "p", BusinessID: f.biz.ID, StartsAt: t0, EndsAt: t0, Capacity: 1, CreatedAt: t0}); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	f.tx(func(tx nextup.Tx) error {
		_, err := tx.SlotGet(f.ctx, "p")
		wantKind(t, err, nextup.ErrNotFound, "slot of a panicked transaction")
		return nil
	})
}

// Times keep their microseconds, come back in UTC, and the zero time and
// the open Latest bound survive the round trip.
func TestTimes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ist := time.FixedZone("IST", 5*3600+30*60)
	early := time.Date(2031, 3, 12, 14, 30, 0, 123456789, ist)
	e := f.entry(func(e *nextup.Entry) { e.Earliest = early })
	f.read(func(tx nextup.Tx) error {
		got, err := tx.EntryGet(f.ctx, e.ID)
		if err != nil {
			return err
		}
		if want := early.Truncate(time.Microsecond); !got.Earliest.Equal(want) || got.Earliest.Location() != time.UTC {
			t.Errorf("Earliest %v, want %v in UTC", got.Earliest, want)
		}
		if !got.Latest.IsZero() {
			t.Errorf("open Latest came back as %v", got.Latest)
		}
		if got.Seq != e.Seq || got.Seq <= 0 {
			t.Errorf("Seq %d, want %d > 0", got.Seq, e.Seq)
		}
		return nil
	})
	if got := sqlstore.FromTS(sqlstore.TS(time.Time{})); got != (time.Time{}) {
		t.Errorf("zero time round trip: %#v", got)
	}
}

// Fair order: priority first, then joined_at, then seq; the cursor pages
// through it without gaps or repeats; window and party filters apply.
func TestEntryCandidatesOrder(t *testing.T) {
	t.Parallel()
	f := setup(t)
	slotStart := t0.Add(48 * time.Hour)
	var want []string
	a := f.entry(func(e *nextup.Entry) { e.JoinedAt = t0.Add(-3 * time.Hour) })
	b := f.entry(func(e *nextup.Entry) { e.JoinedAt = t0.Add(-3 * time.Hour) }) // same time: seq decides
	p := f.entry(func(e *nextup.Entry) { e.Priority = true; e.JoinedAt = t0 })
	c := f.entry(func(e *nextup.Entry) { e.JoinedAt = t0.Add(-2 * time.Hour); e.Latest = slotStart })
	f.entry(func(e *nextup.Entry) { e.Latest = slotStart.Add(-time.Microsecond) })                   // window over
	f.entry(func(e *nextup.Entry) { e.Earliest = slotStart.Add(time.Microsecond) })                  // window not begun
	f.entry(func(e *nextup.Entry) { e.PartySize = 5 })                                               // too large
	f.entry(func(e *nextup.Entry) { e.Service = "color" })                                           // other waitlist
	f.entry(func(e *nextup.Entry) { e.State = nextup.EntryBooked })                                  // not waiting
	f.entry(func(e *nextup.Entry) { e.EventID = "slot_event"; e.JoinedAt = t0.Add(-9 * time.Hour) }) // an event's list
	d := f.entry(func(e *nextup.Entry) { e.PartySize = 4; e.JoinedAt = t0.Add(-time.Hour) })
	want = []string{p.ID, a.ID, b.ID, c.ID, d.ID}

	q := nextup.CandidateQuery{BusinessID: f.biz.ID, Service: "cut", SlotStart: slotStart, MinParty: 1, MaxParty: 4, Limit: 2}
	var got []string
	f.read(func(tx nextup.Tx) error {
		for {
			page, err := tx.EntryCandidates(f.ctx, q)
			if err != nil {
				return err
			}
			for _, e := range page {
				got = append(got, e.ID)
			}
			if len(page) < q.Limit {
				return nil
			}
			q.After = &page[len(page)-1]
		}
	})
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("candidates %v, want %v", got, want)
	}
	f.read(func(tx nextup.Tx) error {
		for i, id := range []string{p.ID, a.ID, b.ID, c.ID} {
			pos, err := tx.EntryPosition(f.ctx, nextup.Entry{ID: id})
			if err != nil || pos != i+1 {
				t.Errorf("EntryPosition(%s) = %d, %v; want %d", id, pos, err, i+1)
			}
		}
		ev, err := tx.EntryCandidates(f.ctx, nextup.CandidateQuery{BusinessID: f.biz.ID, Service: "cut", EventID: "slot_event", SlotStart: slotStart, MaxParty: 10})
		if err != nil || len(ev) != 1 || ev[0].EventID != "slot_event" {
			t.Errorf("event candidates: %v, %v", ev, err)
		}
		list, err := tx.EntryList(f.ctx, nextup.EntryFilter{BusinessID: f.biz.ID, Service: "cut", Limit: 3})
		if err != nil || len(list) != 3 || list[0].ID != p.ID || list[1].ID != a.ID || list[2].ID != b.ID {
			t.Errorf("EntryList(limit 3): %v, %v", list, err)
		}
		return nil
	})
}

func TestEntryCandidatesUsesIndex(t *testing.T) {
	t.Parallel()
	f := setup(t)
	after := nextup.Entry{Priority: true, JoinedAt: t0, Seq: 42}
	for _, q := range []nextup.CandidateQuery{
		{BusinessID: f.biz.ID, Service: "cut", SlotStart: t0, MinParty: 1, MaxParty: 4, Limit: 32},
		{BusinessID: f.biz.ID, Service: "cut", SlotStart: t0, MinParty: 1, MaxParty: 4, Limit: 32, After: &after},
		{BusinessID: f.biz.ID, EventID: "ev", SlotStart: t0, Limit: 32, After: &after},
	} {
		query, args := dialect.CandidatesQuery(q)
		plan := explain(t, f, query, args...)
		if !strings.Contains(plan, "USING INDEX entries_fair") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("candidates query plan does not read entries_fair in order:\n%s", plan)
		}
		// SQLite seeks on (fair_rank, joined_at) and checks seq, the rowid,
		// on the entries it reads: ties on joined_at are rare and short.
		if q.After != nil && !strings.Contains(plan, "(fair_rank,joined_at)>(?,?)") {
			t.Errorf("candidates query plan does not seek past the cursor:\n%s", plan)
		}
	}
	plan := explain(t, f, `SELECT count(*) FROM entries INDEXED BY entries_fair
		WHERE business_id = ? AND queue = ? AND state = 'waiting' AND (`+sqlstore.FairOrder+`) < (?, ?, ?)`,
		f.biz.ID, "service:cut", 1, 0, 0)
	if !strings.Contains(plan, "COVERING INDEX entries_fair") {
		t.Errorf("position query plan does not count on entries_fair:\n%s", plan)
	}
}

func explain(t *testing.T, f *fixture, query string, args ...any) string {
	t.Helper()
	rows, err := f.db.read.QueryContext(f.ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}

// TestHotLookupsUseIndexes pins the query plan of every look-up by secret
// or key: the claim, the claim page, the status page, API-key auth, timer
// cancellation. Their indexes are partial, and SQLite only uses a partial
// index when the query repeats its condition — without it each of these
// scans its whole table.
// The staff listing and the session clean-ups are pinned too.
func TestHotLookupsUseIndexes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for name, q := range map[string]struct {
		query, index string
		args         []any
	}{
		"OfferClaim":            {sqlstore.OfferClaim, "offers_token", []any{0, "h"}},
		"OfferByTokenHash":      {sqlstore.OfferByTokenHash, "offers_token", []any{"h"}},
		"OfferStateByTokenHash": {sqlstore.OfferStateByTokenHash, "offers_token", []any{"h"}},
		"EntryByStatusHash":     {sqlstore.EntryByStatusHash, "entries_status_hash", []any{"h"}},
		"BookingByOffer":        {sqlstore.BookingByOffer, "bookings_offer", []any{"o"}},
		"BusinessByAPIKey":      {sqlstore.BusinessByAPIKey, "businesses_api_key", []any{"h"}},
		"BusinessBySlug":        {sqlstore.BusinessBySlug, "businesses_slug", []any{"s"}},
		"TimerCancel":           {sqlstore.TimerCancel, "timers_pending_key", []any{"k"}},
		"MessageCancelByOffer":  {sqlstore.MessageCancelByOffer, "messages_offer", []any{"o"}},
		"StaffList":             {sqlstore.StaffList, "staff_business", []any{"b"}},
		"SessionDeleteByStaff":  {sqlstore.SessionDeleteByStaff, "sessions_staff", []any{"s"}},
		"SessionPurge":          {sqlstore.SessionPurge, "sessions_expires", []any{0}},
		"ProposalByActionHash":  {sqlstore.ProposalByActionHash, "proposals_action", []any{"h"}},
		"ProposalList":          {sqlstore.ProposalList, "proposals_business", []any{"b", "", ""}},
	} {
		plan := explain(t, f, q.query, q.args...)
		if !strings.Contains(plan, "INDEX "+q.index) || strings.Contains(plan, "SCAN") {
			t.Errorf("%s does not search %s:\n%s", name, q.index, plan)
		}
	}
}

// TestPositionPlan pins the plan of a position: every part of it a search
// of an index (the count tree's primary key, entries_fair for the place's
// own lowest node), never a scan, so its cost does not grow with the place.
func TestPositionPlan(t *testing.T) {
	t.Parallel()
	f := setup(t)
	plan := explain(t, f, dialect.EntryPositionQuery(), sqlstore.EntryPositionArgs("b", "service:cut", 1, time.Now().UnixMicro(), 7)...)
	if strings.Contains(strings.ReplaceAll(plan, "SCAN CONSTANT ROW", ""), "SCAN") || strings.Contains(plan, "fair_rank<") ||
		!strings.Contains(plan, "SEARCH entry_ranks USING PRIMARY KEY (business_id=? AND queue=? AND fair_rank=? AND shift=?") || !strings.Contains(plan, "INDEX entries_fair") {
		t.Errorf("a position is not a few index searches:\n%s", plan)
	}
}
