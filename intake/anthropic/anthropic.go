// Package anthropic is the optional model-based reader of booking
// requests: the Anthropic Messages API (official Go SDK) is asked to fill
// in the same proposed row the deterministic parser (intake/parse) makes,
// through a tool whose JSON schema is that row, so the answer is
// structured, not prose. It is off unless configured, and it is only ever
// used on the inbox lane (proposals staff approve), never on the offer
// path.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/nextup-dev/nextup/intake/parse"
)

// DefaultModel is the model asked when none is configured.
const DefaultModel = "claude-sonnet-4-5"

// Parser reads requests with a model. Create it with New.
type Parser struct {
	client sdk.Client
	model  string
}

// New returns a Parser for an API key; baseURL, when set, points the SDK
// elsewhere (a local fake in tests, a proxy).
func New(apiKey, baseURL, model string) *Parser {
	opts := []option.RequestOption{option.WithAPIKey(apiKey), option.WithMaxRetries(0), option.WithRequestTimeout(10 * time.Second)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	if model == "" {
		model = DefaultModel
	}
	return &Parser{client: sdk.NewClient(opts...), model: model}
}

// Propose asks the model for the row. Its answer is checked against the
// business: a service or staff name not in the catalogue is dropped with a
// problem, times must carry an offset, confidences are clamped to 0..1.
func (p *Parser) Propose(ctx context.Context, in parse.Input, b parse.Business) (parse.Proposal, error) {
	system, user := parse.ModelPrompt(in, b)
	msg, err := p.client.Messages.New(ctx, sdk.MessageNewParams{
		Model: sdk.Model(p.model), MaxTokens: 1024,
		System:   []sdk.TextBlockParam{{Text: system}},
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(user))},
		Tools: []sdk.ToolUnionParam{sdk.ToolUnionParamOfTool(sdk.ToolInputSchemaParam{
			Properties: parse.ModelSchema["properties"], Required: parse.ModelRequired}, parse.ModelTool)},
		ToolChoice: sdk.ToolChoiceParamOfTool(parse.ModelTool),
	})
	if err != nil {
		return parse.Proposal{}, fmt.Errorf("anthropic: %w", err)
	}
	for _, c := range msg.Content {
		if c.Type != "tool_use" || c.Name != parse.ModelTool {
			continue
		}
		var r parse.ModelRow
		if err := json.Unmarshal(c.Input, &r); err != nil {
			return parse.Proposal{}, fmt.Errorf("anthropic: the row: %w", err)
		}
		return r.Proposal(b), nil
	}
	return parse.Proposal{}, errors.New("anthropic: the model did not propose a row")
}

// Narrate asks the model for a short paragraph (the monthly summary's
// narrative) from a system prompt and the facts it may use; its text
// blocks, joined, are the answer. The caller checks it (package insight).
func (p *Parser) Narrate(ctx context.Context, system, facts string) (string, error) {
	msg, err := p.client.Messages.New(ctx, sdk.MessageNewParams{
		Model: sdk.Model(p.model), MaxTokens: 400,
		System:   []sdk.TextBlockParam{{Text: system}},
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(facts))},
	})
	if err != nil {
		return "", fmt.Errorf("anthropic: %w", err)
	}
	var out []string
	for _, c := range msg.Content {
		if c.Type == "text" {
			out = append(out, c.Text)
		}
	}
	if len(out) == 0 {
		return "", errors.New("anthropic: the model wrote no text")
	}
	return strings.Join(out, "\n"), nil
}
