package web

import (
	"errors"
	"net/http"

	"github.com/nextup-dev/nextup"
)

// maxWebhookBody bounds a payment provider's event (Stripe's are a few KiB).
const maxWebhookBody = 256 << 10

// paymentWebhook is POST /v1/payments/stripe, the endpoint Stripe sends
// signed events to. A bad or missing signature is 400 and changes
// nothing; a correctly signed event of another kind is 200 and ignored; a
// completed checkout claims the seats (or refunds a late payment). A
// failure worth retrying (the store, a refund that did not go through) is
// 503, so Stripe sends the event again.
func (s *Server) paymentWebhook(w http.ResponseWriter, r *http.Request) {
	if s.PaymentWebhook == nil {
		s.writeError(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "payments are not set up on this server"))
		return
	}
	payload, err := readBody(r, maxWebhookBody)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ev, ok, err := s.PaymentWebhook(payload, r.Header.Get("Stripe-Signature"))
	switch {
	case nextup.ErrorCode(err) == nextup.CodeBadSignature:
		s.writeError(w, r, nextup.Errorf(nextup.ErrInvalid, nextup.CodeBadSignature, "the Stripe-Signature header does not match this endpoint's secret"))
		return
	case err != nil:
		s.writeError(w, r, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "the event could not be read: %v", err))
		return
	case !ok:
		writeJSON(w, http.StatusOK, map[string]any{"received": true, "ignored": true})
		return
	}
	res, err := s.Svc.PaymentCompleted(r.Context(), ev)
	if errors.Is(err, nextup.ErrNotFound) {
		// Not a checkout this server made: nothing to do, and nothing to
		// gain from Stripe sending it again.
		writeJSON(w, http.StatusOK, map[string]any{"received": true, "ignored": true})
		return
	}
	if err != nil {
		s.logger().Error("payment event", "session", ev.SessionID, "err", err)
		s.writeError(w, r, nextup.Errorf(nextup.ErrUnavailable, nextup.CodeRetryLater, "the event could not be handled now; send it again"))
		return
	}
	out := map[string]any{"received": true, "payment_id": res.Payment.ID, "state": res.Payment.State, "refunded": res.Refunded}
	if res.Booking != nil {
		out["booking_id"] = res.Booking.ID
	}
	writeJSON(w, http.StatusOK, out)
}
