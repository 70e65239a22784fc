package web_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// A bulk release over HTTP: 202 with the job and how many slots it frees
// (the afternoon's three haircuts, not the morning's nor the colour), the
// job running until the sweeper runs its waves, then done with each seat
// freed and offered; a filter of nothing, a bad reason and another
// business's job are refused, and nothing is made of them.
func TestBulkReleaseOverHTTP(t *testing.T) {
	t.Parallel()
	var svc *waitlist.Service
	a := setup(t, func(ws *web.Server) { svc = ws.Svc })
	for i := range 3 {
		a.slot(fmt.Sprintf(`{"service":"haircut","starts_at":"2026-12-02T%02d:00:00Z","ends_at":"2026-12-02T%02d:45:00Z"}`, 13+i, 13+i))
	}
	morning := a.slot(`{"service":"haircut","starts_at":"2026-12-02T09:00:00Z","ends_at":"2026-12-02T09:45:00Z"}`)
	colour := a.slot(`{"service":"colour","starts_at":"2026-12-02T14:00:00Z","ends_at":"2026-12-02T14:45:00Z"}`)
	for _, n := range []string{"ann", "bob", "cat", "dee"} {
		a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
			`{"name":"`+n+`","email":"`+n+`@example.com","service":"haircut","earliest":"2026-12-02","latest":"2026-12-03"}`), 201, nil)
	}
	var started struct {
		JobID string         `json:"job_id"`
		Slots int            `json:"slots"`
		Job   map[string]any `json:"job"`
	}
	r := a.do("POST", "/v1/businesses/"+a.bid+"/slots:release", a.key,
		`{"filter":{"from":"2026-12-02T12:00:00Z","to":"2026-12-03T00:00:00Z","service":"haircut"},"reason":"cancellation"}`)
	a.must(r, 202, &started)
	if started.Slots != 3 || started.JobID == "" || r.header.Get("Location") != "/v1/jobs/"+started.JobID || started.Job["state"] != "running" {
		t.Fatalf("the release's answer: %+v, Location %q", started, r.header.Get("Location"))
	}
	var job map[string]any
	a.must(a.do("GET", "/v1/jobs/"+started.JobID, a.key, ""), 200, &job)
	if job["state"] != "running" || job["done"] != float64(0) || job["total"] != float64(3) {
		t.Fatalf("the job before its waves: %v", job)
	}
	sw := &timer.Sweeper{Store: a.store, Clock: a.clock, Handler: svc}
	if _, err := sw.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.must(a.do("GET", "/v1/jobs/"+started.JobID, a.key, ""), 200, &job)
	if job["state"] != "done" || job["done"] != float64(3) || job["seats_freed"] != float64(3) || job["offers"] != float64(3) {
		t.Fatalf("the job after its waves: %v", job)
	}
	for _, sl := range []map[string]any{morning, colour} {
		var got map[string]any
		a.must(a.do("GET", "/v1/slots/"+sl["id"].(string), a.key, ""), 200, &got)
		if got["booked_seats"] != float64(1) || got["state"] != string(nextup.SlotFull) {
			t.Errorf("slot %s was touched: %v", sl["id"], got)
		}
	}

	p := a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/slots:release", a.key, `{"filter":{}}`), 400, "validation_failed")
	if fs, _ := p["errors"].([]any); len(fs) == 0 || fs[0].(map[string]any)["field"] != "filter" {
		t.Errorf("an empty filter: %v", p)
	}
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/slots:release", a.key, `{"filter":{"service":"haircut"},"reason":"weather"}`), 400, "validation_failed")
	a.problem(a.do("POST", "/v1/businesses/"+a.bid+"/slots:release", a.key, `{"filter":{"service":"haircut"},"seats":0}`), 400, "validation_failed")
	a.problem(a.do("GET", "/v1/jobs/job_missing", a.key, ""), 404, "not_found")
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"Europe/London"}`), 201, &other)
	a.problem(a.do("GET", "/v1/jobs/"+started.JobID, other["api_key"].(string), ""), 404, "not_found")
	var jobs []nextup.Job
	if err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		var err error
		jobs, err = tx.JobList(context.Background(), a.bid, 0)
		return err
	}); err != nil || len(jobs) != 1 {
		t.Errorf("jobs after the refusals: %d, %v; want the one", len(jobs), err)
	}
}
