// The operator's files checked against what the server exports (see
// doc.go).
package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/notify/capture"
	"github.com/nextup-dev/nextup/outbox"
	"github.com/nextup-dev/nextup/store/sqlite"
	"github.com/nextup-dev/nextup/timer"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/web"
)

const (
	alertsFile     = "prometheus/alerts.yml"
	scrapeFile     = "prometheus/prometheus.yml"
	dashboardFile  = "grafana/nextup.json"
	operationsFile = "../docs/operations.md"
	adminToken     = "test-admin-token"
)

var promql = parser.NewParser(parser.Options{})

func TestAlertRules(t *testing.T) {
	t.Parallel()
	exp := scrape(t)
	groups, errs := rulefmt.ParseFile(alertsFile, false, model.LegacyValidation, promql, slog.Default())
	for _, err := range errs {
		t.Errorf("rulefmt: %v", err)
	}
	if groups == nil || len(groups.Groups) == 0 {
		t.Fatalf("%s has no rule groups", alertsFile)
	}
	ops, err := os.ReadFile(operationsFile)
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(ops))
	n := 0
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			n++
			name := r.Alert
			if name == "" {
				t.Errorf("group %s: a recording rule (%s): this file is for alerts", g.Name, r.Record)
				continue
			}
			for _, p := range exp.problems(r.Expr) {
				t.Errorf("alert %s: %s", name, p)
			}
			if r.For <= 0 {
				t.Errorf("alert %s: no for: a single bad evaluation would page", name)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("alert %s: severity %q, want warning or critical", name, s)
			}
			for _, a := range []string{"summary", "description", "runbook"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("alert %s: no %s annotation", name, a)
				}
			}
			if doc, anchor, _ := strings.Cut(r.Annotations["runbook"], "#"); doc != "docs/operations.md" || !anchors[anchor] {
				t.Errorf("alert %s: runbook %q is not a section of docs/operations.md", name, r.Annotations["runbook"])
			}
			if !strings.Contains(string(ops), name) {
				t.Errorf("alert %s: docs/operations.md does not mention it", name)
			}
		}
	}
	t.Logf("%d alerts checked against %d metric families", n, len(exp))
}

// The issue's list: each of these must be watched by some alert.
func TestAlertsCoverTheIssue(t *testing.T) {
	t.Parallel()
	groups, errs := rulefmt.ParseFile(alertsFile, false, model.LegacyValidation, promql, slog.Default())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	used := map[string]bool{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			for _, name := range selectorNames(t, r.Expr) {
				used[name] = true
			}
		}
	}
	for _, want := range []string{
		"up",                                   // the instance down
		"nextup_outbox_messages",               // dead letters
		"nextup_outbox_backlog",                // outbox depth
		"nextup_outbox_drain_seconds",          // drain time
		"nextup_timer_lateness_seconds_bucket", // timer lateness
		"nextup_promotion_lag_seconds_bucket",  // promotion lag
		"nextup_http_requests_total",           // 5xx
	} {
		if !used[want] {
			t.Errorf("no alert selects %s", want)
		}
	}
}

func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	exp := scrape(t)
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title         string  `json:"title"`
		UID           string  `json:"uid"`
		SchemaVersion int     `json:"schemaVersion"`
		Panels        []panel `json:"panels"`
		Templating    struct {
			List []struct {
				Name       string          `json:"name"`
				Type       string          `json:"type"`
				Query      json.RawMessage `json:"query"`
				Datasource *datasource     `json:"datasource"`
			} `json:"list"`
		} `json:"templating"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if dash.Title == "" || dash.UID == "" || dash.SchemaVersion < 36 {
		t.Errorf("title %q, uid %q, schemaVersion %d: want both and a schema of Grafana 9 or later", dash.Title, dash.UID, dash.SchemaVersion)
	}
	hasDS := false
	for _, v := range dash.Templating.List {
		switch v.Type {
		case "datasource":
			var q string
			hasDS = hasDS || v.Name == "DS_PROMETHEUS" && json.Unmarshal(v.Query, &q) == nil && q == "prometheus"
		case "query":
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				t.Errorf("variable %s: query %s: %v", v.Name, v.Query, err)
				continue
			}
			checkDatasource(t, "variable "+v.Name, v.Datasource)
			for _, p := range exp.labelValues(q.Query) {
				t.Errorf("variable %s: %s", v.Name, p)
			}
		}
	}
	if !hasDS {
		t.Errorf("no datasource variable DS_PROMETHEUS of type prometheus")
	}

	ids := map[int]string{}
	exprs := 0
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if other, dup := ids[p.ID]; dup || p.ID == 0 {
				t.Errorf("%s: id not unique (also %q)", where, other)
			}
			ids[p.ID] = p.Title
			if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("%s: gridPos %+v is off the 24-column grid", where, p.GridPos)
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Title == "" || p.Description == "" {
				t.Errorf("%s: wants a title and a description", where)
			}
			checkDatasource(t, where, p.Datasource)
			if len(p.Targets) == 0 {
				t.Errorf("%s: no queries", where)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if refs[tg.RefID] || tg.RefID == "" {
					t.Errorf("%s: refId %q not unique", where, tg.RefID)
				}
				refs[tg.RefID] = true
				checkDatasource(t, where, tg.Datasource)
				exprs++
				for _, prob := range exp.problems(grafanaExpr(tg.Expr)) {
					t.Errorf("%s, query %s: %s", where, tg.RefID, prob)
				}
			}
		}
	}
	walk(dash.Panels)
	if exprs == 0 {
		t.Fatal("the dashboard has no queries")
	}
	t.Logf("%d panels, %d queries checked", len(ids), exprs)
}

// panel is the part of a Grafana panel the test reads.
type panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *datasource `json:"datasource"`
	GridPos     struct{ H, W, X, Y int }
	Targets     []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// checkDatasource wants the dashboard's datasource variable, so that the
// dashboard imports into any Grafana and points at the Prometheus chosen.
func checkDatasource(t *testing.T, where string, ds *datasource) {
	t.Helper()
	if ds == nil || ds.Type != "prometheus" || ds.UID != "${DS_PROMETHEUS}" {
		t.Errorf("%s: datasource %+v, want prometheus ${DS_PROMETHEUS}", where, ds)
	}
}

// grafanaExpr replaces Grafana's interval variables, which PromQL does not
// parse; the dashboard's own variables ($job, $instance) stand in label
// values, where they parse as strings and the check skips them.
var grafanaExpr = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h").Replace

// labelValues checks a Grafana variable's label_values(selector, label).
func (e exported) labelValues(q string) []string {
	m := regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_]\w*)\)$`).FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return []string{fmt.Sprintf("query %q is not label_values(selector, label)", q)}
	}
	probs := e.problems(m[1])
	if m[2] == "job" || m[2] == "instance" {
		return probs // Prometheus's target labels, on every series
	}
	found := false
	if names := selectorNames(nil, m[1]); len(names) == 1 {
		if mf, _ := e.family(names[0]); mf != nil {
			found = slices.Contains(labelNames(mf), m[2])
		}
	}
	if !found {
		probs = append(probs, fmt.Sprintf("label %s is not on %s", m[2], m[1]))
	}
	return probs
}

func TestScrapeConfig(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(scrapeFile)
	if err != nil {
		t.Fatal(err)
	}
	// The fields this file uses, held to Prometheus's names: a misspelt
	// key fails here as it would fail Prometheus's start.
	var cfg struct {
		Global struct {
			ScrapeInterval     string `yaml:"scrape_interval"`
			EvaluationInterval string `yaml:"evaluation_interval"`
		} `yaml:"global"`
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			MetricsPath   string `yaml:"metrics_path"`
			ScrapeTimeout string `yaml:"scrape_timeout"`
			StaticConfigs []struct {
				Targets []string          `yaml:"targets"`
				Labels  map[string]string `yaml:"labels"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("%s: %v", scrapeFile, err)
	}
	interval, err := model.ParseDuration(cfg.Global.ScrapeInterval)
	if err != nil {
		t.Errorf("scrape_interval: %v", err)
	}
	if _, err := model.ParseDuration(cfg.Global.EvaluationInterval); err != nil {
		t.Errorf("evaluation_interval: %v", err)
	}
	for _, f := range cfg.RuleFiles {
		if _, err := os.Stat("prometheus/" + f); err != nil {
			t.Errorf("rule_files: %v", err)
		}
	}
	if !slices.Contains(cfg.RuleFiles, "alerts.yml") {
		t.Errorf("rule_files %v lack alerts.yml", cfg.RuleFiles)
	}
	routes := (&web.Server{Metrics: web.NewMetrics(nil)}).Routes()
	found := false
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName != "nextup" { // the alerts select job="nextup"
			continue
		}
		found = true
		if !slices.Contains(routes, "GET "+sc.MetricsPath) {
			t.Errorf("metrics_path %q is not a route of the server", sc.MetricsPath)
		}
		if timeout, err := model.ParseDuration(sc.ScrapeTimeout); err != nil || timeout > interval {
			t.Errorf("scrape_timeout %q: %v (Prometheus wants it at most the interval %s)", sc.ScrapeTimeout, err, interval)
		}
		if len(sc.StaticConfigs) == 0 || len(sc.StaticConfigs[0].Targets) == 0 {
			t.Errorf("job nextup has no targets")
		}
	}
	if !found {
		t.Errorf("no scrape config for job_name nextup")
	}
}

// The check itself: a misspelt metric, label or label value is caught,
// and what is right passes.
func TestSelectorCheck(t *testing.T) {
	t.Parallel()
	exp := scrape(t)
	for _, c := range []struct {
		expr string
		ok   bool
	}{
		{`up{job="nextup"} == 0`, true},
		{`max by (channel) (nextup_outbox_messages{state="dead"}) > 0`, true},
		{`histogram_quantile(0.9, sum by (le) (rate(nextup_promotion_lag_seconds_bucket[5m])))`, true},
		{`rate(nextup_http_requests_total{status=~"5..", job="nextup"}[5m])`, true},
		{`sum(rate(nextup_outbox_failures_total{outcome="dead"}[5m]))`, true},
		{`nextup_outbox_messages{channel=~"$channel"}`, true}, // a Grafana variable: not checked
		{`nextup_outbox_mesages > 0`, false},                  // no such metric
		{`nextup_outbox_messages{state="dead_letter"} > 0`, false},
		{`nextup_outbox_messages{chanel="sms"} > 0`, false},
		{`rate(nextup_promotion_lag_seconds_buckets[5m])`, false},
		{`rate(nextup_claims_total_count[5m])`, false}, // a counter has no _count
		{`nextup_http_requests_total{status=~"6.."}`, false},
		{`rate(nextup_http_requests_total[5m]`, false}, // does not parse
	} {
		probs := exp.problems(c.expr)
		if c.ok && len(probs) > 0 {
			t.Errorf("%s: %v, want no problem", c.expr, probs)
		}
		if !c.ok && len(probs) == 0 {
			t.Errorf("%s passed the check", c.expr)
		}
	}
}

// A store that cannot be read fails the scrape (500), so that Prometheus
// records up == 0 and NextupDown fires: the rules rely on it for readiness.
func TestStoreDownFailsScrape(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), t.TempDir()+"/nextup.db")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&web.Server{Store: st, Metrics: web.NewMetrics(st)}).Handler())
	t.Cleanup(srv.Close)
	if code := get(t, srv.URL+"/metrics").StatusCode; code != http.StatusOK {
		t.Fatalf("metrics with the store up: %d", code)
	}
	st.Close()
	if code := get(t, srv.URL+"/metrics").StatusCode; code != http.StatusInternalServerError {
		t.Fatalf("metrics with the store closed: %d, want 500", code)
	}
}

// exported is what one scrape of the server's /metrics held, by family name.
type exported map[string]*dto.MetricFamily

// down is a store whose Ping fails on demand: GET /readyz answers 503, the
// 5xx the error-rate alerts select.
type down struct {
	nextup.Store
	down atomic.Bool
}

func (d *down) Ping(ctx context.Context) error {
	if d.down.Load() {
		return errors.New("store unreachable (test)")
	}
	return d.Store.Ping(ctx)
}

// scrape runs the real server with its metrics wired as `nextup serve`
// wires them, drives it until every series the rules and dashboard select
// exists, and returns one scrape of GET /metrics.
func scrape(t *testing.T) exported {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir()+"/nextup.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	loc, _ := time.LoadLocation("Europe/London")
	clock := nextup.NewFakeClock(time.Date(2026, 12, 1, 10, 0, 0, 0, loc))
	svc := waitlist.New(st, clock, "https://nextup.test")
	svc.Random = nextup.NewRandom(rand.NewChaCha8([32]byte{7}))
	metrics := web.NewMetrics(st)
	svc.Promoted = metrics.Promoted
	metrics.SetSendRates(map[nextup.Channel]float64{nextup.ChannelEmail: 10, nextup.ChannelSMS: 1})
	flaky := &down{Store: st}
	srv := httptest.NewServer((&web.Server{Svc: svc, Store: flaky, AdminToken: adminToken, Metrics: metrics}).Handler())
	t.Cleanup(srv.Close)

	var biz struct {
		ID     string `json:"id"`
		APIKey string `json:"api_key"`
	}
	call(t, srv, "POST", "/v1/businesses", adminToken, `{"name":"Salon","timezone":"Europe/London"}`, 201, &biz)
	var slot struct {
		ID string `json:"id"`
	}
	call(t, srv, "POST", "/v1/businesses/"+biz.ID+"/slots", biz.APIKey,
		`{"service":"haircut","starts_at":"2026-12-01T14:00:00Z","ends_at":"2026-12-01T14:45:00Z"}`, 201, &slot)
	call(t, srv, "POST", "/v1/businesses/"+biz.ID+"/waitlist:join", biz.APIKey, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`, 201, nil)
	// The release makes an offer (a promotion-lag sample); Ann claims it.
	var rel struct {
		Moves []nextup.Move `json:"moves"`
	}
	call(t, srv, "POST", "/v1/slots/"+slot.ID+":release", biz.APIKey, `{"reason":"cancellation"}`, 200, &rel)
	if len(rel.Moves) == 0 || rel.Moves[0].OfferID == "" {
		t.Fatalf("release made no offer: %+v", rel.Moves)
	}
	call(t, srv, "POST", "/v1/claims/"+claimToken(t, st, biz.ID, rel.Moves[0].OfferID)+":accept", "", "", 200, nil)
	call(t, srv, "POST", "/v1/claims/no-such-token:accept", "", "", 404, nil)
	flaky.down.Store(true)
	call(t, srv, "GET", "/readyz", "", "", 503, nil) // a 5xx
	flaky.down.Store(false)

	// A text to a number the provider refuses for good: a dead letter.
	now := clock.Now()
	if err := st.InTx(ctx, func(tx nextup.Tx) error {
		return tx.MessageCreate(ctx, nextup.Message{ID: "msg_refused", BusinessID: biz.ID, Kind: nextup.MessageOffer, Channel: nextup.ChannelSMS,
			To: "+447700900123", Body: "A slot opened", State: nextup.MessageQueued, NotBefore: now, NextAttemptAt: now, CreatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	relay := &outbox.Relay{Store: st, Clock: clock, Default: capture.New(), OnAttempt: metrics.OutboxAttempt, OnSent: svc.Handed, Logger: quiet,
		Senders: map[nextup.Channel]nextup.Sender{nextup.ChannelSMS: refuse{}}}
	if sent, failed, err := relay.RunOnce(ctx); sent == 0 || failed != 1 || err != nil {
		t.Fatalf("relay: %d sent, %d failed, %v; want the emails sent and the text dead", sent, failed, err)
	}
	// The booking's reminder an hour before 14:00 falls due: the sweeper
	// handles it, late by however far the clock went past it.
	clock.Advance(4 * time.Hour)
	sweeper := &timer.Sweeper{Store: st, Clock: clock, Handler: svc, Owner: "test", OnHandled: metrics.TimerHandled, Logger: quiet}
	if n, err := sweeper.RunDue(ctx); n == 0 || err != nil {
		t.Fatalf("sweeper: %d handled, %v", n, err)
	}

	res := get(t, srv.URL+"/metrics")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return exported(fams)
}

// quiet drops the relay's and sweeper's logs: the dead letter is on purpose.
var quiet = slog.New(slog.DiscardHandler)

// claimToken is the claim link's token in the offer's message.
func claimToken(t *testing.T, st nextup.Store, bid, offerID string) string {
	t.Helper()
	var tok string
	err := st.Read(context.Background(), func(tx nextup.Tx) error {
		ms, err := tx.MessageList(context.Background(), nextup.MessageFilter{BusinessID: bid, OfferID: offerID})
		for _, m := range ms {
			if m.Kind == nextup.MessageOffer {
				tok = m.ClaimURL[strings.LastIndex(m.ClaimURL, "/")+1:]
			}
		}
		return err
	})
	if err != nil || tok == "" {
		t.Fatalf("the offer's claim link: %q, %v", tok, err)
	}
	return tok
}

// refuse is a text provider that refuses every number for good.
type refuse struct{}

func (refuse) Channel() nextup.Channel { return nextup.ChannelSMS }

func (refuse) Send(context.Context, nextup.Message) (string, error) {
	return "", fmt.Errorf("%w: not a mobile number", nextup.ErrInvalid)
}

// call sends a request and wants status; into, if set, gets the JSON body.
func call(t *testing.T, srv *httptest.Server, method, path, key, body string, status int, into any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, status, b)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// get fetches url; the body is closed with the test.
func get(t *testing.T, url string) *http.Response {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// targetLabels are the labels Prometheus attaches at scrape time, which
// nextup's own series do not carry.
var targetLabels = []string{"job", "instance"}

// problems parses expr and returns what is wrong with each of its metric
// selectors: a metric nextup does not export (Prometheus's own up aside),
// a label its series lack, or matchers that select none of its series.
func (e exported) problems(expr string) []string {
	ast, err := promql.ParseExpr(expr)
	if err != nil {
		return []string{fmt.Sprintf("%q does not parse: %v", expr, err)}
	}
	var probs []string
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			probs = append(probs, e.selects(vs)...)
		}
		return nil
	})
	return probs
}

// selects checks one selector against the scrape.
func (e exported) selects(vs *parser.VectorSelector) []string {
	name := selectorName(vs)
	if name == "" {
		return []string{fmt.Sprintf("%s names no metric", vs)}
	}
	if name == "up" {
		return nil // Prometheus's own, one per target
	}
	mf, suffix := e.family(name)
	if mf == nil {
		return []string{fmt.Sprintf("%s: nextup exports no metric %s", vs, name)}
	}
	have := labelNames(mf)
	var matchers []*labels.Matcher
	var probs []string
	for _, m := range vs.LabelMatchers {
		switch {
		case m.Name == model.MetricNameLabel, slices.Contains(targetLabels, m.Name),
			strings.Contains(m.Value, "$"), // a Grafana variable
			m.Name == "le" && suffix == "_bucket":
			continue
		case !slices.Contains(have, m.Name):
			probs = append(probs, fmt.Sprintf("%s: %s has no label %s (it has %v)", vs, mf.GetName(), m.Name, have))
		default:
			matchers = append(matchers, m)
		}
	}
	if len(probs) > 0 {
		return probs
	}
	for _, s := range mf.GetMetric() {
		if matchesAll(matchers, s) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s selects none of the series of %s nextup exports", vs, mf.GetName())}
}

func matchesAll(ms []*labels.Matcher, s *dto.Metric) bool {
	for _, m := range ms {
		v := ""
		for _, l := range s.GetLabel() {
			if l.GetName() == m.Name {
				v = l.GetValue()
			}
		}
		if !m.Matches(v) {
			return false
		}
	}
	return true
}

// family finds the metric family a selected name belongs to: the name
// itself, or a histogram's _bucket, _sum or _count (a summary's _sum or
// _count).
func (e exported) family(name string) (*dto.MetricFamily, string) {
	if mf, ok := e[name]; ok {
		return mf, ""
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		switch mf := e[base]; {
		case mf == nil:
		case mf.GetType() == dto.MetricType_HISTOGRAM, mf.GetType() == dto.MetricType_SUMMARY && suffix != "_bucket":
			return mf, suffix
		}
	}
	return nil, ""
}

// labelNames are the label names any series of mf carries.
func labelNames(mf *dto.MetricFamily) []string {
	var names []string
	for _, s := range mf.GetMetric() {
		for _, l := range s.GetLabel() {
			if !slices.Contains(names, l.GetName()) {
				names = append(names, l.GetName())
			}
		}
	}
	slices.Sort(names)
	return names
}

func selectorName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// selectorNames lists the metric names expr selects; t, if set, fails on
// an expression that does not parse.
func selectorNames(t *testing.T, expr string) []string {
	ast, err := promql.ParseExpr(expr)
	if err != nil {
		if t != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		return nil
	}
	var names []string
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, selectorName(vs))
		}
		return nil
	})
	return names
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings:
// lower case, spaces to hyphens, other punctuation dropped.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	for line := range strings.Lines(md) {
		h, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "#")
		if !ok {
			continue
		}
		h = strings.TrimSpace(strings.TrimLeft(h, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}
