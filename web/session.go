package web

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// Cookies of the staff pages.
const (
	sessionCookie = "nextup_session" // the session token; only its hash is stored
	preCSRFCookie = "nextup_csrf"    // double-submit token of the forms shown before sign-in
)

// staffCtx is a signed-in request: the session's staff member and
// business, and the CSRF token its forms carry.
type staffCtx struct {
	Staff    nextup.Staff
	Business nextup.Business
	CSRF     string
}

// csrfFor derives a session's CSRF token from its cookie token: it is
// never stored, and a page from another session cannot forge it.
func csrfFor(sessionToken string) string {
	return nextup.HashToken("csrf:" + sessionToken)
}

// secure says whether cookies must be Secure: behind https.
func (s *Server) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.Svc.BaseURL, "https://")
}

func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: s.secure(r), MaxAge: int(maxAge.Seconds())}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// staffPage is a handler for a signed-in staff member.
type staffPage func(w http.ResponseWriter, r *http.Request, sc staffCtx)

// signedIn serves h to a signed-in staff member and sends anyone else to
// /login. Unsafe methods must carry the session's CSRF token in the form
// field "csrf"; without it the request is refused and changes nothing.
func (s *Server) signedIn(h staffPage) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pageHeaders(w)
		var token string
		if c, err := r.Cookie(sessionCookie); err == nil {
			token = c.Value
		}
		_, st, err := s.Svc.SessionFor(r.Context(), token)
		if errors.Is(err, nextup.ErrUnauthorized) {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			s.staffError(w, r, http.StatusUnauthorized, "You are signed out", "Sign in again, then repeat what you were doing.")
			return
		}
		if err != nil {
			s.errorPage(w, r, err)
			return
		}
		b, err := s.Svc.GetBusiness(r.Context(), st.BusinessID)
		if err != nil {
			s.errorPage(w, r, err)
			return
		}
		sc := staffCtx{Staff: st, Business: b, CSRF: csrfFor(token)}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameToken(r.PostFormValue("csrf"), sc.CSRF) {
			s.staffError(w, r, http.StatusForbidden, "This form has expired", "Reload the page and try again.")
			return
		}
		h(w, r, sc)
	}
}

func sameToken(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// preCSRF returns the double-submit token of the forms shown before
// sign-in, setting its cookie when the browser has none.
func (s *Server) preCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(preCSRFCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	tok, _ := s.Svc.Random.Token()
	s.setCookie(w, r, preCSRFCookie, tok, 0)
	return tok
}

// checkPreCSRF checks a pre-sign-in form's token against its cookie.
func checkPreCSRF(r *http.Request) bool {
	c, err := r.Cookie(preCSRFCookie)
	return err == nil && sameToken(r.PostFormValue("csrf"), c.Value)
}

// loginData fills the sign-in and password pages.
type loginData struct {
	Title, Heading, Error, Notice, Email, CSRF, Next, Token string
	Staff, Business                                         string // empty: nobody is signed in
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	d := loginData{Title: "Sign in", CSRF: s.preCSRF(w, r), Next: safeNext(r.URL.Query().Get("next"))}
	switch r.URL.Query().Get("done") {
	case "reset":
		d.Notice = "Your new password is set. Sign in with it."
	case "out":
		d.Notice = "You are signed out."
	}
	s.renderStaff(w, http.StatusOK, "login", d)
}

// safeNext keeps a post-sign-in redirect on this site's dashboard.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/dash") && !strings.HasPrefix(next, "//") {
		return next
	}
	return "/dash"
}

// loginPost is POST /login. A new session token is minted on every
// sign-in, whatever cookie the browser sent, so a session cannot be fixed
// in advance; the old session, if any, ends.
func (s *Server) loginPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	d := loginData{Title: "Sign in", Email: r.PostFormValue("email"), Next: safeNext(r.PostFormValue("next"))}
	if s.preFormRefused(w, r, "login", &d) {
		return
	}
	token, _, err := s.Svc.SignIn(r.Context(), d.Email, r.PostFormValue("password"))
	if err != nil {
		status := statusOf(err)
		if status >= 500 {
			s.errorPage(w, r, err)
			return
		}
		var e *nextup.Error
		if errors.As(err, &e) {
			d.Error = e.Message
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "60")
			}
		}
		s.renderStaff(w, status, "login", d)
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		_ = s.Svc.SignOut(r.Context(), c.Value)
	}
	s.setCookie(w, r, sessionCookie, token, waitlist.SessionTTL)
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
}

// preFormRefused answers a form shown before sign-in that lacks its CSRF
// token (403) or comes too often from one address (429), re-showing page
// with what was typed; it reports whether it did.
func (s *Server) preFormRefused(w http.ResponseWriter, r *http.Request, page string, d *loginData) bool {
	d.CSRF = s.preCSRF(w, r)
	switch {
	case !checkPreCSRF(r):
		d.Error = "This form had expired. Please try again."
		s.renderStaff(w, http.StatusForbidden, page, d)
	case !s.signIns.allow(clientIP(r)):
		w.Header().Set("Retry-After", "60")
		d.Error = "Too many attempts from here. Wait a minute and try again."
		s.renderStaff(w, http.StatusTooManyRequests, page, d)
	default:
		return false
	}
	return true
}

// logoutPost is POST /logout (signed in, with CSRF).
func (s *Server) logoutPost(w http.ResponseWriter, r *http.Request, _ staffCtx) {
	c, _ := r.Cookie(sessionCookie)
	if err := s.Svc.SignOut(r.Context(), c.Value); err != nil {
		s.errorPage(w, r, err)
		return
	}
	s.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/login?done=out", http.StatusSeeOther)
}

func (s *Server) forgotPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	s.renderStaff(w, http.StatusOK, "forgot", loginData{Title: "Forgot your password?", CSRF: s.preCSRF(w, r)})
}

// forgotPost is POST /login/forgot: it answers the same whether or not the
// address has an account.
func (s *Server) forgotPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	d := loginData{Title: "Forgot your password?", Email: r.PostFormValue("email")}
	if s.preFormRefused(w, r, "forgot", &d) {
		return
	}
	if err := s.Svc.RequestPasswordReset(r.Context(), d.Email); err != nil {
		s.errorPage(w, r, err)
		return
	}
	d.Notice = "If " + d.Email + " has an account, a link to set a new password is on its way. It works for an hour."
	s.renderStaff(w, http.StatusOK, "forgot", d)
}

func (s *Server) resetPage(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	s.renderStaff(w, http.StatusOK, "reset", loginData{Title: "Set a new password", CSRF: s.preCSRF(w, r), Token: r.PathValue("token")})
}

// resetPost is POST /reset/{token}: sets the password, ends every session
// of the account, and sends the person to sign in.
func (s *Server) resetPost(w http.ResponseWriter, r *http.Request) {
	pageHeaders(w)
	d := loginData{Title: "Set a new password", CSRF: s.preCSRF(w, r), Token: r.PathValue("token")}
	if !checkPreCSRF(r) {
		d.Error = "This form had expired. Please try again."
		s.renderStaff(w, http.StatusForbidden, "reset", d)
		return
	}
	if r.PostFormValue("password") != r.PostFormValue("confirm") {
		d.Error = "The two passwords differ."
		s.renderStaff(w, http.StatusBadRequest, "reset", d)
		return
	}
	err := s.Svc.ResetPassword(r.Context(), d.Token, r.PostFormValue("password"))
	if err != nil {
		status := statusOf(err)
		if status >= 500 {
			s.errorPage(w, r, err)
			return
		}
		var e *nextup.Error
		if errors.As(err, &e) {
			d.Error = e.Message
			for _, f := range e.Fields {
				d.Error = "The password " + f.Message + "."
			}
		}
		s.renderStaff(w, status, "reset", d)
		return
	}
	http.Redirect(w, r, "/login?done=reset", http.StatusSeeOther)
}
