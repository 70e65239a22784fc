// Command lambda is nextup's AWS Lambda bootstrap (provided.al2023,
// arm64): one binary that every function of the deployment runs, telling
// events apart by their shape (see Invoke). `make lambda` builds it into
// dist/lambda-arm64.zip; deploy/aws/template.yaml deploys it; docs/aws.md
// is the guide.
//
// One binary, not one per function: the functions share everything (the
// store, the use cases, the configuration), a single artefact deploys
// and rolls back at once, and Lambda bills by invocation and duration,
// not by function, so the split costs nothing; the template still gives
// each function its own trigger and its own least-privilege role.
//
// Events:
//   - Function URL requests (payload 2.0): the API, the claim and public
//     pages, the dashboard, through the same web handler as nextup serve;
//   - {"nextup":"timers"}, sent by a timer's one-time EventBridge Scheduler
//     schedule: every timer due runs;
//   - {"nextup":"sweep"}, the five-minute safety sweep: every timer due runs
//     and every message due is sent, whatever became of its schedule or
//     SQS message (triggers.go);
//   - SQS records of the send queue, each naming one outbox message: it is
//     sent once however often the record comes (the message's claim), and
//     a record that could not be handled is reported as a batch item
//     failure, to come again;
//   - S3 records of inbound mail (an SES receipt rule's S3 action): the
//     mail goes to the inbox lane of the business it was sent to;
//   - SNS records of SES bounce and complaint events: the address is
//     suppressed, and a bounced person is reached another way.
//
// Configuration (environment): NEXTUP_DB, the store (dynamodb:///PREFIX?
// region=R); NEXTUP_BASE_URL, the Function URL or the domain in front of
// it; NEXTUP_SECRETS_ARN, the Secrets Manager secret with the keys
// (secrets.go; NEXTUP_ADMIN_TOKEN without it, for local runs);
// NEXTUP_SCHEDULE_GROUP, NEXTUP_SCHEDULE_ROLE_ARN,
// NEXTUP_SCHEDULE_TARGET_ARN and NEXTUP_SCHEDULE_DLQ_ARN, the timers'
// schedules; NEXTUP_SEND_QUEUE_URL, the send queue; NEXTUP_MAIL_FROM and
// NEXTUP_SES_CONFIGURATION_SET, email by SES; NEXTUP_SMS_SENDER_ID and
// NEXTUP_SMS_ORIGINATION_NUMBER, texts by SNS; NEXTUP_INBOUND_DOMAIN, the
// domain inbound mail is addressed to ({slug}@domain); NEXTUP_BEDROCK_MODEL,
// the inbox lane's model parser on Bedrock (the secret's Anthropic key does
// the same with Anthropic's API; its Stripe keys turn paid events on). The
// AWS clients
// take the SDK's own settings (region, credentials, and
// AWS_ENDPOINT_URL_<SERVICE> for local stand-ins). NEXTUP_CLOCK=fake runs on
// a clock that moves only when a {"nextup":"clock"} event says (tests).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	h, err := newHandler(ctx, configFromEnv(logger))
	if err != nil {
		logger.Error("nextup lambda: start", slog.Any("error", err))
		os.Exit(1)
	}
	// h is a lambda.Handler: Invoke gets the event's bytes as they
	// come, and tells the kinds apart itself.
	lambda.Start(h)
}
