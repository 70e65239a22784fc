package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
)

// benchReady is the long list at rest and under load: `nextup serve` on
// a SQLite file of entries waiting (1,000,000 for the target) is
// started as a process of its own and timed to its first /readyz 200;
// then its resident memory is read idle and at its peak under 32
// connections of status reads and joins for some seconds. The baseline
// is the same process on a store with the same business and nothing
// waiting, measured in the same run.
func benchReady(ctx context.Context, entries int, log io.Writer) ([]scenarioResult, error) {
	dir, err := os.MkdirTemp("", "nextup-bench-ready-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	type run struct {
		ready           time.Duration
		idleMB, loadMB  float64
		requests, fails int
	}
	measure := func(waiting int) (run, error) {
		file := filepath.Join(dir, fmt.Sprintf("ready-%d.db", waiting))
		fmt.Fprintf(log, "ready: a store of %d waiting...\n", waiting)
		bid, key, tokens, err := seedReady(ctx, file, waiting)
		if err != nil {
			return run{}, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return run{}, err
		}
		addr := ln.Addr().String()
		ln.Close()
		cmd := exec.CommandContext(ctx, os.Args[0], "serve", "--addr", addr, "--db", file, "--base-url", "http://"+addr)
		// A test binary of this package runs Main when asked (TestMain);
		// nextup itself ignores it.
		cmd.Env = append(os.Environ(), "NEXTUP_TEST_RUN_MAIN=1")
		t0 := time.Now() // a measurement
		if err := cmd.Start(); err != nil {
			return run{}, err
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
		var r run
		for {
			res, err := client.Get("http://" + addr + "/readyz")
			if err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					r.ready = time.Since(t0)
					break
				}
			}
			if time.Since(t0) > time.Minute {
				return run{}, fmt.Errorf("serve on %s not ready after a minute: %v", file, err)
			}
			time.Sleep(2 * time.Millisecond) // polling a process from outside: wall time is the point
		}
		time.Sleep(2 * time.Second) // at rest
		if r.idleMB, err = rssMB(cmd.Process.Pid); err != nil {
			return run{}, err
		}
		var stop atomic.Bool
		var peak atomic.Int64
		var reqs, fails atomic.Int64
		var wg sync.WaitGroup
		for c := range 32 {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(c), 7))
				for i := 0; !stop.Load(); i++ {
					var res *http.Response
					var err error
					if i%8 == 7 {
						body, _ := json.Marshal(map[string]string{"name": "Late", "email": fmt.Sprintf("late%d.%d@example.com", c, i), "service": "haircut"})
						req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/v1/businesses/"+bid+"/waitlist:join", bytes.NewReader(body))
						req.Header.Set("Authorization", "Bearer "+key)
						req.Header.Set("Content-Type", "application/json")
						res, err = client.Do(req)
					} else {
						res, err = client.Get("http://" + addr + "/v1/status/" + tokens[rnd.IntN(len(tokens))])
					}
					reqs.Add(1)
					if err != nil {
						fails.Add(1)
						continue
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode >= 300 {
						fails.Add(1)
					}
				}
			})
		}
		for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			mb, err := rssMB(cmd.Process.Pid)
			if err != nil {
				stop.Store(true)
				wg.Wait()
				return run{}, err
			}
			if kb := int64(mb * 1024); kb > peak.Load() {
				peak.Store(kb)
			}
		}
		stop.Store(true)
		wg.Wait()
		r.loadMB, r.requests, r.fails = float64(peak.Load())/1024, int(reqs.Load()), int(fails.Load())
		if r.fails > 0 {
			return run{}, fmt.Errorf("under load %d of %d requests failed", r.fails, r.requests)
		}
		return r, nil
	}
	long, err := measure(entries)
	if err != nil {
		return nil, err
	}
	empty, err := measure(0)
	if err != nil {
		return nil, err
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	n := fmt.Sprintf("%d waiting", entries)
	return []scenarioResult{
		{Scenario: "ready", Store: "sqlite", Figure: ms(long.ready), Unit: "ms", What: "nextup serve, start to /readyz 200, " + n,
			Baseline: ms(empty.ready), BaselineLabel: "the same, nothing waiting", Ratio: ms(long.ready) / ms(empty.ready), Target: "<= 200 ms"},
		{Scenario: "ready", Store: "sqlite", Figure: long.idleMB, Unit: "MB", What: "resident memory at rest, " + n,
			Baseline: empty.idleMB, BaselineLabel: "the same, nothing waiting", Ratio: long.idleMB / empty.idleMB, Target: "<= 100 MB"},
		{Scenario: "ready", Store: "sqlite", Figure: long.loadMB, Unit: "MB",
			What:     fmt.Sprintf("peak resident memory, 32 connections of status reads and joins for 8 s (%d requests), %s", long.requests, n),
			Baseline: empty.loadMB, BaselineLabel: "the same, nothing waiting", Ratio: long.loadMB / empty.loadMB, Target: "<= 150 MB"},
	}, nil
}

// seedReady makes the store of benchReady: a business, waiting entries
// on its haircut list, and 64 of them (or, with none waiting, 64 of its
// own) with status links, whose tokens it returns with the business's id
// and key.
func seedReady(ctx context.Context, file string, waiting int) (bid, key string, tokens []string, err error) {
	st, err := sqlite.Open(ctx, file)
	if err != nil {
		return "", "", nil, err
	}
	defer st.Close()
	svc := waitlist.New(st, nextup.RealClock{}, "http://bench.invalid")
	biz, key, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Ready", Timezone: "UTC"})
	if err != nil {
		return "", "", nil, err
	}
	now := time.Now()
	if err := seedWaiting(ctx, &benchStore{name: "sqlite", st: st}, biz.ID, "haircut", "", waiting, now); err != nil {
		return "", "", nil, err
	}
	err = st.InTx(ctx, func(tx nextup.Tx) error {
		for i := range 64 {
			tok := fmt.Sprintf("ready-%s-%02d", biz.ID, i)
			tokens = append(tokens, tok)
			if waiting > 0 {
				id := fmt.Sprintf("ent_haircut%07d", (i*waiting)/64)
				if err := tx.EntrySetStatusHash(ctx, id, nextup.HashToken(tok), now); err != nil {
					return err
				}
				continue
			}
			e := nextup.Entry{ID: fmt.Sprintf("ent_ready%02d", i), BusinessID: biz.ID, Name: "Seed", Email: fmt.Sprintf("r%02d@example.com", i),
				Service: "haircut", PartySize: 1, JoinedAt: now.Add(time.Duration(i-100) * time.Millisecond), State: nextup.EntryWaiting,
				Source: "bench", UpdatedAt: now, StatusHash: nextup.HashToken(tok)}
			if _, err := tx.EntryCreate(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	return biz.ID, key, tokens, err
}

// rssMB reads a process's resident set size from /proc, in MB.
func rssMB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				return 0, fmt.Errorf("VmRSS of %d: %q", pid, rest)
			}
			return float64(kb) / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for process %d", pid)
}
