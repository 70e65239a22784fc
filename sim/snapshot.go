package sim

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// snapshot is the state of every business the model knows, read through
// Store.Read in one consistent transaction.
type snapshot struct {
	now       time.Time
	slots     map[string]nextup.Slot
	entries   map[string]nextup.Entry
	offers    map[string]nextup.Offer
	bookings  map[string]nextup.Booking
	handbacks map[string]nextup.HandBack
	timers    map[string]nextup.Timer     // pending timers by key
	slotOffer map[string][]nextup.Offer   // offers of each slot, oldest first
	slotBook  map[string][]nextup.Booking // bookings of each slot, in store order
}

var entryStates = []nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired}

// read takes a snapshot. To stay cheap it reads each step only what can
// have changed and carries the rest over from prev:
//
//   - a slot whose row is as it was and that held no live offer cannot have
//     changed offers or bookings (every change to either moves the slot's
//     seat counts), unless the clock moved: a timer can make an offer and
//     another expire it within one step;
//   - an entry changes state only with one of its offers, when the step
//     names it (join, leave, update), or when daily housekeeping runs;
//   - timers change only with offers, new businesses and the clock;
//   - a hand-back is made or resolved only with a change to its slot's row,
//     or by staff resolving it.
//
// A step that moves the clock, and the first read, read everything.
// deepCheck compares the carried state with a full dump every 40 steps, so
// a change the rules above do not foresee is still caught. read also checks
// the shape of the store's answers: entry lists in fair order, one pending
// timer per key.
func (w *world) read(prev *snapshot) *snapshot {
	full := prev == nil || w.advanced
	// Daily housekeeping expires waiting entries whose window has passed.
	housekeep := false
	if prev != nil && w.advanced {
		for _, t := range prev.timers {
			housekeep = housekeep || (t.Kind == nextup.TimerHousekeeping && !t.DueAt.After(w.clock.Now()))
		}
	}
	s := &snapshot{
		now:       w.clock.Now(),
		slots:     map[string]nextup.Slot{},
		entries:   map[string]nextup.Entry{},
		offers:    map[string]nextup.Offer{},
		bookings:  map[string]nextup.Booking{},
		handbacks: map[string]nextup.HandBack{},
		timers:    map[string]nextup.Timer{},
		slotOffer: map[string][]nextup.Offer{},
		slotBook:  map[string][]nextup.Booking{},
	}
	ctx := w.ctx
	err := w.fs.Read(ctx, func(tx nextup.Tx) error {
		flagsChanged := full || w.hbTouched
		for _, bid := range w.m.bizIDs {
			slots, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: bid})
			if err != nil {
				return fmt.Errorf("SlotList: %w", err)
			}
			for _, sl := range slots {
				s.slots[sl.ID] = sl
				if p, ok := prev.slot(sl.ID); !ok || !reflect.DeepEqual(p, sl) {
					flagsChanged = true // hand-backs are resolved only where seats or capacity change
				}
				var offers []nextup.Offer
				var books []nextup.Booking
				// Within one Advance an offer can be made and expire again,
				// leaving the slot's row as it was: then only a slot that had
				// started before the step (no offer is made for it any more)
				// is settled.
				if (!w.advanced || (prev != nil && !sl.StartsAt.After(prev.now))) && !w.rebook[sl.ID] {
					offers, books = prev.settled(sl)
				}
				if offers == nil {
					if offers, err = tx.OfferListBySlot(ctx, sl.ID); err != nil {
						return fmt.Errorf("OfferListBySlot: %w", err)
					}
					if books, err = tx.BookingListBySlot(ctx, sl.ID); err != nil {
						return fmt.Errorf("BookingListBySlot: %w", err)
					}
				}
				s.slotOffer[sl.ID] = offers
				for _, o := range offers {
					s.offers[o.ID] = o
					if p, ok := prev.offer(o.ID); !ok || p.State != o.State {
						w.touched[o.EntryID] = true
					}
				}
				s.slotBook[sl.ID] = books
				for _, b := range books {
					s.bookings[b.ID] = b
					// An event's registration leaves when its booking ends,
					// by whichever door (registrationEnded, package waitlist/slots).
					if pb, ok := prev.booking(b.ID); ok && pb.State != b.State && b.EntryID != "" {
						w.touched[b.EntryID] = true
					}
					// A new booking may withdraw its person's other
					// entries (the rules' dedupe).
					if _, ok := prev.booking(b.ID); !ok && b.EntryID != "" && w.m.entries[b.EntryID] != nil {
						for _, other := range w.m.entries {
							if other.person == w.m.entries[b.EntryID].person {
								w.touched[other.id] = true
							}
						}
					}
				}
			}
		}
		for _, bid := range w.m.bizIDs {
			if prev == nil {
				for _, st := range entryStates {
					if err := w.readEntries(tx, s, bid, st); err != nil {
						return err
					}
				}
			} else if housekeep {
				if err := w.readEntries(tx, s, bid, nextup.EntryWaiting); err != nil {
					return err
				}
			}
			if flagsChanged {
				hbStates := []nextup.HandBackState{nextup.HandBackOpen, nextup.HandBackResolved}
				if prev != nil {
					hbStates = hbStates[:1]
				}
				for _, st := range hbStates {
					hbs, err := tx.HandBackList(ctx, bid, st)
					if err != nil {
						return fmt.Errorf("HandBackList: %w", err)
					}
					for _, h := range hbs {
						s.handbacks[h.ID] = h
					}
				}
			}
			{
				// Read every step: besides offers, a decision can add a
				// rematch timer (an entry skipped for the daily cap).
				timers, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: bid, PendingOnly: true})
				if err != nil {
					return fmt.Errorf("TimerList: %w", err)
				}
				for _, t := range timers {
					if _, dup := s.timers[t.Key]; dup {
						w.fail("check timers: two pending timers with key %s", t.Key)
					}
					s.timers[t.Key] = t
				}
			}
		}
		if prev == nil {
			return nil
		}
		// Entries: those read above, those the step touched, the rest as they were.
		for _, id := range slices.Sorted(maps.Keys(w.touched)) {
			if _, ok := s.entries[id]; ok || w.m.entries[id] == nil {
				continue
			}
			// A registration's booked entry can still leave (its person
			// cancels); other terminal entries never change again.
			if p, ok := prev.entries[id]; ok && entryTerminal(p.State) && (p.State != nextup.EntryBooked || w.m.entries[id].eventID == "") {
				continue
			}
			e, err := tx.EntryGet(ctx, id)
			if err != nil {
				return fmt.Errorf("EntryGet %s: %w", id, err)
			}
			s.entries[id] = e
		}
		for _, id := range sortedKeys(prev.entries) {
			if _, ok := s.entries[id]; ok {
				continue
			}
			e := prev.entries[id]
			if housekeep && e.State == nextup.EntryWaiting {
				var err error
				if e, err = tx.EntryGet(ctx, id); err != nil {
					return fmt.Errorf("EntryGet %s: %w", id, err)
				}
			}
			s.entries[id] = e
		}
		for _, id := range sortedKeys(prev.handbacks) {
			if _, ok := s.handbacks[id]; ok {
				continue
			}
			h := prev.handbacks[id]
			if flagsChanged && h.State == nextup.HandBackOpen {
				var err error
				if h, err = tx.HandBackGet(ctx, id); err != nil {
					return fmt.Errorf("HandBackGet %s: %w", id, err)
				}
			}
			s.handbacks[id] = h
		}
		return nil
	})
	if err != nil {
		w.fail("read state: %v", err)
	}
	return s
}

func (w *world) readEntries(tx nextup.Tx, s *snapshot, bid string, st nextup.EntryState) error {
	es, err := tx.EntryList(w.ctx, nextup.EntryFilter{BusinessID: bid, State: st})
	if err != nil {
		return fmt.Errorf("EntryList %s: %w", st, err)
	}
	for i, e := range es {
		if e.State != st {
			w.fail("check store: EntryList(state=%s) returned entry %s in state %s", st, e.ID, e.State)
		}
		if i > 0 && !storeFairLess(es[i-1], e) {
			w.fail("check store: EntryList(state=%s) is not in fair order: %s before %s", st, es[i-1].ID, e.ID)
		}
		s.entries[e.ID] = e
	}
	return nil
}

func (s *snapshot) slot(id string) (nextup.Slot, bool) {
	if s == nil {
		return nextup.Slot{}, false
	}
	x, ok := s.slots[id]
	return x, ok
}

func (s *snapshot) offer(id string) (nextup.Offer, bool) {
	if s == nil {
		return nextup.Offer{}, false
	}
	x, ok := s.offers[id]
	return x, ok
}

func (s *snapshot) booking(id string) (nextup.Booking, bool) {
	if s == nil {
		return nextup.Booking{}, false
	}
	x, ok := s.bookings[id]
	return x, ok
}

// settled returns the offers and bookings of a slot when they cannot have
// changed since this snapshot, or nil.
func (s *snapshot) settled(sl nextup.Slot) ([]nextup.Offer, []nextup.Booking) {
	if s == nil {
		return nil, nil
	}
	p, ok := s.slots[sl.ID]
	if !ok || !reflect.DeepEqual(p, sl) {
		return nil, nil
	}
	offers := s.slotOffer[sl.ID]
	for _, o := range offers {
		if o.State.Live() {
			return nil, nil
		}
	}
	if offers == nil {
		offers = []nextup.Offer{}
	}
	return offers, s.slotBook[sl.ID]
}

// storeFairLess is fair order on the store's own fields.
func storeFairLess(a, b nextup.Entry) bool {
	if a.Priority != b.Priority {
		return a.Priority
	}
	if c := a.JoinedAt.Compare(b.JoinedAt); c != 0 {
		return c < 0
	}
	return a.Seq < b.Seq
}

// sameState compares the rows two snapshots hold and names the first
// difference, or returns "".
func sameState(a, b *snapshot) string {
	if d := diffMaps("slot", a.slots, b.slots); d != "" {
		return d
	}
	if d := diffMaps("entry", a.entries, b.entries); d != "" {
		return d
	}
	if d := diffMaps("offer", a.offers, b.offers); d != "" {
		return d
	}
	if d := diffMaps("booking", a.bookings, b.bookings); d != "" {
		return d
	}
	if d := diffMaps("hand-back", a.handbacks, b.handbacks); d != "" {
		return d
	}
	return diffMaps("timer", a.timers, b.timers)
}

func diffMaps[V any](what string, a, b map[string]V) string {
	for _, k := range sortedKeys(a) {
		bv, ok := b[k]
		if !ok {
			return fmt.Sprintf("%s %s disappeared", what, k)
		}
		if !reflect.DeepEqual(a[k], bv) {
			return fmt.Sprintf("%s %s changed:\n\tbefore %s\n\tafter  %s", what, k, js(a[k]), js(bv))
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			return fmt.Sprintf("%s %s appeared: %s", what, k, js(b[k]))
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

// dump is every row of every known business, audit log, outbox and timers
// (done ones too) included, serialised canonically: what "nothing changed"
// and "a replay is identical" compare.
type dump struct {
	Businesses []nextup.Business
	Slots      []nextup.Slot
	Entries    []nextup.Entry
	Offers     []nextup.Offer
	Bookings   []nextup.Booking
	HandBacks  []nextup.HandBack
	Audit      []nextup.AuditEvent
	Messages   []nextup.Message
	Timers     []nextup.Timer
}

func (w *world) dump(ctx context.Context) dump {
	var d dump
	err := w.fs.Read(ctx, func(tx nextup.Tx) error {
		for _, bid := range w.m.bizIDs {
			b, err := tx.BusinessGet(ctx, bid)
			if err != nil {
				return err
			}
			d.Businesses = append(d.Businesses, b)
			slots, err := tx.SlotList(ctx, nextup.SlotFilter{BusinessID: bid})
			if err != nil {
				return err
			}
			d.Slots = append(d.Slots, slots...)
			for _, sl := range slots {
				os, err := tx.OfferListBySlot(ctx, sl.ID)
				if err != nil {
					return err
				}
				d.Offers = append(d.Offers, os...)
				bs, err := tx.BookingListBySlot(ctx, sl.ID)
				if err != nil {
					return err
				}
				d.Bookings = append(d.Bookings, bs...)
			}
			for _, st := range entryStates {
				es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: bid, State: st})
				if err != nil {
					return err
				}
				d.Entries = append(d.Entries, es...)
			}
			for _, st := range []nextup.HandBackState{nextup.HandBackOpen, nextup.HandBackResolved} {
				hbs, err := tx.HandBackList(ctx, bid, st)
				if err != nil {
					return err
				}
				d.HandBacks = append(d.HandBacks, hbs...)
			}
			evs, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: bid})
			if err != nil {
				return err
			}
			d.Audit = append(d.Audit, evs...)
			ms, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: bid})
			if err != nil {
				return err
			}
			d.Messages = append(d.Messages, ms...)
			ts, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: bid})
			if err != nil {
				return err
			}
			d.Timers = append(d.Timers, ts...)
		}
		return nil
	})
	if err != nil {
		w.fail("dump state: %v", err)
	}
	slices.SortFunc(d.Entries, func(a, b nextup.Entry) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(d.HandBacks, func(a, b nextup.HandBack) int { return cmp.Compare(a.ID, b.ID) })
	return d
}

// journal is the part of a dump a snapshot does not hold: businesses,
// audit log, outbox and every timer. A fault or a restart compares it before
// and after, and a full read of the rest with the last snapshot.
func (w *world) journal() dump {
	var d dump
	ctx := w.ctx
	err := w.fs.Read(ctx, func(tx nextup.Tx) error {
		for _, bid := range w.m.bizIDs {
			b, err := tx.BusinessGet(ctx, bid)
			if err != nil {
				return err
			}
			d.Businesses = append(d.Businesses, b)
			evs, err := tx.AuditList(ctx, nextup.AuditFilter{BusinessID: bid})
			if err != nil {
				return err
			}
			d.Audit = append(d.Audit, evs...)
			ms, err := tx.MessageList(ctx, nextup.MessageFilter{BusinessID: bid})
			if err != nil {
				return err
			}
			d.Messages = append(d.Messages, ms...)
			ts, err := tx.TimerList(ctx, nextup.TimerFilter{BusinessID: bid})
			if err != nil {
				return err
			}
			d.Timers = append(d.Timers, ts...)
		}
		return nil
	})
	if err != nil {
		w.fail("read the journal: %v", err)
	}
	return d
}

func (d dump) digest() string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// renumbered is d with the numbers a store draws from a sequence (entry
// seq, audit and timer ids) replaced by their rank, 1, 2, 3, ... in the
// order they were drawn. SQLite draws them without gaps; a PostgreSQL
// sequence keeps a number a rolled-back transaction drew, so the same run
// leaves gaps there. Ranks keep what the numbers mean: their order.
func (d dump) renumbered() dump {
	rank := func(vs []int64) map[int64]int64 {
		sorted := slices.Clone(vs)
		slices.Sort(sorted)
		m := make(map[int64]int64, len(sorted))
		for i, v := range sorted {
			m[v] = int64(i + 1)
		}
		return m
	}
	out := d
	out.Entries = slices.Clone(d.Entries)
	// The numbers ranked are the entries' and those audit rows name: a
	// join's row the seq it was given, a move to the back's the seq it
	// left (seq_before, held by no entry now) and the one it took.
	seqKeys := []string{"seq", "seq_before"}
	all := collect(out.Entries, func(e nextup.Entry) int64 { return e.Seq })
	for _, ev := range d.Audit {
		for _, k := range seqKeys {
			if seq, ok := ev.Detail[k].(float64); ok {
				all = append(all, int64(seq))
			}
		}
	}
	seqs := rank(slices.Compact(slices.Sorted(slices.Values(all))))
	for i := range out.Entries {
		out.Entries[i].Seq = seqs[out.Entries[i].Seq]
	}
	out.Audit = slices.Clone(d.Audit)
	aids := rank(collect(out.Audit, func(e nextup.AuditEvent) int64 { return e.ID }))
	for i := range out.Audit {
		ev := &out.Audit[i]
		ev.ID = aids[ev.ID]
		for _, k := range seqKeys {
			if seq, ok := ev.Detail[k].(float64); ok {
				ev.Detail = maps.Clone(ev.Detail)
				ev.Detail[k] = float64(seqs[int64(seq)])
			}
		}
	}
	out.Timers = slices.Clone(d.Timers)
	tids := rank(collect(out.Timers, func(t nextup.Timer) int64 { return t.ID }))
	for i := range out.Timers {
		out.Timers[i].ID = tids[out.Timers[i].ID]
	}
	return out
}

func collect[T any](xs []T, f func(T) int64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// diffDump names the first table whose rows differ, and the first row that
// differs in it; la and lb say where a and b come from ("before", "after").
func diffDump(a, b dump, la, lb string) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	pad := max(len(la), len(lb))
	for i := range va.NumField() {
		x, y := va.Field(i), vb.Field(i)
		if x.Len() != y.Len() {
			return fmt.Sprintf("%s: %d rows %s, %d %s", va.Type().Field(i).Name, x.Len(), la, y.Len(), lb)
		}
		for j := range x.Len() {
			xj, yj := js(x.Index(j).Interface()), js(y.Index(j).Interface())
			if xj != yj {
				return fmt.Sprintf("%s row %d:\n\t%-*s %s\n\t%-*s %s", va.Type().Field(i).Name, j, pad, la, xj, pad, lb, yj)
			}
		}
	}
	return ""
}
