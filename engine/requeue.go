package engine

import (
	"time"

	"github.com/nextup-dev/nextup"
)

// RequeueMove is what the re-queue rule does with a person whose offer
// lapsed or who declined it.
type RequeueMove string

// Re-queue moves.
const (
	RequeueKeep RequeueMove = "keep" // back to waiting, in the same place
	RequeueBack RequeueMove = "back" // back to waiting, at the back of the line
	RequeueDrop RequeueMove = "drop" // off the waitlist
)

// Requeue applies the re-queue rule q (nextup.Requeue) to a lapse or
// decline that is the entry's lapses-th, this one counted: the one that
// reaches q.DropAfter (when above zero) drops the person whatever the
// policy; before it, policy back moves them to the back of the line and
// keep and drop leave them where they are. An empty policy is keep, the
// rule of rules that predate it.
func Requeue(q nextup.Requeue, lapses int) RequeueMove {
	switch {
	case q.DropAfter > 0 && lapses >= q.DropAfter:
		return RequeueDrop
	case q.Policy == nextup.RequeueBack:
		return RequeueBack
	}
	return RequeueKeep
}

// Offered is a slot's offer history by entry: whom the slot may not be
// offered (again).
//
// An entry is never offered a slot twice in its place in line. Only a
// lapse that moved it to the back of the line (Requeue: its JoinedAt is
// then later than its offer, BackOfLine) lets it wait for that slot again,
// behind everyone else like someone who joins now, so that an event's
// waitlist offers it its seats again in turn; and not before someone
// else was offered the slot after its offer ended, so that a person who
// declined a slot, or let it lapse, is not offered it again straight away
// when nobody else is waiting. (A JoinedAt is never later than the
// entry's first offer otherwise: joins and imports are not dated in the
// future.)
type Offered struct {
	last map[string]nextup.Offer // each entry's latest offer of the slot
	// The latest creation time of an offer, the entry it went to, and the
	// latest of an offer to anyone else: when someone other than a given
	// entry was last offered the slot.
	top, second  time.Time
	topEntry     string
	any, another bool
}

// NewOffered indexes history, a slot's offers oldest first.
func NewOffered(history []nextup.Offer) Offered {
	h := Offered{last: make(map[string]nextup.Offer, len(history))}
	for _, o := range history {
		if l, ok := h.last[o.EntryID]; !ok || !o.CreatedAt.Before(l.CreatedAt) {
			h.last[o.EntryID] = o
		}
		switch t := o.CreatedAt; {
		case !h.any:
			h.top, h.topEntry, h.any = t, o.EntryID, true
		case o.EntryID == h.topEntry:
			h.top = maxTime(h.top, t)
		case t.After(h.top):
			h.second, h.another = h.top, true
			h.top, h.topEntry = t, o.EntryID
		default:
			h.second, h.another = maxTime(h.second, t), true
		}
	}
	return h
}

// Excludes reports whether the slot may not be offered to e: e was
// offered it in its current place in line, or since e's last offer of it
// ended nobody else was offered it. (Decide counts its own offers too:
// once it has offered the slot to someone else, those who waited for
// that have their turn at the seats left, ahead of the rest of the list.)
func (h Offered) Excludes(e nextup.Entry) bool {
	kept, _ := h.excludes(e)
	return kept
}

// excludes is Excludes, and whether e is kept from the slot only until
// someone else is offered it.
func (h Offered) excludes(e nextup.Entry) (kept, untilOther bool) {
	o, ok := h.last[e.ID]
	switch {
	case !ok:
		return false, false
	case !o.CreatedAt.Before(e.JoinedAt) || o.ResolvedAt == nil:
		return true, false
	}
	// Moved to the back since: someone else must have had the slot
	// offered after e's offer ended.
	other, ok := h.top, h.any
	if h.topEntry == e.ID {
		other, ok = h.second, h.another
	}
	if !ok || other.Before(*o.ResolvedAt) {
		return true, true
	}
	return false, false
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// BackOfLine is the place in line (JoinedAt) that a lapse of offer o at
// now moves its entry to: now, but always after o was made, so that o no
// longer keeps the entry from its slot (Offered) even when it lapsed the
// instant it was made (a decline at once, a fake clock).
func BackOfLine(o nextup.Offer, now time.Time) time.Time {
	if after := o.CreatedAt.Add(time.Microsecond); now.Before(after) {
		return after
	}
	return now
}
