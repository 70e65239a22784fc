package coldstart

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// BootstrapPackage is the Lambda bootstrap measured.
const BootstrapPackage = "github.com/nextup-dev/nextup/aws/cmd/lambda"

// BuildBootstrap builds the bootstrap for this machine's architecture
// into dir: as `make lambda` does (lambda.norpc, static, stripped) when
// release, or else as aws/cmd/lambda's own test does (sharing its build
// cache: a quick check need not compile everything again).
func BuildBootstrap(ctx context.Context, dir string, release bool) (string, error) {
	bin := filepath.Join(dir, "bootstrap")
	args := []string{"build", "-tags", "lambda.norpc", "-o", bin}
	if release {
		args = append(args, "-trimpath", "-ldflags", "-s -w")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, BootstrapPackage)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", BootstrapPackage, err, out)
	}
	return bin, nil
}

// BootstrapEnv is the bootstrap's configuration for a table on the
// DynamoDB-compatible server at addr (host:port).
func BootstrapEnv(addr, table string) []string {
	return []string{
		fmt.Sprintf("NEXTUP_DB=dynamodb://%s/%s-?region=us-east-1", addr, table),
		"NEXTUP_BASE_URL=https://abc.lambda-url.us-east-1.on.aws", "NEXTUP_ADMIN_TOKEN=adm",
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1",
	}
}

// PythonArgv is how the Python function is run: its handler written
// into dir.
func PythonArgv(py Python, dir string) ([]string, error) {
	h := filepath.Join(dir, "handler.py")
	if err := os.WriteFile(h, HandlerPy, 0o644); err != nil {
		return nil, err
	}
	return []string{py.Exe, h}, nil
}

// PythonRunEnv is the Python function's environment. Compiled modules go
// to a cache of the run's own (dir), filled by a first start that is not
// counted, as a deployed runtime's are ready on disk.
func PythonRunEnv(py Python, dir, addr, table string) []string {
	env := []string{"PYTHONPYCACHEPREFIX=" + filepath.Join(dir, "pycache"),
		"NEXTUP_COLDSTART_DYNAMODB=http://" + addr, "NEXTUP_COLDSTART_TABLE=" + table,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_REGION=us-east-1"}
	if py.Path != "" {
		env = append(env, "PYTHONPATH="+py.Path)
	}
	return env
}

// Sample is one invocation measured: its duration (as Lambda bills it)
// and the CPU time the function process used for it.
type Sample struct {
	Duration, CPU time.Duration
}

// Kinds of invocation the warm run measures, in the order it reports them.
const (
	KindFirst     = "first invocation (create a business)"
	KindJoin      = "join (Function URL)"
	KindStatus    = "status page (Function URL)"
	KindRelease   = "release → offer (Function URL)"
	KindClaimPage = "claim page (Function URL)"
	KindClaim     = "claim (Function URL)"
	KindTimers    = "timer event, nothing due"
	KindAfterIdle = "status page after a minute idle"
	KindExpiry    = "timer event, an offer's expiry due"
	KindPython    = "GetItem (Python)"
)

// Kinds lists the kinds in report order.
var Kinds = []string{KindFirst, KindJoin, KindStatus, KindRelease, KindClaimPage, KindClaim, KindTimers, KindAfterIdle, KindExpiry}

// Warm runs a salon's round rounds times through a started bootstrap and
// measures each invocation by kind: a person joins and looks at their
// status page, a slot is released to them, they open the claim page and
// claim, and a timer event finds nothing due. With expiry, an offer is
// then left to lapse (its 60-second window, the shortest, waited out), a
// status page is asked for after that minute idle, and a timer event
// expires the offer.
func Warm(ctx context.Context, f *Function, rounds int, expiry bool) (map[string][]Sample, error) {
	out := map[string][]Sample{}
	c := &caller{ctx: ctx, f: f, out: out}
	biz := c.json(KindFirst, "POST", "/v1/businesses", "adm",
		`{"name":"Cold Cuts","timezone":"UTC","rules":{"quiet_hours":null,"claim_window_seconds":60,"max_offers_per_person_per_day":0}}`, 201)
	if c.err != nil {
		return out, c.err
	}
	bid, key := str(biz["id"]), str(biz["api_key"])
	start := time.Date(2099, 3, 5, 9, 0, 0, 0, time.UTC)
	var status string // the last person's status link
	offer := func(i int) (offerID string) {
		joined := c.json(KindJoin, "POST", "/v1/businesses/"+bid+"/waitlist:join", key,
			fmt.Sprintf(`{"name":"P%d","email":"p%d@example.com","service":"haircut"}`, i, i), 201)
		if status = str(joined["status_url"]); status != "" {
			c.page(KindStatus, status)
		}
		at := start.Add(time.Duration(i) * time.Hour)
		slot := c.json("", "POST", "/v1/businesses/"+bid+"/slots", key,
			fmt.Sprintf(`{"service":"haircut","starts_at":%q,"ends_at":%q}`, at.Format(time.RFC3339), at.Add(45*time.Minute).Format(time.RFC3339)), 201)
		rel := c.json(KindRelease, "POST", "/v1/slots/"+str(slot["id"])+":release", key, `{"reason":"cancellation"}`, 200)
		moves, _ := rel["moves"].([]any)
		if c.err == nil && len(moves) != 1 {
			c.err = fmt.Errorf("release: %v, want one offer", rel)
		}
		if c.err != nil {
			return ""
		}
		return str(moves[0].(map[string]any)["offer_id"])
	}
	for i := range rounds {
		id := offer(i)
		msgs := c.json("", "GET", "/v1/businesses/"+bid+"/messages?offer_id="+id, key, "", 200)
		var link string
		list, _ := msgs["messages"].([]any)
		for _, m := range list {
			if u := str(m.(map[string]any)["claim_url"]); u != "" {
				link = u
			}
		}
		if c.err == nil && link == "" {
			c.err = fmt.Errorf("no claim link among the offer's messages: %v", msgs)
		}
		if c.err != nil {
			return out, c.err
		}
		c.page(KindClaimPage, link)
		tok := link[strings.LastIndex(link, "/")+1:]
		if got := c.json(KindClaim, "POST", "/v1/claims/"+tok+":accept", "", "", 200); c.err == nil && got["state"] != "claimed" {
			c.err = fmt.Errorf("claim: %v", got)
		}
		c.timers(KindTimers)
		if c.err != nil {
			return out, c.err
		}
	}
	if expiry {
		offer(rounds)
		if c.err != nil {
			return out, c.err
		}
		select {
		case <-time.After(62 * time.Second): // the claim window, waited out
		case <-ctx.Done():
			return out, ctx.Err()
		}
		// A process idle for a minute answers its next event slower
		// (cold caches; the Go runtime has handed memory back): that one
		// is a status page, measured as such, so that the expiry is
		// measured warm like the rest.
		c.page(KindAfterIdle, status)
		if n := c.timers(KindExpiry); c.err == nil && n < 1 {
			c.err = fmt.Errorf("the timer event after the window handled %d timers, want the expiry", n)
		}
	}
	return out, c.err
}

// caller sends a run's events, records their samples by kind, and keeps
// the first error.
type caller struct {
	ctx context.Context
	f   *Function
	out map[string][]Sample
	err error
}

func (c *caller) invoke(kind string, payload []byte) []byte {
	if c.err != nil {
		return nil
	}
	res, cpu, err := c.f.Invoke(c.ctx, payload)
	if err != nil {
		c.err = err
		return nil
	}
	if res.Failed {
		c.err = fmt.Errorf("%s: the function failed: %s", kind, res.Payload)
		return nil
	}
	if kind != "" {
		c.out[kind] = append(c.out[kind], Sample{res.Duration, cpu})
	}
	return res.Payload
}

// url sends a Function URL request (payload format 2.0) and returns its
// status and body.
func (c *caller) url(kind, method, path, key, body string) (int, string) {
	raw, query, _ := strings.Cut(path, "?")
	ev := events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: raw, RawQueryString: query, Body: body,
		Headers: map[string]string{"content-type": "application/json", "host": "abc.lambda-url.us-east-1.on.aws"},
		RequestContext: events.LambdaFunctionURLRequestContext{DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: raw, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "coldstart"}},
	}
	if key != "" {
		ev.Headers["authorization"] = "Bearer " + key
	}
	payload, _ := json.Marshal(ev)
	out := c.invoke(kind, payload)
	if c.err != nil {
		return 0, ""
	}
	var res events.LambdaFunctionURLResponse
	if err := json.Unmarshal(out, &res); err != nil || res.StatusCode == 0 {
		c.err = fmt.Errorf("%s %s: not a Function URL response: %s", method, path, out)
		return 0, ""
	}
	text := res.Body
	if res.IsBase64Encoded {
		b, _ := base64.StdEncoding.DecodeString(res.Body)
		text = string(b)
	}
	return res.StatusCode, text
}

func (c *caller) json(kind, method, path, key, body string, want int) map[string]any {
	code, text := c.url(kind, method, path, key, body)
	if c.err != nil {
		return nil
	}
	if code != want {
		c.err = fmt.Errorf("%s %s: %d %s, want %d", method, path, code, text, want)
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		c.err = fmt.Errorf("%s %s: %v: %s", method, path, err, text)
	}
	return m
}

// page GETs a public page by its full link.
func (c *caller) page(kind, link string) {
	i := strings.Index(link, ".on.aws/")
	if i < 0 {
		c.err = fmt.Errorf("a link not on the Function URL: %s", link)
		return
	}
	if code, text := c.url(kind, "GET", link[i+len(".on.aws"):], "", ""); c.err == nil && code != 200 {
		c.err = fmt.Errorf("GET %s: %d %.200s", link, code, text)
	}
}

// timers sends the timer event and returns how many timers it handled.
func (c *caller) timers(kind string) int {
	out := c.invoke(kind, []byte(`{"nextup":"timers"}`))
	var res map[string]int
	if c.err == nil {
		if err := json.Unmarshal(out, &res); err != nil {
			c.err = fmt.Errorf("the timer event: %s", out)
		}
	}
	return res["handled"]
}

func str(v any) string { s, _ := v.(string); return s }
