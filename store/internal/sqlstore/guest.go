package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// GuestCols are the columns ScanGuest reads, in its order. idx is the
// guest's Index (INDEX is a keyword of both dialects).
const GuestCols = `business_id, slot_id, entry_id, idx, name, checked_in_at`

// ScanGuest reads a row of GuestCols.
func ScanGuest(r Scanner) (nextup.Guest, error) {
	var (
		g       nextup.Guest
		checkin *int64
	)
	err := r.Scan(&g.BusinessID, &g.SlotID, &g.EntryID, &g.Index, &g.Name, &checkin)
	g.CheckedInAt = FromNullTS(checkin)
	return g, err
}

// GuestInsert returns the one INSERT of Tx.GuestsCreate and its
// arguments: every guest of gs in a single statement, so that a guest
// refused (a missing entry, a place taken) leaves none of them stored.
func GuestInsert(gs []nextup.Guest) (string, []any) {
	rows := make([]string, len(gs))
	args := make([]any, 0, 6*len(gs))
	for i, g := range gs {
		rows[i] = `(` + Placeholders(6) + `)`
		args = append(args, g.BusinessID, g.SlotID, g.EntryID, g.Index, g.Name, TSPtr(g.CheckedInAt))
	}
	return `INSERT INTO guests (` + GuestCols + `) VALUES ` + strings.Join(rows, ", "), args
}

// Queries of guests, each named after the Tx method that runs it.
const (
	// GuestListByEntry lists a registration's guests by place.
	GuestListByEntry = `SELECT ` + GuestCols + ` FROM guests WHERE entry_id = ? ORDER BY idx`
	// GuestListBySlot lists an event's guests by registration and place
	// (the index guests_slot).
	GuestListBySlot = `SELECT ` + GuestCols + ` FROM guests WHERE slot_id = ? ORDER BY entry_id, idx`
	// GuestCheckIn sets the check-in of guest ?3 of registration ?2 to
	// ?1 (NULL clears it) and returns the guest.
	GuestCheckIn = `UPDATE guests SET checked_in_at = ?1 WHERE entry_id = ?2 AND idx = ?3 RETURNING ` + GuestCols
)

// GuestsCreate stores guests in one statement: all of them or none.
func (t *Tx) GuestsCreate(ctx context.Context, gs []nextup.Guest) error {
	if len(gs) == 0 {
		return nil
	}
	q, args := GuestInsert(gs)
	_, err := t.r.Exec(ctx, q, args...)
	return t.err(fmt.Sprintf("create %d guests of entry %s", len(gs), gs[0].EntryID), err)
}

// GuestListByEntry lists a registration's guests by Index.
func (t *Tx) GuestListByEntry(ctx context.Context, entryID string) ([]nextup.Guest, error) {
	out, err := all(ctx, t, ScanGuest, GuestListByEntry, entryID)
	return out, t.err("guests of entry "+entryID, err)
}

// GuestListBySlot lists an event's guests by entry, then Index.
func (t *Tx) GuestListBySlot(ctx context.Context, slotID string) ([]nextup.Guest, error) {
	out, err := all(ctx, t, ScanGuest, GuestListBySlot, slotID)
	return out, t.err("guests of slot "+slotID, err)
}

// GuestCheckIn sets or clears one guest's check-in; no such guest is
// ErrNotFound (the UPDATE has no other condition).
func (t *Tx) GuestCheckIn(ctx context.Context, entryID string, index int, at *time.Time) (nextup.Guest, error) {
	g, err := ScanGuest(t.r.QueryRow(ctx, GuestCheckIn, TSPtr(at), entryID, index))
	return g, t.err(fmt.Sprintf("check in guest %d of entry %s", index, entryID), err)
}
