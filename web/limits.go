package web

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyLimiter limits attempts per key (a client address, a contact) in this
// process, forgetting keys now and then.
type keyLimiter struct {
	every time.Duration
	burst int

	mu    sync.Mutex
	byKey map[string]*rate.Limiter
	reset time.Time
}

// setup sets the rate (one more attempt every `every`) and the burst.
func (l *keyLimiter) setup(every time.Duration, burst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.every, l.burst = every, burst
}

func (l *keyLimiter) allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byKey == nil || time.Since(l.reset) > 6*time.Hour {
		l.byKey, l.reset = map[string]*rate.Limiter{}, time.Now()
	}
	lim := l.byKey[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.byKey[key] = lim
	}
	return lim.Allow()
}

// clientIP is the address the request came from.
func clientIP(r *http.Request) string {
	host := r.RemoteAddr
	if i := strings.LastIndex(host, ":"); i > 0 {
		host = host[:i]
	}
	return host
}
