package web_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

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
