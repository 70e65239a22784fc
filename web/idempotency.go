package web

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
)

// staleRunning is how old a still-running record must be before a retry
// may take it over: far longer than any request runs.
const staleRunning = time.Minute

// CodeIdempotencyInProgress is the conflict code for a retry that arrives
// while the first request with the same key is still running.
const CodeIdempotencyInProgress = "idempotency_in_progress"

// idempotent implements the Idempotency-Key header on every POST (IETF
// draft semantics): the first request's response is stored; the same key
// with the same request replays it (same status, same body); the same key
// with a different request is 422 idempotency_key_reuse; a retry while the
// first is still running is 409. Keys are scoped to the caller (the hash
// of its bearer token, or the public path for claim links), and kept for a
// claim window plus a day.
//
// Responses carry secrets shown once (a new business's API key, a status
// link, a calendar link), and secrets are only ever stored as hashes. So the
// store keeps a hash of the Idempotency-Key, and the response sealed with
// AES-GCM under a key derived from the raw Idempotency-Key: only a client
// that holds the key can have the response replayed, and the database alone
// reveals nothing.
func (s *Server) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || key == "" {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > 255 || strings.ContainsFunc(key, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			s.writeError(w, r, invalidf("Idempotency-Key", "must be 1 to 255 printable ASCII characters"))
			return
		}
		body, err := readBody(r, s.bodyLimit(r))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		scope := "public:" + r.URL.Path
		if tok, ok := bearer(r); ok {
			scope = "caller:" + nextup.HashToken(tok)
		}
		sum := sha256.Sum256([]byte(r.Method + " " + r.URL.RequestURI() + "\n" + string(body)))
		now := s.now()
		storeKey := nextup.HashToken("idempotency-key:" + key) // the raw key never reaches the store
		rec := nextup.IdempotencyRecord{Scope: scope, Key: storeKey, Fingerprint: hex.EncodeToString(sum[:]),
			CreatedAt: now, ExpiresAt: now.Add(nextup.IdempotencyTTL(nextup.DefaultRules()))}
		var existing nextup.IdempotencyRecord
		start := func() error {
			return s.Store.InTx(r.Context(), func(tx nextup.Tx) error {
				var err error
				existing, err = tx.IdempotencyStart(r.Context(), rec)
				return err
			})
		}
		err = start()
		if errors.Is(err, nextup.ErrConflict) && existing.Status == 0 && now.Sub(existing.CreatedAt) > staleRunning {
			// The first request died (a crash) without finishing: no
			// request runs this long, so start afresh.
			err = s.Store.InTx(r.Context(), func(tx nextup.Tx) error { return tx.IdempotencyDelete(r.Context(), scope, storeKey) })
			if err == nil {
				err = start()
			}
		}
		switch {
		case errors.Is(err, nextup.ErrConflict) && existing.Fingerprint != rec.Fingerprint:
			s.writeError(w, r, nextup.Errorf(nextup.ErrInvalid, nextup.CodeIdempotencyReuse,
				"this Idempotency-Key was used for a different request"))
			return
		case errors.Is(err, nextup.ErrConflict) && existing.Status == 0:
			s.writeError(w, r, nextup.Errorf(nextup.ErrConflict, CodeIdempotencyInProgress,
				"a request with this Idempotency-Key is still being processed; retry shortly"))
			return
		case errors.Is(err, nextup.ErrConflict):
			body, err := unseal(key, existing.Body)
			if err != nil {
				s.writeError(w, r, fmt.Errorf("replay idempotent response: %w", err))
				return
			}
			for k, v := range existing.Header {
				w.Header().Set(k, v)
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(existing.Status)
			_, _ = w.Write(body)
			return
		case err != nil:
			s.writeError(w, r, err)
			return
		}

		rec2 := &recorder{header: http.Header{}, status: http.StatusOK}
		r.Body = http.NoBody
		if len(body) > 0 {
			r.Body = readCloser{bytes.NewReader(body)}
		}
		// Finish the record even if the client has gone (its retry must get
		// the replay) or the handler panicked (its retry must run again).
		finishCtx := context.WithoutCancel(r.Context())
		finished := false
		defer func() {
			if !finished {
				_ = s.Store.InTx(finishCtx, func(tx nextup.Tx) error { return tx.IdempotencyDelete(finishCtx, scope, storeKey) })
			}
		}()
		next.ServeHTTP(rec2, r)
		finished = true
		err = s.Store.InTx(finishCtx, func(tx nextup.Tx) error {
			if rec2.status >= 500 || rec2.status == http.StatusUnauthorized || rec2.status == http.StatusRequestEntityTooLarge {
				// Not a result worth replaying: let a retry run again.
				return tx.IdempotencyDelete(finishCtx, scope, storeKey)
			}
			sealed, err := seal(key, rec2.body.Bytes())
			if err != nil {
				return err
			}
			rec.Status, rec.Body = rec2.status, sealed
			rec.Header = map[string]string{}
			for _, h := range []string{"Content-Type", "Cache-Control", "Referrer-Policy"} {
				if v := rec2.header.Get(h); v != "" {
					rec.Header[h] = v
				}
			}
			return tx.IdempotencyFinish(finishCtx, rec)
		})
		if err != nil {
			s.logger().ErrorContext(r.Context(), "storing an idempotent response", "error", err)
		}
		for k, v := range rec2.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec2.status)
		_, _ = w.Write(rec2.body.Bytes())
	})
}

// recorder buffers a response so it can be stored before it is sent.
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

// sealKey derives the AES-256 key that seals a stored response from the
// client's raw Idempotency-Key (which the store never sees).
func sealKey(idemKey string) []byte {
	k := sha256.Sum256([]byte("nextup idempotency seal\x00" + idemKey))
	return k[:]
}

func seal(idemKey string, plain []byte) ([]byte, error) {
	block, err := aes.NewCipher(sealKey(idemKey))
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, plain, nil), nil
}

func unseal(idemKey string, sealed []byte) ([]byte, error) {
	block, err := aes.NewCipher(sealKey(idemKey))
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if len(sealed) < gcm.NonceSize() {
		return nil, errors.New("sealed response too short")
	}
	return gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], nil)
}
