// Package webtest holds the API contract to what the server does in tests:
// every request a test sends and every response it gets back — success or
// error — is checked against the OpenAPI document the server publishes
// (web/openapi.json), so that the document cannot drift from the server.
//
// Wrap the handler of an httptest server with Handler, or the transport of
// a client of a server in another process with Transport; a mismatch fails
// the test with what did not match.
//
// The checks, per exchange:
//
//   - The path and method are found in the document; a path it does not
//     have answers 404 problem+json (not_found), a method it does not have
//     405 problem+json (method_not_allowed) with an Allow header listing
//     the methods the document has for the path. The staff dashboard and
//     the join form (Unlisted) are pages outside the contract.
//   - The response's status is one the operation lists, with a declared
//     content type, headers and a body that matches the schema. Response
//     objects are held closed for the check (additionalProperties: false
//     wherever the document lists properties), so a field the server sends
//     and the document does not name fails too; the published document
//     leaves them open, because clients must tolerate new fields.
//   - The request is checked too: a request the document refuses (a bad
//     body, a missing parameter or Authorization) must not succeed.
//
// The validator is github.com/getkin/kin-openapi (openapi3filter), which
// validates OpenAPI 3.1 documents with JSON Schema 2020-12.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/nextup-dev/nextup/web"
)

// Unlisted are the path prefixes of pages outside the API contract: the
// staff dashboard behind its sign-in, the public join form and the
// public event pages with their RSVP form, and the pages' scripts and
// style sheets (/static). Their exchanges are not checked.
var Unlisted = []string{"/login", "/logout", "/reset", "/dash", "/b", "/e", "/static"}

func init() {
	// Bodies that are text to the contract: only their type is declared.
	for _, ct := range []string{"text/html", "text/calendar", "text/xml", "message/rfc822",
		"application/csv", "text/tab-separated-values", "application/vnd.ms-excel"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

// Contract is the loaded document, ready to check exchanges.
type Contract struct {
	doc   *openapi3.T
	paths []string // the document's path templates
}

var load = sync.OnceValues(func() (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(web.OpenAPIDocument())
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid OpenAPI document: %w", err)
	}
	c := &Contract{doc: doc}
	for path := range doc.Paths.Map() {
		c.paths = append(c.paths, path)
	}
	slices.Sort(c.paths)
	closeResponses(doc)
	return c, nil
})

// Load returns the contract (loaded once per process).
func Load() (*Contract, error) { return load() }

// closeResponses sets additionalProperties: false on every object schema
// a response uses that lists its properties and says nothing about others
// — except the members of an allOf, which must stay open for the other
// members' properties (the document uses allOf only to narrow a problem's
// code).
func closeResponses(doc *openapi3.T) {
	inAllOf := map[*openapi3.Schema]bool{}
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef, func(*openapi3.Schema))
	walk = func(ref *openapi3.SchemaRef, visit func(*openapi3.Schema)) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		visit(s)
		for _, p := range s.Properties {
			walk(p, visit)
		}
		walk(s.Items, visit)
		walk(s.AdditionalProperties.Schema, visit)
		for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for _, m := range list {
				walk(m, visit)
			}
		}
	}
	responseSchemas := func(visit func(*openapi3.Schema)) {
		clear(seen)
		for _, item := range doc.Paths.Map() {
			for _, op := range item.Operations() {
				for _, r := range op.Responses.Map() {
					for _, mt := range r.Value.Content {
						walk(mt.Schema, visit)
					}
				}
			}
		}
	}
	responseSchemas(func(s *openapi3.Schema) {
		for _, m := range s.AllOf {
			inAllOf[m.Value] = true
		}
	})
	responseSchemas(func(s *openapi3.Schema) {
		if len(s.Properties) > 0 && !inAllOf[s] && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			closed := false
			s.AdditionalProperties.Has = &closed
		}
	})
}

// Exchange is one request and the response it got.
type Exchange struct {
	Method    string
	URL       *url.URL
	ReqHeader http.Header
	ReqBody   []byte
	Status    int
	Header    http.Header
	Body      []byte
}

func (ex Exchange) String() string {
	return fmt.Sprintf("%s %s → %d %s", ex.Method, ex.URL.RequestURI(), ex.Status, ex.Header.Get("Content-Type"))
}

// unlisted reports whether path is a page outside the contract (or the
// front door, exactly "/").
func unlisted(path string) bool {
	return path == "/" || slices.ContainsFunc(Unlisted, func(p string) bool { return path == p || strings.HasPrefix(path, p+"/") })
}

// route finds the document's path template for path and its parameters,
// matching as the server does: "{x}" is one segment without a colon (no
// id or token has one), "{x}:verb" is "id:verb", anything else is itself.
func (c *Contract) route(path string) (string, map[string]string) {
	segs := strings.Split(path, "/")
	for _, tmpl := range c.paths {
		pat := strings.Split(tmpl, "/")
		if len(pat) != len(segs) {
			continue
		}
		params := map[string]string{}
		ok := true
		for i, p := range pat {
			seg, err := url.PathUnescape(segs[i])
			if err != nil {
				seg = segs[i]
			}
			open, close := strings.Index(p, "{"), strings.Index(p, "}")
			switch {
			case open == 0 && close == len(p)-1:
				ok = seg != "" && !strings.Contains(seg, ":")
				params[p[1:close]] = seg
			case open == 0 && close > 0:
				verb := p[close+1:] // ":release"
				id, found := strings.CutSuffix(seg, verb)
				ok = found && id != "" && !strings.Contains(id, ":")
				params[p[1:close]] = id
			default:
				ok = p == seg
			}
			if !ok {
				break
			}
		}
		if ok {
			return tmpl, params
		}
	}
	return "", nil
}

// Check checks one exchange against the contract.
func (c *Contract) Check(ctx context.Context, ex Exchange) error {
	if unlisted(ex.URL.Path) {
		return nil
	}
	// Matched on the path as sent, each segment unescaped on its own, as
	// the server's mux does: an id holding %2F is one segment.
	tmpl, params := c.route(ex.URL.EscapedPath())
	if tmpl == "" {
		return c.checkProblem(ex, http.StatusNotFound, "not_found", "")
	}
	item := c.doc.Paths.Value(tmpl)
	method := ex.Method
	if method == http.MethodHead && item.Get != nil {
		method = http.MethodGet
	}
	op := item.GetOperation(method)
	if op == nil {
		var allow []string
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
			if item.GetOperation(m) != nil || m == "HEAD" && item.Get != nil {
				allow = append(allow, m)
			}
		}
		return c.checkProblem(ex, http.StatusMethodNotAllowed, "method_not_allowed", strings.Join(allow, ", "))
	}

	req, err := http.NewRequestWithContext(ctx, ex.Method, ex.URL.String(), bytes.NewReader(ex.ReqBody))
	if err != nil {
		return err
	}
	req.Header = ex.ReqHeader.Clone()
	if req.Header.Get("Content-Type") == "" && len(ex.ReqBody) > 0 && op.RequestBody != nil && op.RequestBody.Value.Content.Get("application/json") != nil {
		// The server reads a JSON body whatever its Content-Type says.
		req.Header.Set("Content-Type", "application/json")
	}
	route := &routers.Route{Spec: c.doc, Path: tmpl, PathItem: item, Method: method, Operation: op}
	reqIn := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, SkipSettingDefaults: true, AuthenticationFunc: bearerPresent}}
	reqErr := openapi3filter.ValidateRequest(ctx, reqIn)

	resIn := &openapi3filter.ResponseValidationInput{RequestValidationInput: reqIn, Status: ex.Status, Header: ex.Header,
		Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}}
	resIn.SetBodyBytes(ex.Body)
	if ex.Method == http.MethodHead {
		if op.Responses.Status(ex.Status) == nil {
			return fmt.Errorf("%s: status %d is not documented for GET %s", ex, ex.Status, tmpl)
		}
	} else if err := openapi3filter.ValidateResponse(ctx, resIn); err != nil {
		return fmt.Errorf("%s: the response does not match %s %s in openapi.json: %w\nbody: %s", ex, method, tmpl, err, clip(ex.Body))
	}
	if reqErr != nil && ex.Status < 400 {
		return fmt.Errorf("%s: openapi.json refuses this request (%v), but the server answered %d\nrequest body: %s", ex, reqErr, ex.Status, clip(ex.ReqBody))
	}
	if strings.HasPrefix(ex.Header.Get("Content-Type"), "application/problem+json") {
		var p struct {
			Status int `json:"status"`
		}
		if err := json.Unmarshal(ex.Body, &p); err != nil || p.Status != ex.Status {
			return fmt.Errorf("%s: a problem whose status member is %d", ex, p.Status)
		}
	}
	return nil
}

// checkProblem checks the answer to a request no operation takes: the
// status, problem+json with the code, and for a 405 the Allow header.
func (c *Contract) checkProblem(ex Exchange, status int, code, allow string) error {
	if ex.Status != status {
		return fmt.Errorf("%s: openapi.json has no such operation, so the answer must be %d, not %d", ex, status, ex.Status)
	}
	if ex.Method == http.MethodHead {
		return nil
	}
	problem := c.doc.Components.Schemas["Problem"]
	var body any
	if !strings.HasPrefix(ex.Header.Get("Content-Type"), "application/problem+json") || json.Unmarshal(ex.Body, &body) != nil {
		return fmt.Errorf("%s: not problem+json: %s", ex, clip(ex.Body))
	}
	if err := problem.Value.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("%s: the problem does not match Problem: %w", ex, err)
	}
	if got := body.(map[string]any)["code"]; got != code {
		return fmt.Errorf("%s: code %v, want %s", ex, got, code)
	}
	if got := ex.Header.Get("Allow"); got != allow {
		return fmt.Errorf("%s: Allow %q, want %q (the methods openapi.json has for the path)", ex, got, allow)
	}
	return nil
}

// bearerPresent stands in for authentication: the document's schemes are
// HTTP Bearer, and a request that sends none is one the document refuses.
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); !ok || strings.TrimSpace(tok) == "" {
		return errors.New("no Authorization: Bearer header")
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// Handler wraps h so that every exchange it serves is checked; a mismatch
// fails t.
func Handler(t testing.TB, h http.Handler) http.Handler {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		ex := Exchange{Method: r.Method, URL: r.URL, ReqHeader: r.Header.Clone(), ReqBody: body}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		ex.Status, ex.Header, ex.Body = rec.status, w.Header().Clone(), rec.body.Bytes()
		if err := c.Check(context.WithoutCancel(r.Context()), ex); err != nil {
			t.Errorf("contract: %v", err)
		}
	})
}

// recorder passes a response through and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Transport wraps rt (nil: http.DefaultTransport) so that every exchange
// of a client is checked; a mismatch fails t. For servers in another
// process, such as `nextup serve` started by a test.
func Transport(t testing.TB, rt http.RoundTripper) http.RoundTripper {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		res, err := rt.RoundTrip(req)
		if err != nil {
			return res, err
		}
		resBody, err := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(resBody))
		if err != nil {
			return res, nil // the caller reads the short body and sees the failure
		}
		ex := Exchange{Method: req.Method, URL: req.URL, ReqHeader: req.Header.Clone(), ReqBody: body,
			Status: res.StatusCode, Header: res.Header.Clone(), Body: resBody}
		if err := c.Check(context.WithoutCancel(req.Context()), ex); err != nil {
			t.Errorf("contract: %v", err)
		}
		return res, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
