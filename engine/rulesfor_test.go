package engine

import (
	"testing"

	"github.com/nextup-dev/nextup"
)

// TestRulesForEventTimeCritical: an event's own choice of the quiet hours'
// time-critical exception wins over the business's; without one, the
// business's holds; a slot that is not an event keeps the business's.
func TestRulesForEventTimeCritical(t *testing.T) {
	yes, no := true, false
	biz := nextup.Rules{TimeCriticalThroughQuiet: false}
	for _, c := range []struct {
		name string
		slot nextup.Slot
		want bool
	}{
		{"a slot", nextup.Slot{Kind: nextup.KindSlot, Event: &nextup.EventSettings{TimeCriticalThroughQuiet: &yes}}, false},
		{"an event without its own choice", nextup.Slot{Kind: nextup.KindEvent, Event: &nextup.EventSettings{}}, false},
		{"an event that sends through quiet hours", nextup.Slot{Kind: nextup.KindEvent, Event: &nextup.EventSettings{TimeCriticalThroughQuiet: &yes}}, true},
	} {
		if got := RulesFor(biz, c.slot).TimeCriticalThroughQuiet; got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	biz.TimeCriticalThroughQuiet = true
	if got := RulesFor(biz, nextup.Slot{Kind: nextup.KindEvent, Event: &nextup.EventSettings{TimeCriticalThroughQuiet: &no}}).TimeCriticalThroughQuiet; got {
		t.Errorf("an event that keeps quiet hours under a business that does not: %v", got)
	}
}
