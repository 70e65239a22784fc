package dynamo

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nextup-dev/nextup"
)

// A timer is the item timer#ID (ID from the counter seq#timers). Its
// indexes all sort by due time, then id (sort key DUE#ID: ts(DueAt) "#"
// seqKey(ID)), and put the state in the partition, so that a list of
// pending timers reads no done ones (done timers stay, as in the SQL
// stores):
//   - gsi1pk timerdue (pending) or timerdone (done), gsi1sk DUE#ID:
//     TimerClaimDue (one Query of the due range of timerdue, passing over
//     due timers whose lease still holds, and a BatchGetItem of the hits),
//     TimerNextDue (a Query of one key and one read) and TimerList
//     without a business or subject.
//   - gsi2pk timerbiz#BID#pending or timerbiz#BID#done, gsi2sk DUE#ID:
//     TimerList of a business (the pending partition alone when
//     PendingOnly).
//   - gsi3pk timersub#SUBJECT (timers with a subject only), gsi3sk DUE#ID:
//     TimerList of a subject (a few timers each; kind, business and state
//     are filtered there).
//
// The marker timerkey#KEY holds the id of the pending timer with that key
// (non-empty keys only): TimerSchedule and TimerCancel find the timer with
// two GetItems, TimerDone (the same two) drops it. A new
// timer's id costs one UpdateItem of the counter.
//
// An idempotency record is the item idem#SCOPE#KEY, or idemh#SHA256 (hex,
// of scope NUL key) when scope and key are longer than maxIdemKey bytes
// together, the scope holds a '#' or either is not UTF-8: the key is part
// of an index sort key, which has at most 1024 bytes. It is listed by
// expiry in gsi1 (gsi1pk idemexp, gsi1sk EXPIRES#PK) for IdempotencyPurge
// (one Query of the expired range and a BatchGetItem of the hits), and its
// ttl attribute lets DynamoDB delete it on its own some time after it
// expires. Start, Finish and Delete are one GetItem and one write.

func timerPK(id int64) string { return "timer#" + strconv.FormatInt(id, 10) }

func timerKeyPK(key string) string { return "timerkey#" + key }

// Partitions of the timers' indexes.
const (
	timerDue  = "timerdue"
	timerDone = "timerdone"
)

func timerBizPart(businessID string, pending bool) string {
	if pending {
		return "timerbiz#" + businessID + "#pending"
	}
	return "timerbiz#" + businessID + "#done"
}

func timerItem(tm nextup.Timer) (item, error) {
	sk := ts(tm.DueAt) + "#" + seqKey(tm.ID)
	pending := tm.DoneAt == nil
	g1 := timerDone
	if pending {
		g1 = timerDue
	}
	var sub string
	if tm.SubjectID != "" {
		sub = "timersub#" + tm.SubjectID
	}
	return newItem(tm, "gsi1pk", g1, "gsi1sk", sk, "gsi2pk", timerBizPart(tm.BusinessID, pending), "gsi2sk", sk,
		"gsi3pk", sub, "gsi3sk", sk)
}

func (t *Tx) putTimer(tm nextup.Timer) error {
	it, err := timerItem(tm)
	if err != nil {
		return err
	}
	return t.put(timerPK(tm.ID), it)
}

// pendingTimer returns the pending timer the marker of key points at, if
// any (ok false: none; a marker left pointing at a timer that is not
// pending is reported as none).
func (t *Tx) pendingTimer(ctx context.Context, key, what string) (tm nextup.Timer, ok bool, err error) {
	of, err := t.markerGet(ctx, timerKeyPK(key))
	if err != nil || of == "" {
		return tm, false, err
	}
	id, err := strconv.ParseInt(of, 10, 64)
	if err != nil {
		return tm, false, fmt.Errorf("%s: marker %s: %w", what, timerKeyPK(key), err)
	}
	tm, err = load[nextup.Timer](ctx, t, timerPK(id), what)
	if err != nil {
		return tm, false, ignoreNotFound(err)
	}
	return tm, tm.DoneAt == nil, nil
}

// TimerSchedule creates a timer or, when a pending one has the same
// non-empty key, moves it (with its business, kind and subject) and drops
// its lease: a sweeper still running the old deadline then fails
// TimerDone, and the timer fires again at its new time.
func (t *Tx) TimerSchedule(ctx context.Context, tm nextup.Timer) error {
	what := "schedule timer " + tm.Key
	if tm.Key != "" {
		old, ok, err := t.pendingTimer(ctx, tm.Key, what)
		if err != nil {
			return err
		}
		if ok {
			old.BusinessID, old.Kind, old.SubjectID, old.DueAt = tm.BusinessID, tm.Kind, tm.SubjectID, tm.DueAt
			old.ClaimedUntil, old.ClaimedBy, old.Attempts, old.RenewedUntil = nil, "", 0, nil
			return t.putTimer(old)
		}
	}
	id, err := t.next(ctx, "seq#timers")
	if err != nil {
		return err
	}
	tm.ID = id
	tm.ClaimedUntil, tm.ClaimedBy, tm.Attempts, tm.DoneAt, tm.RenewedUntil = nil, "", 0, nil, nil
	if tm.Key != "" {
		// The marker was read above: absent, or left pointing at a
		// timer no longer pending.
		m, err := newItem(marker{Of: strconv.FormatInt(id, 10)})
		if err != nil {
			return err
		}
		if err := t.put(timerKeyPK(tm.Key), m); err != nil {
			return err
		}
	}
	it, err := timerItem(tm)
	if err != nil {
		return err
	}
	return t.create(timerPK(id), it)
}

// TimerCancel deletes the pending timer with this key; none is no error.
func (t *Tx) TimerCancel(ctx context.Context, key string) error {
	if key == "" {
		return nil
	}
	what := "cancel timer " + key
	tm, ok, err := t.pendingTimer(ctx, key, what)
	if err != nil {
		return err
	}
	if ok {
		if err := t.del(timerPK(tm.ID)); err != nil {
			return err
		}
	}
	if of, err := t.markerGet(ctx, timerKeyPK(key)); err != nil || of == "" {
		return err
	}
	return t.del(timerKeyPK(key))
}

// timerClaimMax bounds one claim: each claimed timer is one write of the
// commit, which takes at most MaxTxActions. TimerClaimDue with a larger
// limit (or none) leases at most this many; the sweeper claims batch
// after batch until none is due.
const timerClaimMax = 90

// TimerClaimDue leases up to limit due timers (at most timerClaimMax) to
// owner until now+lease, oldest due first (then by id), counting an
// attempt on each. A concurrent claimer that leased one of them first
// makes the commit fail: InTx runs this again on fresh reads, so one timer
// is never leased twice under one lease.
func (t *Tx) TimerClaimDue(ctx context.Context, now time.Time, lease time.Duration, owner string, limit int) ([]nextup.Timer, error) {
	if limit <= 0 || limit > timerClaimMax {
		limit = timerClaimMax
	}
	free := func(it item) bool {
		var tm nextup.Timer
		if decode(it, &tm) != nil || tm.DoneAt != nil {
			return false
		}
		end, leased := tm.LeasedUntil()
		return !leased || !end.After(now)
	}
	// Sort keys of timers due at now are ts(now)+"#…", below ts(now)+"$".
	its, err := t.query(ctx, query{index: "gsi1", part: timerDue, to: ts(now) + "$", limit: limit, keep: free})
	if err != nil {
		return nil, fmt.Errorf("claim due timers: %w", err)
	}
	out, err := loadAll[nextup.Timer](its)
	if err != nil {
		return nil, err
	}
	until := now.Add(lease)
	for i := range out {
		out[i].ClaimedUntil, out[i].ClaimedBy, out[i].RenewedUntil = &until, owner, nil
		out[i].Attempts++
		if err := t.putTimer(out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TimerDone finishes a timer only under the exact lease it was claimed
// with: a sweeper that lost its lease gets ErrConflict, a missing timer
// ErrNotFound.
func (t *Tx) TimerDone(ctx context.Context, id int64, claimedUntil time.Time, at time.Time) error {
	what := fmt.Sprintf("timer %d done", id)
	tm, err := load[nextup.Timer](ctx, t, timerPK(id), what)
	if err != nil {
		return err
	}
	if tm.DoneAt != nil || tm.ClaimedUntil == nil || !tm.ClaimedUntil.Equal(claimedUntil) {
		return conflict(what + ": lease lost")
	}
	tm.DoneAt = &at
	if err := t.putTimer(tm); err != nil {
		return err
	}
	if tm.Key == "" {
		return nil
	}
	return t.markerDrop(ctx, timerKeyPK(tm.Key), strconv.FormatInt(id, 10))
}

// TimerRenew extends a timer's lease to until while the claim
// claimedUntil still holds it: ErrConflict when it was claimed again,
// moved or done, ErrNotFound when there is no such timer. Like TimerDone
// it writes the timer it read, so a concurrent claim fails the commit.
func (t *Tx) TimerRenew(ctx context.Context, id int64, claimedUntil, until time.Time) error {
	what := fmt.Sprintf("timer %d renew", id)
	tm, err := load[nextup.Timer](ctx, t, timerPK(id), what)
	if err != nil {
		return err
	}
	if tm.DoneAt != nil || tm.ClaimedUntil == nil || !tm.ClaimedUntil.Equal(claimedUntil) {
		return conflict(what + ": lease lost")
	}
	tm.RenewedUntil = &until
	return t.putTimer(tm)
}

// TimerNextDue returns when the earliest pending timer is due: the first
// key of timerdue.
func (t *Tx) TimerNextDue(ctx context.Context) (time.Time, error) {
	its, err := t.query(ctx, query{index: "gsi1", part: timerDue, limit: 1})
	if err != nil {
		return time.Time{}, fmt.Errorf("next due timer: %w", err)
	}
	if len(its) == 0 {
		return time.Time{}, notFound("next due timer")
	}
	var tm nextup.Timer
	if err := decode(its[0], &tm); err != nil {
		return time.Time{}, err
	}
	return tm.DueAt, nil
}

// TimerList lists timers by due time (then id): those of a subject from
// its partition, else those of a business, else all, reading the pending
// partition alone when PendingOnly.
func (t *Tx) TimerList(ctx context.Context, f nextup.TimerFilter) ([]nextup.Timer, error) {
	keep := func(it item) bool {
		var tm nextup.Timer
		return decode(it, &tm) == nil &&
			(f.BusinessID == "" || tm.BusinessID == f.BusinessID) &&
			(f.Kind == "" || tm.Kind == f.Kind) &&
			(f.SubjectID == "" || tm.SubjectID == f.SubjectID) &&
			(!f.PendingOnly || tm.DoneAt == nil)
	}
	var qs []query
	switch {
	case f.SubjectID != "":
		qs = []query{{index: "gsi3", part: "timersub#" + f.SubjectID}}
	case f.BusinessID != "":
		qs = []query{{index: "gsi2", part: timerBizPart(f.BusinessID, true)}}
		if !f.PendingOnly {
			qs = append(qs, query{index: "gsi2", part: timerBizPart(f.BusinessID, false)})
		}
	default:
		qs = []query{{index: "gsi1", part: timerDue}}
		if !f.PendingOnly {
			qs = append(qs, query{index: "gsi1", part: timerDone})
		}
	}
	var out []nextup.Timer
	for _, q := range qs {
		q.limit, q.keep = f.Limit, keep
		its, err := t.query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list timers: %w", err)
		}
		tms, err := loadAll[nextup.Timer](its)
		if err != nil {
			return nil, err
		}
		out = append(out, tms...)
	}
	slices.SortFunc(out, func(a, b nextup.Timer) int { return cmp.Or(a.DueAt.Compare(b.DueAt), cmp.Compare(a.ID, b.ID)) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// maxIdemKey is the most bytes of scope and key kept readable in a
// record's key; longer ones are hashed. The key is also in the record's
// sort key of gsi1, which has at most 1024 bytes (with the 30 of the
// expiry and two separators).
const maxIdemKey = 900

// idemPK is the key of the record of (scope, key): idem#SCOPE#KEY, or
// idemh# and the SHA-256 of both when they are long, when the scope has a
// '#' (which would make the readable form ambiguous) or when they are not
// UTF-8 (DynamoDB's strings are).
func idemPK(scope, key string) string {
	if len(scope)+len(key) <= maxIdemKey && !strings.Contains(scope, "#") && utf8.ValidString(scope) && utf8.ValidString(key) {
		return "idem#" + scope + "#" + key
	}
	h := sha256.Sum256([]byte(scope + "\x00" + key))
	return "idemh#" + hex.EncodeToString(h[:])
}

func idemItem(pk string, r nextup.IdempotencyRecord) (item, error) {
	it, err := newItem(r, "gsi1pk", "idemexp", "gsi1sk", ts(r.ExpiresAt)+"#"+pk)
	if err != nil {
		return nil, err
	}
	if r.ExpiresAt.IsZero() {
		return it, nil
	}
	// The ttl is in whole seconds: round up, so that DynamoDB never
	// deletes a record before it expires.
	return withTTL(it, r.ExpiresAt.Add(time.Second-time.Nanosecond)), nil
}

// loadIdem reads the record of (scope, key). The scope and key are the
// ones asked for (JSON would have replaced bytes that are not UTF-8).
func loadIdem(ctx context.Context, t *Tx, scope, key, what string) (nextup.IdempotencyRecord, error) {
	r, err := load[nextup.IdempotencyRecord](ctx, t, idemPK(scope, key), what)
	if err == nil {
		r.Scope, r.Key = scope, key
	}
	return r, err
}

// IdempotencyStart claims (scope, key) for a first request. A record still
// alive at r.CreatedAt is returned with ErrConflict (a replay, or a
// request still running); an expired one is replaced. Two first requests
// racing each other both read the key as absent (or expired), and the
// commit of the second fails on the version: it runs again and finds the
// first one's record.
func (t *Tx) IdempotencyStart(ctx context.Context, r nextup.IdempotencyRecord) (nextup.IdempotencyRecord, error) {
	what := "start idempotent request " + r.Key
	old, err := loadIdem(ctx, t, r.Scope, r.Key, what)
	switch {
	case err == nil && old.ExpiresAt.After(r.CreatedAt):
		return old, conflict(what)
	case ignoreNotFound(err) != nil:
		return nextup.IdempotencyRecord{}, err
	}
	r.Status = 0
	pk := idemPK(r.Scope, r.Key)
	it, err := idemItem(pk, r)
	if err != nil {
		return nextup.IdempotencyRecord{}, err
	}
	if err := t.put(pk, it); err != nil {
		return nextup.IdempotencyRecord{}, err
	}
	return r, nil
}

// IdempotencyFinish stores the response (and r's expiry, when it has one)
// of a record that is still running; a finished one is ErrConflict and a
// missing one ErrNotFound, and neither changes.
func (t *Tx) IdempotencyFinish(ctx context.Context, r nextup.IdempotencyRecord) error {
	what := "finish idempotent request " + r.Key
	old, err := loadIdem(ctx, t, r.Scope, r.Key, what)
	if err != nil {
		return err
	}
	if old.Status != 0 {
		return conflict(fmt.Sprintf("%s: already finished with status %d", what, old.Status))
	}
	old.Status, old.Header, old.Body = r.Status, r.Header, r.Body
	if !r.ExpiresAt.IsZero() {
		old.ExpiresAt = r.ExpiresAt
	}
	pk := idemPK(r.Scope, r.Key)
	it, err := idemItem(pk, old)
	if err != nil {
		return err
	}
	return t.put(pk, it)
}

// IdempotencyDelete forgets a record; none is no error.
func (t *Tx) IdempotencyDelete(ctx context.Context, scope, key string) error {
	pk := idemPK(scope, key)
	if ok, err := t.exists(ctx, pk); err != nil || !ok {
		return err
	}
	return t.del(pk)
}

// idemPurgeMax bounds one purge: each record deleted is one write of the
// commit, which takes at most MaxTxActions, and the housekeeping that
// purges writes more in the same transaction. The records left are
// purged by the next call, and DynamoDB deletes expired records by their
// ttl meanwhile.
const idemPurgeMax = 20

// IdempotencyPurge deletes records expired before a time, the longest
// expired first, at most idemPurgeMax of them, and counts them.
func (t *Tx) IdempotencyPurge(ctx context.Context, before time.Time) (int, error) {
	// Sort keys of records expiring at before are ts(before)+"#…", not
	// below ts(before).
	its, err := t.query(ctx, query{index: "gsi1", part: "idemexp", to: ts(before), limit: idemPurgeMax})
	if err != nil {
		return 0, fmt.Errorf("purge idempotency records: %w", err)
	}
	for _, it := range its {
		if err := t.del(str(it, attrPK)); err != nil {
			return 0, err
		}
	}
	return len(its), nil
}
