package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/twilio"
	"github.com/nextup-dev/nextup/web"
)

const smsToken = "0123456789abcdef0123456789abcdef"

// twilioSignature signs a webhook the way Twilio documents it — HMAC-SHA1
// under the auth token of the URL followed by each parameter's name and
// value in name order, base64 — written here independently of the SDK.
func twilioSignature(token, u string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(u)
	for _, k := range keys {
		b.WriteString(k + form.Get(k))
	}
	mac := hmac.New(sha1.New, []byte(token))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// text posts an inbound SMS to the business's webhook with signature sig
// ("sign" signs it right) and returns the status and body.
func (a *api) text(from, body, sig string) (int, string) {
	a.t.Helper()
	path := "/v1/businesses/" + a.bid + "/sms/inbound"
	form := url.Values{"From": {from}, "To": {"+15005550006"}, "Body": {body}, "MessageSid": {"SM1"}, "AccountSid": {"AC1"}}
	if sig == "sign" {
		sig = twilioSignature(smsToken, "https://nextup.test"+path, form)
	}
	req, _ := http.NewRequest("POST", a.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if sig != "" {
		req.Header.Set("X-Twilio-Signature", sig)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestInboundSMS(t *testing.T) {
	t.Parallel()
	a := setup(t, func(s *web.Server) { s.SMSSignature = twilio.SignatureValidator(smsToken) })
	sid := a.slot(chair)["id"].(string)
	var tom map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key,
		`{"name":"Tom","phone":"+44 7700 900123","email":"tom@example.com","channel":"sms","service":"haircut"}`), 201, &tom)

	// Wrong or missing signatures change nothing.
	for _, sig := range []string{"", "bm90IGEgc2lnbmF0dXJl"} {
		if status, _ := a.text("+447700900123", "STOP", sig); status != http.StatusUnauthorized {
			t.Fatalf("signature %q: %d", sig, status)
		}
	}
	// HELP answers with the business and a contact.
	if status, body := a.text("+447700900123", "help", "sign"); status != 200 || !strings.Contains(body, "<Message>Salon waitlist:") {
		t.Fatalf("HELP: %d %s", status, body)
	}
	// STOP opts the number out at once and confirms once.
	if _, body := a.text("+447700900123", "Stop", "sign"); !strings.Contains(body, "no more texts") {
		t.Fatalf("STOP: %s", body)
	}
	if _, body := a.text("+447700900123", "STOP", "sign"); strings.Contains(body, "<Message>") {
		t.Fatalf("a second STOP is confirmed again: %s", body)
	}
	// The next offer does not go by text: Tom has an email, so it goes there.
	oid, _ := a.offerFor(sid)
	var o map[string]any
	a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &o)
	if o["channel"] != string(nextup.ChannelEmail) {
		t.Fatalf("offer to an opted-out number went by %v", o["channel"])
	}
	// START opts back in.
	if _, body := a.text("+447700900123", "START", "sign"); !strings.Contains(body, "texts are back on") {
		t.Fatalf("START: %s", body)
	}
	// YES claims his one live offer, through the same conditional write.
	if status, body := a.text("+44 7700 900123", "yes!", "sign"); status != 200 || strings.Contains(body, "<Message>") {
		t.Fatalf("YES: %d %s", status, body)
	}
	a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &o)
	if o["state"] != string(nextup.OfferClaimed) {
		t.Fatalf("after YES the offer is %v", o["state"])
	}
	// A YES with nothing to claim is answered kindly; other words are left alone.
	if _, body := a.text("+447700900123", "1", "sign"); !strings.Contains(body, "no offer waiting") {
		t.Fatalf("YES without an offer: %s", body)
	}
	if status, body := a.text("+447700900999", "Running 5 minutes late, sorry!", "sign"); status != 200 || strings.Contains(body, "<Message>") {
		t.Fatalf("a chatty text: %d %s", status, body)
	}
}

func TestInboundSMSOff(t *testing.T) {
	t.Parallel()
	a := setup(t)
	if status, _ := a.text("+447700900123", "STOP", "sign"); status != http.StatusNotFound {
		t.Fatalf("inbound SMS without Twilio configured: %d", status)
	}
}

// TestSMSDeliveryReport: Twilio's report that a text could not be
// delivered makes the message dead, with the carrier's reason, for staff to
// see and retry; a delivered report changes nothing; an unsigned report is
// refused.
func TestSMSDeliveryReport(t *testing.T) {
	t.Parallel()
	a := setup(t, func(s *web.Server) { s.SMSSignature = twilio.SignatureValidator(smsToken) })
	sid := a.slot(chair)["id"].(string)
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/waitlist:join", a.key, `{"name":"Tom","phone":"+447700900123","service":"haircut"}`), 201, nil)
	oid, _ := a.offerFor(sid)
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	a.must(a.do("GET", "/v1/businesses/"+a.bid+"/messages", a.key, ""), 200, &msgs)
	mid := msgs.Messages[0]["id"].(string)
	// As the relay would have: the text went out.
	if err := a.store.InTx(context.Background(), func(tx nextup.Tx) error {
		ms, err := tx.MessageClaimDue(context.Background(), a.clock.Now(), time.Minute, 10)
		if err != nil || len(ms) != 1 {
			return fmt.Errorf("claim: %v %v", ms, err)
		}
		return tx.MessageFinish(context.Background(), mid, *ms[0].ClaimedUntil, nextup.MessageResult{State: nextup.MessageSent, At: a.clock.Now(), ProviderID: "SM1"})
	}); err != nil {
		t.Fatal(err)
	}
	report := func(status, code, sig string) int {
		t.Helper()
		path := "/v1/sms/status?message=" + mid
		form := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {status}, "ErrorCode": {code}, "AccountSid": {"AC1"}}
		if sig == "sign" {
			sig = twilioSignature(smsToken, "https://nextup.test"+path, form)
		}
		req, _ := http.NewRequest("POST", a.srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", sig)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	state := func() (string, string) {
		var m map[string]any
		a.must(a.do("GET", "/v1/businesses/"+a.bid+"/messages", a.key, ""), 200, &msgs)
		m = msgs.Messages[0]
		return m["state"].(string), fmt.Sprint(m["last_error"])
	}
	if status := report("undelivered", "30003", "forged"); status != http.StatusUnauthorized {
		t.Fatalf("forged report: %d", status)
	}
	if status := report("delivered", "", "sign"); status != http.StatusNoContent {
		t.Fatalf("delivered report: %d", status)
	}
	if st, _ := state(); st != "sent" {
		t.Fatalf("after a delivered report: %s", st)
	}
	if status := report("undelivered", "30003", "sign"); status != http.StatusNoContent {
		t.Fatalf("undelivered report: %d", status)
	}
	if st, why := state(); st != "dead" || !strings.Contains(why, "30003") {
		t.Fatalf("after an undelivered report: %s %q", st, why)
	}
	// A phone switched off (30003) may clear, and Tom has no email: his
	// offer runs its course.
	var o map[string]any
	a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &o)
	if o["state"] != "offered" {
		t.Fatalf("the offer changed after a passing failure: %v", o["state"])
	}
	// The carrier says again that the number does not exist (30005): it is
	// opted out, and with no other channel Tom is skipped and the slot
	// rolls on (no_channel); his place is kept.
	if status := report("failed", "30005", "sign"); status != http.StatusNoContent {
		t.Fatalf("second report: %d", status)
	}
	a.must(a.do("GET", "/v1/offers/"+oid, a.key, ""), 200, &o)
	if o["state"] != "cancelled" {
		t.Fatalf("after an unknown-number report the offer is %v, want cancelled (no_channel)", o["state"])
	}
	if st, _ := state(); st != "dead" {
		t.Fatalf("the text is %s", st)
	}
}
