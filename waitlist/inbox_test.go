package waitlist_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/intake/anthropic"
	"github.com/nextup-dev/nextup/waitlist"
)

// The inbox lane reads a mail with the deterministic parser by default;
// with a model parser configured (the Anthropic adapter, against a local
// fake of the Messages API) it takes the model's row, and when the model
// does not answer it falls back to the rules and says so.
func TestReceiveMailParsers(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../intake/testdata/inbox/001.eml")
	if err != nil {
		t.Fatal(err)
	}
	mail := func(i int) []byte { // a distinct request each time
		return []byte(strings.Replace(string(raw), "Is there any chance", strings.Repeat("Hello! ", i)+"Is there any chance", 1))
	}
	b := setup(t, nil)
	country := "GB"
	services := []nextup.Service{{Name: "Haircut", Synonyms: []string{"trim"}}, {Name: "Colour"}}
	staff := []string{"Anna"}
	if _, err := b.svc.UpdateProfile(b.ctx, b.biz.ID, waitlist.ProfilePatch{Country: &country, Services: &services, Staff: &staff}); err != nil {
		t.Fatal(err)
	}
	p, _, err := b.svc.ReceiveMail(b.ctx, b.biz.ID, mail(0))
	if err != nil || p.Fields.Name != "Sarah Jones" || p.Fields.Service != "Haircut" || p.Fields.Staff != "Anna" {
		t.Fatalf("by the rules: %+v %v", p.Fields, err)
	}
	answer := `{"name":"S. Jones (model)","email":"sarah.jones84@gmail.com","phone":"","service":"Colour","party_size":1,
		"earliest":"","latest":"","staff":"","confidence":{"name":0.9},"problems":["the model is unsure of the date"]}`
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"id":"m","type":"message","role":"assistant","model":"x","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
			"content":[{"type":"tool_use","id":"t","name":"propose_waitlist_row","input":` + answer + `}]}`))
	}))
	defer srv.Close()
	b.svc.MailParser = anthropic.New("sk-test", srv.URL, "claude-test")
	p, _, err = b.svc.ReceiveMail(b.ctx, b.biz.ID, mail(1))
	if err != nil || p.Fields.Name != "S. Jones (model)" || p.Fields.Service != "Colour" || p.Problems[0] != "the model is unsure of the date" {
		t.Fatalf("by the model: %+v %v %v", p.Fields, p.Problems, err)
	}
	status = http.StatusBadRequest
	p, _, err = b.svc.ReceiveMail(b.ctx, b.biz.ID, mail(2))
	if err != nil || p.Fields.Name != "Sarah Jones" || !strings.Contains(strings.Join(p.Problems, ";"), "read by the rules") {
		t.Fatalf("the model failing: %+v %v %v", p.Fields, p.Problems, err)
	}
}
