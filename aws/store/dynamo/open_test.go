package dynamo

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/nextup-dev/nextup/aws/internal/dynotest"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	// A local server: its endpoint, the table PREFIXnextup, made by
	// Migrate, which a second time changes nothing.
	prefix := dynotest.Table(t) + "-"
	s, err := Open(ctx, fmt.Sprintf("dynamodb://%s/%s?region=eu-west-2", dynotest.Addr(t), prefix))
	if err != nil {
		t.Fatal(err)
	}
	if s.Table() != prefix+"nextup" {
		t.Errorf("table %q, want %q", s.Table(), prefix+"nextup")
	}
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping before Migrate: nil, want the missing table")
	}
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping after Migrate: %v", err)
	}
	out, err := s.api.(*dynamodb.Client).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Table())})
	if err != nil {
		t.Fatal(err)
	}
	want := TableDefinition(s.Table())
	if len(out.Table.GlobalSecondaryIndexes) != len(want.GlobalSecondaryIndexes) || out.Table.BillingModeSummary == nil ||
		out.Table.BillingModeSummary.BillingMode != want.BillingMode {
		t.Errorf("table made: %d indexes, billing %+v; want %d, %s", len(out.Table.GlobalSecondaryIndexes), out.Table.BillingModeSummary,
			len(want.GlobalSecondaryIndexes), want.BillingMode)
	}

	// No host: DynamoDB itself, in the URL's region, with no endpoint
	// of ours (the SDK's own for the region); nothing is called yet.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	real, err := Open(ctx, "dynamodb:///prod-?region=eu-west-2")
	if err != nil {
		t.Fatal(err)
	}
	o := real.api.(*dynamodb.Client).Options()
	if real.Table() != "prod-nextup" || o.Region != "eu-west-2" || o.BaseEndpoint != nil {
		t.Errorf("dynamodb:///prod-?region=eu-west-2: table %q, region %q, endpoint %v; want prod-nextup, eu-west-2, the SDK's",
			real.Table(), o.Region, aws.ToString(o.BaseEndpoint))
	}
	if c, err := o.Credentials.Retrieve(ctx); err != nil || c.AccessKeyID != "AKTEST" {
		t.Errorf("credentials %v %v; want the default chain's (the environment here)", c.AccessKeyID, err)
	}

	for _, bad := range []string{"postgres://x/y", "dynamodb//x", "::"} {
		if _, err := Open(ctx, bad); err == nil {
			t.Errorf("Open(%q): nil error", bad)
		}
	}
}
