package web

import (
	"cmp"
	"net/http"

	"github.com/nextup-dev/nextup"
	"github.com/nextup-dev/nextup/waitlist"
)

func (s *Server) getOffer(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	o, err := s.Svc.GetOffer(r.Context(), b.ID, r.PathValue("oid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, offerOut(o))
}

func (s *Server) withdrawOffer(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	o, moves, err := s.Svc.Withdraw(r.Context(), b.ID, r.PathValue("oid"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if moves == nil {
		moves = []nextup.Move{}
	}
	out := struct {
		offerJSON
		Moves []nextup.Move `json:"moves"`
	}{offerOut(o), moves}
	writeJSON(w, http.StatusOK, out)
}

// claimInfo is GET /v1/claims/{token}: what the claim link shows. It
// records that the link was seen and never claims.
func (s *Server) claimInfo(w http.ResponseWriter, r *http.Request) {
	info, err := s.Svc.ViewClaim(r.Context(), r.PathValue("token"))
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"offer_state": info.Offer.State,
		"slot": map[string]any{"service": info.Slot.Service, "staff": info.Slot.Staff,
			"starts_at": info.Slot.StartsAt, "ends_at": info.Slot.EndsAt},
		"expires_at":   info.Offer.ExpiresAt,
		"seconds_left": info.SecondsLeft,
	})
}

// acceptClaim is POST /v1/claims/{token}:accept.
func (s *Server) acceptClaim(w http.ResponseWriter, r *http.Request) {
	discard(r)
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	res, err := s.Svc.Claim(r.Context(), r.PathValue("token"))
	if err != nil {
		s.Metrics.claim(cmp.Or(nextup.ErrorCode(err), nextup.CodeError))
		s.writeError(w, r, err)
		return
	}
	s.Metrics.claim(claimOutcome(res))
	out := map[string]any{"state": nextup.OfferClaimed,
		"booking": map[string]any{"id": res.Booking.ID, "slot_id": res.Booking.SlotID, "seats": res.Booking.Seats}}
	if res.CalendarToken != "" {
		out["calendar_url"] = s.Svc.BaseURL + "/v1/bookings/" + res.Booking.ID + "/calendar.ics?token=" + res.CalendarToken
	}
	writeJSON(w, http.StatusOK, out)
}

// declineClaim is POST /v1/claims/{token}:decline; the slot rolls on at once.
func (s *Server) declineClaim(w http.ResponseWriter, r *http.Request) {
	discard(r)
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	if _, _, err := s.Svc.Decline(r.Context(), r.PathValue("token")); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": nextup.OfferDeclined})
}

func (s *Server) getBooking(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	bk, err := s.Svc.GetBooking(r.Context(), b.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, bookingOut(bk))
}

func (s *Server) cancelBooking(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	var in struct {
		Reason string `json:"reason"`
	}
	if err := s.body(r, &in); err != nil {
		s.writeError(w, r, err)
		return
	}
	bk, moves, err := s.Svc.CancelBooking(r.Context(), b.ID, r.PathValue("id"), in.Reason)
	s.bookingMoves(w, r, bk, moves, err)
}

func (s *Server) noShow(w http.ResponseWriter, r *http.Request, b nextup.Business) {
	discard(r)
	bk, moves, err := s.Svc.NoShow(r.Context(), b.ID, r.PathValue("id"))
	s.bookingMoves(w, r, bk, moves, err)
}

func (s *Server) bookingMoves(w http.ResponseWriter, r *http.Request, bk nextup.Booking, moves []nextup.Move, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if moves == nil {
		moves = []nextup.Move{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"booking": bookingOut(bk), "moves": moves})
}

// claimOutcome labels a successful claim for the claims metric.
func claimOutcome(res waitlist.ClaimResult) string {
	if res.Repeat {
		return "repeat"
	}
	return "booked"
}
