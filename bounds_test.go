package nextup_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func TestParseBound(t *testing.T) {
	t.Parallel()
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in     string
		latest bool
		want   string
		bad    bool
	}{
		{in: "", want: "0001-01-01T00:00:00Z"},
		{in: "2026-12-01", want: "2026-12-01T00:00:00Z"},
		{in: "2026-07-01", want: "2026-06-30T23:00:00Z"},                      // BST
		{in: "2026-07-01", latest: true, want: "2026-07-01T22:59:59.999999Z"}, // BST
		{in: "2026-03-29", latest: true, want: "2026-03-29T22:59:59.999999Z"}, // a 23-hour day
		{in: "2026-10-25", latest: true, want: "2026-10-25T23:59:59.999999Z"}, // a 25-hour day
		{in: "2026-12-01T15:04:05+01:00", want: "2026-12-01T14:04:05Z"},
		{in: "2026-12-01T15:04:05", bad: true}, // no offset
		{in: "2026-13-01", bad: true},
		{in: "tomorrow", bad: true},
		{in: "0001-01-01T00:00:00Z", bad: true},
	}
	for _, tt := range tests {
		got, err := nextup.ParseBound(tt.in, london, tt.latest)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseBound(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseBound(%q): %v", tt.in, err)
			continue
		}
		if s := got.Format(time.RFC3339Nano); s != tt.want {
			t.Errorf("ParseBound(%q, latest=%v) = %s, want %s", tt.in, tt.latest, s, tt.want)
		}
	}
}

func FuzzParseBound(f *testing.F) {
	for _, s := range []string{"", "2026-12-01", "2026-12-01T15:04:05+01:00", "2026-02-30", "9999-12-31", "x"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, latest bool) {
		got, err := nextup.ParseBound(s, loc, latest)
		if err != nil {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("ParseBound(%q) not in UTC: %v", s, got)
		}
		if strings.TrimSpace(s) == "" {
			if !got.IsZero() {
				t.Fatalf("ParseBound(%q) = %v, want the open bound", s, got)
			}
			return
		}
		if got.Year() < 1999 || got.Year() > 10000 {
			t.Fatalf("ParseBound(%q) = %v: year out of range", s, got)
		}
	})
}

func FuzzParseTimeOfDay(f *testing.F) {
	for _, s := range []string{"00:00", "21:00", "24:00", "24:01", "9:00", "ab:cd", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := nextup.ParseTimeOfDay(s)
		if err != nil {
			return
		}
		if v < 0 || v > 24*60 {
			t.Fatalf("ParseTimeOfDay(%q) = %d out of range", s, v)
		}
		if v.String() != s {
			t.Fatalf("ParseTimeOfDay(%q) round trips to %q", s, v.String())
		}
	})
}

func TestRulesJSON(t *testing.T) {
	t.Parallel()
	r := nextup.DefaultRules()
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"claim_window_seconds":600,"order_policy":"fcfs-priority/v1","quiet_hours":{"start":"21:00","end":"08:00"},"time_critical_through_quiet":false,"min_lead_seconds":900,"max_offers_per_person_per_day":3,"max_offers_per_slot":null,"down_fit":false,"position_visibility":"exact","reminder_offsets_seconds":[86400,3600],"requeue":{"policy":"keep","drop_after":0},"claim_window_ladder":[],"follow_up":{"after_share":0.5,"same_channel_when_no_other":false},"dedupe":"off"}`
	if string(b) != want {
		t.Fatalf("default rules JSON\n got %s\nwant %s", b, want)
	}
	// A patch keeps the fields it does not name.
	if err := r.UnmarshalJSON([]byte(`{"claim_window_seconds":900,"quiet_hours":null,"max_offers_per_slot":4}`)); err != nil {
		t.Fatal(err)
	}
	if r.ClaimWindow != 15*time.Minute || r.QuietHours != nil || r.MaxOffersPerSlot != 4 || r.MinLead != 15*time.Minute || r.MaxOffersPerPersonPerDay != 3 {
		t.Fatalf("patched rules = %+v", r)
	}
	if err := r.UnmarshalJSON([]byte(`{"max_offers_per_slot":0}`)); err != nil {
		t.Fatal(err)
	}
	if errs := r.Validate(); len(errs) != 1 || errs[0].Field != "max_offers_per_slot" {
		t.Fatalf("max_offers_per_slot 0: Validate = %v", errs)
	}
	// Reminders: a patch replaces the list; [] turns them off.
	if err := r.UnmarshalJSON([]byte(`{"max_offers_per_slot":null,"reminder_offsets_seconds":[7200]}`)); err != nil || len(r.ReminderOffsets) != 1 || r.ReminderOffsets[0] != 2*time.Hour {
		t.Fatalf("reminders patch: %+v, %v", r.ReminderOffsets, err)
	}
	if err := r.UnmarshalJSON([]byte(`{"claim_window_seconds":600}`)); err != nil || len(r.ReminderOffsets) != 1 {
		t.Fatalf("a patch without reminders dropped them: %+v, %v", r.ReminderOffsets, err)
	}
	if err := r.UnmarshalJSON([]byte(`{"reminder_offsets_seconds":[]}`)); err != nil || len(r.ReminderOffsets) != 0 || len(r.Validate()) != 0 {
		t.Fatalf("no reminders: %+v, %v, %v", r.ReminderOffsets, err, r.Validate())
	}
	// The re-queue rule: a patch of one of its fields keeps the other;
	// rules stored before it existed (no "requeue") keep the place.
	if err := r.UnmarshalJSON([]byte(`{"requeue":{"policy":"back","drop_after":2}}`)); err != nil || r.Requeue != nextup.DefaultEventRequeue() {
		t.Fatalf("requeue patch: %+v, %v", r.Requeue, err)
	}
	if err := r.UnmarshalJSON([]byte(`{"requeue":{"drop_after":3}}`)); err != nil || r.Requeue != (nextup.Requeue{Policy: nextup.RequeueBack, DropAfter: 3}) {
		t.Fatalf("requeue patch of drop_after alone: %+v, %v", r.Requeue, err)
	}
	var old nextup.Rules
	if err := old.UnmarshalJSON([]byte(`{"claim_window_seconds":600}`)); err != nil || old.Requeue != (nextup.Requeue{Policy: nextup.RequeueKeep}) {
		t.Fatalf("rules without requeue: %+v, %v", old.Requeue, err)
	}
	for _, bad := range []string{`{"policy":"later"}`, `{"policy":""}`, `{"drop_after":-1}`, `{"policy":"drop","drop_after":0}`} {
		x := r
		if err := x.UnmarshalJSON([]byte(`{"requeue":` + bad + `}`)); err != nil {
			t.Fatal(err)
		}
		if errs := x.Validate(); len(errs) != 1 || !strings.HasPrefix(errs[0].Field, "requeue.") {
			t.Errorf("requeue %s: Validate = %v, want one requeue field", bad, errs)
		}
	}
	r.Requeue = nextup.DefaultRules().Requeue
	for _, bad := range []string{`[60]`, `[3600,3600]`, `[1,2,3,4,5,6]`, `[3000000]`} {
		x := r
		if err := x.UnmarshalJSON([]byte(`{"reminder_offsets_seconds":` + bad + `}`)); err != nil {
			t.Fatal(err)
		}
		if errs := x.Validate(); len(errs) == 0 {
			t.Errorf("reminders %s pass Validate", bad)
		}
	}
	for _, bad := range []string{
		`{"reminder_offsets_seconds":[18446744134]}`,
		`{"reminder_offsets_seconds":3600}`,
		`{"quiet_hours":{"start":"25:00","end":"08:00"}}`,
		`{"claim_window_secs":600}`,                 // unknown field (a typo)
		`{"requeue":{"policy":"back","after":2}}`,   // and inside requeue
		`{"claim_window_seconds":18446744134}`,      // would overflow into a valid-looking minute
		`{"min_lead_seconds":-9223372036854775807}`, // and the other way
		`{} {}`,
		`{"claim_window_seconds":"600"}`,
	} {
		before := r
		if err := r.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("rules patch %s accepted: %+v", bad, r)
		}
		r = before
	}
}

// FuzzRulesJSON feeds arbitrary JSON patches to the rules parser: it must
// never panic, and whatever it accepts and Validate passes must survive a
// round trip unchanged.
func FuzzRulesJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"claim_window_seconds":900}`, `{"quiet_hours":null}`, `{"quiet_hours":{"start":"22:00","end":"07:30"}}`,
		`{"max_offers_per_slot":3}`, `{"max_offers_per_slot":0}`, `{"position_visibility":"band","down_fit":true}`,
		`{"claim_window_seconds":-1}`, `{"quiet_hours":{"start":"7","end":"x"}}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, patch []byte) {
		r := nextup.DefaultRules()
		if err := r.UnmarshalJSON(patch); err != nil {
			return
		}
		if len(r.Validate()) > 0 {
			return
		}
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("marshal %+v: %v", r, err)
		}
		var back nextup.Rules
		if err := back.UnmarshalJSON(b); err != nil {
			t.Fatalf("re-parse %s: %v", b, err)
		}
		b2, _ := back.MarshalJSON()
		if string(b) != string(b2) {
			t.Fatalf("round trip changed the rules:\n%s\n%s", b, b2)
		}
	})
}
