package dynamo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nextup-dev/nextup"
)

// An entry is the item ent#ID. Every put rebuilds its index attributes
// from the record (entryItem), so a change of state or waitlist moves it
// between partitions. FAIR is the entry's place in fair order as a
// fixed-width key: RANK#ts(JoinedAt)#seqKey(Seq), RANK "0" for priority
// entries and "1" for the rest (sqlstore.FairOrder). QUEUE is the waitlist,
// "event:EVENTID" or "service:SERVICE" (sqlstore.QueueOf).
//
//   - g1 entstat#HASH → ent#ID, while it has a status hash: EntryByStatusHash
//     is one query of a one-item partition and one GetItem.
//   - g2 entq#STATE#BID#QUEUE → FAIR: one waitlist's entries in one state in
//     fair order. EntryCandidates reads the waiting partition from the
//     cursor on, filtering window and party size (the items skipped plus
//     Limit); EntryPosition is one GetItem of the entry, one BatchGetItem
//     of its path in the rank tree (rank.go) and one COUNT query of the
//     waiting partition within the entry's lowest node of that tree (about
//     65 ms of joins), however far back the entry is; EntryList of a
//     waitlist reads Limit items of each state's partition.
//   - g3 entb#STATE#BID → FAIR: a business's entries in one state in fair
//     order, for EntryList without a waitlist (Limit items of each state's
//     partition) and EntryActiveListByContact (the whole waiting and
//     offered partitions, filtered by person: g4 is one waitlist's).
//   - g4 entc#BID#QUEUE#CONTACT → seqKey(Seq): one person's entries on one
//     waitlist, oldest first, for EntryActiveByContact and EntryByContact
//     (the person's few entries there, filtered by state). No uniqueness:
//     the SQL schema has none for a contact's entries either.
//   - g5 entexp#BID → ts(Latest)#seqKey(Seq), while waiting with a Latest:
//     EntryExpireBefore reads the due ones, at most limit.
//
// A write is one Put of the item; a change of state moves it in g2, g3
// and g5 (a delete and a put in each of those indexes). A write that moves
// a waiting entry (a join, an offer, a leave, a priority or a move to the
// back) also moves its counts in the rank tree: one BatchGetItem and up to
// six puts, most of them items the waitlist's other entries share.
//
// Seq comes from the counter seq#entries, one for the table (the SQL
// stores' seq is one sequence too: entries created one after another get
// increasing numbers whatever their business), one UpdateItem per entry
// (one item: about a thousand new entries a second across the table).
// The status hash has no marker: like a business's API key hash, it is the
// hash of a random token (the SQL index is UNIQUE for lookups, no rule a
// caller relies on).

func entPK(id string) string { return "ent#" + id }

// entSeqPK is the counter of entries' Seq.
const entSeqPK = "seq#entries"

// fairKey is an entry's place in fair order as a fixed-width sort key.
func fairKey(e nextup.Entry) string {
	rank := "1"
	if e.Priority {
		rank = "0"
	}
	return rank + "#" + ts(e.JoinedAt) + "#" + seqKey(e.Seq)
}

// queueOf names the waitlist of a service or event (nextup.QueueOf).
func queueOf(service, eventID string) string { return nextup.QueueOf(service, eventID) }

func entQueuePart(state nextup.EntryState, businessID, queue string) string {
	return "entq#" + string(state) + "#" + businessID + "#" + queue
}

func entBizPart(state nextup.EntryState, businessID string) string {
	return "entb#" + string(state) + "#" + businessID
}

func entContactPart(businessID, queue, contactKey string) string {
	return "entc#" + businessID + "#" + queue + "#" + contactKey
}

func entExpPart(businessID string) string { return "entexp#" + businessID }

func entryItem(e nextup.Entry) (item, error) {
	var status, exp, expSK string
	if e.StatusHash != "" {
		status = "entstat#" + e.StatusHash
	}
	if e.State == nextup.EntryWaiting && !e.Latest.IsZero() {
		exp, expSK = entExpPart(e.BusinessID), ts(e.Latest)+"#"+seqKey(e.Seq)
	}
	queue, fair := queueOf(e.Service, e.EventID), fairKey(e)
	return newItem(e,
		"gsi1pk", status, "gsi1sk", entPK(e.ID),
		"gsi2pk", entQueuePart(e.State, e.BusinessID, queue), "gsi2sk", fair,
		"gsi3pk", entBizPart(e.State, e.BusinessID), "gsi3sk", fair,
		"gsi4pk", entContactPart(e.BusinessID, queue, e.ContactKey()), "gsi4sk", seqKey(e.Seq),
		"gsi5pk", exp, "gsi5sk", expSK)
}

// putEntry writes e, moving its counts in the rank tree (rank.go) from
// the entry as the transaction sees it now.
func (t *Tx) putEntry(ctx context.Context, e nextup.Entry) error {
	it, err := entryItem(e)
	if err != nil {
		return err
	}
	was, err := t.get(ctx, entPK(e.ID))
	if err != nil {
		return err
	}
	var old *nextup.Entry
	if was != nil {
		old = new(nextup.Entry)
		if err := decode(was, old); err != nil {
			return err
		}
	}
	if err := t.rankMove(ctx, old, e); err != nil {
		return err
	}
	return t.put(entPK(e.ID), it)
}

// entryStates are the states an entry may be in.
var entryStates = []nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered, nextup.EntryBooked, nextup.EntryLeft, nextup.EntryExpired}

// after is the lower bound of a fair-order range strictly after the
// cursor c, or "" for none: c's key with the next Seq (keys have one
// width, and Seq is their last part).
func after(c *nextup.Entry) string {
	if c == nil {
		return ""
	}
	next := *c
	next.Seq++
	return fairKey(next)
}

// EntryCreate stores an entry, waiting unless e says otherwise, and
// returns it with its Seq; an id that exists is ErrConflict, a missing
// business ErrNotFound.
func (t *Tx) EntryCreate(ctx context.Context, e nextup.Entry) (nextup.Entry, error) {
	what := "create entry " + e.ID
	if e.State == "" {
		e.State = nextup.EntryWaiting
	}
	if !slices.Contains(entryStates, e.State) {
		return e, conflict(fmt.Sprintf("%s: state %q", what, e.State))
	}
	if ok, err := t.exists(ctx, bizPK(e.BusinessID)); err != nil || !ok {
		return e, cmpErr(err, notFound(what+": business "+e.BusinessID))
	}
	if ok, err := t.exists(ctx, entPK(e.ID)); err != nil || ok {
		return e, cmpErr(err, conflict(what))
	}
	seq, err := t.next(ctx, entSeqPK)
	if err != nil {
		return e, fmt.Errorf("%s: %w", what, err)
	}
	e.Seq = seq
	return e, t.putEntry(ctx, e)
}

// EntryGet reads an entry; inside InTx the commit checks it is unchanged.
func (t *Tx) EntryGet(ctx context.Context, id string) (nextup.Entry, error) {
	return loadLocked[nextup.Entry](ctx, t, entPK(id), "get entry "+id)
}

// EntryByStatusHash reads the entry whose status token has this hash.
func (t *Tx) EntryByStatusHash(ctx context.Context, hash string) (nextup.Entry, error) {
	return byIndex[nextup.Entry](ctx, t, "entstat#", hash, "entry by status token")
}

// EntryUpdate rewrites what a person or staff may change: contact,
// criteria, priority and party size (and UpdatedAt, unless zero). The
// place in line (JoinedAt, Seq), the state, the source and the status
// hash stay.
func (t *Tx) EntryUpdate(ctx context.Context, e nextup.Entry) error {
	what := "update entry " + e.ID
	cur, err := load[nextup.Entry](ctx, t, entPK(e.ID), what)
	if err != nil {
		return err
	}
	cur.Name, cur.Email, cur.Phone, cur.Channel = e.Name, e.Email, e.Phone, e.Channel
	cur.Service, cur.EventID, cur.PartySize = e.Service, e.EventID, e.PartySize
	cur.Earliest, cur.Latest, cur.Staff, cur.Availability = e.Earliest, e.Latest, e.Staff, e.Availability
	cur.Priority = e.Priority
	if !e.UpdatedAt.IsZero() {
		cur.UpdatedAt = e.UpdatedAt
	}
	return t.putEntry(ctx, cur)
}

// EntrySetStatusHash replaces an entry's status hash: the entry's g1 key
// moves with it. The hash is unique (a status token has 192 random bits);
// one another entry has is ErrConflict.
func (t *Tx) EntrySetStatusHash(ctx context.Context, id, hash string, at time.Time) error {
	what := "set status hash of entry " + id
	if hash == "" {
		return conflict(what + ": empty hash")
	}
	e, err := load[nextup.Entry](ctx, t, entPK(id), what)
	if err != nil {
		return err
	}
	if other, err := t.EntryByStatusHash(ctx, hash); err == nil && other.ID != id {
		return conflict(what + ": hash taken")
	} else if err != nil && !errors.Is(err, nextup.ErrNotFound) {
		return err
	}
	e.StatusHash, e.UpdatedAt = hash, at
	return t.putEntry(ctx, e)
}

// EntrySetState moves an entry from one of the states from to state to,
// stamping UpdatedAt; another state is ErrConflict.
func (t *Tx) EntrySetState(ctx context.Context, id string, from []nextup.EntryState, to nextup.EntryState, at time.Time) error {
	what := fmt.Sprintf("entry %s %v -> %s", id, from, to)
	e, err := load[nextup.Entry](ctx, t, entPK(id), what)
	if err != nil {
		return err
	}
	if !slices.Contains(from, e.State) || !slices.Contains(entryStates, to) {
		return conflict(what)
	}
	e.State, e.UpdatedAt = to, at
	return t.putEntry(ctx, e)
}

// EntryLapse counts one more lapse or decline of an entry and, when back,
// moves it to the back of its waitlist: JoinedAt at and the next Seq of
// the counter seq#entries, so its FAIR key sorts after every entry of its
// priority that joined by then (one Put: the new key in g2 and g3).
func (t *Tx) EntryLapse(ctx context.Context, id string, back bool, at time.Time) (nextup.Entry, error) {
	what := fmt.Sprintf("lapse of entry %s (back: %v)", id, back)
	e, err := load[nextup.Entry](ctx, t, entPK(id), what)
	if err != nil {
		return e, err
	}
	e.Lapses++
	if back {
		seq, err := t.next(ctx, entSeqPK)
		if err != nil {
			return e, fmt.Errorf("%s: %w", what, err)
		}
		e.JoinedAt, e.Seq = at, seq
	}
	return e, t.putEntry(ctx, e)
}

// EntryCandidates reads a waitlist's waiting entries in fair order past
// the cursor, keeping those whose window holds the slot's start and whose
// party size fits, up to Limit.
func (t *Tx) EntryCandidates(ctx context.Context, q nextup.CandidateQuery) ([]nextup.Entry, error) {
	service := q.Service
	if q.EventID != "" {
		service = ""
	}
	fits := func(e nextup.Entry) bool {
		return !e.Earliest.After(q.SlotStart) && (e.Latest.IsZero() || !e.Latest.Before(q.SlotStart)) &&
			(q.MinParty <= 0 || e.PartySize >= q.MinParty) && (q.MaxParty <= 0 || e.PartySize <= q.MaxParty)
	}
	its, err := t.query(ctx, query{
		index: "gsi2", part: entQueuePart(nextup.EntryWaiting, q.BusinessID, queueOf(service, q.EventID)),
		from: after(q.After), limit: q.Limit,
		keep: func(it item) bool {
			var e nextup.Entry
			return decode(it, &e) == nil && fits(e)
		},
	})
	if err != nil {
		return nil, err
	}
	out, err := loadAll[nextup.Entry](its)
	return slices.Clip(out), err
}

// EntryList returns entries in fair order: each state's partition (of the
// waitlist, or else of the business) is read up to Limit past the cursor,
// and the runs are merged.
func (t *Tx) EntryList(ctx context.Context, f nextup.EntryFilter) ([]nextup.Entry, error) {
	states := []nextup.EntryState{f.State}
	if f.State == "" {
		states = []nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered}
	}
	var out []nextup.Entry
	for _, s := range states {
		q := query{index: "gsi3", part: entBizPart(s, f.BusinessID), from: after(f.After), limit: f.Limit}
		if f.Service != "" || f.EventID != "" {
			q.index, q.part = "gsi2", entQueuePart(s, f.BusinessID, queueOf(f.Service, f.EventID))
		}
		its, err := t.query(ctx, q)
		if err != nil {
			return nil, err
		}
		es, err := loadAll[nextup.Entry](its)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	slices.SortStableFunc(out, nextup.CompareFair)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return slices.Clip(out), nil
}

// EntryPosition counts the waiting entries of the same waitlist ahead of
// this one, plus one. The entry's place is read from the store, not from
// e, so a stale copy still gets the truth.
func (t *Tx) EntryPosition(ctx context.Context, e nextup.Entry) (int, error) {
	cur, err := load[nextup.Entry](ctx, t, entPK(e.ID), "position of entry "+e.ID)
	if err != nil {
		return 0, err
	}
	ahead, err := t.rankAhead(ctx, cur)
	if err != nil {
		return 0, err
	}
	return ahead + 1, nil
}

// EntryActiveByContact reads the oldest waiting or offered entry of a
// contact on one waitlist.
func (t *Tx) EntryActiveByContact(ctx context.Context, businessID, contactKey, service, eventID string) (nextup.Entry, error) {
	return t.entryByContact(ctx, "active entry by contact", businessID, contactKey, service, eventID,
		[]nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered})
}

// EntryByContact reads the oldest entry of a contact on one waitlist in
// one of states.
func (t *Tx) EntryByContact(ctx context.Context, businessID, contactKey, service, eventID string, states []nextup.EntryState) (nextup.Entry, error) {
	return t.entryByContact(ctx, "entry by contact", businessID, contactKey, service, eventID, states)
}

// EntryActiveListByContact reads the waiting and offered entries of a
// contact in a business, on all its waitlists, by JoinedAt, then ID; at
// most limit (0: no limit). g4 cannot serve it: its partition is one
// waitlist's (entc#BID#QUEUE#CONTACT), and the business's waitlists are
// not listed anywhere. So it reads the business's waiting and offered
// partitions of g3 (entb#STATE#BID) whole, keeping the person's entries:
// the cost is the business's active entries (each one read again from the
// base table, the index holding keys only), not the person's few. In fair
// order, not by JoinedAt, so the limit is applied after the sort.
func (t *Tx) EntryActiveListByContact(ctx context.Context, businessID, contactKey string, limit int) ([]nextup.Entry, error) {
	var out []nextup.Entry
	for _, s := range []nextup.EntryState{nextup.EntryWaiting, nextup.EntryOffered} {
		its, err := t.query(ctx, query{
			index: "gsi3", part: entBizPart(s, businessID),
			keep: func(it item) bool {
				// The exact business and state too: the partition value
				// joins free-form strings.
				var e nextup.Entry
				return decode(it, &e) == nil && e.BusinessID == businessID && e.State == s &&
					e.ContactKey() == contactKey
			},
		})
		if err != nil {
			return nil, err
		}
		es, err := loadAll[nextup.Entry](its)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	slices.SortFunc(out, func(a, b nextup.Entry) int {
		return cmp.Or(a.JoinedAt.Compare(b.JoinedAt), cmp.Compare(a.ID, b.ID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return slices.Clip(out), nil
}

func (t *Tx) entryByContact(ctx context.Context, what, businessID, contactKey, service, eventID string, states []nextup.EntryState) (nextup.Entry, error) {
	if len(states) == 0 {
		return nextup.Entry{}, notFound(what)
	}
	queue := queueOf(service, eventID)
	its, err := t.query(ctx, query{
		index: "gsi4", part: entContactPart(businessID, queue, contactKey), limit: 1,
		keep: func(it item) bool {
			// The exact waitlist and person too: the partition value
			// joins free-form strings.
			var e nextup.Entry
			return decode(it, &e) == nil && e.BusinessID == businessID && queueOf(e.Service, e.EventID) == queue &&
				e.ContactKey() == contactKey && slices.Contains(states, e.State)
		},
	})
	if err != nil {
		return nextup.Entry{}, err
	}
	if len(its) == 0 {
		return nextup.Entry{}, notFound(what)
	}
	var e nextup.Entry
	return e, decode(its[0], &e)
}

// EntryExpireBefore moves up to limit waiting entries of a business whose
// Latest is before the time to expired, stamping UpdatedAt, and returns
// them by Latest, then Seq.
func (t *Tx) EntryExpireBefore(ctx context.Context, businessID string, before time.Time, limit int) ([]nextup.Entry, error) {
	its, err := t.query(ctx, query{index: "gsi5", part: entExpPart(businessID), to: ts(before), limit: limit})
	if err != nil {
		return nil, err
	}
	out, err := loadAll[nextup.Entry](its)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].State, out[i].UpdatedAt = nextup.EntryExpired, before
		if err := t.putEntry(ctx, out[i]); err != nil {
			return nil, fmt.Errorf("expire entries of business %s: %w", businessID, err)
		}
	}
	return slices.Clip(out), nil
}
