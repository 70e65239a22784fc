package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist/people"
)

// exportPerson is GET /v1/businesses/{bid}/people/export?contact=… (and
// the issue's …/people/{contact}/export): everything the business holds
// about the person, as JSON (people.Document). A person it holds nothing
// about gets a document with empty lists, not 404: the answer is the same
// shape either way. The export is audited (person_exported).
func (s *Server) exportPerson(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	contact, ok := r.PathValue("contact"), r.PathValue("contact") != ""
	if !ok {
		contact = queryContact(r.URL.RawQuery)
	}
	doc, err := s.Svc.Export(r.Context(), b.ID, contact)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

// queryContact reads the contact parameter of a raw query without
// turning '+' into a space, as form decoding would: an E.164 number
// (?contact=+447700900123) keeps its plus. %2B works too.
func queryContact(raw string) string {
	for part := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(part, "=")
		if k != "contact" {
			continue
		}
		if u, err := url.PathUnescape(v); err == nil {
			return u
		}
		return v
	}
	return ""
}

// erasedJSON is the answer of an erasure.
type erasedJSON struct {
	Erased            people.Counts `json:"erased"`
	Withdrawn         int           `json:"withdrawn"`
	CancelledBookings int           `json:"cancelled_bookings"`
	Pseudonym         string        `json:"pseudonym,omitempty"`
	Moves             []nextup.Move `json:"moves"`
}

// erasePerson is POST /v1/businesses/{bid}/people:erase {"contact"}: the
// person is withdrawn from every waitlist, their upcoming bookings are
// cancelled (the seats roll on), and their personal data is erased or
// pseudonymised (package people). Erasing again finds nothing and
// answers zero counts.
func (s *Server) erasePerson(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Contact string `json:"contact"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.Svc.Erase(r.Context(), b.ID, in.Contact)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	moves := out.Moves
	if moves == nil {
		moves = []nextup.Move{}
	}
	writeJSON(w, http.StatusOK, erasedJSON{Erased: out.Erased, Withdrawn: out.Withdrawn,
		CancelledBookings: out.Cancelled, Pseudonym: out.Pseudonym, Moves: moves})
}
