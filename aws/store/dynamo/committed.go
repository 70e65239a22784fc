package dynamo

import (
	"context"
	"strconv"
	"strings"

	"github.com/nextup-dev/nextup"
)

// Committed is what a committed transaction did to the rows that make
// work happen later: timers and outbox messages. Nothing polls on Lambda,
// so the deployment turns these into the service's own triggers once the
// transaction has committed (aws/cmd/lambda): a one-time EventBridge
// Scheduler schedule per pending timer, an SQS message per message to
// send. The rows are the truth and commit with the change; the triggers
// come after, and a safety sweep repairs one lost between the two.
type Committed struct {
	// Timers are the timers written pending and not leased: created, or
	// moved to another due time (TimerSchedule). A timer leased by a
	// claim, or done, is not here.
	Timers []nextup.Timer
	// Gone are the ids of the timers the transaction deleted
	// (TimerCancel).
	Gone []int64
	// Messages are the messages written waiting to be sent: queued or
	// failed (a retry due at NextAttemptAt), and not leased.
	Messages []nextup.Message
}

// Empty reports whether the transaction left nothing to trigger.
func (c Committed) Empty() bool {
	return len(c.Timers) == 0 && len(c.Gone) == 0 && len(c.Messages) == 0
}

// OnCommit sets fn to be told, after each transaction of InTx commits,
// what it did to timers and messages (when there is anything). fn runs on
// the committing goroutine before InTx returns; it cannot undo the
// commit, so it reports its own failures elsewhere (a log). Set it before
// the store is used.
func (s *Store) OnCommit(fn func(ctx context.Context, c Committed)) { s.onCommit = fn }

// committed reads the transaction's buffered writes for OnCommit. A row
// that does not decode (it was just encoded from a record: a bug) is left
// out; the safety sweep still finds it due.
func (t *Tx) committed() Committed {
	var c Committed
	for _, pk := range t.order {
		w := t.writes[pk]
		if w == nil {
			continue
		}
		switch {
		case strings.HasPrefix(pk, "timer#"):
			if w.it == nil {
				if r, ok := t.reads[pk]; !ok || r.it == nil {
					continue // it was not there to delete
				}
				id, err := strconv.ParseInt(strings.TrimPrefix(pk, "timer#"), 10, 64)
				if err == nil {
					c.Gone = append(c.Gone, id)
				}
				continue
			}
			var tm nextup.Timer
			if err := decode(w.it, &tm); err == nil && tm.DoneAt == nil && tm.ClaimedUntil == nil {
				c.Timers = append(c.Timers, tm)
			}
		case strings.HasPrefix(pk, "msg#") && w.it != nil:
			var m nextup.Message
			if err := decode(w.it, &m); err == nil && (m.State == nextup.MessageQueued || m.State == nextup.MessageFailed) && m.ClaimedUntil == nil {
				c.Messages = append(c.Messages, m)
			}
		}
	}
	return c
}

// tell gives OnCommit's function what the committed transaction did.
func (t *Tx) tell(ctx context.Context) {
	if c := t.committed(); !c.Empty() {
		t.s.onCommit(ctx, c)
	}
}
