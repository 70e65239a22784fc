// Package web is nextup's HTTP face: the JSON API v1 of API.md, with
// RFC 9457 errors, Bearer auth per business and an admin token; the
// customer's pages (claim, status, join form); and the staff dashboard
// behind a sign-in. Handlers hold their dependencies in Server and call
// package waitlist; nothing here decides anything.
package web

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// DefaultMaxBody is the largest request body accepted (413 above it).
const DefaultMaxBody = 64 << 10

// Server serves the API. Build one per process and mount Handler.
type Server struct {
	Svc        *waitlist.Service
	Store      nextup.Store
	AdminToken string // empty: admin endpoints refuse everyone
	MaxBody    int64
	Logger     *slog.Logger
	// BaseURL is the public base URL of the links nextup sends; when it
	// is https, every response carries Strict-Transport-Security.
	BaseURL string
	// Debug, when set (--clock=fake only), mounts POST /v1/debug/clock.
	Debug *DebugClock
	// Metrics, when set, are recorded and served at GET /metrics.
	Metrics *Metrics
	// SendRates are the channels' sending rates (messages a second, the
	// relay's limits): the dashboard says how long the outbox's backlog
	// takes to go out.
	SendRates map[nextup.Channel]float64
	// SMSSignature checks an inbound SMS webhook's X-Twilio-Signature for
	// the public URL and form parameters; nil turns the webhook off.
	SMSSignature func(url string, params map[string]string, signature string) bool
	// DevOutbox, when set (nextup demo only), is the business whose
	// captured messages GET /dev/outbox lists.
	DevOutbox string
	// Demo, when set (nextup demo only), is the staff account the front
	// door shows.
	Demo *DemoLogin
	// StatusPoll is how often an open status page asks for its entry's
	// place and state (default 5 s).
	StatusPoll time.Duration
	// Crash, when set (only in builds for crash tests), is called at named
	// points of a request so that a test can kill the process there.
	Crash func(point string, r *http.Request)
	// PaymentWebhook verifies and reads a payment provider's signed event
	// (pay/stripepay); nil turns POST /v1/payments/stripe off.
	PaymentWebhook func(payload []byte, signature string) (nextup.PaymentEvent, bool, error)

	// Limits kept in this process: sign-in and reset attempts per client
	// address (10 a minute), form joins per address (10 a minute) and
	// confirmations sent per contact (3 an hour).
	signIns      keyLimiter
	joinIPs      keyLimiter
	joinContacts keyLimiter
}

// route is one endpoint of the API, its path written as in API.md and the
// OpenAPI document (custom methods as "/v1/slots/{sid}:release").
type route struct {
	method, path string
	h            http.HandlerFunc
}

func (s *Server) routes() []route {
	rs := []route{
		{"GET", "/healthz", s.healthz},
		{"GET", "/readyz", s.readyz},
		{"GET", "/v1/openapi.json", s.openapi},

		{"POST", "/v1/businesses", s.admin(s.createBusiness)},
		{"GET", "/v1/businesses/{bid}", s.biz(s.getBusiness)},
		{"PATCH", "/v1/businesses/{bid}", s.biz(s.patchBusiness)},
		{"PATCH", "/v1/businesses/{bid}/rules", s.biz(s.patchRules)},

		{"POST", "/v1/businesses/{bid}/slots", s.biz(s.createSlot)},
		{"GET", "/v1/businesses/{bid}/slots", s.biz(s.listSlots)},
		{"GET", "/v1/slots/{sid}", s.key(s.getSlot)},
		{"GET", "/v1/slots/{sid}/audit", s.key(s.slotAudit)},
		{"POST", "/v1/slots/{sid}:release", s.key(s.releaseSlot)},
		{"POST", "/v1/slots/{sid}:resize", s.key(s.resizeSlot)},
		// "slots:release" is a whole literal segment, like "waitlist:join".
		{"POST", "/v1/businesses/{bid}/slots:release", s.biz(s.bulkRelease)},
		{"GET", "/v1/jobs/{id}", s.key(s.getJob)},
		{"GET", "/v1/businesses/{bid}/analytics", s.biz(s.analytics)},
		{"GET", "/v1/businesses/{bid}/summaries", s.biz(s.summaries)},
		{"GET", "/v1/businesses/{bid}/summaries/{month}", s.biz(s.summary)},

		// "waitlist:join" is a whole literal segment: ServeMux matches it as is.
		{"POST", "/v1/businesses/{bid}/waitlist:join", s.biz(s.join)},
		{"POST", "/v1/businesses/{bid}/waitlist:import", s.biz(s.importWaitlist)},
		{"GET", "/v1/businesses/{bid}/waitlist", s.biz(s.listEntries)},
		{"GET", "/v1/waitlist/{eid}", s.key(s.getEntry)},
		{"GET", "/v1/waitlist/{eid}/history", s.key(s.entryHistory)},
		{"GET", "/v1/waitlist/{eid}/why", s.key(s.entryWhy)},
		{"PATCH", "/v1/waitlist/{eid}", s.key(s.patchEntry)},
		{"DELETE", "/v1/waitlist/{eid}", s.key(s.leaveEntry)},
		{"GET", "/v1/status/{token}", s.statusView},
		{"DELETE", "/v1/status/{token}", s.statusLeave},

		{"GET", "/v1/offers/{oid}", s.key(s.getOffer)},
		{"POST", "/v1/offers/{oid}:withdraw", s.key(s.withdrawOffer)},
		{"GET", "/v1/claims/{token}", s.claimInfo},
		{"POST", "/v1/claims/{token}:accept", s.acceptClaim},
		{"POST", "/v1/claims/{token}:decline", s.declineClaim},

		{"GET", "/c/{token}", s.claimPage},
		{"POST", "/c/{token}/claim", s.claimPost},
		{"POST", "/c/{token}/decline", s.declinePost},
		{"POST", "/s/{token}/claim", s.statusClaimPost},
		{"POST", "/s/{token}/decline", s.statusDeclinePost},
		{"POST", "/s/{token}/pay", s.statusPayPost},
		{"POST", "/s/{token}/cancel", s.statusCancelPost},
		{"GET", "/s/{token}", s.statusPage},
		{"POST", "/s/{token}/leave", s.statusLeavePost},
		{"GET", "/u/{bid}/{token}", s.unsubscribePage},
		{"GET", "/p/{token}/{do}", s.proposalPage},
		{"POST", "/p/{token}/{do}", s.proposalPost},
		{"GET", "/v1/businesses/{bid}/proposals", s.biz(s.listProposals)},
		{"POST", "/v1/businesses/{bid}/inbox", s.biz(s.inbox)},
		{"POST", "/v1/businesses/{bid}/booking-events:secret", s.biz(s.newBookingEventsSecret)},
		{"POST", "/v1/businesses/{bid}/booking-events", s.bookingEvent},
		{"PUT", "/v1/businesses/{bid}/sheet", s.biz(s.putSheet)},
		{"POST", "/v1/businesses/{bid}/sheet:sync", s.biz(s.syncSheet)},
		{"GET", "/v1/businesses/{bid}/sheet/versions", s.biz(s.sheetVersions)},
		{"GET", "/v1/businesses/{bid}/sheet/versions/{vid}", s.biz(s.sheetVersion)},
		{"GET", "/v1/businesses/{bid}/sheet/versions/{vid}/diff", s.biz(s.sheetDiff)},
		{"POST", "/v1/businesses/{bid}/sheet/versions/{vid}:confirm", s.biz(s.confirmSheetVersion)},
		{"POST", "/v1/proposals/{id}:approve", s.key(s.approveProposal)},
		{"POST", "/v1/proposals/{id}:reject", s.key(s.rejectProposal)},
		{"POST", "/u/{bid}/{token}", s.unsubscribePost},

		{"POST", "/v1/businesses/{bid}/events", s.biz(s.createEvent)},
		{"GET", "/v1/businesses/{bid}/events", s.biz(s.listEvents)},
		{"GET", "/v1/events/{id}", s.key(s.getEvent)},
		{"PATCH", "/v1/events/{id}", s.key(s.patchEvent)},
		{"GET", "/v1/events/{id}/stats", s.key(s.eventStats)},
		{"POST", "/v1/events/{id}/registrations", s.key(s.register)},
		{"GET", "/v1/events/{id}/registrations", s.key(s.listRegistrations)},
		{"GET", "/v1/events/{id}/registrations/{rid}", s.key(s.getRegistration)},
		{"DELETE", "/v1/events/{id}/registrations/{rid}", s.key(s.cancelRegistration)},
		{"POST", "/v1/events/{id}/registrations/{rid}:check_in", s.key(s.checkIn)},
		{"POST", "/v1/events/{id}/registrations/{rid}/guests/{n}:check_in", s.key(s.checkInGuest)},
		{"POST", "/v1/events/{id}/registrations/{rid}:no_show", s.key(s.registrationNoShow)},
		{"GET", "/v1/events/{id}/waitlist", s.key(s.eventWaitlist)},
		{"POST", "/v1/events/{id}/waitlist/{rid}:promote", s.key(s.promote)},
		{"POST", "/v1/events/{id}/reminders:test", s.key(s.testReminder)},
		{"GET", "/r/{bid}/{token}", s.cancelLinkPage},
		{"POST", "/r/{bid}/{token}", s.cancelLinkPost},
		{"POST", "/c/{token}/pay", s.payPost},
		{"GET", "/pay/{oid}", s.payReturnPage},
		{"POST", "/v1/payments/stripe", s.paymentWebhook},

		{"GET", "/v1/bookings/{id}", s.key(s.getBooking)},
		{"GET", "/v1/bookings/{id}/calendar.ics", s.calendar},
		{"POST", "/v1/bookings/{id}:cancel", s.key(s.cancelBooking)},
		{"POST", "/v1/bookings/{id}:no_show", s.key(s.noShow)},

		{"GET", "/v1/businesses/{bid}/people/export", s.biz(s.exportPerson)},
		{"GET", "/v1/businesses/{bid}/people/{contact}/export", s.biz(s.exportPerson)},
		{"POST", "/v1/businesses/{bid}/people:erase", s.biz(s.erasePerson)},

		{"GET", "/v1/businesses/{bid}/handbacks", s.biz(s.listHandBacks)},
		{"POST", "/v1/handbacks/{hid}:resolve", s.key(s.resolveHandBack)},
		{"GET", "/v1/businesses/{bid}/messages", s.biz(s.listMessages)},
		{"POST", "/v1/messages/{mid}:retry", s.key(s.retryMessage)},
		{"POST", "/v1/businesses/{bid}/sms/inbound", s.smsInbound},
		{"POST", "/v1/sms/status", s.smsStatus},
	}
	if s.Metrics != nil {
		rs = append(rs, route{"GET", "/metrics", s.Metrics.Handler().ServeHTTP})
	}
	if s.DevOutbox != "" {
		rs = append(rs, route{"GET", "/dev/outbox", s.devOutbox})
	}
	if s.Debug != nil { // --clock=fake only
		rs = append(rs, route{"POST", "/v1/debug/clock", s.admin(s.debugClock)})
	}
	return rs
}

// Routes lists every endpoint as "METHOD /path", for the OpenAPI check.
func (s *Server) Routes() []string {
	var out []string
	for _, rt := range s.routes() {
		out = append(out, rt.method+" "+rt.path)
	}
	return out
}

// StaffPages lists the dashboard's pages and the public pages as
// "METHOD /path" (the pages' routes, beside Routes' API), for the tests
// that open every page.
func (s *Server) StaffPages() []string {
	var out []string
	for _, rt := range s.staffRoutes() {
		out = append(out, rt.method+" "+rt.path)
	}
	return out
}

// Handler returns the routed API.
func (s *Server) Handler() http.Handler {
	s.signIns.setup(6*time.Second, 10)
	s.joinIPs.setup(6*time.Second, 10)
	s.joinContacts.setup(20*time.Minute, 3)
	mux := http.NewServeMux()
	// Custom methods ("{sid}:release") share one segment with their id, and
	// ServeMux matches whole segments only: they are grouped under one
	// "{rest}" pattern and dispatched on the segment's last colon.
	type verbRoute struct {
		idName string
		h      http.HandlerFunc
	}
	verbs := map[string]map[string]verbRoute{}
	table := newRouteTable(append(s.routes(), s.staffRoutes()...))
	for _, rt := range s.routes() {
		slash := strings.LastIndex(rt.path, "/")
		last := rt.path[slash+1:]
		if close := strings.Index(last, "}:"); strings.HasPrefix(last, "{") && close > 0 {
			pattern := rt.method + " " + rt.path[:slash+1] + "{rest}"
			if verbs[pattern] == nil {
				verbs[pattern] = map[string]verbRoute{}
			}
			verbs[pattern][last[close+2:]] = verbRoute{idName: last[1:close], h: rt.h}
			continue
		}
		h := rt.h
		if strings.HasSuffix(rt.path, "}") {
			// "{sid}" also matches "x:release" (a custom method asked
			// for with another method): no id has a colon, so that is
			// the wrong method, not an unknown id.
			h = func(w http.ResponseWriter, r *http.Request) {
				if last := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]; strings.Contains(last, ":") {
					s.noRoute(w, r, table)
					return
				}
				rt.h(w, r)
			}
		}
		mux.HandleFunc(rt.method+" "+rt.path, h)
	}
	for pattern, vs := range verbs {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			id, verb, ok := splitVerb(r.PathValue("rest"))
			vr, found := vs[verb]
			if !ok || !found {
				s.noRoute(w, r, table)
				return
			}
			r.SetPathValue(vr.idName, id)
			vr.h(w, r)
		})
	}
	for _, rt := range s.staffRoutes() {
		mux.HandleFunc(rt.method+" "+rt.path, s.form(rt.h))
	}
	// The front door: exactly "/", outside the route table (a page, not
	// the API, and no pattern for the table's 404 and 405 answers).
	mux.HandleFunc("GET /{$}", s.frontDoor)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.noRoute(w, r, table) })
	// The pages' scripts and style sheets are served before the rest: they
	// touch no store, so they need no request's transaction.
	top := http.NewServeMux()
	top.HandleFunc("GET /static/{hash}/{name}", serveStatic)
	top.Handle("/", s.transact(mux))
	return s.headers(s.Metrics.instrument(top))
}

// noRoute answers a request no route took: 405 with the Allow header when
// the path exists with other methods, 404 when it does not.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request, table routeTable) {
	if allow := table.allowed(r.URL.Path); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.writeError(w, r, &nextup.Error{Kind: errMethodNotAllowed, Code: nextup.CodeMethodNotAllowed,
			Message: fmt.Sprintf("%s is not served at %s; it has %s", r.Method, r.URL.Path, strings.Join(allow, ", "))})
		return
	}
	s.writeError(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
}

// routeTable is every route's path split into segments, to find the
// methods a path is served with (ServeMux knows them, but the catch-all
// "/" route and the custom-method dispatch hide them from it).
type routeTable []struct {
	method string
	segs   []string
}

func newRouteTable(rs []route) routeTable {
	t := make(routeTable, 0, len(rs))
	for _, rt := range rs {
		t = append(t, struct {
			method string
			segs   []string
		}{rt.method, strings.Split(rt.path, "/")})
	}
	return t
}

// allowed lists the methods served at path, in a fixed order; GET brings
// HEAD, which ServeMux answers for every GET route.
func (t routeTable) allowed(path string) []string {
	segs := strings.Split(path, "/")
	has := map[string]bool{}
	for _, rt := range t {
		if len(rt.segs) == len(segs) && segmentsMatch(rt.segs, segs) {
			has[rt.method] = true
			if rt.method == http.MethodGet {
				has[http.MethodHead] = true
			}
		}
	}
	var out []string
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
		if has[m] {
			out = append(out, m)
		}
	}
	return out
}

// segmentsMatch matches path segments against a route's: "{x}" is any
// segment without a colon (no id or token has one), "{x}:verb" is any
// "id:verb", anything else is itself.
func segmentsMatch(pattern, segs []string) bool {
	for i, p := range pattern {
		seg := segs[i]
		switch {
		case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
			if seg == "" || strings.Contains(seg, ":") {
				return false
			}
		case strings.HasPrefix(p, "{") && strings.Contains(p, "}:"):
			id, verb, ok := splitVerb(seg)
			if !ok || strings.Contains(id, ":") || verb != p[strings.Index(p, "}:")+2:] {
				return false
			}
		case p != seg:
			return false
		}
	}
	return true
}

// form bounds the body of a page's form like any request body.
func (s *Server) form(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody())
		h(w, r)
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.Ping(r.Context()); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unreachable"})
		return
	}
	if h, ok := s.Store.(storageHealth); ok {
		if err := h.Healthy(r.Context()); err != nil {
			s.notReady(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// keyed is a handler for a caller authenticated by a business API key.
type keyed func(w http.ResponseWriter, r *http.Request, b nextup.Business)

// key authenticates the Bearer business API key. A missing or unknown key
// is 401; the handler checks that the object it touches is this business's
// (another business's object is 404).
func (s *Server) key(h keyed) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := bearer(r)
		if !ok {
			s.writeError(w, r, nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeUnauthorized, "an Authorization: Bearer <api key> header is required"))
			return
		}
		b, err := s.Svc.BusinessByAPIKey(r.Context(), tok)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		h(w, r, b)
	}
}

// biz is key plus the rule that {bid} must be the caller's own business.
func (s *Server) biz(h keyed) http.HandlerFunc {
	return s.key(func(w http.ResponseWriter, r *http.Request, b nextup.Business) {
		if r.PathValue("bid") != b.ID {
			s.writeError(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "business %s not found", r.PathValue("bid")))
			return
		}
		h(w, r, b)
	})
}

func (s *Server) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.AdminToken == "" {
			// Still 401 for everyone, saying why, so that an operator
			// who forgot the token is not left guessing at theirs.
			s.writeError(w, r, nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeUnauthorized,
				"no admin token is configured on this server: start it with --admin-token or --admin-token-file (NEXTUP_ADMIN_TOKEN, NEXTUP_ADMIN_TOKEN_FILE)"))
			return
		}
		tok, ok := bearer(r)
		if !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(s.AdminToken)) != 1 {
			s.writeError(w, r, nextup.Errorf(nextup.ErrUnauthorized, nextup.CodeUnauthorized, "the admin token is required"))
			return
		}
		h(w, r)
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	tok = strings.TrimSpace(tok)
	return tok, ok && tok != ""
}

// splitVerb splits "id:verb" on its last colon.
func splitVerb(seg string) (id, verb string, ok bool) {
	i := strings.LastIndex(seg, ":")
	if i <= 0 || i == len(seg)-1 {
		return "", "", false
	}
	return seg[:i], seg[i+1:], true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// maxBody is the request body limit in force.
func (s *Server) maxBody() int64 {
	if s.MaxBody > 0 {
		return s.MaxBody
	}
	return DefaultMaxBody
}

// body reads and strictly decodes the request body into v.
func (s *Server) body(r *http.Request, v any) error {
	b, err := readBody(r, s.maxBody())
	if err != nil {
		return err
	}
	return decodeStrict(b, v)
}
