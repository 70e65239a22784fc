package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// secrets are the deployment's keys, kept in one Secrets Manager secret
// (NEXTUP_SECRETS_ARN) as a JSON object. They are read once, when the
// container starts (newHandler), and kept for every invocation it serves:
// one GetSecretValue per cold start, not per request. A rotated value
// reaches a container when it next starts (deploy, or Lambda recycling
// it within hours).
type secrets struct {
	AdminToken          string `json:"admin_token"`
	StripeSecretKey     string `json:"stripe_secret_key"`
	StripeWebhookSecret string `json:"stripe_webhook_secret"`
	AnthropicAPIKey     string `json:"anthropic_api_key"`
}

// readSecrets reads the secret named id (an ARN or a name).
func readSecrets(ctx context.Context, sm *secretsmanager.Client, id string) (secrets, error) {
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &id})
	if err != nil {
		return secrets{}, fmt.Errorf("secrets manager: read %s: %w", id, err)
	}
	if out.SecretString == nil {
		return secrets{}, fmt.Errorf("secrets manager: %s holds no string (a JSON object of the keys is expected)", id)
	}
	var s secrets
	if err := json.Unmarshal([]byte(*out.SecretString), &s); err != nil {
		return secrets{}, fmt.Errorf("secrets manager: %s is not a JSON object of the keys: %w", id, err)
	}
	return s, nil
}
