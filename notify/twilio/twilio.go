// Package twilio sends nextup's SMS channel through Twilio's Messages API
// with the official SDK (github.com/twilio/twilio-go).
//
// Twilio's Messages API takes no idempotency key, so a text the relay sends
// twice after a crash between Twilio's answer and the commit reaches the
// person twice; the relay's lease makes that rare, and the message id is
// kept as the provider reference in the outbox. APIBase points the SDK at
// another base URL than https://api.twilio.com: a local fake in tests.
package twilio

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	twiliogo "github.com/twilio/twilio-go"
	"github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/nextup-dev/nextup"
)

// Config is a Twilio account and the sender it texts from.
type Config struct {
	AccountSID string
	AuthToken  string
	// From is the sending number (E.164) or, instead,
	// MessagingServiceSID a Messaging Service that picks one.
	From                string
	MessagingServiceSID string
	// StatusCallback, if set, is the URL Twilio posts delivery reports to;
	// each message's report names it: "?message=<outbox id>" is added.
	StatusCallback string
	// APIBase replaces https://api.twilio.com (tests, proxies).
	APIBase string
	// Timeout bounds one request. Default 10s.
	Timeout time.Duration
}

// Sender texts messages. Create it with New.
type Sender struct {
	cfg  Config
	rest *twiliogo.RestClient
}

var _ nextup.Sender = (*Sender)(nil)

// New checks cfg and builds the SDK client.
func New(cfg Config) (*Sender, error) {
	if cfg.AccountSID == "" || cfg.AuthToken == "" {
		return nil, errors.New("twilio: the account SID and auth token are required")
	}
	if (cfg.From == "") == (cfg.MessagingServiceSID == "") {
		return nil, errors.New("twilio: give a From number or a Messaging Service SID (one of them)")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	hc := &http.Client{Timeout: cfg.Timeout,
		// The SDK must see Twilio's answer, not follow a redirect.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if cfg.APIBase != "" {
		base, err := url.Parse(cfg.APIBase)
		if err != nil || base.Host == "" {
			return nil, fmt.Errorf("twilio: API base %q is not a URL", cfg.APIBase)
		}
		hc.Transport = rebase{to: base, next: http.DefaultTransport}
	}
	c := &client.Client{Credentials: client.NewCredentials(cfg.AccountSID, cfg.AuthToken), HTTPClient: hc}
	c.SetAccountSid(cfg.AccountSID)
	return &Sender{cfg: cfg, rest: twiliogo.NewRestClientWithParams(twiliogo.ClientParams{Client: c})}, nil
}

// rebase sends requests for *.twilio.com to another base URL.
type rebase struct {
	to   *url.URL
	next http.RoundTripper
}

func (r rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Host, "twilio.com") {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
		req.URL.Path = strings.TrimSuffix(r.to.Path, "/") + req.URL.Path
		req.Host = r.to.Host
	}
	return r.next.RoundTrip(req)
}

// Channel is sms.
func (s *Sender) Channel() nextup.Channel { return nextup.ChannelSMS }

// Account is "twilio:" and the account SID: the relay's rate limit is
// per Twilio account, shared by every sender on it.
func (s *Sender) Account() string { return "twilio:" + s.cfg.AccountSID }

// permanent are Twilio error codes that no retry will fix: a number that
// is not valid, not a mobile, or has opted out with STOP.
var permanent = map[int]bool{
	21211: true, // invalid 'To' number
	21214: true, // 'To' number cannot be reached
	21408: true, // region not enabled
	21610: true, // the recipient replied STOP
	21612: true, // cannot route to this number
	21614: true, // not a mobile number
}

// Send texts msg and returns Twilio's message SID. The SDK takes no
// context; the request is bounded by Config.Timeout.
func (s *Sender) Send(_ context.Context, msg nextup.Message) (string, error) {
	p := &openapi.CreateMessageParams{}
	p.SetTo(msg.To)
	p.SetBody(msg.Body)
	if s.cfg.From != "" {
		p.SetFrom(s.cfg.From)
	} else {
		p.SetMessagingServiceSid(s.cfg.MessagingServiceSID)
	}
	if s.cfg.StatusCallback != "" {
		sep := "?"
		if strings.Contains(s.cfg.StatusCallback, "?") {
			sep = "&"
		}
		p.SetStatusCallback(s.cfg.StatusCallback + sep + "message=" + url.QueryEscape(msg.ID))
	}
	res, err := s.rest.Api.CreateMessage(p)
	if err != nil {
		var te *client.TwilioRestError
		if errors.As(err, &te) && te.Code == 21408 {
			// The account may not text that region: no use trying again,
			// but the number is not to blame.
			return "", nextup.Errorf(nextup.ErrInvalid, "sms_not_allowed", "twilio may not text %s: %d %s", msg.To, te.Code, te.Message)
		}
		if errors.As(err, &te) && permanent[te.Code] {
			return "", nextup.Errorf(nextup.ErrInvalid, "sms_refused", "twilio refused %s: %d %s", msg.To, te.Code, te.Message)
		}
		return "", fmt.Errorf("twilio send %s: %w", msg.ID, err)
	}
	if res == nil || res.Sid == nil {
		return "", fmt.Errorf("twilio send %s: no message SID in the answer", msg.ID)
	}
	return *res.Sid, nil
}

// SignatureValidator returns the check of an inbound webhook's
// X-Twilio-Signature under this account's auth token: the SDK's
// RequestValidator, over the public URL Twilio called and its form
// parameters.
func SignatureValidator(authToken string) func(url string, params map[string]string, signature string) bool {
	rv := client.NewRequestValidator(authToken)
	return func(u string, params map[string]string, signature string) bool {
		return rv.Validate(u, params, signature)
	}
}
