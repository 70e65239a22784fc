package cli

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup/notify/smtp/smtptest"
	"github.com/nextup-dev/nextup/pay/stripepay"
	"github.com/nextup-dev/nextup/pay/stripepay/stripetest"
)

// TestServeSoldOutPaidEvent runs a sold-out paid event end to end through
// a real `nextup serve` process: Stripe through the official SDK against
// stripe-mock, mail through a real SMTP server. The first registrant gets
// a hold and pays (a signed webhook books them, and the confirmation mail
// carries the invite and the cancel link); the event is then full and the
// next registrant waits; the first cancels from their link and the one
// waiting is offered the seat, with a checkout of their own.
func TestServeSoldOutPaidEvent(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t)
	stripeURL := stripetest.Start(t)
	const secret = "whsec_serve_test"
	in := startInstance(t, "paid", filepath.Join(t.TempDir(), "n.db"), mail.Addr, "--notify", "capture,smtp",
		"--stripe-secret-key", "sk_test_serve", "--stripe-webhook-secret", secret, "--stripe-api-base", stripeURL)
	c := &cluster{t: t, all: []*instance{in}, client: apiClient(t)}
	start := time.Date(2031, 3, 10, 10, 0, 0, 0, time.UTC)
	c.setClock(start)
	biz := c.must(0, "POST", "/v1/businesses", "adm", `{"name":"Supper Club","timezone":"Europe/London"}`, 201)
	bid, key := biz["id"].(string), biz["api_key"].(string)
	ev := c.must(0, "POST", "/v1/businesses/"+bid+"/events", key, `{"title":"Winter supper","starts_at":"2031-03-20T19:00:00Z",
		"ends_at":"2031-03-20T23:00:00Z","capacity":2,"max_guests_per_rsvp":1,"price_cents":4000}`, 201)
	id := ev["id"].(string)

	ann := c.must(0, "POST", "/v1/events/"+id+"/registrations", key, `{"name":"Ann","email":"ann@example.com","guests":1}`, 201)
	if ann["state"] != "offered" || !strings.HasPrefix(fmt.Sprint(ann["checkout_url"]), "https://checkout.stripe.com/") {
		t.Fatalf("paid registration: %v", ann)
	}
	reg := c.must(0, "GET", "/v1/events/"+id+"/registrations/"+ann["id"].(string), key, "", 200)
	pay, _ := reg["payment"].(map[string]any)
	if pay == nil || pay["state"] != "open" || pay["amount_cents"] != 8000.0 || pay["currency"] != "eur" {
		t.Fatalf("Ann's payment: %v", reg)
	}
	// Stripe reports the payment; the webhook books her.
	payload, sig := stripetest.SignedCompleted(t, secret, stripepay.Completed{EventID: "evt_1", SessionID: pay["session_id"].(string),
		OfferID: ann["offer_id"].(string), PaymentIntentID: "pi_ann", AmountTotal: 8000, Currency: "eur", PaymentStatus: "paid"})
	req, _ := http.NewRequest("POST", in.base+"/v1/payments/stripe", strings.NewReader(string(payload)))
	req.Header.Set("Stripe-Signature", sig)
	res, err := c.client.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("webhook: %v %v", res, err)
	}
	res.Body.Close()
	reg = c.must(0, "GET", "/v1/events/"+id+"/registrations/"+ann["id"].(string), key, "", 200)
	if reg["state"] != "confirmed" || reg["payment"].(map[string]any)["state"] != "paid" {
		t.Fatalf("after paying: %v", reg)
	}
	c.setClock(start.Add(time.Second))      // the relay runs when the clock is set
	msgs := mail.Wait(t, 2, 20*time.Second) // the hold's message with the pay link, then the confirmation
	if !strings.HasPrefix(msgs[0].Subject, "Pay to confirm: Winter supper") || !strings.Contains(msgs[0].Text, "Thank you for registering") ||
		!strings.Contains(msgs[0].Text, "Pay €80.00 to confirm") {
		t.Fatalf("hold message: %s", msgs[0].Text)
	}
	conf := msgs[1]
	if !strings.HasPrefix(conf.Subject, "Booked: Winter supper") || len(conf.Attachments) != 1 || conf.Attachments[0].Filename != "invite.ics" ||
		!strings.Contains(conf.Text, in.base+"/r/"+bid+"/") {
		t.Fatalf("confirmation %q with %d attachments:\n%s", conf.Subject, len(conf.Attachments), conf.Text)
	}
	// Sold out: Ben waits, and has nothing to pay.
	ben := c.must(0, "POST", "/v1/events/"+id+"/registrations", key, `{"name":"Ben","email":"ben@example.com"}`, 201)
	if ben["state"] != "waitlisted" || ben["position"] != 1.0 || ben["checkout_url"] != nil {
		t.Fatalf("Ben: %v", ben)
	}
	// Ann cancels from her link; Ben is offered the seats, with a checkout.
	i := strings.Index(conf.Text, in.base+"/r/")
	link := strings.Fields(conf.Text[i:])[0]
	res, err = c.client.Post(link, "application/x-www-form-urlencoded", nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("cancel link: %v %v", res, err)
	}
	res.Body.Close()
	reg = c.must(0, "GET", "/v1/events/"+id+"/registrations/"+ben["id"].(string), key, "", 200)
	if reg["state"] != "offered" || reg["payment"] == nil || reg["payment"].(map[string]any)["state"] != "open" {
		t.Fatalf("Ben after Ann cancelled: %v", reg)
	}
	stats := c.must(0, "GET", "/v1/events/"+id+"/stats", key, "", 200)
	if stats["held"] != 1.0 || stats["confirmed"] != 0.0 || stats["cancelled"] != 1.0 {
		t.Fatalf("stats: %v", stats)
	}
}
