package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// maxReruns bounds how many times a request runs again when the store asks
// for it: a PostgreSQL serialization failure or deadlock at commit (rare:
// row locks make most contenders wait), or DynamoDB's optimistic commit
// losing to another request (common under contention: every request that
// read what the winner wrote runs again, so a burst of n requests on one
// slot takes up to n rounds).
const maxReruns = 30

// rerunPause waits a little before a request runs again: a few
// milliseconds growing with the attempt, with full jitter, so that the
// requests that lost together do not meet again at once. It is contention
// backoff in real time, not a timer of the domain (whose clock is
// injected).
func rerunPause(ctx context.Context, attempt int) {
	ceiling := time.Duration(min(attempt*attempt, 100)) * 2 * time.Millisecond
	t := time.NewTimer(time.Duration(rand.Int64N(int64(ceiling) + 1)))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// transact runs every request as one unit of work (waitlist.Request): the
// use cases the handler calls share one store transaction, which commits
// when the handler is done, together with the Idempotency-Key's record and
// the response it replays. See waitlist/internal/core/request.go.
//
// Idempotency-Key is honoured on every POST (IETF draft semantics): the
// first request's response is stored; the same key with the same request
// replays it (same status, same body, header Idempotent-Replayed: true);
// the same key with a different request is 422 idempotency_key_reuse.
// Keys are scoped to the caller (the hash of its bearer token, or the
// public path for claim links), and kept for a claim window plus a day.
// The store keeps a hash of the key, and the response sealed with a key
// derived from the raw Idempotency-Key: only a client that holds the key
// can have the response replayed, and the database alone reveals nothing
// (responses carry secrets shown once: a new business's API key, a status
// link, a calendar link).
//
// The response is buffered until the transaction has committed: a client
// is never told of something that did not happen.
func (s *Server) transact(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			// Reads take snapshots; the few that write (a claim link's
			// "seen") are one use case each. They still run as a request,
			// so that such a write and the page agree.
			s.run(next, w, r, nil, nil)
			return
		}
		// The body is read once, up front: the fingerprint hashes it, and
		// a request the store asks to run again reads it again.
		body, err := readBody(r, s.bodyLimit(r))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var idem *waitlist.Idempotency
		if key := r.Header.Get("Idempotency-Key"); key != "" && r.Method == http.MethodPost {
			if len(key) > 255 || strings.ContainsFunc(key, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
				s.writeError(w, r, invalidf("Idempotency-Key", "must be 1 to 255 printable ASCII characters"))
				return
			}
			scope := "public:" + r.URL.Path
			if tok, ok := bearer(r); ok {
				scope = "caller:" + nextup.HashToken(tok)
			}
			sum := sha256.Sum256([]byte(r.Method + " " + r.URL.RequestURI() + "\n" + string(body)))
			idem = &waitlist.Idempotency{Scope: scope, Key: key, Fingerprint: hex.EncodeToString(sum[:])}
		}
		s.run(next, w, r, body, idem)
	})
}

func (s *Server) run(next http.Handler, w http.ResponseWriter, r *http.Request, body []byte, idem *waitlist.Idempotency) {
	detached := r.URL.Path == "/v1/debug/clock" // runs the sweeper and relay, which have transactions of their own
	for attempt := 1; ; attempt++ {
		ctx, req, replay, err := s.Svc.Begin(r.Context(), idem)
		switch {
		case errors.Is(err, waitlist.ErrRerun) && attempt < maxReruns:
			rerunPause(r.Context(), attempt)
			continue
		case err != nil:
			s.writeError(w, r, err)
			return
		case replay != nil:
			writeStored(w, *replay)
			return
		}
		if detached {
			// The record's phase must not hold the store's writer while
			// the sweeper and relay write: end it now (nothing is in it
			// but the record, which End writes again with the response).
			if err := req.Yield(); err != nil {
				req.Abort()
				s.writeError(w, r, err)
				return
			}
			ctx = waitlist.Detached(ctx)
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		rr := r.WithContext(ctx)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			rr.Body = http.NoBody
			if len(body) > 0 {
				rr.Body = readCloser{bytes.NewReader(body)}
			}
		}
		s.crash("before_action", r)
		served := false
		func() {
			defer func() {
				if !served {
					// A panic (or a Goexit): nothing of it commits, and
					// the store's writer is let go.
					req.Abort()
				}
			}()
			next.ServeHTTP(rec, rr)
			served = true
		}()
		r.Pattern = rr.Pattern // for the metrics, which see r
		stored := map[string]string{}
		for h, v := range rec.header {
			if len(v) > 0 && h != "Date" && h != "Content-Length" {
				stored[h] = v[0] // every header nextup sets has one value
			}
		}
		out, rerun, err := req.End(waitlist.Response{Status: rec.status, Header: stored, Body: rec.body.Bytes()})
		if rerun && attempt < maxReruns {
			// A request one of whose phases committed runs again with
			// its key (its own, when it had none), and resumes.
			idem = req.Resume()
			rerunPause(r.Context(), attempt)
			continue
		}
		if rerun {
			err = errors.New("the store asked for this request to run again too many times")
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.crash("after_commit", r)
		req.AfterCommit()
		s.crash("before_response", r)
		if out.Replayed {
			writeStored(w, out)
			return
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
		return
	}
}

// writeStored writes a response kept by an earlier request with the same
// Idempotency-Key.
func writeStored(w http.ResponseWriter, resp waitlist.Response) {
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// crash is the crash-test hook (nil outside crash-test builds).
func (s *Server) crash(point string, r *http.Request) {
	if s.Crash != nil {
		s.Crash(point, r)
	}
}

// recorder buffers a response so that it is sent only after the request's
// transaction has committed (and stored, for an Idempotency-Key).
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
