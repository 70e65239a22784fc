package web

import (
	"net/http"
	"strings"
)

// PageCSP is the Content-Security-Policy of every HTML page nextup serves:
// the customer's pages, the dashboard, the front door, the error pages.
// Scripts, styles and fetches come from nextup's own origin only — the
// pages carry no inline script, no <style> and no style attribute (their
// scripts and style sheets are static files, static.go), so nothing
// injected into a page could run or restyle it. Forms post to nextup
// only (a pay button's redirect to the checkout is allowed by the page
// that has one, payFormCSP); a page is framed by nobody, and frames only
// nextup (the dashboard's email preview). Inline SVG charts need nothing:
// they draw with presentation attributes (web/chart).
const PageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-src 'self'; base-uri 'none'; frame-ancestors 'none'"

// otherCSP is the policy of every other response (JSON, CSV, calendar
// files, plain-text errors): nothing in it may load or be framed, should
// a browser ever render one.
const otherCSP = "default-src 'none'; frame-ancestors 'none'"

// checkoutOrigin is where a paid event's pay button leads (the server
// answers its POST with a 303 to a Stripe Checkout page). form-action
// also governs the redirects that follow a form's submission, so a page
// with a pay button allows it.
const checkoutOrigin = "https://checkout.stripe.com"

// PermissionsPolicy turns off the browser features no nextup page uses,
// for the page and anything it frames.
const PermissionsPolicy = "camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), bluetooth=(), hid=(), " +
	"midi=(), magnetometer=(), gyroscope=(), accelerometer=(), display-capture=(), screen-wake-lock=(), " +
	"publickey-credentials-get=(), browsing-topics=()"

// hsts is sent when the base URL is https: browsers then reach this host
// (and its subdomains) over HTTPS only, for a year.
const hsts = "max-age=31536000; includeSubDomains"

// headers sets the security headers of every response: the CSP (PageCSP
// for HTML, otherCSP for the rest, unless the handler set its own, as the
// email preview does), Permissions-Policy, nosniff, no Referer (the
// customer's pages carry their token in the URL, and nothing nextup links
// to needs to know where the click came from) and, behind an https base
// URL, Strict-Transport-Security.
func (s *Server) headers(next http.Handler) http.Handler {
	https := strings.HasPrefix(strings.ToLower(s.BaseURL), "https://")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Permissions-Policy", PermissionsPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if https {
			h.Set("Strict-Transport-Security", hsts)
		}
		next.ServeHTTP(&secureWriter{ResponseWriter: w}, r)
	})
}

// secureWriter adds the CSP when the response's headers are written,
// once its Content-Type is known.
type secureWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *secureWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		h := w.Header()
		if h.Get("Content-Security-Policy") == "" {
			if strings.HasPrefix(h.Get("Content-Type"), "text/html") {
				h.Set("Content-Security-Policy", PageCSP)
				h.Set("X-Frame-Options", "DENY") // frame-ancestors, for browsers before CSP 2
			} else {
				h.Set("Content-Security-Policy", otherCSP)
			}
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *secureWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		if w.Header().Get("Content-Type") == "" {
			// What net/http would sniff; a page always says what it is.
			w.Header().Set("Content-Type", http.DetectContentType(b))
		}
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (read
// deadlines, flushing).
func (w *secureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// payFormCSP is PageCSP for a page with a pay button: its form may be
// redirected to the checkout.
func payFormCSP(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", strings.Replace(PageCSP, "form-action 'self'", "form-action 'self' "+checkoutOrigin, 1))
}

// previewCSP is the policy of the dashboard's email preview, an owner's
// email HTML shown as a mail client would: inline styles and images, and
// nothing else — no script, no form, no fetch; sandboxed (an opaque
// origin, whatever frames it), and framed only by the dashboard.
const previewCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data: https:; font-src data: https:; " +
	"form-action 'none'; base-uri 'none'; frame-ancestors 'self'; sandbox"
