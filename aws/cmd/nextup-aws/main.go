// Command nextup-aws is nextup with the adapters of the AWS module: every
// command of cmd/nextup (package cli), with --db dynamodb://HOST:PORT/PREFIX
// (or dynamodb:///PREFIX for DynamoDB itself; store/dynamo), plus the inbox
// lane's Bedrock parser. NEXTUP_BEDROCK_MODEL (a Bedrock model id) has the inbox lane
// read forwarded requests with Bedrock's Converse API, with the AWS SDK's
// default credential chain and region; NEXTUP_BEDROCK_ENDPOINT points the
// client at a local fake.
package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/intake/bedrock"
	"github.com/nextup-dev/nextup/aws/store/dynamo"
	"github.com/nextup-dev/nextup/cmd/nextup/cli"
	"github.com/nextup-dev/nextup/waitlist"
)

func main() {
	cli.RegisterMailParser(bedrockParser)
	cli.RegisterStore("dynamodb", openDynamo)
	cli.Main()
}

// openDynamo opens a dynamodb:// URL (store/dynamo.Open) and makes its
// table when it is not there yet.
func openDynamo(ctx context.Context, dsn string) (nextup.Store, error) {
	s, err := dynamo.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// awsConfig is the one aws.Config of the process, loaded from the default
// credential chain the first time an adapter needs it: every service
// client is made from it.
var awsConfig = sync.OnceValues(func() (aws.Config, error) {
	return config.LoadDefaultConfig(context.Background())
})

// bedrockParser makes the Bedrock parser when NEXTUP_BEDROCK_MODEL is set,
// and nothing otherwise.
func bedrockParser(_ context.Context) (waitlist.MailParser, error) {
	model := os.Getenv("NEXTUP_BEDROCK_MODEL")
	if model == "" {
		return nil, nil
	}
	cfg, err := awsConfig()
	if err != nil {
		return nil, fmt.Errorf("bedrock: %w", err)
	}
	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		if e := os.Getenv("NEXTUP_BEDROCK_ENDPOINT"); e != "" {
			o.BaseEndpoint = &e
		}
	})
	return &bedrock.Parser{Client: client, ModelID: model}, nil
}
