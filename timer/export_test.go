package timer

import "time"

// SetMaxSteps lowers Advance's step limit for s, so that the test of the
// limit does not have to fire ten thousand timers.
func SetMaxSteps(s *Sweeper, n int) { s.maxSteps = n }

// SetRenewTicks makes s renew a running handler's lease on each value sent
// to the channel ticks returns, instead of on a wall-clock ticker.
func SetRenewTicks(s *Sweeper, ticks func() (<-chan time.Time, func())) { s.renewTicks = ticks }
