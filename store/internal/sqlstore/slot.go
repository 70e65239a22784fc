package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nextup-dev/nextup"
)

// SlotCols are the columns ScanSlot reads, in its order.
const SlotCols = `id, business_id, kind, title, service, staff, starts_at, ends_at, capacity, seating,
	min_party, booked_seats, held_seats, handed_back, created_at, event`

// ScanSlot reads a row of SlotCols.
func ScanSlot(r Scanner) (nextup.Slot, error) {
	var (
		s                     nextup.Slot
		starts, ends, created int64
		handedBack            int
		event                 string
	)
	err := r.Scan(&s.ID, &s.BusinessID, &s.Kind, &s.Title, &s.Service, &s.Staff, &starts, &ends,
		&s.Capacity, &s.Seating, &s.MinParty, &s.BookedSeats, &s.HeldSeats, &handedBack, &created, &event)
	s.StartsAt, s.EndsAt, s.CreatedAt = FromTS(starts), FromTS(ends), FromTS(created)
	s.HandedBack = handedBack != 0
	if err == nil && event != "" {
		s.Event, err = DecodeEvent(event)
	}
	return s, err
}

// SlotInsert inserts a slot; SlotInsertArgs gives its arguments.
const SlotInsert = `INSERT INTO slots (` + SlotCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// SlotInsertArgs returns the arguments of SlotInsert for s, in SlotCols
// order.
func SlotInsertArgs(s nextup.Slot) []any {
	return []any{s.ID, s.BusinessID, s.Kind, s.Title, s.Service, s.Staff, TS(s.StartsAt), TS(s.EndsAt),
		s.Capacity, s.Seating, s.MinParty, s.BookedSeats, s.HeldSeats, BoolInt(s.HandedBack), TS(s.CreatedAt),
		EncodeEvent(s.Event)}
}

// Queries of slots, each named after the Tx method that runs it.
const (
	// SlotGet reads a slot by id; Tx.SlotGet appends the dialect's
	// ForUpdate inside InTx.
	SlotGet = `SELECT ` + SlotCols + ` FROM slots WHERE id = ?`

	// SlotSeats adds ?1 booked and ?2 held seats to slot ?3, only while
	// the result keeps 0 <= booked, 0 <= held and booked+held <= capacity,
	// and returns the slot; a refused change matches no row.
	SlotSeats = `UPDATE slots
		SET booked_seats = booked_seats + ?1, held_seats = held_seats + ?2
		WHERE id = ?3
		  AND booked_seats + ?1 >= 0
		  AND held_seats + ?2 >= 0
		  AND booked_seats + held_seats + ?1 + ?2 <= capacity
		RETURNING ` + SlotCols

	// SlotResize sets slot ?2's capacity to ?1 unless that is fewer than
	// its booked and held seats, and returns the slot.
	SlotResize = `UPDATE slots SET capacity = ?1
		WHERE id = ?2 AND ?1 >= booked_seats + held_seats AND ?1 >= 0
		RETURNING ` + SlotCols

	// SlotSetHandedBack sets a slot's handed_back flag (0 or 1).
	SlotSetHandedBack = `UPDATE slots SET handed_back = ? WHERE id = ?`

	// SlotEventSet sets an event's title and settings (EncodeEvent).
	SlotEventSet = `UPDATE slots SET title = ?, event = ? WHERE id = ? AND kind = 'event'`
)

// SlotList returns the query of Tx.SlotList and its arguments; limit is
// the store's LIMIT argument for f.Limit.
func SlotList(f nextup.SlotFilter, limit any) (string, []any) {
	q := `SELECT ` + SlotCols + ` FROM slots WHERE business_id = ?`
	args := []any{f.BusinessID}
	if !f.From.IsZero() {
		q += ` AND starts_at >= ?`
		args = append(args, TS(f.From))
	}
	if !f.To.IsZero() {
		q += ` AND starts_at < ?`
		args = append(args, TS(f.To))
	}
	q += ` ORDER BY starts_at, id LIMIT ?`
	return q, append(args, limit)
}

// eventJSON is how an event's settings are stored: durations in seconds,
// instants in microseconds, so the column reads the same in both stores.
type eventJSON struct {
	MaxGuests          int     `json:"max_guests"`
	WaitlistLimit      *int    `json:"waitlist_limit,omitempty"`
	RegistrationCutoff *int64  `json:"registration_cutoff,omitempty"`
	CancellationCutoff *int64  `json:"cancellation_cutoff,omitempty"`
	PromotionCutoff    int64   `json:"promotion_cutoff_seconds"`
	ClaimWindow        int64   `json:"claim_window_seconds"`
	ReminderOffsets    []int64 `json:"reminder_offsets_seconds"`
	ReminderMorningOf  string  `json:"reminder_morning_of"`
	PriceCents         int64   `json:"price_cents"`
	Currency           string  `json:"currency"`
	Slug               string  `json:"slug,omitempty"`
	ShowSeats          string  `json:"show_seats,omitempty"`
	Place              string  `json:"place,omitempty"`
	Notes              string  `json:"notes,omitempty"`
	NoIndex            bool    `json:"noindex,omitempty"`
	TimeCritical       *bool   `json:"time_critical_through_quiet,omitempty"`
	// Requeue is the event's own re-queue rule; absent: the events'
	// default.
	Requeue *nextup.Requeue `json:"requeue,omitempty"`
}

// EncodeEvent returns the stored form of an event's settings ("" for nil).
func EncodeEvent(ev *nextup.EventSettings) string {
	if ev == nil {
		return ""
	}
	j := eventJSON{
		MaxGuests: ev.MaxGuests, WaitlistLimit: ev.WaitlistLimit,
		PromotionCutoff: int64(ev.PromotionCutoff / time.Second), ClaimWindow: int64(ev.ClaimWindow / time.Second),
		ReminderOffsets: []int64{}, ReminderMorningOf: ev.ReminderMorningOf, PriceCents: ev.PriceCents, Currency: ev.Currency,
		Slug: ev.Slug, ShowSeats: ev.Public.ShowSeats, Place: ev.Public.Place, Notes: ev.Public.Notes, NoIndex: ev.Public.NoIndex,
		TimeCritical: ev.TimeCriticalThroughQuiet,
		Requeue:      ev.Requeue,
	}
	for _, t := range []struct {
		in  *time.Time
		out **int64
	}{{ev.RegistrationCutoff, &j.RegistrationCutoff}, {ev.CancellationCutoff, &j.CancellationCutoff}} {
		if t.in != nil {
			us := TS(*t.in)
			*t.out = &us
		}
	}
	for _, d := range ev.ReminderOffsets {
		j.ReminderOffsets = append(j.ReminderOffsets, int64(d/time.Second))
	}
	b, _ := json.Marshal(j) // plain fields: cannot fail
	return string(b)
}

// DecodeEvent reads an event's settings as EncodeEvent stored them.
func DecodeEvent(s string) (*nextup.EventSettings, error) {
	var j eventJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return nil, fmt.Errorf("event settings: %w", err)
	}
	ev := &nextup.EventSettings{
		MaxGuests: j.MaxGuests, WaitlistLimit: j.WaitlistLimit,
		PromotionCutoff: time.Duration(j.PromotionCutoff) * time.Second, ClaimWindow: time.Duration(j.ClaimWindow) * time.Second,
		ReminderOffsets: []time.Duration{}, ReminderMorningOf: j.ReminderMorningOf, PriceCents: j.PriceCents, Currency: j.Currency,
		Slug:                     j.Slug,
		Public:                   nextup.EventPublic{ShowSeats: j.ShowSeats, Place: j.Place, Notes: j.Notes, NoIndex: j.NoIndex},
		TimeCriticalThroughQuiet: j.TimeCritical,
		Requeue:                  j.Requeue,
	}
	if j.RegistrationCutoff != nil {
		t := FromTS(*j.RegistrationCutoff)
		ev.RegistrationCutoff = &t
	}
	if j.CancellationCutoff != nil {
		t := FromTS(*j.CancellationCutoff)
		ev.CancellationCutoff = &t
	}
	for _, s := range j.ReminderOffsets {
		ev.ReminderOffsets = append(ev.ReminderOffsets, time.Duration(s)*time.Second)
	}
	return ev, nil
}

// SlotCreate stores a slot, of kind "slot" and unit seating unless s says
// otherwise.
func (t *Tx) SlotCreate(ctx context.Context, s nextup.Slot) error {
	if s.Kind == "" {
		s.Kind = nextup.KindSlot
	}
	if s.Seating == "" {
		s.Seating = nextup.SeatingUnit
	}
	_, err := t.r.Exec(ctx, SlotInsert, SlotInsertArgs(s)...)
	return t.err("create slot "+s.ID, err)
}

// SlotGet reads a slot. Inside InTx on PostgreSQL the row stays locked
// until the transaction ends, so decisions about one slot are taken one at
// a time; on SQLite the single writer connection and BEGIN IMMEDIATE
// already serialise every read-write transaction.
func (t *Tx) SlotGet(ctx context.Context, id string) (nextup.Slot, error) {
	s, err := ScanSlot(t.r.QueryRow(ctx, SlotGet+t.lock, id))
	return s, t.err("get slot "+id, err)
}

// SlotList lists a business's slots by start.
func (t *Tx) SlotList(ctx context.Context, f nextup.SlotFilter) ([]nextup.Slot, error) {
	q, args := SlotList(f, t.limit(f.Limit))
	out, err := all(ctx, t, ScanSlot, q, args...)
	return out, t.err("list slots of business "+f.BusinessID, err)
}

// SlotSeats is the one place seats change, and so where the invariant is
// enforced: a single conditional UPDATE that only matches while the result
// keeps 0 <= booked, 0 <= held and booked+held <= capacity. (The CHECK
// constraint on the table would refuse it anyway; the WHERE makes the
// refusal a clean "no row" instead of an error. On PostgreSQL two
// transactions changing one slot queue on its row: under READ COMMITTED
// the second re-evaluates the WHERE against the first's committed
// counters.)
func (t *Tx) SlotSeats(ctx context.Context, id string, d nextup.SeatDelta) (nextup.Slot, error) {
	op := fmt.Sprintf("seats of slot %s (booked %+d, held %+d)", id, d.Booked, d.Held)
	s, err := ScanSlot(t.r.QueryRow(ctx, SlotSeats, d.Booked, d.Held, id))
	return returning(ctx, t, op, "slots", id, s, err)
}

// SlotResize sets a slot's capacity unless that is fewer than its booked
// and held seats (ErrConflict).
func (t *Tx) SlotResize(ctx context.Context, id string, capacity int) (nextup.Slot, error) {
	op := fmt.Sprintf("resize slot %s to %d", id, capacity)
	s, err := ScanSlot(t.r.QueryRow(ctx, SlotResize, capacity, id))
	return returning(ctx, t, op, "slots", id, s, err)
}

// SlotSetHandedBack sets or clears a slot's handed-back flag.
func (t *Tx) SlotSetHandedBack(ctx context.Context, id string, handedBack bool) error {
	n, err := t.r.Exec(ctx, SlotSetHandedBack, BoolInt(handedBack), id)
	return t.touched(fmt.Sprintf("set slot %s handed back %t", id, handedBack), n, err)
}

// SlotEventSet sets an event's title and settings.
func (t *Tx) SlotEventSet(ctx context.Context, id, title string, ev nextup.EventSettings) error {
	n, err := t.r.Exec(ctx, SlotEventSet, title, EncodeEvent(&ev), id)
	return t.touched("set event "+id, n, err)
}

// SlotOpenFor is a coarse filter; the engine makes the exact decision. A
// plain entry looks at slots of kind "slot" for its service, an event entry
// at its event. The party has to fit in the free seats (a unit slot is free
// whole or not at all, so that also bounds down-fitting). On SQLite the
// hint keeps the planner on slots_open_for.
func (t *Tx) SlotOpenFor(ctx context.Context, e nextup.Entry, startsAfter time.Time, limit int) ([]nextup.Slot, error) {
	var (
		q    string
		args []any
	)
	if e.EventID != "" {
		q = `SELECT ` + SlotCols + ` FROM slots WHERE business_id = ? AND id = ?`
		args = []any{e.BusinessID, e.EventID}
	} else {
		q = `SELECT ` + SlotCols + ` FROM slots` + t.d.indexedBy("slots_open_for") + `
			WHERE business_id = ? AND kind = 'slot' AND service = ?`
		args = []any{e.BusinessID, e.Service}
	}
	q += ` AND starts_at > ? AND starts_at >= ? AND starts_at <= ?
		AND handed_back = 0
		AND capacity - booked_seats - held_seats >= ?`
	args = append(args, TS(startsAfter), TS(e.Earliest), LatestTS(e.Latest), max(e.PartySize, 1))
	if e.Staff != "" {
		q += ` AND staff = ?`
		args = append(args, e.Staff)
	}
	q += ` ORDER BY starts_at, id LIMIT ?`
	args = append(args, t.limit(limit))
	out, err := all(ctx, t, ScanSlot, q, args...)
	return out, t.err("open slots for entry "+e.ID, err)
}
