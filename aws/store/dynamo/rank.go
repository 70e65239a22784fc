package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nextup-dev/nextup"
)

// An entry's place in line is kept in a count tree, as the SQL stores
// keep it in their entry_ranks table (store/sqlite migration 0010, with
// the same coordinates): an entry's coordinate is c = JoinedAt in
// microseconds >> 10, and for each shift s of 36, 30, ..., 6 the tree
// counts the waiting entries of a waitlist and rank whose c >> s is a
// node. The 64 nodes under one node of the level above are one item,
// rnk#BID#RANK#SHIFT#PARENT#QUEUE (QUEUE last: it is free-form), whose
// record maps each node (a decimal string) to its count. A position is
// then one BatchGetItem of at most seven such items (the six levels of
// the entry's own path, and the lower rank's top when the entry is not a
// priority one) summing the counts before the entry's nodes, and one COUNT
// query of the waiting partition within the entry's lowest node (about
// 65 ms of joins): it does not grow with the place. Every put of an entry
// that moves a waiting entry (state, waitlist, rank, JoinedAt) moves its
// six counts in the same transaction (putEntry): six items read and
// written, most of them shared by the entries of one waitlist.

// rankShifts are the tree's levels, top first (sqlstore.RankShifts).
var rankShifts = [...]int64{36, 30, 24, 18, 12, 6}

// rankCoord is an entry's coordinate (sqlstore.RankCoord).
func rankCoord(joined time.Time) int64 { return max(joined.UnixMicro(), 0) >> 10 }

func rankOf(e nextup.Entry) int {
	if e.Priority {
		return 0
	}
	return 1
}

// rankPK is the item of the nodes at shift s under parent.
func rankPK(businessID, queue string, rank int, s, parent int64) string {
	return fmt.Sprintf("rnk#%s#%d#%d#%d#%s", businessID, rank, s, parent, queue)
}

// rankCounts reads the counts of a tree item (none when it is absent).
func rankCounts(it item) (map[string]int64, error) {
	counts := map[string]int64{}
	if it == nil {
		return counts, nil
	}
	return counts, decode(it, &counts)
}

// rankPath is the items of e's path down the tree, top first, with the
// node under each.
func rankPath(e nextup.Entry) (pks []string, nodes []int64) {
	c, queue := rankCoord(e.JoinedAt), queueOf(e.Service, e.EventID)
	for _, s := range rankShifts {
		pks = append(pks, rankPK(e.BusinessID, queue, rankOf(e), s, c>>(s+6)))
		nodes = append(nodes, c>>s)
	}
	return pks, nodes
}

// samePlace reports whether a and b count on the same nodes of the same
// waitlist's tree (a move within the lowest node changes no count).
func samePlace(a, b nextup.Entry) bool {
	low := rankShifts[len(rankShifts)-1]
	return a.BusinessID == b.BusinessID && queueOf(a.Service, a.EventID) == queueOf(b.Service, b.EventID) &&
		a.Priority == b.Priority && rankCoord(a.JoinedAt)>>low == rankCoord(b.JoinedAt)>>low
}

// rankMove moves the counts of an entry that was old (nil: not there)
// and becomes e.
func (t *Tx) rankMove(ctx context.Context, old *nextup.Entry, e nextup.Entry) error {
	was, is := old != nil && old.State == nextup.EntryWaiting, e.State == nextup.EntryWaiting
	if (was && is && samePlace(*old, e)) || (!was && !is) {
		return nil
	}
	// One BatchGetItem for every item of both paths that the transaction
	// has not read yet; the puts below then check the versions read.
	var pks []string
	if was {
		p, _ := rankPath(*old)
		pks = append(pks, p...)
	}
	if is {
		p, _ := rankPath(e)
		pks = append(pks, p...)
	}
	if _, err := t.fetch(ctx, pks); err != nil {
		return err
	}
	if was {
		if err := t.rankAdd(ctx, *old, -1); err != nil {
			return err
		}
	}
	if is {
		return t.rankAdd(ctx, e, 1)
	}
	return nil
}

// rankAdd adds d to the counts of e's path.
func (t *Tx) rankAdd(ctx context.Context, e nextup.Entry, d int64) error {
	pks, nodes := rankPath(e)
	for i, pk := range pks {
		it, err := t.get(ctx, pk)
		if err != nil {
			return err
		}
		counts, err := rankCounts(it)
		if err != nil {
			return err
		}
		k := strconv.FormatInt(nodes[i], 10)
		if counts[k] += d; counts[k] <= 0 {
			delete(counts, k)
		}
		if len(counts) == 0 {
			if it != nil {
				if err := t.del(pk); err != nil {
					return err
				}
			}
			continue
		}
		nit, err := newItem(counts)
		if err != nil {
			return err
		}
		if err := t.put(pk, nit); err != nil {
			return err
		}
	}
	return nil
}

// rankAhead counts the waiting entries ahead of cur in its waitlist: the
// tree's counts before its nodes, and the waiting entries of its lowest
// node before it.
func (t *Tx) rankAhead(ctx context.Context, cur nextup.Entry) (int, error) {
	pks, nodes := rankPath(cur)
	if !cur.Priority {
		prio := cur
		prio.Priority = true
		top, _ := rankPath(prio)
		pks = append(pks, top[0])
	}
	its, err := t.fetch(ctx, pks)
	if err != nil {
		return 0, err
	}
	byPK := map[string]item{}
	for _, it := range its {
		byPK[str(it, attrPK)] = it
	}
	ahead := int64(0)
	for i, pk := range pks {
		counts, err := rankCounts(byPK[pk])
		if err != nil {
			return 0, err
		}
		for k, n := range counts {
			node, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("dynamodb: rank item %s: node %q", pk, k)
			}
			if i == len(nodes) || node < nodes[i] { // the lower rank's top counts whole
				ahead += n
			}
		}
	}
	low := rankShifts[len(rankShifts)-1]
	rank := "1"
	if cur.Priority {
		rank = "0"
	}
	from := rank + "#"
	if leaf := rankCoord(cur.JoinedAt) >> low; leaf > 0 {
		from += ts(time.UnixMicro(leaf << (low + 10)))
	}
	before := cur
	before.Seq--
	// Up to cur's key, not including it: the largest key below it is the
	// one with the Seq before (keys are fixed-width), and no key ends in
	// "~", so this bound means the same to BETWEEN and to the
	// transaction's own writes (query.member).
	n, err := t.count(ctx, query{index: "gsi2", part: entQueuePart(nextup.EntryWaiting, cur.BusinessID, queueOf(cur.Service, cur.EventID)),
		from: from, to: fairKey(before) + "~"})
	if err != nil {
		return 0, err
	}
	return int(ahead) + n, nil
}
