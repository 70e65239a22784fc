package web

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/waitlist"
)

// FuzzEventJSON throws arbitrary bodies at the event parser: it never
// panics, and whatever it accepts and validation passes is an event that
// makes sense (seats, times and cutoffs in order, durations in range).
func FuzzEventJSON(f *testing.F) {
	for _, s := range []string{
		`{"title":"Supper club","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":12}`,
		`{"title":"x","starts_at":"2026-12-31T19:00:00Z","ends_at":"2026-12-31T23:00:00Z","capacity":3,"waitlist_limit":null,"registration_cutoff":null,"cancellation_cutoff":"2026-12-30T19:00:00Z"}`,
		`{"title":"x","starts_at":"2026-12-31T19:00:00+01:00","ends_at":"2026-12-31T23:00:00Z","capacity":1e9,"reminder_offsets_seconds":[1,2,3]}`,
		`{"title":"x","capacity":-1,"price_cents":-5,"currency":"€€€","reminder_morning_of":"25:00","promotion_cutoff_seconds":-9223372036854775808}`,
		`{"claim_window_seconds":9223372036854775807,"max_guests_per_rsvp":99999999999}`,
		`{"title":"x","title":"y","colour":"red"}`, `{"waitlist_limit":"ten"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var raw map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &raw) != nil {
			return // the decoder refuses it before the parser sees it
		}
		p := waitlist.NewEventParams()
		if err := applyEventJSON(&p, raw); err != nil {
			return
		}
		if waitlist.ValidateEvent(&p) != nil {
			return
		}
		ev := p.Settings
		switch {
		case p.Capacity < 1 || p.Capacity > 100000 || p.Title == "":
			t.Fatalf("accepted capacity %d title %q from %s", p.Capacity, p.Title, body)
		case !p.EndsAt.After(p.StartsAt):
			t.Fatalf("accepted an event ending before it starts: %s", body)
		case ev.RegistrationCutoff != nil && ev.RegistrationCutoff.After(p.StartsAt),
			ev.CancellationCutoff != nil && ev.CancellationCutoff.After(p.StartsAt):
			t.Fatalf("accepted a cutoff after the start: %s", body)
		case ev.ClaimWindow < time.Minute || ev.PromotionCutoff < 0 || ev.MaxGuests < 0 || ev.PriceCents < 0:
			t.Fatalf("accepted settings %+v from %s", ev, body)
		case ev.WaitlistLimit != nil && *ev.WaitlistLimit < 0:
			t.Fatalf("accepted a negative waitlist limit from %s", body)
		}
	})
}
