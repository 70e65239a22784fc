package web_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/pay/stripepay"
	"github.com/nextup-dev/nextup/pay/stripepay/stripetest"
	"github.com/nextup-dev/nextup/web"
)

const webhookSecret = "whsec_nextup_test"

// setupPaid is the events bundle with Stripe: the official SDK against
// stripe-mock, and webhooks signed locally with the endpoint's secret.
func setupPaid(t *testing.T) *evAPI {
	t.Helper()
	url := stripetest.Start(t)
	sc, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_nextup", WebhookSecret: webhookSecret, BackendURL: url})
	if err != nil {
		t.Fatal(err)
	}
	pay := stripepay.Checkouts{Client: sc}
	return setupEvents(t, func(s *web.Server) { s.Svc.Payments, s.PaymentWebhook = pay, pay.Webhook })
}

// payments lists an offer's payments, newest first.
func (a *evAPI) payments(offerID string) []nextup.Payment {
	a.t.Helper()
	var out []nextup.Payment
	if err := a.store.Read(context.Background(), func(tx nextup.Tx) error {
		var err error
		out, err = tx.PaymentListByOffer(context.Background(), offerID)
		return err
	}); err != nil {
		a.t.Fatal(err)
	}
	return out
}

// stripeEvent posts a signed checkout.session.completed for a payment.
func (a *evAPI) stripeEvent(p nextup.Payment, intent, secret string) resp {
	a.t.Helper()
	payload, sig := stripetest.SignedCompleted(a.t, secret, stripepay.Completed{EventID: "evt_" + p.ID, SessionID: p.SessionID,
		OfferID: p.OfferID, BusinessID: p.BusinessID, PaymentIntentID: intent, AmountTotal: p.AmountCents, Currency: p.Currency, PaymentStatus: "paid"})
	req, _ := http.NewRequest("POST", a.srv.URL+"/v1/payments/stripe", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return resp{res.StatusCode, res.Header, b.Bytes()}
}

// A paid event end to end: nobody is charged while waiting; a hold gets a
// Checkout Session expiring with it; paid in time, the claim completes
// through the webhook (once, however often Stripe sends it); a bad
// signature changes nothing; never paid, the hold lapses and rolls on;
// paid late, the money goes back and the person is told.
func TestPaidEvent(t *testing.T) {
	t.Parallel()
	a := setupPaid(t)
	id := a.event(`,"capacity":1,"price_cents":2500,"currency":"EUR"`)["id"].(string)

	// Ann finds a free seat: a hold to pay for, with its checkout.
	ann := a.register(id, "Ann", 0)
	wantState(t, ann, "offered", 0)
	if !strings.HasPrefix(ann["checkout_url"].(string), "https://checkout.stripe.com/") {
		t.Fatalf("registration of a paid event: %v", ann)
	}
	annOffer := ann["offer_id"].(string)
	ps := a.payments(annOffer)
	deadline := a.clock.Now().Add(6 * time.Hour)
	if len(ps) != 1 || ps[0].State != nextup.PaymentOpen || ps[0].AmountCents != 2500 || ps[0].Currency != "eur" ||
		!ps[0].ExpiresAt.Equal(deadline) || !strings.HasPrefix(ps[0].SessionID, "cs_") {
		t.Fatalf("Ann's checkout: %+v, want one open session of 2500 eur expiring with the hold at %v", ps, deadline)
	}
	// The claim link does not book a paid hold; its page sends to pay.
	token := a.token(annOffer)
	a.problem(a.do("POST", "/v1/claims/"+token+":accept", "", ""), 409, "payment_required")
	status, _, page := a.page("GET", "/c/"+token)
	if status != 200 || !strings.Contains(page, "Pay €25.00 and confirm") || strings.Contains(page, "Claim this slot") {
		t.Fatalf("claim page of a paid hold: %d %s", status, page)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Post(a.srv.URL+"/c/"+token+"/pay", "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != ps[0].URL {
		t.Fatalf("pay button: %d to %q, want 303 to %q", res.StatusCode, res.Header.Get("Location"), ps[0].URL)
	}
	if again := a.payments(annOffer); len(again) != 1 {
		t.Fatalf("the pay button made another session: %+v", again)
	}
	// The status page is a second door: Pay there too, to the same checkout.
	statusPath := strings.TrimPrefix(ann["status_url"].(string), "https://nextup.test")
	status, _, page = a.page("GET", statusPath)
	if status != 200 || !strings.Contains(page, "Pay €25.00 and confirm") || strings.Contains(page, "Claim this place") {
		t.Fatalf("status page of a paid hold: %d %s", status, page)
	}
	if res, err = noRedirect.Post(a.srv.URL+statusPath+"/pay", "application/x-www-form-urlencoded", nil); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != ps[0].URL {
		t.Fatalf("the status page's pay button: %d to %q, want 303 to %q", res.StatusCode, res.Header.Get("Location"), ps[0].URL)
	}
	if again := a.payments(annOffer); len(again) != 1 {
		t.Fatalf("the status page's pay button made another session: %+v", again)
	}

	// Ben and Cy wait: nothing to pay while waiting.
	ben, cy := a.register(id, "Ben", 0), a.register(id, "Cy", 0)
	wantState(t, ben, "waitlisted", 1)
	if ben["checkout_url"] != nil || cy["checkout_url"] != nil {
		t.Fatalf("a checkout for someone waiting: %v %v", ben, cy)
	}

	// A bad signature is refused and changes nothing.
	r := a.stripeEvent(ps[0], "pi_ann", "whsec_someone_else")
	a.problem(r, 400, "bad_signature")
	wantState(t, a.registration(id, ann["id"].(string)), "offered", 0)

	// Paid in time: booked through the same conditional write.
	var out map[string]any
	a.must(a.stripeEvent(ps[0], "pi_ann", webhookSecret), 200, &out)
	annNow := a.registration(id, ann["id"].(string))
	wantState(t, annNow, "confirmed", 0)
	if out["booking_id"] != annNow["booking_id"] || out["state"] != "paid" || out["refunded"] != false {
		t.Fatalf("webhook answer %v for %v", out, annNow)
	}
	if p := a.payments(annOffer)[0]; p.State != nextup.PaymentPaid || p.PaymentIntent != "pi_ann" {
		t.Fatalf("Ann's payment: %+v", p)
	}
	// Stripe sends it again: the same booking, nothing new.
	a.must(a.stripeEvent(ps[0], "pi_ann", webhookSecret), 200, &out)
	if out["booking_id"] != annNow["booking_id"] {
		t.Fatalf("repeat: %v", out)
	}
	if confs := a.outbox(nextup.MessageConfirmation); len(confs) != 1 || confs[0].Calendar == "" {
		t.Fatalf("confirmations after a repeated event: %d", len(confs))
	}

	// A second session of Ann's hold paid too (an old tab): the seats are
	// hers once, so that money goes back.
	out = nil
	a.must(a.stripeEvent(nextup.Payment{SessionID: "cs_second", OfferID: annOffer, BusinessID: a.bid, AmountCents: 2500, Currency: "eur"}, "pi_ann_2", webhookSecret), 200, &out)
	if out["refunded"] != true || out["booking_id"] != nil {
		t.Fatalf("second payment of a claimed hold: %v", out)
	}
	if ps := a.payments(annOffer); !slices.ContainsFunc(ps, func(p nextup.Payment) bool {
		return p.SessionID == "cs_second" && p.State == nextup.PaymentRefunded && p.PaymentIntent == "pi_ann_2"
	}) {
		t.Fatalf("Ann's payments after a second one: %+v", ps)
	}
	wantState(t, a.registration(id, ann["id"].(string)), "confirmed", 0)

	// Ann cancels: Ben is promoted, and his checkout is made for his hold.
	a.cancel(id, ann["id"].(string))
	benReg := a.registration(id, ben["id"].(string))
	wantState(t, benReg, "offered", 0)
	benOffer := benReg["offer_id"].(string)
	benPay := a.payments(benOffer)
	if len(benPay) != 1 || benPay[0].State != nextup.PaymentOpen || !benPay[0].ExpiresAt.Equal(a.clock.Now().Add(6*time.Hour)) {
		t.Fatalf("Ben's checkout on promotion: %+v", benPay)
	}
	// A promoted registrant's message says a place opened up, with the price.
	if offers := slices.DeleteFunc(a.outbox(nextup.MessageOffer), func(m nextup.Message) bool { return m.OfferID != benOffer }); len(offers) != 1 ||
		!strings.Contains(offers[0].Subject, "opened up") || !strings.Contains(offers[0].Body, "Pay €25.00 to confirm") {
		t.Fatalf("Ben's offer message: %+v", offers)
	}
	// Never paid: the hold lapses and rolls on to Cy.
	a.advance(6*time.Hour + time.Second)
	wantState(t, a.registration(id, ben["id"].(string)), "waitlisted", 1)
	wantState(t, a.registration(id, cy["id"].(string)), "offered", 0)
	if p := a.payments(benOffer)[0]; p.State != nextup.PaymentExpired {
		t.Fatalf("Ben's unpaid checkout: %+v", p)
	}
	// Ben pays after all, too late: refunded in full, and told.
	out = nil
	a.must(a.stripeEvent(benPay[0], "pi_ben", webhookSecret), 200, &out)
	if out["refunded"] != true || out["state"] != "refunded" || out["booking_id"] != nil {
		t.Fatalf("late payment: %v", out)
	}
	if p := a.payments(benOffer)[0]; p.State != nextup.PaymentRefunded || p.PaymentIntent != "pi_ben" || !strings.HasPrefix(p.RefundID, "re_") {
		t.Fatalf("Ben's refunded payment: %+v", p)
	}
	refunds := slices.DeleteFunc(a.outbox("refunded"), func(m nextup.Message) bool { return m.EntryID != ben["id"] })
	if len(refunds) != 1 || !strings.Contains(refunds[0].Body, "€25.00") || !strings.Contains(refunds[0].Body, "refunded it in full") {
		t.Fatalf("refund notice: %+v", refunds)
	}
	wantState(t, a.registration(id, ben["id"].(string)), "waitlisted", 1)
	wantState(t, a.registration(id, cy["id"].(string)), "offered", 0)
	if ev := a.eventGet(id); ev["booked_seats"] != 0.0 || ev["held_seats"] != 1.0 {
		t.Fatalf("event after the late payment: %v", ev)
	}
	// The refund is on the event's record.
	var audit map[string][]map[string]any
	a.must(a.do("GET", "/v1/slots/"+id+"/audit", a.key, ""), 200, &audit)
	found := false
	for _, e := range audit["events"] {
		found = found || (e["to"] == "refunded" && e["subject_id"] == benOffer)
	}
	if !found {
		t.Fatalf("no refund in the audit")
	}
	// A session of Cy's hold whose row was never stored (the process
	// stopped right after Stripe answered): the payment is adopted and
	// books her.
	cyOffer := a.registration(id, cy["id"].(string))["offer_id"].(string)
	out = nil
	a.must(a.stripeEvent(nextup.Payment{SessionID: "cs_lost", OfferID: cyOffer, BusinessID: a.bid, AmountCents: 2500, Currency: "eur"}, "pi_cy", webhookSecret), 200, &out)
	wantState(t, a.registration(id, cy["id"].(string)), "confirmed", 0)
	if ps := a.payments(cyOffer); !slices.ContainsFunc(ps, func(p nextup.Payment) bool {
		return p.SessionID == "cs_lost" && p.State == nextup.PaymentPaid && p.PaymentIntent == "pi_cy"
	}) {
		t.Fatalf("Cy's payments: %+v", ps)
	}
	// An event for a session this server never made is acknowledged and ignored.
	out = nil
	a.must(a.stripeEvent(nextup.Payment{SessionID: "cs_unknown", OfferID: "off_unknown"}, "pi_x", webhookSecret), 200, &out)
	if out["ignored"] != true {
		t.Fatalf("unknown session: %v", out)
	}
}

// TestPaidEventPublicRSVP: a paid event through its public page. The page
// shows the price; once the guest confirms their address, the seats are
// held for them to pay, and their status page is where they pay, to the
// same checkout the message links to.
func TestPaidEventPublicRSVP(t *testing.T) {
	t.Parallel()
	a := setupPaid(t)
	a.must(a.do("PATCH", "/v1/businesses/"+a.bid, a.key, `{"slug":"corner-cuts"}`), 200, nil)
	id := rsvpEvent(t, a.api, `,"price_cents":2500,"currency":"EUR"`)
	b := a.client()
	if p := b.do("GET", "/e/corner-cuts/wine", nil); p.status != 200 || !strings.Contains(p.body, "€25.00") {
		t.Fatalf("the paid event's page: %d\n%s", p.status, p.body)
	}
	status := rsvp(t, a.api, b, "Ana Lima", "ana@example.com", nil)
	regs := a.registrations(id)
	if len(regs) != 1 || regs[0].State != nextup.EntryOffered {
		t.Fatalf("after the RSVP: %+v", regs)
	}
	p := b.do("GET", status, nil)
	if p.status != 200 || !strings.Contains(p.body, "Pay €25.00 and confirm") || strings.Contains(p.body, "Claim this place") {
		t.Fatalf("the status page of a paid hold: %d\n%s", p.status, p.body)
	}
	var offer string
	for _, m := range a.outbox(nextup.MessageOffer) {
		if m.EntryID == regs[0].ID {
			offer = m.OfferID
		}
	}
	ps := a.payments(offer)
	if offer == "" || len(ps) != 1 {
		t.Fatalf("the hold's offer %q and its checkouts %+v", offer, ps)
	}
	if p = b.do("POST", status+"/pay", nil); p.status != http.StatusSeeOther || p.location != ps[0].URL {
		t.Fatalf("Pay on the status page: %d to %q, want the checkout %q", p.status, p.location, ps[0].URL)
	}
}
