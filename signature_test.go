package nextup_test

import (
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
