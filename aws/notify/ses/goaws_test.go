package ses_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Admiral-Piett/goaws/app/servertest"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/nextup-dev/nextup/aws/notify/ses"
)

// envelope is the JSON SNS POSTs to an HTTP subscription.
type envelope struct {
	Type, MessageId, TopicArn, Message, Token string
}

// SES's event destination publishes to an SNS topic; an HTTP endpoint
// subscribed to it receives the notification envelope, whose Message is
// the SES event ParseFeedback reads. The topic is goaws's (in process,
// through the official SNS client); goaws keeps its topics in globals,
// so this test does not run in parallel.
//
// goaws's own dependencies (logrus, gorilla/mux) are not required by
// aws/go.mod: the workspace (go.work, go.work.sum) provides them, as for
// every test here; a build of the AWS module alone (GOWORK=off) needs
// `go get github.com/Admiral-Piett/goaws@v0.4.5` in aws/ first.
func TestFeedbackThroughSNSTopic(t *testing.T) {
	srv, err := servertest.New("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Quit() })
	got := make(chan envelope, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var env envelope
		if err == nil {
			err = json.Unmarshal(b, &env)
		}
		if err != nil || env.Type != r.Header.Get("x-amz-sns-message-type") {
			t.Errorf("POST %q (x-amz-sns-message-type %q): %v", b, r.Header.Get("x-amz-sns-message-type"), err)
		}
		got <- env
	}))
	t.Cleanup(hook.Close)
	next := func(want string) envelope {
		t.Helper()
		select {
		case env := <-got:
			if env.Type != want {
				t.Fatalf("%s, want %s", env.Type, want)
			}
			return env
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s", want)
		}
		return envelope{}
	}

	c := awssns.New(awssns.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL()), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	ctx := context.Background()
	topic, err := c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("nextup-ses-feedback")})
	if err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	if _, err := c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(hook.URL)}); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	conf := next("SubscriptionConfirmation")
	if _, err := c.ConfirmSubscription(ctx, &awssns.ConfirmSubscriptionInput{TopicArn: topic.TopicArn, Token: aws.String(conf.Token)}); err != nil {
		t.Fatalf("ConfirmSubscription: %v", err)
	}

	body, err := os.ReadFile(filepath.Join("testdata", "bounce_event.json"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(string(body))})
	if err != nil || aws.ToString(pub.MessageId) == "" {
		t.Fatalf("Publish: %v", err)
	}
	env := next("Notification")
	if env.TopicArn != aws.ToString(topic.TopicArn) {
		t.Errorf("topic %q, want %q", env.TopicArn, aws.ToString(topic.TopicArn))
	}
	fbs, err := ses.ParseFeedback([]byte(env.Message))
	if err != nil || len(fbs) != 1 || fbs[0].MessageID != "msg_5k2abc" || fbs[0].Address != "ada@example.com" || fbs[0].Kind != ses.PermanentBounce {
		t.Fatalf("feedback %+v, %v", fbs, err)
	}
}
