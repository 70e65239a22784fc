package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/nextup-dev/nextup/web"
)

// directives splits a Content-Security-Policy into its directives.
func directives(csp string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if name != "" {
			out[name] = value
		}
	}
	return out
}

var (
	scriptTag = regexp.MustCompile(`<script\b[^>]*>`)
	// A style or event handler attribute in a tag, a <style> element, a
	// javascript: URL (text such as an email's source in a textarea is
	// escaped, so its "<" never opens a tag).
	inlineBad = regexp.MustCompile(`(?i)<style\b|<[a-z][^<>]*\s(?:style|on[a-z]+)=|=["']?javascript:`)
)

// checkPage holds an HTML response to the pages' security headers, and
// its markup to what the CSP allows: no inline script, no <style>, no
// style attribute, no event handler attribute.
func checkPage(t *testing.T, what string, h http.Header, body string) {
	t.Helper()
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("%s: Content-Type %q, want a page", what, h.Get("Content-Type"))
		return
	}
	csp := directives(h.Get("Content-Security-Policy"))
	for _, d := range []string{"default-src", "script-src", "style-src", "frame-ancestors", "base-uri", "form-action"} {
		if csp[d] == "" {
			t.Errorf("%s: the CSP %q has no %s", what, h.Get("Content-Security-Policy"), d)
		}
	}
	if csp["default-src"] != "'none'" || csp["script-src"] != "'self'" || csp["style-src"] != "'self'" || csp["frame-ancestors"] != "'none'" || csp["base-uri"] != "'none'" {
		t.Errorf("%s: CSP %q", what, h.Get("Content-Security-Policy"))
	}
	if fa := csp["form-action"]; fa != "'self'" && fa != "'self' https://checkout.stripe.com" {
		t.Errorf("%s: form-action %q", what, fa)
	}
	for name, want := range map[string]string{"Permissions-Policy": web.PermissionsPolicy, "X-Content-Type-Options": "nosniff",
		"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Strict-Transport-Security": ""} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s %q, want %q", what, name, got, want)
		}
	}
	for _, tag := range scriptTag.FindAllString(body, -1) {
		if !strings.Contains(tag, ` src="/static/`) {
			t.Errorf("%s: an inline script: %s", what, tag)
		}
	}
	if m := inlineBad.FindString(body); m != "" {
		t.Errorf("%s: inline %q, which the CSP blocks", what, m)
	}
}

// TestPagesSecurityHeaders opens every dashboard page, the public pages,
// an error page and the front door over HTTP: each has the strict CSP
// (no 'unsafe-inline', framed by nobody), Permissions-Policy, nosniff,
// no Referer and, behind an http base URL, no HSTS; its markup keeps to
// the CSP. The API's JSON has a CSP that loads nothing; the pages'
// static files are cached for good under their hash only; the email
// preview has its own narrow policy and refuses a URL nextup did not
// sign for this session.
func TestPagesSecurityHeaders(t *testing.T) {
	t.Parallel()
	sb := setupStaff(t)
	sid := sb.slot(chair)["id"].(string)
	var joined map[string]any
	sb.must(sb.do("POST", "/v1/businesses/"+sb.bid+"/waitlist:join", sb.key, `{"name":"Ann","email":"ann@example.com","service":"haircut"}`), 201, &joined)
	_, claim := sb.offerFor(sid)
	status := tokenOf(joined["status_url"].(string))

	b := sb.client()
	public := []string{"/", "/login", "/login/forgot", "/c/" + claim, "/s/" + status, "/c/no-such-token", "/s/no-such-token", "/u/" + sb.bid + "/nope", "/p/nope/approve"}
	for _, path := range public {
		p := b.do("GET", path, nil)
		checkPage(t, "GET "+path, p.header, p.body)
	}
	sb.signIn(b, sb.email, sb.pass)
	fill := strings.NewReplacer("{sid}", sid, "{eid}", "e", "{id}", "x", "{month}", "2026-12", "{kind}", "offer", "{vid}", "v", "{slug}", "s", "{event}", "e")
	pages := 0
	var assets []string
	for _, rt := range (&web.Server{}).StaffPages() {
		method, path, _ := strings.Cut(rt, " ")
		if method != "GET" || strings.HasSuffix(path, ".csv") || strings.HasSuffix(path, "/preview") {
			continue
		}
		path = fill.Replace(path)
		p := b.do("GET", path, nil)
		if p.status == http.StatusSeeOther {
			continue // a page that sends a signed-in person elsewhere
		}
		checkPage(t, "GET "+path, p.header, p.body)
		assets = append(assets, regexp.MustCompile(`/static/[0-9a-f]+/[a-z]+\.(?:css|js)`).FindAllString(p.body, -1)...)
		pages++
	}
	t.Logf("%d dashboard pages and %d public pages checked", pages, len(public))
	if pages < 15 {
		t.Fatalf("only %d dashboard pages", pages)
	}

	// The API's JSON loads nothing and is framed by nobody.
	for _, path := range []string{"/healthz", "/v1/businesses/" + sb.bid} {
		r := sb.do("GET", path, sb.key, "")
		if csp := r.header.Get("Content-Security-Policy"); csp != "default-src 'none'; frame-ancestors 'none'" {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
		if r.header.Get("Permissions-Policy") == "" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: headers %v", path, r.header)
		}
	}

	// The pages' scripts and styles: for a year under their hash.
	if len(assets) < 4 {
		t.Fatalf("the pages link %v", assets)
	}
	for _, path := range assets {
		p := b.do("GET", path, nil)
		if p.status != 200 || !strings.Contains(p.header.Get("Cache-Control"), "immutable") || p.body == "" ||
			!(strings.HasPrefix(p.header.Get("Content-Type"), "text/css") || strings.HasPrefix(p.header.Get("Content-Type"), "text/javascript")) {
			t.Errorf("GET %s: %d %v", path, p.status, p.header)
		}
	}
	old := regexp.MustCompile(`/static/[0-9a-f]+/`).ReplaceAllString(assets[0], "/static/000000000000/")
	if p := b.do("GET", old, nil); p.status != 200 || p.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET %s (another version): %d %q", old, p.status, p.header.Get("Cache-Control"))
	}
	if p := b.do("GET", "/static/000000000000/nope.js", nil); p.status != http.StatusNotFound {
		t.Errorf("an unknown static file: %d", p.status)
	}

	// The email preview: the dashboard frames it, from its own URL, with
	// its own policy.
	ed := b.do("GET", "/dash/templates/offer", nil)
	m := regexp.MustCompile(`<iframe id="preview-html"[^>]* sandbox src="([^"]+)"`).FindStringSubmatch(ed.body)
	if m == nil {
		t.Fatalf("no preview frame:\n%s", ed.body)
	}
	src := strings.ReplaceAll(m[1], "&amp;", "&")
	pv := b.do("GET", src, nil)
	csp := directives(pv.header.Get("Content-Security-Policy"))
	if pv.status != 200 || !strings.Contains(pv.body, "<p>Hi Ada,</p>") || csp["default-src"] != "'none'" || csp["script-src"] != "" ||
		csp["frame-ancestors"] != "'self'" || !strings.Contains(pv.header.Get("Content-Security-Policy"), "sandbox") || pv.header.Get("X-Frame-Options") != "SAMEORIGIN" {
		t.Errorf("the preview: %d %v\n%s", pv.status, pv.header, pv.body)
	}
	if bad := b.do("GET", strings.Replace(src, "sig=", "sig=x", 1), nil); bad.status != http.StatusNotFound || strings.Contains(bad.body, "Hi Ada") {
		t.Errorf("a preview URL with a wrong signature: %d", bad.status)
	}
	other := sb.client()
	sb.signIn(other, sb.email, sb.pass)
	if o := other.do("GET", src, nil); o.status != http.StatusNotFound {
		t.Errorf("another session's preview URL: %d", o.status)
	}
}

// TestHSTSOnlyBehindHTTPS: Strict-Transport-Security on every answer when
// the base URL is https, and on none when it is http.
func TestHSTSOnlyBehindHTTPS(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{"https://nextup.test": "max-age=31536000; includeSubDomains", "http://localhost:8080": ""} {
		a := setup(t, func(s *web.Server) { s.BaseURL = base })
		for _, path := range []string{"/", "/healthz", "/login", "/c/nope", "/v1/nope"} {
			if got := a.do("GET", path, "", "").header.Get("Strict-Transport-Security"); got != want {
				t.Errorf("base %s, GET %s: Strict-Transport-Security %q, want %q", base, path, got, want)
			}
		}
	}
}
