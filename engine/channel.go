package engine

import (
	"slices"
	"strings"

	"github.com/nextup-dev/nextup"
)

// ChooseChannel picks how an offer reaches the person behind e, skipping
// the channels in suppressed (SMS STOP, an email bounce). A text goes out
// when the entry has a phone number, because a slot opening today needs a
// reply in minutes, unless the person chose email; the other channel is the
// fallback when the preferred one is missing or suppressed. It reports false
// when no deliverable channel is left, which is guardrail 4's no_channel.
//
// Only SMS and email carry offers: webhook and capture are delivery
// back-ends chosen by the operator, not something a person prefers, so a
// preference for them is read as no preference.
func ChooseChannel(e nextup.Entry, suppressed []nextup.Channel) (nextup.Channel, bool) {
	usable := func(c nextup.Channel) bool {
		if slices.Contains(suppressed, c) {
			return false
		}
		switch c {
		case nextup.ChannelSMS:
			return strings.TrimSpace(e.Phone) != ""
		case nextup.ChannelEmail:
			return strings.TrimSpace(e.Email) != ""
		}
		return false
	}
	first, second := nextup.ChannelSMS, nextup.ChannelEmail
	if e.Channel == nextup.ChannelEmail || strings.TrimSpace(e.Phone) == "" {
		first, second = second, first
	}
	for _, c := range []nextup.Channel{first, second} {
		if usable(c) {
			return c, true
		}
	}
	return "", false
}
