package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// TableDefinition is the table, its indexes and its billing mode: the one
// definition Migrate creates and the infrastructure template declares
// (doc.go, "Table").
func TableDefinition(table string) *dynamodb.CreateTableInput {
	attrs := []types.AttributeDefinition{{AttributeName: aws.String(attrPK), AttributeType: types.ScalarAttributeTypeS}}
	var gsis []types.GlobalSecondaryIndex
	for _, g := range indexes {
		attrs = append(attrs,
			types.AttributeDefinition{AttributeName: aws.String(g + "pk"), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String(g + "sk"), AttributeType: types.ScalarAttributeTypeS})
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName: aws.String(g),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(g + "pk"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(g + "sk"), KeyType: types.KeyTypeRange},
			},
			// Keys only: a hit is read again from the base table
			// (strongly consistent) before it is used.
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		})
	}
	return &dynamodb.CreateTableInput{
		TableName:              aws.String(table),
		AttributeDefinitions:   attrs,
		KeySchema:              []types.KeySchemaElement{{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: gsis,
		BillingMode:            types.BillingModePayPerRequest,
	}
}

// Migrate creates the table when it does not exist, waits until it is
// active and turns on expiry by the ttl attribute (also on a table that
// exists without it: a Migrate that stopped between the two). It changes
// nothing else of a table that exists, and several instances may run it
// at once.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
	case !errors.As(err, &nf):
		return fmt.Errorf("dynamodb: describe table %s: %w", s.table, err)
	default:
		if _, err := s.api.CreateTable(ctx, TableDefinition(s.table)); err != nil {
			var inUse *types.ResourceInUseException
			if !errors.As(err, &inUse) {
				return fmt.Errorf("dynamodb: create table %s: %w", s.table, err)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		out, err := s.api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
		if err == nil && out.Table != nil && out.Table.TableStatus == types.TableStatusActive {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dynamodb: table %s is not active after 5 minutes (%v)", s.table, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	ttl, err := s.api.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &s.table})
	if err != nil {
		return fmt.Errorf("dynamodb: expiry of table %s: %w", s.table, err)
	}
	if d := ttl.TimeToLiveDescription; d != nil && (d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = s.api.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &s.table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attrTTL), Enabled: aws.Bool(true)},
	})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" && strings.Contains(strings.ToLower(ae.ErrorMessage()), "already enabled") {
		return nil // another instance turned it on meanwhile
	}
	if err != nil {
		return fmt.Errorf("dynamodb: turn on expiry of table %s: %w", s.table, err)
	}
	return nil
}
