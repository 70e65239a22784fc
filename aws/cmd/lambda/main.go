// Command lambda is nextup's AWS Lambda bootstrap (provided.al2023,
// arm64): one binary that every function of the deployment runs, telling
// events apart by their shape (see Invoke). `make lambda` builds it into
// dist/lambda-arm64.zip.
//
// One binary, not one per function: the functions share everything (the
// store, the use cases, the configuration), a single artefact deploys
// and rolls back at once, and Lambda bills by invocation and duration,
// not by function, so the split costs nothing; the template still gives
// each function its own trigger and its own least-privilege role.
//
// Configuration (environment): NEXTUP_DB, the store (a dynamodb:// URL:
// dynamodb:///PREFIX?region=R for DynamoDB itself); NEXTUP_BASE_URL, the
// Function URL or the domain in front of it (claim and status links);
// NEXTUP_ADMIN_TOKEN, the admin token.
//
// Events so far: Function URL requests (the API, the claim and public
// pages, the dashboard), and the timer event {"nextup":"timers"} that an
// EventBridge Scheduler schedule sends (a one-time schedule at a timer's
// due time, and the low-rate safety sweep): it runs every timer due. SQS
// and S3 events come with the rest of the deployment.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

func main() {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	h, err := newHandler(ctx, config{DB: os.Getenv("NEXTUP_DB"), BaseURL: os.Getenv("NEXTUP_BASE_URL"),
		AdminToken: os.Getenv("NEXTUP_ADMIN_TOKEN"), Logger: logger})
	if err != nil {
		logger.Error("nextup lambda: start", slog.Any("error", err))
		os.Exit(1)
	}
	// h is a lambda.Handler: Invoke gets the event's bytes as they
	// come, and tells the kinds apart itself.
	lambda.Start(h)
}

// config is what a container is started with.
type config struct {
	DB         string
	BaseURL    string
	AdminToken string
	Logger     *slog.Logger
	// Clock is the real clock unless a test gives a fake one.
	Clock nextup.Clock
}

var _ lambda.Handler = (*handler)(nil)

// handler answers the deployment's events; one per container, made at
// init (the store's client, the use cases and the web handler are reused
// by every invocation the container serves).
type handler struct {
	http   *httpadapter.HandlerAdapterV2
	timers *timer.Sweeper
}

func newHandler(ctx context.Context, c config) (*handler, error) {
	if !strings.HasPrefix(c.DB, "dynamodb://") {
		return nil, fmt.Errorf("NEXTUP_DB must be a dynamodb:// URL, not %q", c.DB)
	}
	st, err := dynamo.Open(ctx, c.DB)
	if err != nil {
		return nil, err
	}
	clock := c.Clock
	if clock == nil {
		clock = nextup.RealClock{}
	}
	svc := waitlist.New(st, clock, c.BaseURL)
	svc.Logger = c.Logger
	api := &web.Server{Svc: svc, Store: st, AdminToken: c.AdminToken, Logger: c.Logger}
	sweep := &timer.Sweeper{Store: st, Clock: clock, Handler: svc, Owner: "lambda", Logger: c.Logger}
	return &handler{http: httpadapter.NewV2(api.Handler()), timers: sweep}, nil
}

// errUnknownEvent is an event of no shape the bootstrap knows.
var errUnknownEvent = errors.New("nextup lambda: an event of no known kind")

// Invoke answers one event. A Function URL request (payload format 2.0:
// requestContext.http and rawPath) goes through the same web handler as
// `nextup serve`.
func (h *handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var probe struct {
		Nextup         string  `json:"nextup"`
		RawPath        *string `json:"rawPath"`
		RequestContext struct {
			HTTP struct {
				Method string `json:"method"`
			} `json:"http"`
		} `json:"requestContext"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("nextup lambda: the event is not JSON: %w", err)
	}
	if probe.RawPath != nil && probe.RequestContext.HTTP.Method != "" {
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &req); err != nil {
			return nil, fmt.Errorf("nextup lambda: a Function URL request: %w", err)
		}
		res, err := h.http.ProxyWithContext(ctx, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	}
	if probe.Nextup == "timers" {
		// Every timer due, not only the one the schedule was made for:
		// one that is late (its schedule lost between the commit and its
		// creation) goes too, which is what the safety sweep relies on.
		n, err := h.timers.RunDue(ctx)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"handled": n})
	}
	return nil, errUnknownEvent
}
