package mailmsg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/intake/mailmsg"
)

// TestExtractWorstCase keeps Extract linear (the bound is loose on purpose:
// it catches quadratic work, not a busy machine) on large messages (a quarter
// of the size bound, to keep the test quick) made of lines that each look like the start of a forward, a reply
// or a signature.
func TestExtractWorstCase(t *testing.T) {
	const head = "From: a@b.test\r\nSubject: FW: x\r\nContent-Type: text/plain\r\n\r\n"
	for _, line := range []string{
		"-----Original Message-----\r\n", "________________________________\r\nFrom: x\r\n",
		"> From: a@b.test\r\n", "On Mon wrote:\r\n", "Begin forwarded message:\r\n\r\n", "-- \r\n", "<blockquote>",
	} {
		raw := head + strings.Repeat(line, (mailmsg.MaxSize/4-len(head))/len(line))
		start := time.Now()
		mailmsg.Extract([]byte(raw))
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%q repeated: %s", line, d)
		}
	}
}
