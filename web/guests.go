package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

// A registration's guests by name (API.md "Events for guests"): on the
// guest list as "guests": [{"n","name","checked_in_at"}], checked in one
// by one at POST /v1/events/{id}/registrations/{rid}/guests/{n}:check_in
// (the dashboard's button posts to /dash/events/{id}/guests/{rid}/{n}/check-in),
// and in the CSV a row each, under their registrant.

// guestJSON is one guest of a registration: n is its place in the party
// (from 1), the {n} of its check-in route.
type guestJSON struct {
	N           int        `json:"n"`
	Name        string     `json:"name"`
	CheckedInAt *time.Time `json:"checked_in_at"`
}

func guestsOut(gs []nextup.Guest) []guestJSON {
	out := make([]guestJSON, 0, len(gs))
	for _, g := range gs {
		out = append(out, guestJSON{N: g.Index, Name: g.Name, CheckedInAt: g.CheckedInAt})
	}
	return out
}

// guestPlace reads the {n} of a guest's route: a place from 1, or
// not_found (no guest has another name).
func guestPlace(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		return 0, nextup.Errorf(nextup.ErrNotFound, nextup.CodeNotFound, "guest %q not found", r.PathValue("n"))
	}
	return n, nil
}

// checkInGuest is POST /v1/events/{id}/registrations/{rid}/guests/{n}:check_in
// {"undo"?}: one guest of a confirmed registration came (or, undone, did
// not); the registration is the answer, as for the party's check-in.
func (s *Server) checkInGuest(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Undo bool `json:"undo"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	n, err := guestPlace(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	reg, err := s.Svc.CheckInGuest(r.Context(), b.ID, r.PathValue("id"), r.PathValue("rid"), n, in.Undo)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.registrationOut(reg))
}

// guestCSVRows are the CSV rows of a registration's guests, in the
// columns of guestListColumns: the guest's name and own check-in, the
// registration's state, place, time and id (so a filter by state keeps
// the party together), the guest's place and whose guest they are. Seats
// and contacts stay on the registrant's row, so that a sum of the seats
// column is still the seats taken.
func guestCSVRows(o registrationJSON, pos, registered string) [][]string {
	var out [][]string
	for _, g := range o.Guests {
		checked := ""
		if g.CheckedInAt != nil {
			checked = g.CheckedInAt.Format(time.RFC3339)
		}
		out = append(out, []string{csvSafe(g.Name), "", "", "", "", o.State, pos, registered, checked, o.ID,
			strconv.Itoa(g.N), csvSafe(o.Name)})
	}
	return out
}

// eventGuest is one guest under their registrant on the dashboard's guest
// list, with their own check-in button.
type eventGuest struct {
	N               int
	Name, CheckedIn string
}

func eventGuestsOf(reg waitlist.Registration, loc *time.Location) []eventGuest {
	var out []eventGuest
	for _, g := range reg.GuestList {
		eg := eventGuest{N: g.Index, Name: g.Name}
		if g.CheckedInAt != nil && reg.State == waitlist.RegConfirmed {
			eg.CheckedIn = g.CheckedInAt.In(loc).Format("3:04 pm")
		}
		out = append(out, eg)
	}
	return out
}

// dashCheckInGuest is POST /dash/events/{id}/guests/{rid}/{n}/check-in:
// one guest's button on the guest list; with undo=1 it clears a check-in
// made by mistake.
func (s *Server) dashCheckInGuest(w http.ResponseWriter, r *http.Request, sc staffCtx) {
	n, err := guestPlace(r)
	if err != nil {
		s.eventBack(w, r, "", err)
		return
	}
	undo := r.PostFormValue("undo") == "1"
	reg, err := s.Svc.CheckInGuest(r.Context(), sc.Business.ID, r.PathValue("id"), r.PathValue("rid"), n, undo)
	if err != nil {
		s.eventBack(w, r, "", err)
		return
	}
	who := reg.Entry.Name + "'s guest " + strconv.Itoa(n)
	if name := reg.GuestList[n-1].Name; name != "" {
		who = name + " (" + reg.Entry.Name + "'s guest)"
	}
	notice := who + " is checked in."
	if undo {
		notice = who + ": check-in undone."
	}
	s.eventBack(w, r, notice, nil)
}
