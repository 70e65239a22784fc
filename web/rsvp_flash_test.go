package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/store/postgres/pgtest"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/waitlist"
)

// TestRSVPFlashCrowd: 1,000 guests confirm their RSVPs through the public
// page's confirm step at once (16 at a time, each from its own address),
// on SQLite and on PostgreSQL: exactly the event's capacity is confirmed,
// everyone else is waitlisted in the order their registrations committed,
// and nobody gets a 5xx.
func TestRSVPFlashCrowd(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var st nextup.Store
			if backend == "sqlite" {
				db, err := sqlite.Open(ctx, t.TempDir()+"/nextup.db")
				if err != nil {
					t.Fatal(err)
				}
				st = db
			} else {
				schema := pgtest.NewSchema(t, 16)
				db, err := postgres.Open(ctx, schema.DSN)
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				st = db
			}
			t.Cleanup(func() { st.Close() })
			clock := nextup.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
			svc := waitlist.New(st, clock, "https://nextup.test")
			s := &Server{Svc: svc, Store: st, AdminToken: "adm"}
			h := s.Handler()
			b, _, err := svc.CreateBusiness(ctx, waitlist.CreateBusinessParams{Name: "Hall", Timezone: "Europe/London"})
			if err != nil {
				t.Fatal(err)
			}
			slug := "hall"
			if _, err := svc.UpdateProfile(ctx, b.ID, waitlist.ProfilePatch{Slug: &slug}); err != nil {
				t.Fatal(err)
			}
			biz, err := svc.GetBusiness(ctx, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			p := waitlist.NewEventParams()
			p.Title, p.Capacity = "Gig", 100
			p.StartsAt, p.EndsAt = clock.Now().Add(30*24*time.Hour), clock.Now().Add(30*24*time.Hour+3*time.Hour)
			ev, err := svc.CreateEvent(ctx, biz.ID, p)
			if err != nil {
				t.Fatal(err)
			}

			const guests, workers = 1000, 16
			csrf := strings.Repeat("c", 43)
			var mu sync.Mutex
			var codes []int
			jobs := make(chan int)
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for i := range jobs {
						tok, err := sealRSVP(biz, pendingRSVP{EventID: ev.ID, Name: fmt.Sprintf("Guest %d", i),
							Email: fmt.Sprintf("g%d@example.com", i), ExpiresAt: clock.Now().Add(time.Hour)})
						if err != nil {
							t.Error(err)
							return
						}
						form := url.Values{"csrf": {csrf}, "t": {tok}}
						req := httptest.NewRequest("POST", "/e/hall/"+ev.ID+"/confirm", strings.NewReader(form.Encode()))
						req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
						req.AddCookie(&http.Cookie{Name: preCSRFCookie, Value: csrf})
						req.RemoteAddr = fmt.Sprintf("10.0.%d.%d:5000", i/250, i%250)
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, req)
						mu.Lock()
						codes = append(codes, rec.Code)
						mu.Unlock()
					}
				})
			}
			for i := range guests {
				jobs <- i
			}
			close(jobs)
			wg.Wait()

			for _, c := range codes {
				if c >= 500 {
					t.Fatalf("a %d among the confirmations", c)
				}
				if c != http.StatusSeeOther {
					t.Fatalf("a confirmation answered %d, want 303 to the status page", c)
				}
			}
			var all []nextup.Entry
			if err := st.Read(ctx, func(tx nextup.Tx) error {
				for _, state := range []nextup.EntryState{nextup.EntryBooked, nextup.EntryWaiting} {
					es, err := tx.EntryList(ctx, nextup.EntryFilter{BusinessID: biz.ID, EventID: ev.ID, State: state})
					if err != nil {
						return err
					}
					all = append(all, es...)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			booked, waiting := 0, []nextup.Entry{}
			for _, e := range all {
				switch e.State {
				case nextup.EntryBooked:
					booked++
				case nextup.EntryWaiting:
					waiting = append(waiting, e)
				}
			}
			if booked != 100 || len(waiting) != 900 {
				t.Fatalf("%d confirmed and %d waitlisted, want 100 and 900", booked, len(waiting))
			}
			// The waitlist (in its fair order, as EntryList gives it) runs in
			// the order the registrations committed, and everyone confirmed
			// committed before everyone waiting.
			if !slices.IsSortedFunc(waiting, func(a, b nextup.Entry) int { return int(a.Seq - b.Seq) }) {
				t.Errorf("the waitlist is not in the order the registrations committed")
			}
			minWait := waiting[0].Seq
			for _, e := range all {
				if e.State == nextup.EntryBooked && e.Seq > minWait {
					t.Fatalf("a confirmed registration (seq %d) committed after a waitlisted one (seq %d)", e.Seq, minWait)
				}
			}
		})
	}
}
