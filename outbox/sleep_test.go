package outbox

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The default Sleep is a timer that gives way to the context: a relay
// stopped while a message waits for its token stops at once.
func TestDefaultSleepEndsWithTheContext(t *testing.T) {
	t.Parallel()
	var r Relay
	if err := r.sleep(t.Context(), time.Millisecond); err != nil {
		t.Errorf("sleep(1ms) = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	done := make(chan error, 1)
	go func() { done <- r.sleep(ctx, time.Hour) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("sleep(1h) with a cancelled context = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sleep(1h) did not end with its context")
	}
}
