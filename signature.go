package nextup

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Signature is the Nextup-Signature header value of body sent at t under
// key:
//
//	t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<body>")>
//
// Webhook events (notify/webhook) and bookings sent to a business's own
// booking system (booksys/httpbook) are signed alike, so a receiver checks
// both with one routine: it recomputes the HMAC and refuses a timestamp
// far from its clock, against replays. It lives here, with only the
// standard library, so that neither adapter depends on the other.
func Signature(key []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}
