package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// seedWaiting puts n waiting entries on a business's list for a service
// (or, with eventID, an event's waitlist) straight through the store, in
// batches, joined a millisecond apart before now: the long list a storm
// falls on.
func seedWaiting(ctx context.Context, bs *benchStore, businessID, service, eventID string, n int, now time.Time) error {
	batch := 20000
	if bs.name == "postgres" {
		batch = 1000 // see benchPosition
	}
	for start := 0; start < n; start += batch {
		err := bs.st.InTx(ctx, func(tx nextup.Tx) error {
			for i := start; i < min(start+batch, n); i++ {
				e := nextup.Entry{ID: fmt.Sprintf("ent_%s%07d", service+eventID[min(len(eventID), 4):], i), BusinessID: businessID,
					Name: "Seed", Email: fmt.Sprintf("w%07d.%s@example.com", i, service), Service: service, EventID: eventID,
					PartySize: 1, JoinedAt: now.Add(time.Duration(i-n-1000) * time.Millisecond), State: nextup.EntryWaiting,
					Source: "bench", UpdatedAt: now}
				if _, err := tx.EntryCreate(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}

// runJob runs a bulk release's job to its end with a sweeper of its own,
// as `serve` would, and returns how long the release took from its
// request to its last offer committed.
func runJob(ctx context.Context, svc *waitlist.Service, st nextup.Store, bid string, f waitlist.ReleaseFilter) (time.Duration, nextup.Job, error) {
	sw := &timer.Sweeper{Store: st, Clock: nextup.RealClock{}, Handler: svc}
	t0 := time.Now() // a measurement
	job, err := svc.BulkRelease(ctx, bid, f, "cancellation")
	if err != nil {
		return 0, job, err
	}
	for job.State == nextup.JobRunning {
		if _, err := sw.RunDue(ctx); err != nil {
			return 0, job, err
		}
		if job, err = svc.GetJob(ctx, bid, job.ID); err != nil {
			return 0, job, err
		}
		if time.Since(t0) > 10*time.Minute {
			return 0, job, fmt.Errorf("job %s still running after 10 min: %+v", job.ID, job.JobProgress)
		}
	}
	// A split promotion (a bounded store) finishes in slot_decide timers.
	for {
		n, err := sw.RunDue(ctx)
		if err != nil {
			return 0, job, err
		}
		if n == 0 {
			break
		}
	}
	return time.Since(t0), job, nil
}

// benchStorm is the storm of the sources: waiting entries (200,000 at
// most) and 500 booked unit slots freed by one bulk release; then,
// separately, one 500-seat event, all seats confirmed, freed by one bulk
// release onto its own waitlist. Each figure is the time from the
// release to its last offer committed, against the time the raw
// primitive (a conditional UPDATE and an INSERT, one transaction and
// one fsync each, one writer) takes to commit 500 transactions, measured
// in the same run. The target is 2 s for the storm; the claim windows of
// paced sends are TestStormKeepsEveryClaimWindowWhole's (the fake clock).
func benchStorm(ctx context.Context, pgDSN string, entries int, log io.Writer) ([]scenarioResult, error) {
	const slots, seats = 500, 500
	waiting := min(entries, 200000)
	var results []scenarioResult
	r, _, err := rawPerSec(ctx, pgDSN, slots, 1)
	if err != nil {
		return nil, fmt.Errorf("raw primitive: %w", err)
	}
	raw := slots / r
	for _, kind := range []string{"slots", "event"} {
		bs, err := openBenchStore(ctx, pgDSN)
		if err != nil {
			return nil, err
		}
		r, err := func() (scenarioResult, error) {
			defer bs.close()
			svc := waitlist.New(bs.st, nextup.RealClock{}, "http://bench.invalid")
			rules := nextup.DefaultRules()
			rules.QuietHours = nil
			biz, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Storm", Timezone: "UTC", Rules: &rules})
			if err != nil {
				return scenarioResult{}, err
			}
			now := time.Now()
			start := now.Add(48 * time.Hour).Truncate(time.Hour)
			var f waitlist.ReleaseFilter
			var what string
			var list nextup.EntryFilter // the waitlist the freed seats go to
			freed := 0
			if kind == "slots" {
				fmt.Fprintf(log, "storm: %d waiting and %d booked unit slots on %s...\n", waiting, slots, bs.name)
				if err := seedWaiting(ctx, bs, biz.ID, "haircut", "", waiting, now); err != nil {
					return scenarioResult{}, err
				}
				for i := range slots {
					at := start.Add(time.Duration(i) * 15 * time.Minute)
					if _, _, err := svc.CreateSlot(ctx, biz.ID, waitlist.SlotParams{Service: "haircut", StartsAt: at, EndsAt: at.Add(15 * time.Minute)}); err != nil {
						return scenarioResult{}, err
					}
				}
				f, freed = waitlist.ReleaseFilter{Service: "haircut"}, slots
				list.Service = "haircut"
				what = fmt.Sprintf("one bulk release of %d unit slots, %d waiting: release to last offer committed", slots, waiting)
			} else {
				fmt.Fprintf(log, "storm: a %d-seat event, all confirmed, %d on its waitlist, on %s...\n", seats, waiting, bs.name)
				p := waitlist.NewEventParams()
				p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Festival", start, start.Add(3*time.Hour), seats
				ev, err := svc.CreateEvent(ctx, biz.ID, p)
				if err != nil {
					return scenarioResult{}, err
				}
				for i := range seats {
					if _, _, err := svc.Register(ctx, biz.ID, ev.ID, waitlist.RegisterParams{Name: "Guest",
						Email: fmt.Sprintf("g%04d@example.com", i)}); err != nil {
						return scenarioResult{}, err
					}
				}
				if err := seedWaiting(ctx, bs, biz.ID, "", ev.ID, waiting, now); err != nil {
					return scenarioResult{}, err
				}
				f, freed = waitlist.ReleaseFilter{IDs: []string{ev.ID}}, seats
				list.EventID = ev.ID
				what = fmt.Sprintf("one bulk release of a %d-seat event, %d waiting: release to last offer committed", seats, waiting)
			}
			took, job, err := runJob(ctx, svc, bs.st, biz.ID, f)
			if err != nil {
				return scenarioResult{}, err
			}
			if job.State != nextup.JobDone || job.Freed != freed {
				return scenarioResult{}, fmt.Errorf("the storm's job: %+v, want %d seats freed", job.JobProgress, freed)
			}
			var offers int
			err = bs.st.Read(ctx, func(tx nextup.Tx) error {
				list.BusinessID, list.State, list.Limit = biz.ID, nextup.EntryOffered, freed+1
				es, err := tx.EntryList(ctx, list)
				offers = len(es)
				return err
			})
			if err != nil {
				return scenarioResult{}, err
			}
			if offers != freed {
				return scenarioResult{}, fmt.Errorf("after the storm %d people hold offers, want %d", offers, freed)
			}
			res := scenarioResult{Scenario: "storm", Store: bs.name, Figure: took.Seconds(), Unit: "s", What: what, Target: "<= 2 s"}
			res.Baseline, res.BaselineLabel, res.Ratio = raw, "500 raw conditional UPDATE + INSERT transactions, one after another", took.Seconds()/raw
			return res, nil
		}()
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// benchFlash is the flash sale: n registrations (10,000 by default) for
// a 1,000-seat event from 32 clients at once over HTTP. Exactly 1,000
// are confirmed and the rest waitlisted in arrival order; the figure is
// registrations a second, against the raw primitive's transactions a
// second measured in the same run (SQLite).
func benchFlash(ctx context.Context, pgDSN string, n int, log io.Writer) ([]scenarioResult, error) {
	const capacity, clients = 1000, 32
	bs, err := openBenchStore(ctx, pgDSN)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	svc := waitlist.New(bs.st, nextup.RealClock{}, base)
	srv := &http.Server{Handler: (&web.Server{Svc: svc, Store: bs.st}).Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	biz, key, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Flash", Timezone: "UTC"})
	if err != nil {
		return nil, err
	}
	p := waitlist.NewEventParams()
	start := time.Now().Add(72 * time.Hour).Truncate(time.Hour)
	p.Title, p.StartsAt, p.EndsAt, p.Capacity = "Launch night", start, start.Add(3*time.Hour), capacity
	ev, err := svc.CreateEvent(ctx, biz.ID, p)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "flash: %d registrations for %d seats by %d clients over HTTP on %s...\n", n, capacity, clients, bs.name)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var next atomic.Int64
	var firstErr atomic.Value
	var mu sync.Mutex
	states := map[string]int{}
	var wg sync.WaitGroup
	t0 := time.Now() // a measurement
	for range clients {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				body, _ := json.Marshal(map[string]string{"name": fmt.Sprintf("Guest %d", i), "email": fmt.Sprintf("f%05d@example.com", i)})
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/events/"+ev.ID+"/registrations", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err == nil {
					var out struct {
						State string `json:"state"`
					}
					err = json.NewDecoder(res.Body).Decode(&out)
					res.Body.Close()
					if err == nil && res.StatusCode != http.StatusCreated {
						err = fmt.Errorf("POST registrations: %d", res.StatusCode)
					}
					mu.Lock()
					states[out.State]++
					mu.Unlock()
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	stats, err := svc.EventStats(ctx, biz.ID, ev.ID)
	if err != nil {
		return nil, err
	}
	if want := min(n, capacity); states[waitlist.RegConfirmed] != want || stats.ConfirmedSeats != want || states[waitlist.RegWaitlisted] != n-want {
		return nil, fmt.Errorf("flash: answers %v, %d seats confirmed; want exactly %d confirmed and %d waitlisted", states, stats.ConfirmedSeats, want, n-want)
	}
	fig := float64(n) / took.Seconds()
	res := scenarioResult{Scenario: "flash", Store: bs.name, Figure: fig, Unit: "/s",
		What: fmt.Sprintf("POST /v1/events/{id}/registrations, %d for %d seats, %d clients (exactly %d confirmed)", n, capacity, clients, capacity)}
	raw, label, err := rawPerSec(ctx, pgDSN, n, clients)
	if err != nil {
		return nil, fmt.Errorf("raw primitive: %w", err)
	}
	res.Baseline, res.BaselineLabel, res.Ratio, res.Target = raw, label, fig/raw, ">= 1.0×"
	if pgDSN != "" {
		res.Target = ">= 0.5×"
	}
	return []scenarioResult{res}, nil
}
