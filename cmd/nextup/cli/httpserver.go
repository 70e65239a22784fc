package cli

import (
	"cmp"
	"errors"
	"flag"
	"io"
	"net/http"
	"time"
)

// The HTTP limits of nextup serve (and of the demo, which runs serve).
// A client that holds a connection without sending — headers dribbled a
// byte at a time, a body that never ends — is cut off within seconds;
// a real upload (a 2 MiB CSV import, a 10 MiB forwarded mail) on a slow
// phone still gets through.
const (
	// DefaultReadHeaderTimeout is how long a request's headers may take
	// to arrive (--read-header-timeout). Headers are a few hundred bytes
	// and come in one packet; ten seconds allows a bad mobile link.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout is the longest a request's body may take to
	// arrive (--read-timeout): the largest bodies accepted, a 10 MiB mail
	// and a 2 MiB CSV, need about 90 KiB/s and 18 KiB/s to make it.
	DefaultReadTimeout = 2 * time.Minute
	// DefaultIdleTimeout is how long a kept-alive connection may wait for
	// its next request (--idle-timeout): longer than the 60 s idle
	// timeout of the usual load balancers, so that the balancer, not
	// nextup, closes an idle connection and never sends on one that
	// nextup is closing.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxHeaderBytes bounds a request's headers, its request line
	// included (--max-header-bytes; 431 above it). nextup's own requests
	// carry a session cookie and a bearer token; 64 KiB is many times
	// that and a sixteenth of net/http's 1 MiB default.
	DefaultMaxHeaderBytes = 64 << 10

	// bodyGrace and minBodyRate are the pace a body must keep: after its
	// first bodyGrace, at least minBodyRate bytes a second on average
	// (a client sending one byte a second is cut off after about
	// bodyGrace). The pace, not a short --read-timeout, is what ends a
	// slow client, so large uploads need no short timeout. Kestrel's
	// MinRequestBodyDataRate is the same idea (240 B/s after 5 s).
	bodyGrace   = 5 * time.Second
	minBodyRate = 1 << 10 // bytes a second
)

// httpLimits are the HTTP server's limits; a zero field is its default.
type httpLimits struct {
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	MaxHeaderBytes                              int
}

// flags adds the limits' flags to fs.
func (l *httpLimits) flags(fs *flag.FlagSet) {
	fs.DurationVar(&l.ReadHeaderTimeout, "read-header-timeout", DefaultReadHeaderTimeout, "HTTP: how long a request's headers may take to arrive")
	fs.DurationVar(&l.ReadTimeout, "read-timeout", DefaultReadTimeout,
		"HTTP: the longest a request's body may take to arrive; it must also keep coming at 1 KiB/s on average after its first 5s (a stalled or trickling client is cut off)")
	fs.DurationVar(&l.IdleTimeout, "idle-timeout", DefaultIdleTimeout, "HTTP: how long a kept-alive connection may wait for its next request (keep it above a load balancer's idle timeout)")
	fs.IntVar(&l.MaxHeaderBytes, "max-header-bytes", DefaultMaxHeaderBytes, "HTTP: the largest request line and headers accepted, in bytes (431 above it)")
}

// check refuses negative limits.
func (l httpLimits) check() error {
	if l.ReadHeaderTimeout < 0 || l.ReadTimeout < 0 || l.IdleTimeout < 0 || l.MaxHeaderBytes < 0 {
		return usageError{"serve: --read-header-timeout, --read-timeout, --idle-timeout and --max-header-bytes must not be negative"}
	}
	return nil
}

// newHTTPServer is the HTTP server of nextup serve, with its limits.
//
// http.Server.ReadTimeout is left unset on purpose: net/http keeps that
// deadline on the connection while the handler runs, and when it passes
// the connection's background read fails and cancels the request's
// context — a claim waiting on a slow booking system would be cut off
// by a limit meant for slow clients. The body's deadline is set by
// bodyDeadline instead, and lifted once the body has arrived.
func newHTTPServer(h http.Handler, l httpLimits) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(h, cmp.Or(l.ReadTimeout, DefaultReadTimeout)),
		ReadHeaderTimeout: cmp.Or(l.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       cmp.Or(l.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    cmp.Or(l.MaxHeaderBytes, DefaultMaxHeaderBytes),
	}
}

// bodyDeadline puts a read deadline on a request's body: it must arrive
// within limit, at minBodyRate after bodyGrace. Each read moves the
// connection's deadline to what the bytes so far have earned; a read
// past it fails, the handler answers (400 or 413), and net/http closes
// the connection. A request without a body, or a transport without read
// deadlines (a Lambda Function URL), is left as it is.
func bodyDeadline(next http.Handler, limit time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		start := time.Now()
		b := &pacedBody{body: r.Body, rc: rc, start: start, end: start.Add(limit)}
		if err := b.extend(); errors.Is(err, http.ErrNotSupported) {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// pacedBody is a request body under bodyDeadline.
type pacedBody struct {
	body       io.ReadCloser
	rc         *http.ResponseController
	start, end time.Time
	read       int64
	done       bool
}

// extend sets the connection's read deadline to what the bytes read so
// far have earned, capped by the body's end.
func (b *pacedBody) extend() error {
	earned := b.start.Add(bodyGrace + time.Duration(b.read)*time.Second/minBodyRate)
	if earned.After(b.end) {
		earned = b.end
	}
	return b.rc.SetReadDeadline(earned)
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.done {
		return b.body.Read(p)
	}
	n, err := b.body.Read(p)
	b.read += int64(n)
	if err == io.EOF {
		// The body is in: lift the deadline, or net/http's background
		// read (which now waits on the connection) would hit it and
		// cancel the request's context while the handler works.
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
		return n, err
	}
	if err == nil {
		_ = b.extend()
	}
	return n, err
}

func (b *pacedBody) Close() error { return b.body.Close() }
