package web

import (
	"bytes"
	"encoding/xml"
	"net/http"

	"github.com/nextup-dev/nextup"
)

// smsInbound is POST /v1/businesses/{bid}/sms/inbound: the webhook the
// business's Twilio number calls with each text it receives. The request
// must carry a valid X-Twilio-Signature for the public URL (checked by
// Server.SMSSignature, which cmd/nextup wires to the Twilio SDK's
// validator); anything else is refused and changes nothing. The answer is
// TwiML: the reply text, if any.
func (s *Server) smsInbound(w http.ResponseWriter, r *http.Request) {
	params, ok := s.twilioForm(w, r)
	if !ok {
		return
	}
	reply, err := s.Svc.InboundSMS(r.Context(), r.PathValue("bid"), params["From"], params["Body"])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var b bytes.Buffer
	b.WriteString(xml.Header + "<Response>")
	if reply.Text != "" {
		b.WriteString("<Message>")
		_ = xml.EscapeText(&b, []byte(reply.Text))
		b.WriteString("</Message>")
	}
	b.WriteString("</Response>")
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// smsStatus is POST /v1/sms/status?message={id}: Twilio's delivery report
// of a text, at the status callback URL the SMS sender gives for each
// message. Signed like the inbound webhook; a text that could not be
// delivered goes dead, visibly.
func (s *Server) smsStatus(w http.ResponseWriter, r *http.Request) {
	params, ok := s.twilioForm(w, r)
	if !ok {
		return
	}
	if err := s.Svc.SMSDelivery(r.Context(), r.URL.Query().Get("message"), params["MessageStatus"], params["ErrorCode"]); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// twilioForm reads a Twilio webhook's form and checks its signature for
// the public URL; on failure it has answered and reports false.
func (s *Server) twilioForm(w http.ResponseWriter, r *http.Request) (map[string]string, bool) {
	if s.SMSSignature == nil {
		s.writeError(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "SMS webhooks are not configured"))
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody())
	if err := r.ParseForm(); err != nil {
		s.writeError(w, r, invalidf("body", "a form-encoded Twilio webhook is expected"))
		return nil, false
	}
	params := map[string]string{}
	for k := range r.PostForm {
		params[k] = r.PostForm.Get(k)
	}
	sig := r.Header.Get("X-Twilio-Signature")
	if sig == "" || !s.SMSSignature(s.Svc.BaseURL+r.URL.RequestURI(), params, sig) {
		s.writeError(w, r, nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeUnauthorized, "missing or wrong X-Twilio-Signature"))
		return nil, false
	}
	return params, true
}
