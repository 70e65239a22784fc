package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// secretsServer stands in for AWS Secrets Manager: GetSecretValue in the
// service's JSON wire format (awsJson1_1), for the official client. It
// counts the reads.
func secretsServer(t *testing.T, arn, value string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"InvalidAction","Message":"not GetSecretValue"}`))
			return
		}
		var in struct{ SecretId string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SecretId != arn {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"ResourceNotFoundException","Message":"Secrets Manager can't find the specified secret."}`))
			return
		}
		reads.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"ARN": arn, "Name": "nextup", "SecretString": value,
			"VersionId": "v1", "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": 1.7e9})
	}))
	t.Cleanup(srv.Close)
	return srv, &reads
}

// TestSecretsReadOncePerContainer: the keys come from Secrets Manager when
// the container starts and serve every invocation after it: the admin
// token from the secret opens the admin routes, the one in the
// environment does not, and however many requests come the secret is
// read once.
func TestSecretsReadOncePerContainer(t *testing.T) {
	s := newStack(t)
	arn := "arn:aws:secretsmanager:us-east-1:123456789012:secret:nextup-AbCdEf"
	srv, reads := secretsServer(t, arn, `{"admin_token":"from-the-secret","stripe_secret_key":""}`)
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	f, _ := s.function(t, func(c *config) { c.SecretsARN = arn })
	for range 3 {
		f.json("POST", "/v1/businesses", "from-the-secret", `{"name":"Secret Cuts","timezone":"Europe/London"}`, 201)
	}
	if code, _ := f.url("POST", "/v1/businesses", "adm", `{"name":"Env Cuts","timezone":"Europe/London"}`); code != 401 {
		t.Errorf("the environment's token: %d, want 401 (the secret's holds)", code)
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("the secret was read %d times for one container, want 1", n)
	}
	// No Stripe key in the secret: payments are off.
	if code, _ := f.url("POST", "/v1/payments/stripe", "", `{}`); code != 404 {
		t.Errorf("the Stripe webhook without a key: %d, want 404", code)
	}

	// A second container reads it again.
	s.function(t, func(c *config) { c.SecretsARN = arn })
	if n := reads.Load(); n != 2 {
		t.Errorf("two containers read the secret %d times, want 2", n)
	}

	// The Stripe keys in the secret turn payments on: the webhook is
	// there, and checks its signature with the secret's signing key.
	arn2 := arn + "-stripe"
	srv2, _ := secretsServer(t, arn2, `{"admin_token":"x","stripe_secret_key":"sk_test_123","stripe_webhook_secret":"whsec_test"}`)
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv2.URL)
	paid, _ := s.function(t, func(c *config) { c.SecretsARN = arn2 })
	if code, body := paid.url("POST", "/v1/payments/stripe", "", `{}`); code != 400 || !strings.Contains(body, "signature") {
		t.Errorf("the Stripe webhook unsigned, with a key: %d %s, want 400 bad signature", code, body)
	}

	// A secret that is not there stops the container at its start.
	_, err := newHandler(t.Context(), func() config { c := s.config(); c.SecretsARN = arn + "-missing"; return c }())
	if err == nil || !strings.Contains(err.Error(), "secrets manager") {
		t.Errorf("a missing secret: %v", err)
	}
}
