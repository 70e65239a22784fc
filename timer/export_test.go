package timer

// SetMaxSteps lowers Advance's step limit for s, so that the test of the
// limit does not have to fire ten thousand timers.
func SetMaxSteps(s *Sweeper, n int) { s.maxSteps = n }
