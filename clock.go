package nextup

import (
	"sync"
	"time"
)

// Clock tells the time. Every piece of logic asks a Clock instead of calling
// time.Now, so tests, the simulation and `--clock=fake` control time.
type Clock interface {
	Now() time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns the current wall-clock time in UTC.
func (RealClock) Now() time.Time { return time.Now().UTC() }

// FakeClock is a Clock that moves only when told to. Due timers are run by
// the timer package's Advance, which steps this clock from one due time to
// the next so that every effect is stamped with the time it was due.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a FakeClock set to t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t.UTC()} }

// Now returns the fake current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t. Moving backwards is allowed (tests of late or
// repeated timers use it) but the timer package never does it.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t.UTC()
}

// Advance moves the clock forward by d and returns the new time.
func (c *FakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}
