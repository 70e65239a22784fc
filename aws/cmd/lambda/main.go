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
// This is the deployment's first part: Function URL requests (the API,
// the claim and public pages, the dashboard). Scheduler, SQS and S3
// events come with the rest of the deployment.
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
}

var _ lambda.Handler = (*handler)(nil)

// handler answers the deployment's events; one per container, made at
// init (the store's client, the use cases and the web handler are reused
// by every invocation the container serves).
type handler struct {
	http *httpadapter.HandlerAdapterV2
}

func newHandler(ctx context.Context, c config) (*handler, error) {
	if !strings.HasPrefix(c.DB, "dynamodb://") {
		return nil, fmt.Errorf("NEXTUP_DB must be a dynamodb:// URL, not %q", c.DB)
	}
	st, err := dynamo.Open(ctx, c.DB)
	if err != nil {
		return nil, err
	}
	svc := waitlist.New(st, nextup.RealClock{}, c.BaseURL)
	svc.Logger = c.Logger
	api := &web.Server{Svc: svc, Store: st, AdminToken: c.AdminToken, Logger: c.Logger}
	return &handler{http: httpadapter.NewV2(api.Handler())}, nil
}

// errUnknownEvent is an event of no shape the bootstrap knows.
var errUnknownEvent = errors.New("nextup lambda: an event of no known kind")

// Invoke answers one event. A Function URL request (payload format 2.0:
// requestContext.http and rawPath) goes through the same web handler as
// `nextup serve`.
func (h *handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var probe struct {
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
	return nil, errUnknownEvent
}
