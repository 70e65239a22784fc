// Package web is nextup's HTTP face: the JSON API v1 of API.md, with
// RFC 9457 errors, Bearer auth per business and an admin token. Handlers
// hold their dependencies in Server and call package waitlist; nothing here
// decides anything.
package web

import (
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

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
	// Debug, when set (--clock=fake only), mounts POST /v1/debug/clock.
	Debug *DebugClock
}

// Handler returns the routed API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.readyz)

	mux.HandleFunc("POST /v1/businesses", s.admin(s.createBusiness))
	mux.HandleFunc("GET /v1/businesses/{bid}", s.biz(s.getBusiness))
	mux.HandleFunc("PATCH /v1/businesses/{bid}/rules", s.biz(s.patchRules))

	mux.HandleFunc("POST /v1/businesses/{bid}/slots", s.biz(s.createSlot))
	mux.HandleFunc("GET /v1/businesses/{bid}/slots", s.biz(s.listSlots))
	mux.HandleFunc("GET /v1/slots/{sid}", s.key(s.getSlot))
	mux.HandleFunc("GET /v1/slots/{sid}/audit", s.key(s.slotAudit))
	mux.HandleFunc("POST /v1/slots/{rest}", s.key(s.customMethod("sid", map[string]keyed{
		"release": s.releaseSlot, "resize": s.resizeSlot,
	})))

	// "waitlist:join" is a whole literal segment, so ServeMux matches it as is.
	mux.HandleFunc("POST /v1/businesses/{bid}/waitlist:join", s.biz(s.join))
	mux.HandleFunc("GET /v1/businesses/{bid}/waitlist", s.biz(s.listEntries))
	mux.HandleFunc("GET /v1/waitlist/{eid}", s.key(s.getEntry))
	mux.HandleFunc("PATCH /v1/waitlist/{eid}", s.key(s.patchEntry))
	mux.HandleFunc("DELETE /v1/waitlist/{eid}", s.key(s.leaveEntry))

	mux.HandleFunc("GET /v1/offers/{oid}", s.key(s.getOffer))
	mux.HandleFunc("POST /v1/offers/{rest}", s.key(s.customMethod("oid", map[string]keyed{"withdraw": s.withdrawOffer})))

	mux.HandleFunc("GET /v1/claims/{token}", s.claimInfo)
	mux.HandleFunc("POST /v1/claims/{rest}", s.claimAction)

	mux.HandleFunc("GET /v1/bookings/{id}", s.key(s.getBooking))
	mux.HandleFunc("GET /v1/bookings/{id}/calendar.ics", s.calendar)
	mux.HandleFunc("POST /v1/bookings/{rest}", s.key(s.customMethod("id", map[string]keyed{
		"cancel": s.cancelBooking, "no_show": s.noShow,
	})))

	mux.HandleFunc("GET /v1/businesses/{bid}/handbacks", s.biz(s.listHandBacks))
	mux.HandleFunc("POST /v1/handbacks/{rest}", s.key(s.customMethod("hid", map[string]keyed{"resolve": s.resolveHandBack})))
	mux.HandleFunc("GET /v1/businesses/{bid}/messages", s.biz(s.listMessages))
	mux.HandleFunc("POST /v1/messages/{rest}", s.key(s.customMethod("mid", map[string]keyed{"retry": s.retryMessage})))

	mux.HandleFunc("GET /v1/status/{token}", s.statusView)
	mux.HandleFunc("DELETE /v1/status/{token}", s.statusLeave)

	if s.Debug != nil {
		mux.HandleFunc("POST /v1/debug/clock", s.admin(s.debugClock))
	}

	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return s.idempotent(mux)
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.Ping(r.Context()); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "store unreachable"})
		return
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
			s.writeError(w, r, nextup.Errorf(nextup.ErrUnauthorized, "unauthorized", "an Authorization: Bearer <api key> header is required"))
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
		tok, ok := bearer(r)
		if !ok || s.AdminToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.AdminToken)) != 1 {
			s.writeError(w, r, nextup.Errorf(nextup.ErrUnauthorized, "unauthorized", "the admin token is required"))
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

// customMethod routes "POST /v1/things/{id}:verb": ServeMux matches whole
// segments only, so the segment is split on its last colon here and the
// id is exposed as the path value idName.
func (s *Server) customMethod(idName string, verbs map[string]keyed) keyed {
	return func(w http.ResponseWriter, r *http.Request, b nextup.Business) {
		id, verb, ok := splitVerb(r.PathValue("rest"))
		h, found := verbs[verb]
		if !ok || !found {
			s.writeError(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such endpoint: POST %s", r.URL.Path))
			return
		}
		r.SetPathValue(idName, id)
		h(w, r, b)
	}
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

// body reads and strictly decodes the request body into v.
func (s *Server) body(r *http.Request, v any) error {
	limit := s.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	b, err := readBody(r, limit)
	if err != nil {
		return err
	}
	return decodeStrict(b, v)
}
