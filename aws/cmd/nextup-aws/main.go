//go:build bedrock

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/nextup-dev/nextup/intake/bedrock"
	"github.com/nextup-dev/nextup/waitlist"
)

// Built with -tags bedrock: NEXTUP_BEDROCK_MODEL (a Bedrock model id) has
// the inbox lane read requests with Bedrock's Converse API, with the AWS
// SDK's default credentials and region (NEXTUP_BEDROCK_ENDPOINT points it
// at a local fake).
func init() {
	mailParsers = append(mailParsers, func(ctx context.Context) (waitlist.MailParser, error) {
		model := os.Getenv("NEXTUP_BEDROCK_MODEL")
		if model == "" {
			return nil, nil
		}
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("bedrock: %w", err)
		}
		client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
			if e := os.Getenv("NEXTUP_BEDROCK_ENDPOINT"); e != "" {
				o.BaseEndpoint = &e
			}
		})
		return &bedrock.Parser{Client: client, ModelID: model}, nil
	})
}
