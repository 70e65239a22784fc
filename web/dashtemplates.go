package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
	"github.com/nextup-dev/nextup/waitlist/templates"
)

// The business's voice: the dashboard's Messages → Wording pages, where an
// owner rewords each kind of message, previews it on sample data, saves
// it as a new version of their templates, and restores an earlier
// version. Every message records the version it was written with.

// templatesData fills the wording pages.
type templatesData struct {
	Title, Business, Staff, CSRF, Error, Notice string
	Version                                     int
	Kinds                                       []templateKind
	History                                     []templateVersionLine
	// One kind's editor.
	Kind    templateKind
	Form    nextup.MessageTemplate
	Preview *templatePreview
}

type templateKind struct {
	Kind, Words string
	Own         bool // the business words it itself
}

// templatePreview is a kind's wording on sample data. The HTML is shown
// in a sandboxed frame, never in the page itself: an owner's (or a
// colleague's) markup runs no script on the dashboard. The frame loads
// HTMLURL (dashTemplatePreview), not a srcdoc: a srcdoc document lives
// under its parent's CSP, which allows no inline style, and an email is
// all inline styles; the preview's own URL has its own narrow policy.
type templatePreview struct {
	Subject, Text, SMS, HTMLURL string
}

// previewURL is the URL of the frame that shows a kind's HTML source on
// sample data: the source rides in the URL (at most 16 KiB, so 22 KiB in
// base64, well under the header limit), signed for this session, so that
// only a page nextup rendered for this staff member can show markup
// under nextup's name.
func previewURL(sc staffCtx, kind, src string) string {
	enc := base64.RawURLEncoding.EncodeToString([]byte(src))
	return "/dash/templates/" + kind + "/preview?html=" + enc + "&sig=" + previewSig(sc, kind, enc)
}

func previewSig(sc staffCtx, kind, enc string) string {
	m := hmac.New(sha256.New, []byte(sc.CSRF))
	m.Write([]byte("template-preview\x00" + kind + "\x00" + enc))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// dashTemplatePreview is GET /dash/templates/{kind}/preview?html=&sig=:
// the email as HTML, rendered on sample data, as the editor's frame shows
// it — under previewCSP, framed by the dashboard only.
func (s *Server) dashTemplatePreview(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	kind, ok := kindOf(r)
	enc := r.URL.Query().Get("html")
	src, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || !hmac.Equal([]byte(r.URL.Query().Get("sig")), []byte(previewSig(sc, kind, enc))) {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such preview"))
		return
	}
	_, _, html, _, errs := templates.Preview(sc.Business.Name, kind, nextup.MessageTemplate{HTML: string(src)})
	if len(errs) > 0 {
		html = "<p>" + template.HTMLEscapeString(fieldWords(errs)) + "</p>"
	}
	h := w.Header()
	h.Set("Content-Security-Policy", previewCSP)
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(html))
}

type templateVersionLine struct {
	Version         int
	At, Actor, What string
	Current         bool
}

func (s *Server) templatesBase(sc staffCtx, title string) templatesData {
	d := templatesData{Title: title, Business: sc.Business.Name, Staff: sc.Staff.Email, CSRF: sc.CSRF,
		Version: sc.Business.Profile.TemplatesVersion}
	for _, k := range templates.TemplateKinds {
		_, own := sc.Business.Profile.Templates[k]
		d.Kinds = append(d.Kinds, templateKind{Kind: k, Words: templates.KindWords[k], Own: own})
	}
	return d
}

// dashTemplates is GET /dash/templates: every kind of message, which the
// business words itself, and the versions of its wording.
func (s *Server) dashTemplates(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	d := s.templatesBase(sc, "Message wording")
	d.Notice, d.Error = r.URL.Query().Get("notice"), r.URL.Query().Get("error")
	history, err := s.Svc.TemplatesHistory(r.Context(), sc.Business.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	loc := bizLoc(sc.Business)
	for i, v := range history {
		line := templateVersionLine{Version: v.Version, Actor: v.Actor, Current: v.Version == d.Version}
		if v.Version == 0 {
			line.What = "nextup's own wording"
		} else {
			line.At = v.At.In(loc).Format("Mon 2 Jan 2006 3:04 pm")
			var prev map[string]nextup.MessageTemplate
			if i+1 < len(history) {
				prev = history[i+1].Templates
			}
			line.What = changedKinds(prev, v.Templates)
			if v.RevertedFrom != nil {
				line.What = fmt.Sprintf("back to version %d (%s)", *v.RevertedFrom, line.What)
			}
		}
		d.History = append(d.History, line)
	}
	s.renderStaff(w, http.StatusOK, "templates", d)
}

// changedKinds names, in an owner's words, the kinds whose wording differs
// between two versions.
func changedKinds(prev, next map[string]nextup.MessageTemplate) string {
	var out []string
	for _, k := range templates.TemplateKinds {
		a, inA := prev[k]
		b, inB := next[k]
		switch {
		case inA && !inB:
			out = append(out, k+" back to nextup's wording")
		case inA != inB || a != b:
			out = append(out, k+" reworded")
		}
	}
	if len(out) == 0 {
		return "no change"
	}
	return strings.Join(out, ", ")
}

// kindOf is the path's kind of message, or false.
func kindOf(r *http.Request) (string, bool) {
	k := r.PathValue("kind")
	return k, slices.Contains(templates.TemplateKinds, k)
}

// dashTemplate is GET /dash/templates/{kind}: one kind's wording, the
// business's own or nextup's, in an editor with its preview.
func (s *Server) dashTemplate(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	kind, ok := kindOf(r)
	if !ok {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such kind of message"))
		return
	}
	form, own := sc.Business.Profile.Templates[kind]
	form = withShipped(kind, form)
	s.templateEditor(w, sc, kind, own, form, r.URL.Query().Get("notice"))
}

// withShipped fills the parts a business left empty with nextup's own, so
// the editor shows what is actually sent.
func withShipped(kind string, t nextup.MessageTemplate) nextup.MessageTemplate {
	def := templates.Default(kind)
	t.Subject, t.Text = templates.CmpOr(t.Subject, def.Subject), templates.CmpOr(t.Text, def.Text)
	t.HTML, t.SMS = templates.CmpOr(t.HTML, def.HTML), templates.CmpOr(t.SMS, def.SMS)
	return t
}

func (s *Server) templateEditor(w http.ResponseWriter, sc staffCtx, kind string, own bool, form nextup.MessageTemplate, notice string) {
	d := s.templatesBase(sc, "Wording: "+kind)
	d.Kind = templateKind{Kind: kind, Words: templates.KindWords[kind], Own: own}
	d.Form, d.Notice = form, notice
	status := http.StatusOK
	subject, text, html, sms, errs := templates.Preview(sc.Business.Name, kind, form)
	if len(errs) > 0 {
		d.Error, status = fieldWords(errs), http.StatusUnprocessableEntity
	} else {
		_ = html // shown by the frame, from its own URL
		d.Preview = &templatePreview{Subject: subject, Text: text, HTMLURL: previewURL(sc, kind, form.HTML), SMS: sms}
	}
	s.renderStaff(w, status, "template", d)
}

// fieldWords are field errors as an owner reads them.
func fieldWords(errs []nextup.FieldError) string {
	var out []string
	for _, f := range errs {
		part := f.Field[strings.LastIndexByte(f.Field, '.')+1:]
		out = append(out, part+": "+f.Message)
	}
	return "This wording can't be used yet — " + strings.Join(out, "; ")
}

func templateForm(r *http.Request) nextup.MessageTemplate {
	// Browsers send textareas with CRLF line ends; the templates keep LF.
	f := func(k string) string { return strings.ReplaceAll(r.PostFormValue(k), "\r\n", "\n") }
	return nextup.MessageTemplate{Subject: strings.TrimSpace(f("subject")), Text: f("text"), HTML: f("html"), SMS: strings.TrimSpace(f("sms"))}
}

// dashTemplatePost is POST /dash/templates/{kind}: do=preview shows the
// form's wording on sample data and saves nothing; do=save makes it the
// business's (a new version, when it changed anything); do=default goes
// back to nextup's wording for this kind.
func (s *Server) dashTemplatePost(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	kind, ok := kindOf(r)
	if !ok {
		s.errorPage(w, r, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "no such kind of message"))
		return
	}
	form := templateForm(r)
	_, own := sc.Business.Profile.Templates[kind]
	var change *nextup.MessageTemplate // nil: back to nextup's wording
	switch r.PostFormValue("do") {
	case "preview":
		s.templateEditor(w, sc, kind, own, form, "Preview only: nothing is saved until you press Save.")
		return
	case "default":
	case "save":
		if form != templates.Default(kind) { // nextup's own wording, word for word, is no wording of the business's
			change = &form
		}
	default:
		s.errorPage(w, r, nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "unknown action"))
		return
	}
	// This kind only, onto the templates as they stand when saved: a
	// colleague's save of another kind meanwhile is kept.
	b, err := s.Svc.UpdateProfile(r.Context(), sc.Business.ID, waitlist.ProfilePatch{TemplateKinds: map[string]*nextup.MessageTemplate{kind: change}})
	if err != nil {
		if statusOf(err) >= 500 {
			s.errorPage(w, r, err)
			return
		}
		d := s.templatesBase(sc, "Wording: "+kind)
		d.Kind, d.Form, d.Error = templateKind{Kind: kind, Words: templates.KindWords[kind], Own: own}, form, problemWords(err)
		s.renderStaff(w, http.StatusUnprocessableEntity, "template", d)
		return
	}
	notice := "Nothing changed."
	if b.Profile.TemplatesVersion != sc.Business.Profile.TemplatesVersion {
		notice = fmt.Sprintf("Saved as version %d. Messages from now on use it.", b.Profile.TemplatesVersion)
	}
	http.Redirect(w, r, "/dash/templates/"+kind+"?notice="+queryWords(notice), http.StatusSeeOther)
}

// dashTemplatesRevert is POST /dash/templates/revert {version}: that
// version's wording again, as a new version.
func (s *Server) dashTemplatesRevert(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	v, err := strconv.Atoi(r.PostFormValue("version"))
	if err != nil {
		http.Redirect(w, r, "/dash/templates?error="+queryWords("Choose a version to restore."), http.StatusSeeOther)
		return
	}
	b, err := s.Svc.RevertTemplates(r.Context(), sc.Business.ID, v)
	if err != nil {
		if statusOf(err) >= 500 {
			s.errorPage(w, r, err)
			return
		}
		http.Redirect(w, r, "/dash/templates?error="+queryWords(problemWords(err)), http.StatusSeeOther)
		return
	}
	notice := fmt.Sprintf("Version %d's wording is back, as version %d.", v, b.Profile.TemplatesVersion)
	if b.Profile.TemplatesVersion == sc.Business.Profile.TemplatesVersion {
		notice = fmt.Sprintf("Version %d is the wording in use already.", v)
	}
	http.Redirect(w, r, "/dash/templates?notice="+queryWords(notice), http.StatusSeeOther)
}
