package web

import (
	"net/http"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/timer"
)

// DebugClock is time control for tests and demos, mounted only when the
// server runs with --clock=fake.
type DebugClock struct {
	Clock   *nextup.FakeClock
	Sweeper *timer.Sweeper
	Relay   *outbox.Relay
}

// debugClock is POST /v1/debug/clock (admin) {"set"?, "advance_seconds"?}.
// It returns after every timer due up to the new time has fired, its
// effects are stored, and the resulting messages have been relayed.
func (s *Server) debugClock(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Set            *time.Time `json:"set"`
		AdvanceSeconds int64      `json:"advance_seconds"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	d := s.Debug
	now := d.Clock.Now()
	target := now.Add(time.Duration(in.AdvanceSeconds) * time.Second)
	if in.Set != nil {
		target = in.Set.Add(time.Duration(in.AdvanceSeconds) * time.Second)
	}
	if target.Before(now) || in.AdvanceSeconds < 0 || in.AdvanceSeconds > 10*365*24*3600 {
		s.writeError(w, r, invalidf("set", "the clock only moves forward (by at most ten years)"))
		return
	}
	if err := timer.Advance(r.Context(), d.Clock, d.Sweeper, target.Sub(now)); err != nil {
		s.writeError(w, r, err)
		return
	}
	for {
		sent, failed, err := d.Relay.RunOnce(r.Context())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if sent+failed == 0 {
			break
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"now": d.Clock.Now()})
}
