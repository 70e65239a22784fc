package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

const slotCols = `id, business_id, kind, title, service, staff, starts_at, ends_at, capacity, seating,
	min_party, booked_seats, held_seats, handed_back, created_at`

func scanSlot(r scanner) (nextup.Slot, error) {
	var (
		s                     nextup.Slot
		starts, ends, created int64
		handedBack            int
	)
	err := r.Scan(&s.ID, &s.BusinessID, &s.Kind, &s.Title, &s.Service, &s.Staff, &starts, &ends,
		&s.Capacity, &s.Seating, &s.MinParty, &s.BookedSeats, &s.HeldSeats, &handedBack, &created)
	s.StartsAt, s.EndsAt, s.CreatedAt = fromTS(starts), fromTS(ends), fromTS(created)
	s.HandedBack = handedBack != 0
	return s, err
}

func (t *tx) SlotCreate(ctx context.Context, s nextup.Slot) error {
	if s.Kind == "" {
		s.Kind = nextup.KindSlot
	}
	if s.Seating == "" {
		s.Seating = nextup.SeatingUnit
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO slots (`+slotCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.BusinessID, s.Kind, s.Title, s.Service, s.Staff, ts(s.StartsAt), ts(s.EndsAt),
		s.Capacity, s.Seating, s.MinParty, s.BookedSeats, s.HeldSeats, boolInt(s.HandedBack), ts(s.CreatedAt))
	return dbErr("create slot "+s.ID, err)
}

func (t *tx) SlotGet(ctx context.Context, id string) (nextup.Slot, error) {
	// Inside InTx the row stays locked until the transaction ends, so
	// decisions about one slot are taken one at a time.
	s, err := scanSlot(t.tx.QueryRowContext(ctx, `SELECT `+slotCols+` FROM slots WHERE id = ?`+t.forUpdate(), id))
	return s, dbErr("get slot "+id, err)
}

func (t *tx) SlotList(ctx context.Context, f nextup.SlotFilter) ([]nextup.Slot, error) {
	q := `SELECT ` + slotCols + ` FROM slots WHERE business_id = ?`
	args := []any{f.BusinessID}
	if !f.From.IsZero() {
		q += ` AND starts_at >= ?`
		args = append(args, ts(f.From))
	}
	if !f.To.IsZero() {
		q += ` AND starts_at < ?`
		args = append(args, ts(f.To))
	}
	q += ` ORDER BY starts_at, id LIMIT ?`
	args = append(args, limitArg(f.Limit))
	out, err := scanAll(scanSlot)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("list slots of business "+f.BusinessID, err)
}

// SlotSeats is the one place seats change, and so where the invariant is
// enforced: a single conditional UPDATE that only matches while the result
// keeps 0 <= booked, 0 <= held and booked+held <= capacity. (The CHECK
// constraint on the table would refuse it anyway; the WHERE makes the
// refusal a clean "no row" instead of an error. Two transactions changing
// one slot queue on its row: under READ COMMITTED the second re-evaluates
// the WHERE against the first's committed counters.)
func (t *tx) SlotSeats(ctx context.Context, id string, d nextup.SeatDelta) (nextup.Slot, error) {
	op := fmt.Sprintf("seats of slot %s (booked %+d, held %+d)", id, d.Booked, d.Held)
	s, err := scanSlot(t.tx.QueryRowContext(ctx, `UPDATE slots
		SET booked_seats = booked_seats + ?1, held_seats = held_seats + ?2
		WHERE id = ?3
		  AND booked_seats + ?1 >= 0
		  AND held_seats + ?2 >= 0
		  AND booked_seats + held_seats + ?1 + ?2 <= capacity
		RETURNING `+slotCols, d.Booked, d.Held, id))
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
	s, err := scanSlot(t.tx.QueryRowContext(ctx, `UPDATE slots SET capacity = ?1
		WHERE id = ?2 AND ?1 >= booked_seats + held_seats AND ?1 >= 0
		RETURNING `+slotCols, capacity, id))
	if err == nil {
		return s, nil
	}
	if isNoRows(err) {
		return nextup.Slot{}, t.missOrConflict(ctx, op, "slots", id)
	}
	return nextup.Slot{}, dbErr(op, err)
}

func (t *tx) SlotSetHandedBack(ctx context.Context, id string, handedBack bool) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE slots SET handed_back = ? WHERE id = ?`, boolInt(handedBack), id)
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
		q = `SELECT ` + slotCols + ` FROM slots WHERE business_id = ? AND id = ?`
		args = []any{e.BusinessID, e.EventID}
	} else {
		q = `SELECT ` + slotCols + ` FROM slots
			WHERE business_id = ? AND kind = 'slot' AND service = ?`
		args = []any{e.BusinessID, e.Service}
	}
	q += ` AND starts_at > ? AND starts_at >= ? AND starts_at <= ?
		AND handed_back = 0
		AND capacity - booked_seats - held_seats >= greatest(?, 1)`
	args = append(args, ts(startsAfter), ts(e.Earliest), latestTS(e.Latest), e.PartySize)
	if e.Staff != "" {
		q += ` AND staff = ?`
		args = append(args, e.Staff)
	}
	q += ` ORDER BY starts_at, id LIMIT ?`
	args = append(args, limitArg(limit))
	out, err := scanAll(scanSlot)(t.tx.QueryContext(ctx, q, args...))
	return out, dbErr("open slots for entry "+e.ID, err)
}
