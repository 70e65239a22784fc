package engine_test

import (
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/engine"
)

func TestChooseChannel(t *testing.T) {
	t.Parallel()
	const (
		sms   = nextup.ChannelSMS
		email = nextup.ChannelEmail
	)
	tests := []struct {
		name       string
		email      string
		phone      string
		pref       nextup.Channel
		suppressed []nextup.Channel
		want       nextup.Channel
		ok         bool
	}{
		{"phone and email, no preference: text", "a@x.test", "+447700900001", "", nil, sms, true},
		{"phone and email, chose email", "a@x.test", "+447700900001", email, nil, email, true},
		{"phone and email, chose sms", "a@x.test", "+447700900001", sms, nil, sms, true},
		{"email only", "a@x.test", "", "", nil, email, true},
		{"chose sms but has no phone: email", "a@x.test", "", sms, nil, email, true},
		{"phone only", "", "+447700900001", "", nil, sms, true},
		{"chose email but has no email: text", "", "+447700900001", email, nil, sms, true},
		{"sms stopped: email", "a@x.test", "+447700900001", "", []nextup.Channel{sms}, email, true},
		{"email bounced, chose email: text", "a@x.test", "+447700900001", email, []nextup.Channel{email}, sms, true},
		{"both suppressed", "a@x.test", "+447700900001", "", []nextup.Channel{sms, email}, "", false},
		{"phone only, stopped", "", "+447700900001", "", []nextup.Channel{sms}, "", false},
		{"no contact at all", "", "", "", nil, "", false},
		{"blank phone is no phone", "a@x.test", "  ", "", nil, email, true},
		{"capture preference is no preference", "a@x.test", "+447700900001", nextup.ChannelCapture, nil, sms, true},
		{"unrelated suppression ignored", "a@x.test", "", "", []nextup.Channel{nextup.ChannelWebhook}, email, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := nextup.Entry{Email: tt.email, Phone: tt.phone, Channel: tt.pref}
			got, ok := engine.ChooseChannel(e, tt.suppressed)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ChooseChannel = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
