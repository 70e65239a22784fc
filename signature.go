package nextup

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
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

// SignatureTolerance is how far a signed timestamp may be from the
// receiver's clock: further is a replay (or a clock badly wrong).
const SignatureTolerance = 5 * time.Minute

// Signature check failures, each a reason VerifySignature gives.
var (
	errSigMissing = errors.New("no Nextup-Signature header")
	errSigFormat  = errors.New("the Nextup-Signature header is not t=<unix seconds>,v1=<hex>")
	errSigStale   = errors.New("the signature's timestamp is more than 5 minutes from now")
	errSigWrong   = errors.New("the signature does not match the body under this business's secret")
)

// VerifySignature checks a Nextup-Signature header (see Signature) over
// body under key at now: the timestamp within SignatureTolerance of now
// and one of its v1 values (a sender rolling its secret may send two)
// the HMAC of "<t>.<body>", compared in constant time. The error says
// which check failed, in words a sender's engineer can act on.
func VerifySignature(key []byte, header string, body []byte, now time.Time) error {
	if strings.TrimSpace(header) == "" {
		return errSigMissing
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return errSigFormat
		}
		switch k {
		case "t":
			if ts != "" {
				return errSigFormat
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return errSigFormat
			}
			sigs = append(sigs, sig)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 || len(sigs) > 4 {
		return errSigFormat
	}
	if d := now.Sub(time.Unix(sec, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return errSigStale
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return errSigWrong
}
