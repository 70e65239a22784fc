package nextup_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

func TestValidEmail(t *testing.T) {
	local64 := strings.Repeat("a", 64)
	long := local64 + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 58) + ".io"
	if len(long) != 254 {
		t.Fatalf("test address is %d long, want 254", len(long))
	}
	for s, want := range map[string]bool{
		"ann@example.com":                  true,
		local64 + "@example.com":           true,
		long:                               true,
		local64 + "a@example.com":          false, // 65-octet local part
		long[:len(long)-2] + "x.io":        false, // 255 octets
		"":                                 false,
		"ann":                              false,
		"Ann <ann@example.com>":            false,
		"<ann@example.com>":                false,
		"ann@example.com\n":                false,
		"ann@exa\x00mple.com":              false,
		"\"a\\\x01b\"@example.com":         false,
		"ann@example.com, bob@example.com": false,
	} {
		if got := nextup.ValidEmail(s); got != want {
			t.Errorf("ValidEmail(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		s         string
		multiline bool
		ok        bool
	}{
		{"Ann O'Neill", false, true},
		{"Zoë Ñúñez 山田", false, true},
		{strings.Repeat("é", nextup.MaxNameLen), false, true},
		{strings.Repeat("é", nextup.MaxNameLen+1), false, false},
		{"Ann\nSmith", false, false},
		{"Ann\nSmith", true, true},
		{"Ann\tSmith", true, true},
		{"Ann\x00", true, false},
		{"Ann\x1b[31m", true, false},
		{"Ann\u202Egnp.exe", false, false},
		{"Ann\u2066x\u2069", true, false},
		{"Ann\u2028Smith", true, false},
		{"\x85", true, false},
		{"bad \xff utf-8", false, false},
	} {
		check := nextup.CheckName
		if c.multiline {
			check = nextup.CheckText
		}
		if fe := check("name", c.s, 0); (fe == nil) != c.ok {
			t.Errorf("check(%q, multiline %v) = %v, want ok %v", c.s, c.multiline, fe, c.ok)
		}
	}
}

func TestCheckSlotTimes(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	h := time.Hour
	for _, c := range []struct {
		name        string
		start, end  time.Time
		wantsFields []string
	}{
		{"an hour tomorrow", now.Add(24 * h), now.Add(25 * h), nil},
		{"starting now", now, now.Add(h), nil},
		{"a week exactly", now.Add(h), now.Add(h + nextup.MaxSlotLength), nil},
		{"started a minute ago", now.Add(-time.Minute), now.Add(h), []string{"starts_at"}},
		{"ends before it starts", now.Add(2 * h), now.Add(h), []string{"ends_at"}},
		{"ends as it starts", now.Add(h), now.Add(h), []string{"ends_at"}},
		{"longer than a week", now.Add(h), now.Add(h + nextup.MaxSlotLength + time.Second), []string{"ends_at"}},
		{"in 1999", time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 1, 0, 0, 0, time.UTC), []string{"starts_at"}},
		{"six years ahead", now.AddDate(6, 0, 0), now.AddDate(6, 0, 0).Add(h), []string{"starts_at"}},
		{"no start", time.Time{}, now, []string{"starts_at"}},
		{"neither", time.Time{}, time.Time{}, []string{"starts_at", "ends_at"}},
	} {
		var got []string
		for _, f := range nextup.CheckSlotTimes(c.start, c.end, now) {
			got = append(got, f.Field)
		}
		if strings.Join(got, ",") != strings.Join(c.wantsFields, ",") {
			t.Errorf("%s: fields %v, want %v", c.name, got, c.wantsFields)
		}
	}
}
