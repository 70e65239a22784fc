package bedrock_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/aws/intake/bedrock"
	"github.com/nextup-dev/nextup/intake/parse"
)

// The official SDK against a local fake of the Converse API: the request
// is signed (SigV4) and forces the row's tool; the toolUse answer becomes
// the row, checked against the business.
func TestConverse(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/model/") || !strings.HasSuffix(r.URL.Path, "/converse") {
			http.NotFound(w, r)
			return
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKTEST/") {
			t.Errorf("not signed: %q", r.Header.Get("Authorization"))
		}
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			ToolConfig struct {
				Tools      []map[string]any
				ToolChoice map[string]map[string]string
			} `json:"toolConfig"`
			Messages []struct{ Content []struct{ Text string } }
		}
		if err := json.Unmarshal(raw, &body); err != nil || len(body.ToolConfig.Tools) != 1 ||
			body.ToolConfig.ToolChoice["tool"]["name"] != parse.ModelTool || !strings.Contains(body.Messages[0].Content[0].Text, "trim") {
			t.Errorf("request %s (%v)", raw, err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"` + parse.ModelTool + `",
			"input":{"name":"Sarah Jones","email":"sarah@example.com","phone":"+447911123456","service":"haircut","party_size":1,
			"earliest":"2026-03-09T00:00:00Z","latest":"","staff":"Nobody","confidence":{"name":0.9},"problems":[]}}}]}},
			"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`))
	}))
	defer srv.Close()
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKTEST", "secret", "")})
	p := &bedrock.Parser{Client: client, ModelID: "anthropic.claude-test"}
	b := parse.Business{Country: "GB", Staff: []string{"Anna"}, Services: []nextup.Service{{Name: "Haircut", Synonyms: []string{"trim"}}}}
	got, err := p.Propose(context.Background(), parse.Input{Text: "a trim next week?", Sent: time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC)}, b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Sarah Jones" || got.Service != "Haircut" || got.Staff != "" || len(got.Problems) != 1 ||
		!got.Earliest.Equal(time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("proposal %+v", got)
	}
}

// Narrate through the official SDK against the local fake: a Converse
// request with the facts and no tools, its text answer returned.
func TestNarrate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			System     []struct{ Text string }
			ToolConfig *struct{} `json:"toolConfig"`
			Messages   []struct{ Content []struct{ Text string } }
		}
		if err := json.Unmarshal(raw, &body); err != nil || body.ToolConfig != nil || len(body.System) != 1 ||
			!strings.Contains(body.Messages[0].Content[0].Text, "slots freed: 19") || !strings.HasSuffix(r.URL.Path, "/converse") {
			t.Errorf("request %s %s (%v)", r.URL.Path, raw, err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"output":{"message":{"role":"assistant","content":[{"text":"You won back 14 of 19 slots."}]}},
			"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`))
	}))
	defer srv.Close()
	client := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKTEST", "secret", "")})
	p := &bedrock.Parser{Client: client, ModelID: "anthropic.claude-test"}
	got, err := p.Narrate(context.Background(), "Write a paragraph.", "slots freed: 19\nfilled: 14")
	if err != nil || got != "You won back 14 of 19 slots." {
		t.Fatalf("Narrate = %q, %v", got, err)
	}
}
