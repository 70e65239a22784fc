// Package bedrock is the model-based reader of booking requests on Amazon
// Bedrock's Converse API (aws-sdk-go-v2 bedrockruntime): the same tool and
// row as intake/anthropic (parse.ModelSchema), checked the same way; and
// the writer of the monthly summary's narrative, as intake/anthropic is. It
// lives in the AWS module (github.com/nextup-dev/nextup/aws), so the
// default binary carries no AWS SDK; aws/cmd/nextup-aws wires it in.
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/nextup-dev/nextup/intake/parse"
)

// Parser reads requests with a Bedrock model.
type Parser struct {
	Client  *bedrockruntime.Client
	ModelID string // e.g. "anthropic.claude-3-5-sonnet-20240620-v1:0"
}

// Propose asks the model for the row.
func (p *Parser) Propose(ctx context.Context, in parse.Input, b parse.Business) (parse.Proposal, error) {
	system, user := parse.ModelPrompt(in, b)
	out, err := p.Client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(p.ModelID),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: system}},
		Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: user}}}},
		ToolConfig: &types.ToolConfiguration{
			Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String(parse.ModelTool),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(parse.ModelSchema)}}}},
			ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(parse.ModelTool)}},
		},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(1024)},
	})
	if err != nil {
		return parse.Proposal{}, fmt.Errorf("bedrock: %w", err)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return parse.Proposal{}, errors.New("bedrock: no message in the answer")
	}
	for _, c := range msg.Value.Content {
		tu, ok := c.(*types.ContentBlockMemberToolUse)
		if !ok || aws.ToString(tu.Value.Name) != parse.ModelTool || tu.Value.Input == nil {
			continue
		}
		var r parse.ModelRow
		if err := tu.Value.Input.UnmarshalSmithyDocument(&r); err != nil {
			return parse.Proposal{}, fmt.Errorf("bedrock: the row: %w", err)
		}
		return r.Proposal(b), nil
	}
	return parse.Proposal{}, errors.New("bedrock: the model did not propose a row")
}

// Narrate asks the model for a short paragraph (the monthly summary's
// narrative) from a system prompt and the facts it may use: Converse with
// no tools, its text blocks joined. The caller checks it (package insight).
func (p *Parser) Narrate(ctx context.Context, system, facts string) (string, error) {
	out, err := p.Client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(p.ModelID),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: system}},
		Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: facts}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(400)},
	})
	if err != nil {
		return "", fmt.Errorf("bedrock: %w", err)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return "", errors.New("bedrock: no message in the answer")
	}
	var parts []string
	for _, c := range msg.Value.Content {
		if t, ok := c.(*types.ContentBlockMemberText); ok {
			parts = append(parts, t.Value)
		}
	}
	if len(parts) == 0 {
		return "", errors.New("bedrock: the model wrote no text")
	}
	return strings.Join(parts, "\n"), nil
}
