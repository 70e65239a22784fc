package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/anthropic"
	"github.com/nextup-dev/nextup/intake/parse"
)

// fake speaks the Messages API: it checks the request the official SDK
// makes (key, version header, the forced tool and its schema) and answers
// with a tool_use block carrying input.
func fake(t *testing.T, input string, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("X-Api-Key") != "sk-test" || r.Header.Get("Anthropic-Version") == "" {
			t.Errorf("headers %v", r.Header)
		}
		var body struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
			System    []struct{ Text string }
			Tools     []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"input_schema"`
			} `json:"tools"`
			ToolChoice struct{ Type, Name string } `json:"tool_choice"`
			Messages   []struct {
				Role    string
				Content []struct{ Type, Text string }
			}
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("body %s: %v", raw, err)
		}
		if len(body.Tools) != 1 || body.ToolChoice.Type != "tool" || body.ToolChoice.Name != body.Tools[0].Name ||
			body.Tools[0].InputSchema["type"] != "object" || body.MaxTokens == 0 || body.Model != "claude-test" {
			t.Errorf("request %s", raw)
		}
		if len(body.System) == 0 || !strings.Contains(body.System[0].Text, "Europe/London") || !strings.Contains(body.System[0].Text, "Haircut") ||
			len(body.Messages) != 1 || !strings.Contains(body.Messages[0].Content[0].Text, "a trim with Anna") {
			t.Errorf("prompt %s", raw)
		}
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use",
			"usage":{"input_tokens":10,"output_tokens":10},
			"content":[{"type":"tool_use","id":"toolu_1","name":"` + body.Tools[0].Name + `","input":` + input + `}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

var business = parse.Business{Country: "GB", Staff: []string{"Anna", "Ben"},
	Services: []nextup.Service{{Name: "Haircut", Synonyms: []string{"trim"}}, {Name: "Colour"}}}

func input() parse.Input {
	return parse.Input{Text: "Any chance of a trim with Anna next week?", FromName: "Sarah Jones", FromAddress: "sarah@example.com",
		Sent: time.Date(2026, 3, 5, 9, 14, 0, 0, time.UTC)}
}

func TestProposeThroughTheModel(t *testing.T) {
	t.Parallel()
	loc, _ := time.LoadLocation("Europe/London")
	b := business
	b.Location = loc
	srv := fake(t, `{"name":"Sarah Jones","email":"sarah@example.com","phone":"+447911123456","service":"haircut","party_size":1,
		"earliest":"2026-03-09T00:00:00Z","latest":"2026-03-13T23:59:59Z","staff":"anna","confidence":{"name":0.95,"service":1.7},
		"problems":[]}`, 200)
	p, err := anthropic.New("sk-test", srv.URL, "claude-test").Propose(context.Background(), input(), b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Sarah Jones" || p.Service != "Haircut" || p.Staff != "Anna" || p.Phone != "+447911123456" ||
		!p.Earliest.Equal(time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)) || p.Confidence["service"] != 1 || len(p.Problems) != 0 {
		t.Fatalf("proposal %+v", p)
	}
}

// What the model says is checked against the business: names outside the
// catalogue and malformed times are dropped with a problem; an API error
// is an error (the lane then reads the mail by the rules).
func TestProposeChecksTheModel(t *testing.T) {
	t.Parallel()
	srv := fake(t, `{"name":"Sarah","email":"","phone":"","service":"Perm","party_size":-2,"earliest":"next Monday","latest":"",
		"staff":"Zed","confidence":{},"problems":["no date"]}`, 200)
	loc, _ := time.LoadLocation("Europe/London")
	b := business
	b.Location = loc
	p, err := anthropic.New("sk-test", srv.URL, "claude-test").Propose(context.Background(), input(), b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Service != "" || p.Staff != "" || p.PartySize != 0 || !p.Earliest.IsZero() || len(p.Problems) != 4 {
		t.Fatalf("proposal %+v", p)
	}
	bad := fake(t, "", http.StatusBadRequest)
	if _, err := anthropic.New("sk-test", bad.URL, "claude-test").Propose(context.Background(), input(), b); err == nil {
		t.Fatal("an API error read as a row")
	}
}
