package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/intake/bedrock"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/intake/anthropic"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/pay/stripepay"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

// config is what a container is started with (main.go's doc names the
// environment).
type config struct {
	DB         string
	BaseURL    string
	AdminToken string
	SecretsARN string

	ScheduleGroup, ScheduleRole, ScheduleTarget, ScheduleDLQ string

	SendQueue string

	MailFrom, SESConfigurationSet string
	SMSSenderID, SMSOrigination   string

	InboundDomain string
	// BedrockModel, when set, has the inbox lane read forwarded requests
	// with this Bedrock model (the Anthropic key in the secret does the
	// same with Anthropic's API; Bedrock wins when both are set).
	BedrockModel string

	Logger *slog.Logger
	// Clock is the real clock unless a test gives one, or FakeClock asks
	// for a fake one.
	Clock     nextup.Clock
	FakeClock bool
	// AWS is the SDK's configuration; nil loads the default (the
	// environment, the function's role).
	AWS *aws.Config
	// crash, when set (tests), is triggers.crash.
	crash func(point string)
}

func configFromEnv(logger *slog.Logger) config {
	return config{
		DB: os.Getenv("NEXTUP_DB"), BaseURL: os.Getenv("NEXTUP_BASE_URL"),
		AdminToken: os.Getenv("NEXTUP_ADMIN_TOKEN"), SecretsARN: os.Getenv("NEXTUP_SECRETS_ARN"),
		ScheduleGroup: os.Getenv("NEXTUP_SCHEDULE_GROUP"), ScheduleRole: os.Getenv("NEXTUP_SCHEDULE_ROLE_ARN"),
		ScheduleTarget: os.Getenv("NEXTUP_SCHEDULE_TARGET_ARN"), ScheduleDLQ: os.Getenv("NEXTUP_SCHEDULE_DLQ_ARN"),
		SendQueue: os.Getenv("NEXTUP_SEND_QUEUE_URL"),
		MailFrom:  os.Getenv("NEXTUP_MAIL_FROM"), SESConfigurationSet: os.Getenv("NEXTUP_SES_CONFIGURATION_SET"),
		SMSSenderID: os.Getenv("NEXTUP_SMS_SENDER_ID"), SMSOrigination: os.Getenv("NEXTUP_SMS_ORIGINATION_NUMBER"),
		InboundDomain: os.Getenv("NEXTUP_INBOUND_DOMAIN"), BedrockModel: os.Getenv("NEXTUP_BEDROCK_MODEL"),
		FakeClock: os.Getenv("NEXTUP_CLOCK") == "fake",
		Logger:    logger,
	}
}

var _ lambda.Handler = (*handler)(nil)

// handler answers the deployment's events; one per container, made at
// init (the store's client, the use cases, the secrets and the web
// handler are reused by every invocation the container serves).
type handler struct {
	log      *slog.Logger
	clock    nextup.Clock
	fake     *nextup.FakeClock
	svc      *waitlist.Service
	http     *httpadapter.HandlerAdapterV2
	timers   *timer.Sweeper
	relay    *outbox.Relay
	triggers *triggers
	s3       *s3.Client
	inbound  string // the inbound domain
}

func newHandler(ctx context.Context, c config) (*handler, error) {
	if !strings.HasPrefix(c.DB, "dynamodb://") {
		return nil, fmt.Errorf("NEXTUP_DB must be a dynamodb:// URL, not %q", c.DB)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	cfg := c.AWS
	if cfg == nil {
		loaded, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("aws config: %w", err)
		}
		cfg = &loaded
	}
	var sec secrets
	if c.SecretsARN != "" {
		var err error
		if sec, err = readSecrets(ctx, secretsmanager.NewFromConfig(*cfg), c.SecretsARN); err != nil {
			return nil, err
		}
		c.AdminToken = sec.AdminToken
	}
	st, err := dynamo.Open(ctx, c.DB)
	if err != nil {
		return nil, err
	}
	h := &handler{log: c.Logger, clock: c.Clock, inbound: strings.ToLower(c.InboundDomain)}
	if h.clock == nil {
		h.clock = nextup.RealClock{}
		if c.FakeClock {
			h.fake = nextup.NewFakeClock(time.Now()) // starts at the real time, then moves only when told
			h.clock = h.fake
		}
	}
	h.triggers = &triggers{clock: h.clock, log: c.Logger, crash: c.crash,
		group: c.ScheduleGroup, role: c.ScheduleRole, target: c.ScheduleTarget, dlq: c.ScheduleDLQ, queue: c.SendQueue}
	if c.ScheduleGroup != "" {
		h.triggers.sched = scheduler.NewFromConfig(*cfg)
	}
	if c.SendQueue != "" {
		h.triggers.sqs = sqs.NewFromConfig(*cfg)
	}
	st.OnCommit(h.triggers.committed)
	if h.inbound != "" {
		h.s3 = s3.NewFromConfig(*cfg, func(o *s3.Options) {
			// A local stand-in (AWS_ENDPOINT_URL_S3) has no bucket
			// subdomains.
			o.UsePathStyle = os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
		})
	}

	h.svc = waitlist.New(st, h.clock, c.BaseURL)
	h.svc.Logger = c.Logger
	switch {
	case c.BedrockModel != "":
		h.svc.MailParser = &bedrock.Parser{Client: bedrockruntime.NewFromConfig(*cfg), ModelID: c.BedrockModel}
	case sec.AnthropicAPIKey != "":
		h.svc.MailParser = anthropic.New(sec.AnthropicAPIKey, "", "")
	}
	api := &web.Server{Svc: h.svc, Store: st, AdminToken: c.AdminToken, Logger: c.Logger}
	if sec.StripeSecretKey != "" {
		sc, err := stripepay.New(stripepay.Config{SecretKey: sec.StripeSecretKey, WebhookSecret: sec.StripeWebhookSecret,
			BackendURL: os.Getenv("NEXTUP_STRIPE_API_BASE")})
		if err != nil {
			return nil, fmt.Errorf("stripe: %w", err)
		}
		pay := stripepay.Checkouts{Client: sc}
		h.svc.Payments, api.PaymentWebhook = pay, pay.Webhook
	}
	h.relay = &outbox.Relay{Store: st, Clock: h.clock, Logger: c.Logger, Senders: map[nextup.Channel]nextup.Sender{}}
	if err := h.channels(ctx, c, *cfg); err != nil {
		return nil, err
	}
	h.relay.OnDead = func(ctx context.Context, tx nextup.Tx, m nextup.Message, sendErr error) (func(), error) {
		return h.svc.DeadLetter(ctx, tx, m.ID, outbox.AddressRefused(sendErr), fmt.Sprint(sendErr))
	}
	h.relay.OnSent = h.svc.Handed
	if err := h.relay.Check(); err != nil {
		return nil, err
	}
	// A timer's lease outlasts the timer function's run (its timeout is
	// 60 s in the template), so that two invocations firing together
	// never run one timer twice.
	h.timers = &timer.Sweeper{Store: st, Clock: h.clock, Handler: h.svc, Owner: "lambda", Logger: c.Logger, Lease: timerLease}
	h.http = httpadapter.NewV2(api.Handler())
	return h, nil
}

// timerLease is how long an invocation holds the timers it runs: more
// than the longest a function may run (the template's largest timeout).
const timerLease = 2 * time.Minute

// errUnknownEvent is an event of no shape the bootstrap knows.
var errUnknownEvent = errors.New("nextup lambda: an event of no known kind")

// Invoke answers one event, told apart by its shape, then runs what the
// event's commits left due at once (a timer due now has no schedule).
func (h *handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	out, err := h.invoke(ctx, payload)
	for round := 0; round < 10 && ctx.Err() == nil && h.triggers.takeDueNow(); round++ {
		if _, derr := h.timers.RunDue(ctx); derr != nil {
			// Not this event's failure: the sweep runs them.
			h.log.Error("timers due now not run; the sweep will", "error", derr)
			break
		}
	}
	return out, err
}

func (h *handler) invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var probe struct {
		Nextup         string  `json:"nextup"`
		RawPath        *string `json:"rawPath"`
		RequestContext struct {
			HTTP struct {
				Method string `json:"method"`
			} `json:"http"`
		} `json:"requestContext"`
		// Records of SQS, S3 and SNS events: the key is eventSource
		// for the first two and EventSource for SNS (decoding ignores
		// the case).
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("nextup lambda: the event is not JSON: %w", err)
	}
	switch {
	case probe.RawPath != nil && probe.RequestContext.HTTP.Method != "":
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &req); err != nil {
			return nil, fmt.Errorf("nextup lambda: a Function URL request: %w", err)
		}
		res, err := h.http.ProxyWithContext(ctx, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	case probe.Nextup == "timers":
		// Every timer due, not only the one the schedule was made for:
		// one that is late (its schedule lost) goes too.
		n, err := h.timers.RunDue(ctx)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"handled": n})
	case probe.Nextup == "sweep":
		return h.sweep(ctx)
	case probe.Nextup == "clock" && h.fake != nil:
		return h.moveClock(payload)
	case len(probe.Records) > 0:
		switch src := probe.Records[0].EventSource; src {
		case "aws:sqs":
			return h.sqsEvent(ctx, payload)
		case "aws:s3":
			return h.s3Event(ctx, payload)
		case "aws:sns":
			return h.snsEvent(ctx, payload)
		default:
			return nil, fmt.Errorf("%w: records from %q", errUnknownEvent, src)
		}
	}
	return nil, errUnknownEvent
}

// sweep is the safety sweep: the timers due and the messages due, whatever
// became of their schedules and SQS messages.
func (h *handler) sweep(ctx context.Context) ([]byte, error) {
	timers, err := h.timers.RunDue(ctx)
	if err != nil {
		return nil, err
	}
	sent, failed := 0, 0
	var first error
	for round := 0; round < 100 && ctx.Err() == nil; round++ {
		s, f, err := h.relay.RunOnce(ctx)
		sent, failed = sent+s, failed+f
		if err != nil {
			// One message's fallback failing must not hold the rest
			// back: go on while batches make progress.
			h.log.Error("sweep: a send round failed", "error", err)
			first = cmp.Or(first, err)
		}
		if s+f == 0 {
			break
		}
	}
	if first != nil && sent+failed == 0 {
		return nil, first
	}
	return json.Marshal(map[string]int{"timers": timers, "sent": sent, "failed": failed})
}

// moveClock is {"nextup":"clock","advance_seconds":N} under
// NEXTUP_CLOCK=fake: the clock moves, and nothing else happens (the
// schedules and the sweep run what falls due, as on the real clock).
func (h *handler) moveClock(payload []byte) ([]byte, error) {
	var in struct {
		AdvanceSeconds int64 `json:"advance_seconds"`
	}
	if err := json.Unmarshal(payload, &in); err != nil || in.AdvanceSeconds < 0 {
		return nil, fmt.Errorf("nextup lambda: clock: want advance_seconds >= 0")
	}
	h.fake.Advance(time.Duration(in.AdvanceSeconds) * time.Second)
	return json.Marshal(map[string]time.Time{"now": h.fake.Now()})
}
