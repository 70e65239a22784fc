package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// runBenchHTTP measures joins/s and claims/s over HTTP against the real
// server on a loopback listener and a fresh embedded store
// (synchronous=FULL), with `clients` concurrent keep-alive clients.
func runBenchHTTP(ctx context.Context, n, clients int, stdout io.Writer) error {
	joins, claims, err := benchJoinsClaims(ctx, n, clients)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "HTTP over loopback, %d concurrent clients, %d requests each kind, fresh SQLite store (synchronous=FULL):\n", clients, n)
	fmt.Fprintf(stdout, "  joins   %8.0f /s   (POST /v1/businesses/{bid}/waitlist:join, with reverse matching)\n", joins)
	fmt.Fprintf(stdout, "  claims  %8.0f /s   (POST /v1/claims/{token}:accept, one conditional write + booking + confirmation)\n", claims)
	return nil
}

// benchJoinsClaims measures joins/s and claims/s over HTTP: n of each by
// `clients` concurrent keep-alive clients, on a fresh embedded store.
func benchJoinsClaims(ctx context.Context, n, clients int) (joins, claims float64, err error) {
	dir, err := os.MkdirTemp("", "nextup-benchhttp-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	base := "http://" + ln.Addr().String()
	svc := waitlist.New(st, nextup.RealClock{}, base)
	srv := &http.Server{Handler: (&web.Server{Svc: svc, Store: st}).Handler()}
	go srv.Serve(ln)
	defer srv.Close()

	rules := nextup.DefaultRules()
	rules.QuietHours, rules.MaxOffersPerPersonPerDay = nil, 0
	biz, key, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Bench", Timezone: "UTC", Rules: &rules})
	if err != nil {
		return 0, 0, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	post := func(path, body string) error {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			return fmt.Errorf("POST %s: %d %s", path, res.StatusCode, b)
		}
		return nil
	}
	// parallel runs op(0..n-1) on `clients` goroutines and returns ops/s.
	parallel := func(op func(i int) error) (float64, error) {
		var next atomic.Int64
		var firstErr atomic.Value
		var wg sync.WaitGroup
		start := time.Now() // a measurement: wall time is the point
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					if err := op(i); err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil {
			return 0, err
		}
		return float64(n) / time.Since(start).Seconds(), nil
	}

	joins, err = parallel(func(i int) error {
		return post("/v1/businesses/"+biz.ID+"/waitlist:join",
			fmt.Sprintf(`{"name":"J%d","email":"join%d@example.com","service":"colour"}`, i, i))
	})
	if err != nil {
		return 0, 0, err
	}
	// n free chairs, each offered to one waiting person: n live offers.
	start := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Hour)
	var tokens []string
	for i := range n {
		if err := post("/v1/businesses/"+biz.ID+"/waitlist:join", fmt.Sprintf(`{"name":"C%d","email":"claim%d@example.com","service":"cut"}`, i, i)); err != nil {
			return 0, 0, err
		}
		s := start.Add(time.Duration(i) * time.Minute)
		if _, _, err := svc.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "cut", StartsAt: s, EndsAt: s.Add(30 * time.Minute), BookedSeats: new(int)}); err != nil {
			return 0, 0, err
		}
	}
	msgs, err := svc.ListMessages(ctx, nextup.MessageFilter{BusinessID: biz.ID})
	if err != nil {
		return 0, 0, err
	}
	for _, m := range msgs {
		if m.Kind == nextup.MessageOffer {
			tokens = append(tokens, m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:])
		}
	}
	if len(tokens) != n {
		return 0, 0, fmt.Errorf("expected %d offers, got %d", n, len(tokens))
	}
	claims, err = parallel(func(i int) error { return post("/v1/claims/"+tokens[i]+":accept", "") })
	if err != nil {
		return 0, 0, err
	}
	return joins, claims, nil
}
