package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup/web"
)

// TestHostileInput keeps the outside probe's battery in the repository and
// makes it cover every operation openapi.json lists: each is sent what a
// broken or hostile client would send — no credentials, a forged key,
// another business's key, ids that are path tricks, injections, huge or
// not ids at all, query values that are not values, bodies that are not
// JSON, the wrong JSON, fields of the wrong type or out of range, and a
// body over the limit — to the real server on a real store (through the
// contract check of webtest, which also fails a refused request that
// succeeds). Nothing answers 5xx, every API refusal is problem+json with a
// code, and the store holds after each request exactly what it held
// before it. The log gives the table of statuses by count.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	a := setup(t, func(ws *web.Server) {
		ws.Metrics, ws.DevOutbox = web.NewMetrics(ws.Store), "biz_none"
		// The SMS webhooks on, as in production; no probe here holds a
		// valid Twilio signature.
		ws.SMSSignature = func(string, map[string]string, string) bool { return false }
	})
	var other map[string]any
	a.must(a.do("POST", "/v1/businesses", adminToken, `{"name":"Other","timezone":"UTC"}`), 201, &other)
	otherKey := other["api_key"].(string)
	ids := hostileWorld(t, a)

	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
		Comps struct {
			Schemas    map[string]json.RawMessage `json:"schemas"`
			Parameters map[string]json.RawMessage `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(web.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	type probe struct{ kind, method, path, key, ctype, body string }
	var probes []probe
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := doc.Paths[p][m]
			if !ok {
				continue
			}
			var op struct {
				Security    *[]map[string][]string `json:"security"`
				Parameters  []json.RawMessage      `json:"parameters"`
				RequestBody *struct {
					Required bool `json:"required"`
					Content  map[string]struct {
						Schema json.RawMessage `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			method := strings.ToUpper(m)
			real := fillPath(p, ids, "")
			if !strings.HasPrefix(p, "/v1/") || op.Security == nil || len(*op.Security) > 0 {
				// Keyed (or a page, whose tokens are forged below anyway).
				probes = append(probes,
					probe{"no credentials", method, real, "", "application/json", `{}`},
					probe{"a forged key", method, real, "nu_live_forgedforgedforgedforged", "application/json", `{}`},
					probe{"another business's key", method, real, otherKey, "application/json", `{}`})
			}
			for _, v := range hostileIDs {
				if strings.Contains(p, "{") {
					probes = append(probes, probe{"hostile id", method, fillPath(p, ids, v), a.key, "application/json", `{}`})
				}
			}
			if p != "/v1/debug/clock" { // mounted only under --clock=fake: 404 to every method here
				probes = append(probes, probe{"unknown method", "PROPFIND", real, a.key, "", ""})
			}
			for _, name := range queryParams(op.Parameters, doc.Comps.Parameters) {
				for _, v := range []string{"9999-99-99", "-1", "<script>alert(1)</script>", "' OR 1=1--", "%00", strings.Repeat("x", 3000)} {
					probes = append(probes, probe{"hostile query", method, real + sep(real) + url.QueryEscape(name) + "=" + url.QueryEscape(v), a.key, "application/json", `{}`})
				}
			}
			if op.RequestBody == nil {
				continue
			}
			key := a.key
			if p == "/v1/businesses" || p == "/v1/debug/clock" {
				key = adminToken
			}
			for ct, body := range op.RequestBody.Content {
				if ct != "application/json" {
					probes = append(probes,
						probe{"body of the wrong kind", method, real, key, ct, "\xff\xfe\x00{not " + ct},
						probe{"body over the limit", method, real, key, ct, strings.Repeat("a", 9<<10)})
					continue
				}
				for _, b := range hostileBodies {
					if b == "" && !op.RequestBody.Required {
						continue // no body is a request the operation takes
					}
					probes = append(probes, probe{"body not the object", method, real, key, ct, b})
				}
				probes = append(probes, probe{"body over the limit", method, real, key, ct, `{"x":"` + strings.Repeat("a", 9<<10) + `"}`})
				for name, typ := range bodyProps(t, body.Schema, doc.Comps.Schemas) {
					for _, v := range hostileValues(typ) {
						probes = append(probes, probe{"field of the wrong type or range", method, real, key, ct, `{"` + name + `":` + v + `}`})
					}
				}
			}
		}
	}

	statuses := map[int]int{}
	accepted := map[string]int{}
	before := a.fingerprint()
	for _, pr := range probes {
		req, err := http.NewRequest(pr.method, a.srv.URL+pr.path, strings.NewReader(pr.body))
		if err != nil {
			t.Fatalf("%s %s: %v", pr.method, pr.path, err)
		}
		if pr.key != "" {
			req.Header.Set("Authorization", "Bearer "+pr.key)
		}
		if pr.ctype != "" {
			req.Header.Set("Content-Type", pr.ctype)
		}
		r := a.send(req)
		statuses[r.status]++
		what := fmt.Sprintf("%s: %s %.120s %.80q", pr.kind, pr.method, pr.path, pr.body)
		switch {
		case r.status >= 500:
			t.Errorf("%s answered %d: %.300s", what, r.status, r.body)
		case r.status >= 400 && strings.HasPrefix(req.URL.Path, "/v1/"):
			var p struct {
				Code   string `json:"code"`
				Status int    `json:"status"`
			}
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") || json.Unmarshal(r.body, &p) != nil || p.Code == "" || p.Status != r.status {
				t.Errorf("%s answered %d, not a problem with a code: %.300s", what, r.status, r.body)
			}
		case r.status < 400:
			accepted[pr.kind+" "+pr.method]++
			if pr.method != "GET" {
				t.Errorf("%s answered %d: a write this broken must be refused", what, r.status)
			}
		}
		if after := a.fingerprint(); after != before {
			t.Fatalf("%s answered %d and changed the store: %.300s", what, r.status, r.body)
		}
	}
	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var table strings.Builder
	fmt.Fprintf(&table, "%d hostile requests over %d operations; status by count:\n", len(probes), countOps(doc.Paths))
	for _, c := range codes {
		fmt.Fprintf(&table, "  %d %-22s %5d\n", c, http.StatusText(c), statuses[c])
	}
	fmt.Fprintf(&table, "  5xx: 0 allowed; state changes: 0 allowed; answered < 400 (reads, and pages that show an error): %v", accepted)
	t.Log(table.String())
	if len(probes) < 1000 {
		t.Errorf("only %d probes: the document's operations were not all read", len(probes))
	}
}

// hostileIDs stand in for every path parameter: traversal, NUL, an
// injection, markup, a right-to-left override, a number too big, and an
// id far too long.
var hostileIDs = []string{
	"..%2F..%2Fetc%2Fpasswd", "%00", "'%20OR%201=1--", "%3Cscript%3E", "%E2%80%AE", "-1",
	"99999999999999999999999", strings.Repeat("a", 4096),
}

// hostileBodies are JSON request bodies that are not the object asked for.
var hostileBodies = []string{
	"", "not json", "{", `{"a":1}{"b":2}`, "[]", `"text"`, "1e999", "null", `{"unknown_field":1}`,
	strings.Repeat("[", 100000), `{"name":"\ud800"}`, "{\"name\":\"\xff\xfe\"}",
}

// hostileValues are values of the wrong type, or of the right type out of
// range, for a field of type typ ("" when the schema gives none).
func hostileValues(typ string) []string {
	vs := []string{`[[[]]]`, `{"$ne":null}`}
	switch typ {
	case "integer", "number":
		vs = append(vs, "-1", "9223372036854775808", "1.5", `"12"`, "-1e300")
	case "string":
		vs = append(vs, `"\u0000"`, `"a\u202Eb"`, `"\u001b[2J"`, "12", "true")
	case "boolean":
		vs = append(vs, `"yes"`, "1")
	case "array":
		vs = append(vs, `{}`, `"a"`, `[null]`)
	case "object":
		vs = append(vs, `[]`, `"a"`)
	}
	return vs
}

// hostileWorld gives the test's business something behind each kind of
// id — a booked slot, an entry, an offer taken and its booking, an event with
// a registration — and returns the values path parameters take. Tokens
// are forged: a real one lets anyone act, as it should.
func hostileWorld(t *testing.T, a *api) map[string]string {
	sid := a.slot(chair)["id"].(string)
	entryID, offerID, bookingID := annTakesASecondChair(t, a)
	var ev, reg map[string]any
	a.must(a.do("POST", "/v1/businesses/"+a.bid+"/events", a.key, `{"title":"Pottery night","starts_at":"2026-12-10T18:00:00Z","ends_at":"2026-12-10T21:00:00Z","capacity":10}`), 201, &ev)
	evID := ev["id"].(string)
	a.must(a.do("POST", "/v1/events/"+evID+"/registrations", a.key, `{"name":"Cy","email":"cy@example.com"}`), 201, &reg)
	return map[string]string{
		"bid": a.bid, "sid": sid, "eid": entryID, "oid": offerID,
		"events": evID, "rid": reg["id"].(string), "n": "1", "month": "2026-11", "vid": "1",
		"contact": "ann%40example.com", "do": "approve", "hid": "hb_none", "mid": "msg_1",
		"jobs": "job_none", "proposals": "prp_none", "bookings": bookingID,
		"token": "tok_forgedforgedforgedforged",
	}
}

var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// fillPath fills a path template's parameters from ids ({id} by the
// collection before it), or every one with hostile when it is not empty.
func fillPath(p string, ids map[string]string, hostile string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		parts[i] = pathParam.ReplaceAllStringFunc(part, func(m string) string {
			if hostile != "" {
				return hostile
			}
			name := strings.Trim(m, "{}")
			if name == "id" && i > 0 {
				name = parts[i-1]
			}
			if v, ok := ids[name]; ok {
				return v
			}
			return "none"
		})
	}
	return strings.Join(parts, "/")
}

// queryParams lists an operation's query parameter names, $refs resolved.
func queryParams(params []json.RawMessage, comps map[string]json.RawMessage) []string {
	var names []string
	for _, raw := range params {
		var p struct {
			Ref  string `json:"$ref"`
			Name string `json:"name"`
			In   string `json:"in"`
		}
		_ = json.Unmarshal(raw, &p)
		if p.Ref != "" {
			_ = json.Unmarshal(comps[strings.TrimPrefix(p.Ref, "#/components/parameters/")], &p)
		}
		if p.In == "query" {
			names = append(names, p.Name)
		}
	}
	return names
}

// bodyProps gives a request schema's properties and their types, $refs and
// allOf resolved.
func bodyProps(t *testing.T, raw json.RawMessage, schemas map[string]json.RawMessage) map[string]string {
	var s struct {
		Ref        string            `json:"$ref"`
		AllOf      []json.RawMessage `json:"allOf"`
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	if s.Ref != "" {
		return bodyProps(t, schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")], schemas)
	}
	for _, sub := range s.AllOf {
		for k, v := range bodyProps(t, sub, schemas) {
			props[k] = v
		}
	}
	for k, v := range s.Properties {
		switch typ := v.Type.(type) {
		case string:
			props[k] = typ
		case []any: // ["string","null"]
			if len(typ) > 0 {
				props[k], _ = typ[0].(string)
			}
		default:
			props[k] = ""
		}
	}
	return props
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

func countOps(paths map[string]map[string]json.RawMessage) int {
	n := 0
	for _, ms := range paths {
		for m := range ms {
			if slices.Contains([]string{"get", "post", "put", "patch", "delete"}, m) {
				n++
			}
		}
	}
	return n
}
