package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nextup-dev/nextup"
)

// One request, one transaction.
//
// A Request gathers everything one caller's request does into one store
// transaction: every use case it runs (each in a savepoint of its own, so
// that a use case that fails undoes only its own writes, as it did when it
// had a transaction to itself), the record of its Idempotency-Key, and the
// response that record replays. They commit together or not at all, so
// after a crash at any line a retry with the same key either replays the
// stored response or runs the request for the first time — never both,
// never neither. This is Stripe's "atomic phases" way of building
// idempotent endpoints, with one phase in the common case.
//
// The transaction opens at the request's first write (at once for a keyed
// request, whose record is the first write) and stays open until End: the
// use cases, and the reads that follow a write (which must see it), run
// in it. Reads before the first write use a snapshot of their own, so a
// request that only reads never takes the writer.
//
// A request never holds a transaction across a call to another system (a
// booking system, a payment provider, a sheet, a mail parser): such a call
// ends the current phase first (BeforeRemote). When the phase has written
// something, it commits, with the Idempotency-Key record saved as still
// running plus the request's recovery notes (stash, sealed); the rest of
// the request runs in a new phase, and End finishes the record there. A
// retry that finds a running record resumes: it runs the request again.
// So every use case that calls out after writing must pick up where a
// first run stopped, and each does:
//   - a claim through a business's booking system finds its booking and
//     asks again with the booking's id as the key, and answers with the
//     calendar link the first run noted (offers);
//   - a paid event's registration, which goes on to make its checkout,
//     answers with the registration and status link the first run noted
//     instead of already_registered (events), and finds the checkout open;
//   - a payment that arrived late is refunded with a key per payment, so
//     a second refund is Stripe's replay (payments).
// The other calls (a sheet, a mail parser, a checkout from the claim page)
// come before the request writes. A phase that has written nothing is
// rolled back instead and opened again after the call. A store that asks
// for a request to run again after one of its phases committed gets an
// error instead: the retry with the same key resumes it.
//
// Work that follows a commit (waking the sweeper and relay, making the
// checkouts of paid holds) waits for it: AfterCommit runs it, outside the
// request, once the request has committed.

type requestKey struct{}

// Idempotency is the Idempotency-Key a request carries, as the web layer
// hands it over.
type Idempotency struct {
	// Scope is whose key it is: the hash of the caller's bearer token, or
	// the public path for the token-in-path routes.
	Scope string
	// Key is the raw key. It never reaches the store: the store keeps its
	// hash, and the stored response is sealed with a key derived from it,
	// so only a client that holds the key can have a response replayed
	// (responses carry secrets shown once: an API key, a status link).
	Key string
	// Fingerprint identifies the request (method, path and body, hashed):
	// the same key with another fingerprint is idempotency_key_reuse.
	Fingerprint string
}

// Response is what a request answered, as stored for a replay.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
	// Replayed: this is the stored response of an earlier request with
	// the same key.
	Replayed bool
}

// Request is one caller's unit of work; see Begin.
type Request struct {
	s    *Service
	ctx  context.Context // the request's context, carrying r
	idem *Idempotency
	rec  nextup.IdempotencyRecord // the record of idem, as stored

	ph *phase
	// wrote: a use case committed its savepoint in the open phase.
	wrote bool
	// recorded: the record is in the store (committed as running by an
	// earlier phase or an earlier run), or in the open phase (inserted).
	recorded bool
	// inserted: the open phase inserted the record (it goes if the
	// phase is rolled back).
	inserted bool
	// committed: an earlier phase of this request committed.
	committed bool
	// poison is an error the open phase cannot go on after (the store's,
	// not the domain's): End rolls the phase back with it, so the store
	// can decide whether the request is worth running again.
	poison error
	// rerun: the store asked for the whole request to run again (a
	// PostgreSQL serialization failure or deadlock at commit).
	rerun bool
	// replay is the stored response to answer with instead of the one
	// this run makes; reuse is the error to answer with instead.
	replay *Response
	reuse  error

	wake  bool
	after []func(ctx context.Context)
	stash map[string]string
}

// errReplayed ends a use case whose request turned out to be a repeat of
// one already answered: End answers with the stored response.
var errReplayed = errors.New("this request was answered before; replaying its response")

// errRerun is what a phase returns when the store retries its function:
// the request as a whole has to run again.
var errRerun = errors.New("the store asked for the request to run again")

// ErrRerun is Begin's error when the store asked for the request to start
// again (a deadlock taking its Idempotency-Key's record): call Begin again.
var ErrRerun = errors.New("the request must start again")

// errDiscard rolls back a phase that holds nothing worth keeping.
var errDiscard = errors.New("phase discarded")

// Begin starts a request's unit of work. Every use case called with the
// returned context joins it; End (or Abort, on a panic) must be called.
// With an Idempotency-Key, Begin looks the key up first: a response
// already stored for it is returned at once (Replayed set), and the key
// used for another request is an idempotency_key_reuse error; in both
// cases the request must not run, and End need not be called.
func (s *Service) Begin(ctx context.Context, idem *Idempotency) (context.Context, *Request, *Response, error) {
	r := &Request{s: s, idem: idem}
	r.ctx = context.WithValue(ctx, requestKey{}, r)
	if idem == nil || s == nil {
		// Without use cases (a server of admin routes only) there is
		// nothing to keep an Idempotency-Key's answer in either.
		r.idem = nil
		return r.ctx, r, nil, nil
	}
	now := s.Clock.Now()
	r.rec = nextup.IdempotencyRecord{Scope: idem.Scope, Key: nextup.HashToken("idempotency-key:" + idem.Key),
		Fingerprint: idem.Fingerprint, CreatedAt: now, ExpiresAt: now.Add(nextup.IdempotencyTTL(nextup.DefaultRules()))}
	if _, err := r.open(r.ctx); err != nil {
		if r.ph != nil {
			r.closePhase(cmp.Or(r.poison, errDiscard))
		}
		switch {
		case r.replay != nil:
			return nil, nil, r.replay, nil
		case r.reuse != nil:
			return nil, nil, nil, r.reuse
		case r.rerun:
			return nil, nil, nil, fmt.Errorf("%w: %w", ErrRerun, err)
		}
		return nil, nil, nil, err
	}
	return r.ctx, r, nil, nil
}

// request returns the Request ctx belongs to, when it is one of s's.
func (s *Service) request(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	if r == nil || r.s != s {
		return nil
	}
	return r
}

// Detached returns ctx without its request: what is done with it runs in
// transactions of its own. For work that must not join the request (the
// debug clock runs the sweeper, which has transactions of its own).
func Detached(ctx context.Context) context.Context {
	return context.WithValue(ctx, requestKey{}, (*Request)(nil))
}

// open returns the open phase's transaction, opening a phase (and, for a
// keyed request, starting its record in it) when none is open.
func (r *Request) open(ctx context.Context) (nextup.Tx, error) {
	if r.poison != nil {
		return nil, r.poison
	}
	if r.replay != nil || r.reuse != nil {
		return nil, errReplayed
	}
	if r.ph != nil {
		return r.ph.tx, nil
	}
	// The phase's life is bounded by End and Abort, not by the client:
	// a customer who closes the tab while a claim's answer is applied
	// must not leave it half done (the use cases' own calls still see
	// the request's context).
	ph, err := openPhase(context.WithoutCancel(r.ctx), r.s.Store)
	if err != nil {
		if errors.Is(err, errRerun) {
			r.rerun = true
		}
		return nil, err
	}
	r.ph, r.wrote = ph, false
	if r.idem == nil || r.recorded {
		return ph.tx, nil
	}
	existing, err := ph.tx.IdempotencyStart(ctx, r.rec)
	switch {
	case err == nil:
		r.recorded, r.inserted = true, true
		return ph.tx, nil
	case !errors.Is(err, nextup.ErrConflict):
		r.poison = err
		return nil, err
	case existing.Fingerprint != r.rec.Fingerprint:
		r.reuse = nextup.Errorf(nextup.ErrInvalid, nextup.CodeIdempotencyReuse, "this Idempotency-Key was used for a different request")
	case existing.Status != 0:
		resp, err := r.unsealResponse(existing)
		if err != nil {
			r.poison = err
			return nil, err
		}
		r.replay = &resp
	default:
		// Running: an earlier run of this request committed a phase and
		// did not finish (it crashed, or is still calling out). Resume.
		r.recorded = true
		if len(existing.Body) > 0 {
			plain, err := nextup.Unseal(r.idem.Key, existing.Body)
			if err == nil {
				err = json.Unmarshal(plain, &r.stash)
			}
			if err != nil {
				r.poison = fmt.Errorf("read the recovery notes of a running request: %w", err)
				return nil, r.poison
			}
		}
		return ph.tx, nil
	}
	r.closePhase(errDiscard)
	return nil, errReplayed
}

// run runs one use case's function in the request's transaction. A
// failure undoes the use case's writes only; a change of state under its
// decision runs it again (as Service.tx does). The first use case of a
// phase needs no savepoint for that: the phase holds nothing else worth
// keeping (at most the Idempotency-Key's record, which is started again),
// so its failure rolls the phase back whole, which costs SQLite two
// statements less in the common request of one use case. Later ones run
// in savepoints of their own.
func (r *Request) run(ctx context.Context, fn func(w *Work) error) error {
	var err error
	for attempt := 0; attempt < MaxAttempts; attempt++ {
		var tx nextup.Tx
		if tx, err = r.open(ctx); err != nil {
			return err
		}
		first := !r.wrote
		var w *Work
		body := func() error {
			w = &Work{s: r.s, Tx: tx, Now: r.s.Clock.Now(), businesses: map[string]*Biz{}}
			return fn(w)
		}
		if first {
			err = body()
		} else {
			err = tx.Savepoint(ctx, body)
		}
		if err != nil {
			r.fail(err)
			if first {
				// Undo it by undoing the phase; a store failure is handed
				// to the store, which may ask for the request to run again.
				if r.poison != nil {
					r.closePhase(r.poison)
				} else {
					r.closePhase(errDiscard)
				}
			}
		}
		if errors.Is(err, ErrRedecide) {
			continue
		}
		if err != nil {
			return err
		}
		r.wrote = true
		r.wake = r.wake || w.wake
		if len(w.paidHolds)+len(w.endedSessions) > 0 {
			r.after = append(r.after, func(ctx context.Context) { r.s.afterCommit(ctx, w) })
		}
		return nil
	}
	return fmt.Errorf("gave up after %d attempts: %w", MaxAttempts, err)
}

// read runs fn in the open phase, which sees the request's own writes.
func (r *Request) read(ctx context.Context, fn func(tx nextup.Tx) error) error {
	if r.poison != nil {
		return r.poison
	}
	err := fn(r.ph.tx)
	if err != nil {
		r.fail(err)
	}
	return err
}

// fail notes a use case's error. Its savepoint undid its writes and the
// transaction goes on, as the use case's own transaction would have rolled
// back alone — except when the transaction as a whole is lost: the store
// says so with nextup.ErrTxBroken (a savepoint that could not be rolled
// back to: a broken connection, a full disk), or PostgreSQL's
// serialization failure and deadlock, after which the store's own retry is
// the way on. Then the phase is doomed, and End rolls it back with that
// error, so that the store can decide to run the request again.
func (r *Request) fail(err error) {
	doomed := errors.Is(err, nextup.ErrTxBroken)
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		doomed = doomed || st.SQLState() == "40001" || st.SQLState() == "40P01"
	}
	if doomed && r.poison == nil {
		r.poison = err
	}
}

// Checkpoint commits what ctx's request has done so far, if anything, so
// that what it does next goes into a transaction of its own: a use case
// that works through a list of independent items (an import's rows)
// calls it between items on a bounded store (nextup.Bounded), whose
// transactions take a bounded number of writes. It is BeforeRemote: the
// same split, for another reason.
func (s *Service) Checkpoint(ctx context.Context) error { return s.BeforeRemote(ctx) }

// BeforeRemote ends the open phase of ctx's request, if any, before a call
// to another system: no transaction is held across it. See the package's
// notes on requests.
func (s *Service) BeforeRemote(ctx context.Context) error {
	r := s.request(ctx)
	if r == nil || r.ph == nil {
		return nil
	}
	if r.poison != nil {
		return r.poison
	}
	if !r.wrote {
		// Nothing but (perhaps) the record: forget it and start again
		// after the call. A record that was only resumed stays as it was.
		r.closePhase(errDiscard)
		return nil
	}
	if r.idem == nil {
		// A request without an Idempotency-Key that splits gets a key of
		// its own here, its record committed with this phase, so that
		// when a later phase is refused the server can run it again and
		// it resumes (Resume) instead of doing this phase's work twice.
		if err := r.internalKey(ctx); err != nil {
			r.poison = err
			return err
		}
	}
	if r.idem != nil && r.recorded {
		if err := r.saveStash(ctx); err != nil {
			r.poison = err
			return err
		}
	}
	if err := r.closePhase(nil); err != nil {
		return err
	}
	// What waits for a commit waits for the request's last one: the
	// request may yet do some of it itself (a registration's checkout).
	r.committed = true
	if s.Crash != nil {
		s.Crash("after_phase_commit")
	}
	return nil
}

// internalKey gives a request without an Idempotency-Key one of its own,
// its record started in the open phase.
func (r *Request) internalKey(ctx context.Context) error {
	tok, _ := r.s.Random.Token()
	r.idem = &Idempotency{Scope: "internal", Key: tok, Fingerprint: "internal"}
	now := r.s.Clock.Now()
	r.rec = nextup.IdempotencyRecord{Scope: r.idem.Scope, Key: nextup.HashToken("idempotency-key:" + tok),
		Fingerprint: r.idem.Fingerprint, CreatedAt: now, ExpiresAt: now.Add(nextup.IdempotencyTTL(nextup.DefaultRules()))}
	if _, err := r.ph.tx.IdempotencyStart(ctx, r.rec); err != nil {
		return fmt.Errorf("start the record of a request that splits: %w", err)
	}
	r.recorded, r.inserted = true, true
	return nil
}

// Resume is what to Begin again with when End asked for the request to
// run again: its Idempotency-Key (the caller's, or its own from its first
// split), whose record resumes a request one of whose phases committed.
func (r *Request) Resume() *Idempotency { return r.idem }

// resumable says a request may run again: nothing of it committed, or it
// has a record to resume from.
func (r *Request) resumable() bool {
	return !r.committed || (r.idem != nil && r.recorded)
}

// Yield ends the open phase as before a call to another system: it
// commits what the request has written so far, or rolls back a phase that
// holds nothing but the Idempotency-Key's record (End writes it again).
// Work the request then does outside it (Detached) cannot wait on its
// transaction.
func (r *Request) Yield() error { return r.s.BeforeRemote(r.ctx) }

// StashNote keeps a note for a resumed run of this request (a secret made in
// a phase that committed, such as a calendar link's token, that the
// response must carry). It is stored sealed with the record.
func (s *Service) StashNote(ctx context.Context, k, v string) {
	if r := s.request(ctx); r != nil {
		if r.stash == nil {
			r.stash = map[string]string{}
		}
		r.stash[k] = v
	}
}

// Stashed returns a note an earlier run of ctx's request kept.
func (s *Service) Stashed(ctx context.Context, k string) string {
	if r := s.request(ctx); r != nil {
		return r.stash[k]
	}
	return ""
}

func (r *Request) saveStash(ctx context.Context) error {
	plain, err := json.Marshal(r.stash)
	if err != nil {
		return err
	}
	sealed, err := nextup.Seal(r.idem.Key, plain)
	if err != nil {
		return err
	}
	rec := r.rec
	rec.Status, rec.Body, rec.Header = 0, sealed, nil
	if err := r.ph.tx.IdempotencyFinish(ctx, rec); err != nil {
		return fmt.Errorf("save the recovery notes of a running request: %w", err)
	}
	return nil
}

// closePhase ends the open phase: it commits when end is nil, and rolls
// back with end otherwise.
func (r *Request) closePhase(end error) error {
	ph := r.ph
	r.ph = nil
	err := ph.close(end)
	if r.inserted {
		r.inserted = false
		// Committed, the record is in the store; rolled back, it is not.
		r.recorded = end == nil && err == nil
	}
	if errors.Is(err, errRerun) {
		r.rerun = true
	}
	if errors.Is(err, errDiscard) {
		return nil
	}
	return err
}

// End finishes the request with the response its handler made. It
// commits the open phase together with the Idempotency-Key's record and
// this response; or answers with a response stored before (Replayed), or
// with the reuse error. rerun says the store asked for the whole request
// to run again (nothing of this run committed, or what did is resumable):
// call Begin again. An error means nothing of the open phase committed.
// After End, call AfterCommit.
func (r *Request) End(resp Response) (out Response, rerun bool, err error) {
	defer func() {
		if r.ph != nil {
			r.closePhase(errDiscard)
		}
	}()
	if out, rerun, err, ok := r.settled(); ok {
		return out, rerun, err
	}
	wrote := r.wrote || r.committed
	keep := r.idem != nil && (wrote || (resp.Status < 500 && resp.Status != 401 && resp.Status != 413 && resp.Status != 429))
	switch {
	case keep:
		if _, err := r.open(r.ctx); err != nil {
			if out, rerun, err, ok := r.settled(); ok {
				return out, rerun, err
			}
			return Response{}, false, err
		}
		sealed, err := nextup.Seal(r.idem.Key, resp.Body)
		if err != nil {
			return Response{}, false, err
		}
		rec := r.rec
		rec.Status, rec.Header, rec.Body = resp.Status, resp.Header, sealed
		err = r.ph.tx.IdempotencyFinish(r.ctx, rec)
		if errors.Is(err, nextup.ErrConflict) {
			// Another run of the same request finished first: its
			// response is the one, and this run's writes go.
			r.closePhase(errDiscard)
			r.recorded = false
			if _, err := r.open(r.ctx); err == nil {
				r.closePhase(errDiscard)
			}
		} else if err != nil {
			r.poison = err
		}
		if out, rerun, err, ok := r.settled(); ok {
			return out, rerun, err
		}
	case r.ph != nil && r.inserted && !wrote:
		// A response not worth replaying, and nothing else written: the
		// record goes with the phase, so a retry runs afresh.
		r.closePhase(errDiscard)
	}
	if r.ph != nil {
		if err := r.closePhase(nil); err != nil {
			if r.rerun && r.resumable() {
				return Response{}, true, nil
			}
			return Response{}, false, r.partly(fmt.Errorf("commit the request: %w", err))
		}
	}
	return resp, false, nil
}

// partly adds to err, for a request that committed an earlier phase, that
// it is not run again here: what committed may not be repeatable, and a
// retry with the same Idempotency-Key resumes it.
func (r *Request) partly(err error) error {
	if !r.committed {
		return err
	}
	return fmt.Errorf("%w (an earlier part of the request committed; a retry with the same Idempotency-Key resumes it)", err)
}

// settled is how the request ends when something decided it before its
// handler's response could be kept: a replay, a reuse of the key, a rerun,
// or a store failure (the open phase rolls back).
func (r *Request) settled() (out Response, rerun bool, err error, ok bool) {
	switch {
	case r.replay != nil:
		return *r.replay, false, nil, true
	case r.reuse != nil:
		return Response{}, false, r.reuse, true
	case r.poison != nil:
		if r.ph != nil {
			r.closePhase(r.poison)
		}
		if r.rerun && r.resumable() {
			return Response{}, true, nil, true
		}
		return Response{}, false, r.partly(fmt.Errorf("the request's transaction failed: %w", r.poison)), true
	case r.rerun && r.resumable():
		return Response{}, true, nil, true
	case r.rerun:
		return Response{}, false, r.partly(errors.New("the request's last part was refused by the store")), true
	}
	return Response{}, false, nil, false
}

// Abort rolls back the open phase (the handler panicked).
func (r *Request) Abort() {
	if r != nil && r.ph != nil {
		r.closePhase(errors.New("request aborted"))
	}
}

// AfterCommit runs the work that waited for the request's commits (waking
// the sweeper and relay, making checkouts), outside the request.
func (r *Request) AfterCommit() {
	ctx := context.WithoutCancel(Detached(r.ctx))
	after := r.after
	r.after = nil
	for _, f := range after {
		f(ctx)
	}
	if r.wake && r.s.Wake != nil {
		r.wake = false
		r.s.Wake()
	}
}

func (r *Request) unsealResponse(rec nextup.IdempotencyRecord) (Response, error) {
	body, err := nextup.Unseal(r.idem.Key, rec.Body)
	if err != nil {
		return Response{}, fmt.Errorf("replay idempotent response: %w", err)
	}
	return Response{Status: rec.Status, Header: rec.Header, Body: body, Replayed: true}, nil
}

// phase is one store transaction of a request, held open across the
// request's use cases. The store's InTx owns transactions and takes a
// function, so the phase runs InTx on a goroutine of its own whose
// function hands the transaction over and waits to be told how to end.
type phase struct {
	tx     nextup.Tx
	end    chan error
	result chan error
}

func openPhase(ctx context.Context, st nextup.Store) (*phase, error) {
	p := &phase{end: make(chan error), result: make(chan error, 1)}
	ready := make(chan nextup.Tx)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				// A panic in the store's own code: the request fails,
				// the process goes on.
				p.result <- fmt.Errorf("the store panicked: %v", v)
			}
		}()
		calls := 0
		p.result <- st.InTx(ctx, func(tx nextup.Tx) error {
			calls++
			if calls > 1 {
				// The store retries a transaction whose commit (or
				// statement) failed in a way worth retrying; the request
				// that filled it is gone, so it must run again whole.
				return errRerun
			}
			ready <- tx
			return <-p.end
		})
	}()
	select {
	case tx := <-ready:
		p.tx = tx
		return p, nil
	case err := <-p.result:
		return nil, err
	}
}

// close ends the transaction: commit when end is nil, roll back otherwise.
// It returns InTx's result.
func (p *phase) close(end error) error {
	p.end <- end
	return <-p.result
}
