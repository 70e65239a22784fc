package parse

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The model parsers (intake/anthropic, aws/intake/bedrock) ask a model to
// call one tool whose input is this row, and check what it says here, so
// every model reads requests into the same Proposal as Propose does.

// ModelTool is the name of the tool a model must call with the row.
const ModelTool = "propose_waitlist_row"

// ModelRequired lists the row's fields a model must give.
var ModelRequired = []string{"name", "email", "phone", "service", "party_size", "earliest", "latest", "staff", "confidence", "problems"}

// ModelSchema is the tool's input JSON schema.
var ModelSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":       map[string]any{"type": "string", "description": "the requester's name, as they sign; empty if unknown"},
		"email":      map[string]any{"type": "string", "description": "the requester's email address; empty if none"},
		"phone":      map[string]any{"type": "string", "description": "the requester's phone number in E.164 (+447911123456), the business's country by default; empty if none"},
		"service":    map[string]any{"type": "string", "description": "exactly one of the business's service names, or empty"},
		"party_size": map[string]any{"type": "integer", "description": "how many people the booking is for; 1 if not said"},
		"earliest":   map[string]any{"type": "string", "description": "RFC 3339 time with offset of the earliest acceptable start, in the business timezone; empty if none"},
		"latest":     map[string]any{"type": "string", "description": "RFC 3339 time with offset of the latest acceptable start; empty if none"},
		"staff":      map[string]any{"type": "string", "description": "exactly one of the business's staff names the requester asks for, or empty"},
		"confidence": map[string]any{"type": "object", "description": "0 to 1 per field name", "additionalProperties": map[string]any{"type": "number"}},
		"problems":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "what staff should check, in plain words"},
	},
	"required": ModelRequired,
}

// ModelPrompt is the system prompt and the user message of a request.
func ModelPrompt(in Input, b Business) (system, user string) {
	loc := b.Location
	if loc == nil {
		loc = time.UTC
	}
	var services []string
	for _, s := range b.Services {
		if len(s.Synonyms) == 0 {
			services = append(services, s.Name)
			continue
		}
		services = append(services, s.Name+" (also: "+strings.Join(s.Synonyms, ", ")+")")
	}
	system = fmt.Sprintf("You read booking requests for a business's waitlist and call %s with what the requester asked for. "+
		"Timezone: %s. Country for phone numbers: %s. Services: %s. Staff: %s. The request was written at %s; "+
		"read relative dates from then. Leave a field empty rather than guess, and say what is unclear in problems.",
		ModelTool, loc, b.Country, strings.Join(services, "; "), strings.Join(b.Staff, ", "), in.Sent.In(loc).Format(time.RFC3339))
	user = fmt.Sprintf("From: %s <%s>\nSubject: %s\n\n%s\n\n%s", in.FromName, in.FromAddress, in.Subject, in.Text, in.Signature)
	return system, user
}

// ModelRow is the tool's input: the row as a model proposes it.
type ModelRow struct {
	Name       string             `json:"name"`
	Email      string             `json:"email"`
	Phone      string             `json:"phone"`
	Service    string             `json:"service"`
	PartySize  int                `json:"party_size"`
	Earliest   string             `json:"earliest"`
	Latest     string             `json:"latest"`
	Staff      string             `json:"staff"`
	Confidence map[string]float64 `json:"confidence"`
	Problems   []string           `json:"problems"`
}

// Proposal checks a model's row against the business: a service or staff
// name not in the catalogue is dropped with a problem, times must carry an
// offset, a window must not end before it starts, confidences are clamped
// to 0..1.
func (r ModelRow) Proposal(b Business) Proposal {
	out := Proposal{Name: strings.TrimSpace(r.Name), Email: strings.TrimSpace(r.Email), Phone: strings.TrimSpace(r.Phone),
		PartySize: max(r.PartySize, 0), Confidence: map[string]float64{}, Problems: r.Problems}
	for k, v := range r.Confidence {
		out.Confidence[k] = min(max(v, 0), 1)
	}
	for _, s := range b.Services {
		if strings.EqualFold(s.Name, strings.TrimSpace(r.Service)) {
			out.Service = s.Name
		}
	}
	if out.Service == "" && r.Service != "" {
		out.Problems = append(out.Problems, fmt.Sprintf("the model named a service %q that is not in the catalogue", r.Service))
	}
	if i := slices.IndexFunc(b.Staff, func(s string) bool { return strings.EqualFold(s, strings.TrimSpace(r.Staff)) }); i >= 0 {
		out.Staff = b.Staff[i]
	} else if r.Staff != "" {
		out.Problems = append(out.Problems, fmt.Sprintf("the model named staff %q who is not on the team", r.Staff))
	}
	for _, t := range []struct {
		raw string
		dst *time.Time
	}{{r.Earliest, &out.Earliest}, {r.Latest, &out.Latest}} {
		if t.raw == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, t.raw)
		if err != nil {
			out.Problems = append(out.Problems, fmt.Sprintf("the model gave a time %q that is not RFC 3339", t.raw))
			continue
		}
		*t.dst = v
	}
	if !out.Earliest.IsZero() && !out.Latest.IsZero() && out.Latest.Before(out.Earliest) {
		out.Earliest, out.Latest = time.Time{}, time.Time{}
		out.Problems = append(out.Problems, "the model's window ends before it starts")
	}
	return out
}
