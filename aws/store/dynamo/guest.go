package dynamo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// A guest of an event registration is the item gst#ENTRYID#PLACE, PLACE
// being its Index as a fixed-width number (guestPlace): keyed by its
// registration, so the key itself keeps a registration's places unique
// (the SQL stores' primary key (entry_id, idx)) and no marker is needed.
//   - g2 gstslot#SLOTID → ENTRYID#PLACE: GuestListBySlot, the event's
//     guest list in one query of the event's partition, by registration
//     and place (then one BatchGetItem of the items).
//   - g3 gstent#ENTRYID → PLACE: GuestListByEntry, one registration's
//     guests.
//
// One item per guest, not one per registration: a guest's check-in is a
// write of that guest alone, so two door staff checking in two guests of
// one party do not race each other's commit. A registration's guests are
// written in its transaction, one action each (a registration of many
// guests is refused by the use case when they do not fit what is left
// of the transaction's 100 actions: waitlist/events, guests.go).
//
// GuestsCreate checks that the entry, the slot and the business exist (the
// SQL stores' foreign keys) and that no place is taken: one
// BatchGetItem of the guests' keys, unless the entry was made in this
// very transaction (the registration): then its guests cannot exist, and
// are blind creates, conditioned on not existing like any fresh id.
// GuestCheckIn is one GetItem and one Put.

func guestPK(entryID string, index int) string { return "gst#" + entryID + "#" + guestPlace(index) }

// guestPlace is a guest's Index as a sort key of one width.
func guestPlace(index int) string { return fmt.Sprintf("%06d", index) }

func guestItem(g nextup.Guest) (item, error) {
	return newItem(g, "gsi2pk", "gstslot#"+g.SlotID, "gsi2sk", g.EntryID+"#"+guestPlace(g.Index),
		"gsi3pk", "gstent#"+g.EntryID, "gsi3sk", guestPlace(g.Index))
}

// createdHere reports whether the transaction made the item at pk: it read
// it as absent and has written it since.
func (t *Tx) createdHere(pk string) bool {
	r, read := t.reads[pk]
	w, written := t.writes[pk]
	return written && w.it != nil && ((read && r.it == nil) || w.blind)
}

// GuestsCreate stores guests, all or none: a missing entry, slot or
// business is ErrNotFound, a place below 1 or taken (in the table or
// twice in gs) ErrConflict.
func (t *Tx) GuestsCreate(ctx context.Context, gs []nextup.Guest) error {
	if len(gs) == 0 {
		return nil
	}
	what := fmt.Sprintf("create %d guests of entry %s", len(gs), gs[0].EntryID)
	seen := map[string]bool{}
	var check []string // places of entries made before this transaction
	refs := map[[2]string]bool{}
	for _, g := range gs {
		pk := guestPK(g.EntryID, g.Index)
		if g.Index < 1 || seen[pk] {
			return conflict(fmt.Sprintf("%s: place %d of entry %s", what, g.Index, g.EntryID))
		}
		seen[pk] = true
		if _, err := load[nextup.Entry](ctx, t, entPK(g.EntryID), what+": entry "+g.EntryID); err != nil {
			return err
		}
		if ref := [2]string{g.BusinessID, g.SlotID}; !refs[ref] {
			refs[ref] = true
			if err := t.refSlot(ctx, g.BusinessID, g.SlotID, what); err != nil {
				return err
			}
		}
		if !t.createdHere(entPK(g.EntryID)) {
			check = append(check, pk)
		}
	}
	found, err := t.fetch(ctx, check)
	if err != nil {
		return err
	}
	if len(found) > 0 {
		return conflict(fmt.Sprintf("%s: %s exists", what, str(found[0], attrPK)))
	}
	for _, g := range gs {
		it, err := guestItem(g)
		if err != nil {
			return err
		}
		pk := guestPK(g.EntryID, g.Index)
		if slices.Contains(check, pk) {
			err = t.put(pk, it) // read as absent: the commit checks it still is
		} else {
			err = t.create(pk, it)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// GuestListByEntry lists a registration's guests by Index.
func (t *Tx) GuestListByEntry(ctx context.Context, entryID string) ([]nextup.Guest, error) {
	its, err := t.query(ctx, query{index: "gsi3", part: "gstent#" + entryID})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Guest](its)
}

// GuestListBySlot lists an event's guests by entry, then Index.
func (t *Tx) GuestListBySlot(ctx context.Context, slotID string) ([]nextup.Guest, error) {
	its, err := t.query(ctx, query{index: "gsi2", part: "gstslot#" + slotID})
	if err != nil {
		return nil, err
	}
	return loadAll[nextup.Guest](its)
}

// GuestCheckIn sets or clears one guest's check-in; no such guest is
// ErrNotFound.
func (t *Tx) GuestCheckIn(ctx context.Context, entryID string, index int, at *time.Time) (nextup.Guest, error) {
	what := fmt.Sprintf("check in guest %d of entry %s", index, entryID)
	if index < 1 {
		return nextup.Guest{}, notFound(what)
	}
	g, err := load[nextup.Guest](ctx, t, guestPK(entryID, index), what)
	if err != nil {
		return nextup.Guest{}, err
	}
	g.CheckedInAt = nil
	if at != nil {
		v := *at
		g.CheckedInAt = &v
	}
	it, err := guestItem(g)
	if err != nil {
		return nextup.Guest{}, err
	}
	return g, t.put(guestPK(entryID, index), it)
}
