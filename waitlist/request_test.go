package waitlist_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// entries counts the business's entries as another reader sees them.
func (b *bundle) countEntries(t *testing.T) int {
	t.Helper()
	es, err := b.svc.ListEntries(b.ctx, nextup.EntryFilter{BusinessID: b.biz.ID})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// A request's use cases share one transaction: nothing is seen outside it
// until End, each use case that fails undoes only its own writes, and
// what the request wrote is visible to it before the commit.
func TestRequestIsOneTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx, req, replay, err := b.svc.Begin(b.ctx, nil)
	if err != nil || replay != nil {
		t.Fatalf("Begin: %v %v", replay, err)
	}
	ann, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Ann", Email: "ann@example.com", Service: "haircut"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Bob", Email: "bob@example.com", Service: "haircut"}); err != nil {
		t.Fatal(err)
	}
	// A use case that fails (Ann again) leaves the others' writes alone.
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Ann", Email: "ann@example.com", Service: "haircut"}); !errors.Is(err, nextup.ErrConflict) {
		t.Fatalf("second join of Ann: %v, want already_waiting", err)
	}
	// The request reads its own writes; nobody else does yet.
	if v, err := b.svc.GetEntry(ctx, b.biz.ID, ann.Entry.ID); err != nil || v.Entry.Name != "Ann" {
		t.Fatalf("the request reading its own join: %+v %v", v, err)
	}
	if n := b.countEntries(t); n != 0 {
		t.Fatalf("%d entries seen outside the request before it ended, want 0", n)
	}
	if _, rerun, err := req.End(waitlist.Response{Status: 201}); err != nil || rerun {
		t.Fatalf("End: rerun %v, %v", rerun, err)
	}
	req.AfterCommit()
	if n := b.countEntries(t); n != 2 {
		t.Fatalf("%d entries after End, want Ann and Bob", n)
	}

	// A first use case that fails (Bob again) rolls its phase back, and the
	// request goes on in a new one.
	ctx, req, _, _ = b.svc.Begin(b.ctx, nil)
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Bob", Email: "bob@example.com", Service: "haircut"}); !errors.Is(err, nextup.ErrConflict) {
		t.Fatalf("second join of Bob: %v, want already_waiting", err)
	}
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Dee", Email: "dee@example.com", Service: "haircut"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := req.End(waitlist.Response{Status: 201}); err != nil {
		t.Fatal(err)
	}
	if n := b.countEntries(t); n != 3 {
		t.Fatalf("%d entries after a request whose first use case failed, want Ann, Bob and Dee", n)
	}

	// Abort (a handler that panicked) keeps nothing.
	ctx, req, _, _ = b.svc.Begin(b.ctx, nil)
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Cy", Email: "cy@example.com", Service: "haircut"}); err != nil {
		t.Fatal(err)
	}
	req.Abort()
	if n := b.countEntries(t); n != 3 {
		t.Fatalf("%d entries after an aborted request, want 3", n)
	}
}

// A keyed request's record and response commit with its writes: the same
// key replays the response, with another request it is a reuse; a
// response of a request that changed nothing and failed on the server is
// not kept.
func TestRequestIdempotency(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	key := &waitlist.Idempotency{Scope: "caller:x", Key: "k-1", Fingerprint: "join ann"}
	ctx, req, replay, err := b.svc.Begin(b.ctx, key)
	if err != nil || replay != nil {
		t.Fatalf("Begin: %v %v", replay, err)
	}
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Ann", Email: "ann@example.com", Service: "haircut"}); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"ent_1","secret":"shown once"}`)
	if _, _, err := req.End(waitlist.Response{Status: 201, Header: map[string]string{"Content-Type": "application/json"}, Body: body}); err != nil {
		t.Fatal(err)
	}
	_, _, replay, err = b.svc.Begin(b.ctx, key)
	if err != nil || replay == nil || replay.Status != 201 || !bytes.Equal(replay.Body, body) || !replay.Replayed ||
		replay.Header["Content-Type"] != "application/json" {
		t.Fatalf("the same key again: %+v %v, want the stored answer", replay, err)
	}
	other := *key
	other.Fingerprint = "join bob"
	if _, _, _, err := b.svc.Begin(b.ctx, &other); nextup.ErrorCode(err) != nextup.CodeIdempotencyReuse {
		t.Fatalf("the key with another request: %v, want idempotency_key_reuse", err)
	}
	if n := b.countEntries(t); n != 1 {
		t.Fatalf("%d entries, want Ann once", n)
	}

	// A keyed request whose first use case fails rolls its phase back with
	// the key's record in it; the record is started again with the next
	// use case, and commits with it and the answer.
	k4 := &waitlist.Idempotency{Scope: "caller:x", Key: "k-4", Fingerprint: "f"}
	ctx, req, _, _ = b.svc.Begin(b.ctx, k4)
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Ann", Email: "ann@example.com", Service: "haircut"}); !errors.Is(err, nextup.ErrConflict) {
		t.Fatalf("Ann again: %v", err)
	}
	if _, err := b.svc.Join(ctx, b.biz.ID, waitlist.JoinParams{Name: "Eve", Email: "eve@example.com", Service: "haircut"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := req.End(waitlist.Response{Status: 201, Body: []byte("eve")}); err != nil {
		t.Fatal(err)
	}
	if _, _, replay, _ = b.svc.Begin(b.ctx, k4); replay == nil || string(replay.Body) != "eve" {
		t.Fatalf("k-4 again: %+v, want Eve's answer replayed", replay)
	}
	if n := b.countEntries(t); n != 2 {
		t.Fatalf("%d entries, want Ann and Eve", n)
	}

	// A 5xx of a request that wrote nothing is not kept: a retry runs.
	k2 := &waitlist.Idempotency{Scope: "caller:x", Key: "k-2", Fingerprint: "f"}
	_, req, _, _ = b.svc.Begin(b.ctx, k2)
	if _, _, err := req.End(waitlist.Response{Status: 503, Body: []byte("down")}); err != nil {
		t.Fatal(err)
	}
	_, req, replay, err = b.svc.Begin(b.ctx, k2)
	if err != nil || replay != nil {
		t.Fatalf("after a 5xx that changed nothing: %+v %v, want a fresh run", replay, err)
	}
	req.Abort()
	// A 409 is an answer: kept.
	k3 := &waitlist.Idempotency{Scope: "caller:x", Key: "k-3", Fingerprint: "f"}
	_, req, _, _ = b.svc.Begin(b.ctx, k3)
	if _, _, err := req.End(waitlist.Response{Status: 409, Body: []byte("taken")}); err != nil {
		t.Fatal(err)
	}
	if _, _, replay, _ = b.svc.Begin(b.ctx, k3); replay == nil || replay.Status != 409 {
		t.Fatalf("a 409 again: %+v, want it replayed", replay)
	}
}
