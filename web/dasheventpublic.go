package web

import (
	"errors"
	"net/http"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// The event page's Public page form: the link the organiser shares (the
// public event page, /e/{business slug}/{event slug}), the event's part of
// it, and what the page shows. A business without a slug of its own is
// asked for one here (suggested from its name), since the link needs it;
// it names the business's join form too.

// eventPublicForm is the Public page form as typed, or as the event has it.
type eventPublicForm struct {
	// URL is the public page's address, "" while the business has no slug.
	URL string
	// BusinessSlug is asked for while the business has none.
	NeedBusinessSlug            bool
	BusinessSlug                string
	Slug, ShowSeats             string
	Place, Notes                string
	NoIndex                     bool
	ShowSeatsChoices            []choice
	BusinessPrefix, EventPrefix string // shown before the slug fields
}

// choice is an option of a select.
type choice struct {
	Value, Label string
	Selected     bool
}

var showSeatsLabels = []choice{
	{Value: nextup.ShowSeatsExact, Label: "the number of seats left"},
	{Value: nextup.ShowSeatsFew, Label: `"Few seats left" when under five, else nothing`},
	{Value: nextup.ShowSeatsNone, Label: "nothing about seats"},
}

func choices(all []choice, selected string) []choice {
	out := make([]choice, len(all))
	for i, c := range all {
		c.Selected = c.Value == selected
		out[i] = c
	}
	return out
}

// slugOf suggests a slug for a name: lower case letters and digits (accents
// dropped), words joined by hyphens, at most max characters.
func slugOf(name string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFD.String(strings.ToLower(name)) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// an accent: dropped with the letter kept
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= max {
			break
		}
	}
	return strings.Trim(b.String()[:min(b.Len(), max)], "-")
}

// eventPublicOf is the Public page form as the event has it.
func (s *Server) eventPublicOf(b nextup.Business, sl nextup.Slot) eventPublicForm {
	ev := sl.Event
	if ev == nil {
		ev = &nextup.EventSettings{}
	}
	f := eventPublicForm{URL: s.Svc.JoinURL(b, sl), NeedBusinessSlug: b.Profile.Slug == "", BusinessSlug: b.Profile.Slug,
		Slug: ev.Slug, Place: ev.Public.Place, Notes: ev.Public.Notes, NoIndex: ev.Public.NoIndex,
		ShowSeatsChoices: choices(showSeatsLabels, cmpOr(ev.Public.ShowSeats, nextup.ShowSeatsExact))}
	if f.NeedBusinessSlug {
		f.BusinessSlug = slugOf(b.Name, 40)
	}
	if f.Slug == "" {
		f.Slug = slugOf(sl.Title, 64)
	}
	f.BusinessPrefix = s.Svc.BaseURL + "/e/"
	f.EventPrefix = f.BusinessPrefix + cmpOr(b.Profile.Slug, "…") + "/"
	return f
}

// dashEventPublic is POST /dash/events/{id}/public: the Public page form,
// saved as PATCH /v1/events/{id} saves slug and public (and, for a
// business without a slug, PATCH /v1/businesses/{bid} its slug first).
func (s *Server) dashEventPublic(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	sl, err := s.Svc.GetEvent(r.Context(), sc.Business.ID, r.PathValue("id"))
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	f := s.eventPublicOf(sc.Business, sl)
	pf := r.PostFormValue
	f.Slug, f.Place, f.Notes = strings.TrimSpace(pf("slug")), strings.TrimSpace(pf("place")), strings.TrimSpace(pf("notes"))
	f.NoIndex = pf("noindex") == "1"
	show := pf("show_seats")
	f.ShowSeatsChoices = choices(showSeatsLabels, show)
	if f.NeedBusinessSlug {
		f.BusinessSlug = strings.ToLower(strings.TrimSpace(pf("business_slug")))
	}
	fail := func(err error) {
		s.eventFormFail(w, r, sc, err, func(d *eventsData, words string) { d.Public, d.PublicError = f, words })
	}
	switch show {
	case nextup.ShowSeatsExact, nextup.ShowSeatsFew, nextup.ShowSeatsNone:
	default:
		fail(nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "Choose what the page says about the seats left."))
		return
	}
	if len(f.Place) > 200 || len(f.Notes) > 2000 {
		fail(nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "Keep the place under 200 characters and the notes under 2,000."))
		return
	}
	slugWords := func(what, example string, n int) error {
		return nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation,
			"%s name in links takes lower-case letters, digits and hyphens (up to %d), such as %q.", what, n, example)
	}
	// Everything is checked before anything is written: the business's
	// slug, when it is asked for, and the event's, are two writes.
	eventSlug := strings.ToLower(f.Slug)
	if eventSlug != "" && !waitlist.ValidEventSlug(eventSlug) {
		fail(slugWords("The event's", slugOf(sl.Title, 64), 64))
		return
	}
	if f.NeedBusinessSlug {
		switch _, err := s.Svc.BusinessBySlug(r.Context(), f.BusinessSlug); {
		case f.BusinessSlug == "":
			fail(nextup.Errorf(nextup.ErrInvalid, nextup.CodeValidation, "Give your business's name as it should read in links."))
			return
		case !waitlist.ValidBusinessSlug(f.BusinessSlug):
			fail(slugWords("Your business's", slugOf(sc.Business.Name, 40), 40))
			return
		case err == nil:
			fail(nextup.Errorf(nextup.ErrConflict, nextup.CodeSlugTaken, "%q is another business's name in links: choose another.", f.BusinessSlug))
			return
		case !errors.Is(err, nextup.ErrNotFound):
			s.errorPage(w, r, err)
			return
		}
	}
	p := waitlist.EventParamsOf(sl)
	p.Settings.Slug = eventSlug
	p.Settings.Public = nextup.EventPublic{ShowSeats: show, Place: f.Place, Notes: f.Notes, NoIndex: f.NoIndex}
	if _, _, err := s.Svc.UpdateEvent(r.Context(), sc.Business.ID, sl.ID, p); err != nil {
		if nextup.ErrorCode(err) == nextup.CodeSlugTaken {
			err = nextup.Errorf(nextup.ErrConflict, nextup.CodeSlugTaken, "Another of your upcoming events is at %q: choose another name for this one's link.", eventSlug)
		}
		fail(err)
		return
	}
	if f.NeedBusinessSlug {
		if _, err := s.Svc.UpdateProfile(r.Context(), sc.Business.ID, waitlist.ProfilePatch{Slug: &f.BusinessSlug}); err != nil {
			// Taken in the moment since the check: the event's part is
			// saved, and the form asks again for the business's.
			if nextup.ErrorCode(err) == nextup.CodeSlugTaken {
				err = nextup.Errorf(nextup.ErrConflict, nextup.CodeSlugTaken, "%q is another business's name in links: choose another.", f.BusinessSlug)
			}
			fail(err)
			return
		}
	}
	b, err := s.Svc.GetBusiness(r.Context(), sc.Business.ID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	sl.Event.Slug = eventSlug
	eventDone(w, r, "The public page is saved. Share this link: "+s.Svc.JoinURL(b, sl))
}
