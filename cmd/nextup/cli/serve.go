package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/api/option"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/booksys/httpbook"
	"github.com/nextup-dev/nextup/intake/anthropic"
	"github.com/nextup-dev/nextup/intake/sheet"
	"github.com/nextup-dev/nextup/intake/smtpd"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/notify/smtp"
	"github.com/nextup-dev/nextup/notify/twilio"
	"github.com/nextup-dev/nextup/notify/webhook"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/pay/stripepay"
	"github.com/nextup-dev/nextup/store/postgres"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// serveConfig is nextup serve's configuration: flags first, then NEXTUP_*
// environment variables, with *_FILE variants for secrets.
type serveConfig struct {
	Addr       string
	DB         string
	BaseURL    string
	AdminToken string
	Clock      string
	Notify     string
	SMTPURL    string
	MailFrom   string
	Instance   string // names this process on the timers it claims
	Twilio     twilio.Config
	DevOutbox  string         // demo only: the business whose outbox /dev/outbox lists
	DemoLogin  *web.DemoLogin // demo only: the staff account the front door shows
	// Google Sheets for the sheet mirror: a service account's key file or
	// an API key (public sheets), and another endpoint (a local fake).
	GoogleCredentialsFile, GoogleAPIKey, SheetsEndpoint string
	// The optional model parser of the inbox lane (off unless set).
	AnthropicKey, AnthropicModel, AnthropicBaseURL string
	// InboundAddr and InboundDomain run the inbound SMTP listener.
	InboundAddr, InboundDomain string
	// BookingTimeout bounds one request to a business's booking system.
	BookingTimeout time.Duration
	// Stripe takes the payments of paid events (off unless the key is set).
	StripeKey, StripeWebhookSecret, StripeAPIBase string

	// Messages a second per provider account, by channel (0: no limit).
	SMSTPS, EmailTPS, WebhookTPS float64

	// PostgreSQL only.
	DBMaxConns         int
	DBStatementTimeout time.Duration
	DBListen           bool

	// HTTP are the HTTP server's limits (httpserver.go).
	HTTP httpLimits
}

func runServe(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("serve")
	var c serveConfig
	fs.StringVar(&c.Addr, "addr", ":8080", "listen address")
	fs.StringVar(&c.DB, "db", "nextup.db", "database: a file path for the embedded store")
	fs.StringVar(&c.BaseURL, "base-url", "", "public base URL for claim and status links (default http://localhost<addr>)")
	fs.StringVar(&c.AdminToken, "admin-token", "", "admin token that may create businesses")
	adminFile := fs.String("admin-token-file", "", "read the admin token from this file")
	fs.StringVar(&c.Clock, "clock", "real", "real, or fake (time moves only by POST /v1/debug/clock; tests and demos)")
	fs.StringVar(&c.Notify, "notify", "capture", "comma list of channels: capture (messages without a provider stay readable in the outbox), smtp (email through --smtp-url, also implied by it)")
	fs.StringVar(&c.SMTPURL, "smtp-url", "", "outbound mail: smtp://[user:pass@]host[:port][?tls=starttls|require|none] or smtps://…; email goes through it")
	smtpFile := fs.String("smtp-url-file", "", "read --smtp-url from this file (it may hold a password)")
	fs.StringVar(&c.MailFrom, "mail-from", "", "outbound mail: the From address, e.g. 'Salon <offers@salon.example>'")
	fs.StringVar(&c.Twilio.AccountSID, "twilio-account-sid", "", "SMS: the Twilio account SID (texts go through Twilio when set)")
	fs.StringVar(&c.Twilio.AuthToken, "twilio-auth-token", "", "SMS: the Twilio auth token (prefer --twilio-auth-token-file)")
	twilioTokenFile := fs.String("twilio-auth-token-file", "", "SMS: read the Twilio auth token from this file")
	fs.StringVar(&c.Twilio.From, "twilio-from", "", "SMS: the Twilio number texts come from (E.164)")
	fs.StringVar(&c.Twilio.MessagingServiceSID, "twilio-messaging-service", "", "SMS: a Twilio Messaging Service SID, instead of --twilio-from")
	fs.StringVar(&c.Twilio.APIBase, "twilio-api-base", "", "SMS: another base URL for Twilio's API (a local fake; default https://api.twilio.com)")
	fs.StringVar(&c.GoogleCredentialsFile, "google-credentials-file", "", "sheet mirror: a Google service account's JSON key, to read sheets shared with it (and mark claimed rows booked in those it may edit)")
	fs.StringVar(&c.GoogleAPIKey, "google-api-key", "", "sheet mirror: a Google API key, to read sheets anyone with the link can view")
	fs.StringVar(&c.SheetsEndpoint, "sheets-endpoint", "", "sheet mirror: another base URL for the Sheets API (a local fake)")
	anthropicKeyFile := fs.String("anthropic-api-key-file", "", "inbox lane and the monthly summary's narrative: read forwarded requests and write the narrative with Anthropic's Messages API (key in this file; off by default, the deterministic parser and the narrative's template are the fallback)")
	fs.StringVar(&c.AnthropicKey, "anthropic-api-key", "", "inbox lane: as --anthropic-api-key-file, the key itself (prefer the file or the env)")
	fs.StringVar(&c.AnthropicModel, "anthropic-model", "", "inbox lane: the model (default "+anthropic.DefaultModel+")")
	fs.StringVar(&c.AnthropicBaseURL, "anthropic-base-url", "", "inbox lane: another base URL for the Messages API (a proxy, a local fake)")
	fs.StringVar(&c.StripeKey, "stripe-secret-key", "", "paid events: the Stripe secret key (prefer --stripe-secret-key-file or the env); off unless set")
	stripeKeyFile := fs.String("stripe-secret-key-file", "", "paid events: read the Stripe secret key from this file")
	fs.StringVar(&c.StripeWebhookSecret, "stripe-webhook-secret", "", "paid events: the signing secret (whsec_…) of the Stripe endpoint <base-url>/v1/payments/stripe")
	stripeWebhookFile := fs.String("stripe-webhook-secret-file", "", "paid events: read the webhook signing secret from this file")
	fs.StringVar(&c.StripeAPIBase, "stripe-api-base", "", "paid events: another base URL for Stripe's API (stripe-mock in tests)")
	fs.DurationVar(&c.BookingTimeout, "booking-timeout", httpbook.DefaultTimeout, "how long one request to a business's booking system (its booking_url) may take; a claim tries 3 times (at most 25s, under a timer's lease)")
	fs.Float64Var(&c.SMSTPS, "sms-tps", 0, "SMS: texts a second per provider account (Twilio: 1 for a long code, more for a Messaging Service or short code); evenly spaced, shared by every instance on PostgreSQL; 0: no limit")
	fs.Float64Var(&c.EmailTPS, "email-tps", 0, "email: messages a second per SMTP login; this instance's rate; 0: no limit")
	fs.Float64Var(&c.WebhookTPS, "webhook-tps", 0, "webhooks: deliveries a second, all businesses together; this instance's rate; 0: no limit")
	fs.StringVar(&c.Instance, "instance", "", "this instance's name on the timers it claims (default: host name and process id)")
	fs.IntVar(&c.DBMaxConns, "db-max-conns", 0, "PostgreSQL: connections in this instance's pool (default: the larger of 4 and the CPUs)")
	fs.DurationVar(&c.DBStatementTimeout, "db-statement-timeout", 30*time.Second, "PostgreSQL: the server aborts a statement running longer, and ends a session idle in a transaction for twice as long (0: the server's settings)")
	fs.BoolVar(&c.DBListen, "db-listen", true, "PostgreSQL: LISTEN for work other instances commit, to run it at once instead of at the next poll (turn off behind a transaction-pooling proxy)")
	smtpAddr := fs.String("smtp-addr", "", "inbound SMTP listener address (e.g. :2525), off by default: mail forwarded to {slug}@--inbound-domain becomes proposed rows")
	inboundDomain := fs.String("inbound-domain", "", "domain of the inbound addresses {slug}@domain (required with --smtp-addr)")
	c.HTTP.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.HTTP.check(); err != nil {
		return err
	}
	if (*smtpAddr == "") != (*inboundDomain == "") {
		return usageError{"serve: --smtp-addr and --inbound-domain go together"}
	}
	c.InboundAddr, c.InboundDomain = *smtpAddr, strings.ToLower(*inboundDomain)
	for _, f := range []struct {
		path string
		dst  *string
	}{{*adminFile, &c.AdminToken}, {*smtpFile, &c.SMTPURL}, {*twilioTokenFile, &c.Twilio.AuthToken}, {*anthropicKeyFile, &c.AnthropicKey},
		{*stripeKeyFile, &c.StripeKey}, {*stripeWebhookFile, &c.StripeWebhookSecret}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		*f.dst = strings.TrimSpace(string(b))
	}
	if c.Clock != "real" && c.Clock != "fake" {
		return usageError{"serve: --clock must be real or fake"}
	}
	if c.DBMaxConns < 0 || c.DBStatementTimeout < 0 {
		return usageError{"serve: --db-max-conns and --db-statement-timeout must not be negative"}
	}
	if (c.StripeKey == "") != (c.StripeWebhookSecret == "") {
		return usageError{"serve: --stripe-secret-key and --stripe-webhook-secret go together"}
	}
	if c.BookingTimeout <= 0 || c.BookingTimeout > 25*time.Second {
		// A claim's three requests stay well inside a timer's run (its
		// lease is renewed while it runs, but a dying handler should not
		// hold a seat's decision for minutes).
		return usageError{"serve: --booking-timeout must be more than 0 and at most 25s"}
	}
	// A message waits for its token holding its lease: a rate must allow
	// two messages a lease (outbox.Relay.Check).
	minTPS := 2 / outbox.DefaultLease.Seconds()
	for _, f := range []struct {
		name string
		tps  float64
	}{{"sms-tps", c.SMSTPS}, {"email-tps", c.EmailTPS}, {"webhook-tps", c.WebhookTPS}} {
		if f.tps < 0 || (f.tps > 0 && f.tps < minTPS) || math.IsNaN(f.tps) {
			return usageError{fmt.Sprintf("serve: --%s must be 0 (no limit) or at least %.3g (one message every %v)", f.name, minTPS, outbox.DefaultLease/2)}
		}
	}
	smtpListed, twilioListed := false, false
	for _, ch := range strings.Split(c.Notify, ",") {
		switch strings.TrimSpace(ch) {
		case "capture":
		case "smtp":
			smtpListed = true
		case "twilio":
			twilioListed = true
		default:
			return usageError{fmt.Sprintf("serve: --notify: channel %q is not built yet (capture, smtp and twilio are)", ch)}
		}
	}
	if smtpListed && c.SMTPURL == "" {
		return usageError{"serve: --notify smtp needs --smtp-url and --mail-from"}
	}
	if twilioListed && c.Twilio.AccountSID == "" {
		return usageError{"serve: --notify twilio needs --twilio-account-sid, an auth token and --twilio-from"}
	}
	if c.Twilio.AccountSID != "" {
		if _, err := twilio.New(c.Twilio); err != nil {
			return usageError{"serve: " + err.Error()}
		}
	}
	if (c.SMTPURL == "") != (c.MailFrom == "") {
		return usageError{"serve: --smtp-url and --mail-from go together"}
	}
	if c.SMTPURL != "" {
		if _, err := smtp.ParseURL(c.SMTPURL, c.MailFrom); err != nil {
			return usageError{"serve: " + err.Error()}
		}
	}
	if c.Instance == "" {
		host, _ := os.Hostname()
		c.Instance = fmt.Sprintf("%s:%d", cmp.Or(host, "nextup"), os.Getpid())
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	if c.BaseURL == "" {
		c.BaseURL = baseURL(c.Addr, ln)
	}
	return serve(ctx, c, ln, stdout)
}

// serve runs the API, the timer sweeper and the outbox relay until ctx
// ends, then shuts down gracefully: in-flight requests finish, the workers
// stop, the store closes.
func serve(ctx context.Context, c serveConfig, ln net.Listener, stdout io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(stdout, nil))
	st, err := openStore(ctx, c.DB, postgres.MaxConns(c.DBMaxConns), postgres.StatementTimeout(c.DBStatementTimeout))
	if err != nil {
		ln.Close()
		return err
	}
	defer st.Close()
	var clock nextup.Clock = nextup.RealClock{}
	var fake *nextup.FakeClock
	if c.Clock == "fake" {
		fake = nextup.NewFakeClock(time.Now()) // the fake clock starts at the real time, then moves only when told
		clock = fake
	}
	svc := waitlist.New(st, clock, c.BaseURL)
	if svc.Sheets, err = c.sheetReader(ctx); err != nil {
		return err
	}
	if c.AnthropicKey != "" {
		m := anthropic.New(c.AnthropicKey, c.AnthropicBaseURL, c.AnthropicModel)
		svc.MailParser, svc.Narrator = m, m // the monthly summary's narrative is checked against its figures
	}
	for _, mk := range registeredMailParsers() { // parsers another build registered (aws/cmd/nextup-aws: Bedrock)
		p, err := mk(ctx)
		if err != nil {
			return err
		}
		if p != nil {
			svc.MailParser = p
			if n, ok := p.(waitlist.Narrator); ok {
				svc.Narrator = n // the same model writes the summary's narrative
			}
		}
	}
	svc.Logger = logger
	sweeper := &timer.Sweeper{Store: st, Clock: clock, Handler: svc, Owner: c.Instance, Logger: logger}
	relay := &outbox.Relay{Store: st, Clock: clock, Default: capture.New(), Logger: logger, Senders: map[nextup.Channel]nextup.Sender{}}
	if fake != nil && c.SMSTPS+c.EmailTPS+c.WebhookTPS > 0 {
		logger.Warn("rate limits are off under --clock=fake: time stands still while the debug clock runs the relay")
	}
	if fake == nil {
		// Under the fake clock time stands still while the debug clock
		// runs the relay: a paced message would wait for ever.
		relay.Limits = c.limits()
		// On PostgreSQL the instances draw on one bucket per provider
		// account, so that between them they keep to its limit.
		if b, ok := st.(outbox.Budget); ok {
			relay.Budget = b
		}
	}
	if c.SMTPURL != "" {
		cfg, err := smtp.ParseURL(c.SMTPURL, c.MailFrom)
		if err != nil {
			return err
		}
		mail, err := smtp.New(cfg)
		if err != nil {
			return err
		}
		relay.Senders[nextup.ChannelEmail] = mail
	}
	// Webhook events, and claims sent to a business's booking system, are
	// signed with the hex SHA-256 of the business's API key: the
	// integrator can compute it, and nextup keeps only that.
	signingKey := func(ctx context.Context, bid string) ([]byte, error) {
		b, err := svc.GetBusiness(ctx, bid)
		return []byte(b.APIKeyHash), err
	}
	relay.Senders[nextup.ChannelWebhook] = &webhook.Sender{Clock: clock, Key: signingKey}
	svc.BookingSystem = &httpbook.Client{Clock: clock, Key: signingKey, Timeout: cmp.Or(c.BookingTimeout, httpbook.DefaultTimeout)}
	if c.Twilio.AccountSID != "" {
		if c.Twilio.StatusCallback == "" {
			c.Twilio.StatusCallback = c.BaseURL + "/v1/sms/status"
		}
		sms, err := twilio.New(c.Twilio)
		if err != nil {
			return err
		}
		relay.Senders[nextup.ChannelSMS] = sms
	}
	svc.Wake = func() { sweeper.Wake(); relay.Wake() }
	metrics := web.NewMetrics(st)
	sweeper.OnHandled = metrics.TimerHandled
	svc.Promoted = metrics.Promoted
	relay.OnAttempt = metrics.OutboxAttempt
	relay.OnDead = deadLetter(svc)
	relay.OnSent = svc.Handed
	if err := relay.Check(); err != nil {
		return err
	}
	rates := map[nextup.Channel]float64{}
	for ch, l := range relay.Limits {
		rates[ch] = l.TPS
	}
	metrics.SetSendRates(rates)
	api := &web.Server{Svc: svc, Store: st, AdminToken: c.AdminToken, Logger: logger, Metrics: metrics, SendRates: rates, BaseURL: c.BaseURL}
	if crashHooks != nil {
		crashHooks(svc, api, relay)
	}
	if c.AdminToken == "" {
		// Not an error (a server of businesses made with `nextup business
		// create` needs none), but the 401s it leads to are puzzling
		// unless the log says why.
		logger.Warn("no admin token configured: POST /v1/businesses and the other admin routes answer 401; set --admin-token or --admin-token-file (NEXTUP_ADMIN_TOKEN, NEXTUP_ADMIN_TOKEN_FILE)")
	}
	if c.Twilio.AccountSID != "" {
		api.SMSSignature = twilio.SignatureValidator(c.Twilio.AuthToken)
	}
	api.DevOutbox = c.DevOutbox
	api.Demo = c.DemoLogin
	if c.StripeKey != "" {
		sc, err := stripepay.New(stripepay.Config{SecretKey: c.StripeKey, WebhookSecret: c.StripeWebhookSecret, BackendURL: c.StripeAPIBase})
		if err != nil {
			return fmt.Errorf("serve: stripe: %w", err)
		}
		pay := stripepay.Checkouts{Client: sc}
		svc.Payments, api.PaymentWebhook = pay, pay.Webhook
	}
	if fake != nil {
		api.Debug = &web.DebugClock{Clock: fake, Sweeper: sweeper, Relay: relay}
	}
	srv := newHTTPServer(api.Handler(), c.HTTP)

	workCtx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if fake == nil { // under a fake clock time moves only through the debug endpoint
		wg.Add(2)
		go func() { defer wg.Done(); _ = sweeper.Run(workCtx) }()
		go func() { defer wg.Done(); _ = relay.Run(workCtx) }()
		if pg, ok := st.(*postgres.DB); ok && c.DBListen {
			wg.Add(1)
			go func() { defer wg.Done(); _ = pg.Listen(workCtx, func() { sweeper.Wake(); relay.Wake() }) }()
		}
	}
	serveErr := make(chan error, 1)
	var inbound *smtpd.Server
	if c.InboundAddr != "" {
		mln, err := net.Listen("tcp", c.InboundAddr)
		if err != nil {
			stopWork()
			wg.Wait()
			return fmt.Errorf("inbound SMTP: %w", err)
		}
		inbound = &smtpd.Server{Directory: svc, Domain: c.InboundDomain, Logger: logger,
			Deliver: func(ctx context.Context, bid, _ string, raw []byte) error {
				_, _, err := svc.ReceiveMail(ctx, bid, raw)
				if errors.Is(err, waitlist.ErrMailTooLarge) {
					return smtpd.ErrTooBig
				}
				if errors.Is(err, nextup.ErrInvalid) {
					// Unreadable as a request: nothing to propose, and
					// nothing the sender can fix by trying again.
					logger.Warn("inbound mail not readable", "business_id", bid, "error", err)
					return nil
				}
				return err
			}}
		go func() {
			if err := inbound.Serve(mln); err != nil {
				logger.Error("inbound SMTP stopped", "error", err)
			}
		}()
		logger.Info("inbound SMTP listening", "addr", mln.Addr().String(), "domain", c.InboundDomain)
	}
	go func() { serveErr <- srv.Serve(ln) }()
	logger.Info("nextup serving", "addr", ln.Addr().String(), "base_url", c.BaseURL, "db", redactDSN(c.DB),
		"clock", c.Clock, "instance", c.Instance, "email", c.SMTPURL != "", "sms", c.Twilio.AccountSID != "",
		"sms_tps", relay.Limits[nextup.ChannelSMS].TPS, "email_tps", relay.Limits[nextup.ChannelEmail].TPS, "webhook_tps", relay.Limits[nextup.ChannelWebhook].TPS)

	select {
	case err = <-serveErr:
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = srv.Shutdown(shutdownCtx)
		cancel()
		if err != nil {
			// In-flight requests outlived the grace period: cut them off
			// before the store closes under them.
			logger.Warn("requests still running after 15s; closing them", "error", err)
			_ = srv.Close()
			err = nil
		}
	}
	if inbound != nil {
		_ = inbound.Close()
	}
	stopWork()
	wg.Wait()
	logger.Info("nextup stopped")
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// limits are the relay's rate limits: --sms-tps, --email-tps and
// --webhook-tps, evenly spaced (a burst of one).
func (c serveConfig) limits() map[nextup.Channel]outbox.Limit {
	out := map[nextup.Channel]outbox.Limit{}
	for ch, tps := range map[nextup.Channel]float64{nextup.ChannelSMS: c.SMSTPS, nextup.ChannelEmail: c.EmailTPS, nextup.ChannelWebhook: c.WebhookTPS} {
		if tps > 0 {
			out[ch] = outbox.Limit{TPS: tps, Burst: 1}
		}
	}
	return out
}

// baseURL is the default public base of links: localhost for a bare
// ":port", otherwise the address actually listened on.
func baseURL(addr string, ln net.Listener) string {
	if strings.HasPrefix(addr, ":") {
		return "http://localhost:" + strings.TrimPrefix(addr, ":")
	}
	return "http://" + ln.Addr().String()
}

// sheetReader reads mirrored sheets: published CSV URLs always, Google
// Sheets when credentials or an API key are given.
func (c serveConfig) sheetReader(ctx context.Context) (*sheet.Reader, error) {
	r := &sheet.Reader{HTTP: sheet.SafeHTTPClient(20 * time.Second)}
	var opts []option.ClientOption
	switch {
	case c.GoogleCredentialsFile != "":
		// Only a service account's key is taken (see ServiceAccountKey).
		key, err := sheet.ServiceAccountKey(c.GoogleCredentialsFile)
		if err != nil {
			return nil, fmt.Errorf("google sheets: %w", err)
		}
		opts = append(opts, key)
	case c.GoogleAPIKey != "":
		opts = append(opts, option.WithAPIKey(c.GoogleAPIKey))
	case c.SheetsEndpoint != "":
		opts = append(opts, option.WithoutAuthentication())
	default:
		return r, nil
	}
	if c.SheetsEndpoint != "" {
		opts = append(opts, option.WithEndpoint(c.SheetsEndpoint))
	}
	svc, err := sheet.NewSheets(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("google sheets: %w", err)
	}
	r.Sheets = svc
	return r, nil
}

// deadLetter is the relay's OnDead: a message given up reaches the person
// another way (the same message on their other channel, or their offer
// rolling on when there is none), in the transaction that records it dead.
func deadLetter(svc *waitlist.Service) func(context.Context, nextup.Tx, nextup.Message, error) (func(), error) {
	return func(ctx context.Context, tx nextup.Tx, m nextup.Message, sendErr error) (func(), error) {
		return svc.DeadLetter(ctx, tx, m.ID, outbox.AddressRefused(sendErr), fmt.Sprint(sendErr))
	}
}

// crashHooks, when set, arms the crash points of a serve process. Only a
// test binary sets it (TestMain, for the crash tests): a nextup binary
// built for use never crashes on purpose, whatever its environment says.
var crashHooks func(*waitlist.Service, *web.Server, *outbox.Relay)
