package nextup

import "time"

// JobState is where a background job stands.
type JobState string

// Job states.
const (
	JobRunning JobState = "running"
	JobDone    JobState = "done"
	JobFailed  JobState = "failed"
)

// Job kinds.
const (
	JobSlotsRelease = "slots_release" // a bulk release: free the booked seats of many slots
)

// MaxJobSlots bounds the slots one bulk release may name: a job keeps its
// slot ids in one record, and a DynamoDB item holds at most 400 KB.
const MaxJobSlots = 5000

// Job is work too big for one request, done in waves of bounded
// transactions by a durable timer (TimerJobRun) and reported as it goes:
// a bulk release frees the seats of each of SlotIDs in turn, in the
// order given (Done of them so far).
type Job struct {
	ID         string
	BusinessID string
	Kind       string
	Reason     string   // a bulk release's reason (cancellation, no_show, opening)
	SlotIDs    []string // the slots, in the order they are done
	JobProgress
	CreatedAt time.Time
	UpdatedAt time.Time
}

// JobProgress is what a job has done so far. A job moves from one
// progress to the next in the transaction that did the work
// (JobAdvance), conditionally on the progress it started from, so work
// done twice after a crash is recorded once.
type JobProgress struct {
	State  JobState
	Done   int // items finished (a bulk release: slots)
	Total  int
	Freed  int // a bulk release: seats freed
	Offers int // a bulk release: offers made
	Error  string
}
