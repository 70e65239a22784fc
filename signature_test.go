package nextup_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
)

// TestSignature pins the header format receivers implement: the value
// was computed with `printf '1930899600.{"a":1}' | openssl dgst -sha256
// -hmac k3y`, not with this code.
func TestSignature(t *testing.T) {
	t.Parallel()
	got := nextup.Signature([]byte("k3y"), time.Unix(1930899600, 0), []byte(`{"a":1}`))
	want := "t=1930899600,v1=87d1a6e89fb5e8fa9058b42c98269ff5a1471daf06632e0e18a118d30b83f97d"
	if got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
}

// TestVerifySignature checks what a receiver accepts: the pinned header
// at its own time and within five minutes, and nothing else.
func TestVerifySignature(t *testing.T) {
	t.Parallel()
	key, body := []byte("k3y"), []byte(`{"a":1}`)
	at := time.Unix(1930899600, 0)
	good := "t=1930899600,v1=87d1a6e89fb5e8fa9058b42c98269ff5a1471daf06632e0e18a118d30b83f97d"
	cases := []struct {
		name   string
		key    []byte
		header string
		body   string
		now    time.Time
		ok     bool
	}{
		{"pinned", key, good, string(body), at, true},
		{"four minutes late", key, good, string(body), at.Add(4 * time.Minute), true},
		{"four minutes early", key, good, string(body), at.Add(-4 * time.Minute), true},
		{"second of two v1", key, "t=1930899600,v1=" + strings.Repeat("00", 32) + "," + good[len("t=1930899600,"):], string(body), at, true},
		{"six minutes late (a replay)", key, good, string(body), at.Add(6 * time.Minute), false},
		{"six minutes early", key, good, string(body), at.Add(-6 * time.Minute), false},
		{"body changed", key, good, `{"a":2}`, at, false},
		{"other key", []byte("k3z"), good, string(body), at, false},
		{"timestamp changed", key, "t=1930899601" + good[len("t=1930899600"):], string(body), at, false},
		{"missing", key, "", string(body), at, false},
		{"no v1", key, "t=1930899600", string(body), at, false},
		{"no t", key, good[len("t=1930899600,"):], string(body), at, false},
		{"short hex", key, "t=1930899600,v1=87d1", string(body), at, false},
		{"not hex", key, "t=1930899600,v1=" + strings.Repeat("zz", 32), string(body), at, false},
		{"two t", key, "t=1,t=1930899600," + good[len("t=1930899600,"):], string(body), at, false},
	}
	for _, c := range cases {
		err := nextup.VerifySignature(c.key, c.header, []byte(c.body), c.now)
		if (err == nil) != c.ok {
			t.Errorf("%s: VerifySignature = %v, want ok %v", c.name, err, c.ok)
		}
	}
	// What Signature makes, VerifySignature takes.
	now := time.Unix(2000000000, 0)
	if err := nextup.VerifySignature(key, nextup.Signature(key, now, body), body, now); err != nil {
		t.Fatalf("round trip: %v", err)
	}
}

// FuzzVerifySignature: any header, any body, never a panic, and never
// accepted without the key's HMAC.
func FuzzVerifySignature(f *testing.F) {
	f.Add("t=1930899600,v1=87d1a6e89fb5e8fa9058b42c98269ff5a1471daf06632e0e18a118d30b83f97d", `{"a":1}`)
	f.Add("t=,v1=", "")
	f.Add(",,,=", "x")
	at := time.Unix(1930899600, 0)
	f.Fuzz(func(t *testing.T, header, body string) {
		err := nextup.VerifySignature([]byte("k3y"), header, []byte(body), at)
		if err == nil && !strings.Contains(strings.ToLower(header), nextup.Signature([]byte("k3y"), at, []byte(body))[len("t=1930899600,"):]) {
			t.Fatalf("accepted %q over %q without its HMAC", header, body)
		}
	})
}
