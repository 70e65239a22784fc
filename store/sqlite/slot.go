package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/internal/sqlstore"
)

func (t *tx) SlotCreate(ctx context.Context, s nextup.Slot) error {
	if s.Kind == "" {
		s.Kind = nextup.KindSlot
	}
	if s.Seating == "" {
		s.Seating = nextup.SeatingUnit
	}
	_, err := t.tx.ExecContext(ctx, sqlstore.SlotInsert, sqlstore.SlotInsertArgs(s)...)
	return dbErr("create slot "+s.ID, err)
}

func (t *tx) SlotGet(ctx context.Context, id string) (nextup.Slot, error) {
	// No row lock to take: the single writer connection and BEGIN
	// IMMEDIATE already serialise every read-write transaction.
	s, err := sqlstore.ScanSlot(t.tx.QueryRowContext(ctx, sqlstore.SlotGet, id))
	return s, dbErr("get slot "+id, err)
}

func (t *tx) SlotList(ctx context.Context, f nextup.SlotFilter) ([]nextup.Slot, error) {
	q, args := sqlstore.SlotList(f, limitArg(f.Limit))
	out, err := scanAll(sqlstore.ScanSlot)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list slots of business "+f.BusinessID, err)
}

// SlotSeats is the one place seats change, and so where the invariant is
// enforced: a single conditional UPDATE that only matches while the result
// keeps 0 <= booked, 0 <= held and booked+held <= capacity. (The CHECK
// constraint on the table would refuse it anyway; the WHERE makes the
// refusal a clean "no row" instead of an aborted statement.)
func (t *tx) SlotSeats(ctx context.Context, id string, d nextup.SeatDelta) (nextup.Slot, error) {
	op := fmt.Sprintf("seats of slot %s (booked %+d, held %+d)", id, d.Booked, d.Held)
	s, err := sqlstore.ScanSlot(t.tx.QueryRowContext(ctx, sqlstore.SlotSeats, d.Booked, d.Held, id))
	if err == nil {
		return s, nil
	}
	if isNoRows(err) {
		return nextup.Slot{}, t.missOrConflict(ctx, op, "slots", id)
	}
	return nextup.Slot{}, dbErr(op, err)
}

func (t *tx) SlotResize(ctx context.Context, id string, capacity int) (nextup.Slot, error) {
	op := fmt.Sprintf("resize slot %s to %d", id, capacity)
	s, err := sqlstore.ScanSlot(t.tx.QueryRowContext(ctx, sqlstore.SlotResize, capacity, id))
	if err == nil {
		return s, nil
	}
	if isNoRows(err) {
		return nextup.Slot{}, t.missOrConflict(ctx, op, "slots", id)
	}
	return nextup.Slot{}, dbErr(op, err)
}

func (t *tx) SlotSetHandedBack(ctx context.Context, id string, handedBack bool) error {
	res, err := t.tx.ExecContext(ctx, sqlstore.SlotSetHandedBack, sqlstore.BoolInt(handedBack), id)
	return t.touched(ctx, fmt.Sprintf("set slot %s handed back %t", id, handedBack), res, err)
}

// SlotOpenFor is a coarse filter; the engine makes the exact decision. A
// plain entry looks at slots of kind "slot" for its service, an event entry
// at its event. The party has to fit in the free seats (a unit slot is free
// whole or not at all, so that also bounds down-fitting).
func (t *tx) SlotOpenFor(ctx context.Context, e nextup.Entry, startsAfter time.Time, limit int) ([]nextup.Slot, error) {
	var (
		q    string
		args []any
	)
	if e.EventID != "" {
		q = `SELECT ` + sqlstore.SlotCols + ` FROM slots WHERE business_id = ? AND id = ?`
		args = []any{e.BusinessID, e.EventID}
	} else {
		q = `SELECT ` + sqlstore.SlotCols + ` FROM slots INDEXED BY slots_open_for
			WHERE business_id = ? AND kind = 'slot' AND service = ?`
		args = []any{e.BusinessID, e.Service}
	}
	q += ` AND starts_at > ? AND starts_at >= ? AND starts_at <= ?
		AND handed_back = 0
		AND capacity - booked_seats - held_seats >= max(?, 1)`
	args = append(args, sqlstore.TS(startsAfter), sqlstore.TS(e.Earliest), sqlstore.LatestTS(e.Latest), e.PartySize)
	if e.Staff != "" {
		q += ` AND staff = ?`
		args = append(args, e.Staff)
	}
	q += ` ORDER BY starts_at, id LIMIT ?`
	args = append(args, limitArg(limit))
	out, err := scanAll(sqlstore.ScanSlot)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("open slots for entry "+e.ID, err)
}
